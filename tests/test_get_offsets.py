"""GetOffsetShell through pk-run-class (Kafka 3.7's org.apache.kafka.tools.GetOffsetShell), on
both backends (conftest.py): the bundled engine, and pk-server-start (or PK_TEST_BOOTSTRAP)
through --bootstrap-server / --broker-list and confluent-kafka's AdminClient. Records are
appended through the engine (the server shares its data directory) or, on another cluster,
produced with their timestamps; plus pk-run-class's own dispatch."""

from __future__ import annotations

import re
import time

import pytest

from conftest import Runner, free_port
from pk.engine import records
from pk.engine.engine import Engine

GOS = ("pk-run-class", "org.apache.kafka.tools.GetOffsetShell")
ERR = "Error occurred: "


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir  # the server half: the server's own data directory


@pytest.fixture
def plain(tmp_path):
    """pk's tools for tests that involve no backend."""
    return Runner(str(tmp_path / "data"))


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


def produce(backend, topic, partition, timestamps, **kw):
    """One batch of records with these timestamps: appended through the engine (on the
    server's data directory too), produced through the cluster where there is no such
    directory. Returns the first offset."""
    if backend.data_dir is not None:
        batch = records.encode_batch([(None, b"v", (), ts) for ts in timestamps], **kw)
        with Engine(backend.data_dir) as engine:
            return engine.partition(topic, partition).append_batches([batch])[0]
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": backend.bootstrap, "linger.ms": 50, "log_level": 0})
    for ts in timestamps:
        producer.produce(topic, b"v", partition=partition, timestamp=ts)
    assert producer.flush(30) == 0


# Kafka 4.4's list of --time values (what its tool prints for a malformed one)
TIMES = ("Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / "
         "-5 or latest-tiered / -6 or earliest-pending-upload, or a specified long format timestamp")


def java_sorted(items):
    """Kafka's row order: TopicPartition.toString(), "topic-partition", as a string."""
    return sorted(items, key=lambda tpo: f"{tpo[0]}-{tpo[1]}")


def lines(*items):
    return "".join(f"{t}:{p}:{o}\n" for t, p, o in items)


def ours(out, *topics):
    """The lines of these topics (a cluster holds other tests' topics too)."""
    return "".join(line + "\n" for line in out.splitlines() if line.rsplit(":", 2)[0] in topics)


@pytest.fixture
def orders(backend):
    """orders: 12 partitions, partition p holds p records; orders2 (named orders + "2"): 1
    partition, 5 records. Returns (orders, orders2)."""
    base = now_ms()
    # On a shared cluster backend.topic numbers the name (orders-<run>-1): the "x" keeps one
    # test's orders2 (orders-<run>-1x2) from being another test's orders (orders-<run>-12).
    orders = backend.topic("orders") + ("x" if backend.shared else "")
    orders2 = orders + "2"
    backend.create(orders, 12)
    backend.create(orders2, 1)
    for p in range(1, 12):
        produce(backend, orders, p, [base + i for i in range(p)])
    produce(backend, orders2, 0, [base] * 5)
    return orders, orders2


def test_latest_for_all_topics_in_kafkas_order(pk, backend, orders):
    o, o2 = orders
    out = ok(pk(*GOS, *backend, "--time", "-1"))  # (no arguments at all would print the usage)
    # Kafka's order: the string "topic-partition" (orders-10 before orders-2, orders-9 before orders2-0)
    expected = lines(*java_sorted([(o, p, p) for p in range(12)] + [(o2, 0, 5)]))
    assert ours(out, o, o2) == expected
    offsets_partitions = [int(line.split(":")[1]) for line in out.splitlines() if line.startswith("__consumer_offsets:")]
    if not backend.shared:
        assert out == lines(*java_sorted([("__consumer_offsets", p, 0) for p in range(50)])) + expected
    assert sorted(offsets_partitions) == list(range(50)) and out.splitlines() == sorted(
        out.splitlines(), key=lambda l: l.rsplit(":", 1)[0].rsplit(":", 1)[0] + "-" + l.rsplit(":", 2)[1])
    excluded = ok(pk(*GOS, *backend, "--exclude-internal-topics"))
    assert ours(excluded, o, o2) == expected and "__consumer_offsets" not in excluded
    assert ours(ok(pk(*GOS, *backend, "--time", "latest", "--exclude-internal-topics")), o, o2) == expected
    # the Scala-era class name is an alias
    assert ok(pk("pk-run-class", "kafka.tools.GetOffsetShell", *backend, "--topic", o2)) == lines((o2, 0, 5))


