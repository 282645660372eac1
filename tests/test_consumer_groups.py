"""pk-run-class kafka.admin.ConsumerGroupCommand (the texts of Kafka 4.4's
ConsumerGroupCommand, checked against the real tool in test_oracle_groups.py) on both backends (conftest.py): the bundled engine, and pk-server-start
(or PK_TEST_BOOTSTRAP) through --bootstrap-server and confluent-kafka's AdminClient. Groups are
made by real pk-console-consumer processes on the same backend; offsets are committed and read
through the engine, or through the cluster's Admin API where the group lives in a server.

Names come from `backend.topic()` (unique where the cluster is shared), so tables are checked
with Kafka's width rules (max(15, longest value)) rather than fixed widths; listings of a
shared cluster are checked for this test's groups."""

from __future__ import annotations

import datetime
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import TEST_BOOTSTRAP, Runner, free_port, tool_path
from pk.commands.errors import CommandFailure
from pk.commands.consumer_groups import (
    get_date_time,
    instant_minus_ms,
    parse_duration_ns,
)
from pk.engine import records
from pk.engine.javacompat import hashmap_order as hash_order
from pk.engine.engine import Engine
from pk.engine.groups import GroupCoordinator
from pk.engine.offsets import OffsetStore

CLASS = "kafka.admin.ConsumerGroupCommand"
FAST = ["--command-property", "session.timeout.ms=1500", "--command-property", "heartbeat.interval.ms=100"]
NO_AUTO_COMMIT = ["--command-property", "auto.commit.interval.ms=600000"]
HOUR = 3_600_000
NOT_EMPTY = "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
NOT_FOUND = "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."
UNKNOWN_TP = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition."
FAILED = "Error: Executing consumer group command failed due to "
RESET_WARNING = (
    "WARN: No action will be performed as the --execute option is missing. In version 5.0, this command will "
    "require either --dry-run or --execute to be specified. You should add the --dry-run option explicitly if "
    "you are scripting this command and want to keep the current default behavior without prompting.")


def not_found(group):
    """4.4's --describe of a group that does not exist (the whole command fails)."""
    return (f"{FAILED}org.apache.kafka.common.errors.GroupIdNotFoundException: Group {group} not found.\n")


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir  # the server half: the server's own data directory


@pytest.fixture
def plain(tmp_path):
    """pk's tools for tests that involve no backend."""
    return Runner(str(tmp_path / "data"))


# --------------------------------------------------------------------------- helpers
def cg(pk, backend, *args):
    return pk("pk-run-class", CLASS, *backend, *args)


def ok(proc):
    assert proc.returncode == 0, (proc.out, proc.err)
    assert "Traceback" not in proc.err
    return proc


def now_ms() -> int:
    return int(time.time() * 1000)


def produce(backend, topic, partition, count, timestamps=None, prefix=None):
    prefix = prefix or f"{topic}{partition}-"
    ts = timestamps or [now_ms()] * count
    if backend.data_dir is not None:  # through the engine (the server shares its data directory)
        with Engine(backend.data_dir) as engine:
            engine.partition(topic, partition).append_batches([records.encode_batch(
                [(None, f"{prefix}{i}".encode(), (), ts[i]) for i in range(count)])])
        return
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": backend.bootstrap, "log_level": 0})
    for i in range(count):
        producer.produce(topic, f"{prefix}{i}".encode(), partition=partition, timestamp=ts[i])
    assert producer.flush(30) == 0


def committed(backend, group):
    if not backend.remote:
        with Engine(backend.data_dir) as engine:
            return OffsetStore(engine).committed(group)
    from confluent_kafka import ConsumerGroupTopicPartitions

    result = backend.admin().list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def commit(backend, group, offsets):
    if not backend.remote:
        with Engine(backend.data_dir) as engine:
            OffsetStore(engine).commit(group, offsets)
        return
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    request = ConsumerGroupTopicPartitions(group, [TopicPartition(t, p, o) for (t, p), o in offsets.items()])
    result = backend.admin().alter_consumer_group_offsets([request])[group].result(30)
    assert all(tp.error is None for tp in result.topic_partitions), result.topic_partitions


class GroupView:
    """A group's state and members, from the engine's group files or the cluster's DescribeGroups:
    members = {member id: (host, client id, [(topic, partition), ...])}; coordinator as
    ConsumerGroupCommand prints it."""

    def __init__(self, state, members, coordinator):
        self.state = state
        self.members = members
        self.coordinator = coordinator


def group_state(backend, group) -> GroupView:
    if not backend.remote:
        with Engine(backend.data_dir) as engine:
            def counts(topics):
                return {t: engine.topic(t).partitions for t in topics if t in engine.list_topics()}
            state = GroupCoordinator(engine.groups_dir, group, counts).describe()
        members = {mid: (m.client_host, m.client_id, sorted((t, p) for t, ps in m.assignment.items() for p in ps))
                   for mid, m in state.members.items()}
        return GroupView(state.state, members, "-  (0)")
    d = backend.admin().describe_consumer_groups([group])[group].result(30)
    names = {"STABLE": "Stable", "EMPTY": "Empty", "DEAD": "Dead", "PREPARING_REBALANCING": "PreparingRebalance",
             "COMPLETING_REBALANCING": "CompletingRebalance"}
    members = {m.member_id: (m.host, m.client_id, sorted((tp.topic, tp.partition) for tp in
                                                        (m.assignment.topic_partitions if m.assignment else [])))
               for m in d.members}
    return GroupView(names.get(d.state.name, "Unknown"), members,
                     f"{d.coordinator.host}:{d.coordinator.port}  ({d.coordinator.id})")


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def consume(pk, backend, *args, timeout_ms=1500):
    proc = pk("pk-console-consumer", *backend, *args, "--timeout-ms", str(timeout_ms))
    assert proc.returncode == 0, (proc.out, proc.err)
    return proc


