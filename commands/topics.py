"""kafka-topics (TopicCommand, Kafka 3.7): argument checks, topic selection, and the five
actions, written once against `Backend`. Output goes through `out(line)`.

With `--zookeeper` (TopicOptions.zookeeper set) pk mirrors Kafka 2.8's ZooKeeper mode instead:
check_args applies 2.8's rules for that mode here, and the actions live in topics_zk.py, which
reuses the selection, parsing and line formatting below.

Errors: `UsageError` for what Kafka reports through printUsageAndExit; any engine
`KafkaError` or `TopicCommandError` is what Kafka prints as
"Error while executing topic command : <message>".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from pk.engine.errors import TopicExistsError
from pk.engine.javacompat import java_split
from pk.engine.topic_config import java_hashmap_order

from .backend import Backend, TopicInfo
from .errors import TopicCommandError, UsageError

ACTIONS = ("create", "list", "alter", "describe", "delete")
REPORT_FLAGS = ("under_replicated_partitions", "under_min_isr_partitions",
                "at_min_isr_partitions", "unavailable_partitions")
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or "
                     "underscore ('_') could collide. To avoid issues it is best to use either, "
                     "but not both.")
ERROR_PREFIX = "Error while executing topic command : "
SHORT_MAX = 32767


@dataclass
class TopicOptions:
    create: bool = False
    list: bool = False
    alter: bool = False
    describe: bool = False
    delete: bool = False
    topic: str | None = None
    topic_id: str | None = None
    # Integer options may arrive as the command line's text: jopt-simple converts them only when
    # the action reads them (resolve_ints), so a bad number is an action error, not a usage error.
    partitions: int | str | None = None
    replication_factor: int | str | None = None
    replica_assignment: str | None = None
    config: list[str] = field(default_factory=lambda: [])  # (`list` is a field name here)
    delete_config: list[str] = field(default_factory=lambda: [])
    if_exists: bool = False
    if_not_exists: bool = False
    exclude_internal: bool = False
    under_replicated_partitions: bool = False
    under_min_isr_partitions: bool = False
    at_min_isr_partitions: bool = False
    unavailable_partitions: bool = False
    topics_with_overrides: bool = False
    # The bundled engine is administered directly, like the ZooKeeper-era tool was, so it
    # may alter topic configs; through --bootstrap-server Kafka 3.7 refuses that.
    configs_alterable: bool = True
    # Kafka 2.8's ZooKeeper mode (topics_zk.py): the connect string, host:port[/chroot].
    zookeeper: str | None = None
    # Only parsed so that 2.8's "Only one of --bootstrap-server or --zookeeper" check can run.
    bootstrap_server: str | None = None
    disable_rack_aware: bool = False  # ZooKeeper mode only
    force: bool = False  # ZooKeeper mode only; ignored, as Kafka 2.8 ignored it
    # Kafka 4.4 (DescribeTopicPartitions paging): parsed and checked, nothing for pk to page.
    partition_size_limit_per_response: int | str | None = None
    warned: bool = False  # the --delete-config warning was printed (check_args runs twice)


DELETE_CONFIG_WARNING = ("delete-config option is no longer supported and deprecated since version 4.0. "
                         "The config will be fully removed in future releases.")


# --------------------------------------------------------------------------- checks
def warn(line: str) -> None:
    import sys

    print(line, file=sys.stderr)


def deletes_configs(o: TopicOptions) -> bool:
    """--delete-config still removes overrides on the bundled engine (--alter, pk's own
    extension); elsewhere Kafka 4.4 ignores it after a warning."""
    return o.alter and o.configs_alterable


def resolve_ints(o: TopicOptions) -> TopicOptions:
    """The integer options as the action reads them (partitions, then replication factor):
    jopt-simple's conversion error is an action error (`Error while executing topic command :`)."""
    from dataclasses import replace

    values = {}
    for name in ("partitions", "replication_factor", "partition_size_limit_per_response"):
        value = getattr(o, name)
        if isinstance(value, str):
            text = value
            if not (re.fullmatch(r"[+-]?[0-9]+", text) and -2**31 <= int(text) < 2**31):
                raise TopicCommandError(f"Cannot parse argument '{text}' of option {name.replace('_', '-')}")
            values[name] = int(text)
    return replace(o, **values) if values else o


def _opt(name: str) -> str:
    return f"[{name.replace('_', '-')}]"


