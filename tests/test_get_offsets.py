"""GetOffsetShell through pk-run-class (Kafka 3.7's org.apache.kafka.tools.GetOffsetShell),
on data appended through the engine; plus pk-run-class's own dispatch."""

from __future__ import annotations

import time

import pytest

from pk.engine import records
from pk.engine.engine import Engine

GOS = ("pk-run-class", "org.apache.kafka.tools.GetOffsetShell")
ERR = "Error occurred: "


def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert proc.err == ""
    return proc.out


def fails(proc, message):
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n", proc.err
    assert proc.out == ""
    return proc


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def engine(data_dir):
    e = Engine(data_dir)
    yield e
    e.close()


def produce(engine, topic, partition, timestamps, **kw):
    batch = records.encode_batch([(None, b"v", (), ts) for ts in timestamps], **kw)
    return engine.partition(topic, partition).append_batches([batch])[0]


@pytest.fixture
def orders(engine):
    """orders: 12 partitions, partition p holds p records; orders2: 1 partition, 5 records."""
    base = now_ms()
    engine.create_topic("orders", 12, 1)
    engine.create_topic("orders2", 1, 1)
    for p in range(12):
        if p:
            produce(engine, "orders", p, [base + i for i in range(p)])
    produce(engine, "orders2", 0, [base] * 5)
    return base


def lines(*items):
    return "".join(f"{t}:{p}:{o}\n" for t, p, o in items)


def test_latest_for_all_topics_numeric_order(pk, orders):
    out = ok(pk(*GOS, "--time", "-1"))  # (no arguments at all would print the usage)
    expected = lines(*[("__consumer_offsets", p, 0) for p in range(50)],
                     *[("orders", p, p) for p in range(12)], ("orders2", 0, 5))
    assert out == expected  # pk's order: topic, then partition number (orders:2 before orders:10)
    assert ok(pk(*GOS, "--exclude-internal-topics")) == lines(*[("orders", p, p) for p in range(12)], ("orders2", 0, 5))
    assert ok(pk(*GOS, "--time", "-1", "--exclude-internal-topics")) == ok(pk(*GOS, "--time", "latest",
                                                                                "--exclude-internal-topics"))
    # the Scala-era class name is an alias
    assert ok(pk("pk-run-class", "kafka.tools.GetOffsetShell", "--topic", "orders2")) == lines(("orders2", 0, 5))


def test_topic_regex_is_a_whole_name_match(pk, orders):
    assert ok(pk(*GOS, "--topic", "orders")) == lines(*[("orders", p, p) for p in range(12)])
    # orders2 matches the regex too, but has no partition 3 or 11
    assert ok(pk(*GOS, "--topic", "orders.*", "--partitions", "3,11")) == lines(("orders", 3, 3), ("orders", 11, 11))
    assert ok(pk(*GOS, "--topic", "ord.rs2")) == lines(("orders2", 0, 5))
    # Kafka's IncludeList: commas become alternation, quotes and spaces are dropped
    assert ok(pk(*GOS, "--topic", "'orders2, nothing'")) == lines(("orders2", 0, 5))


def test_partitions_list(pk, orders):
    assert ok(pk(*GOS, "--topic", "orders", "--partitions", "+1,2,,")) == lines(("orders", 1, 1), ("orders", 2, 2))
    assert ok(pk(*GOS, "--topic", "orders", "--partitions", "")) == ok(pk(*GOS, "--topic", "orders"))
    fails(pk(*GOS, "--topic", "orders", "--partitions", "1,x"),
          ERR + "--partitions expects a comma separated list of numeric partition ids, but received: 1,x")
    fails(pk(*GOS, "--partitions", "1-3"),
          ERR + "--partitions expects a comma separated list of numeric partition ids, but received: 1-3")
    fails(pk(*GOS, "--partitions", " 1"),
          ERR + "--partitions expects a comma separated list of numeric partition ids, but received:  1")


