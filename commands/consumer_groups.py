"""kafka-consumer-groups (ConsumerGroupCommand, Kafka 3.7 — the Scala `kafka.admin` one):
argument checks, and the five actions --list, --describe, --delete, --reset-offsets and
--delete-offsets, written once against `GroupBackend` (engine_groups_backend.py implements it
on the bundled engine; an AdminClient backend can implement it for a remote cluster).

Texts, widths and check order follow core/src/main/scala/kafka/admin/ConsumerGroupCommand.scala
@3.7.1. How Kafka reports things, and what pk does with it:

* printUsageAndExit (stderr, help table, exit 1) → `UsageError`: the message alone.
* jopt-simple parse failures, which 3.7 leaves uncaught → `JoptError`: the JVM's first line.
* printError (`\\nError: <msg>` on stdout, exit 0) → `Console.error`: `Error: <msg>` as one line
  on stderr; the command goes on as Kafka does, and the tool exits 1 at the end.
* an unexpected exception, which 3.7 prints as `Error: Executing consumer group command failed
  due to <message>` → `CommandFailure`: that line on stderr, exit 1.
* lines Kafka itself prints on stderr (no active members, rebalancing, the reset WARN, the
  log4j WARN of an out-of-range offset) stay on stderr, byte for byte.

Where Kafka's row order comes from hash maps (groups in a reset, members, partitions of a
member) pk sorts: groups by id, members by the number of partitions they own (descending,
as Kafka) then by member id, partitions by (topic, partition).
"""

from __future__ import annotations

import csv
import io
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

TopicPartition = tuple[str, int]

HELP_LINE = ("This tool helps to list all consumer groups, describe a consumer group, delete consumer "
             "group info, or reset consumer group offsets.")
MISSING = "-"
FAILED_PREFIX = "Executing consumer group command failed due to "
LOGGER = "kafka.admin.ConsumerGroupCommand$"
EXECUTION_EXCEPTION = "java.util.concurrent.ExecutionException"
RESET_WARNING = (
    "WARN: No action will be performed as the --execute option is missing."
    "In a future major release, the default behavior of this command will be to prompt the user before "
    "executing the reset rather than doing a dry run. You should add the --dry-run option explicitly "
    "if you are scripting this command and want to keep the current default behavior without prompting.")
# ConsumerGroupState in 3.7, enum order, without UNKNOWN. 3.7 matches the names exactly
# (case-sensitive); 3.8 made the match case-insensitive.
VALID_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")
# The reset scenarios in the order 3.7 checks them, and in the iteration order of the Scala
# immutable.HashSet `allResetOffsetScenarioOpts` (computed with scala-library 2.13 and
# jopt-simple 5.0.4's OptionSpec hash codes; removing an element keeps the others' order).
SCENARIO_CHECK_ORDER = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest",
                        "to_current", "shift_by", "from_file")
SCENARIO_HASH_ORDER = ("by_duration", "to_offset", "from_file", "to_datetime", "to_earliest",
                       "to_current", "shift_by", "to_latest")
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")


# --------------------------------------------------------------------------- errors
class UsageError(Exception):
    """What Kafka reports with printUsageAndExit: one line on stderr, exit 1."""


class JoptError(Exception):
    """A jopt-simple parse failure ConsumerGroupCommand 3.7 does not catch (the JVM reports it)."""

    def __init__(self, exception_class: str, message: str):
        super().__init__(message)
        self.exception_class = exception_class
        self.message = message

    def line(self) -> str:
        return f'Exception in thread "main" {self.exception_class}: {self.message}'


class CommandFailure(Exception):
    """An exception Kafka catches in run(): `Error: Executing consumer group command failed due to <msg>`."""


class ApiError(Exception):
    """A Kafka API error as the admin client reports it: protocol error name, Java class, message.

    str() is Java's Throwable.toString(), e.g.
    `org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.`"""

    def __init__(self, code: str, java_class: str, message: str):
        super().__init__(message)
        self.code = code
        self.java_class = java_class
        self.message = message

    def __str__(self) -> str:
        return f"{self.java_class}: {self.message}"

    def execution_message(self) -> str:
        """getMessage() of the ExecutionException a KafkaFuture.get() wraps this in."""
        return str(self)


_ERRORS = "org.apache.kafka.common.errors."


def group_not_empty() -> ApiError:
    return ApiError("NON_EMPTY_GROUP", _ERRORS + "GroupNotEmptyException", "The group is not empty.")


def group_id_not_found() -> ApiError:
    return ApiError("GROUP_ID_NOT_FOUND", _ERRORS + "GroupIdNotFoundException", "The group id does not exist.")


def unknown_topic_or_partition(message: str = "This server does not host this topic-partition.") -> ApiError:
    return ApiError("UNKNOWN_TOPIC_OR_PARTITION", _ERRORS + "UnknownTopicOrPartitionException", message)


