"""GetOffsetShell against Kafka 4.4's own tool (the oracle).

The same topics and records (fixed timestamps, the largest one in the middle of a partition)
are written to the session's Kafka 4.4 broker and to a bundled-engine data directory. Every
command line runs through Kafka's `kafka-get-offsets --bootstrap-server <kafka>`, pk's
`pk-run-class org.apache.kafka.tools.GetOffsetShell --bootstrap-server <kafka>` and pk on the
engine (no --bootstrap-server); stdout, stderr's first line and the exit status must match.
The broker is shared with other test modules: outputs are cut down to this module's topics.

Documented differences asserted here: for a --time below -6 Kafka's admin client logs an ERROR
line per partition before the tool's own `Skip getting offsets ...` lines; pk prints only the
tool's lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from conftest import tool_path

CLS = "org.apache.kafka.tools.GetOffsetShell"
P = "ogo-"
ONE, MANY, EMPTY = P + "one", P + "many", P + "empty"
TOPICS = ((ONE, 3), (MANY, 12), (EMPTY, 1))
BASE_TS = (int(time.time()) // 60 - 120) * 60_000  # two hours old: within the 7-day retention
# (topic, partition) -> record timestamps, as offsets from BASE_TS in minutes
RECORDS = {
    (ONE, 0): [0, 1, 5, 2, 3],  # the largest timestamp at offset 2
    (ONE, 1): [0, 1, 2, 3, 4, 5],
    (ONE, 2): [4],
    **{(MANY, p): list(range(p % 4)) for p in range(12)},
}


def _kafka_side(kafka, kafka_tools):
    from confluent_kafka import Producer

    for topic, count in TOPICS:
        r = kafka_tools("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--create", "--topic", topic,
                        "--partitions", str(count))
        assert r.returncode == 0, r.err
    producer = Producer({"bootstrap.servers": kafka.bootstrap, "log_level": 0, "linger.ms": 0})
    for (topic, partition), minutes in RECORDS.items():
        for i, m in enumerate(minutes):
            producer.produce(topic, f"v{i}".encode(), partition=partition, timestamp=BASE_TS + m * 60_000)
            producer.flush(30)  # one batch per record, as the engine side writes them
    assert producer.flush(30) == 0
    # __consumer_offsets exists on the engine from the start; on the broker once a group commits
    from confluent_kafka import Consumer, TopicPartition

    deadline = time.monotonic() + 30
    while True:
        consumer = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": P + "g", "log_level": 0})
        try:
            consumer.commit(offsets=[TopicPartition(ONE, 0, 1)], asynchronous=False)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
        finally:
            consumer.close()


def _engine_side(data_dir):
    from pk.engine import records as rec
    from pk.engine.engine import Engine

    env = {**os.environ, "PK_DATA_DIR": data_dir}
    for topic, count in TOPICS:
        subprocess.run([tool_path("pk-topics"), "--create", "--topic", topic, "--partitions", str(count)],
                       env=env, check=True, capture_output=True)
    with Engine(data_dir) as engine:
        for (topic, partition), minutes in RECORDS.items():
            log = engine.partition(topic, partition)
            for i, m in enumerate(minutes):
                log.append_batches([rec.encode_batch([(None, f"v{i}".encode(), (), BASE_TS + m * 60_000)])])


@pytest.fixture(scope="module")
def sides(kafka, kafka_tools, tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("oracle-get-offsets"))
    _kafka_side(kafka, kafka_tools)
    _engine_side(data_dir)
    return kafka, kafka_tools, data_dir


def _ours(text: str) -> str:
    """The lines of this module's topics (and of __consumer_offsets' partition 0, whose
    earliest offset is 0 on both sides); the shared broker has other modules' topics."""
    return "".join(line + "\n" for line in text.splitlines()
                   if line.startswith((P, "__consumer_offsets:0:")) or ":" not in line.split(" ")[0])


