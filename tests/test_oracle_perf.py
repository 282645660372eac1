"""ProducerPerformance and ConsumerPerformance against Kafka 4.4's own (kafka-producer-perf-test,
kafka-consumer-perf-test), both run on the shared Kafka 4.4 broker with small record counts.

The figures differ from run to run, so outputs are compared by SHAPE: every number blanked,
the same lines with the same words and fields. Usage errors are compared by text: argparse4j
prints the usage, then `kafka-producer-perf-test: error: <message>` wrapped and justified at
75 columns; pk prints that message as one line. jopt-simple's errors (ConsumerPerformance) are
Kafka's first stderr line, pk's only one.
"""

from __future__ import annotations

import re

import pytest

from conftest import Runner
from kafka_oracle import wait_for_leaders

P = "ot-perf-"
TOPIC = P + "t"
PRODUCER = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER = "org.apache.kafka.tools.ConsumerPerformance"
NUMBER = re.compile(r"-?\d+(\.\d+)?|NaN|Infinity")
DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}")


def shape(text: str) -> list[str]:
    """Lines with every figure (dates, counts, rates, latencies) blanked."""
    return [NUMBER.sub("N", DATE.sub("DATE", line)) for line in text.splitlines()]


def argparse_error(err: str) -> str:
    """argparse4j's error paragraph after the usage, unwrapped (the justification's extra spaces
    and the line breaks after a hyphen undone); a "Did you mean" hint after it is left out."""
    m = re.search(r"kafka-producer-perf-test:\s+error:", err)
    assert m, err
    text = err[m.start():].split("\n\n", 1)[0].rstrip("\n")
    return re.sub(r"\s+", " ", re.sub(r"-\n", "-", text))


