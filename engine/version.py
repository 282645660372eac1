"""Versions pk reports: its own, and the Kafka release whose tools it mirrors."""

PK_VERSION = "0.1.0"
# The Apache Kafka release whose tools pk mirrors: the newest 4.x the test oracle runs
# (tests/kafka/kafka-4.pom.xml names the same version). `--zookeeper` mirrors Kafka 2.8.
KAFKA_VERSION = "4.4.0"
