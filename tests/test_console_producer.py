"""pk-console-producer run as an installed tool, on both backends (conftest.py): the bundled
engine on a temporary data directory, and pk-server-start (or PK_TEST_BOOTSTRAP) through
--bootstrap-server and confluent-kafka. What it stored is read back with the engine itself
(the server shares its data directory) or, on another cluster, with a consumer
(README.md's "Differences from Kafka's tools")."""

from __future__ import annotations

import os
import pty
import random
import select
import subprocess
import time

import pytest

from pk.commands import producer as cmd
from pk.commands.errors import ProducerFailure
from pk.commands.properties import load_properties, merge_options, parse_key_value_args
from pk.engine import compression, records
from pk.engine.engine import Engine
from pk.engine.partitioner import partition_for_key
from pk.engine.producer import EngineProducer

from conftest import BrokerProcess, Runner, free_port, tool_path

PRODUCER = "pk-console-producer"
# Kafka 4.4's console producer prints its exceptions' class before their message.
KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException: "
CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException: "
KEYED = ("--reader-property", "parse.key=true", "--reader-property", "key.separator=:")


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir  # pk's engine-side tools see what the server half stored


@pytest.fixture
def plain(tmp_path):
    """pk's tools for tests that involve no backend (argument checks, unreachable clusters)."""
    return Runner(str(tmp_path / "data"))


# --------------------------------------------------------------------------- helpers
def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert proc.err == ""
    assert proc.out == ""  # no prompt when stdin is not a terminal, nothing on success
    return proc


def fails(proc, message):
    """One line on stderr, exit 1, never a traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n"
    assert "Traceback" not in proc.out
    return proc


def create(backend, topic, partitions=1, *configs):
    backend.create(topic, partitions, *configs)


def batches(backend, topic, partition=0):
    """[(BatchHeader, [Record, ...]), ...] of one partition, read through the engine."""
    return backend.batches(topic, partition)


def stored(backend, topic, partition=0):
    return backend.records(topic, partition)


def values(backend, topic, partition=0):
    return [r.value for r in stored(backend, topic, partition)]


def pairs(backend, topic, partition=0):
    return [(r.key, r.value) for r in stored(backend, topic, partition)]


def topics(pk, backend):
    """The cluster's topic names."""
    if backend.data_dir is not None:
        return pk("pk-topics", "--list").out.split()
    return list(backend.admin().list_topics(timeout=30).topics)


def partition_count(pk, backend, topic):
    if backend.data_dir is not None:
        with Engine(backend.data_dir) as engine:
            return engine.topic(topic).partitions
    return len(backend.admin().list_topics(topic, timeout=30).topics[topic].partitions)


# --------------------------------------------------------------------------- basics
def test_lines_become_records_in_order(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    before = int(time.time() * 1000)
    ok(pk(PRODUCER, *backend, "--topic", t, input="first\nsecond\n\nlast without newline"))
    after = int(time.time() * 1000)
    recs = stored(backend, t)
    # An empty line is a record with an empty (not null) value; no key without parse.key.
    assert [(r.key, r.value) for r in recs] == [(None, b"first"), (None, b"second"), (None, b""),
                                              (None, b"last without newline")]
    assert [r.offset for r in recs] == [0, 1, 2, 3]
    assert all(before <= r.timestamp <= after and r.headers == () for r in recs)
    if backend.data_dir is not None:
        header = batches(backend, t)[0][0]
        assert header.compression == compression.NONE
        # Idempotent through a cluster, as Kafka's producer is by default; the engine has no
        # producer ids (README.md's differences).
        assert (header.producer_id >= 0) if backend.remote else (header.producer_id == -1)
        assert header.timestamp_type == records.CREATE_TIME


def test_line_terminators_like_java_readline(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, input=b"a\r\nb\rc\n\r\nd\r"))
    assert values(backend, t) == [b"a", b"b", b"c", b"", b"d"]


def test_empty_input_sends_nothing_and_creates_nothing(pk, backend):
    t = backend.topic("nothing")
    ok(pk(PRODUCER, *backend, "--topic", t, input=""))
    assert t not in topics(pk, backend)


def test_utf8_is_stored_as_is(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="clé:värde ✓\n日本:語\n"))
    assert pairs(backend, t) == [("clé".encode(), "värde ✓".encode()), ("日本".encode(), "語".encode())]


def test_keys_go_to_the_murmur2_partition_in_order(pk, backend):
    """Kafka's Java partitioner on the engine; librdkafka's murmur2_random through a cluster."""
    t = backend.topic("orders")
    create(backend, t, 3)
    lines = [f"user-{i % 17}:event {i}" for i in range(500)]
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="\n".join(lines) + "\n"))
    for p in range(3):
        expected = [(k.encode(), v.encode()) for k, v in (line.split(":", 1) for line in lines)
                    if partition_for_key(k.encode(), 3) == p]
        assert pairs(backend, t, p) == expected
    assert sum(len(stored(backend, t, p)) for p in range(3)) == 500


def test_key_separator_defaults_to_tab_and_splits_at_the_first(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.key=TRUE ",
          input="k1\tv1\tmore\n\tempty key\nk3\t\n"))
    assert pairs(backend, t) == [(b"k1", b"v1\tmore"), (b"", b"empty key"), (b"k3", b"")]


def test_multi_character_separator(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.key=true", "--reader-property", "key.separator=::",
          input="a::b::c\n::x\n"))
    assert pairs(backend, t) == [(b"a", b"b::c"), (b"", b"x")]


def test_null_marker_makes_null_keys_and_tombstones(pk, backend):
    t = backend.topic("t")
    create(backend, t, 1)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, "--reader-property", "null.marker=NULL",
          input="k1:NULL\nNULL:v2\nk3:v3\nk4:NULLx\n"))
    assert pairs(backend, t) == [(b"k1", None), (None, b"v2"), (b"k3", b"v3"), (b"k4", b"NULLx")]
    plain = backend.topic("plain")
    create(backend, plain)
    ok(pk(PRODUCER, *backend, "--topic", plain, "--reader-property", "null.marker=-", input="a\n-\nb\n"))
    assert values(backend, plain) == [b"a", None, b"b"]


