"""pk-console-producer and pk-console-consumer against Kafka 4.4's own console tools, on the
session's real Kafka broker (conftest `kafka`, `kafka_tools`).

Every scenario runs through Kafka's tool and pk's (`--bootstrap-server`), and again through
pk on its bundled engine (a fresh data directory). Compared: exit status, stdout and stderr's
first line (the whole stderr where Kafka prints no stack trace), after blanking log
timestamps; the producers' records (partition, key, value, headers, compression) as one
reader (confluent-kafka) sees them, and as the engine stores them. Differences that are
deliberate (README "Differences from Kafka's tools") are asserted as they are.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

import kafka_oracle
from kafka_oracle import wait_for_leaders
from conftest import tool_path

PREFIX = "ot-cc-"
KIP_848 = ("The consumer rebalance protocol (KIP-848) is production-ready! Set group.protocol=consumer to try it "
           "out. See https://kafka.apache.org/documentation/#consumer_rebalance_protocol")


@dataclass
class Out:
    rc: int
    out: str
    err: str

    @property
    def first(self) -> str:
        return self.err.split("\n", 1)[0]

    def key(self, full_err: bool = False):
        return (self.rc, self.out, self.err if full_err else self.first)


def _norm(text: str, replace: dict[str, str]) -> str:
    text = kafka_oracle.normalise(text, replace=replace)
    return re.sub(r"console-consumer-\d+", "console-consumer-<n>", text)


def run_kafka(kafka_tools, tool: str, args: list[str], input: str = "", replace: dict | None = None) -> Out:
    r = kafka_tools(tool, *args, input=input)
    return Out(r.returncode, _norm(r.out, replace or {}), _norm(r.err, replace or {}))


def run_pk(tool: str, args: list[str], input: str = "", data_dir: str | None = None,
           replace: dict | None = None) -> Out:
    env = {**os.environ, "PK_DATA_DIR": data_dir or "/nonexistent-pk-data"}
    p = subprocess.run([tool_path(tool), *args], input=input.encode(), capture_output=True, env=env, timeout=120)
    return Out(p.returncode, _norm(p.stdout.decode(errors="replace"), replace or {}),
               _norm(p.stderr.decode(errors="replace"), replace or {}))


def create_remote(bootstrap: str, topics: dict[str, int]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    futures = admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])
    for f in futures.values():
        f.result(30)
    wait_for_leaders(bootstrap, topics)


def create_engine(data_dir: str, topics: dict[str, int]) -> None:
    from pk.engine.engine import Engine

    with Engine(data_dir) as engine:
        for t, n in topics.items():
            engine.create_topic(t, n)


def read_remote(bootstrap: str, topics: dict[str, int]) -> dict:
    """{topic: {partition: [(key, value, headers)]}} of every record, through confluent-kafka."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": PREFIX + "reader", "enable.auto.commit": False,
                  "log_level": 0})
    try:
        out = {t: {p: [] for p in range(n)} for t, n in topics.items()}
        ends = {}
        assign = []
        for t, n in topics.items():
            for p in range(n):
                low, high = c.get_watermark_offsets(TopicPartition(t, p), timeout=30)
                if high > low:
                    ends[(t, p)] = high
                    assign.append(TopicPartition(t, p, low))
        c.assign(assign)
        deadline = time.monotonic() + 30
        while ends and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error():
                continue
            out[m.topic()][m.partition()].append((m.key(), m.value(), tuple(m.headers() or ())))
            if m.offset() >= ends[(m.topic(), m.partition())] - 1:
                del ends[(m.topic(), m.partition())]
        assert not ends, f"records not read: {ends}"
        return out
    finally:
        c.close()


def read_engine(data_dir: str, topics: dict[str, int]) -> tuple[dict, dict]:
    """The same records through pk's engine, and {topic: {codec ids of its batches}}."""
    from pk.engine import records as rec
    from pk.engine.engine import Engine

    out, codecs = {}, {}
    with Engine(data_dir) as engine:
        for t, n in topics.items():
            out[t], codecs[t] = {}, set()
            for p in range(n):
                log = engine.partition(t, p)
                recs = []
                offset = log.log_start_offset
                while data := log.read(offset):
                    for pos, header in rec.iter_batches(data):
                        codecs[t].add(header.attributes & 7)
                        recs += [(r.key, r.value, tuple(r.headers)) for r in rec.decode_records(data, pos, header)]
                        offset = header.last_offset + 1
                out[t][p] = recs
    return out, codecs


