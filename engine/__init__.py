"""pk's bundled storage engine: Kafka's on-disk log format on a local data directory.

A library with no CLI imports; `pk.commands` calls it.
"""
