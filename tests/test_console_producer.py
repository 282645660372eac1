"""pk-console-producer run as an installed tool on a temporary data directory; what it
stored is read back with the engine itself (kafka-cli.md §2, pk-choices.md)."""

from __future__ import annotations

import os
import pty
import random
import select
import subprocess
import time

import pytest

from pk.commands import producer as cmd
from pk.commands.properties import load_properties, merge_options, parse_key_value_args
from pk.engine import compression, records
from pk.engine.engine import Engine
from pk.engine.partitioner import partition_for_key
from pk.engine.producer import EngineProducer

from conftest import tool_path

PRODUCER = "pk-console-producer"
KEYED = ("--property", "parse.key=true", "--property", "key.separator=:")


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


def create(pk, topic, partitions=1, *configs):
    args = ["--create", "--topic", topic, "--partitions", str(partitions)]
    for c in configs:
        args += ["--config", c]
    proc = pk("pk-topics", *args)
    assert proc.returncode == 0, proc.err


def batches(data_dir, topic, partition=0):
    """[(BatchHeader, [Record, ...]), ...] of one partition, read through the engine."""
    with Engine(data_dir) as engine:
        log = engine.partition(topic, partition)
        out = []
        offset = log.log_start_offset
        while True:
            data = log.read(offset)
            if not data:
                return out
            for pos, header in records.iter_batches(data):
                records.check_batch(data, pos)
                out.append((header, records.decode_records(data, pos, header)))
                offset = header.last_offset + 1


def stored(data_dir, topic, partition=0):
    return [rec for _, recs in batches(data_dir, topic, partition) for rec in recs]


def values(data_dir, topic, partition=0):
    return [r.value for r in stored(data_dir, topic, partition)]


def pairs(data_dir, topic, partition=0):
    return [(r.key, r.value) for r in stored(data_dir, topic, partition)]


# --------------------------------------------------------------------------- basics
def test_lines_become_records_in_order(pk, data_dir):
    create(pk, "t")
    before = int(time.time() * 1000)
    ok(pk(PRODUCER, "--topic", "t", input="first\nsecond\n\nlast without newline"))
    after = int(time.time() * 1000)
    recs = stored(data_dir, "t")
    # An empty line is a record with an empty (not null) value; no key without parse.key.
    assert [(r.key, r.value) for r in recs] == [(None, b"first"), (None, b"second"), (None, b""),
                                              (None, b"last without newline")]
    assert [r.offset for r in recs] == [0, 1, 2, 3]
    assert all(before <= r.timestamp <= after and r.headers == () for r in recs)
    header = batches(data_dir, "t")[0][0]
    assert header.compression == compression.NONE and header.producer_id == -1
    assert header.timestamp_type == records.CREATE_TIME


def test_line_terminators_like_java_readline(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", input=b"a\r\nb\rc\n\r\nd\r"))
    assert values(data_dir, "t") == [b"a", b"b", b"c", b"", b"d"]


def test_empty_input_sends_nothing_and_creates_nothing(pk, data_dir):
    ok(pk(PRODUCER, "--topic", "nothing", input=""))
    assert "nothing" not in pk("pk-topics", "--list").out.split()


def test_utf8_is_stored_as_is(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", *KEYED, input="clé:värde ✓\n日本:語\n"))
    assert pairs(data_dir, "t") == [("clé".encode(), "värde ✓".encode()), ("日本".encode(), "語".encode())]


def test_keys_go_to_the_murmur2_partition_in_order(pk, data_dir):
    create(pk, "orders", 3)
    lines = [f"user-{i % 17}:event {i}" for i in range(500)]
    ok(pk(PRODUCER, "--topic", "orders", *KEYED, input="\n".join(lines) + "\n"))
    for p in range(3):
        expected = [(k.encode(), v.encode()) for k, v in (line.split(":", 1) for line in lines)
                    if partition_for_key(k.encode(), 3) == p]
        assert pairs(data_dir, "orders", p) == expected
    assert sum(len(stored(data_dir, "orders", p)) for p in range(3)) == 500


def test_key_separator_defaults_to_tab_and_splits_at_the_first(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", "--property", "parse.key=TRUE ",
          input="k1\tv1\tmore\n\tempty key\nk3\t\n"))
    assert pairs(data_dir, "t") == [(b"k1", b"v1\tmore"), (b"", b"empty key"), (b"k3", b"")]


def test_multi_character_separator(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", "--property", "parse.key=true", "--property", "key.separator=::",
          input="a::b::c\n::x\n"))
    assert pairs(data_dir, "t") == [(b"a", b"b::c"), (b"", b"x")]