def test_headers(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    props = ("--reader-property", "parse.headers=true", "--reader-property", "parse.key=true",
             "--reader-property", "null.marker=N")
    ok(pk(PRODUCER, *backend, "--topic", t, *props,
          input="h1:v1,h2:v2\tkey\tvalue\nN\tk2\tv2\nh:N,e:\tk3\tv3\nh:a:b,,\tk4\tv4\n"))
    recs = stored(backend, t)
    assert [(r.key, r.value) for r in recs] == [(b"key", b"value"), (b"k2", b"v2"), (b"k3", b"v3"),
                                              (b"k4", b"v4")]
    assert recs[0].headers == (("h1", b"v1"), ("h2", b"v2"))
    assert recs[1].headers == ()  # headers text equal to the null marker: no headers
    assert recs[2].headers == (("h", None), ("e", b""))  # null value; empty value
    # Split at the first key separator; trailing empty pairs dropped (Java's String.split).
    assert recs[3].headers == (("h", b"a:b"),)


def test_headers_separator_is_a_regex(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.headers=true", "--reader-property",
          "headers.separator=[;|]", "--reader-property", "headers.delimiter=#", "--reader-property", "headers.key.separator==",
          input="a=1;b=2|c=3#value\n"))
    recs = stored(backend, t)
    assert recs[0].headers == (("a", b"1"), ("b", b"2"), ("c", b"3")) and recs[0].value == b"value"


def test_ignore_error(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, "--reader-property", "parse.headers=true", "--reader-property",
          "ignore.error=true", input="no separators at all\nh:1\tk:v\nnokey\th2\tstill\n"))
    recs = stored(backend, t)
    # No headers delimiter: no headers, key parsing from column 0; no key separator: null
    # key and the whole rest is the value; a pair without ':' is a header with a null value.
    assert [(r.key, r.value, r.headers) for r in recs] == [
        (None, b"no separators at all", ()),
        (b"k", b"v", (("h", b"1"),)),
        (None, b"h2\tstill", (("nokey", None),)),
    ]


def test_ignore_error_without_headers(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, "--reader-property", "ignore.error=true", input="a:1\nplain\nb:2\n"))
    assert pairs(backend, t) == [(b"a", b"1"), (None, b"plain"), (b"b", b"2")]


# --------------------------------------------------------------------------- bad input
def test_missing_key_separator_stops_after_storing_earlier_lines(pk, backend):
    t = backend.topic("t")
    create(backend, t, 3)
    lines = [f"k{i}:v{i}" for i in range(1, 3)] + ["abc"] + ["k4:v4"]
    proc = fails(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="\n".join(lines) + "\n"),
                 KAFKA_EXCEPTION + "No key separator found on line number 3: 'abc'")
    assert proc.out == ""
    got = sorted(r for p in range(3) for r in pairs(backend, t, p))
    assert got == [(b"k1", b"v1"), (b"k2", b"v2")]


def test_missing_key_separator_deep_in_a_large_input(pk, backend):
    t = backend.topic("t")
    create(backend, t, 2)
    lines = [f"key{i % 100}:value {i}" for i in range(30000)]
    lines[25000] = "broken line"
    proc = fails(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="\n".join(lines) + "\n"),
                 KAFKA_EXCEPTION + "No key separator found on line number 25001: 'broken line'")
    got = sum(len(stored(backend, t, p)) for p in range(2))
    assert got == 25000 and proc.out == ""
    for p in range(2):  # order kept within each partition
        numbers = [int(r.value.split()[1]) for r in stored(backend, t, p)]
        assert numbers == sorted(numbers)