class Member:
    """A pk-console-consumer in a group, running until stopped by its pid."""

    def __init__(self, pk, backend, topic, group, *extra):
        self.proc = subprocess.Popen([tool_path("pk-console-consumer"), *backend, "--topic", topic, "--group", group,
                                      *FAST, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=pk.env)
        self.output = b""

    def wait_for_records(self, count: int, timeout: float = 10.0) -> None:
        """Read the member's stdout until it has printed `count` records."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while self.output.count(b"\n") < count and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self.output += chunk
        assert self.output.count(b"\n") >= count, self.output

    def stop(self):
        if self.proc.returncode is not None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # a clean close: commit, then leave the group
        try:
            self.proc.communicate(timeout=60)  # only a failure waits that long (a loaded machine)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def members():
    started = []

    def start(pk, backend, topic, group, *extra):
        member = Member(pk, backend, topic, group, *extra)
        started.append(member)
        return member

    yield start
    for member in started:
        member.stop()


def wait_stable(backend, group, count) -> GroupView:
    def stable():
        view = group_state(backend, group)
        return view.state == "Stable" and len(view.members) == count and view
    view = wait_for(stable)
    assert view, group_state(backend, group).__dict__
    return view


def offsets_table(rows):
    """Kafka's describe table: GROUP, TOPIC, CONSUMER-ID and HOST as wide as max(15, longest)."""
    rows = [tuple(map(str, row)) for row in rows]
    header = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
              "CLIENT-ID")
    w = {i: max([15] + [len(r[i]) for r in rows]) for i in (0, 1, 6, 7)}
    widths = [w[0], w[1], 10, 15, 15, 15, w[6], w[7]]
    lines = [" ".join(f"{v:<{widths[i]}}" for i, v in enumerate(r[:8])) + " " + r[8] for r in [header] + rows]
    return "\n" + "\n".join(lines) + "\n"


def reset_table(*groups):
    """4.4's reset table of (group, {(topic, partition): offset}) pairs: GROUP and TOPIC as wide as
    max(15, longest), groups and rows in Kafka's HashMap order."""
    wg = max([15] + [len(g) for g, _ in groups])
    wt = max([15] + [len(t) for _, offsets in groups for t, _ in offsets])
    lines = [f"{'GROUP':<{wg}} {'TOPIC':<{wt}} {'PARTITION':<10} NEW-OFFSET"]
    by_group = dict(groups)
    for g in hash_order(by_group):
        lines += [f"{g:<{wg}} {t:<{wt}} {p:<10} {by_group[g][(t, p)]}" for t, p in hash_order(sorted(by_group[g]))]
    return "\n" + "\n".join(lines) + "\n"


def reset_header(group):
    return f"\n{'GROUP':<{max(15, len(group))}} {'TOPIC':<15} {'PARTITION':<10} NEW-OFFSET\n"


def listed(out, *groups):
    """The lines of `--list` naming these groups (a shared cluster lists other tests' groups)."""
    return [line for line in out.splitlines() if line in groups]


def state_rows(out, *groups):
    """`--list --state`: checks 4.4's width rule (max(15, longest) + 10, then `%-20s`) on the whole
    listing, returns this test's rows."""
    lines = out.splitlines()
    width = len(lines[0]) - len(" STATE") - 15
    assert lines[0] == f"{'GROUP':<{width}} {'STATE':<20}"
    ids = [line[:width].rstrip() for line in lines[1:]]
    assert width == max([15] + [len(g) for g in ids]) + 10
    return [line for line in lines[1:] if line[:width].rstrip() in groups]


def create(backend, topic, partitions=1):
    backend.create(topic, partitions)


# --------------------------------------------------------------------------- --list
def test_list_and_list_state(pk, backend, members):
    t, quiet, live = backend.topic("t"), backend.topic("quiet-group-name"), backend.topic("live")
    if not backend.shared:
        assert ok(cg(pk, backend, "--list")).out == ""
        assert ok(cg(pk, backend, "--list", "--state")).out == f"{'GROUP':<25} {'STATE':<20}\n"
    create(backend, t, 2)
    produce(backend, t, 0, 3)
    consume(pk, backend, "--topic", t, "--group", quiet, "--from-beginning", "--max-messages", "2")
    members(pk, backend, t, live)
    wait_stable(backend, live, 1)
    assert listed(ok(cg(pk, backend, "--list")).out, live, quiet) == [live, quiet]
    # `%-<W>s %-20s` with W = max(15, the longest group id) + 10
    w = len(quiet) + 10 if not backend.shared else None
    rows = state_rows(ok(cg(pk, backend, "--list", "--state")).out, live, quiet)
    width = len(rows[0]) - 21
    assert rows == [f"{live:<{width}} {'Stable':<20}", f"{quiet:<{width}} {'Empty':<20}"]
    if w is not None:
        assert width == w
    rows = state_rows(ok(cg(pk, backend, "--list", "--state", "Stable")).out, live, quiet)
    assert len(rows) == 1 and rows[0].split() == [live, "Stable"]
    rows = state_rows(ok(cg(pk, backend, "--list", "--state", "Empty,Dead")).out, live, quiet)
    assert len(rows) == 1 and rows[0].split() == [quiet, "Empty"]
    assert len(state_rows(ok(cg(pk, backend, "--list", "--state=Stable,Empty")).out, live, quiet)) == 2
    # 4.4 ignores the case of state names; --type lists the group types (pk's groups are Classic)
    assert [r.split() for r in state_rows(ok(cg(pk, backend, "--list", "--state", "stable")).out, live, quiet)] == \
        [[live, "Stable"]]
    typed = ok(cg(pk, backend, "--list", "--type", "--state")).out.splitlines()
    assert typed[0] == f"{'GROUP':<{len(typed[0]) - 42}} {'TYPE':<20} {'STATE':<20}"
    assert [line.split() for line in typed if line.split()[0] in (live, quiet)] == [
        [live, "Classic", "Stable"], [quiet, "Classic", "Empty"]]
    assert [line.split()[0] for line in ok(cg(pk, backend, "--list", "--type", "consumer")).out.splitlines()] == \
        ["GROUP"]
    proc = cg(pk, backend, "--list", "--state", "stabl")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == ("Invalid state list 'stabl'. Valid states are: CompletingRebalance, Dead, PreparingRebalance, "
                        "Empty, Assigning, Reconciling, Stable\n")


