"""StreamsResetter (kafka-streams-application-reset, org.apache.kafka.tools.StreamsResetter,
Kafka 4.4): resets a Kafka Streams application's consumer group (group id = application id)
on its input topics (to the earliest offset by default, or --to-offset/--to-latest/--shift-by/
--to-datetime/--by-duration/--from-file), moves it to the end of the (deprecated) intermediate
topics, and deletes the application's internal topics (<application-id>-...-changelog,
-repartition, foreign-key join topics). --dry-run prints the same plan without changing
anything. Partitions are listed in the order Kafka's HashSets iterate them."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from .java_hash import hash_order, string_hash, topic_partition_hash

SCENARIOS = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest", "from_file", "shift_by")
_INTERNAL = re.compile(r".+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic", re.S)


class UsageError(Exception):
    """printUsageAndExit's message."""


class ResetFailed(Exception):
    """An IOException or ParseException while resetting: Kafka prints `ERROR: Resetting offsets
    failed.` before the exception itself; that first line is pk's one line."""

    def __init__(self):
        super().__init__("Resetting offsets failed.")


class Failure(Exception):
    """What escapes Kafka's execute(): printed as `ERROR: <java class>: <message>`, exit 1."""

    def __init__(self, java_class: str, message: str):
        super().__init__(f"{java_class}: {message}")


@dataclass
class Options:
    application_id: str
    bootstrap_server: str = "localhost:9092"
    input_topics: list[str] = field(default_factory=list)
    intermediate_topics: list[str] = field(default_factory=list)
    internal_topics: list[str] = field(default_factory=list)
    to_offset: str | None = None  # Longs, converted where Kafka's tool reads them (after connecting)
    to_datetime: str | None = None
    by_duration: str | None = None
    to_earliest: bool = False
    to_latest: bool = False
    from_file: str | None = None
    shift_by: str | None = None
    config_file: str | None = None
    dry_run: bool = False
    force: bool = False

    def given(self, name: str) -> bool:
        value = getattr(self, name)
        return value is not None and value is not False

    def is_inferred_internal(self, topic: str) -> bool:
        return (topic not in self.input_topics and topic not in self.intermediate_topics
                and topic.startswith(self.application_id + "-") and matches_internal_format(topic))


def matches_internal_format(topic: str) -> bool:
    return (topic.endswith(("-changelog", "-repartition", "-subscription-registration-topic",
                            "-subscription-response-topic")) or _INTERNAL.fullmatch(topic) is not None)


def java_long(text: str, option: str) -> int:
    """OptionSet.valueOf of a Long option, read late as Kafka's tool reads it."""
    if re.fullmatch(r"[+-]?\d+", text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise Failure("joptsimple.OptionArgumentConversionException", f"Cannot parse argument '{text}' of option {option}")


def check_args(o: Options) -> None:
    """checkInvalidArgs for each reset scenario against the others, in Kafka's order."""
    for used in SCENARIOS:
        if o.given(used):
            for other in SCENARIOS:
                if other != used and o.given(other):
                    raise UsageError(f'Option "[{used.replace("_", "-")}]" can\'t be used with option '
                                     f'"[{other.replace("_", "-")}]"')


class Cluster(Protocol):
    """The admin and consumer calls the tool makes (commands/backends/kafka_streams_reset.py)."""

    def active_members(self, group: str) -> list[str]: ...

    def remove_members(self, group: str) -> None: ...

    def topics(self) -> list[str]: ...

    def partitions(self, topic: str) -> list[int]: ...

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]: ...

    def committed(self, group: str, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int | None]: ...

    def offsets_for_time(self, tps: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int | None]: ...

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None: ...

    def delete_topics(self, topics: list[str]) -> None: ...


def _tp_order(tps) -> list[tuple[str, int]]:
    return hash_order(tps, lambda tp: topic_partition_hash(*tp))


