"""pk-topics --output json (pk only): --list and --describe as one JSON document on one line,
built from the same selection the text printer uses (topics.select_topics, topics.described).

Schemas (README, "JSON output of the admin tools"):
  --list      ["topic", ...]  in the text's order
  --describe  [{"topic", "topicId", "partitionCount", "replicationFactor", "configs",
               "partitions": [{"partition", "leader", "replicas", "isr", "elr", "lastKnownElr"}]}]
"""

from __future__ import annotations

import sys

from .backend import Backend, TopicInfo
from .errors import UsageError
from .json_out import dumps
from .topics import ZERO_UUID, TopicOptions, check_args, described, resolve_ints, select_topics


def check(o: TopicOptions) -> None:
    """JSON is a report of what exists: the actions that change topics keep Kafka's text."""
    if o.zookeeper is not None:
        raise UsageError("--output json can't be used with --zookeeper")
    if not (o.list or o.describe):
        raise UsageError("--output json can only be used with --list or --describe")


def run(backend: Backend, o: TopicOptions, out) -> None:
    """`out` takes the one line of JSON; notes Kafka prints on stdout go to stderr instead, so
    that stdout stays one document."""
    check_args(o)
    o = resolve_ints(o)
    if o.list:
        out(dumps(select_topics(backend, o.topic, o.exclude_internal)))
        return
    topics = []
    for info, topic_shown, partitions in described(backend, o, _note):
        if o.topics_with_overrides and topic_shown:
            partitions = info.partitions  # the text lists topic lines only: the JSON keeps the partitions
        if topic_shown or partitions:
            topics.append(topic_document(info, partitions))
    out(dumps(topics))


def _note(line: str) -> None:
    print(line, file=sys.stderr)


def topic_document(info: TopicInfo, partitions: list) -> dict:
    """One topic: the topic line's fields, then its (selected) partition lines."""
    topic_id = info.topic_id if info.topic_id and info.topic_id != ZERO_UUID else None
    return {
        "topic": info.name,
        "topicId": topic_id,
        "partitionCount": len(info.partitions),
        "replicationFactor": len(info.partitions[0].replicas) if info.partitions else 0,
        "configs": dict(info.overrides),
        "partitions": [partition_document(info, part) for part in partitions],
    }


def partition_document(info: TopicInfo, part) -> dict:
    """A partition line: leader null for Kafka's "none"; elr and lastKnownElr null where Kafka
    prints N/A (the cluster cannot say), else lists (empty where the text's cells are empty)."""
    if part.elr is not None:
        elr, last_known = list(part.elr), list(part.last_known_elr or [])
    elif info.elr_known:
        elr, last_known = [], []
    else:
        elr = last_known = None
    return {
        "partition": part.partition,
        "leader": part.leader,
        "replicas": list(part.replicas),
        "isr": list(part.isr),
        "elr": elr,
        "lastKnownElr": last_known,
    }