def test_null_marker_makes_null_keys_and_tombstones(pk, data_dir):
    create(pk, "t", 1)
    ok(pk(PRODUCER, "--topic", "t", *KEYED, "--property", "null.marker=NULL",
          input="k1:NULL\nNULL:v2\nk3:v3\nk4:NULLx\n"))
    assert pairs(data_dir, "t") == [(b"k1", None), (None, b"v2"), (b"k3", b"v3"), (b"k4", b"NULLx")]
    create(pk, "plain")
    ok(pk(PRODUCER, "--topic", "plain", "--property", "null.marker=-", input="a\n-\nb\n"))
    assert values(data_dir, "plain") == [b"a", None, b"b"]


def test_headers(pk, data_dir):
    create(pk, "t")
    props = ("--property", "parse.headers=true", "--property", "parse.key=true",
             "--property", "null.marker=N")
    ok(pk(PRODUCER, "--topic", "t", *props,
          input="h1:v1,h2:v2\tkey\tvalue\nN\tk2\tv2\nh:N,e:\tk3\tv3\nh:a:b,,\tk4\tv4\n"))
    recs = stored(data_dir, "t")
    assert [(r.key, r.value) for r in recs] == [(b"key", b"value"), (b"k2", b"v2"), (b"k3", b"v3"),
                                              (b"k4", b"v4")]
    assert recs[0].headers == (("h1", b"v1"), ("h2", b"v2"))
    assert recs[1].headers == ()  # headers text equal to the null marker: no headers
    assert recs[2].headers == (("h", None), ("e", b""))  # null value; empty value
    # Split at the first key separator; trailing empty pairs dropped (Java's String.split).
    assert recs[3].headers == (("h", b"a:b"),)


def test_headers_separator_is_a_regex(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", "--property", "parse.headers=true", "--property", "headers.separator=[;|]",
          "--property", "headers.delimiter=#", "--property", "headers.key.separator==",
          input="a=1;b=2|c=3#value\n"))
    recs = stored(data_dir, "t")
    assert recs[0].headers == (("a", b"1"), ("b", b"2"), ("c", b"3")) and recs[0].value == b"value"


def test_ignore_error(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", *KEYED, "--property", "parse.headers=true", "--property", "ignore.error=true",
          input="no separators at all\nh:1\tk:v\nnokey\th2\tstill\n"))
    recs = stored(data_dir, "t")
    # No headers delimiter: no headers, key parsing from column 0; no key separator: null
    # key and the whole rest is the value; a pair without ':' is a header with a null value.
    assert [(r.key, r.value, r.headers) for r in recs] == [
        (None, b"no separators at all", ()),
        (b"k", b"v", (("h", b"1"),)),
        (None, b"h2\tstill", (("nokey", None),)),
    ]


