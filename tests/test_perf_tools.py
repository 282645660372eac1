"""ProducerPerformance and ConsumerPerformance (Kafka 4.4) through the installed pk-run-class,
on both backends (conftest.py): the bundled engine on a temporary data directory, and
pk-server-start (or PK_TEST_BOOTSTRAP) through --bootstrap-server and confluent-kafka. The
exact result-line formats, the records really stored and read, throttling, and every argument
error as one line on stderr with exit status 1."""

from __future__ import annotations

import re
import time

import pytest

from pk.commands.errors import JavaError
from pk.commands.perf_common import JavaDateFormat, java_fixed
from pk.commands.producer_perf import ThroughputThrottler
from conftest import Runner
from pk.engine import compression
from pk.engine.engine import Engine

PRODUCER = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER = "org.apache.kafka.tools.ConsumerPerformance"

# ProducerPerformance.Stats.printTotal (3.7): %d, %f, %.2f, %.2f, %.2f, then four %d
TOTAL_RE = re.compile(
    r"(\d+) records sent, (\d+\.\d{6}|Infinity|NaN) records/sec \((\d+\.\d{2}|Infinity|NaN) MB/sec\), "
    r"(\d+\.\d{2}|NaN) ms avg latency, (\d+\.\d{2}) ms max latency, (\d+) ms 50th, (\d+) ms 95th, "
    r"(\d+) ms 99th, (\d+) ms 99\.9th\.")
# Stats.printWindow: %d, %.1f, %.2f, %.1f, %.1f
WINDOW_RE = re.compile(
    r"(\d+) records sent, (\d+\.\d) records/sec \((\d+\.\d{2}) MB/sec\), (\d+\.\d) ms avg latency, "
    r"(\d+\.\d) ms max latency\.")
HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
          "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DETAILED_HEADER = ("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                   "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DATE = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3}"  # yyyy-MM-dd HH:mm:ss:SSS
F4 = r"(?:\d+\.\d{4}|Infinity|NaN)"
# ConsumerPerformance's final line: %s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f
RESULT_RE = re.compile(rf"({DATE}), ({DATE}), (\d+\.\d{{4}}), ({F4}), (\d+), ({F4}), (\d+), (-?\d+), ({F4}), ({F4})")
# printConsumerProgress: %s, %d, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f
DETAIL_RE = re.compile(rf"({DATE}), 0, (\d+\.\d{{4}}), ({F4}), (\d+), ({F4}), (\d+), (-?\d+), ({F4}), ({F4})")
TIMEOUT_WARNING = ("WARNING: Exiting before consuming the expected number of records: timeout ({} ms) exceeded. "
                   "You can use the --timeout option to increase the timeout.")


# --------------------------------------------------------------------------- helpers
@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir


@pytest.fixture
def plain(tmp_path):
    """pk's tools for tests that involve no backend."""
    return Runner(str(tmp_path / "data"))


def produce_perf(pk, backend, *args, timeout=120):
    return pk("pk-run-class", PRODUCER, *backend, *args, timeout=timeout)


def consume_perf(pk, backend, *args, timeout=120):
    return pk("pk-run-class", CONSUMER, *backend, *args, timeout=timeout)


def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert "Traceback" not in proc.err
    return proc


def fails(proc, message):
    """Exactly one line on stderr, exit status 1, never a traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n", proc.err
    assert "Traceback" not in proc.out
    return proc


def produce(pk, backend, topic, n=2000, size=100, *props):
    proc = ok(produce_perf(pk, backend, "--topic", topic, "--num-records", str(n), "--record-size", str(size),
                           "--throughput", "-1", "--command-property", "acks=1", *props))
    assert proc.err == ""
    return proc


def total(proc):
    lines = proc.out.splitlines()
    m = TOTAL_RE.fullmatch(lines[-1])
    assert m, proc.out
    return m


def result(proc):
    lines = proc.out.splitlines()
    m = RESULT_RE.fullmatch(lines[-1])
    assert m, proc.out
    return m


def partitions(backend, topic):
    if backend.data_dir is not None:
        with Engine(backend.data_dir) as engine:
            return engine.topic(topic).partitions
    return len(backend.admin().list_topics(topic, timeout=30).topics[topic].partitions)


def stored(backend, topic):
    """Every record of every partition: the engine's reading of the log (the server shares its
    data directory), or a consumer's on another cluster."""
    return [r for p in range(partitions(backend, topic)) for r in backend.records(topic, p)]


def stored_batches(backend, topic):
    return [h for p in range(partitions(backend, topic)) for h, _ in backend.batches(topic, p)]


