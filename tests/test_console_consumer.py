"""pk-console-consumer as an installed tool on the bundled engine (kafka-cli.md §3)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time

import pytest

from conftest import tool_path
from pk.engine import records
from pk.engine.engine import Engine
from pk.engine.groups import GroupCoordinator
from pk.engine.offsets import OffsetStore

FAST_GROUP = ["--consumer-property", "heartbeat.interval.ms=100",
              "--consumer-property", "session.timeout.ms=1500",
              "--consumer-property", "auto.commit.interval.ms=200"]


def now_ms() -> int:
    return int(time.time() * 1000)


def produce(data_dir, topic, partition, items, compression=0):
    """Append (key, value[, headers]) items as one batch straight through the engine."""
    with Engine(data_dir) as engine:
        ts = now_ms()
        recs = [(it[0], it[1], it[2] if len(it) > 2 else (), ts + i) for i, it in enumerate(items)]
        return engine.partition(topic, partition).append_batches(
            [records.encode_batch(recs, compression_type=compression)])


def create(pk, topic, partitions=1):
    proc = pk("pk-topics", "--create", "--topic", topic, "--partitions", str(partitions))
    assert proc.returncode == 0, proc.err


def consume(pk, *args, timeout_ms=1500):
    proc = pk("pk-console-consumer", *args, "--timeout-ms", str(timeout_ms))
    assert proc.returncode == 0, (proc.out, proc.err)
    return proc


def test_from_beginning_prints_values_and_summary(pk, data_dir):
    create(pk, "first_topic", 3)
    produce(data_dir, "first_topic", 0, [(None, b"hello"), (None, b"world")])
    produce(data_dir, "first_topic", 2, [(None, b"third")])
    proc = consume(pk, "--topic", "first_topic", "--from-beginning", "--max-messages", "3")
    assert sorted(proc.out.splitlines()) == ["hello", "third", "world"]
    assert proc.out.index("hello") < proc.out.index("world")  # in order within a partition
    assert proc.err == "Processed a total of 3 messages\n"
    # Without --from-beginning a new (random) group starts at the end: nothing to print.
    proc = consume(pk, "--topic", "first_topic", timeout_ms=500)
    assert proc.out == "" and proc.err == "Processed a total of 0 messages\n"


def test_formatter_properties(pk, data_dir):
    create(pk, "f")
    produce(data_dir, "f", 0, [(b"k1", b"v1", (("h1", b"x"), ("h2", None))), (None, None), (b"k3", b"v3")])
    base = ["--topic", "f", "--partition", "0", "--offset", "earliest", "--max-messages", "3"]

    def out(*props):
        args = [a for p in props for a in ("--property", p)]
        return consume(pk, *base, *args).stdout

    assert out() == b"v1\nnull\nv3\n"
    assert out("print.key=true") == b"k1\tv1\nnull\tnull\nk3\tv3\n"
    assert out("print.key=true", "key.separator=:", "null.literal=NIL") == b"k1:v1\nNIL:NIL\nk3:v3\n"
    assert out("print.value=false", "print.key=true") == b"k1\nnull\nk3\n"
    assert out("print.partition=true", "print.offset=true") == (
        b"Partition:0\tOffset:0\tv1\nPartition:0\tOffset:1\tnull\nPartition:0\tOffset:2\tv3\n")
    assert out("print.headers=true", "headers.separator=|") == b"h1:x|h2:null\tv1\nNO_HEADERS\tnull\nNO_HEADERS\tv3\n"
    assert out("line.separator=;", "print.key=true") == b"k1\tv1;null\tnull;k3\tv3;"
    lines = out("print.timestamp=true", "print.partition=true", "print.offset=true", "print.headers=true",
                "print.key=true").split(b"\n")
    assert lines[0].startswith(b"CreateTime:") and lines[0].endswith(b"\tPartition:0\tOffset:0\th1:x,h2:null\tk1\tv1")
    # Every field switched off: nothing is written, but the records still count.
    proc = consume(pk, *base, "--property", "print.value=false")
    assert proc.stdout == b"" and proc.err == "Processed a total of 3 messages\n"
    assert out("print.key=true", "print.value=false", "print.offset=true") == b"Offset:0\tk1\nOffset:1\tnull\nOffset:2\tk3\n"


def test_binary_values_are_written_raw(pk, data_dir):
    create(pk, "bin")
    produce(data_dir, "bin", 0, [(b"\xff\x00", b"\x80\x81\n")])
    proc = consume(pk, "--topic", "bin", "--from-beginning", "--max-messages", "1", "--property", "print.key=true")
    assert proc.stdout == b"\xff\x00\t\x80\x81\n\n"


def test_partition_and_offset(pk, data_dir):
    create(pk, "p", 2)
    produce(data_dir, "p", 1, [(None, b"a"), (None, b"b"), (None, b"c")])
    assert consume(pk, "--topic", "p", "--partition", "1", "--offset", "1").out == "b\nc\n"
    assert consume(pk, "--topic", "p", "--partition", "1", "--from-beginning").out == "a\nb\nc\n"
    assert consume(pk, "--topic", "p", "--partition", "1", timeout_ms=300).out == ""  # latest
    assert consume(pk, "--topic", "p", "--partition", "0", "--offset", "earliest", timeout_ms=300).out == ""


def test_compressed_batches(pk, data_dir):
    create(pk, "z")
    for codec in range(5):
        produce(data_dir, "z", 0, [(None, f"c{codec}-{i}".encode()) for i in range(3)], compression=codec)
    out = consume(pk, "--topic", "z", "--from-beginning", "--max-messages", "15").out.split()
    assert out == [f"c{c}-{i}" for c in range(5) for i in range(3)]


def test_include_pattern(pk, data_dir):
    for t in ("logs.a", "logs.b", "other"):
        create(pk, t)
        produce(data_dir, t, 0, [(None, t.encode())])
    out = consume(pk, "--include", r"logs\..*", "--from-beginning", "--max-messages", "2").out.split()
    assert sorted(out) == ["logs.a", "logs.b"]


@pytest.mark.parametrize("args, message", [
    ([], "Exactly one of --include/--topic is required. ()"),
    (["--topic", "t", "--include", "x"], "Exactly one of --include/--topic is required. ()"),
    (["--partition", "0", "--include", "t"], "The topic is required when partition is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "1", "--from-beginning"],
     "Options from-beginning and offset cannot be specified together."),
    (["--topic", "t", "--offset", "1"], "The partition is required when offset is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "-1"],
     "The provided offset value '-1' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
    (["--topic", "t", "--partition", "0", "--offset", "soon"],
     "The provided offset value 'soon' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
    (["--topic", "t", "--partition", "0", "--group", "g"], "Options group and partition cannot be specified together."),
    (["--topic", "t", "--group", "a", "--consumer-property", "group.id=b"],
     "The group ids provided in different places (directly using '--group', via '--consumer-property', or via "
     "'--consumer.config') do not match. Detected group ids: 'a', 'b'"),
    (["--topic", "t", "--from-beginning", "--consumer-property", "auto.offset.reset=latest"],
     "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please remove one option"),
    (["--topic", "t", "--bogus"], "bogus is not a recognized option"),
])
def test_usage_errors(pk, args, message):
    proc = pk("pk-console-consumer", *(args or ["--max-messages", "1"]))
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\n"


@pytest.mark.parametrize("args, message", [
    (["--topic", "nope"], "Unknown error when running consumer: This server does not host this topic-partition: nope"),
    (["--topic", "t", "--partition", "5"],
     "Unknown error when running consumer: This server does not host this topic-partition: t-5"),
])
def test_runtime_errors(pk, args, message):
    create(pk, "t", 2)
    proc = pk("pk-console-consumer", *args, "--timeout-ms", "500")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\nProcessed a total of 0 messages\n"


def test_offset_past_the_end_is_an_error(pk, data_dir):
    create(pk, "t")
    produce(data_dir, "t", 0, [(None, b"a")])
    proc = pk("pk-console-consumer", "--topic", "t", "--partition", "0", "--offset", "7", "--timeout-ms", "500")
    assert proc.returncode == 1
    assert proc.err.splitlines()[0].startswith("Unknown error when running consumer: Fetch position 7 is out of range")
    assert "Traceback" not in proc.err


class Follower:
    """A pk-console-consumer running in the background, read line by line."""

    def __init__(self, pk, *args):
        self.proc = subprocess.Popen([tool_path("pk-console-consumer"), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=pk.env)
        self.lines: list[str] = []
        self._partial = b""

    def read_until(self, count: int, timeout: float = 10.0) -> list[str]:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while len(self.lines) < count and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data = self._partial + chunk
                *complete, self._partial = data.split(b"\n")
                self.lines += [c.decode() for c in complete]
        return self.lines

    def stop(self, sig=signal.SIGINT) -> tuple[int, str]:
        self.proc.send_signal(sig)
        try:
            _, err = self.proc.communicate(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.returncode, err.decode()


def test_follow_mode_across_processes(pk, data_dir):
    create(pk, "live")
    follower = Follower(pk, "--topic", "live")
    try:
        time.sleep(1.0)  # let it join and position itself at the end
        for i in range(3):
            produce(data_dir, "live", 0, [(None, f"m{i}".encode())])
            start = time.monotonic()
            lines = follower.read_until(i + 1, timeout=5)
            assert lines[-1] == f"m{i}", lines
            assert time.monotonic() - start < 2.0  # generous: the figure itself is in bench/
    finally:
        code, err = follower.stop()
    assert code == 130 and err.endswith("Processed a total of 3 messages\n")


def test_commit_and_resume(pk, data_dir):
    create(pk, "r", 2)
    produce(data_dir, "r", 0, [(None, f"a{i}".encode()) for i in range(4)])
    produce(data_dir, "r", 1, [(None, f"b{i}".encode()) for i in range(4)])
    first = consume(pk, "--topic", "r", "--group", "g", "--from-beginning", "--max-messages", "5", *FAST_GROUP)
    assert len(first.out.split()) == 5
    committed = OffsetStore(Engine(data_dir)).committed("g")
    assert sum(committed.values()) == 5  # exactly what was printed, nothing more
    second = consume(pk, "--topic", "r", "--group", "g", "--from-beginning", *FAST_GROUP)
    assert sorted(first.out.split() + second.out.split()) == sorted([f"a{i}" for i in range(4)] + [f"b{i}" for i in range(4)])
    assert OffsetStore(Engine(data_dir)).committed("g") == {("r", 0): 4, ("r", 1): 4}
    # A different group reads everything again.
    assert len(consume(pk, "--topic", "r", "--group", "other", "--from-beginning").out.split()) == 8


def test_random_group_commits_nothing(pk, data_dir):
    create(pk, "n")
    produce(data_dir, "n", 0, [(None, b"x")])
    consume(pk, "--topic", "n", "--from-beginning", "--max-messages", "1")
    assert OffsetStore(Engine(data_dir)).groups() == set()


def group_owners(data_dir, group):
    state = GroupCoordinator(Engine(data_dir).groups_dir, group).describe()
    return state, {k: v for k, v in state.owners.items()}


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


@pytest.mark.parametrize("members", [1, 2, 3, 4])
def test_group_shares_partitions(pk, data_dir, members):
    create(pk, "shared", 3)
    followers = [Follower(pk, "--topic", "shared", "--group", "g", "--property", "print.partition=true",
                          *FAST_GROUP) for _ in range(members)]
    try:
        def balanced():
            state, owners = group_owners(data_dir, "g")
            return (len(state.members) == members and state.state == "Stable" and len(owners) == 3
                    and len(set(owners.values())) == min(members, 3))

        assert wait_for(balanced), group_owners(data_dir, "g")
        for p in range(3):
            produce(data_dir, "shared", p, [(None, f"p{p}-{i}".encode()) for i in range(5)])
        seen = []
        deadline = time.monotonic() + 10
        while len(seen) < 15 and time.monotonic() < deadline:
            for f in followers:
                f.read_until(len(f.lines) + 1, timeout=0.1)
            seen = [line for f in followers for line in f.lines]
        assert sorted(seen) == sorted(f"Partition:{p}\tp{p}-{i}" for p in range(3) for i in range(5))
        # each partition went to exactly one member
        for p in range(3):
            assert sum(any(line.startswith(f"Partition:{p}\t") for line in f.lines) for f in followers) == 1
        idle = [f for f in followers if not f.lines]
        assert len(idle) == max(0, members - 3)
    finally:
        for f in followers:
            f.stop()


def test_killed_member_is_replaced(pk, data_dir):
    create(pk, "k", 3)
    a = Follower(pk, "--topic", "k", "--group", "g", *FAST_GROUP)
    b = Follower(pk, "--topic", "k", "--group", "g", *FAST_GROUP)
    try:
        assert wait_for(lambda: len(set(group_owners(data_dir, "g")[1].values())) == 2)
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait()
        # After session.timeout.ms the survivor owns every partition.
        def survivor_owns_all():
            state, owners = group_owners(data_dir, "g")
            return len(state.members) == 1 and len(owners) == 3 and len(set(owners.values())) == 1
        assert wait_for(survivor_owns_all)
        for p in range(3):
            produce(data_dir, "k", p, [(None, f"after-{p}".encode())])
        assert sorted(b.read_until(3)) == ["after-0", "after-1", "after-2"]
    finally:
        b.stop()


def test_assignment_strategy_is_selectable(pk, data_dir):
    create(pk, "s", 4)
    strategy = ["--consumer-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.RoundRobinAssignor"]
    followers = [Follower(pk, "--topic", "s", "--group", "rr", *FAST_GROUP, *strategy) for _ in range(2)]
    try:
        def settled():
            state, owners = group_owners(data_dir, "rr")
            return state.state == "Stable" and len(state.members) == 2 and len(owners) == 4 and state
        state = wait_for(settled)
        assert state and state.protocol == "roundrobin"
        # round robin over the sorted members: one gets partitions 0 and 2, the other 1 and 3
        assert sorted(sorted(m.assignment["s"]) for m in state.members.values()) == [[0, 2], [1, 3]]
    finally:
        for f in followers:
            f.stop()
