"""pk-replica-verification against pk-server-start: one broker holds the one replica of each
partition, so every round verifies up to the high watermark and the reports say lag 0; the
verification of several replicas is checked on batches fetched from the broker."""

from __future__ import annotations

import re
import signal
import subprocess
import time

import pytest

from conftest import BrokerProcess, tool_path

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
DEPRECATED = "WARN This tool is deprecated and may be removed in a future major release. " \
             "(org.apache.kafka.tools.ReplicaVerificationTool)"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("rv") / "data")).start()
    for topic, count in (("rv-a", 3), ("rv-b", 2)):
        subprocess.run([tool_path("pk-topics"), "--bootstrap-server", b.bootstrap, "--create", "--topic", topic,
                        "--partitions", str(count)], check=True, capture_output=True, timeout=60)
    lines = "".join(f"k{i}:v{i}\n" for i in range(40))
    subprocess.run([tool_path("pk-console-producer"), "--bootstrap-server", b.bootstrap, "--topic", "rv-a",
                    "--property", "parse.key=true", "--property", "key.separator=:"], input=lines.encode(),
                   check=True, capture_output=True, timeout=60)
    yield b
    b.stop()


def run_until_reports(args, reports: int, timeout: float = 60) -> tuple[list[str], str]:
    """Start the tool, read stdout until `reports` lag reports came, interrupt it."""
    proc = subprocess.Popen([tool_path("pk-replica-verification"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + timeout
    try:
        while sum("max lag" in line for line in lines) < reports and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    return lines, err


def test_reports_lag_zero_on_one_broker(broker):
    lines, err = run_until_reports(["--broker-list", broker.bootstrap, "--topics-include", "rv-.*", "--time", "-2",
                                    "--report-interval-ms", "300", "--max-wait-ms", "100"], 3)
    assert re.fullmatch(rf"\[{STAMP}\] {re.escape(DEPRECATED)}\n", err)
    assert re.fullmatch(rf"{STAMP}: verification process is started", lines[0])
    # the first partition of Java's HashMap of the 5 partitions carries the report (all lags are
    # 0), at its high watermark (the oracle test checks which partition against Kafka's tool)
    assert len(lines) == 4
    reported = {re.fullmatch(rf"{STAMP}: max lag is 0 for partition (rv-[ab]-\d) at offset (\d+) among 5 partitions",
                             line).groups() for line in lines[1:]}
    assert len(reported) == 1


def test_usage_and_option_errors(broker):
    b = broker.bootstrap
    cases = [([], None),
             (["--topics-include", "x"], 'Missing required argument "[broker-list]"'),
             (["--broker-list", "nohost"], "Please provide valid host:port like host1:9091,host2:9092"),
             (["--broker-list", b, "--topics-include", "("], "( is an invalid regex"),
             (["--broker-list", b, "--topics-include", "none"],
              "ERROR No topics found. [topics-include] if specified, is either filtering out all topics or there is "
              "no topic. (org.apache.kafka.tools.ReplicaVerificationTool)"),
             (["--broker-list", b, "--topics-include", "rv-a", "--fetch-size", "x"],
              "Cannot parse argument 'x' of option fetch-size"),
             (["--broker-list", b, "--topics-include", "rv-a", "--time", "1x"], "Cannot parse argument '1x' of option time"),
             (["--broker-list", b, "--topics-include", "rv-.*", "--time", "1"],
              'Cannot invoke "org.apache.kafka.clients.consumer.OffsetAndTimestamp.offset()" because the return value '
              'of "java.util.Map$Entry.getValue()" is null')]
    for args, last in cases:
        proc = subprocess.run([tool_path("pk-replica-verification"), *args], capture_output=True, text=True,
                              timeout=60)
        assert (proc.returncode, proc.stdout) == (1, ""), args
        if last is None:
            assert proc.stderr.startswith("Validate that all replicas for a set of topics have the same data.\n")
        else:
            assert proc.stderr.splitlines()[-1].endswith(last), (args, proc.stderr)


def _fetched(broker, topic: str):
    from pk.commands.backends.wire import WireClient
    from pk.commands.replica_verification import Fetcher, describe_cluster

    client = WireClient(broker.bootstrap, 10.0)
    try:
        _brokers, topics = describe_cluster(client)
        ids = {t.name: t.topic_id for t in topics}
        partitions = [(topic, p) for t in topics if t.name == topic for p in t.partitions]
        return Fetcher(client, 0, partitions, ids, 1 << 20, 100).fetch({tp: 0 for tp in partitions})
    finally:
        client.close()


def test_verification_of_replicas(broker):
    """Two replicas' answers built from the broker's batches: equal ones advance the offset;
    a changed checksum is reported; a changed offset ends the tool."""
    from pk.commands.replica_verification import Batch, Fetched, ReplicaBuffer

    fetched = _fetched(broker, "rv-a")
    tp, data = max(fetched.items(), key=lambda item: len(item[1].batches))
    assert data.batches and data.high_watermark == data.batches[-1].next_offset
    lines: list[str] = []
    buffer = ReplicaBuffer({tp: 2}, {tp: 0}, report_ms=0)
    buffer.last_report -= 1
    for replica in (0, 1):
        buffer.add(tp, replica, data)
    assert buffer.verify(lines.append)
    assert buffer.offsets[tp] == data.high_watermark
    assert re.fullmatch(rf"{STAMP}: max lag is 0 for partition {tp[0]}-{tp[1]} at offset {data.high_watermark} "
                        r"among 1 partitions", lines[-1])

    first = data.batches[0]
    changed = Fetched(data.high_watermark, [Batch(first.last_offset, first.next_offset, first.checksum ^ 1)])
    buffer = ReplicaBuffer({tp: 2}, {tp: 0}, report_ms=60_000)
    buffer.add(tp, 0, Fetched(data.high_watermark, data.batches[:1]))
    buffer.add(tp, 1, changed)
    lines = []
    assert buffer.verify(lines.append)
    assert re.fullmatch(rf"{STAMP}: partition {tp[0]}-{tp[1]} has unmatched checksum at offset {first.last_offset}; "
                        rf"replica 0's checksum {first.checksum}; replica 1's checksum {first.checksum ^ 1}", lines[0])

    buffer = ReplicaBuffer({tp: 2}, {tp: 0}, report_ms=60_000)
    buffer.add(tp, 0, Fetched(data.high_watermark + 10, data.batches[:1]))
    buffer.add(tp, 1, Fetched(data.high_watermark + 10, [Batch(first.last_offset + 1, first.next_offset + 1, 0)]))
    lines = []
    assert not buffer.verify(lines.append)
    assert re.fullmatch(rf"{STAMP}: partition {tp[0]}-{tp[1]}: replica 0's offset {first.last_offset} doesn't match "
                        rf"replica 1's offset {first.last_offset + 1}", lines[0])


def test_batches_stop_at_a_cut_batch(broker):
    from pk.commands.replica_verification import batches

    fetched = _fetched(broker, "rv-a")
    tp = max(fetched, key=lambda tp: len(fetched[tp].batches))
    from pk.commands.backends.wire import WireClient
    from pk.engine.protocol import ApiKey

    client = WireClient(broker.bootstrap, 10.0)
    try:
        md = client.call(ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
        topic_id = next(t["topic_id"] for t in md["topics"] if t["name"] == tp[0])
        answer = client.call(ApiKey.FETCH, 17, {
            "replica_state": {"replica_id": -2, "replica_epoch": -1}, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic_id": topic_id, "partitions": [
                {"partition": tp[1], "fetch_offset": 0, "log_start_offset": 0, "partition_max_bytes": 1 << 20}]}]})
    finally:
        client.close()
    records = bytes(answer["responses"][0]["partitions"][0]["records"])
    whole = batches(records)
    assert [b.last_offset for b in whole] == [b.last_offset for b in fetched[tp].batches]
    assert batches(records[:-1]) == whole[:-1]