# --------------------------------------------------------------------------- ProducerPerformance
def test_producer_sends_every_record_and_prints_3_7_total_line(pk, backend):
    t = backend.topic("perf")
    proc = produce(pk, backend, t, 2000, 100)
    assert len(proc.out.splitlines()) == 1  # a short run: no 5-second window line
    m = total(proc)
    count, rate, mb, avg, biggest = int(m[1]), float(m[2]), float(m[3]), float(m[4]), float(m[5])
    p50, p95, p99, p999 = map(int, m.group(6, 7, 8, 9))
    assert count == 2000
    assert rate > 0
    assert mb == pytest.approx(rate * 100 / (1024 * 1024), abs=0.006)  # MB = 1024 * 1024 bytes
    assert 0 <= p50 <= p95 <= p99 <= p999 <= biggest
    assert avg <= biggest
    recs = stored(backend, t)
    assert len(recs) == 2000
    values = [r.value for r in recs]
    assert all(len(v) == 100 and re.fullmatch(rb"[A-Z]{100}", v) for v in values)
    assert len(set(values)) > 1900  # random payloads, not one buffer repeated
    assert all(r.key is None for r in recs)


def test_producer_throttles_and_prints_5_second_windows(pk, backend):
    t = backend.topic("slow")
    start = time.monotonic()
    proc = ok(produce_perf(pk, backend, "--topic", t, "--num-records", "2900", "--record-size", "10",
                           "--throughput", "500", "--command-property", "acks=1"))
    elapsed = time.monotonic() - start
    lines = proc.out.splitlines()
    windows = [WINDOW_RE.fullmatch(line) for line in lines[:-1]]
    assert lines[:-1] and all(windows), proc.out
    assert sum(int(w[1]) for w in windows) < 2900
    assert all(250 <= float(w[2]) <= 1000 for w in windows)  # the window's own rate
    m = total(proc)
    assert int(m[1]) == 2900
    assert 250 <= float(m[2]) <= 1000  # 500 records/s asked: within a factor of 2
    assert elapsed >= 2900 / 500 / 2
    assert len(stored(backend, t)) == 2900


def test_producer_unthrottled_is_faster_than_a_low_limit(pk, backend):
    proc = produce(pk, backend, backend.topic("fast"), 3000, 10)
    assert float(total(proc)[2]) > 1000


def test_payload_file_with_delimiter(pk, backend, tmp_path):
    path = tmp_path / "payloads.txt"
    path.write_text("a1,b22,c333,")
    t = backend.topic("pl")
    proc = ok(produce_perf(pk, backend, "--topic", t, "--num-records", "300", "--payload-file", str(path),
                           "--payload-delimiter", ",", "--throughput", "-1", "--command-property", "acks=1"))
    lines = proc.out.splitlines()
    assert lines[0] == f"Reading payloads from: {path}"
    assert lines[1] == "Number of records read: 3"  # Java's split drops the trailing empty string
    assert int(total(proc)[1]) == 300
    values = [r.value for r in stored(backend, t)]
    assert len(values) == 300
    assert set(values) == {b"a1", b"b22", b"c333"}  # picked at random


