"""`kafka-topics --zookeeper` as Kafka 2.8.2 ran it (TopicCommand.ZookeeperTopicService).

The argument checks are topics.check_args (its ZooKeeper branch); topic selection, replica-
assignment parsing and the describe lines are shared with topics.py. What differs from the
Admin-client tool, and lives here:

- create: 2.8's config rules (LogConfig of 2.8, its message.format.version WARNING), 2.8's
  topic-name messages, the broker/replication-factor check before the name and existence
  checks, replica assignment computed here (engine/replica_assignment.py), no broker
  check for --replica-assignment, `--if-not-exists` silent;
- list: one line per topic, `<t> - marked for deletion` for pending deletions;
- describe: Leader/Isr from the partition state znodes, no TopicId unless the znode has one,
  `MarkedForDeletion: true` on the topic and partition lines;
- alter: config changes (two WARNING lines, `Updated config for topic <t>.`) then partitions
  (a WARNING, `Adding partitions succeeded!`), per topic;
- delete: the two "marked for deletion" lines, or "is already marked for deletion".

`backend` is a backends/zookeeper.ZkBackend (or anything with its methods).
"""

from __future__ import annotations

from pk.engine.errors import InvalidConfigurationError, InvalidTopicError, KafkaError, TopicExistsError

from .backend import PartitionInfo, TopicInfo
from .errors import TopicCommandError
from .topics import (COLLISION_WARNING, Out, TopicOptions, check_args, ensure_found, parse_replica_assignment,
                     partition_line, resolve_ints, select_topics, topic_line)

ALTER_CONFIG_WARNING = (
    "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.",
    "         Going forward, please use kafka-configs.sh for this functionality",
)
PARTITIONS_WARNING = ("WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                      "ordering of the messages will be affected")
MARKED_FOR_DELETION_NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


# --------------------------------------------------------------------------- Kafka 2.8's rules
def validate_topic_name(name: str) -> None:
    """Topic.validate with 2.8's messages (3.3 reworded them)."""
    from pk.engine.topic_names import MAX_NAME_LENGTH, invalid_reason

    if name == "":
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopicError(f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} "
                                f"characters, topic name: {name}")
    if invalid_reason(name) is not None:
        raise InvalidTopicError(f'Topic name "{name}" is illegal, it contains a character other than '
                                "ASCII alphanumerics, '.', '_' and '-'")


# ApiVersion.allVersions of 2.8.2: the versions message.format.version may name.
_API_VERSIONS_28 = (
    ("0.8.0", ("",)), ("0.8.1", ("",)), ("0.8.2", ("",)), ("0.9.0", ("",)),
    ("0.10.0", ("IV0", "IV1")), ("0.10.1", ("IV0", "IV1", "IV2")), ("0.10.2", ("IV0",)),
    ("0.11.0", ("IV0", "IV1", "IV2")), ("1.0", ("IV0",)), ("1.1", ("IV0",)),
    ("2.0", ("IV0", "IV1")), ("2.1", ("IV0", "IV1", "IV2")), ("2.2", ("IV0", "IV1")),
    ("2.3", ("IV0", "IV1")), ("2.4", ("IV0", "IV1")), ("2.5", ("IV0",)), ("2.6", ("IV0",)),
    ("2.7", ("IV0", "IV1", "IV2")), ("2.8", ("IV0", "IV1")),
)


def api_version_valid(version: str) -> bool:
    """ApiVersion.apply (2.8): the first 2 dot-separated parts (3 for "0.x") must be a version
    ("2.8-IV1") or a release ("2.8")."""
    from pk.engine.javacompat import java_split

    keys = {rel + ("-" + iv if iv else "") for rel, ivs in _API_VERSIONS_28 for iv in ivs}
    keys.update(rel for rel, _ in _API_VERSIONS_28)
    n = 3 if version.startswith("0.") else 2
    return ".".join(java_split(version, r"\.")[:n]) in keys


def _api_version_validator(name: str, value) -> None:
    from pk.engine.topic_config import _invalid

    if not api_version_valid(value):
        raise _invalid(name, value, f"Version `{value}` is not a valid version")


