"""pk-console-consumer as an installed tool, on both backends (conftest.py):
the bundled engine, and pk-server-start (or PK_TEST_BOOTSTRAP) through --bootstrap-server and
confluent-kafka. Records are written straight into the log through the engine (the server
shares its data directory), or produced with confluent-kafka on another cluster."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time

import pytest

from conftest import TEST_BOOTSTRAP, Runner, free_port, tool_path
from pk.engine import records
from pk.engine.engine import Engine

CONSUMER = "pk-console-consumer"
# Short group sessions, so that rebalances and a killed member's expiry take little time (a
# cluster other than pk's accepts sessions of 6 s at the least).
SESSION_MS = "6000" if TEST_BOOTSTRAP else "1500"
FAST_GROUP = ["--command-property", "heartbeat.interval.ms=100",
              "--command-property", f"session.timeout.ms={SESSION_MS}",
              "--command-property", "auto.commit.interval.ms=200"]
_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
# Kafka 4.4's console consumer prints this on stderr when it subscribes with the classic group
# protocol (test_oracle_console.py).
KIP_848 = ("The consumer rebalance protocol (KIP-848) is production-ready! Set group.protocol=consumer to try it "
           "out. See https://kafka.apache.org/documentation/#consumer_rebalance_protocol")


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir


@pytest.fixture
def plain(tmp_path):
    """pk's tools for tests that involve no backend."""
    return Runner(str(tmp_path / "data"))


def now_ms() -> int:
    return int(time.time() * 1000)


def produce(backend, topic, partition, items, compression=0):
    """Append (key, value[, headers]) items as one batch straight through the engine (or, on
    another cluster, produce them to that partition)."""
    ts = now_ms()
    if backend.data_dir is not None:
        with Engine(backend.data_dir) as engine:
            recs = [(it[0], it[1], it[2] if len(it) > 2 else (), ts + i) for i, it in enumerate(items)]
            return engine.partition(topic, partition).append_batches(
                [records.encode_batch(recs, compression_type=compression)])
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": backend.bootstrap, "compression.type": _CODECS[compression],
                         "linger.ms": 50, "log_level": 0})
    for i, it in enumerate(items):
        producer.produce(topic, it[1], it[0], partition=partition, timestamp=ts + i,
                         headers=list(it[2]) if len(it) > 2 and it[2] else None)
    assert producer.flush(30) == 0


def create(backend, topic, partitions=1):
    backend.create(topic, partitions)


def consume(pk, backend, *args, timeout_ms=1500):
    proc = pk(CONSUMER, *backend, *args, "--timeout-ms", str(timeout_ms))
    assert proc.returncode == 0, (proc.out, proc.err)
    return proc


def test_from_beginning_prints_values_and_summary(pk, backend):
    t = backend.topic("first_topic")
    create(backend, t, 3)
    produce(backend, t, 0, [(None, b"hello"), (None, b"world")])
    produce(backend, t, 2, [(None, b"third")])
    proc = consume(pk, backend, "--topic", t, "--from-beginning", "--max-messages", "3")
    assert sorted(proc.out.splitlines()) == ["hello", "third", "world"]
    assert proc.out.index("hello") < proc.out.index("world")  # in order within a partition
    assert proc.err == KIP_848 + "\nProcessed a total of 3 messages\n"
    # Without --from-beginning a new (random) group starts at the end: nothing to print.
    proc = consume(pk, backend, "--topic", t, timeout_ms=500)
    # Kafka 4.4 logs the TimeoutException that ends a --timeout-ms run (exit 0).
    assert proc.out == "" and re.fullmatch(
        re.escape(KIP_848) + r"\n\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ERROR Error processing message, "
        r"terminating consumer process:  \(org\.apache\.kafka\.tools\.consumer\.ConsoleConsumer\)\n"
        r"org\.apache\.kafka\.common\.errors\.TimeoutException\nProcessed a total of 0 messages\n", proc.err)