def test_payload_file_relative_path(pk, backend, data_dir, tmp_path):
    import subprocess

    from conftest import tool_path

    (tmp_path / "p.txt").write_text("first line\nsecond line\n")
    t = backend.topic("nl")
    where = list(backend) or ["--data-dir", data_dir]
    proc = subprocess.run([tool_path("pk-run-class"), PRODUCER, "--topic", t, "--num-records", "50",
                           "--payload-file", "p.txt", "--throughput", "-1", "--command-property", "acks=1", *where],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Reading payloads from: {tmp_path}/p.txt"
    assert lines[1] == "Number of records read: 2"
    assert {r.value for r in stored(backend, t)} == {b"first line", b"second line"}


def test_producer_props_and_config_file_reach_the_producer(pk, backend, tmp_path):
    config = tmp_path / "producer.properties"
    config.write_text("compression.type=gzip\nbatch.size=2048\n")
    t = backend.topic("zipped")
    # --producer-props wins over --producer.config
    produce(pk, backend, t, 1000, 100, "compression.type=lz4", "linger.ms=5", "--producer.config", str(config))
    assert len(stored(backend, t)) == 1000
    if backend.data_dir is not None:
        headers = stored_batches(backend, t)
        codecs = {h.compression for h in headers}
        # (librdkafka sends a batch uncompressed when lz4 would not make it smaller)
        assert codecs == {compression.LZ4} or (backend.remote and codecs == {compression.LZ4, compression.NONE})
        assert len(headers) > 10  # batch.size=2048 from the file: many small batches


@pytest.mark.server_only("Kafka's way of naming the cluster: bootstrap.servers in the producer's properties")
def test_bootstrap_servers_in_the_producer_properties(pk, backend, tmp_path):
    t, u = backend.topic("props"), backend.topic("file")
    ok(pk("pk-run-class", PRODUCER, "--topic", t, "--num-records", "20", "--record-size", "10", "--throughput",
          "-1", "--command-property", "acks=1", f"bootstrap.servers={backend.bootstrap}"))
    config = tmp_path / "producer.properties"
    config.write_text(f"bootstrap.servers={backend.bootstrap}\nacks=all\n")
    ok(pk("pk-run-class", PRODUCER, "--topic", u, "--num-records", "30", "--record-size", "10", "--throughput",
          "-1", "--producer.config", str(config), "-X", "linger.ms=1"))
    assert len(stored(backend, t)) == 20 and len(stored(backend, u)) == 30


def test_print_metrics_prints_a_metrics_table(pk, backend):
    t = backend.topic("m")
    proc = ok(produce_perf(pk, backend, "--topic", t, "--num-records", "100", "--record-size", "10", "--throughput",
                           "-1", "--command-property", "acks=1", "client.id=me", "--print-metrics"))
    lines = proc.out.splitlines()
    assert TOTAL_RE.fullmatch(lines[0])
    assert lines[1] == ""
    assert re.fullmatch(r"Metric Name +   Value", lines[2])
    width = len(lines[2]) - len("   Value")
    assert f"{'producer-metrics:record-send-total:{client-id=me}':<{width}} : 100.000" in lines
    assert f"{'producer-topic-metrics:record-send-total:{client-id=me, topic=' + t + '}':<{width}} : 100.000" in lines
    names = [line.split(" : ")[0].rstrip() for line in lines[3:]]
    assert names == sorted(names)
    assert proc.err.startswith("pk: ")


def test_records_too_large_fail_one_by_one(pk, backend):
    proc = produce_perf(pk, backend, "--topic", backend.topic("big"), "--num-records", "3", "--record-size",
                        "2000000", "--throughput", "-1", "--command-property", "acks=1")
    assert proc.returncode == 1
    errors = proc.err.splitlines()
    assert len(errors) == 3
    assert all(e.startswith("org.apache.kafka.common.errors.RecordTooLargeException: The message is ")
               for e in errors)
    # nothing acknowledged: Java's 0/0 average prints NaN
    assert proc.out.splitlines()[-1] == ("0 records sent, 0.000000 records/sec (0.00 MB/sec), NaN ms avg latency, "
                                         "0.00 ms max latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th.")


def test_transactional_id_alone_asks_for_transactions_as_in_4_4(pk, backend):
    t = backend.topic("tx")
    proc = produce_perf(pk, backend, "--topic", t, "--num-records", "10", "--record-size", "10", "--throughput",
                        "-1", "--command-property", "acks=1", "--transactional-id", "my-tx")
    assert proc.returncode == 1 and "Transactions are not supported" in proc.err


def test_transactions_are_refused(pk, backend):
    t, u = backend.topic("tx"), backend.topic("tx2")
    proc = produce_perf(pk, backend, "--topic", t, "--num-records", "10", "--record-size", "10", "--throughput",
                        "-1", "--command-property", "acks=1", "--transaction-duration-ms", "100")
    assert proc.returncode == 1
    assert len(proc.err.splitlines()) == 1 and "Transactions are not supported" in proc.err
    proc = produce_perf(pk, backend, "--topic", u, "--num-records", "10", "--record-size", "10", "--throughput",
                        "-1", "--command-property", "transactional.id=abc")
    assert proc.returncode == 1 and "Transactions are not supported" in proc.err
    assert stored(backend, t) == []


@pytest.mark.engine_only("arguments only: no backend involved")
def test_producer_no_arguments_prints_help_on_stdout_exit_0(pk, backend):
    proc = pk("pk-run-class", PRODUCER)
    assert proc.returncode == 0 and proc.err == ""
    assert "This tool is used to verify the producer performance." in proc.out
    assert "--num-records" in proc.out


@pytest.mark.engine_only("arguments only: no backend involved")
def test_producer_help_and_no_version(pk, backend):
    proc = pk("pk-run-class", PRODUCER, "--help")
    assert proc.returncode == 0 and "--command-property" in proc.out and "--bootstrap-server" in proc.out
    # Kafka 4.4's tool has no --version: argparse4j reports it as an unrecognized argument
    fails(pk("pk-run-class", PRODUCER, "--version"),
          "kafka-producer-perf-test: error: unrecognized arguments: '--version'")


def test_option_prefixes_are_accepted_like_argparse4j(pk, backend):
    t = backend.topic("abbrev")
    ok(produce_perf(pk, backend, "--top", t, "--num", "5", "--record-s", "10", "--thr", "-1", "--command-p", "acks=1"))
    assert len(stored(backend, t)) == 5


BASE = ["--topic", "t", "--num-records", "5", "--throughput", "-1"]


@pytest.mark.parametrize("args, message", [
    (["--num-records", "5", "--record-size", "1", "--throughput", "1"],
     "kafka-producer-perf-test: error: argument --topic is required"),
    # argparse4j reports the last missing required argument
    (["--record-size", "1"], "kafka-producer-perf-test: error: argument --throughput is required"),
    (["--topic", "t", "--record-size", "1", "--throughput", "1"],
     "kafka-producer-perf-test: error: argument --num-records is required"),
    (BASE, "kafka-producer-perf-test: error: one of the arguments --record-size --payload-file --payload-monotonic is required"),
    (BASE + ["--record-size", "1", "--payload-file", "f"],
     "kafka-producer-perf-test: error: argument --payload-file: not allowed with argument --record-size"),
    (["--topic", "t", "--num-records", "many"],
     "kafka-producer-perf-test: error: argument --num-records: could not convert 'many' to Long "
     "(For input string: \"many\")"),
    (["--throughput", "x1.5"],
     "kafka-producer-perf-test: error: argument --throughput: could not convert 'x1.5' to Double "
     "(For input string: \"x1.5\")"),
    (["--record-size", "3000000000"],
     "kafka-producer-perf-test: error: argument --record-size: could not convert '3000000000' to Integer "
     "(For input string: \"3000000000\")"),
    (["--topic"], "kafka-producer-perf-test: error: argument --topic: expected one argument"),
    (["--topic", "--num-records", "5"], "kafka-producer-perf-test: error: argument --topic: expected one argument"),
    (["--throughput", "-1.5"], "kafka-producer-perf-test: error: argument --throughput: expected one argument"),
    (["--producer-props", "--topic", "t"], "kafka-producer-perf-test: error: argument --producer-props: expected 1 argument(s)"),
    (["--bootstrap-server"], "kafka-producer-perf-test: error: argument --bootstrap-server: expected one argument"),
    (["-X"], "kafka-producer-perf-test: error: argument -X: expected one argument"),
    (["--broker-list", "localhost:9092"], "kafka-producer-perf-test: error: unrecognized arguments: '--broker-list'"),
    (["-topic", "t"], "kafka-producer-perf-test: error: unrecognized arguments: '-topic'"),
    (BASE + ["extra", "--record-size", "1"],
     "kafka-producer-perf-test: error: unrecognized arguments: 'extra --record-size 1'"),
    (["--producer", "acks=1"],
     "kafka-producer-perf-test: error: ambiguous option: --producer could match --producer-props, --producer.config"),
    (["--p", "x"], "kafka-producer-perf-test: error: ambiguous option: --p could match --payload-delimiter, "
                   "--payload-file, --payload-monotonic, --print-metrics, --producer-props, --producer.config"),
    (BASE + ["--record-size", "1", "--print-metrics=yes"],
     "kafka-producer-perf-test: error: argument --print-metrics: ignore implicit argument 'yes'"),
    (BASE + ["--record-size", "1"],
     "kafka-producer-perf-test: error: At least one of --bootstrap-server, --command-property, --producer-props, "
     "--producer.config or --command-config must be specified."),
    (BASE + ["--record-size", "1", "--command-property", "acks"],
     'Exception in thread "main" java.lang.IllegalArgumentException: Invalid property: acks'),
    (BASE + ["--record-size", "1", "--command-property", "a=b=c"],
     'Exception in thread "main" java.lang.IllegalArgumentException: Invalid property: a=b=c'),
    (BASE + ["--record-size", "1", "--command-config", "/no/such/file"],
     'Exception in thread "main" java.nio.file.NoSuchFileException: /no/such/file'),
])
def test_producer_argument_errors(plain, args, message):
    proc = fails(plain("pk-run-class", PRODUCER, *args), message)
    assert proc.out == ""


@pytest.mark.parametrize("args, message", [
    (BASE + ["--record-size", "1", "--command-property", "batch.size=big"],
     'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
     'Invalid value big for configuration batch.size: Not a number of type INT'),
    (BASE + ["--record-size", "1", "--command-property", "compression.type=brotli"],
     'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
     'Invalid value brotli for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd'),
    (BASE + ["--record-size", "-1", "--command-property", "acks=1"],
     "kafka-producer-perf-test: error: --record-size should be greater than zero."),
    (["--topic", "t", "--num-records", "0", "--throughput", "-1", "--record-size", "1", "--command-property", "acks=1"],
     "kafka-producer-perf-test: error: --num-records should be greater than zero."),
    (["--topic", "bad name", "--num-records", "5", "--throughput", "-1", "--record-size", "1",
      "--command-property", "acks=1"],
     "org.apache.kafka.common.errors.InvalidTopicException: Invalid topics: [bad name]"),
])
def test_producer_errors(pk, backend, args, message):
    """Errors found once the producer exists (or while it is configured), on both backends."""
    t = backend.topic("t")
    proc = fails(produce_perf(pk, backend, *[t if a == "t" else a for a in args]), message)
    assert proc.out == ""


@pytest.mark.parametrize("args, message", [
    (["--bootstrap-server", "localhost"], "Please provide valid host:port like host1:9091,host2:9092"),
    (["--command-property", "bootstrap.servers=localhost"], "Please provide valid host:port like host1:9091,host2:9092"),
    (["--bootstrap-server", "no-such-host.invalid:9092"],
     'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
     "No resolvable bootstrap urls given in bootstrap.servers"),
    (["-X", "linger.ms=1"], "Option -X needs --bootstrap-server: librdkafka properties do not apply to the bundled engine"),
    (["--bootstrap-server", "localhost:9092", "--data-dir", "/tmp"],
     'Option "[data-dir]" can\'t be used with option "[bootstrap-server]"'),
    (["--bootstrap-server", "localhost:9092", "-X", "no.such.property=1"],
     'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
     "Unknown client configuration: no.such.property"),
])
def test_producer_backend_errors(plain, args, message):
    proc = fails(plain("pk-run-class", PRODUCER, *BASE, "--record-size", "1", "--command-property", "acks=1", *args),
                 message)
    assert proc.out == ""


def test_producer_unreachable_cluster_fails_within_max_block_ms(plain):
    from conftest import free_port

    start = time.monotonic()
    fails(plain("pk-run-class", PRODUCER, *BASE, "--record-size", "1", "--command-property", "max.block.ms=1500",
                "--bootstrap-server", f"127.0.0.1:{free_port()}"),
          "org.apache.kafka.common.errors.TimeoutException: Topic t not present in metadata after 1500 ms.")
    assert time.monotonic() - start < 10


def test_missing_payload_file(plain):
    proc = fails(plain("pk-run-class", PRODUCER, *BASE, "--payload-file", "/no/such/payloads", "--command-property",
                       "acks=1"),
                 'Exception in thread "main" java.lang.IllegalArgumentException: '
                 'File does not exist or empty file provided.')
    assert proc.out == "Reading payloads from: /no/such/payloads\n"  # printed before the check, as in Kafka


# --------------------------------------------------------------------------- ConsumerPerformance
def test_consumer_reads_every_record_and_prints_3_7_lines(pk, backend):
    t = backend.topic("c")
    produce(pk, backend, t, 2000, 100)
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "2000"))
    assert proc.err == ""
    lines = proc.out.splitlines()
    assert lines[0] == HEADER
    assert len(lines) == 2
    m = result(proc)
    assert m[1] <= m[2]  # start.time, end.time
    assert m[3] == "0.1907"  # 2000 x 100 bytes in MB of 1024 x 1024
    assert int(m[5]) == 2000
    rebalance, fetch = int(m[7]), int(m[8])
    assert rebalance >= 0 and fetch >= 0
    if m[4] not in ("Infinity", "NaN"):
        assert float(m[6]) == pytest.approx(float(m[4]) * 1024 * 1024 / 100, rel=0.01, abs=1)


