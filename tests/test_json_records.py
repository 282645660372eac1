"""pk-console-consumer --output json and pk-console-producer --input json (README: "Records as
JSON, and kcat's format strings"), on the bundled engine, pk-server-start and a real Kafka 4.4
broker (conftest's session `kafka`).

The acceptance test pipes `pk-console-consumer --output json` into `pk-console-producer
--input json` between every two of the three, as a shell user would, and reads both topics
back with an independent reader (the engine's own log reader, or confluent-kafka): keys,
values, headers, timestamps and partitions must be identical, on binary data, null keys,
tombstones, empty values, duplicate and null headers and non-UTF-8 header values.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from conftest import Runner, tool_path
from pk.engine import records
from pk.engine.engine import Engine

# Recent enough that no broker's time-based retention (7 days by default) deletes the records
# while a test reads them: an old fixed timestamp made them vanish at the first retention check.
BASE_TS = (int(time.time()) - 3600) * 1000

# (partition, key, value, headers, timestamp): what every copy must carry over exactly.
RECORDS = [
    (0, b"k1", b"plain text", (), BASE_TS),
    (0, None, b"no key", (("h", b"v"),), BASE_TS + 1),
    (0, b"\x00\xff\xfe binary", b"\x80\x81\x00\x01", (), BASE_TS + 2),
    (0, b"tomb", None, (), BASE_TS + 3),
    (0, b"empty", b"", (("dup", b"1"), ("dup", b"2"), ("dup", None)), BASE_TS + 4),
    (1, "ünïcode ✓".encode(), 'quotes " and \\ and \n newline\t'.encode(), (("bin", b"\xff\x00\xc3"),), BASE_TS + 5),
    (1, None, None, (("", b""),), BASE_TS + 6),
    (1, b"", b"\xed\xa0\x80 surrogate bytes", (("h1", b"a"), ("h2", b"b"), ("h1", b"c")), BASE_TS + 7),
]


class Site:
    """Where a topic lives: the bundled engine (a data directory), pk-server-start or Kafka.
    `args` point pk's tools at it; `read` reads a partition back without pk's JSON code."""

    def __init__(self, name: str, data_dir: str | None = None, bootstrap: str | None = None):
        self.name, self.data_dir, self.bootstrap = name, data_dir, bootstrap
        self.args = ["--bootstrap-server", bootstrap] if bootstrap else ["--data-dir", data_dir]

    def create(self, topic: str, partitions: int) -> None:
        if self.bootstrap is None:
            proc = Runner(self.data_dir)("pk-topics", "--create", "--topic", topic, "--partitions", str(partitions))
            assert proc.returncode == 0, proc.err
            return
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
            future.result(60)
        _wait_for(lambda: _leaders_known(self.bootstrap, topic, partitions), f"{topic}'s leaders")

    def seed(self, topic: str) -> None:
        """RECORDS into `topic`, each in its partition with its timestamp, not through pk's
        console producer: the engine's batch encoder, or confluent-kafka."""
        if self.bootstrap is None:
            with Engine(self.data_dir) as engine:
                for partition in (0, 1):
                    recs = [(k, v, h, ts) for p, k, v, h, ts in RECORDS if p == partition]
                    engine.partition(topic, partition).append_batches([records.encode_batch(recs)])
            return
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "log_level": 0})
        for p, k, v, h, ts in RECORDS:
            producer.produce(topic, v, k, partition=p, timestamp=ts, headers=list(h) or None)
        assert producer.flush(60) == 0

    def read(self, topic: str, partition: int) -> list[tuple]:
        """(key, value, headers, timestamp, timestamp type) of every record, in offset order."""
        if self.bootstrap is None:
            out = []
            with Engine(self.data_dir) as engine:
                data = engine.partition(topic, partition).read(0, 1 << 30)
                for pos, header in records.iter_batches(data):
                    for r in records.decode_records(data, pos, header):
                        out.append((r.key, r.value, tuple(r.headers), r.timestamp, header.timestamp_type))
            return out
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "json-records-reader",
                             "enable.auto.commit": False, "log_level": 0})
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            consumer.assign([TopicPartition(topic, partition, low)])
            out, last = [], low - 1
            deadline = time.monotonic() + 60
            while last < high - 1 and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None or msg.error():
                    continue  # not yet (or a retriable error)
                last = msg.offset()
                ts_type, ts = msg.timestamp()
                out.append((msg.key(), msg.value(), tuple(msg.headers() or ()), ts, {1: 0, 2: 1}.get(ts_type)))
            assert last == high - 1, f"read {topic}-{partition} up to {last}, end {high}"
            return out
        finally:
            consumer.close()