def group_subscribed_to_topic() -> ApiError:
    return ApiError("GROUP_SUBSCRIBED_TO_TOPIC", _ERRORS + "GroupSubscribedToTopicException",
                    "Deleting offsets of a topic is forbidden while the consumer group is actively "
                    "subscribed to it.")


def unknown_member_id() -> ApiError:
    return ApiError("UNKNOWN_MEMBER_ID", _ERRORS + "UnknownMemberIdException",
                    "The coordinator is not aware of this member.")


# --------------------------------------------------------------------------- backend interface
@dataclass
class Coordinator:
    host: str | None  # None: no network address (the bundled engine)
    port: int | None
    node_id: int

    def __str__(self) -> str:
        # 3.7: `${host}:${port} (${idString})`
        where = f"{self.host}:{self.port}" if self.host is not None else MISSING
        return f"{where} ({self.node_id})"


@dataclass
class MemberDescription:
    member_id: str
    client_id: str
    host: str
    assignment: list[TopicPartition] = field(default_factory=list)
    group_instance_id: str | None = None


@dataclass
class GroupDescription:
    group_id: str
    state: str  # Kafka's state name; "Dead" for a group that does not exist
    assignor: str  # the partition assignor ("" when the group has none)
    members: list[MemberDescription]
    coordinator: Coordinator


class GroupBackend(Protocol):
    """What ConsumerGroupCommand asks of the cluster. Failures are ApiError."""

    def list_groups(self) -> list[tuple[str, str]]:
        """(group id, state) of every consumer group."""

    def describe_groups(self, group_ids: list[str]) -> dict[str, GroupDescription]:
        """One description per id; a group that does not exist is described as "Dead"."""

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, int]: ...

    def topic_partitions(self, topic: str) -> list[int]:
        """The partitions of a topic (describeTopics); ApiError when it does not exist."""

    def log_start_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]: ...

    def log_end_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]: ...

    def offsets_for_timestamp(self, partitions: list[TopicPartition],
                              timestamp: int) -> dict[TopicPartition, int | None]:
        """First offset with a timestamp >= `timestamp`; None where there is none."""

    def alter_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        """Commit offsets for an inactive group (ApiError if it has members)."""

    def delete_groups(self, group_ids: list[str]) -> dict[str, ApiError | None]: ...

    def delete_offsets(self, group_id: str, partitions: list[TopicPartition]
                       ) -> tuple[ApiError | None, dict[TopicPartition, ApiError | None]]:
        """(group-level error, per-partition errors) of an OffsetDelete request."""

    def close(self) -> None: ...


# --------------------------------------------------------------------------- options
@dataclass
class GroupOptions:
    list: bool = False
    describe: bool = False
    delete: bool = False
    reset_offsets: bool = False
    delete_offsets: bool = False
    group: list[str] = field(default_factory=list)
    all_groups: bool = False
    topic: list[str] = field(default_factory=list)
    all_topics: bool = False
    members: bool = False
    offsets: bool = False
    verbose: bool = False
    state: list[str] | None = None  # None: not given; else the values given (may be empty)
    dry_run: bool = False
    execute: bool = False
    export: bool = False
    to_offset: list[str] = field(default_factory=list)
    shift_by: list[str] = field(default_factory=list)
    to_datetime: list[str] = field(default_factory=list)
    by_duration: list[str] = field(default_factory=list)
    from_file: list[str] = field(default_factory=list)
    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    timeout: list[str] = field(default_factory=list)

    def has(self, name: str) -> bool:
        value = getattr(self, name)
        if name == "state":
            return value is not None
        return bool(value)


def _spec(name: str) -> str:
    """How a jopt OptionSpec prints: `[name]`."""
    return f"[{name.replace('_', '-')}]"


class Console:
    """Where output goes. `out`/`err` write text verbatim; `error` is a pk error line."""

    def __init__(self, out: Callable[[str], None], err: Callable[[str], None]):
        self._out = out
        self._err = err
        self.failed = False

    def out(self, text: str) -> None:
        self._out(text)

    def println(self, text: str = "") -> None:
        self._out(text + "\n")

    def info(self, text: str) -> None:
        """A line Kafka itself prints on stderr."""
        self._err(text + "\n")

    def error(self, message: str) -> None:
        """Kafka's printError: `Error: <message>` (pk: on stderr, and the exit status becomes 1)."""
        self._err("Error: " + message + "\n")
        self.failed = True

    def warn_log(self, message: str) -> None:
        """A log4j WARN line of the tool's logger, as tools-log4j.properties formats it."""
        now = time.time()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now * 1000) % 1000:03d}"
        self._err(f"[{stamp}] WARN {message} ({LOGGER})\n")


