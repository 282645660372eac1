"""What DescribeConfigs v3+ says about each config beyond its value: its type and, when the
client asks (include_documentation), a one-line description.

Topic configs take their type from topic_config; broker settings from BROKER_TYPES (the
types Kafka's KafkaConfig gives them). The descriptions are pk's own words.
"""

from __future__ import annotations

TOPIC, BROKER = 2, 4  # ConfigResource.Type

BROKER_TYPES: dict[str, str] = {
    "node.id": "int", "broker.id": "int", "process.roles": "list", "controller.quorum.voters": "list",
    "controller.listener.names": "list", "inter.broker.listener.name": "string",
    "listener.security.protocol.map": "string", "listeners": "list", "advertised.listeners": "list",
    "log.dirs": "list", "log.dir": "list", "num.partitions": "int", "default.replication.factor": "int",
    "auto.create.topics.enable": "boolean", "delete.topic.enable": "boolean", "log.retention.hours": "int",
    "log.retention.minutes": "int", "log.retention.ms": "long", "log.retention.bytes": "long",
    "log.segment.bytes": "int", "log.roll.ms": "long", "log.roll.hours": "int",
    "log.retention.check.interval.ms": "long", "log.initial.task.delay.ms": "long",
    "log.cleanup.policy": "list", "log.cleaner.enable": "boolean", "log.cleaner.backoff.ms": "long",
    "log.flush.start.offset.checkpoint.interval.ms": "long",
    "message.max.bytes": "int", "offsets.topic.num.partitions": "int",
    "offsets.topic.replication.factor": "short", "offsets.topic.segment.bytes": "int",
    "transaction.state.log.replication.factor": "short", "transaction.state.log.min.isr": "int",
    "group.initial.rebalance.delay.ms": "int", "group.min.session.timeout.ms": "int",
    "group.max.session.timeout.ms": "int", "socket.request.max.bytes": "int",
    "socket.send.buffer.bytes": "int", "socket.receive.buffer.bytes": "int", "num.network.threads": "int",
    "num.io.threads": "int", "num.recovery.threads.per.data.dir": "int",
    "log.flush.interval.messages": "long", "log.flush.interval.ms": "long", "zookeeper.connect": "string",
    "zookeeper.connection.timeout.ms": "int", "cluster.id": "string", "fetch.max.bytes": "int",
    "replica.fetch.max.bytes": "int", "replica.fetch.response.max.bytes": "int",
    # Kafka's PASSWORD-typed keys: DescribeConfigs marks them sensitive and never returns a value
    # (the JAAS config carries PLAIN users' passwords; the PEM entries carry private keys).
    "sasl.jaas.config": "password", "ssl.keystore.password": "password", "ssl.key.password": "password",
    "ssl.keystore.key": "password", "ssl.keystore.certificate.chain": "password",
    "ssl.truststore.password": "password", "ssl.truststore.certificates": "password",
    "ssl.keystore.type": "string", "ssl.keystore.location": "string",
    "delegation.token.secret.key": "password",
    "delegation.token.master.key": "password",
    "delegation.token.max.lifetime.ms": "long",
    "delegation.token.expiry.time.ms": "long",
    "delegation.token.expiry.check.interval.ms": "long",
}