def test_topic_regex_is_a_whole_name_match(pk, backend, orders):
    o, o2 = orders
    assert ok(pk(*GOS, *backend, "--topic", o)) == lines(*java_sorted([(o, p, p) for p in range(12)]))
    # orders2 matches the regex too, but has no partition 3 or 11
    assert ok(pk(*GOS, *backend, "--topic", f"{o}.*", "--partitions", "3,11")) == lines((o, 11, 11), (o, 3, 3))
    assert ok(pk(*GOS, *backend, "--topic", o2.replace("orders", "ord.rs"))) == lines((o2, 0, 5))
    # Kafka's IncludeList: commas become alternation, quotes and spaces are dropped
    assert ok(pk(*GOS, *backend, "--topic", f"'{o2}, nothing'")) == lines((o2, 0, 5))


def test_partitions_list(pk, backend, orders):
    o, _ = orders
    assert ok(pk(*GOS, *backend, "--topic", o, "--partitions", "+1,2,,")) == lines((o, 1, 1), (o, 2, 2))
    assert ok(pk(*GOS, *backend, "--topic", o, "--partitions", "")) == ok(pk(*GOS, *backend, "--topic", o))
    fails(pk(*GOS, *backend, "--topic", o, "--partitions", "1,x"),
          ERR + "--partitions expects a comma separated list of numeric partition ids, but received: 1,x")
    fails(pk(*GOS, *backend, "--partitions", "1-3"),
          ERR + "--partitions expects a comma separated list of numeric partition ids, but received: 1-3")
    fails(pk(*GOS, *backend, "--partitions", " 1"),
          ERR + "--partitions expects a comma separated list of numeric partition ids, but received:  1")


@pytest.mark.parametrize("spec, expected", [
    ("{o}:1", [("{o}", 1, 1)]),
    ("{o}:2-4", [("{o}", 2, 2), ("{o}", 3, 3)]),  # upper bound exclusive
    ("{o}:10-", [("{o}", 10, 10), ("{o}", 11, 11)]),
    ("{o}:-2", [("{o}", 0, 0), ("{o}", 1, 1)]),
    ("{o2}", [("{o2}", 0, 5)]),
    ("{o2}:", [("{o2}", 0, 5)]),
    ("{o}:11,{o2}:0", [("{o}", 11, 11), ("{o2}", 0, 5)]),
    (":0,", [("{o}", 0, 0), ("{o2}", 0, 5)]),  # any topic's partition 0 (__consumer_offsets' too)
])
def test_topic_partitions_rules(pk, backend, orders, spec, expected):
    o, o2 = orders
    out = ok(pk(*GOS, *backend, "--topic-partitions", spec.format(o=o, o2=o2)))
    assert ours(out, o, o2) == lines(*[(t.format(o=o, o2=o2), p, off) for t, p, off in expected])
    if spec.startswith(":"):
        assert re.search(r"^__consumer_offsets:0:\d+$", out, re.M)
    else:
        assert ours(out, o, o2) == out


def test_earliest_after_retention(pk, backend):
    old = backend.topic("old")
    backend.create(old, 1, "retention.ms=3600000")
    t = now_ms()
    if backend.data_dir is not None and not backend.remote:
        produce(backend, old, 0, [t - 7200_000] * 3)  # older than retention: gone at the next check
        with Engine(backend.data_dir) as engine:
            engine.partition(old, 0).enforce_retention()
    else:  # a broker deletes at its own retention check: move the log start explicitly
        from confluent_kafka import TopicPartition

        produce(backend, old, 0, [t] * 3)
        admin = backend.admin()
        for f in admin.delete_records([TopicPartition(old, 0, 3)]).values():
            f.result(30)
    produce(backend, old, 0, [t, t])
    assert ok(pk(*GOS, *backend, "--topic", old, "--time", "-2")) == lines((old, 0, 3))
    assert ok(pk(*GOS, *backend, "--topic", old, "--time", "earliest")) == lines((old, 0, 3))
    assert ok(pk(*GOS, *backend, "--topic", old)) == lines((old, 0, 5))


