"""pk-topics against Apache Kafka 4.4's own kafka-topics, on the same real Kafka 4.4 broker (the
session's `kafka` fixture) and on pk's bundled engine.

Every scenario is run through `kafka-topics --bootstrap-server <kafka>` and `pk-topics
--bootstrap-server <kafka>`, and again through `pk-topics` on a fresh data directory: stdout,
stderr and the exit status must be the same, after normalising only the TopicIds (and, for
scenarios that create or change topics, the topic names: each tool works on its own topics on
the shared broker). Scenarios that only read describe Kafka's topics with both tools, so that
several topics come out in the same (Java HashMap) order.

The differences that stay are the project's rules, asserted exactly:
- an action error is Kafka's `Error while executing topic command : ...` line, which Kafka prints
  on stdout (plus a logged stack trace on stderr) and pk prints on stderr, exit status 1 both;
- a usage error is Kafka's first stderr line (Kafka adds its help table), exit status 1 both;
- on the bundled engine `--alter --config` / `--delete-config` change topic configs (pk's own
  extension: the engine has no kafka-configs), where Kafka refuses or ignores them, and
  segment.bytes may be below Kafka 4.4's 1 MiB minimum.
"""

from __future__ import annotations

import re

import pytest

from conftest import Runner
from kafka_oracle import normalise

ERR = "Error while executing topic command : "
K, P = "ott-k-", "ott-p-"  # Kafka's and pk's topics on the shared broker (ott: oracle topics test)