def test_ignore_error_without_headers(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", *KEYED, "--property", "ignore.error=true", input="a:1\nplain\nb:2\n"))
    assert pairs(data_dir, "t") == [(b"a", b"1"), (None, b"plain"), (b"b", b"2")]


# --------------------------------------------------------------------------- bad input
def test_missing_key_separator_stops_after_storing_earlier_lines(pk, data_dir):
    create(pk, "t", 3)
    lines = [f"k{i}:v{i}" for i in range(1, 3)] + ["abc"] + ["k4:v4"]
    proc = fails(pk(PRODUCER, "--topic", "t", *KEYED, input="\n".join(lines) + "\n"),
                 "No key separator found on line number 3: 'abc'")
    assert proc.out == ""
    got = sorted(r for p in range(3) for r in pairs(data_dir, "t", p))
    assert got == [(b"k1", b"v1"), (b"k2", b"v2")]


def test_missing_key_separator_deep_in_a_large_input(pk, data_dir):
    create(pk, "t", 2)
    lines = [f"key{i % 100}:value {i}" for i in range(30000)]
    lines[25000] = "broken line"
    proc = fails(pk(PRODUCER, "--topic", "t", *KEYED, input="\n".join(lines) + "\n"),
                 "No key separator found on line number 25001: 'broken line'")
    got = sum(len(stored(data_dir, "t", p)) for p in range(2))
    assert got == 25000 and proc.out == ""
    for p in range(2):  # order kept within each partition
        numbers = [int(r.value.split()[1]) for r in stored(data_dir, "t", p)]
        assert numbers == sorted(numbers)


def test_missing_headers_delimiter(pk, data_dir):
    create(pk, "t")
    fails(pk(PRODUCER, "--topic", "t", "--property", "parse.headers=true", input="h:1\tv\nno delimiter\n"),
          "No headers delimiter found on line number 2: 'no delimiter'")
    assert values(data_dir, "t") == [b"v"]


def test_header_pair_without_key_separator(pk, data_dir):
    create(pk, "t")
    fails(pk(PRODUCER, "--topic", "t", "--property", "parse.headers=true", input="a:1\tok\na:1,b\tv\n"),
          "No header key separator found in pair 'b' on line number 2")
    assert values(data_dir, "t") == [b"ok"]


def test_header_key_equal_to_null_marker(pk, data_dir):
    create(pk, "t")
    fails(pk(PRODUCER, "--topic", "t", "--property", "parse.headers=true", "--property", "null.marker=X",
          input="X:1\tv\n"),
          "Header keys should not be equal to the null marker 'X' as they can't be null")


@pytest.mark.parametrize("props, message", [
    (("headers.delimiter=,",), "headers.delimiter and headers.separator may not be equal"),
    (("headers.key.separator=\t",), "headers.delimiter and headers.key.separator may not be equal"),
    (("headers.separator=:",), "headers.separator and headers.key.separator may not be equal"),
    (("null.marker=\t", "headers.delimiter=#"), "null.marker and key.separator may not be equal"),
    (("null.marker=,",), "null.marker and headers.separator may not be equal"),
    (("null.marker=#", "headers.delimiter=#", "key.separator=:"), "null.marker and headers.delimiter may not be equal"),
    (("null.marker=:", "key.separator=;"), "null.marker and headers.key.separator may not be equal"),
])
def test_reader_configuration_conflicts(pk, data_dir, props, message):
    create(pk, "t")
    args = [a for prop in props for a in ("--property", prop)]
    fails(pk(PRODUCER, "--topic", "t", *args, input="x\n"), message)
    assert values(data_dir, "t") == []


def test_unknown_reader_property(pk, data_dir):
    create(pk, "t")
    proc = pk(PRODUCER, "--topic", "t", "--property", "parse.keys=true", input="x\n")
    assert proc.returncode == 1 and proc.err.count("\n") == 1
    assert proc.err.startswith("Unknown line reader property 'parse.keys' (known: file, ")
    assert values(data_dir, "t") == []


def test_invalid_utf8_line(pk, data_dir):
    create(pk, "t")
    fails(pk(PRODUCER, "--topic", "t", input=b"fine\nalso fine\nbad \xff byte\nnever\n"),
          "Line number 3 is not valid UTF-8: can't decode byte 0xff in position 4: invalid start byte")
    assert values(data_dir, "t") == [b"fine", b"also fine"]


def test_line_above_max_message_bytes(pk, data_dir):
    create(pk, "small", 1, "max.message.bytes=200")
    big = "x" * 300
    fails(pk(PRODUCER, "--topic", "small", input=f"one\ntwo\n{big}\nfour\n"),
          "The request included a message larger than the max message size the server will accept.")
    assert values(data_dir, "small") == [b"one", b"two"]
    # Batches never exceed the topic's limit, even though batch.size is larger.
    ok(pk(PRODUCER, "--topic", "small", input="".join(f"line {i}\n" for i in range(100))))
    assert all(h.size <= 200 for h, _ in batches(data_dir, "small"))
    assert len(values(data_dir, "small")) == 102


def test_line_above_max_message_bytes_compressed(pk, data_dir):
    # Compressed, the broker decides on the stored size: random text compresses badly, so the
    # batch is refused and split (as the Java producer does) until the big record stands alone.
    create(pk, "small", 1, "max.message.bytes=400")
    rng = random.Random(5)
    big = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(600))
    lines = ["one", "two", big, "four"]
    fails(pk(PRODUCER, "--topic", "small", "--compression-codec", "gzip", input="\n".join(lines) + "\n"),
          "The request included a message larger than the max message size the server will accept.")
    assert values(data_dir, "small") == [b"one", b"two", b"four"]
    # A large but compressible line fits once compressed, as in Kafka.
    ok(pk(PRODUCER, "--topic", "small", "--compression-codec", "gzip", input="y" * 5000 + "\n"))
    assert values(data_dir, "small")[-1] == b"y" * 5000