# --------------------------------------------------------------------------- checks
def check_args(o: GroupOptions, console: Console) -> None:
    """jopt's availableIf checks, then ConsumerGroupCommandOptions.checkArgs, then the action
    count, in 3.7's order (no --bootstrap-server check: the bundled engine needs none)."""
    unavailable = [name for name, ok in (("members", o.describe), ("offsets", o.describe),
                                         ("state", o.describe or o.list), ("verbose", o.describe))
                   if o.has(name) and not ok]
    if unavailable:
        raise JoptError("joptsimple.UnavailableOptionException",
                        f"Option(s) [{', '.join(sorted(unavailable))}] are unavailable given other options "
                        "on the command line")
    scope = f"{_spec('group')}, {_spec('all-groups')}"
    if o.describe:
        if not o.group and not o.all_groups:
            raise UsageError(f"Option {_spec('describe')} takes one of these options: {scope}")
        if sum(o.has(n) for n in ("members", "offsets", "state")) > 1:
            raise UsageError(f"Option {_spec('describe')} takes at most one of these options: "
                             f"{_spec('members')}, {_spec('offsets')}, {_spec('state')}")
        if o.has("state") and single(o.state, "state", usage=True) is not None:
            raise UsageError(f"Option {_spec('describe')} does not take a value for {_spec('state')}")
    if o.delete:
        if not o.group and not o.all_groups:
            raise UsageError(f"Option {_spec('delete')} takes one of these options: {scope}")
        if o.topic:
            raise UsageError("The consumer does not support topic-specific offset deletion from a consumer group.")
    if o.delete_offsets:
        if not o.group or not o.topic:
            raise UsageError(f"Option {_spec('delete-offsets')} takes the following options: "
                             f"{_spec('group')}, {_spec('topic')}")
    if o.reset_offsets:
        if o.dry_run and o.execute:
            raise UsageError(f"Option {_spec('reset-offsets')} only accepts one of {_spec('execute')} "
                             f"and {_spec('dry-run')}")
        if not o.dry_run and not o.execute:
            console.info(RESET_WARNING)
        if not o.group and not o.all_groups:
            raise UsageError(f"Option {_spec('reset-offsets')} takes one of these options: {scope}")
        for used in SCENARIO_CHECK_ORDER:
            if o.has(used):
                for other in SCENARIO_HASH_ORDER:
                    if other != used and o.has(other):
                        raise UsageError(f'Option "{_spec(used)}" can\'t be used with option "{_spec(other)}"')
    _invalid(o, "group", "all_groups")
    _invalid(o, "group", "list")
    _invalid(o, "topic", "list", "describe")
    if sum(o.has(a) for a in ACTIONS) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --delete, "
                         "--reset-offsets, --delete-offsets")


def _invalid(o: GroupOptions, used: str, *others: str) -> None:
    if o.has(used):
        for other in others:
            if o.has(other):
                raise UsageError(f'Option "{_spec(used)}" can\'t be used with option "{_spec(other)}"')


# --------------------------------------------------------------------------- option values
def single(values: list[str] | None, name: str, usage: bool = False) -> str | None:
    """jopt's OptionSet.valueOf for an option that may have been given several times."""
    if not values:
        return None
    if len(values) > 1:
        message = f"Found multiple arguments for option {name}, but you asked for only one"
        raise UsageError(message) if usage else CommandFailure(message)
    return values[0]


_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")