@pytest.mark.parametrize("spec, expected", [
    ("orders:1", [("orders", 1, 1)]),
    ("orders:2-4", [("orders", 2, 2), ("orders", 3, 3)]),  # upper bound exclusive
    ("orders:10-", [("orders", 10, 10), ("orders", 11, 11)]),
    ("orders:-2", [("orders", 0, 0), ("orders", 1, 1)]),
    ("orders2", [("orders2", 0, 5)]),
    ("orders2:", [("orders2", 0, 5)]),
    ("orders:11,orders2:0", [("orders", 11, 11), ("orders2", 0, 5)]),
    (":0,", [("__consumer_offsets", 0, 0), ("orders", 0, 0), ("orders2", 0, 5)]),
])
def test_topic_partitions_rules(pk, orders, spec, expected):
    assert ok(pk(*GOS, "--topic-partitions", spec)) == lines(*expected)


def test_earliest_after_retention(pk, engine):
    engine.create_topic("old", 1, 1, configs={"retention.ms": "3600000"})
    t = now_ms()
    produce(engine, "old", 0, [t - 7200_000] * 3)  # older than retention: deleted on append
    engine.partition("old", 0).enforce_retention()
    produce(engine, "old", 0, [t, t])
    assert ok(pk(*GOS, "--topic", "old", "--time", "-2")) == lines(("old", 0, 3))
    assert ok(pk(*GOS, "--topic", "old", "--time", "earliest")) == lines(("old", 0, 3))
    assert ok(pk(*GOS, "--topic", "old")) == lines(("old", 0, 5))


def test_max_timestamp_is_the_record_with_the_largest_timestamp(pk, engine):
    engine.create_topic("mt", 3, 1, configs={"segment.bytes": "200"})
    t = now_ms()
    # partition 0: the max sits in the middle of the first batch (3.7 itself answered with
    # the batch's last offset, KAFKA-16310; the record's own offset is the right answer)
    produce(engine, "mt", 0, [t, t + 50, t + 10])
    produce(engine, "mt", 0, [t + 20, t + 30])
    # partition 1: several segments, the max (first of two equal ones) in an earlier segment
    produce(engine, "mt", 1, [t + 1])
    produce(engine, "mt", 1, [t + 2, t + 90, t + 3])
    produce(engine, "mt", 1, [t + 4, t + 90])
    assert len(engine.partition("mt", 1).segments) > 1
    # partition 2: empty, no offset: left out
    expected = lines(("mt", 0, 1), ("mt", 1, 2))
    assert ok(pk(*GOS, "--topic", "mt", "--time", "-3")) == expected
    assert ok(pk(*GOS, "--topic", "mt", "--time", "max-timestamp")) == expected


def test_timestamp_lookup(pk, engine):
    engine.create_topic("ts", 2, 1)
    t = now_ms()
    produce(engine, "ts", 0, [t, t + 10, t + 20])
    produce(engine, "ts", 0, [t + 30, t + 40])
    produce(engine, "ts", 1, [t])
    assert ok(pk(*GOS, "--topic", "ts", "--time", str(t + 15))) == lines(("ts", 0, 2))
    assert ok(pk(*GOS, "--topic", "ts", "--time", str(t + 30))) == lines(("ts", 0, 3))
    assert ok(pk(*GOS, "--topic", "ts", "--time", str(t))) == lines(("ts", 0, 0), ("ts", 1, 0))
    # later than every record: no offset, partitions omitted, still exit 0
    assert ok(pk(*GOS, "--topic", "ts", "--time", str(t + 1000))) == ""
    assert ok(pk(*GOS, "--topic", "ts", "--time", "+0")) == lines(("ts", 0, 0), ("ts", 1, 0))


def test_command_config_is_accepted(pk, orders, tmp_path):
    props = tmp_path / "admin.properties"
    props.write_text("request.timeout.ms=1000\n# comment\n")
    assert ok(pk(*GOS, "--topic", "orders2", "--command-config", str(props))) == lines(("orders2", 0, 5))
    fails(pk(*GOS, "--topic", "orders2", "--command-config", str(tmp_path / "missing")),
          ERR + str(tmp_path / "missing"))


