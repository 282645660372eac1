"""kafka-consumer-groups (ConsumerGroupCommand, Kafka 4.4's org.apache.kafka.tools.consumer.group
one; kafka.admin.ConsumerGroupCommand before 3.8): argument checks, and the six actions --list,
--describe, --delete, --reset-offsets, --delete-offsets and --validate-regex, written once
against `GroupBackend` (backends/engine_groups.py implements it on the bundled engine,
backends/kafka_admin.KafkaGroupsBackend on a cluster).

Texts, widths and check order are Kafka 4.4's, compared with the real tool by
tests/test_oracle_groups.py. How Kafka reports things, and what pk does with it:

* printUsageAndExit (stderr, help table, exit 1) → `UsageError`: the message alone.
* jopt-simple parse failures, which Kafka leaves uncaught → `JavaError`: the JVM's first line.
* printError (`\\nError: <msg>` on stdout, exit 0) → `Console.error`: `Error: <msg>` as one line
  on stderr; the command goes on as Kafka does, and the tool exits 1 at the end.
* an unexpected exception, which Kafka prints as `Error: Executing consumer group command failed
  due to <message>` → `CommandFailure`: that line on stderr, exit 1.
* lines Kafka itself prints on stderr (no active members, rebalancing, the reset WARN, the
  log4j WARN of an out-of-range offset) stay on stderr, byte for byte.

Row order follows Kafka 4.4: members in the coordinator's order (owners of more partitions
first in the offsets table), the rows of a reset in the iteration order of the Java HashMaps
Kafka fills (`hashmap_order`), groups of a describe sorted by id (a TreeMap).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from pk.engine.javacompat import hashmap_order, java_split

from .errors import CommandFailure, JavaError, UsageError

TopicPartition = tuple[str, int]

HELP_LINE = ("This tool helps to list all consumer groups, describe a consumer group, delete consumer "
             "group info, or reset consumer group offsets.")
MISSING = "-"
FAILED_PREFIX = "Executing consumer group command failed due to "
# pk's: the command's changes were written, but closing the data dir (flushing them) failed.
CLOSE_FAILED = "the command's changes were written but could not be flushed to the disk: "
LOGGER = "org.apache.kafka.tools.GroupOffsetsResetter"
EXECUTION_EXCEPTION = "java.util.concurrent.ExecutionException"
RESET_WARNING = (
    "WARN: No action will be performed as the --execute option is missing. In version 5.0, this command "
    "will require either --dry-run or --execute to be specified. You should add the --dry-run option "
    "explicitly if you are scripting this command and want to keep the current default behavior without "
    "prompting.")
# The consumer group states of Kafka 4.4's GroupState (classic and consumer groups), in the order
# its "Valid states are" message lists them; names match case-insensitively.
VALID_STATES = ("CompletingRebalance", "Dead", "PreparingRebalance", "Empty", "Assigning", "Reconciling",
                "Stable")
# GroupType: what --list --type accepts (case-insensitive), in the order its message lists them.
VALID_TYPES = ("Consumer", "Classic")
# The reset scenarios as 4.4's "requires one of the following scenarios" message lists them.
SCENARIO_LIST_ORDER = ("from_file", "to_datetime", "by_duration", "to_latest", "to_current", "to_earliest",
                       "to_offset", "shift_by")
# The reset scenarios in the order 3.7 checks them, and in the iteration order of the Scala
# immutable.HashSet `allResetOffsetScenarioOpts` (computed with scala-library 2.13 and
# jopt-simple 5.0.4's OptionSpec hash codes; removing an element keeps the others' order).
SCENARIO_CHECK_ORDER = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest",
                        "to_current", "shift_by", "from_file")
SCENARIO_HASH_ORDER = ("by_duration", "to_offset", "from_file", "to_datetime", "to_earliest",
                       "to_current", "shift_by", "to_latest")
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets", "validate_regex")


# --------------------------------------------------------------------------- errors
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
# Errors.message() of the group-level errors 4.4's --delete-offsets reports as `Error: <message>`
GROUP_ERROR_MESSAGES = {
    "INVALID_GROUP_ID": "The configured groupId is invalid.",
    "GROUP_ID_NOT_FOUND": "The group id does not exist.",
    "GROUP_AUTHORIZATION_FAILED": "Group authorization failed.",
    "NON_EMPTY_GROUP": "The group is not empty.",
}


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
        # 4.4: `${host}:${port}  (${idString})` (two spaces)
        where = f"{self.host}:{self.port}" if self.host is not None else MISSING
        return f"{where}  ({self.node_id})"


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
    type: list[str] | None = None  # likewise (--list --type)
    validate_regex: list[str] = field(default_factory=list)
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
        if name in ("state", "type"):
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
                                         ("state", o.describe or o.list), ("type", o.list),
                                         ("verbose", o.describe))
                   if o.has(name) and not ok]
    if unavailable:
        raise JavaError("joptsimple.UnavailableOptionException",
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
                         "--reset-offsets, --delete-offsets, --validate-regex")


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


def assignment_string(partitions: list[TopicPartition]) -> str:
    """4.4's members --verbose assignment: `topic:0,1,2;other:0` (topics sorted), or `-`."""
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    text = ";".join(sorted((t + ":" + ",".join(map(str, sorted(ps))) for t, ps in by_topic.items()),
                           key=java_order))
    return text or MISSING


