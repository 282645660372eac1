"""pk-console-consumer's ranges (pk-only: --from-time, --to-time, --to-offset, --until-end,
commands/consume_range.py) on the bundled engine, on pk-server-start and on Kafka 4.4, checked
record by record on topics whose CreateTime timestamps the test chose.

The engine's case reads the module's pk-server-start data directory with --data-dir (the
engine shares a data directory with a running server), so the three read the same kinds of
logs, transaction markers and aborted batches included. Every run ends by itself: a range
that did not end would hit the subprocess timeout and fail.
"""

from __future__ import annotations

import os
import subprocess
import time
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from conftest import Runner, tool_path
from waits import create_topic_with_leaders

confluent_kafka = pytest.importorskip("confluent_kafka")

CONSUMER = "pk-console-consumer"
# A day ago on a whole second: inside every broker's accepted timestamp window.
T0 = (int(time.time()) - 86400) * 1000
# Partition 0's timestamps rise; partition 1's go backwards at offset 2 (CreateTime allows it).
STAMPS = {0: [0, 1000, 2000, 3000, 4000, 5000], 1: [500, 3500, 1500, 2500, 4500, 5500]}
SHOW = ("--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true")


class Target:
    """Where the records are written (a cluster's bootstrap) and how pk-console-consumer reads
    them back (--bootstrap-server, or --data-dir for the engine)."""

    def __init__(self, name: str, bootstrap: str, args: list[str]):
        self.name, self.bootstrap, self.args = name, bootstrap, args

    def topic(self, stem: str, partitions: int = 2) -> str:
        name = f"ranges-{stem}-{self.name}-{os.getpid()}-{time.monotonic_ns()}"
        return create_topic_with_leaders(self.bootstrap, name, partitions)

    def produce(self, topic: str, rows) -> None:
        """rows: (partition, value, timestamp ms)."""
        producer = confluent_kafka.Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0})
        for partition, value, ts in rows:
            producer.produce(topic, value.encode(), partition=partition, timestamp=ts)
        assert producer.flush(30) == 0

    def stamped(self, stem: str) -> str:
        """A two-partition topic with STAMPS: value `p<partition>-<offset>`."""
        topic = self.topic(stem)
        self.produce(topic, [(p, f"p{p}-{i}", T0 + ts) for p, stamps in STAMPS.items()
                             for i, ts in enumerate(stamps)])
        return topic


@pytest.fixture(scope="module", params=["engine", "server", "kafka"])
def target(request, pk_server):
    if request.param == "kafka":
        kafka = request.getfixturevalue("kafka")
        return Target("kafka", kafka.bootstrap, ["--bootstrap-server", kafka.bootstrap])
    if request.param == "server":
        return Target("server", pk_server.bootstrap, ["--bootstrap-server", pk_server.bootstrap])
    return Target("engine", pk_server.bootstrap, ["--data-dir", pk_server.data_dir])


@pytest.fixture
def tools(tmp_path):
    return Runner(str(tmp_path / "unused"))


def consume(tools, target: Target, topic: str, *args: str, env: dict | None = None) -> tuple[list[str], str]:
    """The values printed (as `p<partition>-<offset>`, checked against the printed partition
    and offset), sorted, and stderr's last line."""
    proc = tools(CONSUMER, *target.args, "--topic", topic, *SHOW, *args, timeout=120, env=env)
    assert proc.returncode == 0, proc.err
    values = []
    for line in proc.out.splitlines():
        partition, offset, value = line.split("\t")
        assert value == f"p{partition.split(':')[1]}-{offset.split(':')[1]}", line
        values.append(value)
    return sorted(values), proc.err.splitlines()[-1]


def values(**wanted) -> list[str]:
    """values(p0=[2, 3], p1=[1]) -> ["p0-2", "p0-3", "p1-1"]."""
    return sorted(f"{p}-{o}" for p, offsets in wanted.items() for o in offsets)


# --------------------------------------------------------------------------- time ranges
def test_from_time_to_time_follows_offsets_not_timestamps(tools, target):
    """Start: first offset with ts >= from; end: first offset with ts > to, looked up once. In
    partition 1 the record at offset 2 (ts +1500) lies inside [offset 1, offset 4) and prints,
    though its timestamp is before --from-time: a range is an offset range."""
    topic = target.stamped("window")
    window = ("--from-time", str(T0 + 2000), "--to-time", str(T0 + 4000))
    got, summary = consume(tools, target, topic, *window)  # the default group: subscription
    assert got == values(p0=[2, 3, 4], p1=[1, 2, 3])
    assert summary == "Processed a total of 6 messages"
    got, _ = consume(tools, target, topic, "--partition", "1", *window)
    assert got == values(p1=[1, 2, 3])
    got, _ = consume(tools, target, topic, "--group", f"{topic}-g", *window)
    assert got == values(p0=[2, 3, 4], p1=[1, 2, 3])