def test_consumer_counts_key_and_value_bytes_across_partitions(pk, backend):
    t = backend.topic("three")
    backend.create(t, 3)
    lines = "".join(f"key-{i}:{'v' * 50}\n" for i in range(600))
    ok(pk("pk-console-producer", *backend, "--topic", t, "--property", "parse.key=true", "--property",
          "key.separator=:", input=lines))
    expected_bytes = sum(len(b"key-%d" % i) + 50 for i in range(600))
    m = result(ok(consume_perf(pk, backend, "--topic", t, "--num-records", "600", "--hide-header")))
    assert int(m[5]) == 600
    assert m[3] == java_fixed(expected_bytes / (1024 * 1024), 4)


def test_hide_header_and_date_format(pk, backend):
    t = backend.topic("d")
    produce(pk, backend, t, 100, 10)
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "100", "--hide-header",
                           "--date-format", "yyyyMMdd'T'HHmmss.SSS"))
    lines = proc.out.splitlines()
    assert len(lines) == 1
    assert re.fullmatch(r"\d{8}T\d{6}\.\d{3}, \d{8}T\d{6}\.\d{3}, 0\.0010, .*, 100, .*", lines[0]), lines[0]


def test_show_detailed_stats(pk, backend):
    t = backend.topic("detail")
    produce(pk, backend, t, 20000, 10)
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "20000", "--show-detailed-stats",
                           "--reporting-interval", "1"))
    lines = proc.out.splitlines()
    assert lines[0] == DETAILED_HEADER
    details = [DETAIL_RE.fullmatch(line) for line in lines[1:]]
    assert details and all(details), proc.out
    counts = [int(d[4]) for d in details]
    assert counts == sorted(counts) and counts[-1] <= 20000
    assert not RESULT_RE.fullmatch(lines[-1])  # no summary line with --show-detailed-stats