def test_errors(pk, orders):
    fails(pk(*GOS, "--time", "yesterday"),
          ERR + "Malformed time argument yesterday. Please use -1 or latest / -2 or earliest / -3 or max-timestamp, "
                "or a specified long format timestamp")
    fails(pk(*GOS, "--time", "99999999999999999999"),
          ERR + "Malformed time argument 99999999999999999999. Please use -1 or latest / -2 or earliest / "
                "-3 or max-timestamp, or a specified long format timestamp")
    fails(pk(*GOS, "--topic", "nothing.*"), ERR + "Could not match any topic-partitions with the specified filters")
    fails(pk(*GOS, "--topic", "orders", "--partitions", "99"),
          ERR + "Could not match any topic-partitions with the specified filters")
    fails(pk(*GOS, "--topic-partitions", "orders:1", "--topic", "orders"),
          ERR + "--topic-partitions cannot be used with --topic or --partitions")
    fails(pk(*GOS, "--topic-partitions", "orders:1", "--partitions", "1"),
          ERR + "--topic-partitions cannot be used with --topic or --partitions")
    fails(pk(*GOS, "--topic-partitions", "orders:1:2"),
          ERR + "org.apache.kafka.tools.TerseException: Invalid rule specification: orders:1:2")
    fails(pk(*GOS, "--topic-partitions", "orders:x"),
          ERR + "org.apache.kafka.tools.TerseException: Invalid rule specification: orders:x")
    fails(pk(*GOS, "--topic-partitions", "orders:3000000000"), ERR + 'For input string: "3000000000"')
    fails(pk(*GOS, "--topic", "orders["), ERR + "orders[ is an invalid regex.")
    fails(pk(*GOS, "--topic-partitions", ","), ERR + "Could not match any topic-partitions with the specified filters")
    fails(pk(*GOS, "--time", "1", "--time", "2"),
          ERR + "Found multiple arguments for option time, but you asked for only one")
    fails(pk(*GOS, "--bogus"), ERR + "bogus is not a recognized option")
    fails(pk(*GOS, "--topic"), ERR + "Option topic requires an argument")
    # argument checks run in Kafka's order: the --topic-partitions conflict before a bad --time
    fails(pk(*GOS, "--topic-partitions", "x", "--topic", "y", "--time", "bad"),
          ERR + "--topic-partitions cannot be used with --topic or --partitions")
    fails(pk(*GOS, "--time", "bad", "--topic", "["), ERR + "Malformed time argument bad. Please use -1 or latest / "
                                                         "-2 or earliest / -3 or max-timestamp, or a specified long "
                                                         "format timestamp")


def test_no_arguments_prints_usage(pk):
    proc = pk(*GOS)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("An interactive shell for getting topic-partition offsets.\n")


def test_data_dir_option(pk, tmp_path):
    other = tmp_path / "other"
    e = Engine(str(other))
    e.create_topic("elsewhere", 1, 1)
    produce(e, "elsewhere", 0, [now_ms()])
    e.close()
    assert ok(pk(*GOS, "--data-dir", str(other), "--topic", "elsewhere")) == lines(("elsewhere", 0, 1))


# --------------------------------------------------------------------------- pk-run-class itself
def test_run_class_usage_and_unknown_class(pk):
    proc = pk("pk-run-class")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("USAGE: pk-run-class ")
    for name in ("kafka.tools.DumpLogSegments", "kafka.tools.GetOffsetShell", "org.apache.kafka.tools.GetOffsetShell"):
        assert name in proc.err
    assert proc.err.count("\n") == 1
    fails(pk("pk-run-class", "kafka.tools.NoSuchTool", "--x"),
          "Error: Could not find or load main class kafka.tools.NoSuchTool")
    # -name/-loggc (kafka-run-class.sh's own options) are accepted and ignored
    proc = pk("pk-run-class", "-name", "x", "-loggc", "kafka.tools.Nope")
    assert proc.err == "Error: Could not find or load main class kafka.tools.Nope\n"
    proc = pk("pk-run-class", "--help")
    assert proc.returncode == 0 and proc.out.startswith("USAGE: pk-run-class ")