def test_formatter_properties(pk, backend):
    t = backend.topic("f")
    create(backend, t)
    produce(backend, t, 0, [(b"k1", b"v1", (("h1", b"x"), ("h2", None))), (None, None), (b"k3", b"v3")])
    base = ["--topic", t, "--partition", "0", "--offset", "earliest", "--max-messages", "3"]

    def out(*props):
        args = [a for p in props for a in ("--formatter-property", p)]
        return consume(pk, backend, *base, *args).stdout

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
    proc = consume(pk, backend, *base, "--formatter-property", "print.value=false")
    assert proc.stdout == b"" and proc.err == "Processed a total of 3 messages\n"
    assert out("print.key=true", "print.value=false", "print.offset=true") == b"Offset:0\tk1\nOffset:1\tnull\nOffset:2\tk3\n"


def test_timestamps_are_the_records_own(pk, backend):
    t = backend.topic("ts")
    create(backend, t)
    before = now_ms()
    produce(backend, t, 0, [(None, b"a"), (None, b"b")])
    out = consume(pk, backend, "--topic", t, "--from-beginning", "--max-messages", "2",
                  "--formatter-property", "print.timestamp=true").out.splitlines()
    stamps = [int(re.fullmatch(r"CreateTime:(\d+)\t[ab]", line)[1]) for line in out]
    assert stamps[1] == stamps[0] + 1 and before <= stamps[0] <= now_ms()


def test_binary_values_are_written_raw(pk, backend):
    t = backend.topic("bin")
    create(backend, t)
    produce(backend, t, 0, [(b"\xff\x00", b"\x80\x81\n")])
    proc = consume(pk, backend, "--topic", t, "--from-beginning", "--max-messages", "1",
                   "--formatter-property", "print.key=true")
    assert proc.stdout == b"\xff\x00\t\x80\x81\n\n"


def test_partition_and_offset(pk, backend):
    t = backend.topic("p")
    create(backend, t, 2)
    produce(backend, t, 1, [(None, b"a"), (None, b"b"), (None, b"c")])
    assert consume(pk, backend, "--topic", t, "--partition", "1", "--offset", "1").out == "b\nc\n"
    assert consume(pk, backend, "--topic", t, "--partition", "1", "--from-beginning").out == "a\nb\nc\n"
    assert consume(pk, backend, "--topic", t, "--partition", "1", timeout_ms=300).out == ""  # latest
    assert consume(pk, backend, "--topic", t, "--partition", "0", "--offset", "earliest", timeout_ms=300).out == ""


def test_compressed_batches(pk, backend):
    t = backend.topic("z")
    create(backend, t)
    for codec in range(5):
        produce(backend, t, 0, [(None, f"c{codec}-{i}".encode()) for i in range(3)], compression=codec)
    out = consume(pk, backend, "--topic", t, "--from-beginning", "--max-messages", "15").out.split()
    assert out == [f"c{c}-{i}" for c in range(5) for i in range(3)]


def test_include_pattern(pk, backend):
    """A whole-name match, as Java's Pattern.matches (librdkafka alone would search): the
    pattern matches `<prefix>.a`, not `x<prefix>.a` nor `<prefix>.a.b`."""
    prefix = backend.topic("logs")
    names = [f"{prefix}.a", f"{prefix}.b", f"x{prefix}.a", f"{prefix}.a.b", backend.topic("other")]
    for t in names:
        create(backend, t)
        produce(backend, t, 0, [(None, t.encode())])
    out = consume(pk, backend, "--include", re.escape(prefix) + r"\.[a-z]", "--from-beginning",
                  timeout_ms=1500).out.split()
    assert sorted(out) == [f"{prefix}.a", f"{prefix}.b"]
    # Alternation covers the whole name too (Java: `a|b` matches "a" or "b", nothing longer).
    out = consume(pk, backend, "--include", f"{re.escape(names[0])}|{re.escape(names[4])}", "--from-beginning",
                  timeout_ms=1500).out.split()
    assert sorted(out) == sorted([names[0], names[4]])