def test_missing_headers_delimiter(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    fails(pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.headers=true", input="h:1\tv\nno delimiter\n"),
          KAFKA_EXCEPTION + "No headers delimiter found on line number 2: 'no delimiter'")
    assert values(backend, t) == [b"v"]


def test_header_pair_without_key_separator(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    fails(pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.headers=true", input="a:1\tok\na:1,b\tv\n"),
          KAFKA_EXCEPTION + "No header key separator found in pair 'b' on line number 2")
    assert values(backend, t) == [b"ok"]


def test_header_key_equal_to_null_marker(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    fails(pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.headers=true", "--reader-property", "null.marker=X",
             input="X:1\tv\n"),
          KAFKA_EXCEPTION + "Header keys should not be equal to the null marker 'X' as they can't be null")


@pytest.mark.parametrize("props, message", [
    (("headers.delimiter=,",), KAFKA_EXCEPTION + "headers.delimiter and headers.separator may not be equal"),
    (("headers.key.separator=\t",), KAFKA_EXCEPTION + "headers.delimiter and headers.key.separator may not be equal"),
    (("headers.separator=:",), KAFKA_EXCEPTION + "headers.separator and headers.key.separator may not be equal"),
    (("null.marker=\t", "headers.delimiter=#"), KAFKA_EXCEPTION + "null.marker and key.separator may not be equal"),
    (("null.marker=,",), KAFKA_EXCEPTION + "null.marker and headers.separator may not be equal"),
    (("null.marker=#", "headers.delimiter=#", "key.separator=:"),
     KAFKA_EXCEPTION + "null.marker and headers.delimiter may not be equal"),
    (("null.marker=:", "key.separator=;"), KAFKA_EXCEPTION + "null.marker and headers.key.separator may not be equal"),
])
def test_reader_configuration_conflicts(pk, backend, props, message):
    t = backend.topic("t")
    create(backend, t)
    args = [a for prop in props for a in ("--reader-property", prop)]
    fails(pk(PRODUCER, *backend, "--topic", t, *args, input="x\n"), message)
    assert values(backend, t) == []


def test_unknown_reader_property(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    proc = pk(PRODUCER, *backend, "--topic", t, "--reader-property", "parse.keys=true", input="x\n")
    assert proc.returncode == 1 and proc.err.count("\n") == 1
    assert proc.err.startswith("Unknown line reader property 'parse.keys' (known: file, ")
    assert values(backend, t) == []


def test_invalid_utf8_line(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    fails(pk(PRODUCER, *backend, "--topic", t, input=b"fine\nalso fine\nbad \xff byte\nnever\n"),
          "Line number 3 is not valid UTF-8: can't decode byte 0xff in position 4: invalid start byte")
    assert values(backend, t) == [b"fine", b"also fine"]


def test_line_above_max_message_bytes(pk, backend):
    t = backend.topic("small")
    create(backend, t, 1, "max.message.bytes=200")
    big = "x" * 300
    fails(pk(PRODUCER, *backend, "--topic", t, input=f"one\ntwo\n{big}\nfour\n"),
          "The request included a message larger than the max message size the server will accept.")


@pytest.mark.engine_only("librdkafka neither caps a batch at the topic's max.message.bytes nor splits a batch the "
                         "broker refuses as too large, as Java's producer and the engine do: the whole batch fails")
def test_line_above_max_message_bytes_keeps_the_records_before_it(pk, backend):
    t = backend.topic("small")
    create(backend, t, 1, "max.message.bytes=200")
    fails(pk(PRODUCER, *backend, "--topic", t, input=f"one\ntwo\n{'x' * 300}\nfour\n"),
          "The request included a message larger than the max message size the server will accept.")
    assert values(backend, t) == [b"one", b"two"]
    # Batches never exceed the topic's limit, even though batch.size is larger.
    ok(pk(PRODUCER, *backend, "--topic", t, input="".join(f"line {i}\n" for i in range(100))))
    assert all(h.size <= 200 for h, _ in batches(backend, t))
    assert len(values(backend, t)) == 102


@pytest.mark.engine_only("librdkafka does not split a compressed batch the broker refuses (Java's producer and "
                         "the engine do)")
def test_line_above_max_message_bytes_compressed(pk, backend):
    # Compressed, the broker decides on the stored size: random text compresses badly, so the
    # batch is refused and split (as the Java producer does) until the big record stands alone.
    t = backend.topic("small")
    create(backend, t, 1, "max.message.bytes=400")
    rng = random.Random(5)
    big = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(600))
    lines = ["one", "two", big, "four"]
    fails(pk(PRODUCER, *backend, "--topic", t, "--compression-codec", "gzip", input="\n".join(lines) + "\n"),
          "The request included a message larger than the max message size the server will accept.")
    assert values(backend, t) == [b"one", b"two", b"four"]
    # A large but compressible line fits once compressed, as in Kafka.
    ok(pk(PRODUCER, *backend, "--topic", t, "--compression-codec", "gzip", input="y" * 5000 + "\n"))
    assert values(backend, t)[-1] == b"y" * 5000


def test_large_compressible_line_fits_once_compressed(pk, backend):
    t = backend.topic("small")
    create(backend, t, 1, "max.message.bytes=400")
    ok(pk(PRODUCER, *backend, "--topic", t, "--compression-codec", "gzip", input="y" * 5000 + "\n"))
    assert values(backend, t) == [b"y" * 5000]


def test_record_above_max_request_size(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    fails(pk(PRODUCER, *backend, "--topic", t, "--command-property", "max.request.size=1000",
             input="ok\n" + "z" * 1000 + "\n"),
          "The message is 1086 bytes when serialized which is larger than 1000, which is the value of the "
          "max.request.size configuration.")
    assert values(backend, t) == [b"ok"]
    fails(pk(PRODUCER, *backend, "--topic", t, "--max-memory-bytes", "500", input="z" * 600 + "\n"),
          "The message is 686 bytes when serialized which is larger than the total memory buffer you have "
          "configured with the buffer.memory configuration.")


def test_unknown_topic_is_auto_created_with_num_partitions(pk, backend):
    t = backend.topic("fresh")
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="a:1\nb:2\n"))
    if backend.data_dir is not None:  # pk's num.partitions (another cluster has its own)
        assert partition_count(pk, backend, t) == 1
    assert pairs(backend, t) == [(b"a", b"1"), (b"b", b"2")]


def test_invalid_topic_name(pk, backend):
    fails(pk(PRODUCER, *backend, "--topic", "no spaces", input="x\n"), "Invalid topics: [no spaces]")


def test_missing_topic_without_auto_creation(tmp_path):
    # Kafka's producer waits max.block.ms for the metadata; the engine knows at once.
    data_dir = str(tmp_path / "data")
    Engine(data_dir).close()

    def open_producer(topic, settings):
        engine = Engine(data_dir, broker_config={"auto.create.topics.enable": "false"})
        return EngineProducer(engine, topic, own_engine=True, **settings.engine_kwargs())

    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"x\n")
    os.close(write_fd)
    with pytest.raises(Exception) as info:
        cmd.run(cmd.ProducerOptions(topic="missing", max_block_ms=2500), open_producer, stdin_fd=read_fd,
                interactive=False, show_progress=False)
    os.close(read_fd)
    assert str(info.value) == "Topic missing not present in metadata after 2500 ms."
    assert "missing" not in Engine(data_dir).list_topics()


def test_missing_topic_on_a_server_without_auto_creation(tmp_path):
    """The same line through --bootstrap-server, from a server that creates no topics: as
    Kafka's producer, pk waits max.block.ms for the topic (someone may create it meanwhile)."""
    pk = Runner(str(tmp_path / "unused"))
    server = BrokerProcess(str(tmp_path / "nocreate" / "data"), {"auto.create.topics.enable": "false"})
    os.makedirs(os.path.dirname(server.data_dir))
    server.start()
    try:
        start = time.monotonic()
        fails(pk(PRODUCER, "--bootstrap-server", server.bootstrap, "--topic", "missing", "--max-block-ms", "1500",
                 input="x\n"),
              "Topic missing not present in metadata after 1500 ms.")
        assert time.monotonic() - start >= 1.5
        with Engine(server.data_dir) as engine:
            assert "missing" not in engine.list_topics()
    finally:
        server.stop()


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("args, codec", [
    ((), compression.NONE),
    (("--compression-codec", "gzip"), compression.GZIP),
    (("--compression-codec", "snappy"), compression.SNAPPY),
    (("--compression-codec", "lz4"), compression.LZ4),
    (("--compression-codec", "zstd"), compression.ZSTD),
    (("--compression-codec",), compression.GZIP),  # no value: gzip
    (("--compression-codec=",), compression.GZIP),
    (("--compression-codec", "none"), compression.NONE),
    # The option always overwrites compression.type from --producer-property (absent: none).
    (("--command-property", "compression.type=lz4"), compression.NONE),
    (("--command-property", "compression.type=lz4", "--compression-codec", "zstd"), compression.ZSTD),
])
def test_compression_codec_in_stored_batches(pk, backend, args, codec):
    t = backend.topic("t")
    create(backend, t, 2)
    lines = [f"key{i % 7}:the value of line {i} " + "abc" * 20 for i in range(3000)]
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, *args, input="\n".join(lines) + "\n"))
    total = 0
    for p in range(2):
        expected = [line.split(":", 1) for line in lines if partition_for_key(line.split(":")[0].encode(), 2) == p]
        got = stored(backend, t, p)
        assert [(r.key.decode(), r.value.decode()) for r in got] == [tuple(e) for e in expected]
        total += len(got)
        if backend.data_dir is not None:
            found = batches(backend, t, p)
            assert found and all(h.compression == codec for h, _ in found)
    assert total == 3000


def test_invalid_codec(pk, backend):
    fails(pk(PRODUCER, *backend, "--topic", backend.topic("t"), "--compression-codec", "brotli", input="x\n"),
          CONFIG_EXCEPTION + "Invalid value brotli for configuration compression.type: String must be one of: "
          "none, gzip, snappy, lz4, zstd")


def record_counts(backend, topic):
    return [h.records_count for h, _ in batches(backend, topic)]


