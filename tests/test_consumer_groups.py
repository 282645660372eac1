"""pk-run-class kafka.admin.ConsumerGroupCommand on the bundled engine (kafka-cli.md §4.3,
Kafka 3.7's Scala ConsumerGroupCommand). Groups are made by real pk-console-consumer
processes; committed offsets are checked through the engine."""

from __future__ import annotations

import datetime
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import tool_path
from pk.commands.consumer_groups import (
    CommandFailure,
    get_date_time,
    instant_minus_ms,
    parse_duration_ns,
)
from pk.engine import records
from pk.engine.engine import Engine
from pk.engine.groups import GroupCoordinator
from pk.engine.offsets import OffsetStore

CLASS = "kafka.admin.ConsumerGroupCommand"
FAST = ["--consumer-property", "session.timeout.ms=1500", "--consumer-property", "heartbeat.interval.ms=100"]
NO_AUTO_COMMIT = ["--consumer-property", "auto.commit.interval.ms=600000"]
HOUR = 3_600_000
RESET_HEADER = f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"
NOT_EMPTY = ("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupNotEmptyException: "
             "The group is not empty.")
NOT_FOUND = ("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupIdNotFoundException: "
             "The group id does not exist.")
RESET_WARNING = (
    "WARN: No action will be performed as the --execute option is missing.In a future major release, the "
    "default behavior of this command will be to prompt the user before executing the reset rather than "
    "doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and "
    "want to keep the current default behavior without prompting.")


# --------------------------------------------------------------------------- helpers
def cg(pk, *args):
    return pk("pk-run-class", CLASS, *args)


def ok(proc):
    assert proc.returncode == 0, (proc.out, proc.err)
    assert "Traceback" not in proc.err
    return proc


def now_ms() -> int:
    return int(time.time() * 1000)


def create(pk, topic, partitions=1):
    proc = pk("pk-topics", "--create", "--topic", topic, "--partitions", str(partitions))
    assert proc.returncode == 0, proc.err


def produce(data_dir, topic, partition, count, timestamps=None, prefix=None):
    prefix = prefix or f"{topic}{partition}-"
    ts = timestamps or [now_ms()] * count
    with Engine(data_dir) as engine:
        engine.partition(topic, partition).append_batches([records.encode_batch(
            [(None, f"{prefix}{i}".encode(), (), ts[i]) for i in range(count)])])


def committed(data_dir, group):
    with Engine(data_dir) as engine:
        return OffsetStore(engine).committed(group)


def commit(data_dir, group, offsets):
    with Engine(data_dir) as engine:
        OffsetStore(engine).commit(group, offsets)


def group_state(data_dir, group):
    with Engine(data_dir) as engine:
        def counts(topics):
            return {t: engine.topic(t).partitions for t in topics if t in engine.list_topics()}
        return GroupCoordinator(engine.groups_dir, group, counts).describe()


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def consume(pk, *args, timeout_ms=1500):
    proc = pk("pk-console-consumer", *args, "--timeout-ms", str(timeout_ms))
    assert proc.returncode == 0, (proc.out, proc.err)
    return proc


