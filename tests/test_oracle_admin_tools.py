"""pk-broker-api-versions and pk-delete-records against Kafka 4.4's tools (the oracle), on
the session's Kafka 4.4 broker and on a pk-server-start.

Documented differences asserted here: Kafka 4.4 lists deleted partitions in the order of an
immutable map, which changes from one JVM to the next (pk keeps the file's order), so those
lines are compared sorted; Kafka's admin client logs an ERROR line per failed partition on
stderr, which pk does not print.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from conftest import tool_path

P = "oat-"


def _pk(tool, *args):
    proc = subprocess.run([tool_path(tool), *args], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_broker_api_versions_match(kafka, kafka_tools, pk_server):
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        k = kafka_tools("kafka-broker-api-versions", "--bootstrap-server", bootstrap)
        assert k.returncode == 0, k.err
        assert _pk("pk-broker-api-versions", "--bootstrap-server", bootstrap) == (0, k.out, "")
        assert _pk("pk-run-class", "kafka.admin.BrokerApiVersionsCommand", "--bootstrap-server", bootstrap)[1] == k.out
    for args in ([], ["--command-config", "/x"], ["--bootstrap-server"], ["--bogus"], ["--bootstrap-server", "bad"]):
        k = kafka_tools("kafka-broker-api-versions", *args)
        rc, out, err = _pk("pk-broker-api-versions", *args)
        assert (rc, out, err.split("\n", 1)[0]) == (k.returncode, k.out, k.err_first), args


def _sorted_result(out: str) -> tuple[list[str], list[str]]:
    lines = out.splitlines()
    return lines[:2], sorted(lines[2:])


@pytest.mark.parametrize("where", ["kafka", "pk-server"])
def test_delete_records_match(kafka, kafka_tools, pk_server, tmp_path, where):
    bootstrap = kafka.bootstrap if where == "kafka" else pk_server.bootstrap
    from confluent_kafka import Producer

    for side in ("k", "p"):
        topic = f"{P}{side}-{where}"
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                        "--partitions", "3")
        assert r.returncode == 0, r.err
        producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
        for i in range(12):
            producer.produce(topic, f"v{i}".encode(), partition=i % 3)
        assert producer.flush(30) == 0

    def offsets(side, body):
        path = tmp_path / f"{side}.json"
        path.write_text(json.dumps(body).replace("{T}", f"{P}{side}-{where}"))
        return str(path)

    bodies = [
        {"partitions": [{"topic": "{T}", "partition": 0, "offset": 2}, {"topic": "{T}", "partition": 1, "offset": -1},
                        {"topic": "{T}", "partition": 2, "offset": 99}], "version": 1},
        {"partitions": [{"topic": "{T}", "partition": 0, "offset": 1}]},  # below the low watermark: kept
        {"partitions": [], "version": 1},
        {"partitions": [{"topic": "{T}", "partition": 0}], "version": 1},
        {"partitions": [{"topic": "{T}", "partition": 0, "offset": 1}], "version": 2},
        {"partitions": [{"topic": "{T}", "partition": 0, "offset": 1},
                        {"topic": "{T}", "partition": 0, "offset": 2}], "version": 1},
    ]
    for body in bodies:
        k = kafka_tools("kafka-delete-records", "--bootstrap-server", bootstrap, "--offset-json-file",
                        offsets("k", body))
        rc, out, err = _pk("pk-delete-records", "--bootstrap-server", bootstrap, "--offset-json-file",
                           offsets("p", body))
        out, err = out.replace(f"{P}p-", f"{P}k-"), err.replace(f"{P}p-", f"{P}k-")
        expected_err = "" if k.returncode == 0 else k.err_first + "\n"
        assert (rc, _sorted_result(out), err) == (k.returncode, _sorted_result(k.out), expected_err), body
    k = kafka_tools("kafka-delete-records", "--bootstrap-server", bootstrap)
    rc, out, err = _pk("pk-delete-records", "--bootstrap-server", bootstrap)
    assert (rc, out, err) == (k.returncode, k.out, k.err_first + "\n")


def test_log_dirs_match(kafka, kafka_tools, pk_server):
    """Kafka's kafka-log-dirs and pk-log-dirs on both brokers (the topics of this module; the
    real broker's log dir is its own), and the bad-input lines."""
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        topic = f"{P}ld"
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                        "--partitions", "3")
        assert r.returncode == 0, r.err
        # a new topic's logs appear on the broker one by one, after the topic is created
        deadline = time.monotonic() + 30
        while kafka_tools("kafka-log-dirs", "--bootstrap-server", bootstrap, "--describe", "--topic-list",
                          topic).out.count('"partition"') < 3:
            assert time.monotonic() < deadline, "the topic's logs did not appear"
            time.sleep(0.2)
        for args in (["--describe", "--topic-list", topic], ["--describe", "--broker-list", "0", "--topic-list", topic],
                     ["--describe", "--broker-list", "1,2"], ["--topic-list", topic], []):
            k = kafka_tools("kafka-log-dirs", "--bootstrap-server", bootstrap, *args)
            rc, out, err = _pk("pk-log-dirs", "--bootstrap-server", bootstrap, *args)
            assert (rc, out, err.split("\n", 1)[0]) == (k.returncode, k.out, k.err_first), (bootstrap, args)


def test_cluster_id_matches(kafka, kafka_tools, pk_server):
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        k = kafka_tools("kafka-cluster", "cluster-id", "--bootstrap-server", bootstrap)
        assert k.returncode == 0 and k.out.startswith("Cluster ID: ")
        assert _pk("pk-cluster", "cluster-id", "-b", bootstrap) == (0, k.out, "")
    for args in ([], ["bogus"], ["cluster-id", "--bogus", "-b", kafka.bootstrap], ["cluster-id", "-b"]):
        k = kafka_tools("kafka-cluster", *args)
        rc, out, err = _pk("pk-cluster", *args)
        kafka_error = " ".join(" ".join(line.split()) for line in k.err.splitlines()
                               if not line.startswith(("usage:", " ")))
        assert (rc, out, " ".join(err.split())) == (k.returncode, k.out, kafka_error), args


def test_features_describe_matches(kafka, kafka_tools, pk_server):
    """The real broker's epoch is its metadata offset, which moves between two calls."""
    import re

    def no_epoch(text):
        return re.sub(r"Epoch: \d+", "Epoch: <epoch>", text)

    for bootstrap, normalise in ((kafka.bootstrap, no_epoch), (pk_server.bootstrap, str)):
        k = kafka_tools("kafka-features", "--bootstrap-server", bootstrap, "describe")
        rc, out, err = _pk("pk-features", "--bootstrap-server", bootstrap, "describe")
        assert (rc, normalise(out), err) == (k.returncode, normalise(k.out), "")
    for args in ([], ["--bootstrap-server", kafka.bootstrap, "bogus"]):
        k = kafka_tools("kafka-features", *args)
        assert _pk("pk-features", *args) == (k.returncode, k.out, k.err + "\n"), args


def test_metadata_version_names_are_kafkas(kafka_tools):
    from pk.commands.features import METADATA_VERSIONS

    for level, release in METADATA_VERSIONS.items():
        k = kafka_tools("kafka-features", "version-mapping", "--release-version", release)
        assert k.out.splitlines()[0] == f"metadata.version={level} ({release})", (level, release, k.out, k.err)