@pytest.mark.engine_only("batch.size is Java's per-partition byte limit; librdkafka's batch.size counts its own "
                         "framing, so batches hold other record counts")
def test_batch_size_and_merge_rules(pk, backend, tmp_path):
    config = tmp_path / "producer.properties"
    # Java .properties syntax: ':' and spaces as separators, comments, continuation lines.
    config.write_text("# the producer\nbatch.size : 300\nlinger.ms=1\\\n0\n! another comment\n")
    lines = "".join(f"{i:05d}-" + "v" * 40 + "\n" for i in range(60))  # records of 53 bytes
    create(backend, "a")
    ok(pk(PRODUCER, "--topic", "a", "--command-config", str(config), input=lines))
    counts = record_counts(backend, "a")
    assert sum(counts) == 60 and max(counts) == 4  # (300 - 61) // 54: the file's batch.size
    create(backend, "b")
    ok(pk(PRODUCER, "--topic", "b", "--command-config", str(config), "--batch-size", "1000", input=lines))
    assert max(record_counts(backend, "b")) == 17  # an explicit option beats the file
    create(backend, "c")
    ok(pk(PRODUCER, "--topic", "c", "--command-config", str(config), "--command-property", "batch.size=500",
          input=lines))
    assert max(record_counts(backend, "c")) == 8  # --command-property beats --command-config
    create(backend, "d")
    proc = pk(PRODUCER, "--topic", "d", "--batch-size", "1000", "--max-partition-memory-bytes", "200", input=lines)
    assert (proc.returncode, proc.out, proc.err) == (0, "Warning: --max-partition-memory-bytes is deprecated and will "
                                                     "be removed in Apache Kafka 5.0. Use --batch-size instead.\n", "")
    assert max(record_counts(backend, "d")) == 2  # --max-partition-memory-bytes beats --batch-size
    create(backend, "e")
    ok(pk(PRODUCER, "--topic", "e", input=lines))
    assert record_counts(backend, "e") == [60]  # default 16384


def test_batch_size_reaches_the_producer(pk, backend, tmp_path):
    """The merged batch.size bounds the batches on both backends (config file < property <
    option): small batches hold few records, the default holds them all."""
    config = tmp_path / "producer.properties"
    config.write_text("batch.size : 300\nlinger.ms=1\\\n0\n")
    lines = "".join(f"{i:05d}-" + "v" * 40 + "\n" for i in range(60))
    small, large = backend.topic("small"), backend.topic("large")
    create(backend, small)
    create(backend, large)
    ok(pk(PRODUCER, *backend, "--topic", small, "--command-config", str(config), input=lines))
    ok(pk(PRODUCER, *backend, "--topic", large, "--command-config", str(config), "--batch-size", "16384",
          input=lines))
    assert values(backend, small) == values(backend, large) == [line.encode() for line in lines.splitlines()]
    if backend.data_dir is not None:
        assert max(record_counts(backend, small)) <= 6 and len(record_counts(backend, small)) >= 10
        assert record_counts(backend, large) == [60]


def test_producer_properties_merge():
    o = cmd.ProducerOptions(topic="t", producer_property=["linger.ms=5", "acks=1", "client.id", "batch.size="])
    props = cmd.producer_properties(o)
    assert props["linger.ms"] == "5"  # kept: --timeout not given
    assert props["acks"] == "1"
    assert props["client.id"] == ""  # `key` alone gives an empty value, which is kept
    assert props["batch.size"] == ""
    assert props["compression.type"] == "none"
    assert props["request.timeout.ms"] == "1500" and props["max.block.ms"] == "60000"
    assert props["retries"] == "3" and props["buffer.memory"] == "33554432"
    assert props["send.buffer.bytes"] == "102400" and props["metadata.max.age.ms"] == "300000"
    o = cmd.ProducerOptions(topic="t", timeout=7, request_required_acks="0", producer_property=["linger.ms=5"])
    props = cmd.producer_properties(o)
    assert props["linger.ms"] == "7" and props["acks"] == "0" and props["client.id"] == "console-producer"
    assert cmd.producer_properties(cmd.ProducerOptions(topic="t"))["acks"] == "-1"  # pk-choices: -1
    with pytest.raises(ProducerFailure, match=r"^Invalid value  for configuration batch.size: Not a number of type INT$"):
        cmd.producer_settings(cmd.producer_properties(cmd.ProducerOptions(topic="t", producer_property=["batch.size="])))


@pytest.mark.parametrize("args, message", [
    (("--request-required-acks", "2"),
     CONFIG_EXCEPTION + "Invalid value 2 for configuration acks: String must be one of: all, -1, 0, 1"),
    (("--command-property", "batch.size=big"),
     CONFIG_EXCEPTION + "Invalid value big for configuration batch.size: Not a number of type INT"),
    (("--command-property", "linger.ms=-1"),
     CONFIG_EXCEPTION + "Invalid value -1 for configuration linger.ms: Value must be at least 0"),
    (("--command-property", "enable.idempotence=maybe"),
     CONFIG_EXCEPTION + "Invalid value maybe for configuration enable.idempotence: Expected value to be either "
     "true or false"),
    (("--command-property", "enable.idempotence=true", "--request-required-acks", "1"),
     CONFIG_EXCEPTION + "Must set acks to all in order to use the idempotent producer. Otherwise we cannot "
     "guarantee idempotence."),
    (("--batch-size", "x"), "Cannot parse argument 'x' of option batch-size"),
    (("--timeout", "9999999999999999999999"), "Cannot parse argument '9999999999999999999999' of option timeout"),
    (("--line-reader", "com.example.MyReader"), "java.lang.ClassNotFoundException: com.example.MyReader"),
    (("--command-config", "/nonexistent/p.properties"), "java.nio.file.NoSuchFileException: /nonexistent/p.properties"),
    (("--reader-config", "/nonexistent/r.properties"), "java.nio.file.NoSuchFileException: /nonexistent/r.properties"),
    (("--topic", "u"), "Found multiple arguments for option topic, but you asked for only one"),
    (("--no-such-option",), "no-such-option is not a recognized option"),
])
def test_option_errors(pk, backend, args, message):
    t = backend.topic("t")
    create(backend, t)
    fails(pk(PRODUCER, *backend, "--topic", t, *args, input="x\n"), message)
    assert values(backend, t) == []


def test_acks_and_other_options_are_accepted(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--request-required-acks", "all", "--message-send-max-retries", "5",
          "--retry-backoff-ms", "10", "--request-timeout-ms", "3000", "--metadata-expiry-ms", "1000",
          "--max-block-ms", "5000", "--max-memory-bytes", "1000000", "--socket-buffer-size", "65536",
          "--line-reader", "kafka.tools.ConsoleProducer$LineMessageReader", "--command-property", "acks=0",
          input="x\n"))
    ok(pk(PRODUCER, *backend, "-topic", t, "--line-reader", "org.apache.kafka.tools.LineMessageReader", input="y\n"))
    assert values(backend, t) == [b"x", b"y"]