# --------------------------------------------------------------------------- --describe
def test_describe_stable_then_empty_group(pk, backend, members):
    orders, old, g = backend.topic("orders"), backend.topic("old"), backend.topic("g")
    create(backend, orders)
    create(backend, old)
    produce(backend, orders, 0, 10)
    produce(backend, old, 0, 3)
    consume(pk, backend, "--topic", orders, "--group", g, "--from-beginning", "--max-messages", "4", *FAST)
    consume(pk, backend, "--topic", old, "--group", g, "--from-beginning", "--max-messages", "2", *FAST)
    assert committed(backend, g) == {(orders, 0): 4, (old, 0): 2}

    # A live member that has read everything but not committed yet (auto-commit far away).
    member = members(pk, backend, orders, g, *NO_AUTO_COMMIT)
    member.wait_for_records(6)
    view = wait_stable(backend, g, 1)
    ((mid, (host, client, _)),) = view.members.items()
    proc = ok(cg(pk, backend, "--describe", "--group", g))
    assert proc.err == ""
    assert proc.out == offsets_table([
        (g, orders, 0, 4, 10, 6, mid, host, client),
        (g, old, 0, 2, 3, 1, "-", "-", "-"),
    ])
    assert (host, client) == ("/127.0.0.1", "console-consumer") or backend.shared
    # --offsets is the default sub-action
    assert ok(cg(pk, backend, "--describe", "--group", g, "--offsets")).out == proc.out

    member.stop()  # commits what it read, then leaves
    proc = ok(cg(pk, backend, "--describe", "--group", g))
    assert proc.err == f"\nConsumer group '{g}' has no active members.\n"
    assert proc.out == offsets_table([
        (g, old, 0, 2, 3, 1, "-", "-", "-"),
        (g, orders, 0, 10, 10, 0, "-", "-", "-"),
    ])


def test_describe_wide_values_and_missing_offsets(pk, backend, members):
    topic = backend.topic("a-topic-name-longer-than-fifteen")
    create(backend, topic)
    produce(backend, topic, 0, 2)
    group = backend.topic("a-group-name-longer-than-fifteen")
    # Without commits a member's row has no CURRENT-OFFSET and no LAG.
    members(pk, backend, topic, group, "--command-property", "enable.auto.commit=false")
    ((mid, (host, client, _)),) = wait_stable(backend, group, 1).members.items()
    out = ok(cg(pk, backend, "--describe", "--group", group)).out
    assert out == offsets_table([(group, topic, 0, "-", 2, "-", mid, host, client)])


def test_describe_unknown_group(pk, backend):
    nope = backend.topic("nope")
    proc = cg(pk, backend, "--describe", "--group", nope)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == not_found(nope)
    for flag in ("--members", "--state"):
        proc = cg(pk, backend, "--describe", "--group", nope, flag)
        assert proc.returncode == 1 and proc.out == ""
        assert proc.err == not_found(nope)


def test_describe_several_groups_sorted_and_all_groups(pk, backend):
    t, a, b, missing = (backend.topic(n) for n in ("t", "a", "b", "missing"))
    create(backend, t)
    produce(backend, t, 0, 5)
    commit(backend, b, {(t, 0): 1})
    commit(backend, a, {(t, 0): 3})
    # 4.4: a group that does not exist fails the whole command
    proc = cg(pk, backend, "--describe", "--group", b, "--group", missing, "--group", a)
    assert (proc.returncode, proc.out, proc.err) == (1, "", not_found(missing))
    proc = ok(cg(pk, backend, "--describe", "--group", b, "--group", a))
    assert proc.out == (offsets_table([(a, t, 0, 3, 5, 2, "-", "-", "-")])
                        + offsets_table([(b, t, 0, 1, 5, 4, "-", "-", "-")]))
    assert proc.err == f"\nConsumer group '{a}' has no active members.\n\nConsumer group '{b}' has no active members.\n"
    if not backend.shared:  # every group of the cluster
        proc = ok(cg(pk, backend, "--describe", "--all-groups"))
        assert proc.out == (offsets_table([(a, t, 0, 3, 5, 2, "-", "-", "-")])
                            + offsets_table([(b, t, 0, 1, 5, 4, "-", "-", "-")]))


def _state_table(group, coordinator, assignor, state, count):
    wg, wc = max(15, len(group)), max(25, len(coordinator))
    return (f"\n{'GROUP':<{wg}} {'COORDINATOR (ID)':<{wc}} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<20} #MEMBERS"
            f"\n{group:<{wg}} {coordinator:<{wc}} {assignor:<20} {state:<20} {count}\n")


