"""The group coordinator (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, ...)."""

from __future__ import annotations


class GroupHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