def test_timeout_before_all_messages_prints_3_7_warning(pk, backend):
    t = backend.topic("short")
    produce(pk, backend, t, 2000, 100)
    start = time.monotonic()
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "3000", "--timeout", "500"))
    assert time.monotonic() - start >= 0.5
    assert proc.err == ""
    lines = proc.out.splitlines()
    assert lines == [HEADER, TIMEOUT_WARNING.format(500), lines[2]]
    assert int(result(proc)[5]) == 2000


def test_group_offsets_are_committed_and_from_latest(pk, backend):
    t = backend.topic("g")
    grp, other, third = backend.topic("grp"), backend.topic("other"), backend.topic("third")
    produce(pk, backend, t, 1000, 10)
    assert int(result(ok(consume_perf(pk, backend, "--topic", t, "--num-records", "1000", "--group", grp)))[5]) == 1000
    # the same group again: everything was committed at close
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "1000", "--group", grp, "--timeout", "300"))
    assert TIMEOUT_WARNING.format(300) in proc.out.splitlines()
    assert int(result(proc)[5]) == 0
    # a new group from the latest offset sees nothing either
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "10", "--group", other, "--from-latest",
                           "--timeout", "300", "--hide-header"))
    assert int(result(proc)[5]) == 0
    # while a new group from the earliest offset (the default) reads everything
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "1000", "--group", third, "--hide-header"))
    assert int(result(proc)[5]) == 1000
    assert backend.committed(grp) == {(t, 0): 1000}