def test_from_time_past_every_record_starts_at_the_end(tools, target):
    topic = target.stamped("late")
    got, summary = consume(tools, target, topic, "--from-time", str(T0 + 6000), "--until-end")
    assert got == [] and summary == "Processed a total of 0 messages"
    got, _ = consume(tools, target, topic, "--from-time", str(T0 + 5501), "--to-offset", "6",
                     "--partition", "1")
    assert got == []  # partition 1 starts at its end, 6: the range is empty


def test_to_time_ahead_with_no_later_record_ends_at_the_first_one_that_arrives(tools, target):
    """--to-time in the future and no record later than it at start: the end is open, and the
    first record that arrives with a later timestamp closes it (records before it still print)."""
    topic = target.stamped("open")
    ahead = int(time.time() * 1000) + 600_000  # (Kafka refuses timestamps over an hour ahead)
    proc = subprocess.Popen([tool_path(CONSUMER), *target.args, "--topic", topic, "--partition", "0",
                             "--offset", "earliest", "--to-time", str(ahead), *SHOW],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        target.produce(topic, [(0, "p0-6", ahead - 1000), (0, "p0-7", ahead + 1000), (0, "p0-8", T0 + 100)])
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert [line.split("\t")[2] for line in out.decode().splitlines()] == [f"p0-{i}" for i in range(7)]


def test_a_window_in_the_past_ends_even_where_no_record_is_later(tools, target):
    """--to-time in the past and no record later than it (the README's window of an earlier
    hour, on a topic written since, or with an empty partition): each partition ends at its
    end at start, so the run ends instead of waiting for a record from the past."""
    topic = target.stamped("past")
    empty = target.topic("past-empty")
    target.produce(empty, [(0, "p0-0", T0)])  # partition 1 stays empty
    got, summary = consume(tools, target, topic, "--to-time", str(T0 + 6000), "--from-time", str(T0 + 4000))
    assert got == values(p0=[4, 5], p1=[4, 5]) and summary == "Processed a total of 4 messages"
    got, _ = consume(tools, target, empty, "--from-time", str(T0 - 1000), "--to-time", str(T0 + 1000))
    assert got == ["p0-0"]


def test_a_naive_time_is_local_time_and_relative_times_count_from_now(tools, target):
    topic = target.stamped("zones")
    kolkata = datetime.fromtimestamp((T0 + 2000) / 1000, ZoneInfo("Asia/Kolkata"))
    naive = kolkata.strftime("%Y-%m-%dT%H:%M:%S")
    utc = datetime.fromtimestamp((T0 + 2000) / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for when, env in ((naive, {"TZ": "Asia/Kolkata"}), (utc, {"TZ": "America/New_York"}),
                      (kolkata.isoformat(), None)):
        got, _ = consume(tools, target, topic, "--partition", "0", "--from-time", when, "--until-end", env=env)
        assert got == values(p0=[2, 3, 4, 5]), when
    # The records are a day old: 12 hours ago is after all of them, 2 days ago before.
    got, _ = consume(tools, target, topic, "--from-time", "-12h", "--until-end")
    assert got == []
    got, _ = consume(tools, target, topic, "--from-time", "-2d", "--to-time", "-12h", "--until-end")
    assert got == values(p0=range(6), p1=range(6))


# --------------------------------------------------------------------------- offset ranges
def test_to_offset_is_exclusive(tools, target):
    topic = target.stamped("to-offset")
    got, _ = consume(tools, target, topic, "--partition", "0", "--offset", "1", "--to-offset", "4")
    assert got == values(p0=[1, 2, 3])
    got, _ = consume(tools, target, topic, "--from-beginning", "--to-offset", "2")
    assert got == values(p0=[0, 1], p1=[0, 1])
    got, summary = consume(tools, target, topic, "--from-beginning", "--to-offset", "0")
    assert got == [] and summary == "Processed a total of 0 messages"
    # whichever comes first: the end at start (6) before offset 100
    got, _ = consume(tools, target, topic, "--from-beginning", "--to-offset", "100", "--until-end")
    assert got == values(p0=range(6), p1=range(6))
    got, _ = consume(tools, target, topic, "--from-beginning", "--to-offset", "3", "--to-time", str(T0 + 3000))
    assert got == values(p0=[0, 1, 2], p1=[0])  # p0: --to-offset comes first; p1: --to-time


def test_until_end_with_an_empty_partition_and_max_messages(tools, target):
    topic = target.topic("until-end", 3)
    target.produce(topic, [(0, "p0-0", T0), (0, "p0-1", T0), (2, "p2-0", T0)])
    got, summary = consume(tools, target, topic, "--from-beginning", "--until-end")
    assert got == values(p0=[0, 1], p2=[0]) and summary == "Processed a total of 3 messages"
    got, _ = consume(tools, target, topic, "--partition", "1", "--offset", "earliest", "--until-end")
    assert got == []
    got, summary = consume(tools, target, topic, "--from-beginning", "--until-end", "--max-messages", "2")
    assert len(got) == 2 and summary == "Processed a total of 2 messages"
    got, _ = consume(tools, target, topic, "--until-end")  # from the end: nothing, at once
    assert got == []


def test_until_end_in_a_group_commits_what_it_printed(tools, target):
    topic = target.stamped("group")
    group = f"{topic}-g"
    got, _ = consume(tools, target, topic, "--group", group, "--from-beginning", "--to-offset", "4")
    assert got == values(p0=range(4), p1=range(4))
    got, _ = consume(tools, target, topic, "--group", group, "--until-end")  # resumes where it stopped
    assert got == values(p0=[4, 5], p1=[4, 5])
    got, summary = consume(tools, target, topic, "--group", group, "--until-end")
    assert got == [] and summary == "Processed a total of 0 messages"
    got, _ = consume(tools, target, topic, "--group", group, "--from-time", str(T0 + 3000), "--until-end")
    assert got == values(p0=[3, 4, 5], p1=[1, 2, 3, 4, 5])  # --from-time wins over the committed offsets


# --------------------------------------------------------------------------- offset gaps
def _transactional(target: Target, stem: str) -> str:
    """Partition 0: a committed transaction (p0-0..p0-2, marker at 3), then an aborted one
    (offsets 4, 5, marker at 6): the log ends with a marker, after records read_committed drops."""
    topic = target.topic(stem, 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": target.bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for values_, commit in ((["p0-0", "p0-1", "p0-2"], True), (["p0-4", "p0-5"], False)):
        producer.begin_transaction()
        for value in values_:
            producer.produce(topic, value.encode(), partition=0)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    return topic


@pytest.mark.parametrize("how", [[], ["--partition", "0", "--offset", "earliest"]], ids=["group", "partition"])
def test_until_end_steps_over_markers_and_aborted_batches(tools, target, how):
    topic = _transactional(target, "txn")
    start = [] if how else ["--from-beginning"]
    got, _ = consume(tools, target, topic, *start, *how, "--until-end", "--isolation-level", "read_committed")
    assert got == values(p0=[0, 1, 2])
    got, _ = consume(tools, target, topic, *start, *how, "--until-end")
    assert got == values(p0=[0, 1, 2, 4, 5])
    got, _ = consume(tools, target, topic, *start, *how, "--to-offset", "4", "--isolation-level", "read_committed")
    assert got == values(p0=[0, 1, 2])  # offset 3 is a marker: the position passes it, nothing waits


# --------------------------------------------------------------------------- librdkafka (-X)
def test_the_librdkafka_path_too(tools, target):
    if target.name == "engine":
        pytest.skip("-X passes librdkafka properties to a cluster's client: no engine counterpart")
    x = ("-X", "fetch.wait.max.ms=50")
    topic = _transactional(target, "rdkafka-txn")
    got, _ = consume(tools, target, topic, "--from-beginning", "--until-end", "--isolation-level", "read_committed",
                     *x)
    assert got == values(p0=[0, 1, 2])
    got, _ = consume(tools, target, topic, "--partition", "0", "--offset", "earliest", "--until-end", *x)
    assert got == values(p0=[0, 1, 2, 4, 5])
    topic = target.stamped("rdkafka-window")
    got, _ = consume(tools, target, topic, "--from-time", str(T0 + 2000), "--to-time", str(T0 + 4000), *x)
    assert got == values(p0=[2, 3, 4], p1=[1, 2, 3])
    got, _ = consume(tools, target, topic, "--from-time", str(T0 + 3000), "--until-end", "--partition", "1", *x)
    assert got == values(p1=[1, 2, 3, 4, 5])


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("args, line", [
    (["--from-time", "-1h", "--from-beginning"], "Options from-time and from-beginning cannot be specified together."),
    (["--partition", "0", "--offset", "3", "--from-time", "-1h"],
     "Options from-time and offset cannot be specified together."),
    (["--from-time", "yesterday"], "Invalid value for --from-time: 'yesterday' is not an ISO-8601 date-time, "
                                   "epoch milliseconds, or a relative time such as -15m, -2h or -1d."),
    (["--to-time", "2026-13-01"], "Invalid value for --to-time: '2026-13-01' is not an ISO-8601 date-time, "
                                  "epoch milliseconds, or a relative time such as -15m, -2h or -1d."),
    (["--to-offset", "-1"], "The provided to-offset value '-1' is incorrect. Valid values are non-negative longs."),
    (["--to-offset", "x"], "The provided to-offset value 'x' is incorrect. Valid values are non-negative longs."),
])
def test_bad_ranges_are_one_line(tools, tmp_path, args, line):
    proc = tools(CONSUMER, "--data-dir", str(tmp_path / "d"), "--topic", "t", *args)
    assert proc.returncode == 1
    assert proc.err.splitlines() == [line]
    assert proc.out == ""


def test_shell_completion_knows_the_range_options(tools):
    """Click's completion protocol, as the generated bash script asks it at <TAB>."""
    env = {"COMP_WORDS": "pk-console-consumer --", "COMP_CWORD": "1",
           "_PK_CONSOLE_CONSUMER_COMPLETE": "bash_complete"}
    proc = tools(CONSUMER, env=env)
    offered = {line.split(",", 1)[1] for line in proc.out.splitlines()}
    assert {"--from-time", "--to-time", "--to-offset", "--until-end"} <= offered
    assert "--offset" in offered  # Kafka's own still there


def test_time_forms():
    from pk.commands.time_spec import parse_time

    now = 1_800_000_000_000
    assert parse_time("1764412800000", now) == 1_764_412_800_000
    assert parse_time("now", now) == now
    assert parse_time("-15m", now) == now - 15 * 60_000
    assert parse_time("-1h30m", now) == now - 90 * 60_000
    assert parse_time("+2d", now) == now + 2 * 86_400_000
    assert parse_time("-500ms", now) == now - 500
    assert parse_time("2026-11-29T10:00:00.123Z", now) == 1_795_946_400_123
    assert parse_time("2026-11-29T11:00:00+01:00", now) == 1_795_946_400_000
    for bad in ("", "-", "-15", "15m", "-15x", "yesterday", "2026-02-30"):
        with pytest.raises(ValueError):
            parse_time(bad, now)


def test_a_compacted_log_ends_its_range_in_a_gap(tools, tmp_path):
    """The bundled engine after a cleaner pass: --to-offset inside offsets compaction removed
    ends at the first record past it, and --until-end reads up to the log end."""
    from pk.engine import records
    from pk.engine.engine import Engine

    data_dir = str(tmp_path / "data")
    with Engine(data_dir) as engine:
        engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "2000"})
        log = engine.partition("c", 0)
        for i in range(200):  # every third key unique (kept), the others overwritten over and over
            key = f"u{i}" if i % 3 == 0 else f"k{i % 10}"
            log.append_batches([records.encode_batch([(key.encode(), f"p0-{i}".encode(), (), T0 + i)])])
        assert log.clean(force=True) > 0
        kept = []
        offset = log.log_start_offset
        while data := log.read(offset, 1 << 20):
            for pos, header in records.iter_batches(data):
                kept += [r.offset for r in records.decode_records(data, pos, header)]
                offset = header.next_offset
    gap = next(o for o in range(kept[0], kept[-1]) if o not in kept)  # an offset the cleaner removed
    assert kept[0] < gap
    target = Target("engine", "", ["--data-dir", data_dir])
    got, _ = consume(tools, target, "c", "--partition", "0", "--offset", "earliest", "--to-offset", str(gap))
    assert got == values(p0=[o for o in kept if o < gap])
    got, _ = consume(tools, target, "c", "--from-beginning", "--until-end")
    assert got == values(p0=kept)
    got, _ = consume(tools, target, "c", "--from-time", str(T0 + gap), "--until-end")
    assert got == values(p0=[o for o in kept if o >= gap])