# (kind, args): "w" creates or changes topics, each tool on its own ({T} is its prefix); "r"
# only reads: both tools read Kafka's topics. "k" (remote only) and "e" (engine only).
SCENARIOS = [
    ("w", ["--create", "--topic", "{T}a", "--partitions", "3", "--replication-factor", "1"]),
    ("w", ["--create", "--topic", "{T}b_c.d"]),
    ("w", ["--create", "--topic", "{T}cfg", "--partitions", "2", "--config", "retention.ms=1000",
           "--config", "cleanup.policy=compact", "--config", "min.insync.replicas=1"]),
    ("w", ["--create", "--topic", "{T}ra", "--replica-assignment", "0,0,0"]),
    ("w", ["--create", "--topic", "{T}a", "--if-not-exists"]),
    ("w", ["--create", "--topic", "{T}a"]),
    ("r", ["--list", "--topic", "{T}.*"]),
    ("r", ["--list", "--topic", "{T}.*", "--exclude-internal"]),
    ("r", ["--list", "--topic", "{T}zzz"]),
    ("w", ["--describe", "--topic", "{T}a"]),
    ("w", ["--describe", "--topic", "{T}cfg"]),
    ("w", ["--describe", "--topic", "{T}ra"]),
    ("r", ["--describe", "--topic", "{T}.*"]),
    ("r", ["--describe", "--topic", "{T}a,{T}cfg"]),
    ("r", ["--describe", "--topic", "{T}.*", "--topics-with-overrides"]),
    ("r", ["--describe", "--topic", "{T}.*", "--unavailable-partitions"]),
    ("r", ["--describe", "--topic", "{T}.*", "--under-replicated-partitions"]),
    ("r", ["--describe", "--topic", "{T}.*", "--under-min-isr-partitions"]),
    ("r", ["--describe", "--topic", "{T}.*", "--at-min-isr-partitions"]),
    ("r", ["--describe", "--topic", "{T}.*", "--exclude-internal"]),
    ("r", ["--describe", "--topic", "{T}a", "--partition-size-limit-per-response", "1"]),
    ("r", ["--describe", "--topic", "{T}a", "--partition-size-limit-per-response", "abc"]),
    ("r", ["--describe", "--topic", "{T}nope"]),
    ("r", ["--describe", "--topic", "{T}nope", "--if-exists"]),
    ("r", ["--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ"]),
    ("r", ["--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ=="]),
    ("r", ["--describe", "--topic-id", "notanid"]),
    ("r", ["--describe", "--topic-id", "not!anid"]),
    ("r", ["--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAA"]),
    ("r", ["--describe", "--topic", "a("]),
    ("w", ["--alter", "--topic", "{T}a", "--partitions", "5"]),
    ("w", ["--alter", "--topic", "{T}a", "--partitions", "2"]),
    ("w", ["--alter", "--topic", "{T}a", "--partitions", "5"]),
    ("w", ["--alter", "--topic", "{T}a", "--partitions", "abc"]),
    ("w", ["--alter", "--topic", "{T}a", "--config", "retention.ms=5"]),
    ("w", ["--alter", "--topic", "{T}a", "--delete-config", "retention.ms"]),
    ("w", ["--alter", "--topic", "{T}a"]),
    ("w", ["--alter", "--topic", "{T}nope", "--partitions", "4"]),
    ("w", ["--alter", "--topic", "{T}nope", "--partitions", "4", "--if-exists"]),
    ("w", ["--alter", "--topic", "{T}ra", "--partitions", "2", "--replica-assignment", "0,0"]),
    ("w", ["--alter", "--topic", "{T}ra", "--partitions", "4", "--replica-assignment", "0,0,0,0"]),
    ("w", ["--describe", "--topic", "{T}a"]),
    ("w", ["--describe", "--topic", "{T}ra"]),
    ("r", ["--list", "--delete-config", "x", "--topic", "{T}a"]),
    ("w", ["--delete", "--topic", "{T}b_c.d"]),
    ("w", ["--delete", "--topic", "{T}nope"]),
    ("w", ["--delete", "--topic", "{T}nope", "--if-exists"]),
    ("w", ["--delete", "--topic", "{T}r.*"]),
    ("w", ["--list", "--topic", "{T}.*"]),
    ("k", []),
    ("r", ["--bogus"]),
    ("r", ["--create"]),
    ("r", ["--topic", "{T}a"]),
    ("r", ["--list", "--describe"]),
    ("r", ["--describe", "--if-exists"]),
    ("r", ["--list", "--partitions", "3"]),
    ("r", ["--describe", "--topic", "{T}a", "--under-replicated-partitions", "--unavailable-partitions"]),
    ("r", ["--describe", "--topic", "{T}a", "--under-replicated-partitions", "--topics-with-overrides"]),
    ("w", ["--create", "--topic", "{T}y", "--if-exists"]),
    ("w", ["--create", "--topic", "{T}x", "--partitions", "0"]),
    ("w", ["--create", "--topic", "{T}x", "--partitions", "-1"]),
    ("w", ["--create", "--topic", "{T}x", "--partitions", "abc"]),
    ("w", ["--create", "--topic", "{T}x", "--partitions", "99999999999"]),
    ("w", ["--create", "--topic", "{T}x", "--replication-factor", "abc"]),
    ("w", ["--create", "--topic", "{T}x", "--replication-factor", "3"]),
    ("w", ["--create", "--topic", "{T}x", "--replication-factor", "0"]),
    ("w", ["--create", "--topic", "bad name!"]),
    ("w", ["--create", "--topic", "."]),
    ("w", ["--create", "--topic", "{T}" + "x" * 250]),
    ("w", ["--create", "--topic", "{T}x", "--config", "nope.nope=1"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "retention.ms=abc"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "cleanup.policy=nope"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "retention.ms"]),
    ("w", ["--create", "--topic", "{T}gz", "--config", "compression.gzip.level=5", "--config",
           "compression.zstd.level=-7", "--config", "internal.segment.bytes=2000000"]),
    ("w", ["--describe", "--topic", "{T}gz"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "compression.gzip.level=0"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "compression.lz4.level=18"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "remote.copy.lag.ms=-2"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "errors.deadletterqueue.group.enable=x"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "message.format.version=3.0"]),
    ("w", ["--create", "--topic", "{T}x", "--config", "message.downconversion.enable=true"]),
    ("w", ["--create", "--topic", "{T}small", "--config", "segment.bytes=1000"]),
    ("w", ["--create", "--topic", "{T}x", "--replica-assignment", "0,1"]),
    ("w", ["--create", "--topic", "{T}x", "--replica-assignment", "0:0"]),
    ("w", ["--create", "--topic", "{T}x", "--replica-assignment", "0", "--partitions", "2"]),
    ("r", ["--version"]),
]

# Where the bundled engine deliberately does more than Kafka: segments smaller than Kafka 4.4's
# 1 MiB minimum (Kafka's own tests use internal.segment.bytes for that).
ENGINE_SMALL_SEGMENTS = ("--create", "--topic", "{T}small", "--config", "segment.bytes=1000")
# ... and configs altered in place.
ENGINE_ALTERS_CONFIGS = {
    ("--alter", "--topic", "{T}a", "--config", "retention.ms=5"),
    ("--alter", "--topic", "{T}a", "--delete-config", "retention.ms"),
}


def _fill(args: list[str], prefix: str) -> list[str]:
    return [a.replace("{T}", prefix) for a in args]