def test_deprecated_options_warn(pk, backend, tmp_path):
    t = backend.topic("w")
    produce(pk, backend, t, 10, 10)
    proc = ok(consume_perf(pk, backend, "--topic", t, "--messages", "10", "--hide-header"))
    lines = proc.out.splitlines()
    assert lines[0] == "Warning: --messages is deprecated. Use --num-records instead."
    assert RESULT_RE.fullmatch(lines[1])
    config = tmp_path / "c.properties"
    config.write_text("")
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "10", "--hide-header", "--consumer.config",
                           str(config), "--group", "w2"))
    assert proc.out.splitlines()[0] == "Warning: --consumer.config is deprecated. Use --command-config instead."
    # 4.4 dropped --threads and --num-fetch-threads (deprecated and ignored in 3.x)
    fails(consume_perf(pk, backend, "--topic", t, "--num-records", "10", "--threads", "4"),
          "threads is not a recognized option")


def test_timeout_without_value_and_a_word_that_is_no_number(pk, backend):
    t = backend.topic("tv")
    produce(pk, backend, t, 10, 10)
    # jopt-simple: --timeout's argument is optional; `abc` is not a Long, so it is an ignored word
    ok(consume_perf(pk, backend, "--topic", t, "--num-records", "10", "--timeout", "abc", "--hide-header"))
    ok(consume_perf(pk, backend, "--topic", t, "--num-records", "10", "--hide-header", "--timeout"))


