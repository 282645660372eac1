"""GetOffsetShell (Kafka 4.4, org.apache.kafka.tools.GetOffsetShell): topic-partition offsets.

Written against `OffsetsSource`, a two-call interface (list topics with their partitions,
list offsets) so that a remote cluster can be plugged in beside the bundled engine
(`EngineOffsets`, below). A remote source maps `list_offsets` onto the ListOffsets API
(timestamps -1 latest, -2 earliest, -3 max timestamp, -4 earliest local, else a time).

Connection: Kafka 4.4 requires --bootstrap-server (`Missing required argument "[bootstrap-server]"`;
the deprecated --broker-list is gone) and validates it with ToolsUtils.validateBootstrapServer;
pk without it reads the bundled engine.

Errors: `OffsetShellError(message)` is what Kafka prints as "Error occurred: <message>" (exit 1).
Per-partition failures are reported through `warn` and the partition is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from pk.engine.javacompat import java_split

from .errors import OffsetShellError, PartitionError

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6
UNKNOWN_OFFSET = -1
_INT_MAX = 2**31 - 1

# GetOffsetShell.TOPIC_PARTITION_PATTERN
TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")

MALFORMED_TIME = ("Malformed time argument {}. Please use -1 or latest / -2 or earliest / "
                  "-3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered / "
                  "-6 or earliest-pending-upload, or a specified long format timestamp")
# Kafka 4.4's names for the special timestamps
TIME_NAMES = {"latest": LATEST, "earliest": EARLIEST, "max-timestamp": MAX_TIMESTAMP,
              "earliest-local": EARLIEST_LOCAL, "latest-tiered": LATEST_TIERED,
              "earliest-pending-upload": EARLIEST_PENDING_UPLOAD}


class OffsetsSource(Protocol):
    def list_topics(self, include_internal: bool = True) -> list[str]: ...

    def partitions(self, topics: Sequence[str]) -> dict[str, list[int]]:
        """Partition ids of each existing topic (missing topics are left out)."""

    def list_offsets(self, requests: dict[tuple[str, int], int]) -> dict[tuple[str, int], int | PartitionError]:
        """For each (topic, partition): the offset for the spec (-1 when there is none), or the error."""

    def close(self) -> None: ...


@dataclass
class GetOffsetsOptions:
    # Single-valued options may arrive as a list (the option given several times): Kafka only
    # complains when it reads the value, so the check happens where 3.7 reads it.
    topic: str | list[str] | None = None
    partitions: str | list[str] | None = None
    topic_partitions: str | list[str] | None = None
    time: str | list[str] = "latest"
    command_config: str | list[str] | None = None
    exclude_internal_topics: bool = False


def value_of(name: str, value):
    """jopt-simple OptionSet.valueOf for an option that may have been given several times."""
    if isinstance(value, (list, tuple)):
        if len(value) > 1:
            raise OffsetShellError(f"Found multiple arguments for option {name}, but you asked for only one")
        return value[0] if value else None
    return value


def given(value) -> bool:
    return value not in (None, [], ())


# --------------------------------------------------------------------------- Java parsing
def java_parse_int(text: str) -> int:
    """Integer.parseInt; raises OffsetShellError with NumberFormatException's message."""
    if re.fullmatch(r"[+-]?\d+", text) and -2**31 <= int(text) <= _INT_MAX:
        return int(text)
    raise OffsetShellError(f'For input string: "{text}"')


