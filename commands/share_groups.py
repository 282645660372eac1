"""kafka-share-groups (Kafka 4.4's ShareGroupCommand): list, describe, reset the start offsets
of, delete offsets of, and delete share groups (KIP-932), on a cluster.

Over pk's own codec (backends/wire.py): confluent-kafka's admin has no share-group calls. The
requests are those Kafka's admin client sends: ListGroups with the "share" type filter,
ShareGroupDescribe (77), DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91),
DeleteShareGroupOffsets (92), DeleteGroups and ListOffsets, each group's to its coordinator.

What the tool prints, as Kafka 4.4 prints it (tables padded to their longest cell, 15 at
least; a blank line before each table; "Share group 'g' has no active members." on stderr):
each printer below returns (stdout text, stderr text), so the CLI only writes them.
"""

from __future__ import annotations

import csv
import sys
import time
from dataclasses import dataclass

from pk.engine import protocol as kp

from .backends.kafka_admin import AdminError, known_error
from .errors import UsageError
from .group_coordinator import METADATA_VERSION, GroupCoordinatorClient
from .java_hash import hash_order, topic_partition_hash

STATES = ("Empty", "Stable", "Dead")
DESCRIBE_VERSION = 1
OFFSETS_VERSION = 1
DELETE_GROUPS_VERSION = 2
EARLIEST, LATEST = -2, -1
_GROUP_ID_NOT_FOUND, _NON_EMPTY_GROUP = 69, 68


def parse_states(text: str) -> list[str]:
    """ShareGroupCommand's --state list (case-insensitive names, comma-separated)."""
    states = []
    for word in text.split(","):
        match = next((s for s in STATES if s.lower() == word.strip().lower()), None)
        if match is None:
            raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(STATES)}")
        states.append(match)
    return states


def _pad(text: str, width: int) -> str:
    return text + " " * max(width - len(text), 0)


def _row(cells: list, widths: list) -> str:
    """printf("%-w1s %-w2s ... %s"): the first len(widths) cells padded, one space between."""
    return " ".join([_pad(str(c), w) for c, w in zip(cells, widths)] + [str(c) for c in cells[len(widths):]])


def _width(values, least: int = 15) -> int:
    return max([least] + [len(v) for v in values])


@dataclass
class Member:
    member_id: str
    client_id: str
    host: str
    epoch: int
    assignment: list[tuple[str, list[int]]]  # (topic, partitions)


@dataclass
class Description:
    group: str
    state: str
    group_epoch: int
    assignment_epoch: int
    coordinator: tuple[str | None, int | None, int]  # host, port, id (no host: the bundled engine)
    members: list[Member]