def _text(text: str, prefix: str) -> str:
    # jopt-simple names the options of an "Option combination" refusal from a HashSet of
    # OptionSpecs (identity hash codes): their order changes from one JVM to the next. pk always
    # prints Kafka's option order, [[config], [bootstrap-server]].
    text = text.replace('"[[bootstrap-server], [config]]"', '"[[config], [bootstrap-server]]"')
    return normalise(text, replace={prefix: "{T}"})


def _check(args, kafka, mine, k_prefix: str, p_prefix: str) -> bool:
    """Kafka's run and pk's of one scenario are the same but for the project's rules (module
    docstring). Returns whether they were equal byte for byte (errors on stderr aside)."""
    k_out, k_err = _text(kafka.out, k_prefix), _text(kafka.err, k_prefix)
    p_out, p_err = _text(mine.out, p_prefix), _text(mine.err, p_prefix)
    where = f"{' '.join(args)}\nkafka: {kafka.returncode} {k_out!r} {k_err[:300]!r}\npk: {mine.returncode} {p_out!r} {p_err!r}"
    assert "Traceback" not in mine.err, where
    assert mine.returncode == kafka.returncode, where
    lines = k_out.splitlines(keepends=True)
    if kafka.returncode == 1 and lines and lines[-1].startswith(ERR):
        # Kafka: the error on stdout (after what it printed before it), a stack trace on stderr.
        assert p_out == "".join(lines[:-1]) and p_err == lines[-1].rstrip("\n") + "\n", where
        return True
    if kafka.returncode == 1:
        # A usage error: Kafka's first stderr line(s), then its help table; pk: those lines only
        # (the first may be 4.4's --delete-config warning).
        assert p_out == k_out == "", where
        n = len(p_err.splitlines())
        assert 1 <= n <= 2 and p_err == "".join(k_err.splitlines(keepends=True)[:n]), where
        return p_err == k_err
    assert (p_out, p_err) == (k_out, k_err), where
    return True


@pytest.fixture(scope="module")
def runs(kafka, kafka_tools, tmp_path_factory):
    """Each scenario through Kafka's tool (its topics: prefix K), then at once through pk-topics
    against the same broker (prefix P for the "w" scenarios): [(kafka's run, pk's run)]."""
    mine = Runner(str(tmp_path_factory.mktemp("unused")))
    out = []
    for kind, args in SCENARIOS:
        if kind == "e":
            out.append((None, None))
            continue
        kafka_run = kafka_tools("kafka-topics", "--bootstrap-server", kafka.bootstrap, *_fill(args, K))
        prefix = P if kind == "w" else K
        out.append((kafka_run, mine("pk-topics", "--bootstrap-server", kafka.bootstrap, *_fill(args, prefix))))
    return out


def test_pk_topics_against_kafka_prints_what_kafka_topics_prints(runs):
    for (kind, args), (kafka_run, mine) in zip(SCENARIOS, runs):
        if kind != "e":
            _check(args, kafka_run, mine, K, P if kind == "w" else K)


def test_bundled_engine_prints_what_kafka_prints(runs, tmp_path):
    """The same scenarios on a fresh data directory, with Kafka's topic names: a freshly
    formatted single-node Kafka 4.4 (min.insync.replicas as the cluster-wide default that 4.x
    records with eligible leader replicas on, so every topic lists it in Configs:)."""
    engine = Runner(str(tmp_path / "data"))
    for (kind, args), (kafka_run, _) in zip(SCENARIOS, runs):
        if kind == "k":
            continue
        mine = engine("pk-topics", *_fill(args, K))
        if tuple(args) == ENGINE_SMALL_SEGMENTS:
            assert kafka_run.out == (f"{ERR}Invalid value 1000 for configuration segment.bytes: Value must be at "
                                     "least 1048576\n")
            assert (mine.returncode, mine.out, mine.err) == (0, f"Created topic {K}small.\n", "")
            continue
        if tuple(args) in ENGINE_ALTERS_CONFIGS:
            # Kafka 4.4: --config refused, --delete-config ignored with a warning; the engine alters.
            assert kafka_run.returncode == 1 and mine.returncode == 0, (args, kafka_run.err, mine.err)
            assert mine.out == f"Updated config for topic {K}a.\n" and mine.err == ""
            continue
        _check(args, kafka_run, mine, K, K)