_TOPIC_DOCS = {
    "cleanup.policy": "delete: old segments are removed by retention; compact: only the latest record of each key is kept.",
    "compression.gzip.level": "Level used when the topic recompresses with gzip.",
    "compression.lz4.level": "Level used when the topic recompresses with lz4.",
    "compression.type": "Codec batches are stored with; producer keeps the producer's own.",
    "compression.zstd.level": "Level used when the topic recompresses with zstd.",
    "delete.retention.ms": "How long tombstones stay readable after compaction reached them.",
    "errors.deadletterqueue.group.enable": "Whether share groups may send failed records to a dead-letter topic.",
    "file.delete.delay.ms": "Delay before a deleted segment's files are removed from disk.",
    "flush.messages": "Records appended between two forced flushes of the log.",
    "flush.ms": "Milliseconds between two forced flushes of the log.",
    "follower.replication.throttled.replicas": "Replicas whose follower replication is throttled.",
    "index.interval.bytes": "Bytes of records between two offset index entries.",
    "leader.replication.throttled.replicas": "Replicas whose leader replication is throttled.",
    "local.retention.bytes": "Bytes kept on local disk when tiered storage holds the rest.",
    "local.retention.ms": "Time records stay on local disk when tiered storage holds the rest.",
    "max.compaction.lag.ms": "Longest time a record may stay uncompacted.",
    "max.decompressed.message.bytes": "Largest decompressed batch the broker accepts.",
    "max.message.bytes": "Largest record batch the topic accepts.",
    "message.timestamp.after.max.ms": "How far in the future a record's timestamp may be.",
    "message.timestamp.before.max.ms": "How far in the past a record's timestamp may be.",
    "message.timestamp.type": "CreateTime keeps the producer's timestamps; LogAppendTime stamps the append time.",
    "min.cleanable.dirty.ratio": "Share of uncompacted bytes that makes a log worth compacting.",
    "min.compaction.lag.ms": "Shortest time a record stays uncompacted.",
    "min.insync.replicas": "In-sync replicas an acks=all produce needs.",
    "preallocate": "Whether segment files are preallocated.",
    "remote.copy.lag.bytes": "Bytes a partition may hold before its segments are copied to tiered storage.",
    "remote.copy.lag.ms": "Time a segment may wait before it is copied to tiered storage.",
    "remote.log.copy.disable": "Stops copying segments to tiered storage.",
    "remote.log.delete.on.disable": "Deletes the tiered copy when tiered storage is turned off.",
    "remote.storage.enable": "Whether the topic uses tiered storage.",
    "retention.bytes": "Largest size a partition keeps before retention removes its oldest segments (-1: no limit).",
    "retention.ms": "Age after which a segment's records are removed by retention (-1: forever).",
    "segment.bytes": "Size at which a new segment is started.",
    "segment.index.bytes": "Size of each segment's offset and time indexes.",
    "segment.jitter.ms": "Random amount taken off segment.ms, so segments do not all roll at once.",
    "segment.ms": "Age at which a new segment is started.",
    "unclean.leader.election.enable": "Whether an out-of-sync replica may become leader.",
}

_BROKER_DOCS = {
    "node.id": "The id of this broker.", "broker.id": "The id of this broker (older name of node.id).",
    "listeners": "Addresses the broker listens on.",
    "advertised.listeners": "Addresses clients are told to connect to.",
    "log.dirs": "Directories holding the partitions' logs.", "log.dir": "Directory holding the partitions' logs.",
    "num.partitions": "Partitions of a topic created without a count.",
    "default.replication.factor": "Replication factor of a topic created without one.",
    "auto.create.topics.enable": "Whether asking for an unknown topic's metadata creates it.",
    "delete.topic.enable": "Whether topics may be deleted.",
    "log.retention.check.interval.ms": "Milliseconds between two retention checks of every log.",
    "log.initial.task.delay.ms": "Delay after start-up before the first retention check.",
    "log.cleaner.backoff.ms": "Milliseconds the cleaner sleeps when no log needs compacting.",
    "log.flush.start.offset.checkpoint.interval.ms": "Milliseconds between two writes of the log start offset checkpoint.",
    "log.cleaner.enable": "Whether compacted topics are compacted.",
    "message.max.bytes": "Largest record batch a topic accepts unless it says otherwise.",
    "fetch.max.bytes": "Most bytes of records one Fetch answer holds (a first batch above it still comes whole).",
    "replica.fetch.max.bytes": "Bytes of records a follower asks for per partition in each fetch.",
    "replica.fetch.response.max.bytes": "Bytes of records a follower asks for per fetch in all.",
}


def describe(name: str, resource_type: int) -> str | None:
    """The description of a config of a topic or a broker (None when pk has none)."""
    if resource_type == TOPIC:
        return _TOPIC_DOCS.get(name)
    if resource_type == BROKER:
        return _TOPIC_DOCS.get(_topic_of(name)) or _BROKER_DOCS.get(name)
    return None


def _topic_of(broker_name: str) -> str | None:
    from .. import topic_config

    for key in topic_config.CONFIGS.values():
        if key.broker_synonym == broker_name:
            return key.name
    return None