def test_record_above_max_request_size(pk, data_dir):
    create(pk, "t")
    fails(pk(PRODUCER, "--topic", "t", "--producer-property", "max.request.size=1000",
             input="ok\n" + "z" * 1000 + "\n"),
          "The message is 1086 bytes when serialized which is larger than 1000, which is the value of the "
          "max.request.size configuration.")
    assert values(data_dir, "t") == [b"ok"]
    fails(pk(PRODUCER, "--topic", "t", "--max-memory-bytes", "500", input="z" * 600 + "\n"),
          "The message is 686 bytes when serialized which is larger than the total memory buffer you have "
          "configured with the buffer.memory configuration.")


def test_unknown_topic_is_auto_created_with_num_partitions(pk, data_dir):
    ok(pk(PRODUCER, "--topic", "fresh", *KEYED, input="a:1\nb:2\n"))
    describe = pk("pk-topics", "--describe", "--topic", "fresh").out
    assert "PartitionCount: 1\tReplicationFactor: 1" in describe
    assert pairs(data_dir, "fresh") == [(b"a", b"1"), (b"b", b"2")]


def test_invalid_topic_name(pk, data_dir):
    fails(pk(PRODUCER, "--topic", "no spaces", input="x\n"), "Invalid topics: [no spaces]")


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
    (("--producer-property", "compression.type=lz4"), compression.NONE),
    (("--producer-property", "compression.type=lz4", "--compression-codec", "zstd"), compression.ZSTD),
])
def test_compression_codec_in_stored_batches(pk, data_dir, args, codec):
    create(pk, "t", 2)
    lines = [f"key{i % 7}:the value of line {i} " + "abc" * 20 for i in range(3000)]
    ok(pk(PRODUCER, "--topic", "t", *KEYED, *args, input="\n".join(lines) + "\n"))
    total = 0
    for p in range(2):
        found = batches(data_dir, "t", p)
        assert found and all(h.compression == codec for h, _ in found)
        expected = [line.split(":", 1) for line in lines if partition_for_key(line.split(":")[0].encode(), 2) == p]
        assert [(r.key.decode(), r.value.decode()) for _, recs in found for r in recs] == [tuple(e) for e in expected]
        total += sum(len(recs) for _, recs in found)
    assert total == 3000


def test_invalid_codec(pk, data_dir):
    fails(pk(PRODUCER, "--topic", "t", "--compression-codec", "brotli", input="x\n"),
          "Invalid value brotli for configuration compression.type: String must be one of: "
          "none, gzip, snappy, lz4, zstd")


def record_counts(data_dir, topic):
    return [h.records_count for h, _ in batches(data_dir, topic)]


def test_batch_size_and_merge_rules(pk, data_dir, tmp_path):
    config = tmp_path / "producer.properties"
    # Java .properties syntax: ':' and spaces as separators, comments, continuation lines.
    config.write_text("# the producer\nbatch.size : 300\nlinger.ms=1\\\n0\n! another comment\n")
    lines = "".join(f"{i:05d}-" + "v" * 40 + "\n" for i in range(60))  # records of 53 bytes
    create(pk, "a")
    ok(pk(PRODUCER, "--topic", "a", "--producer.config", str(config), input=lines))
    counts = record_counts(data_dir, "a")
    assert sum(counts) == 60 and max(counts) == 4  # (300 - 61) // 54: the file's batch.size
    create(pk, "b")
    ok(pk(PRODUCER, "--topic", "b", "--producer.config", str(config), "--batch-size", "1000", input=lines))
    assert max(record_counts(data_dir, "b")) == 17  # an explicit option beats the file
    create(pk, "c")
    ok(pk(PRODUCER, "--topic", "c", "--producer.config", str(config), "--producer-property", "batch.size=500",
          input=lines))
    assert max(record_counts(data_dir, "c")) == 8  # --producer-property beats --producer.config
    create(pk, "d")
    ok(pk(PRODUCER, "--topic", "d", "--batch-size", "1000", "--max-partition-memory-bytes", "200", input=lines))
    assert max(record_counts(data_dir, "d")) == 2  # --max-partition-memory-bytes beats --batch-size
    create(pk, "e")
    ok(pk(PRODUCER, "--topic", "e", input=lines))
    assert record_counts(data_dir, "e") == [60]  # default 16384


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
    with pytest.raises(cmd.CommandError, match=r"^Invalid value  for configuration batch.size: Not a number of type INT$"):
        cmd.producer_settings(cmd.producer_properties(cmd.ProducerOptions(topic="t", producer_property=["batch.size="])))