@pytest.mark.parametrize("acks", ["0", "1", "-1", "all"])
def test_acks(pk, backend, acks):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--request-required-acks", acks, input="a\nb\n"))
    assert values(backend, t) == [b"a", b"b"]


def test_missing_topic_argument(pk, backend):
    fails(pk(PRODUCER, *backend, "--sync", input=""), 'Missing required argument "[topic]"')


@pytest.mark.engine_only("arguments only: no backend involved")
def test_help_version_and_no_arguments(pk, backend):
    proc = pk(PRODUCER, "--help")
    assert proc.returncode == 0 and "--compression-codec" in proc.out and "--command-config" in proc.out
    assert "--bootstrap-server" in proc.out and "--broker-list" in proc.out and "-X" in proc.out
    proc = pk(PRODUCER, "--version")
    assert proc.returncode == 0 and proc.out == "4.4.0\n"
    proc = pk(PRODUCER)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("This tool helps to read data from standard input and publish it to Kafka.\n")


def test_reader_config_file_and_property_precedence(pk, backend, tmp_path):
    reader = tmp_path / "reader.properties"
    reader.write_text("parse.key = true\nkey.separator = |\nnull.marker = nil\n")
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--reader-config", str(reader), "--reader-property", "key.separator=;",
          input="a;1\nb|2;3\nnil;x\n"))
    assert pairs(backend, t) == [(b"a", b"1"), (b"b|2", b"3"), (None, b"x")]


def test_topic_property_retargets_the_records(pk, backend):
    t, other = backend.topic("t"), backend.topic("other")
    create(backend, t)
    create(backend, other)
    ok(pk(PRODUCER, *backend, "--topic", t, "--reader-property", f"topic={other}", input="x\n"))
    assert values(backend, other) == [b"x"] and values(backend, t) == []


def test_file_property(pk, backend, tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(b"k%d:v%d\n" % (i % 5, i) for i in range(2000)))
    t = backend.topic("t")
    create(backend, t, 3)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, "--reader-property", f"file={path}", input="ignored:stdin\n"))
    got = {p: pairs(backend, t, p) for p in range(3)}
    assert sum(map(len, got.values())) == 2000
    for p, recs in got.items():
        assert all(partition_for_key(k, 3) == p for k, _ in recs)
        numbers = [int(v[1:]) for _, v in recs]
        assert numbers == sorted(numbers)
    assert (b"ignored", b"stdin") not in [r for recs in got.values() for r in recs]
    fails(pk(PRODUCER, *backend, "--topic", t, "--reader-property", f"file={tmp_path}/missing.txt", input=""),
          f"Cannot read {tmp_path}/missing.txt: No such file or directory")


def test_large_keyed_file_read_ahead(pk, backend, tmp_path):
    """A regular file of several blocks (read and sent block by block): every record
    stored once, in each partition in file order."""
    path = tmp_path / "input.txt"
    n = 120000
    path.write_bytes(b"".join(b"key%d:value %d %s\n" % (i % 701, i, b"v" * (i % 50)) for i in range(n)))
    assert path.stat().st_size > 2 * cmd.SPANS_CHUNK_BYTES  # three blocks at least
    t = backend.topic("t")
    create(backend, t, 3)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, "--reader-property", f"file={path}"))
    got = {p: pairs(backend, t, p) for p in range(3)}
    assert sum(map(len, got.values())) == n
    for p, recs in got.items():
        assert all(partition_for_key(k, 3) == p for k, _ in recs)
        numbers = [int(v.split()[1]) for _, v in recs]
        assert numbers == sorted(numbers)


@pytest.mark.parametrize("bad", [b"broken line\n", b"bad \xff byte\n"])
def test_bad_line_deep_in_a_large_file(pk, backend, tmp_path, bad):
    """From a regular file (read block by block, parsed ahead by a second process), a bad line in
    a later block ends the run with its number after every line before it is stored, in order;
    nothing after it is."""
    lines = [b"key%d:value %d\n" % (i % 100, i) for i in range(300000)]
    lines[280001] = bad
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(lines))
    assert sum(map(len, lines[:280001])) > 2 * cmd.SPANS_CHUNK_BYTES  # in a later block, parsed ahead
    t = backend.topic("t")
    create(backend, t, 2)
    if bad.startswith(b"broken"):
        message = KAFKA_EXCEPTION + "No key separator found on line number 280002: 'broken line'"
    else:
        message = "Line number 280002 is not valid UTF-8: can't decode byte 0xff in position 4: invalid start byte"
    fails(pk(PRODUCER, *backend, "--topic", t, *KEYED, "--reader-property", f"file={path}"), message)
    numbers = []
    for p in range(2):
        part = [int(r.value.split()[1]) for r in stored(backend, t, p)]
        assert part == sorted(part)
        numbers += part
    assert sorted(numbers) == list(range(280001))


def _keyed_lines(n: int) -> list[bytes]:
    return [b"key%d:value %d %s\n" % (i % 997, i, b"x" * (i % 40)) for i in range(n)]


def _expected(lines: list[bytes], partitions: int) -> dict[int, list[tuple[bytes, bytes]]]:
    """What the line reader makes of keyed lines ("\r\n" and a missing last "\n" as Java's
    readLine takes them): each partition's (key, value) in file order."""
    text = b"".join(lines).replace(b"\r\n", b"\n")
    got = {p: [] for p in range(partitions)}
    for line in text.split(b"\n")[:-1] if text.endswith(b"\n") else text.split(b"\n"):
        key, value = line.split(b":", 1)
        got[partition_for_key(key, partitions)].append((key, value))
    return got


@pytest.mark.parametrize("change", ["crlf", "utf8", "null-marker", "no-last-newline"])
def test_parse_ahead_hands_unusual_lines_back(pk, backend, tmp_path, change):
    """Lines the second process does not parse (a "\r", the null marker) in a later block go
    through the ordinary reader from that block on, non-ASCII UTF-8 does not stop it, and a last
    line without "\n" is stored: the same records as the line reader makes of the file."""
    lines = _keyed_lines(130000)
    extra = []
    if change == "crlf":
        lines[120000] = lines[120000].replace(b"\n", b"\r\n")
    elif change == "utf8":
        lines[40000] = "key1:välue ünïcode\n".encode()
    elif change == "null-marker":
        extra = ["--reader-property", "null.marker=NULL"]
        lines[120000] = b"keyN:not NULL but text\n"
    else:
        lines[-1] = lines[-1].rstrip(b"\n")
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(lines))
    assert sum(map(len, lines[:120000])) > 2 * cmd.SPANS_CHUNK_BYTES  # in a later block, parsed ahead
    t = backend.topic("t")
    create(backend, t, 3)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, *extra, "--reader-property", f"file={path}"))
    expected = _expected(lines, 3)
    if change == "null-marker":  # the marker only counts as a whole key or value
        assert (b"keyN", b"not NULL but text") in expected[partition_for_key(b"keyN", 3)]
    for p in range(3):
        assert pairs(backend, t, p) == expected[p]