def _pk(data_dir, *args):
    proc = subprocess.run([tool_path("pk-run-class"), CLS, *args], env={**os.environ, "PK_DATA_DIR": data_dir},
                          capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _first(text: str) -> str:
    return text.split("\n", 1)[0]


SCENARIOS = [
    ["--topic", ONE],
    ["--topic", ONE, "--time", "-1"],
    ["--topic", ONE, "--time", "latest"],
    ["--topic", ONE, "--time", "-2"],
    ["--topic", ONE, "--time", "earliest"],
    ["--topic", ONE, "--time", "-3"],
    ["--topic", ONE, "--time", "max-timestamp"],
    ["--topic", ONE, "--time", "-4"],
    ["--topic", ONE, "--time", "earliest-local"],
    ["--topic", ONE, "--time", "-5"],
    ["--topic", ONE, "--time", "latest-tiered"],
    ["--topic", ONE, "--time", "-6"],
    ["--topic", ONE, "--time", "earliest-pending-upload"],
    ["--topic", ONE, "--time", str(BASE_TS + 150_000)],
    ["--topic", ONE, "--time", str(BASE_TS)],
    ["--topic", ONE, "--time", str(BASE_TS + 3_600_000)],
    ["--topic", MANY],
    ["--topic", MANY, "--time", "-3"],
    ["--topic", EMPTY, "--time", "-3"],
    ["--topic", EMPTY, "--time", "-1"],
    ["--topic", P + ".*", "--partitions", "0,2,10"],
    ["--topic", P + "(one|many)", "--time", "-2"],
    ["--topic-partitions", f"{ONE}:1-,{MANY}:-2,{EMPTY}"],
    ["--topic-partitions", f"{MANY}:3-5,{ONE}:0"],
    ["--topic-partitions", f"{P}.*:11"],
    ["--exclude-internal-topics", "--topic", P + ".*", "--partitions", "0"],
    ["--topic", "__consumer_offsets", "--partitions", "0", "--time", "-2"],
    ["--topic", "__consumer_offsets", "--partitions", "0", "--exclude-internal-topics"],
    ["--partitions", "1"],
    ["--time", "-2"],
    # bad input
    ["--topic", ONE, "--time", "bogus"],
    ["--topic", ONE, "--time", "-1", "--time", "-2"],
    ["--topic-partitions", f"{ONE}:x"],
    ["--topic-partitions", f"{ONE}:1", "--topic", ONE],
    ["--partitions", "x"],
    ["--topic", P + "nope"],
    ["--topic", ONE, "--partitions", "7"],
    ["--topic", "[a"],
    ["--topic"],
    ["--bogus"],
    ["--broker-list", "127.0.0.1:9", "--topic", ONE],  # gone in Kafka 4
    ["--topic", ONE, "--command-config", "/nonexistent/client.properties"],
]


def test_scenarios_match_kafka_and_the_engine(sides):
    kafka, tools, data_dir = sides
    b = ("--bootstrap-server", kafka.bootstrap)
    report = []
    for args in SCENARIOS:
        k = tools("kafka-get-offsets", *b, *args)
        expected = (k.returncode, _ours(k.out), k.err_first)
        rc, out, err = _pk(data_dir, *b, *args)
        got = (rc, _ours(out), _first(err))
        if got != expected:
            report.append(f"pk/broker {json.dumps(args)}\n  kafka: {expected!r}\n  pk:    {got!r}")
        erc, eout, eerr = _pk(data_dir, *args)
        if (erc, _ours(eout), _first(eerr)) != got:
            report.append(f"engine {json.dumps(args)}\n  pk/broker: {got!r}\n  engine:    {(erc, eout, eerr)!r}")
    assert not report, "\n".join(report)


def test_time_below_minus_six(sides):
    """Kafka: the admin client's ERROR log lines, then the tool's Skip lines (exit 0); pk: the
    tool's Skip lines alone."""
    kafka, tools, data_dir = sides
    b = ("--bootstrap-server", kafka.bootstrap)
    args = ("--topic", ONE, "--time", "-7")
    k = tools("kafka-get-offsets", *b, *args)
    skips = "".join(line + "\n" for line in k.err.splitlines() if line.startswith("Skip getting offsets"))
    assert skips.count("\n") == 3 and "UnsupportedVersionException" in skips
    assert (k.returncode, k.out) == (0, "")
    assert _pk(data_dir, *b, *args) == (0, "", skips)
    assert _pk(data_dir, *args) == (0, "", skips)


def test_both_class_names_and_no_arguments(sides):
    kafka, tools, data_dir = sides
    old = subprocess.run([tool_path("pk-run-class"), "kafka.tools.GetOffsetShell", "--topic", ONE],
                         env={**os.environ, "PK_DATA_DIR": data_dir}, capture_output=True)
    assert (old.returncode, old.stdout.decode()) == _pk(data_dir, "--topic", ONE)[:2]
    bare = tools("kafka-get-offsets")
    rc, out, err = _pk(data_dir)
    assert (rc, out, _first(err)) == (bare.returncode, bare.out, bare.err_first)
