"""pk-console-consumer's --formatter classes on pk's own records: the offset commits, group
metadata and transaction states a pk-server-start wrote for real clients (confluent-kafka),
read through --bootstrap-server and from the bundled engine (the server's data directory),
which must print the same bytes. tests/test_oracle_formatters.py compares them with Kafka's."""

from __future__ import annotations

import json
import re
import time

import pytest

from pk.engine import consumer_offsets, transaction_log

from conftest import BrokerProcess

FORMATTERS = "org.apache.kafka.tools.consumer."
GROUP, TXN, TOPIC = "fmt-g", "fmt-tx", "fmt-t"


def records(text: str) -> list[dict]:
    """The JSON objects a coordinator formatter wrote one after another (no separator)."""
    decoder, out, pos = json.JSONDecoder(), [], 0
    while pos < len(text):
        obj, pos = decoder.raw_decode(text, pos)
        out.append(obj)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A pk-server-start where a consumer group committed offsets and a transactional
    producer committed one transaction and aborted another."""
    from confluent_kafka import Consumer, Producer

    data_dir = str(tmp_path_factory.mktemp("fmt") / "data")
    b = BrokerProcess(data_dir).start()
    try:
        p = Producer({"bootstrap.servers": b.bootstrap})
        p.produce(TOPIC, b"v1", key=b"k1")
        p.produce(TOPIC, b"v2", key=b"k2")
        p.flush(30)
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                      "enable.auto.commit": False})
        c.subscribe([TOPIC])
        seen, deadline = 0, time.monotonic() + 30
        while seen < 2 and time.monotonic() < deadline:
            m = c.poll(0.5)
            seen += m is not None and not m.error()
        c.commit(asynchronous=False)
        c.close()
        t = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": TXN})
        t.init_transactions(30)
        t.begin_transaction()
        t.produce(TOPIC, b"committed")
        t.commit_transaction(30)
        t.begin_transaction()
        t.produce(TOPIC, b"aborted")
        t.flush(30)  # (with nothing sent, librdkafka aborts without the coordinator)
        t.abort_transaction(30)
        yield b
    finally:
        b.stop()


def read(pk, server, formatter: str, topic: str, partition: int, *, remote: bool):
    """Every record of one partition through the formatter (--partition: no group of its own
    is written to __consumer_offsets while it reads)."""
    where = ["--bootstrap-server", server.bootstrap] if remote else []
    return pk("pk-console-consumer", *where, "--topic", topic, "--partition", str(partition), "--offset", "0",
              "--timeout-ms", "1500", "--formatter", formatter, env={"PK_DATA_DIR": server.data_dir})


def test_offsets_formatter(pk, server):
    partition = consumer_offsets.partition_for(GROUP, 50)
    remote = read(pk, server, FORMATTERS + "OffsetsMessageFormatter", "__consumer_offsets", partition, remote=True)
    local = read(pk, server, FORMATTERS + "OffsetsMessageFormatter", "__consumer_offsets", partition, remote=False)
    assert remote.returncode == 0, remote.err
    assert local.stdout == remote.stdout
    commits = [r for r in records(remote.out) if r["key"]["data"]["group"] == GROUP]
    assert commits, remote.out
    last = commits[-1]
    assert last["key"] == {"type": 1, "data": {"group": GROUP, "topic": TOPIC, "partition": 0}}
    assert last["value"]["data"]["offset"] == 2
    # Kafka's 3.x name for the same formatter
    old = read(pk, server, "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter",
               "__consumer_offsets", partition, remote=False)
    assert old.stdout == local.stdout


def test_group_metadata_formatter(pk, server):
    partition = consumer_offsets.partition_for(GROUP, 50)
    remote = read(pk, server, FORMATTERS + "GroupMetadataMessageFormatter", "__consumer_offsets", partition,
                  remote=True)
    local = read(pk, server, FORMATTERS + "GroupMetadataMessageFormatter", "__consumer_offsets", partition,
                 remote=False)
    assert remote.returncode == 0, remote.err
    assert local.stdout == remote.stdout
    groups = [r for r in records(remote.out) if r["key"]["data"] == {"group": GROUP}]
    assert {r["key"]["type"] for r in groups} == {2}
    joined = [r for r in groups if r["value"]["data"]["members"]]
    assert joined and joined[0]["value"]["data"]["protocolType"] == "consumer"
    member = joined[0]["value"]["data"]["members"][0]
    # the subscription stays bytes (base64), as Kafka's formatter prints it
    assert isinstance(member["subscription"], str) and not member["subscription"].startswith("{")
    assert all(set(r["key"]["data"]) == {"group"} for r in records(remote.out))  # no offset commits


def test_transaction_log_formatter(pk, server):
    partition = transaction_log.partition_for(TXN)
    for name in (FORMATTERS + "TransactionLogMessageFormatter",
                 "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter"):
        remote = read(pk, server, name, "__transaction_state", partition, remote=True)
        local = read(pk, server, name, "__transaction_state", partition, remote=False)
        assert remote.returncode == 0, remote.err
        assert local.stdout == remote.stdout
        states = [r["value"]["data"]["transactionStatus"] for r in records(remote.out)
                  if r["key"] == {"type": 0, "data": {"transactionalId": TXN}}]
        assert states[:4] == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
        assert states[-2:] == ["PrepareAbort", "CompleteAbort"], states


def test_logging_and_noop_formatters(pk, server):
    args = ["--topic", TOPIC, "--partition", "0", "--offset", "0", "--max-messages", "2",
            "--formatter-property", "print.key=true"]
    default = pk("pk-console-consumer", *args, env={"PK_DATA_DIR": server.data_dir})
    assert default.out == "k1\tv1\nk2\tv2\n", default.err
    for name in (FORMATTERS + "LoggingMessageFormatter", "kafka.tools.LoggingMessageFormatter"):
        for where in (["--bootstrap-server", server.bootstrap], []):
            r = pk("pk-console-consumer", *where, *args, "--formatter", name, env={"PK_DATA_DIR": server.data_dir})
            assert (r.returncode, r.out) == (0, default.out), r.err
    for name in (FORMATTERS + "NoOpMessageFormatter", "kafka.tools.NoOpMessageFormatter"):
        r = pk("pk-console-consumer", *args, "--formatter", name, env={"PK_DATA_DIR": server.data_dir})
        assert (r.returncode, r.out) == (0, ""), r.err
        assert "Processed a total of 2 messages" in r.err


# (key, value, what Kafka 4.4's OffsetsMessageFormatter does: None prints nothing, else the
# reason in "Could not read record at offset 0 due to: <reason>"); test_oracle_formatters
# checks these against Kafka's tool.
JUNK = {
    "short-key": (b"x", b"v", "Could not read version from key's buffer."),
    "unknown-type": (b"\x00\x63k", b"v", None),
    "bad-key": (b"\x00\x01k", b"v", "Could not read record with version 1 from key's buffer due to: null."),
    "bad-version": (b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x00", b"\x00\x09abc",
                    "Found an unknown record version 9 for 1 type"),
    "no-key": (None, b"v", None),
}


def produce_junk(bootstrap: str, prefix: str) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap})
    for name, (key, value, _) in JUNK.items():
        p.produce(prefix + name, value, key=key)
    p.flush(30)


def test_coordinator_formatter_on_other_records(pk, server):
    """Records that are no (good) coordinator records, as Kafka's formatter treats them."""
    produce_junk(server.bootstrap, "fmt-junk-")
    for name, (_, _, reason) in JUNK.items():
        for where in (["--bootstrap-server", server.bootstrap], []):
            r = pk("pk-console-consumer", *where, "--topic", "fmt-junk-" + name, "--partition", "0", "--offset", "0",
                   "--max-messages", "1", "--formatter", FORMATTERS + "OffsetsMessageFormatter",
                   env={"PK_DATA_DIR": server.data_dir})
            if reason is None:
                assert (r.returncode, r.out, r.err) == (0, "", "Processed a total of 1 messages\n"), name
            else:
                assert (r.returncode, r.out, r.err) == (1, "", "Processed a total of 1 messages\nUnknown error when "
                                                        f"running consumer: Could not read record at offset 0 due to: "
                                                        f"{reason}\n"), name