def kafka_codecs(log_dir: str, topic: str, partitions: int) -> set:
    """Codec ids of the batches the Kafka broker stored (read from its segment files)."""
    from pk.engine import records as rec

    found = set()
    for p in range(partitions):
        with open(os.path.join(log_dir, f"{topic}-{p}", "00000000000000000000.log"), "rb") as f:
            data = f.read()
        found |= {h.attributes & 7 for _, h in rec.iter_batches(data)}
    return found


# --------------------------------------------------------------------------- the producer
KEYED = "".join(f"key{i}\tvalue {i}\n" for i in range(30))
# Long repetitive lines, so that every codec makes the batches smaller (librdkafka sends a
# batch uncompressed when compressing would not).
COMPRESSIBLE = "".join(f"{i}:" + "compressible " * 20 + "\n" for i in range(5))
HEADERED = "h1:v1,h2:v2\tk1\tone\nh1:x\tk2\ttwo\nNUL\tk3\tNUL\nh3:NUL\tk4\tfour\nh1:a,h2:\tk5\t\n"

# (name, partitions, args, input); each runs into topics of its own.
PRODUCER_SCENARIOS = [
    ("plain", 1, [], "one\ntwo\n\nthree\n"),
    ("crlf", 1, [], "a\r\nb\rc"),
    ("keys", 3, ["--reader-property", "parse.key=true"], KEYED),
    ("keys-property", 3, ["--property", "parse.key=true"], KEYED),
    ("key-separator", 3, ["--reader-property", "parse.key=true", "--reader-property", "key.separator=::"],
     "a::1\nb::2::x\nc::\n::d\n"),
    ("headers", 3, ["--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
                    "--reader-property", "null.marker=NUL"], HEADERED),
    ("headers-seps", 1, ["--reader-property", "parse.headers=true", "--reader-property", "headers.delimiter=|",
                         "--reader-property", "headers.separator=;", "--reader-property", "headers.key.separator=="],
     "a=1;b=2|v1\n|v2\nc=|v3\n"),
    ("null-marker", 1, ["--reader-property", "parse.key=true", "--reader-property", "null.marker=-"],
     "-\tv\nk\t-\n-\t-\n"),
    ("ignore-error", 1, ["--reader-property", "parse.key=true", "--reader-property", "ignore.error=true"],
     "k\tv\nnosep\n"),
    ("ignore-error-headers", 1, ["--reader-property", "parse.headers=true", "--reader-property", "ignore.error=true"],
     "h1\tv\nno delimiter\n"),
    ("missing-key-separator", 1, ["--reader-property", "parse.key=true"], "k1\tv1\nbad line\nk3\tv3\n"),
    ("missing-headers-delimiter", 1, ["--reader-property", "parse.headers=true"], "h:1\tv\nbad\n"),
    ("missing-header-key-separator", 1, ["--reader-property", "parse.headers=true"], "h1\tv\n"),
    ("header-key-null", 1, ["--reader-property", "parse.headers=true", "--reader-property", "null.marker=h"],
     "h:1\tv\n"),
    ("separators-equal", 1, ["--reader-property", "headers.delimiter=,"], "x\n"),
    ("null-marker-equal", 1, ["--reader-property", "null.marker=\t"], "x\n"),
    ("property-and-reader-property", 1, ["--property", "parse.key=true", "--reader-property", "a=b"], "x\n"),
    ("acks-0", 3, ["--request-required-acks", "0", "--reader-property", "parse.key=true"], KEYED),
    ("acks-1", 3, ["--request-required-acks", "1", "--reader-property", "parse.key=true"], KEYED),
    ("acks-all", 1, ["--request-required-acks", "all"], "x\n"),
    ("acks-property", 1, ["--producer-property", "acks=0"], "x\n"),
    ("acks-command-property", 1, ["--command-property", "acks=1"], "x\n"),
    ("acks-bad", 1, ["--request-required-acks", "2"], "x\n"),
    ("property-conflict", 1, ["--command-property", "acks=1", "--producer-property", "acks=1"], "x\n"),
    ("config-conflict", 1, ["--command-config", "/dev/null", "--producer.config", "/dev/null"], "x\n"),
    ("deprecated-all", 1, ["--producer.config", "/dev/null", "--property", "parse.key=false",
                           "--producer-property", "linger.ms=5", "--max-partition-memory-bytes", "20000"], "x\n"),
    ("config-missing", 1, ["--command-config", "/nonexistent/producer.properties"], "x\n"),
    ("idempotence-acks", 1, ["--command-property", "enable.idempotence=true", "--command-property", "acks=1"], "x\n"),
    ("retries-bad", 1, ["--command-property", "retries=many"], "x\n"),
    # --sync waits linger.ms (--timeout, 1 s by default) for each record in Kafka's producer.
    ("sync", 3, ["--sync", "--timeout", "5", "--reader-property", "parse.key=true"], KEYED),
    ("sync-default-linger", 1, ["--sync"], "x\n"),
    ("gzip", 3, ["--compression-codec", "gzip", "--reader-property", "parse.key=true"], KEYED),
    ("snappy", 1, ["--compression-codec", "snappy"], COMPRESSIBLE),
    ("lz4", 1, ["--compression-codec", "lz4"], COMPRESSIBLE),
    ("zstd", 1, ["--compression-codec", "zstd"], COMPRESSIBLE),
    ("codec-none", 1, ["--compression-codec", "none"], COMPRESSIBLE),
    ("codec-default", 1, ["--compression-codec", "--timeout", "5"], COMPRESSIBLE),
    ("codec-bad", 1, ["--compression-codec", "brotli"], "x\n"),
    ("batch-size-bad", 1, ["--batch-size", "big"], "x\n"),
    ("line-reader-4x", 1, ["--line-reader", "org.apache.kafka.tools.LineMessageReader"], "x\n"),
    ("line-reader-bad", 1, ["--line-reader", "com.example.Reader"], "x\n"),
    ("unknown-flag", 1, ["--bogus"], "x\n"),
    ("topic-twice", 1, ["--topic", "other"], "x\n"),
]

