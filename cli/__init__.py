"""Command-line front ends, one module per Kafka shell tool.

Each parses its tool's flags as Kafka's does (common.py: jopt-style options on Click, Kafka's
usage and error texts), calls pk.commands, and prints. No logic of their own: run_class.py
maps Kafka class names onto these tools; completion.py serves shell completion.
"""
