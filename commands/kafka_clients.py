"""Moved to commands/backends/kafka_clients.py. This name stays only while cli/console_consumer.py
and cli/console_producer.py import from it; delete it once they import
pk.commands.backends.kafka_clients."""

from .backends.kafka_clients import AuthenticationError, ConsumerBackend, producer_opener, remote_target

__all__ = ["AuthenticationError", "ConsumerBackend", "producer_opener", "remote_target"]