class Member:
    """A pk-console-consumer in a group, running until stopped by its pid."""

    def __init__(self, pk, topic, group, *extra):
        self.proc = subprocess.Popen([tool_path("pk-console-consumer"), "--topic", topic, "--group", group,
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
            self.proc.communicate(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def members():
    started = []

    def start(pk, topic, group, *extra):
        member = Member(pk, topic, group, *extra)
        started.append(member)
        return member

    yield start
    for member in started:
        member.stop()


def wait_stable(data_dir, group, count):
    def stable():
        state = group_state(data_dir, group)
        return state.state == "Stable" and len(state.members) == count and state
    state = wait_for(stable)
    assert state, group_state(data_dir, group)
    return state


def offsets_table(rows, consumer_w=15, host_w=15, group_w=15, topic_w=15):
    fmt = f"{{:<{group_w}}} {{:<{topic_w}}} {{:<10}} {{:<15}} {{:<15}} {{:<15}} {{:<{consumer_w}}} {{:<{host_w}}} {{}}"
    lines = [fmt.format("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                        "CONSUMER-ID", "HOST", "CLIENT-ID")]
    lines += [fmt.format(*map(str, row)) for row in rows]
    return "\n" + "\n".join(lines) + "\n"


def reset_table(group, offsets):
    lines = [RESET_HEADER] + [f"{group:<30} {t:<30} {p:<10} {o:<15}" for (t, p), o in sorted(offsets.items())]
    return "\n" + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- --list
def test_list_and_list_state(pk, data_dir, members):
    assert ok(cg(pk, "--list")).out == ""
    assert ok(cg(pk, "--list", "--state")).out == "GROUP           STATE\n"
    create(pk, "t", 2)
    produce(data_dir, "t", 0, 3)
    consume(pk, "--topic", "t", "--group", "quiet-group-name", "--from-beginning", "--max-messages", "2")
    members(pk, "t", "live")
    wait_stable(data_dir, "live", 1)
    assert ok(cg(pk, "--list")).out == "live\nquiet-group-name\n"
    # `%-<W>s %s` with W = max(15, the longest group id)
    assert ok(cg(pk, "--list", "--state")).out == (
        f"{'GROUP':<16} STATE\n{'live':<16} Stable\nquiet-group-name Empty\n")
    assert ok(cg(pk, "--list", "--state", "Stable")).out == f"{'GROUP':<15} STATE\n{'live':<15} Stable\n"
    assert ok(cg(pk, "--list", "--state", "Empty,Dead")).out == f"{'GROUP':<16} STATE\nquiet-group-name Empty\n"
    assert ok(cg(pk, "--list", "--state=Stable,Empty")).out.count("\n") == 3
    # 3.7 matches state names exactly (3.8 ignores case)
    proc = cg(pk, "--list", "--state", "stable")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == ("Invalid state list 'stable'. Valid states are: PreparingRebalance, CompletingRebalance, "
                        "Stable, Dead, Empty\n")


# --------------------------------------------------------------------------- --describe
def test_describe_stable_then_empty_group(pk, data_dir, members):
    create(pk, "orders")
    create(pk, "old")
    produce(data_dir, "orders", 0, 10)
    produce(data_dir, "old", 0, 3)
    consume(pk, "--topic", "orders", "--group", "g", "--from-beginning", "--max-messages", "4", *FAST)
    consume(pk, "--topic", "old", "--group", "g", "--from-beginning", "--max-messages", "2", *FAST)
    assert committed(data_dir, "g") == {("orders", 0): 4, ("old", 0): 2}

    # A live member that has read everything but not committed yet (auto-commit far away).
    member = members(pk, "orders", "g", *NO_AUTO_COMMIT)
    member.wait_for_records(6)
    state = wait_stable(data_dir, "g", 1)
    (mid,) = state.members
    proc = ok(cg(pk, "--describe", "--group", "g"))
    assert proc.err == ""
    assert proc.out == offsets_table([
        ("g", "orders", 0, 4, 10, 6, mid, "/127.0.0.1", "console-consumer"),
        ("g", "old", 0, 2, 3, 1, "-", "-", "-"),
    ], consumer_w=len(mid))
    # --offsets is the default sub-action
    assert ok(cg(pk, "--describe", "--group", "g", "--offsets")).out == proc.out

    member.stop()  # commits what it read, then leaves
    proc = ok(cg(pk, "--describe", "--group", "g"))
    assert proc.err == "\nConsumer group 'g' has no active members.\n"
    assert proc.out == offsets_table([
        ("g", "old", 0, 2, 3, 1, "-", "-", "-"),
        ("g", "orders", 0, 10, 10, 0, "-", "-", "-"),
    ])


def test_describe_wide_values_and_missing_offsets(pk, data_dir, members):
    topic = "a-topic-name-longer-than-fifteen"
    create(pk, topic)
    produce(data_dir, topic, 0, 2)
    group = "a-group-name-longer-than-fifteen"
    # Without commits a member's row has no CURRENT-OFFSET and no LAG.
    members(pk, topic, group, "--consumer-property", "enable.auto.commit=false")
    (mid,) = wait_stable(data_dir, group, 1).members
    out = ok(cg(pk, "--describe", "--group", group)).out
    assert out == offsets_table([(group, topic, 0, "-", 2, "-", mid, "/127.0.0.1", "console-consumer")],
                                consumer_w=len(mid), group_w=len(group), topic_w=len(topic))


def test_describe_unknown_group(pk, data_dir):
    proc = cg(pk, "--describe", "--group", "nope")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == "Error: Consumer group 'nope' does not exist.\n"
    for flag in ("--members", "--state"):
        proc = cg(pk, "--describe", "--group", "nope", flag)
        assert proc.returncode == 1 and proc.out == ""
        assert proc.err == "Error: Consumer group 'nope' does not exist.\n"


def test_describe_several_groups_sorted_and_all_groups(pk, data_dir):
    create(pk, "t")
    produce(data_dir, "t", 0, 5)
    commit(data_dir, "b", {("t", 0): 1})
    commit(data_dir, "a", {("t", 0): 3})
    proc = cg(pk, "--describe", "--group", "b", "--group", "missing", "--group", "a")
    assert proc.returncode == 1
    assert proc.out == (offsets_table([("a", "t", 0, 3, 5, 2, "-", "-", "-")])
                        + offsets_table([("b", "t", 0, 1, 5, 4, "-", "-", "-")]))
    assert proc.err == ("\nConsumer group 'a' has no active members.\n\nConsumer group 'b' has no active members.\n"
                        "Error: Consumer group 'missing' does not exist.\n")
    proc = ok(cg(pk, "--describe", "--all-groups"))
    assert proc.out == (offsets_table([("a", "t", 0, 3, 5, 2, "-", "-", "-")])
                        + offsets_table([("b", "t", 0, 1, 5, 4, "-", "-", "-")]))


def test_describe_members_and_state(pk, data_dir, members):
    create(pk, "m", 3)
    members(pk, "m", "g")
    members(pk, "m", "g")
    state = wait_stable(data_dir, "g", 2)
    ids = sorted(state.members)
    counts = {mid: sum(len(ps) for ps in state.members[mid].assignment.values()) for mid in ids}
    assert sorted(counts.values()) == [1, 2]
    w = len(ids[0])

    def row(*cols):
        return f"{cols[0]:<15} {cols[1]:<{w}} {cols[2]:<15} {cols[3]:<16} {cols[4]:<15} "

    header = row("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    proc = ok(cg(pk, "--describe", "--group", "g", "--members"))
    assert proc.out == "\n" + header + "\n" + "".join(
        row("g", mid, "/127.0.0.1", "console-consumer", counts[mid]) + "\n" for mid in ids)
    proc = ok(cg(pk, "--describe", "--group", "g", "--members", "--verbose"))
    assignment = {mid: "m(" + ",".join(str(p) for p in sorted(state.members[mid].assignment["m"])) + ")"
                  for mid in ids}
    assert proc.out == "\n" + header + "ASSIGNMENT\n" + "".join(
        row("g", mid, "/127.0.0.1", "console-consumer", counts[mid]) + assignment[mid] + "\n" for mid in ids)

    proc = ok(cg(pk, "--describe", "--group", "g", "--state"))
    assert proc.out == (f"\n{'GROUP':<25} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<15} #MEMBERS"
                        f"\n{'g':<25} {'- (0)':<25} {'range':<20} {'Stable':<15} 2\n")
    assert proc.err == ""


def test_describe_members_and_state_of_empty_group(pk, data_dir):
    create(pk, "t")
    commit(data_dir, "g", {("t", 0): 0})
    proc = ok(cg(pk, "--describe", "--group", "g", "--members", "--verbose"))
    assert proc.out == "" and proc.err == "\nConsumer group 'g' has no active members.\n"
    proc = ok(cg(pk, "--describe", "--group", "g", "--state"))
    assert proc.err == "\nConsumer group 'g' has no active members.\n"
    assert proc.out == (f"\n{'GROUP':<25} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<15} #MEMBERS"
                        f"\n{'g':<25} {'- (0)':<25} {'':<20} {'Empty':<15} 0\n")


def test_offsets_of_a_deleted_topic_are_gone(pk, data_dir):
    create(pk, "kept")
    create(pk, "gone")
    commit(data_dir, "g", {("kept", 0): 0, ("gone", 0): 0})
    commit(data_dir, "only-gone", {("gone", 0): 0})
    assert pk("pk-topics", "--delete", "--topic", "gone").returncode == 0
    # as a broker does when a topic is deleted, the group forgets the topic's offsets
    assert ok(cg(pk, "--describe", "--group", "g")).out == offsets_table([("g", "kept", 0, 0, 0, 0, "-", "-", "-")])
    assert ok(cg(pk, "--list")).out == "g\n"
    assert cg(pk, "--describe", "--group", "only-gone").err == "Error: Consumer group 'only-gone' does not exist.\n"


def test_describe_rebalancing_group(pk, data_dir):
    create(pk, "t", 2)
    produce(data_dir, "t", 0, 4)
    commit(data_dir, "g", {("t", 0): 1})
    # A member that joined but has not synced yet: the group is rebalancing. (Made through the
    # engine, since a real consumer syncs within milliseconds.)
    with Engine(data_dir) as engine:
        mid = GroupCoordinator(engine.groups_dir, "g", lambda topics: {"t": 2}).join(
            "client", "/127.0.0.1", ["t"], ["range"], 60000, 60000)
    assert group_state(data_dir, "g").state == "PreparingRebalance"
    proc = ok(cg(pk, "--describe", "--group", "g"))
    assert proc.err == "\nWarning: Consumer group 'g' is rebalancing.\n"
    # a broker describes a rebalancing group without assignments
    assert proc.out == offsets_table([("g", "t", 0, 1, 4, 3, "-", "-", "-")])
    proc = ok(cg(pk, "--describe", "--group", "g", "--state"))
    assert proc.out == (f"\n{'GROUP':<25} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<15} #MEMBERS"
                        f"\n{'g':<25} {'- (0)':<25} {'':<20} {'PreparingRebalance':<15} 1\n")
    proc = ok(cg(pk, "--describe", "--group", "g", "--members"))
    assert proc.out == (f"\n{'GROUP':<15} {'CONSUMER-ID':<{len(mid)}} {'HOST':<15} {'CLIENT-ID':<15} {'#PARTITIONS':<15} \n"
                        f"{'g':<15} {mid} {'/127.0.0.1':<15} {'client':<15} {'0':<15} \n")
    proc = cg(pk, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--execute")
    assert proc.returncode == 1 and proc.err == (
        "Error: Assignments can only be reset if the group 'g' is inactive, but the current state is "
        "PreparingRebalance.\n")
    assert committed(data_dir, "g") == {("t", 0): 1}


# --------------------------------------------------------------------------- --reset-offsets
@pytest.fixture
def reset_setup(pk, data_dir):
    """Topic r: partition 0 has 10 records an hour apart ending 1 h ago, partition 1 has 6 records
    two hours apart ending 2 h ago. Group g (no members) committed r-0 at 5 and r-1 at 2."""
    create(pk, "r", 2)
    now = now_ms()
    ts0 = [now - (10 - i) * HOUR for i in range(10)]
    ts1 = [now - (6 - i) * 2 * HOUR for i in range(6)]
    produce(data_dir, "r", 0, 10, ts0)
    produce(data_dir, "r", 1, 6, ts1)
    commit(data_dir, "g", {("r", 0): 5, ("r", 1): 2})
    return {"ts0": ts0, "ts1": ts1}


def utc_text(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def _scenarios(setup, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("r,0,7\nr,1,1\n")
    return {
        "to-earliest": (["--to-earliest"], {0: 0, 1: 0}, []),
        "to-latest": (["--to-latest"], {0: 10, 1: 6}, []),
        "to-current": (["--to-current"], {0: 5, 1: 2}, []),
        "to-offset": (["--to-offset", "8"], {0: 8, 1: 6},
                      ["WARN New offset (8) is higher than latest offset for topic partition r-1. Value will be set to 6"]),
        "shift-by": (["--shift-by", "-3"], {0: 2, 1: 0},
                     ["WARN New offset (-1) is lower than earliest offset for topic partition r-1. Value will be set to 0"]),
        # r-0 record 3 is 7 h old: the first record at or after it in r-1 is its record 3 (6 h old)
        "to-datetime": (["--to-datetime", utc_text(setup["ts0"][3])], {0: 3, 1: 3}, []),
        "by-duration": (["--by-duration", "PT5H30M"], {0: 5, 1: 4}, []),
        "from-file": (["--from-file", str(plan)], {0: 7, 1: 1}, []),
    }


@pytest.mark.parametrize("scenario", ["to-earliest", "to-latest", "to-current", "to-offset", "shift-by",
                                      "to-datetime", "by-duration", "from-file"])
def test_reset_offsets_dry_run_then_execute(pk, data_dir, reset_setup, tmp_path, scenario):
    args, expected, warnings = _scenarios(reset_setup, tmp_path)[scenario]
    expected = {("r", p): o for p, o in expected.items()}
    scope = [] if scenario == "from-file" else ["--topic", "r"]
    before = committed(data_dir, "g")

    dry = ok(cg(pk, "--reset-offsets", "--group", "g", *scope, *args, "--dry-run"))
    assert dry.out == reset_table("g", expected)
    log_lines = [line.split("] ", 1)[1] for line in dry.err.splitlines()]
    assert log_lines == [w + " (kafka.admin.ConsumerGroupCommand$)" for w in warnings]
    assert committed(data_dir, "g") == before  # a dry run changes nothing

    done = ok(cg(pk, "--reset-offsets", "--group", "g", *scope, *args, "--execute"))
    assert done.out == dry.out
    assert committed(data_dir, "g") == expected

    # A member started afterwards resumes at the new offsets.
    proc = consume(pk, "--topic", "r", "--group", "g", "--property", "print.partition=true",
                   "--property", "print.offset=true", *FAST)
    first = {}
    for line in proc.out.splitlines():
        part, off, _ = line.split("\t")
        first.setdefault(int(part.split(":")[1]), int(off.split(":")[1]))
    assert first == {p: o for (_, p), o in expected.items() if o < (10, 6)[p]}
    assert len(proc.out.splitlines()) == (10 - expected[("r", 0)]) + (6 - expected[("r", 1)])


def test_reset_default_is_dry_run_with_warning(pk, data_dir, reset_setup):
    proc = ok(cg(pk, "--reset-offsets", "--group", "g", "--topic", "r:1", "--to-earliest"))
    assert proc.err == RESET_WARNING + "\n"
    assert proc.out == reset_table("g", {("r", 1): 0})
    assert committed(data_dir, "g") == {("r", 0): 5, ("r", 1): 2}


def test_reset_to_datetime_zones_and_empty_partitions(pk, data_dir, reset_setup):
    ts = reset_setup["ts0"][9]  # an hour ago
    text = datetime.datetime.fromtimestamp(ts / 1000, datetime.timezone(datetime.timedelta(hours=2))) \
        .strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+02:00"
    proc = ok(cg(pk, "--reset-offsets", "--group", "g", "--all-topics", "--to-datetime", text, "--dry-run"))
    # r-1's newest record is 2 h old, older than the time asked for: Kafka falls back to the log end
    assert proc.out == ("\nWarn: Partition 1 from topic r is empty. Falling back to latest known offset.\n"
                        + reset_table("g", {("r", 0): 9, ("r", 1): 6}))


def test_reset_export_and_import(pk, data_dir, reset_setup, tmp_path):
    proc = ok(cg(pk, "--reset-offsets", "--group", "g", "--topic", "r", "--shift-by", "1", "--export", "--dry-run"))
    assert proc.out == "r,0,6\nr,1,3\n\n"
    commit(data_dir, "h", {("r", 0): 1})
    proc = ok(cg(pk, "--reset-offsets", "--group", "g", "--group", "h", "--all-topics", "--to-latest",
                 "--export", "--dry-run"))
    assert proc.out == "g,r,0,10\ng,r,1,6\nh,r,0,10\n\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(proc.out)
    proc = ok(cg(pk, "--reset-offsets", "--group", "g", "--group", "h", "--from-file", str(plan), "--execute"))
    assert proc.out == "\n" + "\n".join([RESET_HEADER] + [
        f"{g:<30} {'r':<30} {p:<10} {o:<15}" for g, p, o in (("g", 0, 10), ("g", 1, 6), ("h", 0, 10))]) + "\n"
    assert committed(data_dir, "g") == {("r", 0): 10, ("r", 1): 6}
    assert committed(data_dir, "h") == {("r", 0): 10}
    proc = cg(pk, "--reset-offsets", "--group", "g", "--group", "x", "--from-file", str(plan), "--dry-run")
    assert proc.returncode == 1 and proc.err == "Error: No reset plan for group x found\n"


def test_export_quotes_as_jackson_does(pk, data_dir, tmp_path):
    # jackson-dataformat-csv quotes Strings longer than 24 chars or holding a char below '-'
    long_topic = "a-topic-name-of-25-chars-"
    create(pk, long_topic)
    create(pk, "short")
    produce(data_dir, long_topic, 0, 3)
    produce(data_dir, "short", 0, 3)
    group = "my group"
    commit(data_dir, group, {(long_topic, 0): 1, ("short", 0): 1})
    commit(data_dir, "g2", {("short", 0): 2})
    proc = ok(cg(pk, "--reset-offsets", "--group", group, "--group", "g2", "--all-topics", "--to-earliest",
                 "--export", "--dry-run"))
    assert proc.out == f'g2,short,0,0\n"my group","{long_topic}",0,0\n"my group",short,0,0\n\n'
    plan = tmp_path / "plan.csv"
    plan.write_text(proc.out)
    ok(cg(pk, "--reset-offsets", "--group", group, "--group", "g2", "--from-file", str(plan), "--execute"))
    assert committed(data_dir, group) == {(long_topic, 0): 0, ("short", 0): 0}
    assert committed(data_dir, "g2") == {("short", 0): 0}


def test_reset_of_a_new_group_creates_its_offsets(pk, data_dir, reset_setup):
    ok(cg(pk, "--reset-offsets", "--group", "fresh", "--topic", "r:0", "--to-offset", "4", "--execute"))
    assert committed(data_dir, "fresh") == {("r", 0): 4}
    assert "fresh" in ok(cg(pk, "--list")).out.split()


def test_reset_refused_while_group_is_active(pk, data_dir, reset_setup, members):
    members(pk, "r", "g", *NO_AUTO_COMMIT)
    wait_stable(data_dir, "g", 1)
    for mode in ("--dry-run", "--execute"):
        proc = cg(pk, "--reset-offsets", "--group", "g", "--topic", "r", "--to-earliest", mode)
        assert proc.returncode == 1
        assert proc.err == ("Error: Assignments can only be reset if the group 'g' is inactive, but the current "
                            "state is Stable.\n")
        assert proc.out == "\n" + RESET_HEADER + "\n"  # Kafka prints the table's header anyway
    assert committed(data_dir, "g") == {("r", 0): 5, ("r", 1): 2}


@pytest.mark.parametrize("args, message", [
    (["--topic", "r", "--shift-by", "1", "--group", "nobody"],
     "Cannot shift offset for partition r-0 since there is no current committed offset"),
    (["--topic", "r:x", "--to-earliest"], "Invalid partition 'x' specified in topic arg 'r:x''"),
    (["--topic", "r:", "--to-earliest"], "Invalid topic arg 'r:', expected topic name and partitions"),
    (["--to-earliest"], "One of the reset scopes should be defined: --all-topics, --topic."),
    (["--topic", "r"], "Option '[reset-offsets]' requires one of the following scenarios: HashSet([by-duration], "
                       "[to-offset], [from-file], [to-datetime], [to-earliest], [to-current], [shift-by], [to-latest])"),
    (["--topic", "r", "--to-offset", "x"],
     "Error: Executing consumer group command failed due to Cannot parse argument 'x' of option to-offset"),
    (["--topic", "nope", "--to-earliest"],
     "Error: Executing consumer group command failed due to org.apache.kafka.common.errors."
     "UnknownTopicOrPartitionException: This server does not host this topic-partition."),
    (["--topic", "r", "--to-datetime", "2024-01-01"],
     "Error: Executing consumer group command failed due to Error parsing timestamp. It does not contain a 'T' "
     "according to ISO8601 format"),
    (["--topic", "r", "--to-datetime", "2024-01-01T00:00:00"],
     'Error: Executing consumer group command failed due to Unparseable date: "2024-01-01T00:00:00Z"'),
    (["--topic", "r", "--by-duration", "1h"],
     "Error: Executing consumer group command failed due to Text cannot be parsed to a Duration"),
    (["--topic", "r", "--from-file", "/no/such/plan.csv"],
     "Error: Executing consumer group command failed due to /no/such/plan.csv"),
    (["--topic", "r", "--to-offset", "1", "--to-offset", "2"],
     "Error: Executing consumer group command failed due to Found multiple arguments for option to-offset, "
     "but you asked for only one"),
])
def test_reset_errors(pk, data_dir, reset_setup, args, message):
    if "--group" not in args:
        args = ["--group", "g", *args]
    proc = cg(pk, "--reset-offsets", *args, "--dry-run")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\n"
    assert committed(data_dir, "g") == {("r", 0): 5, ("r", 1): 2}


# --------------------------------------------------------------------------- --delete
def test_delete_groups(pk, data_dir, members):
    create(pk, "t")
    produce(data_dir, "t", 0, 3)
    consume(pk, "--topic", "t", "--group", "done", "--from-beginning", "--max-messages", "3", *FAST)
    consume(pk, "--topic", "t", "--group", "done2", "--from-beginning", "--max-messages", "1", *FAST)
    members(pk, "t", "busy")
    wait_stable(data_dir, "busy", 1)

    proc = ok(cg(pk, "--delete", "--group", "done"))
    assert proc.out == "Deletion of requested consumer groups ('done') was successful.\n" and proc.err == ""
    assert committed(data_dir, "done") == {}
    assert ok(cg(pk, "--list")).out == "busy\ndone2\n"
    assert cg(pk, "--describe", "--group", "done").err == "Error: Consumer group 'done' does not exist.\n"

    proc = cg(pk, "--delete", "--group", "busy")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == ("Error: Deletion of some consumer groups failed:\n"
                        f"* Group 'busy' could not be deleted due to: {NOT_EMPTY}\n")

    proc = cg(pk, "--delete", "--group", "nope", "--group", "busy", "--group", "done2")
    assert proc.returncode == 1
    assert proc.err == ("Error: Deletion of some consumer groups failed:\n"
                        f"* Group 'busy' could not be deleted due to: {NOT_EMPTY}\n"
                        f"* Group 'nope' could not be deleted due to: {NOT_FOUND}\n")
    assert proc.out == "\nThese consumer groups were deleted successfully: 'done2'\n"
    assert ok(cg(pk, "--list")).out == "busy\n"


def test_delete_all_groups(pk, data_dir):
    create(pk, "t")
    commit(data_dir, "a", {("t", 0): 0})
    commit(data_dir, "b", {("t", 0): 0})
    assert ok(cg(pk, "--delete", "--all-groups")).out == "Deletion of requested consumer groups ('a', 'b') was successful.\n"
    # Scala's mkString on nothing: the quotes stay
    assert ok(cg(pk, "--delete", "--all-groups")).out == "Deletion of requested consumer groups ('') was successful.\n"


# --------------------------------------------------------------------------- --delete-offsets
def delete_offsets_table(rows):
    lines = [f"{'TOPIC':<30} {'PARTITION':<15} {'STATUS':<15}"] + [f"{t:<30} {p:<15} {s:<15}" for t, p, s in rows]
    return "\n" + "\n".join(lines) + "\n"


def test_delete_offsets(pk, data_dir, members):
    create(pk, "a", 2)
    create(pk, "b")
    commit(data_dir, "g", {("a", 0): 1, ("a", 1): 1, ("b", 0): 1})
    proc = ok(cg(pk, "--delete-offsets", "--group", "g", "--topic", "a"))
    assert proc.out == ("Request succeed for deleting offsets with topic a group g\n"
                        + delete_offsets_table([("a", 0, "Successful"), ("a", 1, "Successful")]))
    assert committed(data_dir, "g") == {("b", 0): 1}

    unknown = ("Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not "
               "host this topic-partition.")
    proc = cg(pk, "--delete-offsets", "--group", "g", "--topic", "b:0", "--topic", "nope")
    assert proc.returncode == 1 and proc.err == ""
    assert proc.out == ("Request succeed for deleting offsets with topic b:0, nope group g\n"
                        + delete_offsets_table([("b", 0, "Successful"), ("nope", "Not Provided", unknown)]))
    assert committed(data_dir, "g") == {}

    commit(data_dir, "g", {("b", 0): 1})
    proc = cg(pk, "--delete-offsets", "--group", "g", "--topic", "a:7")
    assert proc.returncode == 1
    assert proc.err == "Error: Encounter some partition level error, see the follow-up details:\n"
    assert proc.out == delete_offsets_table([("a", 7, unknown)])

    proc = cg(pk, "--delete-offsets", "--group", "nobody", "--topic", "a:0")
    assert proc.returncode == 1 and proc.err == "Error: 'nobody' does not exist.\n"
    assert proc.out == delete_offsets_table([
        ("a", 0, "Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.")])


def test_delete_offsets_of_a_subscribed_topic(pk, data_dir, members):
    create(pk, "a")
    create(pk, "b")
    commit(data_dir, "g", {("a", 0): 0, ("b", 0): 0})
    members(pk, "a", "g", *NO_AUTO_COMMIT)
    wait_stable(data_dir, "g", 1)
    proc = cg(pk, "--delete-offsets", "--group", "g", "--topic", "a", "--topic", "b")
    assert proc.returncode == 1
    assert proc.err == "Error: Encounter some partition level error, see the follow-up details:\n"
    assert proc.out == delete_offsets_table([
        ("a", 0, "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a "
                 "topic is forbidden while the consumer group is actively subscribed to it."),
        ("b", 0, "Successful")])
    assert committed(data_dir, "g") == {("a", 0): 0}


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
                       "--delete-offsets"),
    (["--list", "--state", "Stable,bogus"],
     "Invalid state list 'Stable,bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty"),
    (["--list", "--timeout", "soon"],
     "Error: Executing consumer group command failed due to Cannot parse argument 'soon' of option timeout"),
    (["--delete-offsets", "--group", "a", "--group", "b", "--topic", "t"],
     "Error: Executing consumer group command failed due to Found multiple arguments for option group, but you "
     "asked for only one"),
    (["--delete-offsets", "--group", "a", "--topic", "t:1:2"], "Invalid topic arg 't:1:2', expected topic name and partitions"),
    # 3.7 parses its options outside its try block: the JVM reports jopt-simple's exception
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
def test_usage_errors(pk, args, message):
    proc = cg(pk, *args)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\n"


def test_reset_usage_error_after_warning(pk):
    proc = cg(pk, "--reset-offsets", "--to-earliest")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == RESET_WARNING + "\nOption [reset-offsets] takes one of these options: [group], [all-groups]\n"


def test_help_and_no_arguments(pk):
    proc = cg(pk)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("This tool helps to list all consumer groups, describe a consumer group, delete "
                               "consumer group info, or reset consumer group offsets.\n")
    proc = ok(cg(pk, "--help"))
    assert "--reset-offsets" in proc.out
    same = pk("pk-run-class", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--list")
    assert same.returncode == 0 and same.out == ""


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