def parse_reset_plan(text: str) -> dict[tuple[str, int], int]:
    if not text:
        raise Failure("java.text.ParseException", "Error parsing reset plan CSV file. It is empty,")
    plan = {}
    for line in text.split("\n"):
        parts = line.split(",")
        if len(parts) != 3:
            raise Failure("java.text.ParseException",
                          "Reset plan CSV file is not following the format `TOPIC,PARTITION,OFFSET`.")
        try:
            plan[(parts[0], int(parts[1]))] = int(parts[2])
        except ValueError as exc:
            bad = parts[1] if not re.fullmatch(r"[+-]?\d+", parts[1]) else parts[2]
            raise Failure("java.lang.NumberFormatException", f'For input string: "{bad}"') from exc
    return plan


class Resetter:
    def __init__(self, o: Options, cluster: Cluster, out: Callable[[str], None], now_ns: Callable[[], int]):
        self.o = o
        self.cluster = cluster
        self.out = out
        self.now_ns = now_ns
        self.all_topics: list[str] = []

    def run(self) -> int:
        o = self.o
        members = self.cluster.active_members(o.application_id)
        if members and o.force:  # (even with --dry-run, as Kafka's tool does)
            self.out(f"Force deleting all active members in the group: {o.application_id}")
            self.cluster.remove_members(o.application_id)
        elif members:
            raise Failure("java.lang.IllegalStateException",
                          f"Consumer group '{o.application_id}' is still active and has following members: "
                          f"[{', '.join(members)}]. Make sure to stop all running application instances before "
                          "running the reset tool. You can use option '--force' to remove active members from the "
                          "group.")
        self.all_topics = hash_order(self.cluster.topics(), string_hash)  # Admin's names(): a HashSet
        if o.dry_run:
            self.out("----Dry run displays the actions which will be performed when running Streams Reset Tool----")
        code = self.reset_offsets()
        return code | self.delete_internal_topics()

    def _check_range(self, wanted: dict, begin: dict, end: dict) -> dict:
        """checkOffsetRange: offsets outside [earliest, latest] clamp, with Kafka's notice."""
        valid = {}
        for tp in hash_order(wanted, lambda tp: topic_partition_hash(*tp), max(len(wanted), 1)):
            offset = wanted[tp]
            if offset < end[tp]:
                if offset > begin[tp]:
                    valid[tp] = offset
                else:
                    self.out(f"New offset ({offset}) is lower than earliest offset. Value will be set to {begin[tp]}")
                    valid[tp] = begin[tp]
            else:
                self.out(f"New offset ({offset}) is higher than latest offset. Value will be set to {end[tp]}")
                valid[tp] = end[tp]
        return valid

    def _positions(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        o = self.o
        marks = {tp: self.cluster.watermarks(*tp) for tp in tps}
        begin = {tp: m[0] for tp, m in marks.items()}
        end = {tp: m[1] for tp, m in marks.items()}
        if o.to_offset is not None:
            offset = java_long(o.to_offset, "to-offset")
            return self._check_range({tp: offset for tp in tps}, begin, end)
        if o.to_latest:
            return end
        if o.shift_by is not None:
            committed = self.cluster.committed(o.application_id, tps)
            current = {tp: end[tp] if committed.get(tp) is None else committed[tp] for tp in tps}  # reset: latest
            shift = java_long(o.shift_by, "shift-by")
            return self._check_range({tp: current[tp] + shift for tp in tps}, begin, end)
        if o.to_datetime is not None or o.by_duration is not None:
            from .consumer_groups import get_date_time, instant_minus_ms, parse_duration_ns

            from .errors import CommandFailure

            try:
                timestamp = (get_date_time(o.to_datetime) if o.to_datetime is not None
                             else instant_minus_ms(self.now_ns(), parse_duration_ns(o.by_duration)))
            except CommandFailure as exc:
                java = "java.text.ParseException" if o.to_datetime is not None else \
                    "java.time.format.DateTimeParseException"
                raise Failure(java, str(exc)) from None
            found = self.cluster.offsets_for_time(tps, timestamp)
            positions = {}
            for tp in tps:
                if found.get(tp) is not None and found[tp] >= 0:
                    positions[tp] = found[tp]
                else:
                    positions[tp] = end[tp]
                    self.out(f"Partition {tp[1]} from topic {tp[0]} is empty, without a committed record. "
                             "Falling back to latest known offset.")
            return positions
        if o.from_file is not None:
            with open(o.from_file, encoding="utf-8") as f:
                plan = parse_reset_plan(f.read())
            if any(tp not in plan for tp in tps):  # Kafka's Long unboxing of a missing entry
                raise Failure("java.lang.NullPointerException", 'Cannot invoke "java.lang.Long.longValue()" because '
                              'the return value of "java.util.Map.get(Object)" is null')
            return self._check_range({tp: plan[tp] for tp in tps}, begin, end)
        return begin  # --to-earliest, and the default

    def reset_offsets(self) -> int:
        o = self.o
        if o.intermediate_topics:
            self.out("WARN: `--intermediate-topics` is deprecated and will be removed in a future release")
        if not o.input_topics and not o.intermediate_topics:
            self.out("No input or intermediate topics specified. Skipping seek.")
            return 0
        if o.input_topics:
            self.out(f"Reset-offsets for input topics [{', '.join(o.input_topics)}]")
        if o.intermediate_topics:
            self.out(f"Seek-to-end for intermediate topics [{', '.join(o.intermediate_topics)}]")
        code = 0
        missing_in = [t for t in o.input_topics if t not in self.all_topics]
        missing_mid = [t for t in o.intermediate_topics if t not in self.all_topics]
        if missing_in:
            self.out("Following input topics are not found, skipping them")
            for t in missing_in:
                self.out(f"Topic: {t}")
            code = 1
        if missing_mid:
            self.out("Following intermediate topics are not found, skipping them")
            for t in missing_mid:
                self.out(f"Topic:{t}")
            code = 1
        subscribe = hash_order([t for t in o.input_topics + o.intermediate_topics if t in self.all_topics],
                               string_hash, len(o.input_topics) + len(o.intermediate_topics))
        if not subscribe:
            return code
        partitions = [(t, p) for t in subscribe for p in self.cluster.partitions(t)]
        inputs = _tp_order(tp for tp in partitions if tp[0] in o.input_topics)
        intermediates = _tp_order(tp for tp in partitions if tp[0] not in o.input_topics)
        positions: dict[tuple[str, int], int] = {}
        if inputs:
            self.out(f"Following input topics offsets will be reset to (for consumer group {o.application_id})")
            try:
                positions.update(self._positions(inputs))
            except OSError:  # --from-file unreadable
                raise ResetFailed() from None
            except Failure as exc:
                if str(exc).startswith("java.text.ParseException"):
                    raise ResetFailed() from None
                raise
            for tp in inputs:
                self.out(f"Topic: {tp[0]} Partition: {tp[1]} Offset: {positions[tp]}")
        if intermediates:
            self.out("Following intermediate topics offsets will be reset to end (for consumer group "
                     f"{o.application_id})")
            for tp in intermediates:
                self.out(f"Topic: {tp[0]}")
                positions[tp] = self.cluster.watermarks(*tp)[1]
        if not o.dry_run:
            self.cluster.commit(o.application_id, {tp: positions[tp] for tp in partitions if tp in positions})
        self.out("Done.")
        return code

    def delete_internal_topics(self) -> int:
        o = self.o
        inferred = [t for t in self.all_topics if o.is_inferred_internal(t)]
        if o.internal_topics:
            if not all(t in inferred for t in o.internal_topics):
                raise Failure("java.lang.IllegalArgumentException",
                              "Invalid topic specified in the --internal-topics option. Ensure that the topics "
                              "specified are all internal topics. Do a dry run without the --internal-topics option "
                              "to see the list of all internal topics that can be deleted.")
            topics = o.internal_topics
            self.out(f"Deleting specified internal topics [{', '.join(topics)}]")
        else:
            topics = inferred
            self.out(f"Deleting inferred internal topics [{', '.join(topics)}]")
        if not o.dry_run and topics:
            self.cluster.delete_topics(topics)
        self.out("Done.")
        return 0


def now_ns() -> int:
    return time.time_ns()