def tp_str(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def parse_states(text: str) -> set[str]:
    """groupStatesFromString, 4.4: case-insensitive names ("," gives no states: no filter)."""
    by_lower = {s.lower(): s for s in VALID_STATES}
    # "" is no states here (Java's split would give [""]), as pk has always read it
    parsed = {by_lower.get(s.strip().lower()) for s in (java_split(text, ",") if text else [])}
    if None in parsed:
        raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(VALID_STATES)}")
    return parsed


def parse_types(text: str) -> set[str]:
    """consumerGroupTypesFromString, 4.4: case-insensitive names."""
    by_lower = {t.lower(): t for t in VALID_TYPES}
    # "" is no types here (Java's split would give [""]), as pk has always read it
    parsed = {by_lower.get(t.strip()) for t in (java_split(text.lower(), ",") if text else [])}
    if None in parsed:
        raise UsageError(f"Invalid types list '{text}'. Valid types are: {', '.join(VALID_TYPES)}")
    return parsed


def validate_regex(regex: str) -> str:
    """--validate-regex: the line 4.4 prints for an RE2 expression (re2j's syntax and messages)."""
    error = re2_syntax_error(regex)
    if error is None:
        return f"The regular expression `{regex}` is valid."
    return f"The regular expression `{regex}` is invalid: {error}."


_RE2_ASCII_CLASSES = {"alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
                      "space", "upper", "word", "xdigit"}
# \p{...} names: "Any", the Unicode general categories and the scripts (Unicode 15).
_RE2_UNICODE = {"Any", "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
                "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z",
                "Zl", "Zp", "Zs"} | set((
                    "Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali "
                    "Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian "
                    "Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret "
                    "Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Georgian "
                    "Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Han Hangul Hanifi_Rohingya "
                    "Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi "
                    "Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi "
                    "Khitan_Small_Script Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian "
                    "Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin "
                    "Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani "
                    "Myanmar Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham "
                    "Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian "
                    "Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau "
                    "Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham "
                    "SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa "
                    "Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta "
                    "Toto Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square").split())


class _Re2Error(Exception):
    pass


def re2_syntax_error(regex: str) -> str | None:
    """What re2j (Go's regexp/syntax rules) says about `regex`, or None when it compiles."""
    try:
        _Re2Checker(regex).parse()
    except _Re2Error as exc:
        return str(exc)
    return None