def test_max_timestamp_is_the_record_with_the_largest_timestamp(pk, backend):
    mt = backend.topic("mt")
    backend.create(mt, 3, "segment.bytes=200")
    t = now_ms()
    # partition 0: the max sits in the middle of the first batch (3.7 itself answered with
    # the batch's last offset, KAFKA-16310; the record's own offset is the right answer)
    produce(backend, mt, 0, [t, t + 50, t + 10])
    produce(backend, mt, 0, [t + 20, t + 30])
    # partition 1: several segments, the max (first of two equal ones) in an earlier segment
    produce(backend, mt, 1, [t + 1])
    produce(backend, mt, 1, [t + 2, t + 90, t + 3])
    produce(backend, mt, 1, [t + 4, t + 90])
    if backend.data_dir is not None:
        with Engine(backend.data_dir) as engine:
            assert len(engine.partition(mt, 1).segments) > 1
    # partition 2: empty, no offset: left out
    expected = lines((mt, 0, 1), (mt, 1, 2))
    assert ok(pk(*GOS, *backend, "--topic", mt, "--time", "-3")) == expected
    assert ok(pk(*GOS, *backend, "--topic", mt, "--time", "max-timestamp")) == expected


def test_timestamp_lookup(pk, backend):
    ts = backend.topic("ts")
    backend.create(ts, 2)
    t = now_ms()
    produce(backend, ts, 0, [t, t + 10, t + 20])
    produce(backend, ts, 0, [t + 30, t + 40])
    produce(backend, ts, 1, [t])
    assert ok(pk(*GOS, *backend, "--topic", ts, "--time", str(t + 15))) == lines((ts, 0, 2))
    assert ok(pk(*GOS, *backend, "--topic", ts, "--time", str(t + 30))) == lines((ts, 0, 3))
    assert ok(pk(*GOS, *backend, "--topic", ts, "--time", str(t))) == lines((ts, 0, 0), (ts, 1, 0))
    # later than every record: no offset, partitions omitted, still exit 0
    assert ok(pk(*GOS, *backend, "--topic", ts, "--time", str(t + 1000))) == ""
    assert ok(pk(*GOS, *backend, "--topic", ts, "--time", "+0")) == lines((ts, 0, 0), (ts, 1, 0))


def test_command_config_is_accepted(pk, backend, orders, tmp_path):
    _, o2 = orders
    props = tmp_path / "admin.properties"
    props.write_text("request.timeout.ms=1000\n# comment\n")
    assert ok(pk(*GOS, *backend, "--topic", o2, "--command-config", str(props))) == lines((o2, 0, 5))
    fails(pk(*GOS, *backend, "--topic", o2, "--command-config", str(tmp_path / "missing")),
          ERR + str(tmp_path / "missing"))


def test_errors(pk, backend, orders):
    o, _ = orders
    fails(pk(*GOS, *backend, "--time", "yesterday"),
          ERR + "Malformed time argument yesterday. " + TIMES)
    fails(pk(*GOS, *backend, "--time", "99999999999999999999"),
          ERR + "Malformed time argument 99999999999999999999. " + TIMES)
    fails(pk(*GOS, *backend, "--topic", "nothing-at-all.*"),
          ERR + "Could not match any topic-partitions with the specified filters")
    fails(pk(*GOS, *backend, "--topic", o, "--partitions", "99"),
          ERR + "Could not match any topic-partitions with the specified filters")
    fails(pk(*GOS, *backend, "--topic-partitions", f"{o}:1", "--topic", o),
          ERR + "--topic-partitions cannot be used with --topic or --partitions")
    fails(pk(*GOS, *backend, "--topic-partitions", f"{o}:1", "--partitions", "1"),
          ERR + "--topic-partitions cannot be used with --topic or --partitions")
    fails(pk(*GOS, *backend, "--topic-partitions", "orders:1:2"),
          ERR + "org.apache.kafka.tools.TerseException: Invalid rule specification: orders:1:2")
    fails(pk(*GOS, *backend, "--topic-partitions", "orders:x"),
          ERR + "org.apache.kafka.tools.TerseException: Invalid rule specification: orders:x")
    fails(pk(*GOS, *backend, "--topic-partitions", "orders:3000000000"), ERR + 'For input string: "3000000000"')
    fails(pk(*GOS, *backend, "--topic", "orders["), ERR + "orders[ is an invalid regex.")
    fails(pk(*GOS, *backend, "--topic-partitions", ","),
          ERR + "Could not match any topic-partitions with the specified filters")
    fails(pk(*GOS, *backend, "--time", "1", "--time", "2"),
          ERR + "Found multiple arguments for option time, but you asked for only one")
    fails(pk(*GOS, *backend, "--bogus"), ERR + "bogus is not a recognized option")
    fails(pk(*GOS, *backend, "--topic"), ERR + "Option topic requires an argument")
    # argument checks run in Kafka's order: the --topic-partitions conflict before a bad --time
    fails(pk(*GOS, *backend, "--topic-partitions", "x", "--topic", "y", "--time", "bad"),
          ERR + "--topic-partitions cannot be used with --topic or --partitions")
    fails(pk(*GOS, *backend, "--time", "bad", "--topic", "["),
          ERR + "Malformed time argument bad. " + TIMES)


