"""Admin handlers (CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, ...)."""

from __future__ import annotations


class AdminHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