def check_args(o: TopicOptions) -> None:
    """TopicCommandOptions.checkArgs, in Kafka's order: 3.7's, or 2.8's with --zookeeper."""
    zk = o.zookeeper is not None
    if not zk:  # options that only exist in Kafka 2.8's ZooKeeper mode: unknown to Kafka 4.4
        for name in ("bootstrap_server", "disable_rack_aware", "force"):
            if getattr(o, name) not in (None, False):
                raise UsageError(f"{name.replace('_', '-')} is not a recognized option")
    elif o.topic_id is not None:  # 2.8 has no --topic-id
        raise UsageError("topic-id is not a recognized option")
    elif o.partition_size_limit_per_response is not None:
        raise UsageError("partition-size-limit-per-response is not a recognized option")
    actions = sum(bool(getattr(o, a)) for a in ACTIONS)
    if actions != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    if zk and o.bootstrap_server is not None:
        # Thrown before main's try: the JVM prints the uncaught exception.
        raise UsageError('Exception in thread "main" java.lang.IllegalArgumentException: '
                         "Only one of --bootstrap-server or --zookeeper must be specified")
    if o.describe and o.if_exists and o.topic is None and o.topic_id is None:
        raise UsageError('Missing required argument "[topic]"' if zk
                         else "--topic or --topic-id is required to describe a topic")
    if not o.list and not o.describe and o.topic is None:
        raise UsageError('Missing required argument "[topic]"')
    if zk and o.create and o.replica_assignment is None:
        for name in ("partitions", "replication_factor"):
            if getattr(o, name) is None:
                raise UsageError(f'Missing required argument "{_opt(name)}"')
    if not zk and o.delete_config and not deletes_configs(o) and not o.warned:
        # Kafka 4.4 only warns (on stderr, after the action check) and ignores the option.
        o.warned = True
        warn(DELETE_CONFIG_WARNING)
    if o.alter and not zk:
        if o.config and not o.configs_alterable:
            raise UsageError('Option combination "[[config], [bootstrap-server]]" can\'t be used with option '
                             '"[alter]" (To alter topic configurations, the kafka-configs tool can be used.)')
        if o.partitions is None and not (o.configs_alterable and (o.config or o.delete_config)):
            raise UsageError('Missing required argument "[partitions]"')

    def invalid(used: str, *others: str) -> None:
        if getattr(o, used) not in (None, False, []):
            for other in others:
                if getattr(o, other):
                    raise UsageError(f'Option "{_opt(used)}" can\'t be used with option "{_opt(other)}"')

    def all_but(*keep: str) -> tuple[str, ...]:
        return tuple(a for a in ("alter", "create", "describe", "list", "delete") if a not in keep)

    invalid("config", *all_but("alter", "create"))
    if zk:
        invalid("delete_config", *all_but("alter"))
    invalid("partitions", *all_but("alter", "create"))
    invalid("replication_factor", *all_but("create"))
    invalid("replica_assignment", *all_but("alter", "create"))
    if o.create:
        invalid("replica_assignment", "partitions", "replication_factor")
    for flag in REPORT_FLAGS:
        if zk:  # 2.8 (Scala) also refuses two report flags together, and the min-ISR ones with ZooKeeper
            zk_only = ("zookeeper",) if "min_isr" in flag else ()
            invalid(flag, *all_but("describe"), *(f for f in REPORT_FLAGS if f != flag),
                    "topics_with_overrides", *zk_only)
        else:
            invalid(flag, *all_but("describe"), "topics_with_overrides")
    invalid("topics_with_overrides", *all_but("describe"), *REPORT_FLAGS)
    invalid("if_exists", *all_but("alter", "delete", "describe"))
    invalid("if_not_exists", *all_but("create"))
    invalid("exclude_internal", *all_but("list", "describe"))