def test_consumer_print_metrics(pk, backend):
    t = backend.topic("cm")
    produce(pk, backend, t, 10, 10)
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "10", "--print-metrics", "--hide-header"))
    lines = proc.out.splitlines()
    assert RESULT_RE.fullmatch(lines[0]) and lines[1] == ""
    assert re.fullmatch(r"Metric Name +   Value", lines[2])
    assert any(re.fullmatch(r"consumer-fetch-manager-metrics:records-consumed-total:"
                            r"\{client-id=perf-consumer-client\} +: 10\.000", line) for line in lines)
    assert proc.err.startswith("pk: ")  # says that these are all the metrics there are


@pytest.mark.engine_only("arguments only: no backend involved")
def test_consumer_no_arguments_prints_help_on_stderr_exit_1(pk, backend):
    proc = pk("pk-run-class", CONSUMER)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("This tool is used to verify the consumer performance.\n")


def test_consumer_missing_topic_is_created_and_times_out(pk, backend):
    t = backend.topic("nothing-yet")
    proc = ok(consume_perf(pk, backend, "--topic", t, "--num-records", "1", "--timeout", "200", "--hide-header"))
    assert proc.out.splitlines()[0] == TIMEOUT_WARNING.format(200)
    if backend.data_dir is not None:  # auto-created, as Kafka's broker does (another cluster may not)
        with Engine(backend.data_dir) as engine:
            assert t in engine.list_topics()


@pytest.mark.parametrize("args, message", [
    (["--num-records", "5"], "Exactly one of the following arguments is required: [topic], [include]"),
    (["--topic", "t", "--include", "t.*", "--num-records", "5"],
     "Exactly one of the following arguments is required: [topic], [include]"),
    (["--topic", "t"], "Exactly one of the following arguments is required: [messages], [num-records]"),
    (["--topic", "t", "--num-records", "5", "--messages", "5"],
     "Exactly one of the following arguments is required: [messages], [num-records]"),
    (["--topic", "t", "--num-records", "5", "--new-consumer"], "new-consumer is not a recognized option"),
    (["--topic", "t", "--num-records", "5", "--broker-list", "a:1"], "broker-list is not a recognized option"),
    (["--topic", "t", "--num-records"], "Option num-records requires an argument"),
])
def test_consumer_argument_errors(plain, args, message):
    proc = fails(plain("pk-run-class", CONSUMER, *args), message)
    assert proc.out == ""


@pytest.mark.parametrize("args, message", [
    (["--topic", "t", "--num-records", "5", "--reporting-interval", "0"], "Reporting interval must be greater than 0."),
    (["--topic", "t", "--num-records", "5", "--date-format", "yyyy-qq"], "Illegal pattern character 'q'"),
    (["--topic", "t", "--num-records", "5", "--date-format", "'open"], "Unterminated quote"),
    (["--topic", "t", "--num-records", "5", "--command-config", "/no/such/file"], "/no/such/file"),
    # integer options are converted when read, after the header
    (["--topic", "t", "--num-records", "five"], "Cannot parse argument 'five' of option num-records"),
    (["--topic", "t", "--num-records", "5", "--fetch-size", "1.5"], "Cannot parse argument '1.5' of option fetch-size"),
    (["--include", "[", "--num-records", "5"], "Unclosed character class near index 0"),
    # jopt-simple's valueOf() finds a repeated option when the tool reads it: after the header
    (["--topic", "t", "--topic", "u", "--num-records", "5"],
     "Found multiple arguments for option topic, but you asked for only one"),
    (["--topic", "t", "--num-records", "5", "--date-format", "yyyy", "--date-format", "MM"],
     "Found multiple arguments for option date-format, but you asked for only one"),
    (["--topic", "t", "--num-records", "5", "--fetch-size", "-1"],
     "Invalid value -1 for configuration max.partition.fetch.bytes: Value must be at least 0"),
    (["--topic", "t", "--num-records", "5", "--socket-buffer-size", "-2"],
     "Invalid value -2 for configuration receive.buffer.bytes: Value must be at least -1"),
    (["--topic", "t", "--num-records", "5", "--timeout=soon"], "Cannot parse argument 'soon' of option timeout"),
    (["--topic", "bad name", "--num-records", "5"], "Invalid topics: [bad name]"),
])
def test_consumer_errors(pk, backend, args, message):
    t = backend.topic("t")
    proc = fails(consume_perf(pk, backend, *[t if a == "t" else a for a in args]), message)
    # Kafka prints the header before it builds the consumer: errors found later follow it
    assert proc.out == HEADER + "\n"


def test_consumer_config_file_error_in_config(pk, backend, tmp_path):
    config = tmp_path / "c.properties"
    config.write_text("max.poll.records=0\n")
    fails(consume_perf(pk, backend, "--topic", backend.topic("t"), "--num-records", "5", "--command-config",
                       str(config), "--hide-header"),
          "Invalid value 0 for configuration max.poll.records: Value must be at least 1")


