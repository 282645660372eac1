"""Command-line front ends, one module per Kafka shell tool.

Each parses its tool's flags as Kafka's does (common.py: jopt-style options on Click, Kafka's
usage and error texts), calls pk.commands, and prints. No logic of their own: run_class.py
maps Kafka class names onto these tools; completion.py serves shell completion.
"""

import os

# pk calls no BLAS routine, yet NumPy's OpenBLAS starts a thread per core when NumPy is
# imported, which costs every tool about 0.06 CPU-seconds at start. One thread unless the
# user asked for more.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