# --------------------------------------------------------------------------- --bootstrap-server / --broker-list
@pytest.mark.server_only("the remote backend's own options")
def test_bootstrap_server_and_x(pk, backend, orders):
    _, o2 = orders
    server = backend[1]
    expected = lines((o2, 0, 5))
    # Kafka 4.4 dropped the deprecated --broker-list (its tool: not a recognized option)
    fails(pk(*GOS, "--broker-list", server, "--topic", o2), ERR + "broker-list is not a recognized option")
    fails(pk(*GOS, *backend, *backend, "--topic", o2),
          ERR + "Found multiple arguments for option bootstrap-server, but you asked for only one")
    assert ok(pk(*GOS, *backend, "-X", "client.id=pk-test", "--topic", o2)) == expected
    fails(pk(*GOS, *backend, "-X", "no.such.property=1", "--topic", o2),
          ERR + "Unknown client configuration: no.such.property")


@pytest.mark.parametrize("address, message", [
    ("localhost", "Please provide valid host:port like host1:9091,host2:9092"),
    ("localhost:9092,", None),  # Java's split drops the trailing empty entry: valid
    ("", "Error while validating the bootstrap address"),
])
def test_invalid_bootstrap_server(plain, address, message):
    if message is None:
        proc = plain(*GOS, "--bootstrap-server", address, "--time", "bad")
        fails(proc, ERR + "Malformed time argument bad. " + TIMES)
    else:
        # a usage error, before GetOffsetShell's own checks
        fails(plain(*GOS, "--bootstrap-server", address, "--time", "bad"), message)


def test_unreachable_cluster_fails_within_the_timeout(plain, tmp_path):
    props = tmp_path / "admin.properties"
    props.write_text("default.api.timeout.ms=1500\n")
    start = time.monotonic()
    fails(plain(*GOS, "--bootstrap-server", f"127.0.0.1:{free_port()}", "--command-config", str(props), timeout=30),
          ERR + "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. "
                "Call: listTopics")
    assert 1.4 < time.monotonic() - start < 10
    fails(plain(*GOS, "-X", "client.id=x"),  # a usage error
          "Option -X needs --bootstrap-server: librdkafka properties do not apply to the bundled engine")


# --------------------------------------------------------------------------- the bundled engine only
def test_no_arguments_prints_usage(plain):
    proc = plain(*GOS)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("An interactive shell for getting topic-partition offsets.\n")


def test_data_dir_option(plain, tmp_path):
    other = tmp_path / "other"
    e = Engine(str(other))
    e.create_topic("elsewhere", 1, 1)
    e.partition("elsewhere", 0).append_batches([records.encode_batch([(None, b"v", (), now_ms())])])
    e.close()
    assert ok(plain(*GOS, "--data-dir", str(other), "--topic", "elsewhere")) == lines(("elsewhere", 0, 1))


# --------------------------------------------------------------------------- pk-run-class itself
def test_run_class_usage_and_unknown_class(plain):
    proc = plain("pk-run-class")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("USAGE: pk-run-class ")
    for name in ("kafka.tools.DumpLogSegments", "kafka.tools.GetOffsetShell", "org.apache.kafka.tools.GetOffsetShell"):
        assert name in proc.err
    assert proc.err.count("\n") == 1
    fails(plain("pk-run-class", "kafka.tools.NoSuchTool", "--x"),
          "Error: Could not find or load main class kafka.tools.NoSuchTool")
    # -name/-loggc (kafka-run-class.sh's own options) are accepted and ignored
    proc = plain("pk-run-class", "-name", "x", "-loggc", "kafka.tools.Nope")
    assert proc.err == "Error: Could not find or load main class kafka.tools.Nope\n"
    proc = plain("pk-run-class", "--help")
    assert proc.returncode == 0 and proc.out.startswith("USAGE: pk-run-class ")