# Deliberate differences (README): Kafka ignores unknown reader properties and producer
# configs (exit 0); pk refuses unknown reader properties, and unknown producer configs with
# --bootstrap-server (the bundled engine ignores them, as Kafka does). Kafka 4.x removed
# --broker-list, which pk keeps for older scripts.
UNKNOWN_READER_PROPERTY = (
    "Unknown line reader property 'colour' (known: file, headers.delimiter, headers.key.separator, "
    "headers.separator, ignore.error, key.separator, null.marker, parse.headers, parse.key, topic)")
PRODUCER_REFUSED = [  # (name, args, pk's first line with --bootstrap-server, on the engine)
    ("unknown-reader-property", ["--reader-property", "colour=blue"], UNKNOWN_READER_PROPERTY,
     UNKNOWN_READER_PROPERTY),
    ("unknown-config", ["--command-property", "colour=blue"], "Unknown client configuration: colour", ""),
]


def test_console_producer_against_kafka(kafka, kafka_tools, tmp_path):
    b = kafka.bootstrap
    names = {name: (f"{PREFIX}p-{name}-k", f"{PREFIX}p-{name}-p", n) for name, n, _, _ in PRODUCER_SCENARIOS}
    remote = {t: n for tk, tp, n in names.values() for t in (tk, tp)}
    local = {tp: n for _, tp, n in names.values()}
    create_remote(b, remote)
    data_dir = str(tmp_path / "data")
    create_engine(data_dir, local)

    results = {}
    first_matches = 0
    with ThreadPoolExecutor(4) as pool:  # pk's runs in parallel, while Kafka's run one by one
        pending = {}
        for name, n, args, text in PRODUCER_SCENARIOS:
            tk, tp, _ = names[name]
            pending[name] = (
                pool.submit(run_pk, "pk-console-producer", ["--bootstrap-server", b, "--topic", tp, *args], text,
                            replace={tp: "TOPIC"}),
                pool.submit(run_pk, "pk-console-producer", ["--topic", tp, *args], text, data_dir,
                            replace={tp: "TOPIC"}))
            results[name] = run_kafka(kafka_tools, "kafka-console-producer",
                                      ["--bootstrap-server", b, "--topic", tk, *args], text, {tk: "TOPIC"})
        for name, (rp, re_) in pending.items():
            results[name] = (results[name], rp.result(), re_.result())
            first_matches += results[name][0].key() == results[name][1].key()
    problems = []
    for name, (rk, rp, re_) in results.items():
        if rp.key() != rk.key():
            problems.append(f"{name}: kafka {rk.key()!r}\n   pk {rp.key()!r}")
        if re_.key(full_err=True) != rp.key(full_err=True):
            problems.append(f"{name}: pk {rp.key(True)!r}\n   engine {re_.key(True)!r}")

    # What each stored: the same records in the same partitions (murmur2), and codecs.
    stored = read_remote(b, remote)
    on_engine, engine_codecs = read_engine(data_dir, local)
    for name, n, args, _ in PRODUCER_SCENARIOS:
        tk, tp, _ = names[name]
        if stored[tp] != stored[tk]:
            problems.append(f"{name} records: kafka {stored[tk]!r}\n   pk {stored[tp]!r}")
        if on_engine[tp] != stored[tk]:
            problems.append(f"{name} records: kafka {stored[tk]!r}\n   engine {on_engine[tp]!r}")
        if any(stored[tk].values()):
            codecs = kafka_codecs(kafka.log_dir, tk, n)
            if not codecs == kafka_codecs(kafka.log_dir, tp, n) == engine_codecs[tp]:
                problems.append(f"{name} codecs: kafka {codecs} pk {kafka_codecs(kafka.log_dir, tp, n)} "
                                f"engine {engine_codecs[tp]}")
    assert not problems, "\n".join(problems)
    assert {name for name, *_ in PRODUCER_SCENARIOS} >= {"gzip", "snappy", "lz4", "zstd"}
    assert any(stored[names["keys"][0]][p] for p in (1, 2)), "keys spread over partitions"

    # Deliberate differences, asserted as documented.
    t = names["plain"][0]
    for name, args, pk_line, engine_line in PRODUCER_REFUSED:
        rk = run_kafka(kafka_tools, "kafka-console-producer", ["--bootstrap-server", b, "--topic", t, *args], "x\n")
        rp = run_pk("pk-console-producer", ["--bootstrap-server", b, "--topic", t, *args], "x\n")
        re_ = run_pk("pk-console-producer", ["--topic", t, *args], "x\n", data_dir)
        assert (rk.rc, rk.out, rk.err) == (0, "", ""), name
        assert (rp.rc, rp.out, rp.first) == (1, "", pk_line), name
        assert re_.key() == (1 if engine_line else 0, "", engine_line), name
    rk = run_kafka(kafka_tools, "kafka-console-producer", ["--broker-list", b, "--topic", t], "x\n")
    assert rk.key() == (1, "", "broker-list is not a recognized option")
    assert run_pk("pk-console-producer", ["--broker-list", b, "--topic", t], "x\n").key() == (0, "", "")
    print(f"producer: {len(PRODUCER_SCENARIOS)} scenarios, {first_matches} equal to Kafka "
          "(status, stdout, stderr line 1)")