class ShareGroupService(GroupCoordinatorClient):
    group_type = "share"

    def describe(self, group: str) -> Description:
        answer = self._call(group, kp.ApiKey.SHARE_GROUP_DESCRIBE, DESCRIBE_VERSION,
                            {"group_ids": [group], "include_authorized_operations": False})
        g = answer["groups"][0]
        if g["error_code"]:
            raise known_error(g["error_code"], g.get("error_message"))
        members = []
        for m in g["members"]:
            parts = [(tp["topic_name"], sorted(tp["partitions"])) for tp in m["assignment"]["topic_partitions"]]
            members.append(Member(m["member_id"], m["client_id"], m["client_host"], m["member_epoch"],
                                  sorted(parts)))
        return Description(group, g["group_state"], g["group_epoch"], g["assignment_epoch"],
                           self.coordinator(group), members)

    def start_offsets(self, group: str, topics: list[str] | None = None) -> list[dict]:
        """[{topic, partition, start_offset, leader_epoch, lag}] of the group, by topic and partition."""
        request = {"groups": [{"group_id": group,
                               "topics": None if topics is None else
                               [{"topic_name": t, "partitions": []} for t in topics]}]}
        answer = self._call(group, kp.ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, OFFSETS_VERSION, request)
        g = answer["groups"][0]
        if g["error_code"]:
            raise known_error(g["error_code"], g.get("error_message"))
        rows = []
        for t in g["topics"]:
            for p in t["partitions"]:
                if p["error_code"]:
                    raise known_error(p["error_code"], p.get("error_message"))
                rows.append({"topic": t["topic_name"], "partition": p["partition_index"],
                             "start_offset": p["start_offset"], "leader_epoch": p["leader_epoch"],
                             "lag": p.get("lag", -1)})
        return sorted(rows, key=lambda r: (r["topic"], r["partition"]))

    def partitions(self, topics: list[str]) -> dict[str, list[int]]:
        md = self.client.call(kp.ApiKey.METADATA, METADATA_VERSION,
                              {"topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False,
                               "include_topic_authorized_operations": False})
        out = {}
        for t in md["topics"]:
            if t["error_code"]:
                raise known_error(t["error_code"], t.get("error_message"))
            out[t["name"]] = sorted(p["partition_index"] for p in t["partitions"])
        return out

    def alter_offsets(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        topics: dict[str, list] = {}
        for (topic, partition), offset in offsets.items():
            topics.setdefault(topic, []).append({"partition_index": partition, "start_offset": offset})
        answer = self._call(group, kp.ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0,
                            {"group_id": group, "topics": [{"topic_name": t, "partitions": ps}
                                                           for t, ps in topics.items()]})
        if answer["error_code"]:
            raise known_error(answer["error_code"], answer.get("error_message"))
        for t in answer["responses"]:
            for p in t["partitions"]:
                if p["error_code"]:
                    raise known_error(p["error_code"], p.get("error_message"))

    def delete_offsets(self, group: str, topics: list[str]) -> tuple[AdminError | None, dict[str, AdminError | None]]:
        answer = self._call(group, kp.ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0,
                            {"group_id": group, "topics": [{"topic_name": t} for t in topics]})
        if answer["error_code"]:
            return known_error(answer["error_code"], answer.get("error_message")), {}
        results = {t["topic_name"]: known_error(t["error_code"], t.get("error_message")) if t["error_code"] else None
                   for t in answer["responses"]}
        return None, results

    def delete_group(self, group: str) -> AdminError | None:
        answer = self._call(group, kp.ApiKey.DELETE_GROUPS, DELETE_GROUPS_VERSION, {"groups_names": [group]})
        code = answer["results"][0]["error_code"]
        return known_error(code) if code else None


# --------------------------------------------------------------------------- printers
def list_text(listings: list[tuple[str, str]], with_state: bool) -> str:
    if not with_state:
        return "".join(g + "\n" for g, _ in listings)
    width = _width(g for g, _ in listings)
    return "".join(f"{_pad(g, width)} {s}\n" for g, s in [("GROUP", "STATE"), *listings])


def _no_members(d: Description) -> str:
    return f"\nShare group '{d.group}' has no active members.\n" if d.state == "Empty" else ""


def state_text(d: Description, verbose: bool) -> tuple[str, str]:
    host, port, node = d.coordinator
    # the bundled engine has no network address: "-", as pk-consumer-groups prints it there
    coordinator = f"{host}:{port}  ({node})" if host is not None else f"-  ({node})"
    widths = [_width([d.group]), max(25, len(coordinator)), 15]
    head = ["GROUP", "COORDINATOR (ID)", "STATE"]
    row = [d.group, coordinator, d.state]
    if verbose:
        widths += [12, 17]
        head += ["GROUP-EPOCH", "ASSIGNMENT-EPOCH"]
        row += [d.group_epoch, d.assignment_epoch]
    head.append("#MEMBERS")
    row.append(len(d.members))
    return "\n" + _row(head, widths) + "\n" + _row(row, widths) + "\n", _no_members(d)


def members_text(d: Description, verbose: bool) -> tuple[str, str]:
    if not d.members:
        return "", _no_members(d)
    widths = [_width([d.group]), _width(m.member_id for m in d.members), _width(m.host for m in d.members),
              _width(m.client_id for m in d.members), 12]
    head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    if verbose:
        widths.append(13)
        head.append("MEMBER-EPOCH")
    lines = [_row(head + ["ASSIGNMENT"], widths)]
    for m in d.members:
        cells = [d.group, m.member_id, m.host, m.client_id, sum(len(ps) for _, ps in m.assignment)]
        if verbose:
            cells.append(m.epoch)
        assignment = ";".join(f"{t}:{','.join(map(str, ps))}" for t, ps in m.assignment)
        lines.append(_row(cells + [assignment], widths))
    return "\n" + "\n".join(lines) + "\n", ""


def _dash(value: int) -> str:
    return "-" if value < 0 else str(value)


def offsets_text(group: str, rows: list[dict], verbose: bool) -> str:
    if not rows:  # no share-partition state at all (none yet, or its offsets deleted)
        return f"\nShare group '{group}' has no offset information.\n"
    widths = [_width([group]), _width(r["topic"] for r in rows), 10]
    head = ["GROUP", "TOPIC", "PARTITION"]
    if verbose:
        widths.append(13)
        head.append("LEADER-EPOCH")
    widths.append(13)
    head += ["START-OFFSET", "LAG"]
    lines = [_row(head, widths)]
    for r in rows:
        cells = [group, r["topic"], r["partition"]]
        if verbose:  # no start offset yet: no epoch either
            cells.append(_dash(r["leader_epoch"]) if r["start_offset"] >= 0 else "-")
        cells += [_dash(r["start_offset"]), _dash(r["lag"]) if r["start_offset"] >= 0 else "-"]
        lines.append(_row(cells, widths))
    return "\n" + "\n".join(lines) + "\n"


def describe_error(exc: AdminError) -> tuple[str, str]:
    """ShareGroupCommand.printError of a failed describe: stdout, then the stack's first lines."""
    return (f"\nError: Executing share group command failed due to {exc.execution_message()}\n",
            f"java.util.concurrent.ExecutionException: {exc.execution_message()}\n")


# --------------------------------------------------------------------------- reset
def reset_plan(service: ShareGroupService, group: str, spec: str, value, topics: list[str] | None,
               warn) -> dict[tuple[str, int], int]:
    """The new start offset of each partition in scope, in the order Kafka's HashMap gives."""
    if topics is None:  # --all-topics: the topics the group has start offsets for
        tps = [(r["topic"], r["partition"]) for r in service.start_offsets(group)]
    else:
        tps = []
        whole = [t for t in topics if ":" not in t]
        known = service.partitions(whole) if whole else {}
        for t in topics:
            if ":" in t:
                name, parts = t.split(":", 1)
                tps += [(name, int(p)) for p in parts.split(",") if p.strip()]
            else:
                tps += [(t, p) for p in known[t]]
    if spec == "to-offset":
        plan = _in_range(service, {tp: value for tp in tps})
    elif spec in ("to-earliest", "to-latest"):
        plan = service.list_offsets(tps, EARLIEST if spec == "to-earliest" else LATEST)
    elif spec == "to-current":
        current = {(r["topic"], r["partition"]): r["start_offset"] for r in service.start_offsets(group)}
        missing = [tp for tp in tps if current.get(tp, -1) < 0]
        # no start offset yet: where the group would start, share.auto.offset.reset's default
        fallback = service.list_offsets(missing, LATEST) if missing else {}
        plan = {tp: current[tp] if current.get(tp, -1) >= 0 else fallback[tp] for tp in tps}
    elif spec == "to-datetime":
        found = service.list_offsets(tps, value)
        latest = None
        plan = {}
        for tp in tps:
            if found[tp] < 0:
                warn(f"\nWarn: Partition {tp[1]} from topic {tp[0]} is empty. Falling back to latest known offset.")
                latest = latest or service.list_offsets(tps, LATEST)
                plan[tp] = latest[tp]
            else:
                plan[tp] = found[tp]
    else:  # from-file: topic,partition,offset lines
        plan = {}
        with open(value, newline="") as f:
            for row in csv.reader(f):
                if row:
                    plan[(row[0], int(row[1]))] = int(row[2])
    order = hash_order(plan, lambda tp: topic_partition_hash(*tp))
    return {tp: plan[tp] for tp in order}


def _in_range(service: ShareGroupService, wanted: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Offsets moved into each partition's [log start, log end], with Kafka's resetter's WARN log
    line on stderr for each one moved."""
    if not wanted:
        return wanted
    starts = service.list_offsets(list(wanted), EARLIEST)
    ends = service.list_offsets(list(wanted), LATEST)
    out = {}
    for tp in hash_order(wanted, lambda tp: topic_partition_hash(*tp)):
        offset, where = wanted[tp], f"{tp[0]}-{tp[1]}"
        if offset > ends[tp]:
            _warn_log(f"New offset ({offset}) is higher than latest offset for topic partition {where}. "
                      f"Value will be set to {ends[tp]}.")
            offset = ends[tp]
        elif offset < starts[tp]:
            _warn_log(f"New offset ({offset}) is lower than earliest offset for topic partition {where}. "
                      f"Value will be set to {starts[tp]}.")
            offset = starts[tp]
        out[tp] = offset
    return out


def _warn_log(message: str) -> None:
    """A log4j WARN line of Kafka's GroupOffsetsResetter, as its tools' log4j set-up prints it."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now * 1000) % 1000:03d}"
    sys.stderr.write(f"[{stamp}] WARN {message} (org.apache.kafka.tools.GroupOffsetsResetter)\n")


def reset_text(group: str, plan: dict[tuple[str, int], int], export: bool) -> str:
    if not plan:  # nothing in scope: Kafka prints the blank line alone
        return "\n"
    if export:
        return "".join(f"{t},{p},{o}\n" for (t, p), o in plan.items()) + "\n"
    widths = [_width([group]), _width(t for t, _ in plan), 10]
    lines = [_row(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], widths)]
    lines += [_row([group, t, p, o], widths) for (t, p), o in plan.items()]
    return "\n" + "\n".join(lines) + "\n"


def delete_offsets_text(top: AdminError | None, results: dict[str, AdminError | None], topics: list[str]) -> str:
    out = ""
    if top is not None:
        out += f"\nError: {top.message}\n"
        results = {t: top for t in topics}
    width = _width(results)
    lines = [_row(["TOPIC", "STATUS"], [width])]
    for t, err in sorted(results.items()):  # Kafka's tool sorts them by topic name
        lines.append(_row([t, "Successful" if err is None else f"Error: {err.message}"], [width]))
    return out + "\n" + "\n".join(lines) + "\n"


def delete_text(deleted: list[str], failed: dict[str, AdminError]) -> str:
    if not failed:
        return f"Deletion of requested share groups ({', '.join(repr_java(g) for g in deleted)}) was successful.\n"
    out = "\nError: Deletion of some share groups failed:\n"
    out += "".join(f"* Group '{g}' could not be deleted due to: {e.execution_message()}\n" for g, e in failed.items())
    if deleted:
        out += f"\nThese share groups were deleted successfully: {', '.join(repr_java(g) for g in deleted)}\n"
    return out


def repr_java(group: str) -> str:
    return f"'{group}'"


def not_share_group(group: str) -> AdminError:
    return known_error(_GROUP_ID_NOT_FOUND, f"Group '{group}' is not a share group.")


def non_empty(group: str) -> AdminError:
    return known_error(_NON_EMPTY_GROUP, f"Share group '{group}' is not EMPTY.")