def test_parse_ahead_starts_where_standard_input_stands(backend, data_dir, tmp_path):
    """Standard input already read in part (a shell's `{ head -n 1; pk-console-producer; } < f`):
    the records are the lines from there on."""
    lines = _keyed_lines(130000)
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(lines))
    skip = 1000
    t = backend.topic("t")
    create(backend, t, 3)
    with open(path, "rb") as f:
        os.lseek(f.fileno(), sum(map(len, lines[:skip])), os.SEEK_SET)
        proc = subprocess.run([tool_path(PRODUCER), *backend, "--topic", t, *KEYED], stdin=f,
                              capture_output=True, timeout=120, env={**os.environ, "PK_DATA_DIR": data_dir})
    assert (proc.returncode, proc.stderr) == (0, b"")
    expected = _expected(lines[skip:], 3)
    for p in range(3):
        assert pairs(backend, t, p) == expected[p]


def test_large_file_through_librdkafka(pk, backend, tmp_path):
    """A librdkafka property (-X) makes confluent-kafka the producer, which takes lines, not
    columns: the second process is stopped before it is of use and every line goes as it is."""
    if not backend.remote:
        pytest.skip("-X is for the --bootstrap-server client")
    lines = _keyed_lines(130000)
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(lines))
    t = backend.topic("t")
    create(backend, t, 3)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, "-X", "linger.ms=5", "--reader-property", f"file={path}"))
    expected = _expected(lines, 3)
    for p in range(3):
        assert pairs(backend, t, p) == expected[p]


def test_sync_sends_each_record_on_its_own(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--sync", *KEYED, input="a:1\nb:2\nc:3\n"))
    if backend.data_dir is not None:
        assert record_counts(backend, t) == [1, 1, 1]
    assert pairs(backend, t) == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    fails(pk(PRODUCER, *backend, "--topic", t, "--sync", *KEYED, input="d:4\nbad\n"),
          KAFKA_EXCEPTION + "No key separator found on line number 2: 'bad'")
    assert pairs(backend, t)[-1] == (b"d", b"4")


def test_compacted_topic_refuses_null_keys(pk, backend):
    t = backend.topic("compact")
    create(backend, t, 1, "cleanup.policy=compact")
    proc = pk(PRODUCER, *backend, "--topic", t, input="no key\n")
    if backend.remote:
        # librdkafka reports the broker's INVALID_RECORD without its message: Kafka's text for the code.
        fails(proc, "This record has failed the validation on broker and hence will be rejected.")
    else:
        fails(proc, f"Compacted topic cannot accept message without key in topic partition {t}-0.")
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="k:v\n"))
    assert pairs(backend, t) == [(b"k", b"v")]