# --------------------------------------------------------------------------- the consumer
MAIN_INPUT = ("h1:v1,h2:v2\tk1\tval1\nh1:x\tk2\tval2\nNUL\tk3\tNUL\nh3:NUL\tNUL\tval4\n"
              "h1:a\tk5\tabcdefgh\nh2:b\tk6\tval6\n")
MULTI_INPUT = "".join(f"key{i}\tm{i}\n" for i in range(12))
HEADER_ARGS = ["--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
               "--reader-property", "null.marker=NUL"]
KEY_ARGS = ["--reader-property", "parse.key=true"]

FP = "--formatter-property"

LONG = "org.apache.kafka.common.serialization.LongDeserializer"


def consumer_scenarios(main: str, multi: str, formatter_config: str) -> list[tuple[str, list[str]]]:
    """(name, args): each ends by itself (--max-messages, --timeout-ms, or an error)."""
    beginning = ["--topic", main, "--from-beginning", "--max-messages", "6"]
    p0 = ["--topic", main, "--partition", "0"]
    return [
        ("from-beginning", beginning),
        ("print-key", [*beginning, FP, "print.key=true"]),
        ("property-deprecated", [*beginning, "--property", "print.key=true"]),
        ("property-conflict", [*beginning, "--property", "print.key=true", FP, "print.key=true"]),
        ("all-fields", [*beginning, FP, "print.timestamp=true", FP, "print.partition=true", FP, "print.offset=true",
                        FP, "print.headers=true", FP, "print.key=true", FP, "print.epoch=true",
                        FP, "print.delivery=true"]),
        ("separators", [*beginning, FP, "print.key=true", FP, "print.headers=true", FP, "key.separator=|",
                        FP, "line.separator=;", FP, "headers.separator=#", FP, "null.literal=NIL"]),
        ("no-value", [*beginning, FP, "print.value=false", FP, "print.offset=true"]),
        ("nothing", [*beginning, FP, "print.value=false"]),
        ("timestamp-only", [*beginning, FP, "print.timestamp=true", FP, "print.value=false"]),
        ("partition-offset", [*p0, "--offset", "2", "--max-messages", "2", FP, "print.offset=true"]),
        ("partition-earliest", [*p0, "--offset", "earliest", "--max-messages", "3"]),
        ("partition-from-beginning", [*p0, "--from-beginning", "--max-messages", "1"]),
        ("partition-latest-timeout", [*p0, "--offset", "latest", "--timeout-ms", "300"]),
        ("partition-default-timeout", [*p0, "--timeout-ms", "300"]),
        ("timeout", ["--topic", main, "--from-beginning", "--timeout-ms", "1500"]),
        ("max-messages-0", [*beginning[:-1], "0"]),
        ("deserializer", [*p0, "--offset", "4", "--max-messages", "1", "--value-deserializer", LONG]),
        ("deserializer-error", [*p0, "--offset", "0", "--max-messages", "3", "--value-deserializer", LONG]),
        ("skip-on-error", [*p0, "--offset", "0", "--max-messages", "6", "--value-deserializer", LONG,
                           "--skip-message-on-error"]),
        ("deserializer-unknown", [*beginning, "--key-deserializer", "com.example.Nope", FP, "print.key=true"]),
        ("deserializer-property", [*beginning, FP, "value.deserializer=" + LONG, "--skip-message-on-error"]),
        ("noop-formatter", [*beginning, "--formatter", "org.apache.kafka.tools.consumer.NoOpMessageFormatter"]),
        ("formatter-unknown", [*beginning, "--formatter", "com.example.Formatter"]),
        ("formatter-3x-name", [*beginning, "--formatter", "kafka.tools.DefaultMessageFormatter"]),
        ("group-protocol-consumer", [*beginning, "--command-property", "group.protocol=consumer"]),
        ("group-protocol-classic", [*beginning, "--command-property", "group.protocol=CLASSIC"]),
        ("consumer-property-deprecated", [*p0, "--offset", "0", "--max-messages", "1",
                                          "--consumer-property", "client.id=x", "--consumer.config", "/dev/null"]),
        ("command-property-conflict", [*beginning, "--consumer-property", "a=b", "--command-property", "a=b"]),
        ("command-config-conflict", [*beginning, "--consumer.config", "/dev/null", "--command-config", "/dev/null"]),
        ("command-config-missing", [*beginning, "--command-config", "/nonexistent/consumer.properties"]),
        ("formatter-config-missing", [*beginning, "--formatter-config", "/nonexistent/formatter.properties"]),
        ("formatter-config", [*beginning, "--formatter-config", formatter_config, FP, "print.offset=true"]),
        ("isolation-committed", [*beginning, "--isolation-level", "read_committed"]),
        ("include", ["--include", PREFIX + "c-mul.*", "--from-beginning",
                     "--max-messages", "12", FP, "print.key=true", FP, "print.partition=true"]),
        ("multi-partition", ["--topic", multi, "--partition", "2", "--offset", "0", "--timeout-ms", "500",
                             FP, "print.key=true"]),
        # errors
        ("no-topic", ["--from-beginning"]),
        ("topic-and-include", ["--topic", main, "--include", "x"]),
        ("partition-without-topic", ["--include", "x", "--partition", "0"]),
        ("offset-without-partition", ["--topic", main, "--offset", "0"]),
        ("offset-and-from-beginning", [*p0, "--offset", "0", "--from-beginning"]),
        ("offset-bad", [*p0, "--offset", "first"]),
        ("offset-negative", [*p0, "--offset", "-5"]),
        ("group-and-partition", [*p0, "--group", PREFIX + "g-x"]),
        ("group-mismatch", ["--topic", main, "--group", "a", "--command-property", "group.id=b"]),
        ("from-beginning-reset-latest", [*beginning, "--command-property", "auto.offset.reset=latest"]),
        ("partition-not-a-number", ["--topic", main, "--partition", "zero"]),
        ("timeout-not-a-number", ["--topic", main, "--timeout-ms", "soon"]),
        ("unknown-flag", ["--topic", main, "--bogus"]),
        ("missing-argument", ["--topic", main, "--max-messages"]),
    ]