def java_long(values: list[str], name: str, default: int | None = None) -> int | None:
    """valueOf of a Long option: jopt converts when the value is read, not when parsing."""
    text = single(values, name)
    if text is None:
        return default
    if _JAVA_INTEGER.fullmatch(text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise CommandFailure(f"Cannot parse argument '{text}' of option {name}")


def java_split(text: str, sep: str) -> list[str]:
    """String.split with a literal separator: trailing empty strings are dropped."""
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def jlen(text: str) -> int:
    """Java's String.length(): UTF-16 code units (what %-Ns pads to)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def pad(value, width: int) -> str:
    """Java's `%-<width>s`."""
    text = str(value)
    return text + " " * max(0, width - jlen(text))


def java_order(text: str) -> bytes:
    """Sort key of Java's String.compareTo (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def tp_str(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def parse_states(text: str) -> set[str]:
    """consumerGroupStatesFromString, 3.7 (exact, case-sensitive names)."""
    parsed = {s.strip() for s in java_split(text, ",")}  # "," gives no states: no filter
    if any(s not in VALID_STATES for s in parsed):
        raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(VALID_STATES)}")
    return parsed


def parse_topic_with_partitions(arg: str) -> list[TopicPartition]:
    parts = java_split(arg, ":")
    if len(parts) != 2:
        raise UsageError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, partitions = parts
    out = []
    for p in java_split(partitions, ","):
        if not (_JAVA_INTEGER.fullmatch(p) and -2**31 <= int(p) < 2**31):
            raise UsageError(f"Invalid partition '{p}' specified in topic arg '{arg}''")
        out.append((topic, int(p)))
    return out


# --------------------------------------------------------------------------- time parsing
_SDF_NUMBER = re.compile(r"-?[0-9]+")


def get_date_time(timestamp: str) -> int:
    """Kafka's Utils.getDateTime: `yyyy-MM-dd'T'HH:mm:ss.SSS` with an optional zone (UTC when
    none), parsed as a non-lenient SimpleDateFormat does (text after the pattern is ignored)."""
    if len(java_split(timestamp, "T")) < 2:
        raise CommandFailure("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format")
    second_part = java_split(timestamp, "T")[1]
    if not any(c in second_part for c in "+-Z"):
        timestamp += "Z"
    for zone_letters in (3, 1):  # "...SSSXXX", then "...SSSX"
        value = _parse_simple_date(timestamp, zone_letters)
        if value is not None:
            return value
    raise CommandFailure(f'Unparseable date: "{timestamp}"')


def _parse_simple_date(text: str, zone_letters: int) -> int | None:
    pos = 0

    def skip_blanks(i: int) -> int:  # SimpleDateFormat skips spaces and tabs before each field
        while i < len(text) and text[i] in " \t":
            i += 1
        return i

    fields = []
    for literal in ("-", "-", "T", ":", ":", ".", None):
        m = _SDF_NUMBER.match(text, skip_blanks(pos))
        if not m:
            return None
        fields.append(int(m.group()))
        pos = m.end()
        if literal is not None:
            if pos >= len(text) or text[pos] != literal:
                return None
            pos += 1
    year, month, day, hour, minute, second, millis = fields
    days = _epoch_day(year, month, day)
    if (days is None or not 0 <= hour <= 23 or not 0 <= minute <= 59 or not 0 <= second <= 59
            or not 0 <= millis <= 999):
        return None
    pos = skip_blanks(pos)
    if pos >= len(text):
        return None
    c = text[pos]
    if c == "Z":
        offset = 0
    elif c in "+-":
        m = re.compile(r"([0-9]{2}):([0-9]{2})" if zone_letters == 3 else r"([0-9]{2})").match(text, pos + 1)
        if not m:
            return None
        hours = int(m.group(1))
        minutes = int(m.group(2)) if zone_letters == 3 else 0
        if hours > 23 or minutes > 59:
            return None
        offset = (hours * 60 + minutes) * 60_000 * (1 if c == "+" else -1)
    else:
        return None
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis - offset


def _epoch_day(y: int, m: int, d: int) -> int | None:
    """Days since 1970-01-01 as java.util.GregorianCalendar counts them (Julian calendar before
    1582-10-15), or None for a date a non-lenient calendar rejects."""
    if y < 1 or not 1 <= m <= 12 or d < 1:
        return None
    julian = (y, m, d) < (1582, 10, 15)
    if julian and (y, m, d) > (1582, 10, 4):
        return None  # the ten days the Gregorian reform skipped
    leap = y % 4 == 0 if julian else (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0))
    if d > (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1]:
        return None
    a = (14 - m) // 12
    yy, mm = y + 4800 - a, m + 12 * a - 3
    jdn = d + (153 * mm + 2) // 5 + 365 * yy + yy // 4
    jdn += -32083 if julian else yy // 400 - yy // 100 - 32045
    return jdn - 2440588


_DURATION = re.compile(r"([-+]?)P(?:([-+]?[0-9]+)D)?"
                       r"(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
                       re.IGNORECASE)


def parse_duration_ns(text: str) -> int:
    """java.time.Duration.parse, as nanoseconds."""
    m = _DURATION.fullmatch(text)
    if m and m.group(3) != "T" and any(m.group(i) is not None for i in (2, 4, 5, 6)):
        total = 0
        for index, unit, scale in ((2, "days", 86400), (4, "hours", 3600), (5, "minutes", 60), (6, "seconds", 1)):
            if m.group(index) is not None:
                value = int(m.group(index)) * scale
                if not -2**63 <= value < 2**63:
                    raise CommandFailure(f"Text cannot be parsed to a Duration: {unit}")
                total += value
        nanos = int((m.group(7) or "").ljust(9, "0") or 0)
        if m.group(6) is not None and m.group(6).startswith("-"):
            nanos = -nanos
        total_ns = total * 1_000_000_000 + nanos
        if m.group(1) == "-":
            total_ns = -total_ns
        if not -2**63 <= total_ns // 1_000_000_000 < 2**63:
            raise CommandFailure("Text cannot be parsed to a Duration: overflow")
        return total_ns
    raise CommandFailure("Text cannot be parsed to a Duration")


_INSTANT_MIN_SECOND = -31557014167219200
_INSTANT_MAX_SECOND = 31556889864403199
_LONG_MIN, _LONG_MAX = -2**63, 2**63 - 1


def instant_minus_ms(now_ns: int, duration_ns: int) -> int:
    """`Instant.now().minus(duration).toEpochMilli()` with java.time's overflow failures."""
    seconds = duration_ns // 1_000_000_000
    if seconds == _LONG_MIN and duration_ns % 1_000_000_000 == 0:
        raise CommandFailure(f"Exceeds capacity of Duration: {-duration_ns}")  # Duration.negated()
    if not _LONG_MIN <= now_ns // 1_000_000_000 - seconds <= _LONG_MAX:
        raise CommandFailure("long overflow")
    total = now_ns - duration_ns
    if not _INSTANT_MIN_SECOND <= total // 1_000_000_000 <= _INSTANT_MAX_SECOND:
        raise CommandFailure("Instant exceeds minimum or maximum instant")
    millis = total // 1_000_000
    if not _LONG_MIN <= millis <= _LONG_MAX:
        raise CommandFailure("long overflow")
    return millis