# --------------------------------------------------------------------------- terminals and time
def test_lingering_records_are_appended_while_waiting_for_input(pk, backend):
    """--timeout is linger.ms: a line typed into a pipe that stays open is stored after it."""
    t = backend.topic("t")
    create(backend, t)
    proc = subprocess.Popen([tool_path(PRODUCER), *backend, "--topic", t, "--timeout", "200"], env=pk.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b"first\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and values(backend, t) != [b"first"]:
            time.sleep(0.05)
        assert values(backend, t) == [b"first"]
        assert proc.poll() is None  # still running, waiting for more input
        proc.stdin.write(b"second\n")
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert values(backend, t) == [b"first", b"second"]
    assert proc.stdout.read() == b"" and proc.stderr.read() == b""


def test_lingering_records_are_appended_while_input_trickles_in(pk, backend):
    """Input that never pauses for linger.ms still gets its records stored after linger.ms."""
    t = backend.topic("t")
    create(backend, t)
    proc = subprocess.Popen([tool_path(PRODUCER), *backend, "--topic", t, "--timeout", "100"], env=pk.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # A line every 30 ms until records show up (a loaded machine may take a while to start the
    # producer: wait for the state, with a generous bound), then 10 more: the input never paused.
    sent = 0
    try:
        deadline = time.monotonic() + 120
        seen_while_running = 0
        while seen_while_running < 10 and time.monotonic() < deadline:
            proc.stdin.write(b"line %d\n" % sent)
            proc.stdin.flush()
            sent += 1
            time.sleep(0.03)
            if sent >= 20 and sent % 5 == 0:
                seen_while_running = len(values(backend, t))
        assert proc.poll() is None
        assert seen_while_running >= 10
        for _ in range(10):
            proc.stdin.write(b"line %d\n" % sent)
            sent += 1
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert values(backend, t) == [b"line %d" % i for i in range(sent)]


def read_until_exit(fd, proc, timeout=20):
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(5)
    return out


def test_prompt_on_a_terminal(pk, backend):
    t = backend.topic("t")
    create(backend, t)
    master, slave = pty.openpty()
    proc = subprocess.Popen([tool_path(PRODUCER), *backend, "--topic", t], env=pk.env, stdin=slave, stdout=slave,
                            stderr=subprocess.PIPE, close_fds=True)
    os.close(slave)
    try:
        time.sleep(0.3)
        os.write(master, b"one\n")
        time.sleep(0.3)
        os.write(master, b"two\n")
        time.sleep(0.3)
        os.write(master, b"\x04")  # Ctrl-D: end of input
        out = read_until_exit(master, proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0, proc.stderr.read()
    # The terminal echoes the typed lines; the tool prints `>` before every read, the one
    # that meets the end of input included.
    assert out.replace(b"one\r\n", b"").replace(b"two\r\n", b"").replace(b"^D\x08\x08", b"") == b">>>"
    assert values(backend, t) == [b"one", b"two"]


def test_progress_bar_for_a_large_file_on_a_terminal(pk, backend, tmp_path):
    path = tmp_path / "big.txt"
    line = b"v" * 99 + b"\n"
    path.write_bytes(line * ((cmd.PROGRESS_MIN_BYTES // len(line)) + 1000))
    count = path.stat().st_size // len(line)
    t = backend.topic("t")
    create(backend, t)
    master, slave = pty.openpty()
    with open(path, "rb") as stdin:
        proc = subprocess.Popen([tool_path(PRODUCER), *backend, "--topic", t], env=pk.env, stdin=stdin,
                                stdout=subprocess.PIPE, stderr=slave, close_fds=True)
    os.close(slave)
    try:
        err = read_until_exit(master, proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0 and proc.stdout.read() == b""
    last = err.rstrip(b"\r\n").split(b"\r")[-1]
    assert last.startswith(b"[" + b"#" * 30 + b"] 100%") and b"records/s" in last
    assert err.endswith(b"\n")
    assert len(values(backend, t)) == count
    # Piped stderr (not a terminal): no progress bar.
    ok(pk(PRODUCER, *backend, "--topic", t, input=b"x\n"))


# --------------------------------------------------------------------------- --bootstrap-server
@pytest.mark.server_only("the remote backend's own options")
def test_broker_list_is_used_without_bootstrap_server(pk, backend):
    bootstrap = backend.bootstrap
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, "--broker-list", bootstrap, "--topic", t, input="a\n"))
    # 3.7: --bootstrap-server wins, and the ignored --broker-list is not even checked.
    ok(pk(PRODUCER, "--bootstrap-server", bootstrap, "--broker-list", "not an address", "--topic", t, input="b\n"))
    assert values(backend, t) == [b"a", b"b"]
    fails(pk(PRODUCER, "--broker-list", "localhost", "--topic", t, input="c\n"),
          "Please provide valid host:port like host1:9091,host2:9092")


@pytest.mark.parametrize("address", ["localhost", "localhost:", ":", "host:port", "a:1,b"])
def test_invalid_bootstrap_server(plain, address):
    fails(plain(PRODUCER, "--bootstrap-server", address, "--topic", "t", input="x\n"),
          "Please provide valid host:port like host1:9091,host2:9092")


def test_missing_topic_is_checked_before_the_bootstrap_address(plain):
    fails(plain(PRODUCER, "--bootstrap-server", "nonsense", input=""), 'Missing required argument "[topic]"')


def test_unreachable_cluster_fails_within_max_block_ms(plain):
    start = time.monotonic()
    fails(plain(PRODUCER, "--bootstrap-server", f"127.0.0.1:{free_port()}", "--topic", "t", "--max-block-ms", "1500",
             input="x\n"),
          "Topic t not present in metadata after 1500 ms.")
    assert time.monotonic() - start < 10


def test_unresolvable_bootstrap_host(plain):
    fails(plain(PRODUCER, "--bootstrap-server", "no-such-host.invalid:9092", "--topic", "t", input="x\n"),
          "No resolvable bootstrap urls given in bootstrap.servers")


@pytest.mark.server_only("librdkafka properties")
def test_x_passes_librdkafka_properties_through(pk, backend):
    """-X wins over everything: here librdkafka's own default partitioner (CRC-32), which puts
    keys elsewhere than Java's murmur2."""
    t, crc = backend.topic("murmur"), backend.topic("crc")
    create(backend, t, 12)
    create(backend, crc, 12)
    ok(pk(PRODUCER, *backend, "--topic", t, *KEYED, input="kafka:1\nabc:2\n"))
    ok(pk(PRODUCER, *backend, "--topic", crc, *KEYED, "-X", "partitioner=consistent", input="kafka:1\nabc:2\n"))
    assert pairs(backend, t, 4) == [(b"kafka", b"1")] and pairs(backend, t, 3) == [(b"abc", b"2")]
    assert pairs(backend, crc, 11) == [(b"kafka", b"1")] and pairs(backend, crc, 6) == [(b"abc", b"2")]
    fails(pk(PRODUCER, *backend, "--topic", t, "-X", "no.such.property=1", input="x\n"),
          "Unknown client configuration: no.such.property")
    fails(pk(PRODUCER, *backend, "--topic", t, "-X", "linger.ms", input="x\n"),
          "Invalid -X argument 'linger.ms': expected -X property=value")


@pytest.mark.server_only("Java client keys translated for librdkafka")
def test_java_client_configuration_is_translated(pk, backend, tmp_path):
    config = tmp_path / "producer.properties"
    config.write_text("send.buffer.bytes=65536\nrequest.timeout.ms=5000\ndelivery.timeout.ms=30000\n"
                      "key.serializer=org.apache.kafka.common.serialization.StringSerializer\n"
                      "max.in.flight.requests.per.connection=1\nenable.idempotence=true\n")
    t = backend.topic("t")
    create(backend, t)
    ok(pk(PRODUCER, *backend, "--topic", t, "--command-config", str(config), input="a\nb\n"))
    assert values(backend, t) == [b"a", b"b"]
    if backend.data_dir is not None:
        assert batches(backend, t)[0][0].producer_id >= 0  # enable.idempotence reached librdkafka
    fails(pk(PRODUCER, *backend, "--topic", t, "--command-property", "no.such.config=1", input="x\n"),
          "Unknown client configuration: no.such.config")


def test_x_and_data_dir_need_the_right_backend(plain, tmp_path):
    fails(plain(PRODUCER, "--topic", "t", "-X", "linger.ms=5", input="x\n"),
          "Option -X needs --bootstrap-server: librdkafka properties do not apply to the bundled engine")
    fails(plain(PRODUCER, "--topic", "t", "--bootstrap-server", "localhost:9092", "--data-dir", str(tmp_path),
             input="x\n"),
          'Option "[data-dir]" can\'t be used with option "[bootstrap-server]"')


# --------------------------------------------------------------------------- modules
@pytest.mark.parametrize("partitions", [1, 3, 12])
def test_bulk_and_per_record_sends_build_identical_batches(tmp_path, partitions):
    rng = random.Random(9)
    now = int(time.time() * 1000)
    chunks = []
    for c in range(30):
        n = rng.randrange(1, 400)
        keys = [b"k%d" % rng.randrange(40) for _ in range(n)]
        size = rng.choice([5, 60, 120, 3000])
        vals = [bytes(rng.randrange(97, 123) for _ in range(rng.randrange(size))) for _ in range(n)]
        chunks.append((now + c * rng.choice([0, 1, 70, 9000]), keys if c % 3 else None, vals))
    stores = []
    for bulk in (False, True):
        for codec in ("none", "zstd"):
            engine = Engine(str(tmp_path / f"{bulk}-{codec}"))
            engine.create_topic("t", num_partitions=partitions)
            producer = EngineProducer(engine, "t", compression_type=codec, batch_size=4000, rng=random.Random(1))
            for ts, keys, vals in chunks:
                if bulk:
                    producer.send_values(vals, keys, timestamp=ts)
                else:
                    for i, value in enumerate(vals):
                        producer.send(None if keys is None else keys[i], value, timestamp=ts)
            producer.close()
            stores.append([engine.partition("t", p).read(0, 1 << 30) for p in range(partitions)])
            engine.close()
    # Uncompressed: byte for byte the same batches.
    assert stores[0] == stores[2]
    assert sum(len(list(records.iter_batches(d))) for d in stores[0]) > 30

    # Compressed: batch limits follow the compression ratio estimate, which depends on the
    # order batches complete in (and null-key records switch partition at batch ends), so
    # compare keyed records per partition, and null-key records as a whole.
    def decoded(store):
        recs = [[(r.key, r.value, r.timestamp) for pos, h in records.iter_batches(d)
                 for r in records.decode_records(d, pos, h)] for d in store]
        return [[r for r in p if r[0] is not None] for p in recs], sorted(r for p in recs for r in p if r[0] is None)

    assert decoded(stores[1]) == decoded(stores[3]) == decoded(stores[0])


def test_java_regex_split():
    from pk.engine.javacompat import java_split as split

    assert split("a,b,,", ",") == ["a", "b"]
    assert split(",a", ",") == ["", "a"]
    assert split("", ",") == [""]
    assert split(",,", ",") == []
    assert split("abc", ",") == ["abc"]


def test_properties_module(tmp_path):
    path = tmp_path / "x.properties"
    path.write_bytes(b"a=1\nb : two words\nc\\u00e9=\\u00e9t\\u00e9\n  d   spaced  \nlong=x\\\n   y\n# c=no\ne=caf\xe9\n")
    assert load_properties(str(path)) == {"a": "1", "b": "two words", "c\u00e9": "\u00e9t\u00e9", "d": "spaced  ",
                                          "long": "xy", "e": "caf\u00e9"}
    assert parse_key_value_args(["a=1=2", "b", "c=", "=d", "a=3"]) == {"a": "3", "b": "", "c": "", "": "d"}
    props = {"linger.ms": "5"}
    merge_options(props, [("linger.ms", None, 1000), ("acks", None, "-1"), ("batch.size", 10, 16384)])
    assert props == {"linger.ms": "5", "acks": "-1", "batch.size": "10"}
    merge_options(props, [("linger.ms", 7, 1000)])
    assert props["linger.ms"] == "7"


def test_engine_producer_explicit_partition_and_closed(tmp_path):
    engine = Engine(str(tmp_path))
    engine.create_topic("t", num_partitions=2)
    producer = EngineProducer(engine, "t")
    producer.send(b"k", b"to one", partition=1)
    stamp = int(time.time() * 1000) - 5000
    producer.send(None, b"to zero", [("h", b"x")], timestamp=stamp, partition=0)
    with pytest.raises(Exception, match=r"^Invalid partition: -1\. Partition number should always be "
                                        r"non-negative or null\.$"):
        producer.send(None, b"x", partition=-1)
    with pytest.raises(Exception, match=r"^Partition 2 of topic t with partition count 2 is not present "
                                        r"in metadata after 60000 ms\.$"):
        producer.send(None, b"x", partition=2)
    producer.close()
    with pytest.raises(Exception, match="after producer has been closed"):
        producer.send(None, b"late")
    one = records.decode_records(engine.partition("t", 1).read(0))
    zero = records.decode_records(engine.partition("t", 0).read(0))
    assert [(r.key, r.value) for r in one] == [(b"k", b"to one")]
    assert [(r.value, r.headers, r.timestamp) for r in zero] == [(b"to zero", (("h", b"x"),), stamp)]
    engine.close()


@pytest.mark.parametrize("separator", ["\t", "::", "aa", "→", " "])
def test_spans_parse_lines_as_parse_many(separator):
    """LineReader.parse_spans (column-wise, for the engine's send_spans) finds the keys and
    values parse_many finds, or declines (None) where that path must decide."""
    rng = random.Random(separator)
    reader = cmd.LineReader({"parse.key": "true", "key.separator": separator})
    sep = separator.encode()
    alphabet = ["a", "b", "é", "€", "😀", " ", ":", "→", "\t"]
    for _ in range(200):
        lines = []
        for _ in range(rng.randrange(1, 60)):
            # Keys found within each line's first bytes, or further on (longer keys).
            key = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, rng.choice([6, 6, 40])))).encode()
            value = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30))).encode()
            lines.append(key + sep + value)
        block = b"\n".join(lines) + b"\n"
        spans = reader.parse_spans(block)
        keys, values = reader.parse_many(lines, 1)
        assert spans is not None
        assert (spans.keys(), spans.values()) == (keys, values)
    # A line without the separator, or the null marker anywhere: the line-by-line path decides.
    assert reader.parse_spans(b"k" + sep + b"v\nnoseparator\n") is None
    marked = cmd.LineReader({"parse.key": "true", "key.separator": separator, "null.marker": "NULL"})
    assert marked.parse_spans(b"NULL" + sep + b"v\n") is None
    assert marked.parse_spans(b"k" + sep + b"NULLISH\n") is None
    spans = marked.parse_spans(b"k" + sep + b"v\n")
    assert (spans.keys(), spans.values()) == ([b"k"], [b"v"])


