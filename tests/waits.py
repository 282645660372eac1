"""`wait_for`: poll a condition until it holds, for the tests and bench/ (no pytest import, so
bench/replication.py can use it too)."""

from __future__ import annotations

import time


def wait_for(predicate, timeout: float = 30.0, what: str = "condition", interval: float = 0.05):
    """predicate()'s first true value; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def create_topic_with_leaders(bootstrap: str, name: str, partitions: int = 1, configs: dict | None = None) -> str:
    """Create `name` through confluent-kafka's admin client and wait until every partition has
    a leader in the metadata (KRaft makes them known a moment after the topic exists)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=configs or {})])[name].result(30)

    def led() -> bool:
        meta = admin.list_topics(name, timeout=10).topics.get(name)
        return meta is not None and meta.error is None and len(meta.partitions) == partitions \
            and all(p.leader >= 0 for p in meta.partitions.values())
    wait_for(led, what=f"{name}'s leaders")
    return name