def test_include_pattern_picks_up_new_topics(pk, backend):
    prefix = backend.topic("new")
    first = f"{prefix}.first"
    create(backend, first)
    follower = Follower(pk, backend, "--include", re.escape(prefix) + r"\..*", "--from-beginning")
    try:
        produce(backend, first, 0, [(None, b"one")])
        assert follower.read_until(1, timeout=15) == ["one"]
        second = f"{prefix}.second"
        create(backend, second)
        produce(backend, second, 0, [(None, b"two")])
        deadline = time.monotonic() + 15
        while "two" not in follower.lines and time.monotonic() < deadline:
            follower.read_until(len(follower.lines) + 1, timeout=0.5)
        # The new topic means a rebalance: a member without committed offsets may be handed
        # "one" again, as Kafka's eager rebalance does (the engine keeps its positions).
        assert "two" in follower.lines and set(follower.lines) == {"one", "two"}
    finally:
        follower.stop()


@pytest.mark.parametrize("args, message", [
    ([], "Exactly one of the following arguments is required: [topic], [include]"),
    (["--topic", "t", "--include", "x"], "Exactly one of the following arguments is required: [topic], [include]"),
    (["--partition", "0", "--include", "t"], "The topic is required when partition is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "1", "--from-beginning"],
     "Options from-beginning and offset cannot be specified together."),
    (["--topic", "t", "--offset", "1"], "The partition is required when offset is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "-1"],
     "The provided offset value '-1' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
    (["--topic", "t", "--partition", "0", "--offset", "soon"],
     "The provided offset value 'soon' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
    (["--topic", "t", "--partition", "0", "--group", "g"], "Options group and partition cannot be specified together."),
    (["--topic", "t", "--group", "a", "--command-property", "group.id=b"],
     "The group ids provided in different places (directly using '--group', via '--consumer-property', or via "
     "'--consumer.config') do not match. Detected group ids: 'a', 'b'"),
    (["--topic", "t", "--from-beginning", "--command-property", "auto.offset.reset=latest"],
     "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please remove one option"),
    (["--topic", "t", "--bogus"], "bogus is not a recognized option"),
])
def test_usage_errors(pk, backend, args, message):
    proc = pk(CONSUMER, *backend, *(args or ["--max-messages", "1"]))
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\n"


@pytest.mark.parametrize("args, where", [
    (["--topic", "{nope}"], "{nope}"),
    (["--topic", "{t}", "--partition", "5"], "{t}-5"),
    (["--topic", "{nope}", "--partition", "0"], "{nope}"),
])
def test_runtime_errors(pk, backend, args, where):
    names = {"t": backend.topic("t"), "nope": backend.topic("nope")}
    create(backend, names["t"], 2)
    proc = pk(CONSUMER, *backend, *[a.format(**names) for a in args], "--timeout-ms", "500")
    assert proc.returncode == 1 and proc.out == ""
    # Kafka 4.4 reports the count before the error (and its KIP-848 note first when it subscribes).
    note = "" if "--partition" in args else KIP_848 + "\n"
    assert proc.err == (f"{note}Processed a total of 0 messages\nUnknown error when running consumer: This server "
                        f"does not host this topic-partition: {where.format(**names)}\n")


def test_offset_past_the_end_is_an_error(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    produce(backend, t, 0, [(None, b"a")])
    proc = pk(CONSUMER, *backend, "--topic", t, "--partition", "0", "--offset", "7", "--timeout-ms", "500")
    assert proc.returncode == 1
    assert proc.err == ("Processed a total of 0 messages\nUnknown error when running consumer: Fetch position 7 is "
                        f"out of range for partition {t}-0 (log start offset 0, log end offset 1)\n")


class Follower:
    """A pk-console-consumer running in the background, read line by line."""

    def __init__(self, pk, backend, *args):
        self.proc = subprocess.Popen([tool_path(CONSUMER), *backend, *args], stdout=subprocess.PIPE,
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
            _, err = self.proc.communicate(timeout=60)  # only a failure waits that long (a loaded machine)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.returncode, err.decode()


def stop_all(followers) -> None:
    """Stop every follower, even after one fails to stop (that error is raised once all are)."""
    failure = None
    for f in followers:
        try:
            f.stop()
        except Exception as exc:  # re-raised below, once the others are stopped too
            failure = failure or exc
    if failure is not None:
        raise failure


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def owns_all(backend, group, partitions, members=None):
    """The group is stable and every partition has an owner (among `members` members)."""
    def check():
        stable, count, owners = backend.group_state(group)
        return stable and len(owners) == partitions and (members is None or count == members)
    return check


def test_follow_mode_across_processes(pk, backend):
    t, g = backend.topic("live"), backend.topic("g")
    create(backend, t)
    # --from-beginning on an empty topic: no record can slip by before the position is known.
    follower = Follower(pk, backend, "--topic", t, "--group", g, "--from-beginning")
    try:
        assert wait_for(owns_all(backend, g, 1)), backend.group_state(g)
        for i in range(3):
            produce(backend, t, 0, [(None, f"m{i}".encode())])
            start = time.monotonic()
            lines = follower.read_until(i + 1, timeout=5)
            assert lines[-1] == f"m{i}", lines
            assert time.monotonic() - start < 2.0  # generous: the figure itself is in bench/
    finally:
        code, err = follower.stop()
    assert code == 130 and err.endswith("Processed a total of 3 messages\n")


def test_commit_and_resume(pk, backend):
    t, g, other = backend.topic("r"), backend.topic("g"), backend.topic("other")
    create(backend, t, 2)
    produce(backend, t, 0, [(None, f"a{i}".encode()) for i in range(4)])
    produce(backend, t, 1, [(None, f"b{i}".encode()) for i in range(4)])
    first = consume(pk, backend, "--topic", t, "--group", g, "--from-beginning", "--max-messages", "5", *FAST_GROUP)
    assert len(first.out.split()) == 5
    committed = backend.committed(g)
    assert sum(committed.values()) == 5  # exactly what was printed, nothing more
    second = consume(pk, backend, "--topic", t, "--group", g, "--from-beginning", *FAST_GROUP)
    everything = sorted([f"a{i}" for i in range(4)] + [f"b{i}" for i in range(4)])
    assert sorted(first.out.split() + second.out.split()) == everything
    assert backend.committed(g) == {(t, 0): 4, (t, 1): 4}
    # A different group reads everything again.
    assert len(consume(pk, backend, "--topic", t, "--group", other, "--from-beginning").out.split()) == 8


def test_random_group_commits_nothing(pk, backend):
    t = backend.topic("n")
    create(backend, t)
    produce(backend, t, 0, [(None, b"x")])
    before = backend.groups()
    consume(pk, backend, "--topic", t, "--from-beginning", "--max-messages", "1")
    assert not any(topic == t for g in backend.groups() - before for topic, _ in backend.committed(g))
    if not backend.remote:
        assert backend.groups() == set()


@pytest.mark.parametrize("members", [1, 2, 3, 4])
def test_group_shares_partitions(pk, backend, members):
    t, g = backend.topic("shared"), backend.topic("g")
    create(backend, t, 3)
    # A new group from the beginning: a member that takes a partition late still reads all of it.
    followers = [Follower(pk, backend, "--topic", t, "--group", g, "--from-beginning", "--formatter-property",
                          "print.partition=true", *FAST_GROUP) for _ in range(members)]
    try:
        def balanced():
            stable, count, owners = backend.group_state(g)
            return stable and count == members and len(owners) == 3 and len(set(owners.values())) == min(members, 3)

        assert wait_for(balanced), backend.group_state(g)
        for p in range(3):
            produce(backend, t, p, [(None, f"p{p}-{i}".encode()) for i in range(5)])
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
        stop_all(followers)


def test_killed_member_is_replaced(pk, backend):
    t, g = backend.topic("k"), backend.topic("g")
    create(backend, t, 3)
    a = Follower(pk, backend, "--topic", t, "--group", g, "--from-beginning", *FAST_GROUP)
    b = Follower(pk, backend, "--topic", t, "--group", g, "--from-beginning", *FAST_GROUP)
    try:
        assert wait_for(lambda: owns_all(backend, g, 3, 2)() and len(set(backend.group_state(g)[2].values())) == 2)
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait()
        # After session.timeout.ms the survivor owns every partition.
        def survivor_owns_all():
            stable, count, owners = backend.group_state(g)
            return stable and count == 1 and len(owners) == 3 and len(set(owners.values())) == 1
        assert wait_for(survivor_owns_all, timeout=30)
        for p in range(3):
            produce(backend, t, p, [(None, f"after-{p}".encode())])
        assert sorted(b.read_until(3)) == ["after-0", "after-1", "after-2"]
    finally:
        b.stop()


# --------------------------------------------------------------------------- --bootstrap-server
def test_unreachable_cluster_fails_within_the_api_timeout(plain):
    start = time.monotonic()
    proc = plain(CONSUMER, "--bootstrap-server", f"127.0.0.1:{free_port()}", "--topic", "t",
                 "--command-property", "default.api.timeout.ms=1500")
    assert time.monotonic() - start < 10
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == "Timeout expired while fetching topic metadata\n"


@pytest.mark.parametrize("args, message", [
    (["--bootstrap-server", "localhost"], "Please provide valid host:port like host1:9091,host2:9092"),
    (["--bootstrap-server", "no-such-host.invalid:9092"], "No resolvable bootstrap urls given in bootstrap.servers"),
    (["-X", "fetch.wait.max.ms=10"],
     "Option -X needs --bootstrap-server: librdkafka properties do not apply to the bundled engine"),
    (["--bootstrap-server", "localhost:9092", "--data-dir", "/tmp"],
     'Option "[data-dir]" can\'t be used with option "[bootstrap-server]"'),
    (["--bootstrap-server", "localhost:9092", "--command-property", "no.such.config=1"],
     "Unknown client configuration: no.such.config"),
    (["--bootstrap-server", "localhost:9092", "-X", "no.such.property=1"],
     "Unknown client configuration: no.such.property"),
])
def test_backend_option_errors(plain, args, message):
    proc = plain(CONSUMER, "--topic", "t", *args)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == message + "\n"


@pytest.mark.server_only("librdkafka properties and Java keys reach the cluster's consumer")
def test_consumer_configuration_reaches_librdkafka(pk, backend, tmp_path):
    t = backend.topic("t")
    create(backend, t)
    produce(backend, t, 0, [(None, b"a"), (None, b"b"), (None, b"c")])
    config = tmp_path / "consumer.properties"
    config.write_text("max.poll.records=1\nfetch.max.wait.ms=50\nreceive.buffer.bytes=65536\n"
                      "partition.assignment.strategy=org.apache.kafka.clients.consumer.RoundRobinAssignor\n")
    out = consume(pk, backend, "--topic", t, "--from-beginning", "--command-config", str(config),
                  "-X", "fetch.min.bytes=1", "--max-messages", "3").out
    assert out == "a\nb\nc\n"


@pytest.mark.parametrize("pattern,exception", [
    ("[", "Unclosed character class near index 0\n[\n^"),
    ("a(", "Unclosed group near index 2\na("),
    ("a**", "Dangling meta character '*' near index 2\na**\n  ^"),
    ("ab)", "Unmatched closing ')' near index 1\nab)\n ^"),
])
def test_include_pattern_that_does_not_compile(pk, backend, pattern, exception):
    """As Kafka 4.4's ConsoleConsumer: the log line, then Java's PatternSyntaxException text
    (recorded from the real tool; pk prints no Java stack), exit 1, no summary line."""
    proc = pk(CONSUMER, *backend, "--include", pattern, "--timeout-ms", "500")
    assert proc.returncode == 1 and proc.out == ""
    lines = [line for line in proc.err.splitlines() if "KIP-848" not in line]
    assert re.fullmatch(r"\[[-0-9 :,]+\] ERROR Unknown error when running consumer:  "
                        r"\(org\.apache\.kafka\.tools\.consumer\.ConsoleConsumer\)", lines[0])
    assert "\n".join(lines[1:]) == "java.util.regex.PatternSyntaxException: " + exception
