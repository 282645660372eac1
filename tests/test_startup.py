"""pk-topics must start fast: it may not import the heavy client libraries."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pyspark", "confluent_kafka", "kazoo", "kafka", "pyarrow", "numpy", "cramjam", "tabulate")

PROBE = """
import sys
sys.argv = ["pk-topics", *sys.argv[1:]]
from pk.cli.topics import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def test_pk_topics_imports_no_heavy_library(data_dir):
    for args in (["--list"], ["--create", "--topic", "t", "--partitions", "2"], ["--describe"],
                 ["--delete", "--topic", "t"]):
        proc = subprocess.run([sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *args],
                              capture_output=True, text=True, env={"PK_DATA_DIR": data_dir, "PATH": ""})
        assert proc.returncode == 0, proc.stderr
        assert "HEAVY=\n" in proc.stderr, (args, proc.stderr)
