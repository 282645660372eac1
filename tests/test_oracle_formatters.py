"""pk-console-consumer's --formatter classes against Kafka 4.4's console consumer, on the
session's real Kafka broker: __consumer_offsets and __transaction_state after a consumer group
committed offsets and a transactional producer committed and aborted, records that are no
coordinator records, and LoggingMessageFormatter on a plain topic. Both tools read the same
offsets of one partition (--partition: neither writes a group of its own meanwhile); stdout
and stderr must be byte-identical, except where README documents a difference."""

from __future__ import annotations

import time

from pk.engine import consumer_offsets, transaction_log

from test_console_formatters import JUNK, produce_junk
from test_oracle_console import run_kafka, run_pk

FORMATTERS = "org.apache.kafka.tools.consumer."
GROUP, TXN, TOPIC = "ot-fmt-g", "ot-fmt-tx", "ot-fmt-t"
# Kafka 3.x's names: Kafka 4.4 refuses them (its usage error), pk takes them for the same formatter.
OLD_NAMES = {
    "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter": "OffsetsMessageFormatter",
    "kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter": "GroupMetadataMessageFormatter",
    "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter": "TransactionLogMessageFormatter",
    "kafka.tools.LoggingMessageFormatter": "LoggingMessageFormatter",
}


def _activity(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer

    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(TOPIC, b"v1", key=b"k1")
    p.produce(TOPIC, b"v2")
    p.flush(30)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([TOPIC])
    seen, deadline = 0, time.monotonic() + 30
    while seen < 2 and time.monotonic() < deadline:
        m = c.poll(0.5)
        seen += m is not None and not m.error()
    c.commit(asynchronous=False)
    c.close()
    t = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN})
    t.init_transactions(30)
    t.begin_transaction()
    t.produce(TOPIC, b"committed")
    t.commit_transaction(30)
    t.begin_transaction()
    t.produce(TOPIC, b"aborted")
    t.flush(30)
    t.abort_transaction(30)


def _end_offset(bootstrap: str, topic: str, partition: int) -> int:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ot-fmt-reader", "log_level": 0})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1]
    finally:
        c.close()


def test_formatters_against_kafka(kafka, kafka_tools):
    b = kafka.bootstrap
    _activity(b)
    produce_junk(b, "ot-fmt-junk-")
    reads = {  # formatter -> (topic, partition)
        "OffsetsMessageFormatter": ("__consumer_offsets", consumer_offsets.partition_for(GROUP, 50)),
        "GroupMetadataMessageFormatter": ("__consumer_offsets", consumer_offsets.partition_for(GROUP, 50)),
        "TransactionLogMessageFormatter": ("__transaction_state", transaction_log.partition_for(TXN)),
        "LoggingMessageFormatter": (TOPIC, 0),
        "NoOpMessageFormatter": (TOPIC, 0),
        "DefaultMessageFormatter": (TOPIC, 0),
    }
    # every offset of the coordinators' partitions is a record; the topic's four records
    # (one aborted) come with two transaction markers
    ends = {name: _end_offset(b, *where) if where[0].startswith("__") else 4 for name, where in reads.items()}
    problems, outputs = [], {}
    for name, (topic, partition) in reads.items():
        args = ["--bootstrap-server", b, "--topic", topic, "--partition", str(partition), "--offset", "0",
                "--max-messages", str(ends[name]), "--formatter", FORMATTERS + name,
                "--formatter-property", "print.key=true"]
        rk, rp = run_kafka(kafka_tools, "kafka-console-consumer", args), run_pk("pk-console-consumer", args)
        outputs[name] = rp
        if rp.key(True) != rk.key(True):
            problems.append(f"{name}: kafka {rk.key(True)!r:.1500}\n   pk {rp.key(True)!r:.1500}")
    assert not problems, "\n".join(problems)
    # what was read is what the scenario wrote
    assert f'"group":"{GROUP}","topic":"{TOPIC}","partition":0}}}},"value":{{"version":' in outputs[
        "OffsetsMessageFormatter"].out
    assert f'{{"key":{{"type":2,"data":{{"group":"{GROUP}"}}}}' in outputs["GroupMetadataMessageFormatter"].out
    assert '"transactionStatus":"CompleteAbort"' in outputs["TransactionLogMessageFormatter"].out
    assert outputs["LoggingMessageFormatter"].out == outputs["DefaultMessageFormatter"].out == \
        "k1\tv1\nnull\tv2\nnull\tcommitted\nnull\taborted\n"

    for old, new in OLD_NAMES.items():  # deliberate (README): pk still takes Kafka 3.x's names
        topic, partition = reads[new]
        args = ["--bootstrap-server", b, "--topic", topic, "--partition", str(partition), "--offset", "0",
                "--max-messages", str(ends[new]), "--formatter", old, "--formatter-property", "print.key=true"]
        assert run_kafka(kafka_tools, "kafka-console-consumer", args).key() == (1, "", old)
        assert run_pk("pk-console-consumer", args).key(True) == outputs[new].key(True), old

    for name, (_, _, reason) in JUNK.items():
        args = ["--bootstrap-server", b, "--topic", "ot-fmt-junk-" + name, "--partition", "0", "--offset", "0",
                "--max-messages", "1", "--formatter", FORMATTERS + "OffsetsMessageFormatter"]
        rk, rp = run_kafka(kafka_tools, "kafka-console-consumer", args), run_pk("pk-console-consumer", args)
        if reason is None:
            assert rk.key(True) == rp.key(True) == (0, "", "Processed a total of 1 messages\n"), name
            continue
        # Kafka logs the error, then the exception and its stack trace; pk prints one line.
        error = f"Could not read record at offset 0 due to: {reason}"
        assert rk.err.split("\n")[:3] == [
            "Processed a total of 1 messages",
            "[TIME] ERROR Unknown error when running consumer:  (org.apache.kafka.tools.consumer.ConsoleConsumer)",
            f"java.lang.RuntimeException: {error}"], name
        assert rp.key(True) == (1, "", f"Processed a total of 1 messages\nUnknown error when running consumer: "
                                       f"{error}\n"), name
        assert rk.rc == 1, name