# --------------------------------------------------------------------------- parsing
def java_parse_int(text: str) -> int:
    if re.fullmatch(r"[+-]?[0-9]+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    raise TopicCommandError(f'For input string: "{text}"')


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    result: dict[int, list[int]] = {}
    # A list of separators only ("," or ":") reads as one empty item, which fails to parse as
    # pk has always reported it (Java's split gives no items there).
    for i, part in enumerate(java_split(text, ",") or [""]):
        brokers = [java_parse_int(b.strip()) for b in java_split(part, ":") or [""]]
        dups = sorted({b for b in brokers if brokers.count(b) > 1})
        if dups:
            raise TopicCommandError("Partition replica lists may not contain duplicate entries: "
                               + ",".join(map(str, dups)))
        result[i] = brokers
        if len(brokers) != len(result[0]):
            raise TopicCommandError(f"Partition {i} has different replication factor: [{', '.join(map(str, brokers))}]")
    return result


def parse_configs(args: list[str]) -> dict[str, str]:
    from pk.engine import topic_config

    props = topic_config.parse_config_args(args)
    topic_config.validate(props)
    return props


def topic_regex(raw: str) -> re.Pattern:
    """How Kafka's IncludeList turns --topic into a whole-name regex."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"""^["']+""", "", regex)
    regex = re.sub(r"""["']+$""", "", regex)
    try:
        return re.compile(regex)
    except re.error:
        raise TopicCommandError(f"{regex} is an invalid regex.") from None


def select_topics(backend: Backend, topic: str | None, exclude_internal: bool) -> list[str]:
    from pk.engine.topic_names import is_internal

    names = sorted(backend.list_topics(include_internal=not exclude_internal))
    if topic is not None:
        pattern = topic_regex(topic)
        names = [n for n in names if pattern.fullmatch(n)]
    if exclude_internal:
        names = [n for n in names if not is_internal(n)]
    return names


def ensure_found(found: list, requested: str | None, required: bool) -> None:
    if requested and required and not found:
        raise TopicCommandError(f"Topic '{requested}' does not exist as expected")


# --------------------------------------------------------------------------- actions
Out = Callable[[str], None]


def run(backend: Backend, o: TopicOptions, out: Out) -> None:
    check_args(o)
    o = resolve_ints(o)
    if o.create:
        create(backend, o, out)
    elif o.alter:
        alter(backend, o, out)
    elif o.list:
        out("\n".join(select_topics(backend, o.topic, o.exclude_internal)))
    elif o.describe:
        describe(backend, o, out)
    elif o.delete:
        delete(backend, o)


def create(backend: Backend, o: TopicOptions, out: Out) -> None:
    from pk.engine.topic_names import has_collision_chars

    name = o.topic
    assignment = parse_replica_assignment(o.replica_assignment) if o.replica_assignment else None
    configs = parse_configs(o.config)
    if has_collision_chars(name):
        out(COLLISION_WARNING)
    if o.replication_factor is not None and not 1 <= o.replication_factor <= SHORT_MAX:
        raise TopicCommandError(f"The replication factor must be between 1 and {SHORT_MAX} inclusive")
    if o.partitions is not None and o.partitions < 1:
        raise TopicCommandError("The partitions must be greater than 0")
    try:
        if assignment:
            backend.create_topic(name, -1, -1, assignment, configs)
        else:
            backend.create_topic(name, o.partitions if o.partitions is not None else -1,
                                 o.replication_factor if o.replication_factor is not None else -1,
                                 None, configs)
    except TopicExistsError:
        if o.if_not_exists:
            return
        raise
    out(f"Created topic {name}.")


def alter(backend: Backend, o: TopicOptions, out: Out) -> None:
    assignment = parse_replica_assignment(o.replica_assignment) if o.replica_assignment else None
    set_configs = parse_configs(o.config) if o.config else {}
    topics = select_topics(backend, o.topic, o.exclude_internal)
    ensure_found(topics, o.topic, not o.if_exists)
    if o.partitions is not None and topics:
        infos = {t.name: t for t in backend.describe_topics(topics)}
        for name in topics:
            new = None
            if assignment:
                current = len(infos[name].partitions) if name in infos else 0
                new = [r for p, r in assignment.items() if p >= current]
            backend.create_partitions(name, o.partitions, new)
    delete_configs = list(o.delete_config) if deletes_configs(o) else []
    if set_configs or delete_configs:
        for name in topics:
            backend.alter_topic_configs(name, set_configs, delete_configs)
            out(f"Updated config for topic {name}.")


def describe(backend: Backend, o: TopicOptions, out: Out) -> None:
    for info, topic_shown, partitions in described(backend, o, out):
        if topic_shown:
            out(topic_line(info))
        for part in partitions:
            out(partition_line(info.name, part) + elr_fields(info, part))


def described(backend: Backend, o: TopicOptions, note: Out) -> list[tuple[TopicInfo, bool, list]]:
    """What --describe reports, in Kafka's order: each topic's info, whether its topic line is
    printed, and the partitions whose lines are printed (the report flags' selection). `note`
    takes the line Kafka prints before the topics when both --topic and --topic-id are given."""
    if o.topic_id is not None and o.topic is not None and o.if_exists:
        note("Only topic id will be used when both --topic and --topic-id are specified and topicId is not Uuid.ZERO_UUID")
    topic_id = parse_uuid(o.topic_id) if o.topic_id is not None else None
    if topic_id is not None and topic_id != ZERO_UUID:
        infos = [t for t in backend.describe_topics(select_topics(backend, None, o.exclude_internal))
                 if t.topic_id == topic_id]
        for info in infos:  # Kafka's Admin describes topics by id with Metadata: no ELRs
            info.elr_known = False
            for part in info.partitions:
                part.elr = part.last_known_elr = None
        if not infos and not o.if_exists:
            raise TopicCommandError(f"TopicId '{topic_id}' does not exist as expected")
    else:
        topics = select_topics(backend, o.topic, o.exclude_internal)
        ensure_found(topics, o.topic, not o.if_exists)
        infos = backend.describe_topics(topics) if topics else []
        # Kafka prints the values of describeTopics' result map: a HashMap sized for the
        # topics, filled in name order.
        by_name = {info.name: info for info in infos}
        infos = [by_name[n] for n in java_hashmap_order(topics) if n in by_name]
    live = backend.live_brokers()
    reporting = any(getattr(o, f) for f in REPORT_FLAGS)
    result = []
    for info in infos:
        topic_shown = not reporting and (not o.topics_with_overrides or bool(info.overrides))
        if o.topics_with_overrides:
            partitions = []
        else:
            partitions = [p for p in info.partitions if not reporting or _matches_report(o, info, p, live)]
        result.append((info, topic_shown, partitions))
    return result


ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
_BASE64_URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def parse_uuid(text: str) -> str:
    """Uuid.fromString: Java's URL-safe Base64 decoder (padding optional, unused bits ignored),
    then exactly 16 bytes; returns Uuid.toString (22 characters, no padding)."""
    body, _, padding = text.partition("=")
    for ch in body:
        if ch not in _BASE64_URL:
            raise TopicCommandError(f"Illegal base64 character {ord(ch) & 0xFF:x}")
    if "=" in text and ((len(body) % 4, "=" + padding) not in ((2, "=="), (3, "="))):
        raise TopicCommandError("Input byte array has wrong 4-byte ending unit")
    if len(body) % 4 == 1:
        raise TopicCommandError("Last unit does not have enough valid bits")
    size = len(body) * 6 // 8
    if size != 16:
        raise TopicCommandError(f"Input string `{text}` decoded as {size} bytes, which is not equal to the expected "
                           "16 bytes of a base64-encoded UUID")
    value = 0
    for ch in body:
        value = value << 6 | _BASE64_URL.index(ch)
    value >>= len(body) * 6 - 128  # the unused low bits of the last character
    bits = value << 4  # re-encoded: 128 bits in 22 characters, the last one padded with zeros
    return "".join(_BASE64_URL[(bits >> (6 * (21 - i))) & 63] for i in range(22))


def _matches_report(o: TopicOptions, info: TopicInfo, part, live: set[int]) -> bool:
    rf = len(info.partitions[0].replicas) if info.partitions else 0
    has_leader = part.leader is not None
    return ((o.under_replicated_partitions and rf - len(part.isr) > 0)
            or (o.unavailable_partitions and (not has_leader or part.leader not in live))
            or (o.under_min_isr_partitions and (not has_leader or len(part.isr) < info.min_insync_replicas))
            or (o.at_min_isr_partitions and len(part.isr) == info.min_insync_replicas))


def elr_fields(info: TopicInfo, part=None) -> str:
    """Kafka 4.4's eligible leader replicas columns: the lists the cluster's
    DescribeTopicPartitions answered (comma-joined in its order, as TopicCommand prints them);
    without them, empty where the cluster can report them (pk's engine, one broker, never
    shrinks an ISR), N/A where it cannot."""
    if part is not None and part.elr is not None:
        return (f"\tElr: {','.join(map(str, part.elr))}"
                f"\tLastKnownElr: {','.join(map(str, part.last_known_elr or []))}")
    return "\tElr: \tLastKnownElr: " if info.elr_known else "\tElr: N/A\tLastKnownElr: N/A"


def topic_line(info: TopicInfo, marked_for_deletion: bool = False) -> str:
    """`info.overrides` in the order Kafka prints them. marked_for_deletion: ZooKeeper mode
    only (2.8 appends the field; Admin-client paths never)."""
    configs = ",".join(f"{k}={v}" for k, v in info.overrides.items())
    rf = len(info.partitions[0].replicas) if info.partitions else 0
    tid = f"\tTopicId: {info.topic_id}" if info.topic_id and info.topic_id != "AAAAAAAAAAAAAAAAAAAAAA" else ""
    return (f"Topic: {info.name}{tid}\tPartitionCount: {len(info.partitions)}"
            f"\tReplicationFactor: {rf}\tConfigs: {configs}"
            + ("\tMarkedForDeletion: true" if marked_for_deletion else ""))


def partition_line(topic: str, part, marked_for_deletion: bool = False) -> str:
    leader = "none" if part.leader is None else part.leader
    return (f"\tTopic: {topic}\tPartition: {part.partition}\tLeader: {leader}"
            f"\tReplicas: {','.join(map(str, part.replicas))}\tIsr: {','.join(map(str, part.isr))}"
            + ("\tMarkedForDeletion: true" if marked_for_deletion else ""))


def delete(backend: Backend, o: TopicOptions) -> None:
    from pk.engine.topic_names import is_internal

    topics = select_topics(backend, o.topic, o.exclude_internal)
    ensure_found(topics, o.topic, not o.if_exists)
    for name in topics:
        if is_internal(name):
            raise TopicCommandError(f"Topic {name} is a kafka internal topic and is not allowed to be marked "
                                    "for deletion.")
    backend.delete_topics(topics)