@pytest.mark.parametrize("args, message", [
    (("--request-required-acks", "2"), "Invalid value 2 for configuration acks: String must be one of: all, -1, 0, 1"),
    (("--producer-property", "batch.size=big"), "Invalid value big for configuration batch.size: Not a number of type INT"),
    (("--producer-property", "linger.ms=-1"), "Invalid value -1 for configuration linger.ms: Value must be at least 0"),
    (("--producer-property", "enable.idempotence=maybe"),
     "Invalid value maybe for configuration enable.idempotence: Expected value to be either true or false"),
    (("--producer-property", "enable.idempotence=true", "--request-required-acks", "1"),
     "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."),
    (("--batch-size", "x"), "Cannot parse argument 'x' of option batch-size"),
    (("--timeout", "9999999999999999999999"), "Cannot parse argument '9999999999999999999999' of option timeout"),
    (("--line-reader", "com.example.MyReader"), "java.lang.ClassNotFoundException: com.example.MyReader"),
    (("--producer.config", "/nonexistent/p.properties"), "java.nio.file.NoSuchFileException: /nonexistent/p.properties"),
    (("--reader-config", "/nonexistent/r.properties"), "java.nio.file.NoSuchFileException: /nonexistent/r.properties"),
    (("--topic", "u"), "Found multiple arguments for option topic, but you asked for only one"),
    (("--no-such-option",), "no-such-option is not a recognized option"),
])
def test_option_errors(pk, data_dir, args, message):
    create(pk, "t")
    fails(pk(PRODUCER, "--topic", "t", *args, input="x\n"), message)
    assert values(data_dir, "t") == []


def test_acks_and_other_options_are_accepted(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", "--request-required-acks", "all", "--message-send-max-retries", "5",
          "--retry-backoff-ms", "10", "--request-timeout-ms", "3000", "--metadata-expiry-ms", "1000",
          "--max-block-ms", "100", "--max-memory-bytes", "1000000", "--socket-buffer-size", "65536",
          "--line-reader", "kafka.tools.ConsoleProducer$LineMessageReader", "--producer-property", "acks=0",
          input="x\n"))
    ok(pk(PRODUCER, "-topic", "t", "--line-reader", "org.apache.kafka.tools.LineMessageReader", input="y\n"))
    assert values(data_dir, "t") == [b"x", b"y"]


def test_missing_topic_argument(pk):
    fails(pk(PRODUCER, "--sync", input=""), 'Missing required argument "[topic]"')


def test_help_version_and_no_arguments(pk):
    proc = pk(PRODUCER, "--help")
    assert proc.returncode == 0 and "--compression-codec" in proc.out and "--producer.config" in proc.out
    proc = pk(PRODUCER, "--version")
    assert proc.returncode == 0 and proc.out.startswith("pk ") and "Kafka 3.7" in proc.out
    proc = pk(PRODUCER)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("This tool helps to read data from standard input and publish it to Kafka.\n")


def test_reader_config_file_and_property_precedence(pk, data_dir, tmp_path):
    reader = tmp_path / "reader.properties"
    reader.write_text("parse.key = true\nkey.separator = |\nnull.marker = nil\n")
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", "--reader-config", str(reader), "--property", "key.separator=;",
          input="a;1\nb|2;3\nnil;x\n"))
    assert pairs(data_dir, "t") == [(b"a", b"1"), (b"b|2", b"3"), (None, b"x")]


def test_topic_property_retargets_the_records(pk, data_dir):
    create(pk, "t")
    create(pk, "other")
    ok(pk(PRODUCER, "--topic", "t", "--property", "topic=other", input="x\n"))
    assert values(data_dir, "other") == [b"x"] and values(data_dir, "t") == []