def _multiset(o: Out) -> Out:
    """Records from several partitions come in no fixed order: compare them sorted."""
    return Out(o.rc, "\n".join(sorted(o.out.splitlines())), o.err)


def _compare_err(o: Out) -> bool:
    """Compare all of stderr where Kafka succeeds and prints no stack trace (after a usage
    error Kafka prints its help table, pk one line)."""
    return o.rc == 0 and "\n\tat " not in o.err


def _times(o: Out) -> Out:
    """The engine's records were stored at other times than the broker's."""
    return Out(o.rc, re.sub(r"CreateTime:\d+", "CreateTime:<t>", o.out), o.err)


def check_consumer(name: str, rk: Out, rp: Out, re_: Out, default_run: Out) -> None:
    """Kafka (rk) against pk on the broker (rp), and pk on the broker against pk on the engine."""
    if name == "formatter-3x-name":
        # Deliberate: pk still takes Kafka 3.x's formatter class names (4.x refuses them).
        assert rk.key() == (1, "", "kafka.tools.DefaultMessageFormatter")
        assert rp.key() == default_run.key()
    elif name == "deserializer-error":
        # Deliberate: after the count, pk's error is one line (Kafka logs it, then the exception
        # and its stack trace).
        assert rp.key() == rk.key()
        assert rk.err.split("\n")[1:3] == [
            "[TIME] ERROR Unknown error when running consumer:  (org.apache.kafka.tools.consumer.ConsoleConsumer)",
            "org.apache.kafka.common.errors.SerializationException: Size of data received by LongDeserializer is not 8"]
        assert rp.err.split("\n")[1:] == [
            "Unknown error when running consumer: Size of data received by LongDeserializer is not 8", ""]
    else:
        assert rp.key(_compare_err(rk)) == rk.key(_compare_err(rk)), "pk != kafka"
    assert _times(re_).key(True) == _times(rp).key(True), "engine != pk"


