"""Versions pk reports: its own, and the Kafka release whose tools it mirrors."""

PK_VERSION = "0.1.0"
KAFKA_VERSION = "3.7.0"