# --------------------------------------------------------------------------- CSV (reset plans)
def _csv_field(value) -> str:
    """How jackson-dataformat-csv 2.16 (Kafka 3.7's) writes a String column with its default
    "loose" check: quoted when longer than 24 chars or holding a char below '-' (space, comma,
    quote, ...) or a backslash; quotes inside are doubled."""
    text = str(value)
    if jlen(text) > 24 or any(ord(c) < 0x2D or c == "\\" for c in text):
        return '"' + text.replace('"', '""') + '"'
    return text


def _long_field(text: str) -> int:
    if _JAVA_INTEGER.fullmatch(text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise ValueError(text)


def _int_field(text: str) -> int:
    value = _long_field(text)
    if not -2**31 <= value < 2**31:
        raise ValueError(text)
    return value


# --------------------------------------------------------------------------- the service
class ConsumerGroupService:
    def __init__(self, backend: GroupBackend, o: GroupOptions, console: Console):
        self.backend = backend
        self.o = o
        self.console = console
        self._reset_plan: dict[str, dict[TopicPartition, int]] | None = None

    # every admin call reads --timeout (jopt converts it then); the bundled engine does not wait
    def admin(self) -> GroupBackend:
        java_long(self.o.timeout, "timeout", 5000)
        return self.backend

    def run(self) -> None:
        o = self.o
        try:
            if o.list:
                self.list_groups()
            elif o.describe:
                self.describe_groups()
            elif o.delete:
                self.delete_groups()
            elif o.reset_offsets:
                result = self.reset_offsets()
                if o.export:
                    self.console.println(self.export_offsets_to_csv(result))
                else:
                    self.print_offsets_to_reset(result)
            elif o.delete_offsets:
                self.delete_offsets()
        except ApiError as exc:
            raise CommandFailure(exc.execution_message()) from None

    # ------------------------------------------------------------------ list
    def list_groups(self) -> None:
        if self.o.has("state"):
            value = single(self.o.state, "state")
            states = parse_states(value) if value else set()
            listings = [(g, s) for g, s in self.admin().list_groups() if not states or s in states]
            width = max([15] + [jlen(g) for g, _ in listings])
            self.console.println(f"{pad('GROUP', width)} STATE")
            for group, state in sorted(listings, key=lambda gs: java_order(gs[0])):
                self.console.println(f"{pad(group, width)} {state}")
        else:
            for group in self.list_group_ids():
                self.console.println(group)

    def list_group_ids(self) -> list[str]:
        return sorted((g for g, _ in self.admin().list_groups()), key=java_order)

    def _group_ids(self) -> list[str]:
        return self.list_group_ids() if self.o.all_groups else list(self.o.group)

    def _describe(self, group_ids: list[str]) -> list[GroupDescription]:
        described = self.admin().describe_groups(list(dict.fromkeys(group_ids)))
        return [described[g] for g in sorted(described, key=java_order)]

    # ------------------------------------------------------------------ describe
    def describe_groups(self) -> None:
        group_ids = self._group_ids()
        o = self.o
        if o.offsets or not (o.members or o.has("state")):
            self.print_offsets(group_ids)
        elif o.members:
            self.print_members(group_ids, o.verbose)
        else:
            self.print_states(group_ids)

    def _should_print_member_state(self, group: str, state: str, num_rows: int) -> bool:
        if state == "Dead":
            self.console.error(f"Consumer group '{group}' does not exist.")
        elif state == "Empty":
            self.console.info(f"\nConsumer group '{group}' has no active members.")
        elif state in ("PreparingRebalance", "CompletingRebalance"):
            self.console.info(f"\nWarning: Consumer group '{group}' is rebalancing.")
        elif state != "Stable":
            raise CommandFailure(f"Expected a valid consumer group state, but found '{state}'.")
        return state != "Dead" and num_rows > 0

    def _partition_rows(self, group: str, partitions: list[TopicPartition], committed: dict,
                        consumer_id: str, host: str, client_id: str) -> list[tuple]:
        ends = self.admin().log_end_offsets(partitions)
        rows = []
        for tp in partitions:
            offset = committed.get(tp)
            end = ends.get(tp)
            lag = end - offset if offset is not None and offset != -1 and end is not None else None
            rows.append((group, tp[0], tp[1], offset, end, lag, consumer_id, host, client_id))
        return rows

    def collect_group_offsets(self, desc: GroupDescription) -> list[tuple]:
        committed = self.admin().committed_offsets(desc.group_id)
        rows = []
        assigned = set()
        owners = sorted((m for m in desc.members if m.assignment),
                        key=lambda m: (-len(set(m.assignment)), java_order(m.member_id)))
        for member in owners:
            partitions = sorted(set(member.assignment))
            assigned.update(partitions)
            rows += self._partition_rows(desc.group_id, partitions, committed, member.member_id,
                                         member.host, member.client_id)
        unassigned = sorted(tp for tp in committed if tp not in assigned)
        if unassigned:
            rows += self._partition_rows(desc.group_id, unassigned, committed, MISSING, MISSING, MISSING)
        return rows

    def print_offsets(self, group_ids: list[str]) -> None:
        # Kafka collects every group's rows before it prints any
        collected = [(desc, self.collect_group_offsets(desc) if desc.state != "Dead" else [])
                     for desc in self._describe(group_ids)]
        for desc, rows in collected:
            if not self._should_print_member_state(desc.group_id, desc.state, len(rows)):
                continue
            cells = [[MISSING if v is None else str(v) for v in row] for row in rows]
            widths = [max([15] + [jlen(r[i]) for r in cells]) for i in (0, 1, 6, 7)]
            w = [widths[0], widths[1], 10, 15, 15, 15, widths[2], widths[3]]

            def line(values) -> str:
                return " ".join(pad(v, w[i]) for i, v in enumerate(values[:8])) + " " + str(values[8])

            self.console.println("\n" + line(("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET",
                                              "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")))
            for row in cells:
                self.console.println(line(row))

    def print_members(self, group_ids: list[str], verbose: bool) -> None:
        for desc in self._describe(group_ids):
            members = sorted(desc.members, key=lambda m: java_order(m.member_id))
            if not self._should_print_member_state(desc.group_id, desc.state, len(members)):
                continue
            instance_ids = [m.group_instance_id or "" for m in members]
            wide = any(instance_ids)
            wg = max([15] + [jlen(desc.group_id)])
            wc = max([15] + [jlen(m.member_id) for m in members])
            wi = max([17] + [jlen(i) for i in instance_ids])
            wh = max([15] + [jlen(m.host) for m in members])
            wl = max([15] + [jlen(m.client_id) for m in members])

            def line(group, consumer, instance, host, client, count) -> str:
                cols = [pad(group, wg), pad(consumer, wc)] + ([pad(instance, wi)] if wide else [])
                return " ".join(cols + [pad(host, wh), pad(client, wl), pad(count, 15)]) + " "

            header = line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
            self.console.println("\n" + header + ("ASSIGNMENT" if verbose else ""))
            for member, instance in zip(members, instance_ids):
                partitions = sorted(set(member.assignment))
                text = line(desc.group_id, member.member_id, instance, member.host, member.client_id,
                            len(partitions))
                if verbose:
                    by_topic: dict[str, list[int]] = {}
                    for topic, p in partitions:
                        by_topic.setdefault(topic, []).append(p)
                    text += ", ".join(sorted((t + "(" + ",".join(map(str, sorted(ps))) + ")"
                                              for t, ps in by_topic.items()), key=java_order)) or MISSING
                self.console.println(text)

    def print_states(self, group_ids: list[str]) -> None:
        for desc in self._describe(group_ids):
            if not self._should_print_member_state(desc.group_id, desc.state, 1):
                continue
            coordinator = str(desc.coordinator)
            width = max(25, jlen(coordinator))

            def line(*values) -> str:
                return "\n" + pad(values[0], width) + " " + pad(values[1], 25) + " " + pad(values[2], 20) + \
                    " " + pad(values[3], 15) + " " + str(values[4])

            self.console.out(line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"))
            self.console.out(line(desc.group_id, coordinator, desc.assignor, desc.state, len(desc.members)))
            self.console.println()

    # ------------------------------------------------------------------ delete
    def delete_groups(self) -> None:
        group_ids = list(dict.fromkeys(self._group_ids()))
        results = self.admin().delete_groups(group_ids)
        success = sorted((g for g, e in results.items() if e is None), key=java_order)
        failed = sorted(((g, e) for g, e in results.items() if e is not None), key=lambda ge: java_order(ge[0]))

        def quoted(groups) -> str:
            return "'" + "', '".join(groups) + "'"

        if not failed:
            self.console.println(f"Deletion of requested consumer groups ({quoted(success)}) was successful.")
            return
        self.console.error("Deletion of some consumer groups failed:")
        for group, error in failed:
            self.console.info(f"* Group '{group}' could not be deleted due to: {EXECUTION_EXCEPTION}: {error}")
        if success:
            self.console.println(f"\nThese consumer groups were deleted successfully: {quoted(success)}")

    # ------------------------------------------------------------------ delete offsets
    def delete_offsets(self) -> None:
        group = single(self.o.group, "group")
        topics = list(self.o.topic)
        with_partitions = [t for t in topics if ":" in t]
        without = list(dict.fromkeys(t for t in topics if ":" not in t))
        partitions: list[TopicPartition] = []
        for arg in with_partitions:
            partitions += parse_topic_with_partitions(arg)
        results: dict[TopicPartition, ApiError | None] = {}
        for topic in without:
            try:
                partitions += [(topic, p) for p in self.admin().topic_partitions(topic)]
            except ApiError as exc:
                results[(topic, -1)] = exc
        partitions = list(dict.fromkeys(partitions))
        top_error, partition_errors = self.admin().delete_offsets(group, partitions)
        for tp in partitions:
            results[tp] = top_error if top_error is not None else partition_errors.get(tp)
        if top_error is not None:
            code = top_error.code
        else:
            code = next((partition_errors[tp].code for tp in sorted(partitions)
                         if partition_errors.get(tp) is not None), "NONE")
        if code == "NONE":
            self.console.println(f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group}")
        elif code == "INVALID_GROUP_ID":
            self.console.error(f"'{group}' is not valid.")
        elif code == "GROUP_ID_NOT_FOUND":
            self.console.error(f"'{group}' does not exist.")
        elif code == "GROUP_AUTHORIZATION_FAILED":
            self.console.error(f"Access to '{group}' is not authorized.")
        elif code == "NON_EMPTY_GROUP":
            self.console.error(f"Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.")
        elif code in ("GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION"):
            self.console.error("Encounter some partition level error, see the follow-up details:")
        else:
            self.console.error(f"Encounter some unknown error: {code}")

        def line(a, b, c) -> str:
            return f"{pad(a, 30)} {pad(b, 15)} {pad(c, 15)}"

        self.console.println("\n" + line("TOPIC", "PARTITION", "STATUS"))
        for tp in sorted(results, key=lambda tp: (java_order(tp[0] + str(tp[1])), java_order(tp[0]), tp[1])):
            error = results[tp]
            if error is not None:
                self.console.failed = True  # a row reporting an error: pk exits 1
            self.console.println(line(tp[0], tp[1] if tp[1] >= 0 else "Not Provided",
                                      f"Error: {error.execution_message()}" if error is not None else "Successful"))

    # ------------------------------------------------------------------ reset offsets
    def reset_offsets(self) -> dict[str, dict[TopicPartition, int]]:
        result: dict[str, dict[TopicPartition, int]] = {}
        dry_run = self.o.dry_run or not self.o.execute
        for desc in self._describe(self._group_ids()):
            group = desc.group_id
            if desc.state in ("Empty", "Dead"):
                partitions = self._partitions_to_reset(group)
                prepared = self._prepare_offsets_to_reset(group, partitions)
                if not dry_run:
                    self.admin().alter_offsets(group, prepared)
                result[group] = prepared
            else:
                self.console.error(f"Assignments can only be reset if the group '{group}' is inactive, "
                                   f"but the current state is {desc.state}.")
                result[group] = {}
        return result

    def _partitions_to_reset(self, group: str) -> list[TopicPartition]:
        o = self.o
        if o.all_topics:
            return sorted(self.admin().committed_offsets(group))
        if o.topic:
            specified: list[TopicPartition] = []
            for arg in (t for t in o.topic if ":" in t):
                specified += parse_topic_with_partitions(arg)
            unspecified: list[TopicPartition] = []
            topics = list(dict.fromkeys(t for t in o.topic if ":" not in t))
            for topic in topics:
                unspecified += [(topic, p) for p in self.admin().topic_partitions(topic)]
            return list(dict.fromkeys(specified + unspecified))
        if o.from_file:
            return []
        raise UsageError("One of the reset scopes should be defined: --all-topics, --topic.")

    def _prepare_offsets_to_reset(self, group: str, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        o = self.o
        if o.to_offset:
            offset = java_long(o.to_offset, "to-offset")
            return self._check_offsets_range({tp: offset for tp in partitions})
        if o.to_earliest:
            return dict(self.admin().log_start_offsets(partitions))
        if o.to_latest:
            return dict(self.admin().log_end_offsets(partitions))
        if o.shift_by:
            committed = self.admin().committed_offsets(group)
            requested = {}
            for tp in partitions:
                shift = java_long(o.shift_by, "shift-by")
                if tp not in committed:
                    raise UsageError(f"Cannot shift offset for partition {tp_str(tp)} since there is no "
                                     "current committed offset")
                requested[tp] = committed[tp] + shift
            return self._check_offsets_range(requested)
        if o.to_datetime:
            timestamp = get_date_time(single(o.to_datetime, "to-datetime"))
            return self._timestamp_offsets(partitions, timestamp)
        if o.by_duration:
            duration_ns = parse_duration_ns(single(o.by_duration, "by-duration"))
            now_ns = time.time_ns() // 1000 * 1000  # Instant.now(): microseconds
            return self._timestamp_offsets(partitions, instant_minus_ms(now_ns, duration_ns))
        if o.from_file:
            plan = self._read_reset_plan().get(group)
            if plan is None:
                self.console.error(f"No reset plan for group {group} found")
                return {}
            return self._check_offsets_range(plan)
        if o.to_current:
            committed = self.admin().committed_offsets(group)
            prepared = {tp: committed[tp] for tp in partitions if tp in committed}
            missing = [tp for tp in partitions if tp not in committed]
            if missing:
                prepared.update(self.admin().log_end_offsets(missing))
            return prepared
        scenarios = ", ".join(_spec(s) for s in SCENARIO_HASH_ORDER)
        raise UsageError(f"Option '{_spec('reset-offsets')}' requires one of the following scenarios: "
                         f"HashSet({scenarios})")

    def _timestamp_offsets(self, partitions: list[TopicPartition], timestamp: int) -> dict[TopicPartition, int]:
        found = self.admin().offsets_for_timestamp(partitions, timestamp)
        prepared = {tp: off for tp, off in found.items() if off is not None}
        empty = sorted(tp for tp, off in found.items() if off is None)
        for topic, p in empty:
            self.console.println(f"\nWarn: Partition {p} from topic {topic} is empty. Falling back to latest known offset.")
        if empty:
            prepared.update(self.admin().log_end_offsets(empty))
        return prepared

    def _check_offsets_range(self, requested: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        partitions = sorted(requested)
        starts = self.admin().log_start_offsets(partitions)
        ends = self.admin().log_end_offsets(partitions)
        checked = {}
        for tp in partitions:
            offset = requested[tp]
            end, start = ends[tp], starts[tp]
            if offset > end:
                self.console.warn_log(f"New offset ({offset}) is higher than latest offset for topic partition "
                                      f"{tp_str(tp)}. Value will be set to {end}")
                offset = end
            elif offset < start:
                self.console.warn_log(f"New offset ({offset}) is lower than earliest offset for topic partition "
                                      f"{tp_str(tp)}. Value will be set to {start}")
                offset = start
            checked[tp] = offset
        return checked

    def _read_reset_plan(self) -> dict[str, dict[TopicPartition, int]]:
        if self._reset_plan is not None:
            return self._reset_plan
        path = single(self.o.from_file, "from-file")
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
        except FileNotFoundError:
            raise CommandFailure(path) from None  # java.nio.file.NoSuchFileException's message
        except OSError as exc:
            raise CommandFailure(f"{path}: {exc.strerror}") from None
        lines = java_split(text, "\n")

        def fields(line: str) -> list[str]:
            try:
                return next(csv.reader(io.StringIO(line)), [])
            except csv.Error:
                return []

        def record(line: str, with_group: bool):
            values = fields(line)
            try:
                if with_group and len(values) == 4:
                    return values[0], values[1], _int_field(values[2]), _long_field(values[3])
                if not with_group and len(values) == 3:
                    return None, values[0], _int_field(values[1]), _long_field(values[2])
            except ValueError:
                pass
            kind = "group,topic,partition,offset" if with_group else "topic,partition,offset"
            raise CommandFailure(f"Cannot parse reset plan line '{line}': expected {kind}")

        single_group = len(self.o.group) == 1
        old_format = False
        if lines:
            try:
                record(lines[0], with_group=False)
                old_format = True
            except CommandFailure:
                pass
        plan: dict[str, dict[TopicPartition, int]] = {}
        for line in lines or [""]:
            if single_group and old_format:
                _, topic, partition, offset = record(line, with_group=False)
                group = self.o.group[0]
            else:
                group, topic, partition, offset = record(line, with_group=True)
            plan.setdefault(group, {})[(topic, partition)] = offset
        self._reset_plan = plan
        return plan

    def export_offsets_to_csv(self, result: dict[str, dict[TopicPartition, int]]) -> str:
        single_group = len(self.o.group) == 1
        rows = []
        for group, offsets in result.items():
            for (topic, p), offset in sorted(offsets.items()):
                cells = ([] if single_group else [_csv_field(group)]) + [_csv_field(topic), str(p), str(offset)]
                rows.append(",".join(cells) + "\n")
        return "".join(rows)

    def print_offsets_to_reset(self, result: dict[str, dict[TopicPartition, int]]) -> None:
        def line(a, b, c, d) -> str:
            return f"{pad(a, 30)} {pad(b, 30)} {pad(c, 10)} {pad(d, 15)}"

        if result:
            self.console.println("\n" + line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"))
        for group, offsets in result.items():
            for (topic, p), offset in sorted(offsets.items()):
                self.console.println(line(group, topic, p, offset))


def run(backend: GroupBackend, o: GroupOptions, console: Console) -> None:
    """The actions after check_args passed."""
    ConsumerGroupService(backend, o, console).run()