def parse_offset_spec(text: str) -> int:
    if text in TIME_NAMES:
        return TIME_NAMES[text]
    if re.fullmatch(r"[+-]?\d+", text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise OffsetShellError(MALFORMED_TIME.format(text))


class IncludeList:
    """org.apache.kafka.server.util.TopicFilter.IncludeList: a whole-name regex."""

    def __init__(self, raw: str):
        regex = raw.strip().replace(",", "|").replace(" ", "")
        regex = re.sub(r"""^["']+""", "", regex)
        regex = re.sub(r"""["']+$""", "", regex)
        self.regex = regex
        try:
            self.pattern = re.compile(regex)
        except re.error:
            raise OffsetShellError(f"{regex} is an invalid regex.") from None

    def allows(self, topic: str) -> bool:
        return self.pattern.fullmatch(topic) is not None


@dataclass
class Rule:
    """TopicFilterAndPartitionFilter: a topic regex and a partition predicate."""

    topics: IncludeList
    partition_set: frozenset[int] | None = None  # PartitionsSetFilter (empty = all)
    unique: int | None = None  # UniquePartitionFilter
    lower: int = 0  # PartitionRangeFilter, upper exclusive
    upper: int = _INT_MAX

    def allows_topic(self, topic: str) -> bool:
        return self.topics.allows(topic)

    def allows(self, topic: str, partition: int) -> bool:
        if not self.allows_topic(topic):
            return False
        if self.partition_set is not None:
            return not self.partition_set or partition in self.partition_set
        if self.unique is not None:
            return partition == self.unique
        return self.lower <= partition < self.upper


@dataclass
class Filter:
    """CompositeTopicPartitionFilter: any rule matches."""

    rules: list[Rule] = field(default_factory=list)

    def allows_topic(self, topic: str) -> bool:
        return any(r.allows_topic(topic) for r in self.rules)

    def allows(self, topic: str, partition: int) -> bool:
        return any(r.allows(topic, partition) for r in self.rules)


def parse_rule_spec(spec: str) -> Rule:
    m = TOPIC_PARTITION_PATTERN.fullmatch(spec)
    if not m:
        # Kafka wraps the TerseException in a RuntimeException: its message is the cause's toString().
        raise OffsetShellError(f"org.apache.kafka.tools.TerseException: Invalid rule specification: {spec}")

    def group(i: int) -> str | None:
        return m.group(i) or None

    topics = IncludeList(group(1) if group(1) is not None else ".*")
    if group(2) is not None:
        return Rule(topics, unique=java_parse_int(group(2)))
    lower = java_parse_int(group(3)) if group(3) is not None else 0
    upper = java_parse_int(group(4)) if group(4) is not None else _INT_MAX
    return Rule(topics, lower=lower, upper=upper)


def filter_from_patterns(topic_partitions: str) -> Filter:
    return Filter([parse_rule_spec(spec) for spec in java_split(topic_partitions, ",")])


def partition_set(text: str | None) -> frozenset[int]:
    if not text:
        return frozenset()
    out = set()
    for part in java_split(text, ","):
        try:
            out.add(java_parse_int(part))
        except OffsetShellError:
            raise OffsetShellError("--partitions expects a comma separated list of numeric partition ids, "
                            f"but received: {text}") from None
    return frozenset(out)


def filter_from_topic_and_partitions(topic: str | None, partitions: str | None) -> Filter:
    topics = IncludeList(topic if topic is not None else ".*")
    return Filter([Rule(topics, partition_set=partition_set(partitions))])


def load_command_config(path: str) -> dict[str, str]:
    """Utils.loadProps: the admin client properties (unused by the bundled engine)."""
    import javaproperties

    try:
        with open(path, encoding="latin-1") as f:
            return dict(javaproperties.load(f))
    except FileNotFoundError:
        raise OffsetShellError(path) from None  # NoSuchFileException's message is the path
    except IsADirectoryError:
        raise OffsetShellError("Is a directory") from None
    except OSError as exc:
        raise OffsetShellError(f"{path}: {exc.strerror}") from None


# --------------------------------------------------------------------------- the tool
def fetch_offsets(source: OffsetsSource, o: GetOffsetsOptions,
                  warn: Callable[[str], None]) -> list[tuple[str, int, int]]:
    """GetOffsetShell.fetchOffsets: (topic, partition, offset), sorted as Kafka sorts them: by
    the string "topic-partition" (so partition 10 comes before 2)."""
    if given(o.topic_partitions) and (given(o.topic) or given(o.partitions)):
        raise OffsetShellError("--topic-partitions cannot be used with --topic or --partitions")
    time_arg = value_of("time", o.time)
    spec = parse_offset_spec("latest" if time_arg is None else time_arg)
    if given(o.topic_partitions):
        tp_filter = filter_from_patterns(value_of("topic-partitions", o.topic_partitions))
    else:
        tp_filter = filter_from_topic_and_partitions(value_of("topic", o.topic), value_of("partitions", o.partitions))
    if given(o.command_config):
        load_command_config(value_of("command-config", o.command_config))

    topics = [t for t in source.list_topics(include_internal=not o.exclude_internal_topics)
              if tp_filter.allows_topic(t)]
    wanted = [(t, p) for t, ps in source.partitions(topics).items() for p in ps if tp_filter.allows(t, p)]
    if not wanted:
        raise OffsetShellError("Could not match any topic-partitions with the specified filters")

    if spec < EARLIEST_PENDING_UPLOAD:
        # Kafka 4.4's admin client finds no ListOffsets version for a timestamp below -6 and
        # fails each partition with UnsupportedVersionException (after logging an ERROR line).
        unsupported = PartitionError("org.apache.kafka.common.errors.UnsupportedVersionException",
                                     "The version of API is not supported.")
        results = {tp: unsupported for tp in wanted}
    else:
        results = source.list_offsets({tp: spec for tp in wanted})
    out = []
    for tp in wanted:
        result = results.get(tp)
        if isinstance(result, PartitionError):
            warn(f"Skip getting offsets for topic-partition {tp[0]}-{tp[1]} due to error: {result}")
            continue
        if result is not None and result != UNKNOWN_OFFSET:
            out.append((tp[0], tp[1], result))
    # Kafka's TreeMap ordered by TopicPartition.toString(): "topic-partition" as a string
    out.sort(key=lambda r: f"{r[0]}-{r[1]}".encode("utf-16-be", "surrogatepass"))
    return out


def format_line(topic: str, partition: int, offset: int) -> str:
    return f"{topic}:{partition}:{offset}"


# --------------------------------------------------------------------------- bundled engine
class EngineOffsets:
    """OffsetsSource over the bundled engine: what a 3.7 broker answers to ListOffsets."""

    def __init__(self, data_dir: str | None = None):
        from pk.engine.engine import Engine

        self.engine = Engine(data_dir)

    def list_topics(self, include_internal: bool = True) -> list[str]:
        from pk.engine.topic_names import is_internal

        names = self.engine.list_topics()
        return [n for n in names if include_internal or not is_internal(n)]

    def partitions(self, topics: Sequence[str]) -> dict[str, list[int]]:
        from pk.engine.errors import UnknownTopicOrPartitionError

        out = {}
        for name in topics:
            try:
                out[name] = sorted(self.engine.topic(name).assignment)
            except UnknownTopicOrPartitionError:
                continue  # deleted since it was listed
        return out

    def list_offsets(self, requests: dict[tuple[str, int], int]) -> dict[tuple[str, int], int | PartitionError]:
        from pk.engine.errors import KafkaError, UnknownTopicOrPartitionError

        out: dict[tuple[str, int], int | PartitionError] = {}
        for (topic, partition), spec in requests.items():
            try:
                out[(topic, partition)] = self.offset(topic, partition, spec)
            except UnknownTopicOrPartitionError:
                out[(topic, partition)] = PartitionError(
                    "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
                    "This server does not host this topic-partition.")
            except KafkaError as exc:
                out[(topic, partition)] = PartitionError(
                    "org.apache.kafka.common.errors.UnknownServerException", str(exc))
            except OSError as exc:
                out[(topic, partition)] = PartitionError(
                    "org.apache.kafka.common.errors.KafkaStorageException",
                    f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc))
        return out

    def offset(self, topic: str, partition: int, spec: int) -> int:
        """The partition log's ListOffsets answer (PartitionLog.list_offset), -1 for none."""
        found = self.engine.partition(topic, partition).list_offset(spec)
        return UNKNOWN_OFFSET if found is None else found[0]

    def close(self) -> None:
        self.engine.close()

