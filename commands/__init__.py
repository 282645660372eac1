"""The tools' operations, written once against a backend interface."""
