"""Kafka 4.4's GroupOffsetsResetter: the reset plan of --reset-offsets, shared by
pk-consumer-groups (commands/consumer_groups.py) and pk-streams-groups
(commands/streams_groups.py) as Kafka's tools share the class. It asks its `GroupBackend`
(consumer_groups.GroupBackend: log start/end offsets, offsets for a timestamp, a topic's
partitions, the group's committed offsets) and reads the scenario from `GroupOptions`; each
tool chooses the partitions in scope and prints the plan its own way.

The partitions' order is that of the Java HashMaps Kafka fills (`hashmap_order`); a WARN log
line of Kafka's resetter logger is written for an offset moved into a partition's range.
"""

from __future__ import annotations

import csv
import io
import time
from typing import Callable

from pk.engine.javacompat import hashmap_order, java_split

from .consumer_groups import (SCENARIO_LIST_ORDER, Console, GroupBackend, GroupOptions, TopicPartition, _csv_field,
                              _int_field, _long_field, _spec, get_date_time, instant_minus_ms, java_long,
                              parse_duration_ns, parse_topic_with_partitions, single, tp_str)
from .errors import CommandFailure, UsageError


class GroupOffsetsResetter:
    def __init__(self, admin: Callable[[], GroupBackend], o: GroupOptions, console: Console):
        self.admin = admin  # (a call: the consumer groups' tool reads --timeout on each admin call)
        self.o = o
        self.console = console
        self._reset_plan: dict[str, dict[TopicPartition, int]] | None = None

    def parse_topic_partitions_to_reset(self, topics: list[str]) -> list[TopicPartition]:
        """`t:p,p` arguments as given (each checked to exist), then every partition of the
        plain topic names."""
        specified: list[TopicPartition] = []
        for arg in (t for t in topics if ":" in t):
            specified += parse_topic_with_partitions(arg)
        unspecified: list[TopicPartition] = []
        for topic in dict.fromkeys(t for t in topics if ":" not in t):
            unspecified += [(topic, p) for p in self.admin().topic_partitions(topic)]
        known: dict[str, list[int]] = {}
        missing = []
        for topic, p in specified:
            if topic not in known:
                known[topic] = self.admin().topic_partitions(topic)
            if p not in known[topic]:
                missing.append(tp_str((topic, p)))
        if missing:
            raise CommandFailure(f'The partitions "{",".join(missing)}" do not exist')
        return list(dict.fromkeys(specified + unspecified))

    def prepare_offsets_to_reset(self, group: str, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        o = self.o
        if o.to_offset:
            offset = java_long(o.to_offset[:1], "to-offset")
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
            try:
                timestamp = get_date_time(o.to_datetime[0])
            except CommandFailure as exc:  # 4.4 wraps the ParseException in a RuntimeException
                raise CommandFailure(f"java.text.ParseException: {exc}") from None
            return self._timestamp_offsets(partitions, timestamp)
        if o.by_duration:
            duration_ns = parse_duration_ns(single(o.by_duration, "by-duration"))
            now_ns = time.time_ns() // 1000 * 1000  # Instant.now(): microseconds
            return self._timestamp_offsets(partitions, instant_minus_ms(now_ns, duration_ns))
        if o.from_file:
            plan = self._read_reset_plan().get(group)
            if plan is None:
                self.console.error(f"No reset plan for group {group} found.")
                return {}
            return self._check_offsets_range(plan)
        if o.to_current:
            committed = self.admin().committed_offsets(group)
            prepared = {tp: committed[tp] for tp in partitions if tp in committed}
            missing = [tp for tp in partitions if tp not in committed]
            if missing:
                prepared.update(self.admin().log_end_offsets(missing))
            return prepared
        scenarios = ", ".join(_spec(s) for s in SCENARIO_LIST_ORDER)
        raise UsageError(f"Option '{_spec('reset-offsets')}' requires one of the following scenarios: "
                         f"[{scenarios}]")

    def _timestamp_offsets(self, partitions: list[TopicPartition], timestamp: int) -> dict[TopicPartition, int]:
        found = self.admin().offsets_for_timestamp(partitions, timestamp)
        prepared = {tp: off for tp, off in found.items() if off is not None}
        empty = hashmap_order(tp for tp, off in found.items() if off is None)
        for topic, p in empty:
            self.console.println(f"\nWarn: Partition {p} from topic {topic} is empty. Falling back to latest known offset.")
        if empty:
            prepared.update(self.admin().log_end_offsets(empty))
        return prepared

    def _check_offsets_range(self, requested: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        partitions = hashmap_order(sorted(requested))
        starts = self.admin().log_start_offsets(partitions)
        ends = self.admin().log_end_offsets(partitions)
        checked = {}
        for tp in partitions:
            offset = requested[tp]
            end, start = ends[tp], starts[tp]
            if offset > end:
                self.console.warn_log(f"New offset ({offset}) is higher than latest offset for topic partition "
                                      f"{tp_str(tp)}. Value will be set to {end}.")
                offset = end
            elif offset < start:
                self.console.warn_log(f"New offset ({offset}) is lower than earliest offset for topic partition "
                                      f"{tp_str(tp)}. Value will be set to {start}.")
                offset = start
            checked[tp] = offset
        return checked

    def _read_reset_plan(self) -> dict[str, dict[TopicPartition, int]]:
        if self._reset_plan is not None:
            return self._reset_plan
        path = self.o.from_file[0]
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            raise CommandFailure(f"java.io.IOException: Unable to read file {path}") from None
        lines = java_split(text, "\n") if text else []  # an empty file is no lines (Java's split: [""])

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
        for group in hashmap_order(result):
            offsets = result[group]
            for topic, p in hashmap_order(sorted(offsets)):
                offset = offsets[(topic, p)]
                cells = ([] if single_group else [_csv_field(group)]) + [_csv_field(topic), str(p), str(offset)]
                rows.append(",".join(cells) + "\n")
        return "".join(rows)