def _log_config_28():
    """LogConfig's definitions at 2.8.2, in definition order (name, type, default, validator),
    as its ConfigDef lists them (read from the 2.8.2 jars)."""
    from pk.engine import topic_config as tc

    most = tc.LONG_MAX
    return [
        ("segment.bytes", "int", 1024 * 1024 * 1024, tc.at_least(14)),
        ("segment.ms", "long", 7 * 24 * 3_600_000, tc.at_least(1)),
        ("segment.jitter.ms", "long", 0, tc.at_least(0)),
        ("segment.index.bytes", "int", 10 * 1024 * 1024, tc.at_least(0)),
        ("flush.messages", "long", most, tc.at_least(0)),
        ("flush.ms", "long", most, tc.at_least(0)),
        ("retention.bytes", "long", -1, None),
        ("retention.ms", "long", 7 * 24 * 3_600_000, tc.at_least(-1)),
        ("max.message.bytes", "int", 1024 * 1024 + 12, tc.at_least(0)),
        ("index.interval.bytes", "int", 4096, tc.at_least(0)),
        ("delete.retention.ms", "long", 24 * 3_600_000, tc.at_least(0)),
        ("min.compaction.lag.ms", "long", 0, tc.at_least(0)),
        ("max.compaction.lag.ms", "long", most, tc.at_least(1)),
        ("file.delete.delay.ms", "long", 60_000, tc.at_least(0)),
        ("min.cleanable.dirty.ratio", "double", 0.5, tc.between(0, 1)),
        ("cleanup.policy", "list", ["delete"], tc.valid_list("compact", "delete")),
        ("unclean.leader.election.enable", "boolean", False, None),
        ("min.insync.replicas", "int", 1, tc.at_least(1)),
        ("compression.type", "string", "producer",
         tc.valid_string("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
        ("preallocate", "boolean", False, None),
        ("message.format.version", "string", "2.8-IV1", _api_version_validator),
        ("message.timestamp.type", "string", "CreateTime", tc.valid_string("CreateTime", "LogAppendTime")),
        ("message.timestamp.difference.max.ms", "long", most, tc.at_least(0)),
        ("leader.replication.throttled.replicas", "list", [], tc.throttled_replica_list()),
        ("follower.replication.throttled.replicas", "list", [], tc.throttled_replica_list()),
        ("message.downconversion.enable", "boolean", True, None),
    ]


def validate_log_config(props: dict[str, str]) -> None:
    """LogConfig.validate (2.8): names (in java.util.Properties order), every value in
    definition order, then min.compaction.lag.ms <= max.compaction.lag.ms."""
    from pk.engine.topic_config import _properties_order, parse_type

    table = _log_config_28()
    names = {d[0] for d in table}
    for name in _properties_order(list(props)):
        if name not in names:
            raise InvalidConfigurationError(f"Unknown topic config name: {name}")
    values = {}
    for name, type_, default, validator in table:
        value = parse_type(name, props[name], type_) if name in props else default
        if validator is not None:
            validator(name, value)
        values[name] = value
    lag_min, lag_max = values["min.compaction.lag.ms"], values["max.compaction.lag.ms"]
    if lag_min > lag_max:
        raise InvalidConfigurationError(f"conflict topic config setting min.compaction.lag.ms ({lag_min}) > "
                                        f"max.compaction.lag.ms ({lag_max})")


def parse_configs(args: list[str], out: Out) -> dict[str, str]:
    """parseTopicConfigsToBeAdded (2.8), with its message.format.version WARNING."""
    from pk.engine.topic_config import parse_config_args

    props = parse_config_args(args)
    validate_log_config(props)
    if "message.format.version" in props:
        out(f"WARNING: The configuration message.format.version={props['message.format.version']} is specified. "
            "This configuration will be ignored if the version is newer than the inter.broker.protocol.version "
            "specified in the broker.")
    return props


def parse_configs_to_delete(args: list[str]) -> list[str]:
    """parseTopicConfigsToBeDeleted: trimmed names, which must be topic configs (2.8)."""
    from pk.engine.topic_config import _properties_order, _trim

    names = [_trim(a) for a in args]
    known = {d[0] for d in _log_config_28()}
    for name in _properties_order(list(dict.fromkeys(names))):
        if name not in known:
            raise InvalidConfigurationError(f"Unknown topic config name: {name}")
    return names


# --------------------------------------------------------------------------- actions
def run(backend, o: TopicOptions, out: Out) -> None:
    check_args(o)
    o = resolve_ints(o)
    if o.create:
        create(backend, o, out)
    elif o.alter:
        alter(backend, o, out)
    elif o.list:
        for name in select_topics(backend, o.topic, o.exclude_internal):
            out(f"{name} - marked for deletion" if backend.is_marked_for_deletion(name) else name)
    elif o.describe:
        describe(backend, o, out)
    elif o.delete:
        delete(backend, o, out)


def create(backend, o: TopicOptions, out: Out) -> None:
    from pk.engine.topic_names import has_collision_chars

    name = o.topic
    assignment = parse_replica_assignment(o.replica_assignment) if o.replica_assignment else None
    configs = parse_configs(o.config, out)
    if has_collision_chars(name):
        out(COLLISION_WARNING)
    try:
        if assignment is not None:
            backend.create_topic_with_assignment(name, configs, assignment)
        elif o.partitions is None or o.replication_factor is None:
            raise TopicCommandError("None.get")  # an empty --replica-assignment: Kafka calls partitions.get
        else:
            backend.create_topic(name, o.partitions, o.replication_factor, None, configs,
                                 rack_aware=not o.disable_rack_aware)
    except TopicExistsError:
        if o.if_not_exists:
            return
        raise
    out(f"Created topic {name}.")


def alter(backend, o: TopicOptions, out: Out) -> None:
    from pk.engine.topic_names import is_internal

    topics = select_topics(backend, o.topic, o.exclude_internal)
    assignment = parse_replica_assignment(o.replica_assignment) if o.replica_assignment else None
    to_add = parse_configs(o.config, out)
    to_delete = parse_configs_to_delete(o.delete_config)
    ensure_found(topics, o.topic, not o.if_exists)
    for name in topics:
        if o.config or o.delete_config:
            for line in ALTER_CONFIG_WARNING:
                out(line)
            backend.alter_topic_configs(name, to_add, to_delete)
            out(f"Updated config for topic {name}.")
        if o.partitions is not None:
            if is_internal(name):
                raise TopicCommandError(f"The number of partitions for the internal topic {name} cannot be changed.")
            out(PARTITIONS_WARNING)
            current = backend.topic_assignment(name)
            existing = current.partitions if current else {}
            if not existing:
                raise TopicCommandError(f"The topic {name} does not exist")
            # The --replica-assignment entries past the current partition count, as given.
            new = {p: r for i, (p, r) in enumerate((assignment or {}).items()) if i >= len(existing)}
            # Kafka 2.8 reads the brokers here in the default (enforced) rack-aware mode.
            brokers = backend.broker_metadatas()
            backend.add_partitions(name, existing, brokers, o.partitions, new or None)
            out("Adding partitions succeeded!")


def describe(backend, o: TopicOptions, out: Out) -> None:
    topics = select_topics(backend, o.topic, o.exclude_internal)
    ensure_found(topics, o.topic, not o.if_exists)
    live = backend.live_brokers()
    describe_configs = not (o.under_replicated_partitions or o.unavailable_partitions)
    for name in topics:
        assignment = backend.topic_assignment(name)
        if assignment is None or not assignment.partitions:
            out(f"Topic {name} doesn't exist!")
            continue
        marked = backend.is_marked_for_deletion(name)
        replicas = {p: a.replicas for p, a in sorted(assignment.partitions.items())}
        if describe_configs:
            configs = backend.topic_configs(name)
            # 2.8 prints the java.util.Properties it read the znode into, in that map's order.
            from pk.engine.topic_config import _properties_order

            configs = {k: configs[k] for k in _properties_order(list(configs))}
            if not o.topics_with_overrides or configs:
                partitions = [PartitionInfo(p, None, r, []) for p, r in replicas.items()]
                out(topic_line(TopicInfo(name, assignment.topic_id, partitions, configs), marked))
        if o.topics_with_overrides:
            continue
        for p, r in replicas.items():
            leader, isr = backend.partition_state(name, p) or (None, [])
            part = PartitionInfo(p, leader, r, isr)
            if (describe_configs
                    or (o.under_replicated_partitions and len(r) - len(isr) > 0)
                    or (o.unavailable_partitions and (leader is None or leader not in live))):
                out(partition_line(name, part, marked))


def delete(backend, o: TopicOptions, out: Out) -> None:
    from pk.engine.topic_names import is_internal

    topics = select_topics(backend, o.topic, o.exclude_internal)
    ensure_found(topics, o.topic, not o.if_exists)
    for name in topics:
        if is_internal(name):
            raise TopicCommandError(f"Topic {name} is a kafka internal topic and is not allowed to be marked "
                                    "for deletion.")
        try:
            marked = backend.mark_for_deletion(name)
        except KafkaError:
            raise TopicCommandError(f"Error while deleting topic {name}") from None
        if marked:
            out(f"Topic {name} is marked for deletion.")
            out(MARKED_FOR_DELETION_NOTE)
        else:
            out(f"Topic {name} is already marked for deletion.")