def test_refusals_and_warnings_of_the_bootstrap_server_mode(kafka, kafka_tools, pk):
    """The texts 4.4 gives for what only the ZooKeeper-era tool could do, as printed."""
    b = kafka.bootstrap
    for args in (["--alter", "--topic", K + "a", "--config", "retention.ms=5"],
                 ["--alter", "--topic", K + "a", "--delete-config", "retention.ms"],
                 ["--alter", "--topic", K + "a", "--config", "a=b", "--delete-config", "x"]):
        kafka_run = kafka_tools("kafka-topics", "--bootstrap-server", b, *args)
        mine = pk("pk-topics", "--bootstrap-server", b, *args)
        _check(args, kafka_run, mine, K, K)
    refusal = pk("pk-topics", "--bootstrap-server", b, "--alter", "--topic", K + "a", "--config", "retention.ms=5")
    assert refusal.returncode == 1 and refusal.err == ('Option combination "[[config], [bootstrap-server]]" can\'t be used with option '
                           '"[alter]" (To alter topic configurations, the kafka-configs tool can be used.)\n')


def test_describe_by_topic_id_and_the_offsets_topic(kafka, kafka_tools, pk, tmp_path):
    b = kafka.bootstrap
    name = K + "id"
    kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", name, "--partitions", "2")
    first = kafka_tools("kafka-topics", "--bootstrap-server", b, "--describe", "--topic", name).out
    topic_id = re.search(r"\tTopicId: (\S+)", first).group(1)
    for args in (["--describe", "--topic-id", topic_id], ["--describe", "--topic-id", topic_id, "--topic", name]):
        # By id Kafka's Admin describes with Metadata, which has no eligible leader replicas.
        assert pk("pk-topics", "--bootstrap-server", b, *args).out == \
            kafka_tools("kafka-topics", "--bootstrap-server", b, *args).out == \
            first.replace("\tElr: \tLastKnownElr: \n", "\tElr: N/A\tLastKnownElr: N/A\n")
    # __consumer_offsets, which Kafka creates with the first consumer group and the engine has
    # from the start: the same description (50 partitions, its configs in Kafka's order).
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": b, "group.id": K + "group", "enable.auto.commit": False})
    consumer.subscribe([name])
    for _ in range(40):
        consumer.poll(0.25)
        if pk("pk-topics", "--bootstrap-server", b, "--list", "--topic", "__consumer_offsets").out.strip():
            break
    consumer.close()
    args = ["--describe", "--topic", "__consumer_offsets"]
    kafka_run = kafka_tools("kafka-topics", "--bootstrap-server", b, *args)
    assert kafka_run.returncode == 0, kafka_run.err
    engine = Runner(str(tmp_path / "data"))
    assert normalise(pk("pk-topics", "--bootstrap-server", b, *args).out) == normalise(kafka_run.out) \
        == normalise(engine("pk-topics", *args).out)


def test_kafka_tool_against_pk_server_start(kafka_tools, broker, pk):
    """Kafka 4.4's kafka-topics against pk-server-start prints what pk-topics prints against it.
    pk-server-start serves DescribeTopicPartitions and topic ids, so Kafka prints the TopicId and
    empty eligible leader replicas there, as against a Kafka broker (config/server.properties'
    static settings appear in Configs:, as they would for a Kafka broker started with that file)."""
    b = broker.bootstrap
    for kind, args in (("w", ["--create", "--topic", "{T}a", "--partitions", "2", "--config", "retention.ms=1000",
                              "--config", "cleanup.policy=compact"]),
                       ("w", ["--create", "--topic", "{T}b"]),
                       ("r", ["--list"]),
                       ("r", ["--describe", "--topic", "ps-.*"]),
                       ("r", ["--describe", "--topic", "ps-.*", "--topics-with-overrides"]),
                       ("w", ["--alter", "--topic", "{T}b", "--partitions", "3"]),
                       ("w", ["--alter", "--topic", "{T}b", "--partitions", "2"]),
                       ("w", ["--describe", "--topic", "{T}b"]),
                       ("r", ["--describe", "--topic", "ps-.*", "--at-min-isr-partitions"]),
                       ("w", ["--describe", "--topic", "{T}nope"]),
                       ("w", ["--delete", "--topic", "{T}b"]),
                       ("r", ["--list"])):
        k_prefix, p_prefix = ("ps-k-", "ps-p-") if kind == "w" else ("", "")
        kafka_run = kafka_tools("kafka-topics", "--bootstrap-server", b, *_fill(args, k_prefix))
        _check(args, kafka_run, pk("pk-topics", "--bootstrap-server", b, *_fill(args, p_prefix)), k_prefix, p_prefix)
    described = kafka_tools("kafka-topics", "--bootstrap-server", b, "--describe", "--topic", "ps-k-a").out
    assert "\tTopicId: " in described and "\tElr: \tLastKnownElr: \n" in described
