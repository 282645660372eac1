"""pk-transactions against Kafka 4.4's kafka-transactions (the oracle), each on the session's
Kafka 4.4 broker and on a pk-server-start, with one open transaction on each (confluent-kafka's
transactional producer).

Normalised: the cells that depend on the moment or on other tests (producer ids, timestamps,
durations) and so the column widths (tables are compared cell by cell); a parse error's text
is compared without Kafka's usage lines and line wrapping. Left out: describe-producers of an
unknown topic (Kafka's admin client retries until its 60 s timeout; pk answers at once)."""

from __future__ import annotations

import subprocess

from conftest import tool_path

TOPIC = "otx-t"


def _pk(*args):
    proc = subprocess.run([tool_path("pk-transactions"), *args], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _cells(out: str, volatile: set[str]) -> list[list[str]]:
    lines = [line.split("\t") for line in out.splitlines()]
    if not lines:
        return []
    header = [c.strip() for c in lines[0]]
    return [header] + [["<v>" if header[i] in volatile else c.strip() for i, c in enumerate(row)] for row in lines[1:]]


VOLATILE = {"ProducerId", "LastTimestamp", "CurrentTransactionStartTimeMs", "TransactionDurationMs"}


def test_transactions_match(kafka, kafka_tools, pk_server):
    from confluent_kafka import Producer

    producers = []
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists", "--topic",
                        TOPIC, "--partitions", "2")
        assert r.returncode == 0, r.err
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "otx-1"})
        p.init_transactions()
        p.begin_transaction()
        p.produce(TOPIC, b"v", partition=0)
        p.flush()
        producers.append(p)
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        base = ["--bootstrap-server", bootstrap]
        for args in (["list", "--transactional-id-pattern", "otx-.*"],
                     ["list", "--transactional-id-pattern", "otx-.*", "--duration-filter", "0"],
                     ["list", "--transactional-id-pattern", "none-.*"],
                     ["describe", "--transactional-id", "otx-1"],
                     ["describe", "--transactional-id", "otx-none"],
                     ["describe-producers", "--topic", TOPIC, "--partition", "0"],
                     ["describe-producers", "--topic", TOPIC, "--partition", "1", "--broker-id", "0"],
                     ["find-hanging", "--broker-id", "0"],
                     ["find-hanging", "--topic", TOPIC, "--max-transaction-timeout", "0"],
                     ["find-hanging", "--topic", TOPIC, "--partition", "0"],
                     ["find-hanging"],
                     ["find-hanging", "--partition", "0", "--broker-id", "0"],
                     ["abort", "--topic", TOPIC, "--partition", "0"],
                     ["abort", "--topic", TOPIC, "--partition", "0", "--producer-id", "5"],
                     ["abort", "--topic", TOPIC, "--partition", "0", "--start-offset", "7"]):
            k = kafka_tools("kafka-transactions", *base, *args)
            rc, out, err = _pk(*base, *args)
            assert (rc, _cells(out, VOLATILE), err) == (k.returncode, _cells(k.out, VOLATILE), k.err), (bootstrap, args)
    # an abort succeeds once: pk's tool aborts on Kafka, Kafka's tool on pk-server-start
    abort = ["abort", "--topic", TOPIC, "--partition", "0", "--start-offset", "0"]
    assert _pk("--bootstrap-server", kafka.bootstrap, *abort) == (0, "", "")
    k = kafka_tools("kafka-transactions", "--bootstrap-server", pk_server.bootstrap, *abort)
    assert (k.returncode, k.out, k.err) == (0, "", "")
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        args = ["--bootstrap-server", bootstrap, "describe-producers", "--topic", TOPIC, "--partition", "0"]
        k = kafka_tools("kafka-transactions", *args)
        rc, out, err = _pk(*args)
        assert (rc, _cells(out, VOLATILE), err) == (k.returncode, _cells(k.out, VOLATILE), k.err), bootstrap
        assert _cells(out, VOLATILE)[1][5] == "None"
    for p in producers:
        p.abort_transaction()
    for args in (["list"], ["--bootstrap-server", kafka.bootstrap], ["--bootstrap-server", kafka.bootstrap, "bogus"],
                 ["--bootstrap-server", kafka.bootstrap, "describe"],
                 ["--bootstrap-server", kafka.bootstrap, "forceTerminateTransaction"],
                 ["--bootstrap-server", kafka.bootstrap, "list", "--bogus"],
                 ["--bootstrap-server", kafka.bootstrap, "list", "--duration-filter", "x"],
                 ["--bootstrap-server", kafka.bootstrap, "describe-producers", "--topic", "t", "--partition", "y"]):
        k = kafka_tools("kafka-transactions", *args)
        rc, out, err = _pk(*args)
        kafka_error = " ".join(" ".join(line.split()) for line in k.err.splitlines()
                               if not line.startswith(("usage:", " ")))
        assert (rc, out, " ".join(err.split())) == (k.returncode, k.out, kafka_error), args


def test_force_terminate_matches(kafka, kafka_tools, pk_server):
    """forceTerminateTransaction of an open transaction, of a terminated one and of an unknown
    id: Kafka's tool and pk's, each on both brokers (pk's on Kafka, Kafka's on pk-server-start
    too); the terminated ids then describe alike. (Not compared: the empty id, for which
    Kafka's admin client never completes.)"""
    from confluent_kafka import Producer

    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists", "--topic",
                        TOPIC, "--partitions", "2")
        assert r.returncode == 0, r.err
        for tool in ("k", "p"):
            p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"otx-force-{tool}"})
            p.init_transactions()
            p.begin_transaction()
            p.produce(TOPIC, b"v", partition=1)
            p.flush()
        described = {}
        for tool in ("k", "p"):
            for tid in (f"otx-force-{tool}", f"otx-force-{tool}", f"otx-fresh-{tool}"):
                args = ["--bootstrap-server", bootstrap, "forceTerminateTransaction", "--transactionalId", tid]
                if tool == "k":
                    k = kafka_tools("kafka-transactions", *args)
                    result = (k.returncode, k.out, k.err.splitlines()[0] if k.err else "")
                else:
                    rc, out, err = _pk(*args)
                    result = (rc, out, err.rstrip("\n"))
                assert result == (0, "", ""), (bootstrap, tool, tid)
            for tid in (f"otx-force-{tool}", f"otx-fresh-{tool}"):
                rc, out, err = _pk("--bootstrap-server", bootstrap, "describe", "--transactional-id", tid)
                described[tool, tid[:-2]] = [row[3:] for row in _cells(out, VOLATILE)[1:]]
        # the abort bumped the epoch, each InitProducerId once more: 0 -> 2 -> 3
        assert described["k", "otx-force"] == described["p", "otx-force"] == [
            ["3", "Empty", "30000", "<v>", "<v>", "", ""]], bootstrap
        assert described["k", "otx-fresh"] == described["p", "otx-fresh"] == [
            ["0", "Empty", "30000", "<v>", "<v>", "", ""]], bootstrap