def _wait_for(check, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _leaders_known(bootstrap: str, topic: str, partitions: int) -> bool:
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(topic, timeout=10)
    t = md.topics.get(topic)
    return (t is not None and t.error is None and len(t.partitions) == partitions
            and all(p.leader >= 0 and p.error is None for p in t.partitions.values()))


def expected(partition: int) -> list[tuple]:
    return [(k, v, tuple(h), ts, 0) for p, k, v, h, ts in RECORDS if p == partition]


_COUNT = iter(range(1_000_000))


@pytest.fixture
def sites(tmp_path, pk_server, kafka):
    return {"engine": Site("engine", data_dir=str(tmp_path / "engine")),
            "server": Site("server", bootstrap=pk_server.bootstrap),
            "kafka": Site("kafka", bootstrap=kafka.bootstrap)}


def _topic(base: str) -> str:
    return f"{base}-{os.getpid()}-{next(_COUNT)}"


def copy(src: Site, src_topic: str, dst: Site, dst_topic: str, consumer_extra=(), producer_extra=()) -> tuple:
    """`pk-console-consumer --output json | pk-console-producer --input json`, real pipes;
    (consumer stderr, producer stderr)."""
    consumer = subprocess.Popen(
        [tool_path("pk-console-consumer"), *src.args, "--topic", src_topic, "--from-beginning", "--output", "json",
         "--max-messages", str(len(RECORDS)), "--timeout-ms", "60000", *consumer_extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    producer = subprocess.Popen(
        [tool_path("pk-console-producer"), *dst.args, "--topic", dst_topic, "--input", "json", *producer_extra],
        stdin=consumer.stdout, stderr=subprocess.PIPE)
    consumer.stdout.close()  # the producer holds the pipe's only read end
    consumer_err = consumer.stderr.read()
    producer_err = producer.stderr.read()
    assert consumer.wait(120) == 0, consumer_err
    assert producer.wait(120) == 0, producer_err
    return consumer_err.decode(), producer_err.decode()


PAIRS = [(a, b) for a in ("engine", "server", "kafka") for b in ("engine", "server", "kafka") if a != b]


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_round_trip_copies_a_topic_exactly(sites, src, dst):
    source, target = sites[src], sites[dst]
    a, b = _topic("src"), _topic("dst")
    source.create(a, 2)
    target.create(b, 2)
    source.seed(a)
    for partition in (0, 1):
        assert source.read(a, partition) == expected(partition)
    consumer_err, _ = copy(source, a, target, b)
    assert f"Processed a total of {len(RECORDS)} messages" in consumer_err
    for partition in (0, 1):
        assert target.read(b, partition) == expected(partition)


def test_round_trip_on_librdkafka_both_ways(sites):
    """-X puts the consumer and the producer on confluent-kafka alone (not pk's wire client):
    the same envelope carries over there too."""
    source, target = sites["server"], sites["kafka"]
    a, b = _topic("rd-src"), _topic("rd-dst")
    source.create(a, 2)
    target.create(b, 2)
    source.seed(a)
    copy(source, a, target, b, consumer_extra=["-X", "client.id=json-copy"],
         producer_extra=["-X", "client.id=json-copy"])
    for partition in (0, 1):
        assert target.read(b, partition) == expected(partition)


def _json_lines(site: Site, topic: str, *extra: str) -> list[dict]:
    proc = Runner(site.data_dir or "")(
        "pk-console-consumer", *site.args, "--topic", topic, "--from-beginning", "--output", "json",
        "--max-messages", str(len(RECORDS)), "--timeout-ms", "60000", *extra)
    assert proc.returncode == 0, proc.err
    return [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]


@pytest.mark.parametrize("where", ["engine", "server", "kafka"])
def test_output_json_schema(sites, where):
    """Every field, in the documented order and encoding, on each of the three."""
    site = sites[where]
    t = _topic("schema")
    site.create(t, 2)
    site.seed(t)
    docs = _json_lines(site, t)
    assert all(list(d) == ["topic", "partition", "offset", "timestamp", "timestampType", "key", "value",
                           "headers", "leaderEpoch"] for d in docs)
    by_partition = sorted(docs, key=lambda d: (d["partition"], d["offset"]))
    p0 = [d for d in by_partition if d["partition"] == 0]
    assert [d["offset"] for d in p0] == [0, 1, 2, 3, 4]
    assert p0[0] == {"topic": t, "partition": 0, "offset": 0, "timestamp": BASE_TS, "timestampType": "CreateTime",
                     "key": "k1", "value": "plain text", "headers": [], "leaderEpoch": 0}
    assert p0[1]["key"] is None and p0[1]["headers"] == [{"key": "h", "value": "v"}]
    assert p0[2]["key"] == {"base64": "AP/+IGJpbmFyeQ=="} and p0[2]["value"] == {"base64": "gIEAAQ=="}
    assert p0[3]["value"] is None
    assert p0[4]["value"] == "" and p0[4]["headers"] == [
        {"key": "dup", "value": "1"}, {"key": "dup", "value": "2"}, {"key": "dup", "value": None}]
    p1 = [d for d in by_partition if d["partition"] == 1]
    assert p1[0]["key"] == "ünïcode ✓" and p1[0]["value"] == 'quotes " and \\ and \n newline\t'
    assert p1[0]["headers"] == [{"key": "bin", "value": {"base64": "/wDD"}}]


def test_output_json_column_path_matches_record_path(tmp_path):
    """A large fetch is written column-wise (engine/consumer.RecordColumnsSet) when it can
    be; its lines are those format() writes record by record, whichever path a fetch takes."""
    from pk.commands.record_json import JsonRecordFormatter
    from pk.engine import consumer as engine_consumer
    from pk.engine.records import columns

    data_dir = str(tmp_path / "data")
    pk = Runner(data_dir)
    assert pk("pk-topics", "--create", "--topic", "t", "--partitions", "1").returncode == 0
    ts = BASE_TS
    sets = [  # (records, whether the column path takes them)
        ([(b"key-%d" % i, b"value %d" % (i * 7919), (), ts + i) for i in range(3000)], True),
        ([(b"k%d" % i, None, (), ts) for i in range(2500)], True),  # tombstones
        ([(None, b'say "hi" \\ %d' % i, (), ts) for i in range(2500)], False),  # to escape
        ([(("clé %d ✓" % i).encode(), "välue %d".encode() % i, (), ts) for i in range(2500)], True),  # UTF-8
        ([(b"k", None if (i // 1000) % 2 else b"v", (), ts) for i in range(3000)], True),  # runs of nulls
        ([(b"k", None if i % 2 else b"v", (), ts) for i in range(2500)], False),  # nulls every other row
        ([(b"k", b"\xff\xfe%d" % i, (), ts) for i in range(2500)], False),  # not UTF-8
    ]
    with Engine(data_dir) as engine:
        log = engine.partition("t", 0)
        for recs, _ in sets:
            log.append_batches([records.encode_batch(recs[i:i + 500]) for i in range(0, len(recs), 500)])
        data = log.read(0, 1 << 30)
    formatter = JsonRecordFormatter()
    lines = []
    first = 0
    for recs, columnar in sets:
        batches = [(p, h) for p, h in records.iter_batches(data) if first <= h.base_offset < first + len(recs)]
        first += len(recs)
        cols = columns.scan(data, batches)
        whole = engine_consumer.RecordColumnsSet("t", 0, cols, 0, len(cols))
        fast = formatter.format_set(whole)
        one_by_one = b"".join(map(formatter.format, whole.records()))
        assert (fast is not None) == columnar
        if fast is not None:
            assert bytes(fast) == one_by_one
        lines += one_by_one.splitlines()
    proc = pk("pk-console-consumer", "--topic", "t", "--from-beginning", "--output", "json", "--max-messages",
              str(first), "--timeout-ms", "60000")
    assert proc.returncode == 0, proc.err
    assert proc.stdout.splitlines() == lines
    assert json.loads(lines[0]) == {"topic": "t", "partition": 0, "offset": 0, "timestamp": ts,
                                    "timestampType": "CreateTime", "key": "key-0", "value": "value 0",
                                    "headers": [], "leaderEpoch": 0}
    assert json.loads(lines[8500])["key"] == "clé 500 ✓"


def test_output_json_keeps_kafkas_options(tmp_path):
    """--partition/--offset, --max-messages and the closing count on stderr work as without
    --output json."""
    site = Site("engine", data_dir=str(tmp_path / "data"))
    site.create("t", 2)
    site.seed("t")
    proc = Runner(site.data_dir)("pk-console-consumer", "--topic", "t", "--partition", "1", "--offset", "1",
                                 "--output", "json", "--max-messages", "1")
    assert proc.returncode == 0, proc.err
    assert [json.loads(x)["offset"] for x in proc.out.splitlines()] == [1]
    assert proc.err.splitlines()[-1] == "Processed a total of 1 messages"


@pytest.mark.parametrize("args,error", [
    (["--output", "json", "--formatter", "kafka.tools.DefaultMessageFormatter"],
     "--output json and --formatter cannot be used together: --output json replaces the formatter."),
    (["--output", "json", "--formatter-property", "print.key=true"],
     "--output json and --formatter-property cannot be used together: --output json replaces the formatter."),
    (["--output", "json", "--format", "%s"], "--output json and --format cannot be used together."),
    (["--output", "xml"], None),
])
def test_output_json_refuses_kafkas_formatter_options(tmp_path, args, error):
    proc = Runner(str(tmp_path / "data"))("pk-console-consumer", "--topic", "t", *args)
    assert proc.returncode != 0
    assert "Traceback" not in proc.err
    if error is not None:
        assert proc.err.splitlines() == [error]


def test_input_json_bad_line_stops_after_the_lines_before(tmp_path):
    pk = Runner(str(tmp_path / "data"))
    assert pk("pk-topics", "--create", "--topic", "t", "--partitions", "2").returncode == 0
    lines = ['{"value":"one","partition":1,"timestamp":5}', "", '{"key":{"base64":"AAE="},"value":null}',
             '{"value":"x","headers":[["a","b"]]}', '{"value":"never"}']
    proc = pk("pk-console-producer", "--topic", "t", "--input", "json", input="\n".join(lines) + "\n")
    assert proc.returncode == 1
    assert proc.err.splitlines() == [
        'Invalid JSON record on line 4: a header must be {"key": "name", "value": ...}, not ["a", "b"]']
    site = Site("engine", data_dir=pk.data_dir)
    assert site.read("t", 1)[0][:4] == (None, b"one", (), 5)
    stored = site.read("t", 0) + site.read("t", 1)
    assert sorted((r[0] or b"", r[1] or b"") for r in stored) == [(b"", b"one"), (b"\x00\x01", b"")]


@pytest.mark.parametrize("line,error", [
    ("not json", "not JSON (Expecting value: line 1 column 1 (char 0))"),
    ("[1]", "expected a JSON object, not [1]"),
    ('{"partition":"0"}', '"partition" must be an integer or null, not "0"'),
    ('{"partition":-2}', '"partition" must not be negative: -2'),
    ('{"timestamp":-5}', '"timestamp" must not be negative: -5'),
    ('{"value":{"base64":"***"}}', "\"value\": invalid base64: '***'"),
    ('{"key":5}', '"key": expected a string, {"base64": ...} or null, not 5'),
])
def test_input_json_errors_are_one_line(tmp_path, line, error):
    pk = Runner(str(tmp_path / "data"))
    assert pk("pk-topics", "--create", "--topic", "t").returncode == 0
    proc = pk("pk-console-producer", "--topic", "t", "--input", "json", input=line + "\n")
    assert proc.returncode == 1
    assert proc.err.splitlines() == [f"Invalid JSON record on line 1: {error}"]


def test_input_json_partition_out_of_range_is_one_line(tmp_path):
    pk = Runner(str(tmp_path / "data"))
    assert pk("pk-topics", "--create", "--topic", "t").returncode == 0
    proc = pk("pk-console-producer", "--topic", "t", "--input", "json", input='{"value":"v","partition":3}\n')
    assert proc.returncode == 1
    assert len(proc.err.splitlines()) == 1 and "Partition 3 of topic t" in proc.err


@pytest.mark.parametrize("tool,words,want", [
    ("pk-console-consumer", "--outp", {"--output"}),
    ("pk-console-consumer", "--output ", {"text", "json"}),
    ("pk-console-consumer", "--forma", {"--format", "--formatter", "--formatter-property", "--formatter-config"}),
    ("pk-console-producer", "--inp", {"--input"}),
    ("pk-console-producer", "--input ", {"text", "json"}),
])
def test_shell_completion_knows_the_options(tool, words, want):
    """The shell asks the tool itself at <TAB> (completions/ are Click's scripts)."""
    cword = len(words.split()) if words.endswith(" ") else len(words.split()) - 1
    env = {**os.environ, f"_{tool.replace('-', '_').upper()}_COMPLETE": "bash_complete",
           "COMP_WORDS": f"{tool} {words}", "COMP_CWORD": str(cword + 1)}
    proc = subprocess.run([tool_path(tool)], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = {line.split(",", 1)[1] for line in proc.stdout.decode().splitlines()}
    assert got == want


def test_output_json_in_a_group_commits_what_it_printed(tmp_path):
    """--group with --output json: the group's committed offsets cover exactly the printed
    records, so the next run starts after them."""
    site = Site("engine", data_dir=str(tmp_path / "data"))
    site.create("t", 1)
    with Engine(site.data_dir) as engine:
        engine.partition("t", 0).append_batches([records.encode_batch(
            [(None, b"v%d" % i, (), BASE_TS + i) for i in range(5)])])
    pk = Runner(site.data_dir)
    args = ["pk-console-consumer", "--topic", "t", "--group", "g", "--from-beginning", "--output", "json",
            "--timeout-ms", "60000"]
    first = pk(*args, "--max-messages", "3")
    assert first.returncode == 0, first.err
    assert [json.loads(x)["value"] for x in first.out.splitlines()] == ["v0", "v1", "v2"]
    second = pk(*args, "--max-messages", "2")
    assert second.returncode == 0, second.err
    assert [json.loads(x)["offset"] for x in second.out.splitlines()] == [3, 4]