class _Re2Checker:
    REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")
    NAME = re.compile(r"\w+", re.ASCII)

    def __init__(self, text: str):
        self.t = text
        self.i = 0
        self.names: set[str] = set()

    def parse(self) -> None:
        t = self.t
        depth = 0
        can_repeat = False  # something to repeat just before (not at a start, not after | or ()
        after_repeat = False
        while self.i < len(t):
            c = t[self.i]
            if c == "(":
                if self._group():
                    depth += 1
                can_repeat = after_repeat = False
                continue
            if c == ")":
                if depth == 0:
                    raise _Re2Error("regexp/syntax: internal error")  # re2j's word for an unmatched )
                depth -= 1
                self.i += 1
                can_repeat, after_repeat = True, False
                continue
            if c == "|":
                self.i += 1
                can_repeat = after_repeat = False
                continue
            if c in "*+?" or (c == "{" and self.REPEAT.match(t, self.i)):
                if c == "{":
                    m = self.REPEAT.match(t, self.i)
                    low = int(m.group(1))
                    high = low if m.group(2) is None else (int(m.group(3)) if m.group(3) else -1)
                    if low > 1000 or high > 1000 or (high >= 0 and high < low):
                        raise _Re2Error("invalid repeat count")
                    end = m.end()
                else:
                    end = self.i + 1
                if after_repeat:
                    raise _Re2Error("invalid nested repetition operator")
                if not can_repeat:
                    raise _Re2Error("missing argument to repetition operator")
                self.i = end
                if self.i < len(t) and t[self.i] == "?":
                    self.i += 1  # non-greedy
                after_repeat = True
                continue
            if c == "[":
                self._class()
            elif c == "\\":
                self._escape(in_class=False)
            else:
                self.i += 1
            can_repeat, after_repeat = True, False
        if depth:
            raise _Re2Error("missing closing )")

    def _group(self) -> bool:
        """Consumes `(`, `(?P<name>`, `(?flags:` (True: a group opens) or `(?flags)` (False)."""
        t, i = self.t, self.i
        if not t.startswith("(?", i):
            self.i += 1
            return True
        if t.startswith("(?P<", i) or t.startswith("(?<", i):
            start = i + (4 if t.startswith("(?P<", i) else 3)
            end = t.find(">", start)
            if end < 0:
                raise _Re2Error("invalid named capture")
            name = t[start:end]
            if not self.NAME.fullmatch(name):
                raise _Re2Error("invalid named capture")
            if name in self.names:
                raise _Re2Error("duplicate capture group name")
            self.names.add(name)
            self.i = end + 1
            return True
        j = i + 2
        negated = seen = False
        while j < len(t):
            c = t[j]
            if c in "imsU":
                seen = True
            elif c == "-" and not negated:
                negated, seen = True, False
            elif c in ":)":
                if negated and not seen or (c == ")" and j == i + 2):
                    break
                self.i = j + 1
                return c == ":"
            else:
                break
            j += 1
        raise _Re2Error("invalid or unsupported Perl syntax")

    def _class(self) -> None:
        t = self.t
        self.i += 1
        if self.i < len(t) and t[self.i] == "^":
            self.i += 1
        first = True
        while True:
            if self.i >= len(t):
                raise _Re2Error("missing closing ]")
            c = t[self.i]
            if c == "]" and not first:
                self.i += 1
                return
            first = False
            if t.startswith("[:", self.i):
                end = t.find(":]", self.i + 2)
                if end >= 0:
                    name = t[self.i + 2:end]
                    if name.lstrip("^") not in _RE2_ASCII_CLASSES:
                        raise _Re2Error("invalid character class range")
                    self.i = end + 2
                    continue
            low = self._class_char()
            if low is None:
                continue  # a class escape such as \d
            if t.startswith("-", self.i) and self.i + 1 < len(t) and t[self.i + 1] != "]":
                self.i += 1
                high = self._class_char(range_end=True)
                if high < low:
                    raise _Re2Error("invalid character class range")

    def _class_char(self, range_end: bool = False):
        t = self.t
        if t[self.i] != "\\":
            value = ord(t[self.i])
            self.i += 1
            return value
        value = self._escape(in_class=True, range_end=range_end)
        return value

    def _escape(self, in_class: bool, range_end: bool = False):
        """Consumes an escape; returns the code point of a literal, or None for a class/anchor."""
        t = self.t
        i = self.i + 1
        if i >= len(t):
            raise _Re2Error("trailing backslash at end of expression")
        c = t[i]
        self.i = i + 1
        if c in "dDsSwW" or c in "pP":
            if range_end:
                raise _Re2Error("invalid escape sequence")
            if c in "pP":
                if i + 1 >= len(t):
                    raise _Re2Error("invalid character class range")
                if t[i + 1] == "{":
                    end = t.find("}", i + 2)
                    if end < 0:
                        raise _Re2Error("invalid character class range")
                    name = t[i + 2:end]
                    self.i = end + 1
                else:
                    name = t[i + 1]
                    self.i = i + 2
                if name.lstrip("^") not in _RE2_UNICODE:
                    raise _Re2Error("invalid character class range")
            return None
        if not in_class and c in "AzbB":
            return None
        if not in_class and c == "Q":
            end = t.find("\\E", self.i)
            self.i = len(t) if end < 0 else end + 2
            return None
        if c in "01234567":
            digits = re.match(r"[0-7]{0,2}", t[self.i:]).group()
            if c != "0" and not digits:
                raise _Re2Error("invalid escape sequence")  # \1..\9: a backreference
            self.i += len(digits)
            return int(c + digits, 8)
        if c == "x":
            m = re.compile(r"\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2})").match(t, self.i)
            if not m or (m.group(1) and int(m.group(1), 16) > 0x10FFFF):
                raise _Re2Error("invalid escape sequence")
            self.i = m.end()
            return int(m.group(1) or m.group(2), 16)
        simple = {"a": 7, "f": 12, "t": 9, "n": 10, "r": 13, "v": 11}
        if c in simple:
            return simple[c]
        if ord(c) < 0x80 and not c.isalnum():
            return ord(c)  # escaped punctuation
        raise _Re2Error("invalid escape sequence")


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
        # (imported here: the resetter module uses this one's parsers)
        from .group_offsets_resetter import GroupOffsetsResetter

        self.resetter = GroupOffsetsResetter(self.admin, o, console)

    # every admin call reads --timeout (jopt converts it then); the bundled engine does not wait
    def admin(self) -> GroupBackend:
        java_long(self.o.timeout, "timeout", 5000)
        return self.backend

    def run(self) -> None:
        o = self.o
        try:
            if o.validate_regex:
                self.console.println(validate_regex(single(o.validate_regex, "validate-regex", usage=True)))
            elif o.list:
                self.list_groups()
            elif o.describe:
                self.describe_groups()
            elif o.delete:
                self.delete_groups()
            elif o.reset_offsets:
                try:
                    result = self.reset_offsets()
                except ApiError as exc:  # 4.4's resetter throws the cause itself: its message alone
                    raise CommandFailure(exc.message) from None
                if o.export:
                    self.console.println(self.resetter.export_offsets_to_csv(result))
                else:
                    self.print_offsets_to_reset(result)
            elif o.delete_offsets:
                self.delete_offsets()
        except ApiError as exc:
            raise CommandFailure(exc.execution_message()) from None

    # ------------------------------------------------------------------ list
    def list_groups(self) -> None:
        with_type, with_state = self.o.has("type"), self.o.has("state")
        if with_type or with_state:
            listings = self.group_listings()
            width = max([15] + [jlen(g) for g, _, _ in listings]) + 10

            def line(group, group_type, state) -> str:
                cells = [pad(group, width)] + ([pad(group_type, 20)] if with_type else []) + \
                    ([pad(state, 20)] if with_state else [])
                return " ".join(cells)

            self.console.println(line("GROUP", "TYPE", "STATE"))
            for group, group_type, state in listings:
                self.console.println(line(group, group_type, state))
        else:
            for group in self.list_group_ids():
                self.console.println(group)

    def group_listings(self) -> list[tuple[str, str, str]]:
        """(group, type, state) of the groups the values of --type and --state select (all
        without them), sorted by id."""
        type_value = single(self.o.type, "type") if self.o.has("type") else None
        types = parse_types(type_value) if type_value else set()
        value = single(self.o.state, "state") if self.o.has("state") else None
        states = parse_states(value) if value else set()
        backend = self.admin()
        listed = backend.list_groups()
        group_types = getattr(backend, "group_types", None) or {}
        listings = [(g, group_types.get(g, "Classic"), s) for g, s in listed]
        listings = [(g, t, s) for g, t, s in listings
                    if (not states or s in states) and (not types or t in types)]
        return sorted(listings, key=lambda gts: java_order(gts[0]))

    def list_group_ids(self) -> list[str]:
        return sorted((g for g, _ in self.admin().list_groups()), key=java_order)

    def _group_ids(self) -> list[str]:
        return self.list_group_ids() if self.o.all_groups else list(self.o.group)

    def _describe(self, group_ids: list[str], missing_fails: bool = True) -> list[GroupDescription]:
        """The groups' descriptions, sorted by id. 4.4's describe actions fail as a whole on a group
        that does not exist (the first one in its HashMap's order)."""
        ids = list(dict.fromkeys(group_ids))
        described = self.admin().describe_groups(ids)
        if missing_fails:
            for group in hashmap_order(ids):
                if group in described and described[group].state == "Dead":
                    raise CommandFailure(f"{_ERRORS}GroupIdNotFoundException: Group {group} not found.")
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
        # the members with partitions, most partitions first, else in the coordinator's order
        owners = sorted((m for m in desc.members if m.assignment), key=lambda m: -len(set(m.assignment)))
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
            verbose = self.o.verbose
            epochs = getattr(self.backend, "leader_epochs", None) or {}

            def line(values, epoch="LEADER-EPOCH") -> str:
                cols = [pad(v, w[i]) for i, v in enumerate(values[:8])]
                if verbose:  # 4.4: the leader epoch of the committed offset after PARTITION
                    cols.insert(3, pad(epoch, 15))
                return " ".join(cols) + " " + str(values[8])

            self.console.println("\n" + line(("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET",
                                              "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")))
            for row, raw in zip(cells, rows):
                epoch = epochs.get((raw[0], raw[1], raw[2])) if raw[3] is not None else None
                self.console.println(line(row, MISSING if epoch is None else str(epoch)))

    def print_members(self, group_ids: list[str], verbose: bool) -> None:
        for desc in self._describe(group_ids):
            members = list(desc.members)  # in the coordinator's order, as Kafka prints them
            shown = self._should_print_member_state(desc.group_id, desc.state, len(members))
            if desc.state == "Dead":
                continue
            if not shown:
                members = []  # 4.4 still prints the header of a group without members
            instance_ids = [m.group_instance_id or "" for m in members]
            wide = any(instance_ids)
            wg = max([15] + [jlen(desc.group_id) for _ in members])
            wc = max([15] + [jlen(m.member_id) for m in members])
            wi = max([17] + [jlen(i) for i in instance_ids])
            wh = max([15] + [jlen(m.host) for m in members])
            wl = max([15] + [jlen(m.client_id) for m in members])
            assignments = [assignment_string(sorted(set(m.assignment))) for m in members]
            wa = max([20] + [jlen(a) for a in assignments])
            wt = 20  # target assignments: consumer-protocol groups only

            def line(group, consumer, instance, host, client, count) -> str:
                cols = [pad(group, wg), pad(consumer, wc)] + ([pad(instance, wi)] if wide else [])
                return " ".join(cols + [pad(host, wh), pad(client, wl), pad(count, 15)]) + " "

            def extra(current_epoch, current, target_epoch, target) -> str:
                return f"{pad(current_epoch, 15)} {pad(current, wa)} {pad(target_epoch, 15)} {pad(target, wt)}"

            header = line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
            if verbose:
                header += extra("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")
            self.console.println("\n" + header)
            for member, instance, assignment in zip(members, instance_ids, assignments):
                text = line(desc.group_id, member.member_id, instance, member.host, member.client_id,
                            len(set(member.assignment)))
                if verbose:
                    text += extra(MISSING, assignment, MISSING, MISSING)
                self.console.println(text)

    def print_states(self, group_ids: list[str]) -> None:
        verbose = self.o.verbose
        for desc in self._describe(group_ids):
            if not self._should_print_member_state(desc.group_id, desc.state, 1):
                continue
            coordinator = str(desc.coordinator)
            wg = max(15, jlen(desc.group_id))
            wc = max(25, jlen(coordinator))

            def line(group, coord, strategy, state, *rest) -> str:
                cols = [pad(group, wg), pad(coord, wc), pad(strategy, 20), pad(state, 20)]
                if verbose:  # GROUP-EPOCH, TARGET-ASSIGNMENT-EPOCH: consumer-protocol groups only
                    cols += [pad(rest[0], 15), pad(rest[1], 25)]
                return "\n" + " ".join(cols) + " " + str(rest[-1])

            self.console.out(line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE",
                                  "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"))
            self.console.out(line(desc.group_id, coordinator, desc.assignor or MISSING, desc.state,
                                  MISSING, MISSING, len(desc.members)))
            self.console.println()

    # ------------------------------------------------------------------ delete
    def delete_groups(self) -> None:
        success, failed = self.deleted_groups()

        def quoted(groups) -> str:
            return ", ".join(f"'{g}'" for g in groups)  # nothing at all for no groups

        if not failed:
            self.console.println(f"Deletion of requested consumer groups ({quoted(success)}) was successful.")
            return
        self.console.error("Deletion of some consumer groups failed:")
        for group, error in failed:
            self.console.println(f"* Group '{group}' could not be deleted due to: {error}")
        if success:
            self.console.println(f"\nThese consumer groups were deleted successfully: {quoted(success)}")

    def deleted_groups(self) -> tuple[list[str], list[tuple[str, ApiError]]]:
        """Deletes the groups: (the ids deleted, (id, error) of the others), in Kafka's order."""
        group_ids = list(dict.fromkeys(self._group_ids()))
        results = self.admin().delete_groups(group_ids)
        success = [g for g in hashmap_order(results) if results[g] is None]
        failed = [(g, results[g]) for g in hashmap_order(results) if results[g] is not None]
        return success, failed

    # ------------------------------------------------------------------ delete offsets
    def delete_offsets(self) -> None:
        group, code, rows = self.deleted_offsets()
        problem = delete_offsets_problem(code)
        if problem is None:
            self.console.println(f"Request succeeded for deleting offsets from group {group}.")
        else:
            self.console.error(problem)
        width = max([15] + [jlen(tp[0]) for tp, _ in rows])

        def line(a, b, c) -> str:
            return f"{pad(a, width)} {pad(b, 10)} {pad(c, 15)}"

        self.console.println("\n" + line("TOPIC", "PARTITION", "STATUS"))
        for tp, error in rows:
            self.console.println(line(tp[0], tp[1] if tp[1] >= 0 else MISSING, delete_offsets_status(error)))

    def deleted_offsets(self) -> tuple[str, str, list[tuple[TopicPartition, ApiError | None]]]:
        """Deletes the offsets: (group, the error code that decides the summary line, each
        partition's error or None in the table's order; partition -1 for a topic that was not
        found). A partition's error makes pk exit 1."""
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
        order = sorted(results, key=lambda tp: (java_order(tp[0] + str(tp[1])), java_order(tp[0]), tp[1]))
        if any(results[tp] is not None for tp in order):
            self.console.failed = True  # a row reporting an error: pk exits 1
        return group, code, [(tp, results[tp]) for tp in order]

    # ------------------------------------------------------------------ reset offsets
    def reset_offsets(self) -> dict[str, dict[TopicPartition, int]]:
        # 4.4 reads the reset options first: --to-offset, --to-datetime and --from-file as lists
        # (the first value counts), --by-duration, --shift-by and --timeout as single values.
        o = self.o
        for value in o.to_offset:
            java_long([value], "to-offset")
        single(o.by_duration, "by-duration")
        java_long(o.shift_by, "shift-by")
        result: dict[str, dict[TopicPartition, int]] = {}
        dry_run = self.o.dry_run or not self.o.execute
        for desc in self._describe(self._group_ids(), missing_fails=False):
            group = desc.group_id
            if desc.state in ("Empty", "Dead"):
                partitions = self._partitions_to_reset(group)
                prepared = self.resetter.prepare_offsets_to_reset(group, partitions)
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
            return self.resetter.parse_topic_partitions_to_reset(o.topic)
        if o.from_file:
            return []
        raise UsageError("One of the reset scopes should be defined: --all-topics, --topic.")

    def print_offsets_to_reset(self, result: dict[str, dict[TopicPartition, int]]) -> None:
        wg = max([15] + [jlen(g) for g in result])
        wt = max([15] + [jlen(tp[0]) for offsets in result.values() for tp in offsets])

        def line(a, b, c, d) -> str:
            return f"\n{pad(a, wg)} {pad(b, wt)} {pad(c, 10)} {d}"

        text = line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") if result else ""
        for group in hashmap_order(result):
            offsets = result[group]
            for topic, p in hashmap_order(sorted(offsets)):
                text += line(group, topic, p, offsets[(topic, p)])
        self.console.println(text)


def delete_offsets_problem(code: str) -> str | None:
    """The error line of an OffsetDelete answer's deciding code; None when it succeeded."""
    if code == "NONE":
        return None
    if code in GROUP_ERROR_MESSAGES:
        return GROUP_ERROR_MESSAGES[code]
    if code in ("GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION"):
        return "Encountered some partition-level error, see the follow-up details."
    return f"Encountered some unknown error: {code}"


def delete_offsets_status(error: ApiError | None) -> str:
    """The STATUS cell of a partition of --delete-offsets."""
    return f"Error: {error.execution_message()}" if error is not None else "Successful"


def run(backend: GroupBackend, o: GroupOptions, console: Console) -> None:
    """The actions after check_args passed."""
    ConsumerGroupService(backend, o, console).run()
