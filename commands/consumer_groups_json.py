"""pk-consumer-groups --output json (pk only): each action's result as one JSON document on one
line, from the same data the text tables print (ConsumerGroupService's fetches, no second one).

Tables become arrays of row objects whose keys are the text's column headers in camelCase
(CURRENT-OFFSET → currentOffset, #MEMBERS → numMembers), in the text's column and row order;
Kafka's "-" is null and numbers are JSON numbers. --verbose adds the fields its text adds.
What Kafka prints on stderr (a group with no active members, a rebalance, the reset WARN lines)
stays there, and so do the errors and the exit status; the few notes Kafka prints on stdout
beside a table (a reset falling back to the latest offset) go to stderr, so that stdout is the
document alone. Schemas: README, "JSON output of the admin tools".
"""

from __future__ import annotations

from typing import Callable

from .consumer_groups import (MISSING, ConsumerGroupService, Console, GroupBackend, GroupOptions, TopicPartition,
                              delete_offsets_problem, delete_offsets_status)
from .errors import UsageError
from .json_out import dumps


def check(o: GroupOptions) -> None:
    """--export already writes a machine format (Kafka's CSV); --validate-regex is no report."""
    if o.reset_offsets and o.export:
        raise UsageError("--output json can't be used with --export")
    if o.validate_regex:
        raise UsageError("--output json can't be used with --validate-regex")


def _null(value):
    return None if value is None or value == MISSING else value


class JsonGroupService(ConsumerGroupService):
    """The text service with each printer replaced by its document; `emit` takes the line."""

    def __init__(self, backend: GroupBackend, o: GroupOptions, console: Console, emit: Callable[[str], None]):
        super().__init__(backend, o, console)
        self.emit = emit

    # --list: every column, whether or not --type/--state were given (their values still filter)
    def list_groups(self) -> None:
        self.emit(dumps([{"group": g, "type": t, "state": s} for g, t, s in self.group_listings()]))

    # --describe [--offsets]
    def print_offsets(self, group_ids: list[str]) -> None:
        collected = [(desc, self.collect_group_offsets(desc) if desc.state != "Dead" else [])
                     for desc in self._describe(group_ids)]
        epochs = getattr(self.backend, "leader_epochs", None) or {}
        rows = []
        for desc, group_rows in collected:
            if not self._should_print_member_state(desc.group_id, desc.state, len(group_rows)):
                continue
            for group, topic, partition, offset, end, lag, consumer, host, client in group_rows:
                row = {"group": group, "topic": topic, "partition": partition}
                if self.o.verbose:
                    row["leaderEpoch"] = epochs.get((group, topic, partition)) if offset is not None else None
                row.update({"currentOffset": offset, "logEndOffset": end, "lag": lag,
                            "consumerId": _null(consumer), "host": _null(host), "clientId": _null(client)})
                rows.append(row)
        self.emit(dumps(rows))

    # --describe --members [--verbose]
    def print_members(self, group_ids: list[str], verbose: bool) -> None:
        rows = []
        for desc in self._describe(group_ids):
            if not self._should_print_member_state(desc.group_id, desc.state, len(desc.members)):
                continue
            for member in desc.members:
                assignment = sorted(set(member.assignment))
                row = {"group": desc.group_id, "consumerId": member.member_id,
                       "groupInstanceId": member.group_instance_id or None, "host": member.host,
                       "clientId": member.client_id, "numPartitions": len(assignment)}
                if verbose:  # pk's groups are classic ones: no epochs, no target assignment
                    row.update({"currentEpoch": None, "currentAssignment": _partitions(assignment),
                                "targetEpoch": None, "targetAssignment": None})
                rows.append(row)
        self.emit(dumps(rows))

    # --describe --state [--verbose]
    def print_states(self, group_ids: list[str]) -> None:
        rows = []
        for desc in self._describe(group_ids):
            if not self._should_print_member_state(desc.group_id, desc.state, 1):
                continue
            c = desc.coordinator
            row = {"group": desc.group_id, "coordinator": {"host": c.host, "port": c.port, "id": c.node_id},
                   "assignmentStrategy": desc.assignor or None, "state": desc.state}
            if self.o.verbose:
                row.update({"groupEpoch": None, "targetAssignmentEpoch": None})
            row["numMembers"] = len(desc.members)
            rows.append(row)
        self.emit(dumps(rows))

    # --delete
    def delete_groups(self) -> None:
        success, failed = self.deleted_groups()
        if failed:
            self.console.error("Deletion of some consumer groups failed:")
        self.emit(dumps({"deleted": success,
                         "failed": [{"group": g, "error": str(error)} for g, error in failed]}))

    # --delete-offsets
    def delete_offsets(self) -> None:
        _group, code, results = self.deleted_offsets()
        problem = delete_offsets_problem(code)
        if problem is not None:
            self.console.error(problem)
        self.emit(dumps([{"topic": tp[0], "partition": tp[1] if tp[1] >= 0 else None,
                          "status": delete_offsets_status(error)} for tp, error in results]))

    # --reset-offsets (--dry-run or --execute): the plan's rows, in the text's order
    def print_offsets_to_reset(self, result: dict[str, dict[TopicPartition, int]]) -> None:
        from pk.engine.javacompat import hashmap_order

        self.emit(dumps([{"group": group, "topic": topic, "partition": p, "newOffset": result[group][(topic, p)]}
                         for group in hashmap_order(result) for topic, p in hashmap_order(sorted(result[group]))]))


def _partitions(assignment: list[TopicPartition]) -> list[dict]:
    return [{"topic": topic, "partition": partition} for topic, partition in assignment]


def run(backend: GroupBackend, o: GroupOptions, console: Console, emit: Callable[[str], None]) -> None:
    JsonGroupService(backend, o, console, emit).run()