@pytest.mark.parametrize("text", [b"a\tb\nc\td\n", b"a\tb\r\nc\td\re\tf", b"k\t\xc3\xa9\n\nx\ty", b"", b"\n\n",
                                  b"no newline at the end", b"long line " * 20 + b"\n" + b"x\ty\n" * 30])
@pytest.mark.parametrize("chunk_bytes", [1, 7, 64, 1 << 16])
def test_input_blocks_hold_the_lines_chunks_hands_out(tmp_path, text, chunk_bytes):
    """Input.blocks() (the column-wise path's reads) gives the lines Input.chunks() gives,
    "\\n"-terminated, and counts them, whether or not the caller reports their count."""
    path = tmp_path / "input"
    path.write_bytes(text)
    seen = {}
    for mode in ("chunks", "blocks", "blocks reported"):
        fd = os.open(path, os.O_RDONLY)
        try:
            source = cmd.Input(fd, None, chunk_bytes=chunk_bytes)
            lines = []
            if mode == "chunks":
                for chunk in source.chunks():
                    lines += chunk
            else:
                for block in source.blocks():
                    assert block.endswith(b"\n")
                    got = block.split(b"\n")[:-1]
                    if mode == "blocks reported":
                        source.block_lines(len(got))
                    lines += got
                    assert source.lines_read == len(lines)
            seen[mode] = (lines, source.lines_read)
        finally:
            os.close(fd)
    assert seen["chunks"] == seen["blocks"] == seen["blocks reported"]
    assert seen["chunks"][1] == len(seen["chunks"][0])