def test_describe_members_and_state(pk, backend, members):
    m, g = backend.topic("m"), backend.topic("g")
    create(backend, m, 3)
    members(pk, backend, m, g)
    members(pk, backend, m, g)
    view = wait_stable(backend, g, 2)
    ids = list(view.members)  # the coordinator's order, as Kafka prints them
    counts = {mid: len(view.members[mid][2]) for mid in ids}
    assert sorted(counts.values()) == [1, 2]
    widths = [max([15, len(g)]), max([15] + [len(i) for i in ids]), max([15] + [len(view.members[i][0]) for i in ids]),
              max([15] + [len(view.members[i][1]) for i in ids]), 15]

    def row(*cols):
        return "".join(f"{c:<{widths[i]}} " for i, c in enumerate(cols))

    header = row("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    proc = ok(cg(pk, backend, "--describe", "--group", g, "--members"))
    assert proc.out == "\n" + header + "\n" + "".join(
        row(g, mid, view.members[mid][0], view.members[mid][1], counts[mid]) + "\n" for mid in ids)
    proc = ok(cg(pk, backend, "--describe", "--group", g, "--members", "--verbose"))
    # 4.4: CURRENT-EPOCH, CURRENT-ASSIGNMENT (max(20, longest)), TARGET-EPOCH, TARGET-ASSIGNMENT
    assignment = {mid: f"{m}:" + ",".join(str(p) for _, p in view.members[mid][2]) for mid in ids}
    wa = max([20] + [len(a) for a in assignment.values()])

    def extra(*cols):
        return f"{cols[0]:<15} {cols[1]:<{wa}} {cols[2]:<15} {cols[3]:<20}"

    assert proc.out == "\n" + header + extra("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                                             "TARGET-ASSIGNMENT") + "\n" + "".join(
        row(g, mid, view.members[mid][0], view.members[mid][1], counts[mid]) + extra("-", assignment[mid], "-", "-")
        + "\n" for mid in ids)

    proc = ok(cg(pk, backend, "--describe", "--group", g, "--state"))
    assert proc.out == _state_table(g, view.coordinator, "range", "Stable", 2)
    assert proc.err == ""


def test_describe_members_and_state_of_empty_group(pk, backend):
    t, g = backend.topic("t"), backend.topic("g")
    create(backend, t)
    commit(backend, g, {(t, 0): 0})
    proc = ok(cg(pk, backend, "--describe", "--group", g, "--members", "--verbose"))
    # 4.4 prints the header of a group without members
    # (with the minimum widths: Kafka measures the columns over the members only)
    assert proc.out == (f"\n{'GROUP':<15} {'CONSUMER-ID':<15} {'HOST':<15} {'CLIENT-ID':<15} {'#PARTITIONS':<15} "
                        f"{'CURRENT-EPOCH':<15} {'CURRENT-ASSIGNMENT':<20} {'TARGET-EPOCH':<15} "
                        f"{'TARGET-ASSIGNMENT':<20}\n")
    assert proc.err == f"\nConsumer group '{g}' has no active members.\n"
    proc = ok(cg(pk, backend, "--describe", "--group", g, "--state"))
    assert proc.err == f"\nConsumer group '{g}' has no active members.\n"
    assert proc.out == _state_table(g, group_state(backend, g).coordinator, "-", "Empty", 0)


def test_offsets_of_a_deleted_topic_are_gone(pk, backend):
    kept, gone, g, only_gone = (backend.topic(n) for n in ("kept", "gone", "g", "only-gone"))
    create(backend, kept)
    create(backend, gone)
    commit(backend, g, {(kept, 0): 0, (gone, 0): 0})
    commit(backend, only_gone, {(gone, 0): 0})
    assert pk("pk-topics", *backend, "--delete", "--topic", gone).returncode == 0
    # as a broker does when a topic is deleted, the group forgets the topic's offsets
    assert ok(cg(pk, backend, "--describe", "--group", g)).out == offsets_table([(g, kept, 0, 0, 0, 0, "-", "-", "-")])
    assert listed(ok(cg(pk, backend, "--list")).out, g, only_gone) == [g]
    assert cg(pk, backend, "--describe", "--group", only_gone).err == not_found(only_gone)


@pytest.mark.engine_only("the rebalancing group is made through the engine's group files")
def test_describe_rebalancing_group(pk, backend, data_dir):
    create(backend, "t", 2)
    produce(backend, "t", 0, 4)
    commit(backend, "g", {("t", 0): 1})
    # A member that joined but has not synced yet: the group is rebalancing. (Made through the
    # engine, since a real consumer syncs within milliseconds.)
    with Engine(data_dir) as engine:
        mid = GroupCoordinator(engine.groups_dir, "g", lambda topics: {"t": 2}).join(
            "client", "/127.0.0.1", ["t"], ["range"], 60000, 60000)
    assert group_state(backend, "g").state == "PreparingRebalance"
    proc = ok(cg(pk, backend, "--describe", "--group", "g"))
    assert proc.err == "\nWarning: Consumer group 'g' is rebalancing.\n"
    # a broker describes a rebalancing group without assignments
    assert proc.out == offsets_table([("g", "t", 0, 1, 4, 3, "-", "-", "-")])
    proc = ok(cg(pk, backend, "--describe", "--group", "g", "--state"))
    assert proc.out == _state_table("g", "-  (0)", "-", "PreparingRebalance", 1)
    proc = ok(cg(pk, backend, "--describe", "--group", "g", "--members"))
    assert proc.out == (f"\n{'GROUP':<15} {'CONSUMER-ID':<{len(mid)}} {'HOST':<15} {'CLIENT-ID':<15} {'#PARTITIONS':<15} \n"
                        f"{'g':<15} {mid} {'/127.0.0.1':<15} {'client':<15} {'0':<15} \n")
    proc = cg(pk, backend, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--execute")
    assert proc.returncode == 1 and proc.err == (
        "Error: Assignments can only be reset if the group 'g' is inactive, but the current state is "
        "PreparingRebalance.\n")
    assert committed(backend, "g") == {("t", 0): 1}


# --------------------------------------------------------------------------- --reset-offsets
@pytest.fixture
def reset_setup(backend):
    """Topic r: partition 0 has 10 records an hour apart ending 1 h ago, partition 1 has 6 records
    two hours apart ending 2 h ago. Group g (no members) committed r-0 at 5 and r-1 at 2."""
    r, g = backend.topic("r"), backend.topic("g")
    create(backend, r, 2)
    now = now_ms()
    ts0 = [now - (10 - i) * HOUR for i in range(10)]
    ts1 = [now - (6 - i) * 2 * HOUR for i in range(6)]
    produce(backend, r, 0, 10, ts0)
    produce(backend, r, 1, 6, ts1)
    commit(backend, g, {(r, 0): 5, (r, 1): 2})
    return {"ts0": ts0, "ts1": ts1, "r": r, "g": g}


def utc_text(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def _scenarios(setup, tmp_path):
    r = setup["r"]
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{r},0,7\n{r},1,1\n")
    return {
        "to-earliest": (["--to-earliest"], {0: 0, 1: 0}, []),
        "to-latest": (["--to-latest"], {0: 10, 1: 6}, []),
        "to-current": (["--to-current"], {0: 5, 1: 2}, []),
        "to-offset": (["--to-offset", "8"], {0: 8, 1: 6},
                      [f"WARN New offset (8) is higher than latest offset for topic partition {r}-1. Value will be set to 6."]),
        "shift-by": (["--shift-by", "-3"], {0: 2, 1: 0},
                     [f"WARN New offset (-1) is lower than earliest offset for topic partition {r}-1. Value will be set to 0."]),
        # r-0 record 3 is 7 h old: the first record at or after it in r-1 is its record 3 (6 h old)
        "to-datetime": (["--to-datetime", utc_text(setup["ts0"][3])], {0: 3, 1: 3}, []),
        "by-duration": (["--by-duration", "PT5H30M"], {0: 5, 1: 4}, []),
        "from-file": (["--from-file", str(plan)], {0: 7, 1: 1}, []),
    }


@pytest.mark.parametrize("scenario", ["to-earliest", "to-latest", "to-current", "to-offset", "shift-by",
                                      "to-datetime", "by-duration", "from-file"])
def test_reset_offsets_dry_run_then_execute(pk, backend, reset_setup, tmp_path, scenario):
    r, g = reset_setup["r"], reset_setup["g"]
    args, expected, warnings = _scenarios(reset_setup, tmp_path)[scenario]
    expected = {(r, p): o for p, o in expected.items()}
    scope = [] if scenario == "from-file" else ["--topic", r]
    before = committed(backend, g)

    dry = ok(cg(pk, backend, "--reset-offsets", "--group", g, *scope, *args, "--dry-run"))
    assert dry.out == reset_table((g, expected))
    log_lines = [line.split("] ", 1)[1] for line in dry.err.splitlines()]
    assert log_lines == [w + " (org.apache.kafka.tools.GroupOffsetsResetter)" for w in warnings]
    assert committed(backend, g) == before  # a dry run changes nothing

    done = ok(cg(pk, backend, "--reset-offsets", "--group", g, *scope, *args, "--execute"))
    assert done.out == dry.out
    assert committed(backend, g) == expected

    # A member started afterwards resumes at the new offsets.
    remaining = (10 - expected[(r, 0)]) + (6 - expected[(r, 1)])
    # --max-messages ends the member at the last record instead of after --timeout-ms of quiet
    until = ["--max-messages", str(remaining)] if remaining else []
    proc = consume(pk, backend, "--topic", r, "--group", g, "--formatter-property", "print.partition=true",
                   "--formatter-property", "print.offset=true", *FAST, *until)
    first = {}
    for line in proc.out.splitlines():
        part, off, _ = line.split("\t")
        first.setdefault(int(part.split(":")[1]), int(off.split(":")[1]))
    assert first == {p: o for (_, p), o in expected.items() if o < (10, 6)[p]}
    assert len(proc.out.splitlines()) == remaining


def test_reset_default_is_dry_run_with_warning(pk, backend, reset_setup):
    r, g = reset_setup["r"], reset_setup["g"]
    proc = ok(cg(pk, backend, "--reset-offsets", "--group", g, "--topic", f"{r}:1", "--to-earliest"))
    assert proc.err == RESET_WARNING + "\n"
    assert proc.out == reset_table((g, {(r, 1): 0}))
    assert committed(backend, g) == {(r, 0): 5, (r, 1): 2}


def test_reset_to_datetime_zones_and_empty_partitions(pk, backend, reset_setup):
    r, g = reset_setup["r"], reset_setup["g"]
    ts = reset_setup["ts0"][9]  # an hour ago
    text = datetime.datetime.fromtimestamp(ts / 1000, datetime.timezone(datetime.timedelta(hours=2))) \
        .strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+02:00"
    proc = ok(cg(pk, backend, "--reset-offsets", "--group", g, "--all-topics", "--to-datetime", text, "--dry-run"))
    # r-1's newest record is 2 h old, older than the time asked for: Kafka falls back to the log end
    assert proc.out == (f"\nWarn: Partition 1 from topic {r} is empty. Falling back to latest known offset.\n"
                        + reset_table((g, {(r, 0): 9, (r, 1): 6})))


def test_reset_export_and_import(pk, backend, reset_setup, tmp_path):
    r, g = reset_setup["r"], reset_setup["g"]
    h = backend.topic("h")
    proc = ok(cg(pk, backend, "--reset-offsets", "--group", g, "--topic", r, "--shift-by", "1", "--export", "--dry-run"))
    assert proc.out == "".join(f"{r},{p},{o}\n" for t, p in hash_order([(r, 0), (r, 1)])
                               for o in [{0: 6, 1: 3}[p]]) + "\n"
    commit(backend, h, {(r, 0): 1})
    proc = ok(cg(pk, backend, "--reset-offsets", "--group", g, "--group", h, "--all-topics", "--to-latest",
                 "--export", "--dry-run"))
    plans = {g: {(r, 0): 10, (r, 1): 6}, h: {(r, 0): 10}}
    assert proc.out == "".join(f"{gr},{r},{p},{plans[gr][(r, p)]}\n" for gr in hash_order(plans)
                               for _, p in hash_order(sorted(plans[gr]))) + "\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(proc.out)
    proc = ok(cg(pk, backend, "--reset-offsets", "--group", g, "--group", h, "--from-file", str(plan), "--execute"))
    assert proc.out == reset_table(*plans.items())
    assert committed(backend, g) == {(r, 0): 10, (r, 1): 6}
    assert committed(backend, h) == {(r, 0): 10}
    x = backend.topic("x")
    proc = cg(pk, backend, "--reset-offsets", "--group", g, "--group", x, "--from-file", str(plan), "--dry-run")
    assert proc.returncode == 1 and proc.err == f"Error: No reset plan for group {x} found.\n"


def test_export_quotes_as_jackson_does(pk, backend, tmp_path):
    # jackson-dataformat-csv quotes Strings longer than 24 chars or holding a char below '-'
    long_topic = backend.topic("a-topic-name-of-25-chars-")
    short = backend.topic("short")
    assert len(long_topic) > 24 and len(short) <= 24
    create(backend, long_topic)
    create(backend, short)
    produce(backend, long_topic, 0, 3)
    produce(backend, short, 0, 3)
    group, g2 = backend.topic("my group"), backend.topic("g2")
    commit(backend, group, {(long_topic, 0): 1, (short, 0): 1})
    commit(backend, g2, {(short, 0): 2})
    proc = ok(cg(pk, backend, "--reset-offsets", "--group", group, "--group", g2, "--all-topics", "--to-earliest",
                 "--export", "--dry-run"))
    plans = {group: [(long_topic, 0), (short, 0)], g2: [(short, 0)]}

    def csv(text):
        return f'"{text}"' if len(text) > 24 or " " in text else text

    assert proc.out == "".join(f"{csv(gr)},{csv(t)},{p},0\n" for gr in hash_order(plans)
                               for t, p in hash_order(sorted(plans[gr]))) + "\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(proc.out)
    ok(cg(pk, backend, "--reset-offsets", "--group", group, "--group", g2, "--from-file", str(plan), "--execute"))
    assert committed(backend, group) == {(long_topic, 0): 0, (short, 0): 0}
    assert committed(backend, g2) == {(short, 0): 0}


def test_reset_of_a_new_group_creates_its_offsets(pk, backend, reset_setup):
    r = reset_setup["r"]
    fresh = backend.topic("fresh")
    ok(cg(pk, backend, "--reset-offsets", "--group", fresh, "--topic", f"{r}:0", "--to-offset", "4", "--execute"))
    assert committed(backend, fresh) == {(r, 0): 4}
    assert fresh in ok(cg(pk, backend, "--list")).out.split()


def test_reset_refused_while_group_is_active(pk, backend, reset_setup, members):
    r, g = reset_setup["r"], reset_setup["g"]
    members(pk, backend, r, g, *NO_AUTO_COMMIT)
    wait_stable(backend, g, 1)
    for mode in ("--dry-run", "--execute"):
        proc = cg(pk, backend, "--reset-offsets", "--group", g, "--topic", r, "--to-earliest", mode)
        assert proc.returncode == 1
        assert proc.err == (f"Error: Assignments can only be reset if the group '{g}' is inactive, but the current "
                            "state is Stable.\n")
        assert proc.out == reset_header(g)  # Kafka prints the table's header anyway
    assert committed(backend, g) == {(r, 0): 5, (r, 1): 2}


@pytest.mark.parametrize("args, message", [
    (["--topic", "{r}", "--shift-by", "1", "--group", "{nobody}"],
     "Cannot shift offset for partition {r}-0 since there is no current committed offset"),
    (["--topic", "{r}:x", "--to-earliest"], "Invalid partition 'x' specified in topic arg '{r}:x''"),
    (["--topic", "{r}:", "--to-earliest"], "Invalid topic arg '{r}:', expected topic name and partitions"),
    (["--to-earliest"], "One of the reset scopes should be defined: --all-topics, --topic."),
    # (Kafka lists them from a hash set whose order changes from run to run: pk keeps one order)
    (["--topic", "{r}"], "Option '[reset-offsets]' requires one of the following scenarios: [[from-file], "
                         "[to-datetime], [by-duration], [to-latest], [to-current], [to-earliest], [to-offset], "
                         "[shift-by]]"),
    (["--topic", "{r}", "--to-offset", "x"], FAILED + "Cannot parse argument 'x' of option to-offset"),
    (["--topic", "{nope}", "--to-earliest"], FAILED + "This server does not host this topic-partition."),
    (["--topic", "{r}:7", "--to-earliest"], FAILED + 'The partitions "{r}-7" do not exist'),
    (["--topic", "{r}", "--to-datetime", "2024-01-01"],
     FAILED + "java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format"),
    (["--topic", "{r}", "--to-datetime", "2024-01-01T00:00:00"],
     FAILED + 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00Z"'),
    (["--topic", "{r}", "--by-duration", "1h"], FAILED + "Text cannot be parsed to a Duration"),
    (["--topic", "{r}", "--from-file", "/no/such/plan.csv"],
     FAILED + "java.io.IOException: Unable to read file /no/such/plan.csv"),
    (["--topic", "{r}", "--shift-by", "1", "--shift-by", "2"],
     FAILED + "Found multiple arguments for option shift-by, but you asked for only one"),
])
def test_reset_errors(pk, backend, reset_setup, args, message):
    names = {"r": reset_setup["r"], "g": reset_setup["g"], "nope": backend.topic("nope"),
             "nobody": backend.topic("nobody")}
    args = [a.format(**names) for a in args]
    if "--group" not in args:
        args = ["--group", names["g"], *args]
    proc = cg(pk, backend, "--reset-offsets", *args, "--dry-run")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message.format(**names) + "\n"
    assert committed(backend, names["g"]) == {(names["r"], 0): 5, (names["r"], 1): 2}


# --------------------------------------------------------------------------- --delete
def test_delete_groups(pk, backend, members):
    t, done, done2, busy, nope = (backend.topic(n) for n in ("t", "done", "done2", "busy", "nope"))
    create(backend, t)
    produce(backend, t, 0, 3)
    consume(pk, backend, "--topic", t, "--group", done, "--from-beginning", "--max-messages", "3", *FAST)
    consume(pk, backend, "--topic", t, "--group", done2, "--from-beginning", "--max-messages", "1", *FAST)
    members(pk, backend, t, busy)
    wait_stable(backend, busy, 1)

    proc = ok(cg(pk, backend, "--delete", "--group", done))
    assert proc.out == f"Deletion of requested consumer groups ('{done}') was successful.\n" and proc.err == ""
    assert committed(backend, done) == {}
    assert listed(ok(cg(pk, backend, "--list")).out, busy, done, done2) == [busy, done2]
    assert cg(pk, backend, "--describe", "--group", done).err == not_found(done)

    # 4.4: the Error line (pk: on stderr), then one line per group on stdout
    proc = cg(pk, backend, "--delete", "--group", busy)
    assert proc.returncode == 1
    assert proc.err == "Error: Deletion of some consumer groups failed:\n"
    assert proc.out == f"* Group '{busy}' could not be deleted due to: {NOT_EMPTY}\n"

    proc = cg(pk, backend, "--delete", "--group", nope, "--group", busy, "--group", done2)
    assert proc.returncode == 1
    assert proc.err == "Error: Deletion of some consumer groups failed:\n"
    reasons = {busy: NOT_EMPTY, nope: NOT_FOUND}
    assert proc.out == "".join(f"* Group '{g}' could not be deleted due to: {reasons[g]}\n"
                               for g in hash_order([nope, busy])) + \
        f"\nThese consumer groups were deleted successfully: '{done2}'\n"
    assert listed(ok(cg(pk, backend, "--list")).out, busy, done, done2) == [busy]


@pytest.mark.engine_only("--all-groups would act on every group of a shared cluster")
def test_delete_all_groups(pk, backend):
    create(backend, "t")
    commit(backend, "a", {("t", 0): 0})
    commit(backend, "b", {("t", 0): 0})
    assert ok(cg(pk, backend, "--delete", "--all-groups")).out == \
        "Deletion of requested consumer groups ('a', 'b') was successful.\n"  # (HashMap order)
    # 4.4 with no group at all: nothing between the parentheses
    assert ok(cg(pk, backend, "--delete", "--all-groups")).out == \
        "Deletion of requested consumer groups () was successful.\n"


# --------------------------------------------------------------------------- --delete-offsets
def delete_offsets_table(rows):
    """4.4: TOPIC as wide as max(15, longest), PARTITION 10, STATUS 15."""
    w = max([15] + [len(t) for t, _, _ in rows])
    lines = [f"{'TOPIC':<{w}} {'PARTITION':<10} {'STATUS':<15}"] + [f"{t:<{w}} {p:<10} {s:<15}" for t, p, s in rows]
    return "\n" + "\n".join(lines) + "\n"


def test_delete_offsets(pk, backend, members):
    a, b, g, nope, nobody = (backend.topic(n) for n in ("a", "b", "g", "nope", "nobody"))
    create(backend, a, 2)
    create(backend, b)
    commit(backend, g, {(a, 0): 1, (a, 1): 1, (b, 0): 1})
    proc = ok(cg(pk, backend, "--delete-offsets", "--group", g, "--topic", a))
    assert proc.out == (f"Request succeeded for deleting offsets from group {g}.\n"
                        + delete_offsets_table([(a, 0, "Successful"), (a, 1, "Successful")]))
    assert committed(backend, g) == {(b, 0): 1}

    unknown = "Error: " + UNKNOWN_TP
    proc = cg(pk, backend, "--delete-offsets", "--group", g, "--topic", f"{b}:0", "--topic", nope)
    assert proc.returncode == 1 and proc.err == ""
    assert proc.out == (f"Request succeeded for deleting offsets from group {g}.\n"
                        + delete_offsets_table([(b, 0, "Successful"), (nope, "-", unknown)]))
    assert committed(backend, g) == {}

    commit(backend, g, {(b, 0): 1})
    proc = cg(pk, backend, "--delete-offsets", "--group", g, "--topic", f"{a}:7")
    assert proc.returncode == 1
    assert proc.err == "Error: Encountered some partition-level error, see the follow-up details.\n"
    assert proc.out == delete_offsets_table([(a, 7, unknown)])

    proc = cg(pk, backend, "--delete-offsets", "--group", nobody, "--topic", f"{a}:0")
    assert proc.returncode == 1 and proc.err == "Error: The group id does not exist.\n"
    assert proc.out == delete_offsets_table([
        (a, 0, "Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.")])


def test_delete_offsets_of_a_subscribed_topic(pk, backend, members):
    a, b, g = backend.topic("a"), backend.topic("b"), backend.topic("g")
    create(backend, a)
    create(backend, b)
    commit(backend, g, {(a, 0): 0, (b, 0): 0})
    members(pk, backend, a, g, *NO_AUTO_COMMIT)
    wait_stable(backend, g, 1)
    proc = cg(pk, backend, "--delete-offsets", "--group", g, "--topic", a, "--topic", b)
    assert proc.returncode == 1
    assert proc.err == "Error: Encountered some partition-level error, see the follow-up details.\n"
    assert proc.out == delete_offsets_table([
        (a, 0, "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a "
               "topic is forbidden while the consumer group is actively subscribed to it."),
        (b, 0, "Successful")])
    assert committed(backend, g) == {(a, 0): 0}


# --------------------------------------------------------------------------- usage errors
@pytest.mark.parametrize("args, message", [
    (["--list", "--describe"], "Option [describe] takes one of these options: [group], [all-groups]"),
    (["--describe"], "Option [describe] takes one of these options: [group], [all-groups]"),
    (["--describe", "--group", "g", "--members", "--state"],
     "Option [describe] takes at most one of these options: [members], [offsets], [state]"),
    (["--describe", "--group", "g", "--state", "Stable"], "Option [describe] does not take a value for [state]"),
    (["--delete"], "Option [delete] takes one of these options: [group], [all-groups]"),
    (["--delete", "--group", "g", "--topic", "t"],
     "The consumer does not support topic-specific offset deletion from a consumer group."),
    (["--delete-offsets", "--group", "g"], "Option [delete-offsets] takes the following options: [group], [topic]"),
    (["--reset-offsets", "--group", "g", "--dry-run", "--execute"],
     "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
    (["--reset-offsets", "--dry-run", "--to-earliest"],
     "Option [reset-offsets] takes one of these options: [group], [all-groups]"),
    (["--reset-offsets", "--group", "g", "--dry-run", "--to-latest", "--to-earliest"],
     'Option "[to-earliest]" can\'t be used with option "[to-latest]"'),
    (["--reset-offsets", "--group", "g", "--dry-run", "--to-latest", "--to-earliest", "--by-duration", "P1D"],
     'Option "[by-duration]" can\'t be used with option "[to-earliest]"'),
    (["--describe", "--group", "g", "--all-groups"], 'Option "[group]" can\'t be used with option "[all-groups]"'),
    (["--list", "--group", "g"], 'Option "[group]" can\'t be used with option "[list]"'),
    (["--describe", "--group", "g", "--topic", "t"], 'Option "[topic]" can\'t be used with option "[describe]"'),
    (["--all-groups"], "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                       "--delete-offsets, --validate-regex"),
    (["--list", "--state", "Stable,bogus"],
     "Invalid state list 'Stable,bogus'. Valid states are: CompletingRebalance, Dead, PreparingRebalance, Empty, "
     "Assigning, Reconciling, Stable"),
    (["--list", "--type", "simple"], "Invalid types list 'simple'. Valid types are: Consumer, Classic"),
    (["--list", "--timeout", "soon"], FAILED + "Cannot parse argument 'soon' of option timeout"),
    (["--delete-offsets", "--group", "a", "--group", "b", "--topic", "t"],
     FAILED + "Found multiple arguments for option group, but you asked for only one"),
    (["--delete-offsets", "--group", "a", "--topic", "t:1:2"], "Invalid topic arg 't:1:2', expected topic name and partitions"),
    # Kafka parses its options outside its try block: the JVM reports jopt-simple's exception
    (["--list", "--bogus"], 'Exception in thread "main" joptsimple.UnrecognizedOptionException: bogus is not a '
                            'recognized option'),
    (["--describe", "--group"], 'Exception in thread "main" joptsimple.OptionMissingRequiredArgumentException: '
                                'Option group requires an argument'),
    (["--list", "--members", "--verbose"],
     'Exception in thread "main" joptsimple.UnavailableOptionException: Option(s) [members, verbose] are '
     'unavailable given other options on the command line'),
    (["--delete", "--group", "g", "--state"],
     'Exception in thread "main" joptsimple.UnavailableOptionException: Option(s) [state] are unavailable given '
     'other options on the command line'),
])
def test_usage_errors(pk, backend, args, message):
    """Checked before the cluster is asked anything: the same errors on both backends."""
    proc = cg(pk, backend, *args)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\n"


def test_reset_usage_error_after_warning(pk, backend):
    proc = cg(pk, backend, "--reset-offsets", "--to-earliest")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == RESET_WARNING + "\nOption [reset-offsets] takes one of these options: [group], [all-groups]\n"


def test_help_and_no_arguments(plain):
    proc = plain("pk-run-class", CLASS)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("This tool helps to list, describe, delete and manage the offsets of consumer groups.\n")
    proc = ok(plain("pk-run-class", CLASS, "--help"))
    assert "--reset-offsets" in proc.out and "--bootstrap-server" in proc.out
    same = plain("pk-run-class", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--list")
    assert same.returncode == 0 and same.out == ""


# --------------------------------------------------------------------------- --bootstrap-server
@pytest.mark.server_only("the remote backend's own options")
def test_command_config_and_x(pk, backend, tmp_path):
    props = tmp_path / "admin.properties"
    props.write_text("request.timeout.ms=20000\nsecurity.protocol=PLAINTEXT\n")
    assert ok(cg(pk, backend, "--command-config", str(props), "-X", "client.id=pk-test", "--list")).err == ""
    fails = cg(pk, backend, "--command-config", str(tmp_path / "missing"), "--list")
    assert fails.returncode == 1 and fails.err == FAILED + str(tmp_path / "missing") + "\n"
    props.write_text("bogus.key=1\n")
    proc = cg(pk, backend, "--command-config", str(props), "--list")
    assert proc.returncode == 1 and proc.err == FAILED + "Unknown client configuration: bogus.key\n"


@pytest.mark.parametrize("address, message", [
    ("localhost", "Please provide valid host:port like host1:9091,host2:9092"),
    ("", "Error while validating the bootstrap address"),
])
def test_invalid_bootstrap_server(plain, address, message):
    proc = plain("pk-run-class", CLASS, "--bootstrap-server", address, "--list")
    assert proc.returncode == 1 and proc.out == "" and proc.err == message + "\n"


def test_unreachable_cluster_fails_within_the_timeout(plain):
    closed = f"127.0.0.1:{free_port()}"
    for args, call in ((["--list"], "findAllBrokers"),
                       (["--describe", "--group", "g"], "describeConsumerGroups(api=FIND_COORDINATOR)")):
        start = time.monotonic()
        proc = plain("pk-run-class", CLASS, "--bootstrap-server", closed, "--timeout", "1500", *args, timeout=30)
        assert proc.returncode == 1 and proc.out == ""
        assert proc.err == (FAILED + "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node "
                            f"assignment. Call: {call}\n")
        assert 1.4 < time.monotonic() - start < 10


# --------------------------------------------------------------------------- time parsing
# Expected values come from running Kafka 3.7's Utils.getDateTime and java.time on a JVM.
@pytest.mark.parametrize("text, expected", [
    ("2024-01-01T00:00:00.000", 1704067200000),
    ("2024-01-01T00:00:00.000+05:30", 1704047400000),
    ("2024-01-01T00:00:00.000+05", 1704049200000),
    ("2024-01-01T00:00:00.000+0530", 1704049200000),  # "X" reads the hours only
    ("2024-01-01T00:00:00.000-08:00", 1704096000000),
    ("2024-1-1T1:2:3.4", 1704070923004),
    ("2024-01-01T00:00:00.000Zjunk", 1704067200000),
    ("1969-12-31T23:59:59.999", -1),
    ("0001-01-01T00:00:00.000", -62135769600000),  # Julian calendar before 1582
    ("2024-02-30T00:00:00.000", 'Unparseable date: "2024-02-30T00:00:00.000Z"'),
    ("2024-01-01T00:00:00.1000", 'Unparseable date: "2024-01-01T00:00:00.1000Z"'),
    ("2024-01-01t00:00:00.000", "Error parsing timestamp. It does not contain a 'T' according to ISO8601 format"),
])
def test_get_date_time_matches_java(text, expected):
    if isinstance(expected, int):
        assert get_date_time(text) == expected
    else:
        with pytest.raises(CommandFailure) as exc:
            get_date_time(text)
        assert str(exc.value) == expected


@pytest.mark.parametrize("text, expected", [
    ("PT1H", 3600 * 10**9), ("P1DT2H3M4.000000005S", 93784000000005), ("-PT1H", -3600 * 10**9),
    ("pt1m", 60 * 10**9), ("PT1,2S", 1_200_000_000), ("-P-1DT-1H", 90000 * 10**9), ("PT-1.5S", -1_500_000_000),
    ("PT", None), ("P1W", None), ("PT.5S", None), ("1h", None),
])
def test_duration_parse_matches_java(text, expected):
    if expected is None:
        with pytest.raises(CommandFailure, match="^Text cannot be parsed to a Duration$"):
            parse_duration_ns(text)
    else:
        assert parse_duration_ns(text) == expected


def test_duration_overflow_texts():
    now = time.time_ns() // 1000 * 1000
    with pytest.raises(CommandFailure, match="^Instant exceeds minimum or maximum instant$"):
        instant_minus_ms(now, parse_duration_ns("PT9223372036854775807S"))
    with pytest.raises(CommandFailure, match="^long overflow$"):
        instant_minus_ms(now, parse_duration_ns("-PT9223372036854775807S"))
