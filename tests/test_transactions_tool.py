"""pk-transactions against a pk-server-start: list, describe, describe-producers, abort and
find-hanging on a real open transaction (confluent-kafka's transactional producer), and the
argparse4j-style refusals."""

from __future__ import annotations

import subprocess

import pytest

from conftest import BrokerProcess, tool_path

TOPIC = "ptx-t"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("ptx") / "data")).start()
    subprocess.run([tool_path("pk-topics"), "--bootstrap-server", b.bootstrap, "--create", "--topic", TOPIC,
                    "--partitions", "2"], check=True, capture_output=True, timeout=60)
    yield b
    b.stop()


def _pk(*args):
    proc = subprocess.run([tool_path("pk-transactions"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _rows(out: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("\t")[:-1]] for line in out.splitlines()]


def test_table_is_kafkas_pretty_print():
    from pk.commands.transactions import table

    assert table(["Ab", "C"], [["x", "long"], ["yyy", ""]]) == ["Ab \tC   \t", "x  \tlong\t", "yyy\t    \t"]


def test_open_transaction_seen_and_aborted(broker):
    from confluent_kafka import Producer

    b = ["--bootstrap-server", broker.bootstrap]
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "ptx-1"})
    producer.init_transactions()
    producer.begin_transaction()
    producer.produce(TOPIC, b"v", partition=1)
    producer.flush()
    rc, out, err = _pk(*b, "list", "--transactional-id-pattern", "ptx-.*")
    assert (rc, err) == (0, "")
    [header, row] = _rows(out)
    assert header == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
    assert row[0::3] == ["ptx-1", "Ongoing"] and row[1] == "0"
    pid = row[2]
    rc, out, err = _pk(*b, "describe", "--transactional-id", "ptx-1")
    [_, row] = _rows(out)
    assert row[:6] == ["0", "ptx-1", pid, "0", "Ongoing", "60000"] and row[8] == f"{TOPIC}-1"
    assert int(row[7]) >= 0 and int(row[6]) > 0
    rc, out, err = _pk(*b, "describe-producers", "--topic", TOPIC, "--partition", "1")
    [header, row] = _rows(out)
    assert header[0] == "ProducerId" and row[0] == pid and row[5] == "0"
    # still known to its coordinator with this partition: not hanging, however old
    rc, out, err = _pk(*b, "find-hanging", "--topic", TOPIC, "--max-transaction-timeout", "0")
    assert (rc, len(_rows(out)), err) == (0, 1, "")
    assert _pk(*b, "abort", "--topic", TOPIC, "--partition", "1", "--start-offset", "3") == (
        1, "", f"Could not find any open transactions starting at offset 3 on partition {TOPIC}-1\n")
    assert _pk(*b, "abort", "--topic", TOPIC, "--partition", "1", "--start-offset", "0") == (0, "", "")
    rc, out, err = _pk(*b, "describe-producers", "--topic", TOPIC, "--partition", "1")
    assert _rows(out)[1][5] == "None"
    producer.abort_transaction()


def test_unknown_transactional_id(broker):
    assert _pk("--bootstrap-server", broker.bootstrap, "describe", "--transactional-id", "ptx-none") == (
        1, "", "Failed to describe transaction state of transactional-id `ptx-none`: DescribeTransactions request "
               "for transactionalId `ptx-none` failed because the ID could not be found. Enable debug logging for "
               "additional detail.\n")


@pytest.mark.parametrize("args, err", [
    (["list"], "kafka-transactions.sh: error: argument --bootstrap-server is required"),
    (["--bootstrap-server", "x:1"], "kafka-transactions.sh: error: too few arguments"),
    (["--bootstrap-server", "x:1", "bogus"], "kafka-transactions.sh: error: invalid choice: 'bogus' (choose from "
     "'list', 'describe', 'describe-producers', 'abort', 'find-hanging', 'forceTerminateTransaction')"),
    (["--bootstrap-server", "x:1", "forceTerminateTransaction"],
     "kafka-transactions.sh: error: argument --transactionalId is required"),
    (["--bootstrap-server", "x:1", "describe"], "kafka-transactions.sh: error: argument --transactional-id is required"),
    (["--bootstrap-server", "x:1", "list", "--bogus"], "kafka-transactions.sh: error: unrecognized arguments: '--bogus'"),
    (["--bootstrap-server", "x:1", "list", "--duration-filter", "x"],
     "kafka-transactions.sh: error: argument --duration-filter: could not convert 'x' to Long (For input string: \"x\")"),
    (["--bootstrap-server", "x:1", "find-hanging"],
     "The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search"),
    (["--bootstrap-server", "x:1", "abort", "--topic", "t", "--partition", "0"],
     "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or "
     "with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)"),
])
def test_refusals(args, err):
    assert _pk(*args) == (1, "", err + "\n")


def test_force_terminate_aborts_the_open_transaction(broker):
    from confluent_kafka import KafkaException, Producer

    b = ["--bootstrap-server", broker.bootstrap]
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "ptx-force"})
    producer.init_transactions()
    producer.begin_transaction()
    producer.produce(TOPIC, b"v", partition=0)
    producer.flush()
    assert _pk(*b, "forceTerminateTransaction", "--transactionalId", "ptx-force") == (0, "", "")
    [_, row] = _rows(_pk(*b, "describe", "--transactional-id", "ptx-force")[1])
    # the abort bumped the epoch, the new InitProducerId again; the admin client's 30 s timeout
    assert row[1] == "ptx-force" and row[3:8] == ["2", "Empty", "30000", "None", "None"] and row[8] == ""
    with pytest.raises(KafkaException, match="fenced"):
        producer.commit_transaction(10)
    # an id nobody used yet is created, Empty at epoch 0
    assert _pk(*b, "forceTerminateTransaction", "--transactionalId", "ptx-fresh") == (0, "", "")
    [_, row] = _rows(_pk(*b, "describe", "--transactional-id", "ptx-fresh")[1])
    assert row[3:5] == ["0", "Empty"]