@pytest.mark.parametrize("args, message", [
    (["--bootstrap-server", "localhost"], "Please provide valid host:port like host1:9091,host2:9092"),
    (["--bootstrap-server", "no-such-host.invalid:9092"], "No resolvable bootstrap urls given in bootstrap.servers"),
    (["-X", "fetch.wait.max.ms=10"],
     "Option -X needs --bootstrap-server: librdkafka properties do not apply to the bundled engine"),
    (["--bootstrap-server", "localhost:9092", "-X", "no.such.property=1"],
     "Unknown client configuration: no.such.property"),
])
def test_consumer_backend_errors(plain, args, message):
    proc = fails(plain("pk-run-class", CONSUMER, "--topic", "t", "--num-records", "5", "--hide-header", *args), message)
    assert proc.out == ""


def test_consumer_unreachable_cluster_fails_within_the_api_timeout(plain, tmp_path):
    from conftest import free_port

    config = tmp_path / "c.properties"
    config.write_text("default.api.timeout.ms=1500\n")
    start = time.monotonic()
    fails(plain("pk-run-class", CONSUMER, "--topic", "t", "--num-records", "5", "--hide-header", "--consumer.config",
                str(config), "--bootstrap-server", f"127.0.0.1:{free_port()}"),
          "Timeout expired while fetching topic metadata")
    assert time.monotonic() - start < 10


# --------------------------------------------------------------------------- class names
def test_class_names(pk, backend):
    t = backend.topic("names")
    produce(pk, backend, t, 10, 10)
    # ConsumerPerformance was kafka.tools.ConsumerPerformance up to 3.4: both names run it
    assert RESULT_RE.fullmatch(ok(pk("pk-run-class", "kafka.tools.ConsumerPerformance", *backend, "--topic", t,
                                     "--num-records", "10", "--hide-header")).out.strip())
    # kafka.tools.ProducerPerformance was a different (Scala) tool, gone since 2.0
    fails(pk("pk-run-class", "kafka.tools.ProducerPerformance", "--topic", t),
          "Error: Could not find or load main class kafka.tools.ProducerPerformance")


# --------------------------------------------------------------------------- Java semantics
@pytest.mark.parametrize("value, decimals, text", [
    (0.125, 2, "0.13"), (2.675, 2, "2.68"), (0.05, 1, "0.1"), (1.0, 6, "1.000000"), (1 / 3, 4, "0.3333"),
    (float("nan"), 2, "NaN"), (float("inf"), 6, "Infinity"), (123456.78125, 1, "123456.8"),
])
def test_java_fixed_rounds_half_up_like_java(value, decimals, text):
    assert java_fixed(value, decimals) == text


def test_simple_date_format():
    import os

    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        ms = 1700000000123  # 2023-11-14 22:13:20.123 UTC, a Tuesday
        assert JavaDateFormat("yyyy-MM-dd HH:mm:ss:SSS").format(ms) == "2023-11-14 22:13:20:123"
        assert JavaDateFormat("EEE, d MMM yy h:mm a 'o''clock' Z XXX").format(ms) == \
            "Tue, 14 Nov 23 10:13 PM o'clock +0000 Z"
        assert JavaDateFormat("EEEE MMMM D S").format(ms) == "Tuesday November 318 123"
        assert JavaDateFormat("w Y").format(1703980800000) == "1 2024"  # 2023-12-31: week 1 of 2024 (US)
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
    with pytest.raises(JavaError) as info:
        JavaDateFormat("yyyy-bb")
    assert info.value.message == "Illegal pattern character 'b'"


def test_throughput_throttler_matches_kafka():
    slept = []
    clock = [0]

    def sleep(seconds):
        slept.append(seconds)
        clock[0] += int(seconds * 1e9)

    throttler = ThroughputThrottler(1000, 0, sleep=sleep, clock_ns=lambda: clock[0])
    assert not throttler.should_throttle(5, 0)  # no time elapsed: never throttled
    assert throttler.should_throttle(2, 1)  # 2 records in 1 ms is 2000/s
    assert not throttler.should_throttle(1, 1)
    throttler.throttle()  # 1 ms of deficit: below the 2 ms minimum sleep
    assert slept == []
    throttler.throttle()
    assert slept == [0.002] and throttler.sleep_deficit_ns == 0  # the 2 ms owed, at once
    assert not ThroughputThrottler(-1, 0).should_throttle(10**9, 1)