def test_console_consumer_against_kafka(kafka, kafka_tools, tmp_path):
    b = kafka.bootstrap
    main, multi = PREFIX + "c-main", PREFIX + "c-multi"
    topics = {main: 1, multi: 3}
    create_remote(b, topics)
    data_dir = str(tmp_path / "data")
    create_engine(data_dir, topics)
    for topic, args, text in ((main, HEADER_ARGS, MAIN_INPUT), (multi, KEY_ARGS, MULTI_INPUT)):
        r = run_kafka(kafka_tools, "kafka-console-producer", ["--bootstrap-server", b, "--topic", topic, *args], text)
        assert (r.rc, r.err) == (0, ""), r.err
        r = run_pk("pk-console-producer", ["--topic", topic, *args], text, data_dir)
        assert (r.rc, r.out, r.err) == (0, "", ""), r.err

    formatter_config = tmp_path / "formatter.properties"
    formatter_config.write_text("print.key=true\nkey.separator=\\u0020=>\\u0020\nprint.offset=false\n")
    scenarios = consumer_scenarios(main, multi, str(formatter_config))
    first_matches = 0
    problems = []
    runs = {}
    with ThreadPoolExecutor(4) as pool:  # pk's runs in parallel, while Kafka's run one by one
        pending = [(name, pool.submit(run_pk, "pk-console-consumer", ["--bootstrap-server", b, *args]),
                    pool.submit(run_pk, "pk-console-consumer", args, data_dir=data_dir),
                    run_kafka(kafka_tools, "kafka-console-consumer", ["--bootstrap-server", b, *args]))
                   for name, args in scenarios]
    for name, rp, re_, rk in pending:
        rp, re_ = rp.result(), re_.result()
        if name in ("include", "timeout"):
            rk, rp, re_ = _multiset(rk), _multiset(rp), _multiset(re_)
        runs[name] = rk
        first_matches += rk.key() == rp.key()
        try:
            check_consumer(name, rk, rp, re_, runs["from-beginning"])
        except AssertionError as exc:
            problems.append(f"{name}: {str(exc).splitlines()[0]}\n  kafka  {rk.key(True)!r:.600}\n"
                            f"  pk     {rp.key(True)!r:.600}\n  engine {re_.key(True)!r:.600}")

    # The KIP-848 note is stderr's first line whenever the consumer subscribes with the
    # classic group protocol (not with --partition, nor with group.protocol=consumer).
    assert runs["from-beginning"].first == KIP_848
    assert runs["group-protocol-classic"].first == KIP_848
    assert runs["group-protocol-consumer"].first == "Processed a total of 6 messages"
    assert runs["partition-earliest"].first == "Processed a total of 3 messages"
    # --timeout-ms: Kafka logs the TimeoutException that ends the run, exit 0.
    assert runs["partition-latest-timeout"].key(True) == (0, "", (
        "[TIME] ERROR Error processing message, terminating consumer process:  "
        "(org.apache.kafka.tools.consumer.ConsoleConsumer)\n"
        "org.apache.kafka.common.errors.TimeoutException\nProcessed a total of 0 messages\n"))

    # Deliberate differences (README), asserted as documented: pk on the broker and on the engine.
    timeout_log = ("[TIME] ERROR Error processing message, terminating consumer process:  "
                   "(org.apache.kafka.tools.consumer.ConsoleConsumer)")
    differences = [
        # An --offset past the end, or a partition that does not exist: Kafka resets or waits
        # until --timeout-ms; pk fails at once.
        (["--topic", main, "--partition", "0", "--offset", "100", "--timeout-ms", "300"], (0, "", timeout_log),
         (1, "", "Processed a total of 0 messages\nUnknown error when running consumer: Fetch position 100 is out of "
                 f"range for partition {main}-0 (log start offset 0, log end offset 6)\n")),
        (["--topic", main, "--partition", "3", "--offset", "0", "--timeout-ms", "300"], (0, "", timeout_log),
         (1, "", "Processed a total of 0 messages\nUnknown error when running consumer: This server does not host "
                 f"this topic-partition: {main}-3\n")),
        # --max-messages is read before consuming (Kafka: after starting, then an uncaught error).
        (["--topic", main, "--max-messages", "many"], (1, "", KIP_848),
         (1, "", "Cannot parse argument 'many' of option max-messages\n")),
        # Kafka 3.x's --whitelist, removed in 4.0, still works in pk.
        (["--whitelist", main, "--from-beginning", "--max-messages", "1"],
         (1, "", "whitelist is not a recognized option"),
         (0, "val1\n", KIP_848 + "\nProcessed a total of 1 messages\n")),
    ]
    # A configuration the consumer refuses: pk prints the ConfigException's message alone (Kafka
    # logs "Unknown error when running consumer:", then the exception and its stack trace).
    unknown_error = "[TIME] ERROR Unknown error when running consumer:  (org.apache.kafka.tools.consumer.ConsoleConsumer)"
    differences += [
        (["--topic", main, "--from-beginning", "--isolation-level", "dirty"], (1, "", unknown_error),
         (1, "", "Invalid value dirty for configuration isolation.level: String must be one of: read_committed, "
                 "read_uncommitted\n")),
        (["--topic", main, "--from-beginning", "--command-property", "max.poll.records=x"], (1, "", unknown_error),
         (1, "", "Invalid value x for configuration max.poll.records: Not a number of type INT\n")),
    ]
    for args, kafka_key, pk_key in differences:
        assert run_kafka(kafka_tools, "kafka-console-consumer", ["--bootstrap-server", b, *args]).key() == kafka_key
        assert run_pk("pk-console-consumer", ["--bootstrap-server", b, *args]).key(True) == pk_key, args
        assert run_pk("pk-console-consumer", args, data_dir=data_dir).key(True) == pk_key, args
    # Unknown consumer configs: Kafka ignores them, pk refuses them with --bootstrap-server.
    args = ["--topic", main, "--from-beginning", "--max-messages", "1", "--command-property", "colour=blue"]
    rk = run_kafka(kafka_tools, "kafka-console-consumer", ["--bootstrap-server", b, *args])
    assert rk.key() == (0, "val1\n", KIP_848)
    assert run_pk("pk-console-consumer", ["--bootstrap-server", b, *args]).key(True) == (
        1, "", "Unknown client configuration: colour\n")
    assert run_pk("pk-console-consumer", args, data_dir=data_dir).key() == rk.key()

    # --enable-systest-events: Kafka prints shutdown_complete from a shutdown hook, which runs
    # only when its JVM exits: a JVM of its own.
    args = ["--topic", main, "--partition", "0", "--offset", "0", "--max-messages", "1", "--enable-systest-events"]
    rk = kafka_tools.run_process("kafka-console-consumer", "--bootstrap-server", b, *args)
    rk = Out(rk.returncode, rk.out, rk.err)
    assert rk.key(True) == (0, "val1\nshutdown_complete\n", "Processed a total of 1 messages\n")
    for run in (run_pk("pk-console-consumer", ["--bootstrap-server", b, *args]),
                run_pk("pk-console-consumer", args, data_dir=data_dir)):
        assert run.key(True) == rk.key(True)

    # A group resumes where its previous run stopped: Kafka's, pk's and the engine's group each.
    group_runs = {}
    for backend in ("kafka", "pk", "engine"):
        group_runs[backend] = []
        for extra in (["--from-beginning"], [], ["--timeout-ms", "500"]):
            args = ["--topic", main, "--group", f"{PREFIX}g-{backend}", "--max-messages", "2",
                    FP, "print.offset=true", *extra]
            if backend == "kafka":
                out = run_kafka(kafka_tools, "kafka-console-consumer", ["--bootstrap-server", b, *args])
            elif backend == "pk":
                out = run_pk("pk-console-consumer", ["--bootstrap-server", b, *args])
            else:
                out = run_pk("pk-console-consumer", args, data_dir=data_dir)
            group_runs[backend].append(out.key(True))
    assert [out for _, out, _ in group_runs["kafka"]] == [
        "Offset:0\tval1\nOffset:1\tval2\n", "Offset:2\tnull\nOffset:3\tval4\n", "Offset:4\tabcdefgh\nOffset:5\tval6\n"]
    for backend in ("pk", "engine"):
        if group_runs[backend] != group_runs["kafka"]:
            problems.append(f"group runs: kafka {group_runs['kafka']!r}\n  {backend} {group_runs[backend]!r}")
    assert not problems, "\n".join(problems)
    print(f"consumer: {len(scenarios)} scenarios, {first_matches} equal to Kafka (status, stdout, stderr line 1)")