@pytest.fixture(scope="module")
def perf(kafka, kafka_tools, tmp_path_factory):
    b = kafka.bootstrap
    r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", TOPIC, "--partitions", "2")
    assert r.returncode == 0, r.err
    wait_for_leaders(b, {TOPIC: 2})
    r = kafka_tools("kafka-producer-perf-test", "--topic", TOPIC, "--num-records", "300", "--record-size", "50",
                    "--throughput", "-1", "--bootstrap-server", b)
    assert r.returncode == 0, r.err
    root = tmp_path_factory.mktemp("oracle-perf")
    (root / "payloads.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "client.properties").write_text("acks=1\n")
    return b, root, Runner(str(root / "pk-data"))


def both(kafka_tools, pk, script, cls, *args):
    return kafka_tools(script, *args), pk("pk-run-class", cls, *args)


# --------------------------------------------------------------------------- ProducerPerformance
def test_producer_perf_output_shape(perf, kafka_tools):
    b, root, pk = perf
    base = ["--topic", TOPIC, "--num-records", "40", "--throughput", "-1"]
    scenarios = [
        [*base, "--record-size", "20", "--bootstrap-server", b],
        [*base, "--record-size", "20", "--command-property", f"bootstrap.servers={b}", "acks=1", "linger.ms=5"],
        [*base, "--record-size", "20", "--producer-props", f"bootstrap.servers={b}"],  # deprecated: a warning
        [*base, "--record-size", "20", "--producer.config", str(root / "client.properties"), "--bootstrap-server", b],
        [*base, "--record-size", "20", "--command-config", str(root / "client.properties"), "--bootstrap-server", b],
        [*base, "--record-size", "20", "--bootstrap-server", b, "--warmup-records", "10"],
        [*base, "--payload-monotonic", "--bootstrap-server", b, "--random-seed", "7"],
        [*base, "--payload-file", str(root / "payloads.txt"), "--bootstrap-server", b],
        [*base, "--payload-file", str(root / "payloads.txt"), "--payload-delimiter", "a", "--bootstrap-server", b],
    ]
    for args in scenarios:
        k, p = both(kafka_tools, pk, "kafka-producer-perf-test", PRODUCER, *args)
        assert (p.returncode, k.returncode) == (0, 0), (args, p.err, k.err)
        assert shape(p.out) == shape(k.out), args
        assert p.err == ""
    # --reporting-interval: window lines while it runs (how many depends on timing), then the total
    args = ["--topic", TOPIC, "--num-records", "12", "--throughput", "20", "--record-size", "10",
            "--bootstrap-server", b, "--reporting-interval", "150"]
    k, p = both(kafka_tools, pk, "kafka-producer-perf-test", PRODUCER, *args)
    ks, ps = shape(k.out), shape(p.out)
    assert len(ks) >= 2 and len(ps) >= 2 and ks[-1] == ps[-1]
    window = "N records sent, N records/sec (N MB/sec), N ms avg latency, N ms max latency."
    assert set(ks[:-1]) == set(ps[:-1]) == {window}


def test_producer_perf_print_metrics(perf, kafka_tools):
    """--print-metrics: Kafka prints every client metric (over a hundred); pk only the counts it
    can state exactly, in the same table format, with the same names."""
    b, _, pk = perf
    args = ["--topic", TOPIC, "--num-records", "10", "--record-size", "10", "--throughput", "-1",
            "--bootstrap-server", b, "--print-metrics"]
    k, p = both(kafka_tools, pk, "kafka-producer-perf-test", PRODUCER, *args)
    assert (k.returncode, p.returncode) == (0, 0)
    kl, pl = k.out.splitlines(), p.out.splitlines()
    assert shape(kl[0]) == shape(pl[0]) and kl[1] == pl[1] == ""
    assert re.fullmatch(r"Metric Name +Value", kl[2]) and re.fullmatch(r"Metric Name +Value", pl[2])
    row = re.compile(r"([\w-]+:[\w-]+:\{[^}]*\}) +: (\S+)")
    kafka_rows = dict(row.fullmatch(line).groups() for line in kl[3:])
    pk_rows = dict(row.fullmatch(line).groups() for line in pl[3:])
    assert pk_rows and set(pk_rows) <= set(kafka_rows)
    for name in ("producer-metrics:record-send-total:{client-id=perf-producer-client}",
                 f"producer-topic-metrics:record-send-total:{{client-id=perf-producer-client, topic={TOPIC}}}"):
        assert kafka_rows[name] == pk_rows[name] == "10.000"
    assert p.err.startswith("pk: ")  # and says so on stderr


def test_producer_perf_usage_errors(perf, kafka_tools):
    b, root, pk = perf
    base = ["--topic", TOPIC, "--num-records", "5", "--throughput", "-1"]
    cases = [
        [], ["--version"], ["--bogus"], ["--topic", "x"], ["--num-records", "5", "--record-size", "1", "--throughput", "1"],
        [*base], [*base, "--record-size", "1", "--payload-monotonic"],
        [*base, "--record-size", "1"],  # no --bootstrap-server, --command-property, ...
        ["--topic", "x", "--num-records", "many"], ["--throughput", "fast"], ["--record-size", "3000000000"],
        ["--topic"], ["--command-property", "--topic", "t"], ["--p", "x"], ["--c", "x"], ["-topic", "t"],
        [*base, "extra", "--record-size", "1"], [*base, "--record-size", "1", "--print-metrics=yes"],
        ["--topic", "x", "--num-records", "0", "--record-size", "0", "--throughput", "1"],
        ["--topic", "x", "--num-records", "2", "--record-size", "0", "--throughput", "1", "--warmup-records", "5"],
        [*base, "--record-size", "0"],
        [*base, "--record-size", "1", "--bootstrap-server", b, "--transaction-duration-ms", "0", "--reporting-interval", "0"],
        [*base, "--record-size", "1", "--bootstrap-server", b, "--reporting-interval", "0", "--key-distribution", "range"],
        [*base, "--record-size", "1", "--bootstrap-server", b, "--key-distribution", "range"],
        [*base, "--record-size", "1", "--bootstrap-server", b, "--record-key-range", "0"],
        [*base, "--record-size", "1", "--bootstrap-server", b, "--key-distribution", "zipf"],
    ]
    for args in cases:
        k, p = both(kafka_tools, pk, "kafka-producer-perf-test", PRODUCER, *args)
        if not args:  # no arguments: the help on stdout, exit 0 (pk's is Click's)
            assert (k.returncode, p.returncode, k.err, p.err) == (0, 0, "", "")
            assert "usage: kafka-producer-perf-test" in k.out and "--command-property" in p.out
            continue
        assert (p.returncode, p.out, k.returncode, k.out) == (1, "", 1, ""), args
        assert p.err == argparse_error(k.err) + "\n", args
    # errors found after parsing: the JVM's first line (Kafka adds the stack trace)
    for args in ([*base, "--record-size", "1", "--command-property", "acks"],
                 [*base, "--record-size", "1", "--producer-props", "a=b=c"],
                 [*base, "--record-size", "1", "--command-config", str(root / "missing.properties")],
                 [*base, "--payload-file", str(root / "missing.txt"), "--bootstrap-server", b]):
        k, p = both(kafka_tools, pk, "kafka-producer-perf-test", PRODUCER, *args)
        assert (p.returncode, p.out, p.err) == (k.returncode, k.out, k.err_first + "\n"), args


def test_producer_perf_transactions_are_refused(perf, kafka_tools):
    """Kafka 4.4 runs transactions when given --transactional-id or --transaction-duration-ms;
    pk's ProducerPerformance runs none (the bundled engine has no transactions) and says so."""
    b, _, pk = perf
    for extra in (["--transactional-id", P + "txn"], ["--transaction-duration-ms", "50"]):
        args = ["--topic", TOPIC, "--num-records", "10", "--record-size", "10", "--throughput", "-1",
                "--bootstrap-server", b, *extra]
        k, p = both(kafka_tools, pk, "kafka-producer-perf-test", PRODUCER, *args)
        assert k.returncode == 0 and shape(k.out) == [
            "N records sent, N records/sec (N MB/sec), N ms avg latency, N ms max latency, N ms Nth, N ms Nth, "
            "N ms Nth, N ms Nth."]
        assert (p.returncode, p.out) == (1, "")
        assert p.err == ("Transactions are not supported: pk's ProducerPerformance runs no transactions (give no "
                         "--transactional-id, --transaction-duration-ms or transactional.id)\n")


# --------------------------------------------------------------------------- ConsumerPerformance
def test_consumer_perf_output_shape(perf, kafka_tools):
    b, root, pk = perf
    scenarios = [
        ["--topic", TOPIC, "--num-records", "100"],
        ["--topic", TOPIC, "--num-records", "100", "--hide-header"],
        ["--topic", TOPIC, "--messages", "100"],  # deprecated: a warning first
        ["--include", P + ".*", "--num-records", "100"],
        ["--topic", TOPIC, "--num-records", "100", "--command-property", "client.id=perf-x", "max.poll.records=50"],
        ["--topic", TOPIC, "--num-records", "100", "--consumer.config", str(root / "client.properties")],
        ["--topic", TOPIC, "--num-records", "100", "--date-format", "yyyy-MM-dd'T'HH:mm"],
        ["--topic", TOPIC, "--num-records", "100", "--fetch-size", "2048", "--socket-buffer-size", "65536"],
        # more than the topic holds: the timeout warning, then the result line
        ["--topic", TOPIC, "--num-records", "100000", "--timeout", "1000"],
    ]
    for i, args in enumerate(scenarios):
        k = kafka_tools("kafka-consumer-perf-test", "--bootstrap-server", b, *args, "--group", f"{P}k{i}")
        p = pk("pk-run-class", CONSUMER, "--bootstrap-server", b, *args, "--group", f"{P}p{i}")
        assert (p.returncode, k.returncode) == (0, 0), (args, p.err, k.err)
        assert shape(p.out) == shape(k.out), args
        assert p.err == ""
    # --show-detailed-stats: the detailed header, then progress lines (how many depends on timing)
    args = ["--topic", TOPIC, "--num-records", "300", "--show-detailed-stats", "--reporting-interval", "1"]
    k = kafka_tools("kafka-consumer-perf-test", "--bootstrap-server", b, *args, "--group", P + "kd")
    p = pk("pk-run-class", CONSUMER, "--bootstrap-server", b, *args, "--group", P + "pd")
    ks, ps = shape(k.out), shape(p.out)
    assert ks[0] == ps[0] == ("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                              "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
    assert set(ks[1:]) <= {"DATE, N, N, N, N, N, N, N, N, N"} and set(ps[1:]) <= {"DATE, N, N, N, N, N, N, N, N, N"}


def test_consumer_perf_print_metrics(perf, kafka_tools):
    b, _, pk = perf
    args = ["--bootstrap-server", b, "--topic", TOPIC, "--num-records", "50", "--print-metrics"]
    k = kafka_tools("kafka-consumer-perf-test", *args, "--group", P + "km")
    p = pk("pk-run-class", CONSUMER, *args, "--group", P + "pm")
    kl, pl = k.out.splitlines(), p.out.splitlines()
    assert shape(k.out)[:3] == shape(p.out)[:3] and kl[2] == pl[2] == ""
    assert re.fullmatch(r"Metric Name +Value", kl[3]) and re.fullmatch(r"Metric Name +Value", pl[3])
    row = re.compile(r"([\w-]+:[\w-]+:\{[^}]*\}) +: (\S+)")
    kafka_names = {row.fullmatch(line).group(1) for line in kl[4:]}
    pk_names = {row.fullmatch(line).group(1) for line in pl[4:]}
    assert pk_names and pk_names <= kafka_names
    assert p.err.startswith("pk: ")


def test_consumer_perf_errors(perf, kafka_tools):
    b, root, pk = perf
    bs = ["--bootstrap-server", b]
    # option errors: Kafka's first stderr line (the help table follows it) is pk's one line
    for args in ([*bs, "--num-records", "5"], [*bs, "--topic", TOPIC], [*bs, "--topic", TOPIC, "--include", "x",
                 "--num-records", "5"], [*bs, "--topic", TOPIC, "--messages", "5", "--num-records", "5"],
                 [*bs, "--topic", TOPIC, "--num-records", "5", "--bogus"], [*bs, "--topic", TOPIC, "--num-records"],
                 [*bs, "--topic", TOPIC, "--num-records", "5", "--broker-list", b],
                 [*bs, "--topic", TOPIC, "--num-records", "5", "--threads", "2"],
                 [*bs, "--topic", TOPIC, "--topic", TOPIC, "--num-records", "5"]):
        k, p = both(kafka_tools, pk, "kafka-consumer-perf-test", CONSUMER, *args)
        assert (p.returncode, p.out, p.err) == (k.returncode, k.out, k.err_first + "\n"), args
    # errors when the value is read, after the header: Kafka prints getMessage() alone
    for args in ([*bs, "--topic", TOPIC, "--num-records", "many"], [*bs, "--topic", TOPIC, "--messages", "x"],
                 [*bs, "--topic", TOPIC, "--num-records", "5", "--fetch-size", "big"],
                 [*bs, "--topic", TOPIC, "--num-records", "5", "--reporting-interval", "0"],
                 [*bs, "--include", "[", "--num-records", "5"]):
        k, p = both(kafka_tools, pk, "kafka-consumer-perf-test", CONSUMER, *args)
        assert (p.returncode, p.out, p.err) == (k.returncode, k.out, k.err_first + "\n"), args
    # no arguments: the description and help on stderr, exit 1
    k, p = both(kafka_tools, pk, "kafka-consumer-perf-test", CONSUMER)
    assert (k.returncode, p.returncode, k.out, p.out) == (1, 1, "", "")
    assert p.err.split("\n")[0] == k.err_first == "This tool is used to verify the consumer performance."
    k, p = both(kafka_tools, pk, "kafka-consumer-perf-test", CONSUMER, "--version")
    assert (p.returncode, p.out) == (k.returncode, k.out) and k.out.startswith("4.4.0")
    # Kafka requires --bootstrap-server; without it pk reads its bundled engine (documented)
    k, p = both(kafka_tools, pk, "kafka-consumer-perf-test", CONSUMER, "--topic", P + "engine", "--num-records",
                "1", "--timeout", "200", "--hide-header")
    assert (k.returncode, k.err_first) == (1, 'Missing required argument "[bootstrap-server]"')
    assert p.returncode == 0 and shape(p.out)[0].startswith("WARNING: Exiting before consuming the expected number")