def test_file_property(pk, data_dir, tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(b"k%d:v%d\n" % (i % 5, i) for i in range(2000)))
    create(pk, "t", 3)
    ok(pk(PRODUCER, "--topic", "t", *KEYED, "--property", f"file={path}", input="ignored:stdin\n"))
    got = {p: pairs(data_dir, "t", p) for p in range(3)}
    assert sum(map(len, got.values())) == 2000
    for p, recs in got.items():
        assert all(partition_for_key(k, 3) == p for k, _ in recs)
        numbers = [int(v[1:]) for _, v in recs]
        assert numbers == sorted(numbers)
    assert (b"ignored", b"stdin") not in [r for recs in got.values() for r in recs]
    fails(pk(PRODUCER, "--topic", "t", "--property", f"file={tmp_path}/missing.txt", input=""),
          f"Cannot read {tmp_path}/missing.txt: No such file or directory")


def test_sync_sends_each_record_on_its_own(pk, data_dir):
    create(pk, "t")
    ok(pk(PRODUCER, "--topic", "t", "--sync", *KEYED, input="a:1\nb:2\nc:3\n"))
    assert record_counts(data_dir, "t") == [1, 1, 1]
    assert pairs(data_dir, "t") == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    fails(pk(PRODUCER, "--topic", "t", "--sync", *KEYED, input="d:4\nbad\n"),
          "No key separator found on line number 2: 'bad'")
    assert pairs(data_dir, "t")[-1] == (b"d", b"4")


def test_compacted_topic_refuses_null_keys(pk, data_dir):
    create(pk, "compact", 1, "cleanup.policy=compact")
    fails(pk(PRODUCER, "--topic", "compact", input="no key\n"),
          "Compacted topic cannot accept message without key in topic partition compact-0.")
    ok(pk(PRODUCER, "--topic", "compact", *KEYED, input="k:v\n"))
    assert pairs(data_dir, "compact") == [(b"k", b"v")]


# --------------------------------------------------------------------------- terminals and time
def test_lingering_records_are_appended_while_waiting_for_input(pk, data_dir):
    """--timeout is linger.ms: a line typed into a pipe that stays open is stored after it."""
    create(pk, "t")
    proc = subprocess.Popen([tool_path(PRODUCER), "--topic", "t", "--timeout", "200"], env=pk.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b"first\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and values(data_dir, "t") != [b"first"]:
            time.sleep(0.05)
        assert values(data_dir, "t") == [b"first"]
        assert proc.poll() is None  # still running, waiting for more input
        proc.stdin.write(b"second\n")
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert values(data_dir, "t") == [b"first", b"second"]
    assert proc.stdout.read() == b"" and proc.stderr.read() == b""


def test_lingering_records_are_appended_while_input_trickles_in(pk, data_dir):
    """Input that never pauses for linger.ms still gets its records stored after linger.ms."""
    create(pk, "t")
    proc = subprocess.Popen([tool_path(PRODUCER), "--topic", "t", "--timeout", "100"], env=pk.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen_while_running = 0
        for i in range(40):
            proc.stdin.write(b"line %d\n" % i)
            proc.stdin.flush()
            time.sleep(0.03)
            if i >= 20:
                seen_while_running = len(values(data_dir, "t"))
        assert proc.poll() is None
        assert seen_while_running >= 10
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert values(data_dir, "t") == [b"line %d" % i for i in range(40)]


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


def test_prompt_on_a_terminal(pk, data_dir):
    create(pk, "t")
    master, slave = pty.openpty()
    proc = subprocess.Popen([tool_path(PRODUCER), "--topic", "t"], env=pk.env, stdin=slave, stdout=slave,
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
    assert values(data_dir, "t") == [b"one", b"two"]


def test_progress_bar_for_a_large_file_on_a_terminal(pk, data_dir, tmp_path):
    path = tmp_path / "big.txt"
    line = b"v" * 99 + b"\n"
    path.write_bytes(line * ((cmd.PROGRESS_MIN_BYTES // len(line)) + 1000))
    count = path.stat().st_size // len(line)
    create(pk, "t")
    master, slave = pty.openpty()
    with open(path, "rb") as stdin:
        proc = subprocess.Popen([tool_path(PRODUCER), "--topic", "t"], env=pk.env, stdin=stdin,
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
    assert len(values(data_dir, "t")) == count
    # Piped stderr (not a terminal): no progress bar.
    ok(pk(PRODUCER, "--topic", "t", input=b"x\n"))


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
    split = cmd.java_regex_split
    import re
    assert split(re.compile(","), "a,b,,") == ["a", "b"]
    assert split(re.compile(","), ",a") == ["", "a"]
    assert split(re.compile(","), "") == [""]
    assert split(re.compile(","), ",,") == []
    assert split(re.compile(","), "abc") == ["abc"]


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
