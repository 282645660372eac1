"""The pk-* console scripts: one per Kafka tool pk has, each also reachable through
pk-run-class by every class name Kafka 2.8-4.4's bin/ scripts run for it; and every tool
stops quietly, with status 0, when the reader of its stdout goes away."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import pytest

import toolfork

from conftest import tool_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "pyproject.toml"), "rb") as _f:
    SCRIPTS = tomllib.load(_f)["project"]["scripts"]

# Kafka's bin/kafka-<name>.sh -> pk's script, for the tools pk has
KAFKA_SCRIPTS = {
    "kafka-topics": "pk-topics", "kafka-console-producer": "pk-console-producer",
    "kafka-console-consumer": "pk-console-consumer", "kafka-consumer-groups": "pk-consumer-groups",
    "kafka-get-offsets": "pk-get-offsets", "kafka-dump-log": "pk-dump-log",
    "kafka-producer-perf-test": "pk-producer-perf-test", "kafka-consumer-perf-test": "pk-consumer-perf-test",
    "kafka-configs": "pk-configs", "kafka-broker-api-versions": "pk-broker-api-versions",
    "kafka-delete-records": "pk-delete-records", "kafka-log-dirs": "pk-log-dirs", "kafka-cluster": "pk-cluster", "kafka-features": "pk-features",
    "kafka-storage": "pk-storage",
    "kafka-run-class": "pk-run-class",
    "kafka-verifiable-producer": "pk-verifiable-producer", "kafka-verifiable-consumer": "pk-verifiable-consumer",
    "kafka-e2e-latency": "pk-e2e-latency", "kafka-streams-application-reset": "pk-streams-application-reset",
    "kafka-server-start": "pk-server-start", "kafka-server-stop": "pk-server-stop",
    "zookeeper-server-start": "pk-zookeeper-server-start", "zookeeper-server-stop": "pk-zookeeper-server-stop",
    "zookeeper-shell": "pk-zookeeper-shell",
    "kafka-metadata-quorum": "pk-metadata-quorum",
    "kafka-client-metrics": "pk-client-metrics",
    "kafka-console-share-consumer": "pk-console-share-consumer", "kafka-share-groups": "pk-share-groups",
    "kafka-share-consumer-perf-test": "pk-share-consumer-perf-test",
    "kafka-verifiable-share-consumer": "pk-verifiable-share-consumer",
    "kafka-streams-groups": "pk-streams-groups",
}


def test_every_script_is_installed_and_knows_its_version():
    for kafka_name, script in KAFKA_SCRIPTS.items():
        assert script in SCRIPTS, kafka_name
    for script in SCRIPTS:
        if script in ("pk-server-start", "pk-server-stop", "pk-spark", "pk-run-class", "pk-producer-perf-test",
                      "pk-cluster", "pk-features", "pk-storage", "pk-zookeeper-server-start",
                      "pk-zookeeper-server-stop", "pk-zookeeper-shell", "pk-verifiable-producer",
                      "pk-verifiable-consumer", "pk-verifiable-share-consumer", "pk-e2e-latency",
                      "pk-metadata-quorum"):  # tools without --version (as Kafka's), the launchers
            continue
        r = toolfork.real_run([tool_path(script), "--version"], capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout, r.stderr) == (0, "4.4.0\n", ""), script


def test_run_class_maps_every_kafka_class_name():
    """The class of each tool pk has in Kafka 2.8 and 4.4 (tests/kafka_oracle.py's tables),
    plus the names used in between."""
    import kafka_oracle
    from pk.cli.run_class import CLASSES, resolve

    wanted = {}
    for table in (kafka_oracle.SCRIPTS_4, kafka_oracle.SCRIPTS_28):
        for script, cls in table.items():
            if script in KAFKA_SCRIPTS:
                wanted[cls] = KAFKA_SCRIPTS[script]
    wanted.update({"org.apache.kafka.tools.TopicCommand": "pk-topics", "kafka.admin.ConfigCommand": "pk-configs",
                   "org.apache.kafka.tools.ConfigCommand": "pk-configs",
                   "org.apache.kafka.tools.consumer.ConsoleConsumer": "pk-console-consumer"})
    for cls, script in wanted.items():
        assert cls in CLASSES, cls
        module = SCRIPTS[script].split(":")[0]
        assert CLASSES[cls].split(":")[0] == module, cls
        assert resolve(cls) is not None, cls


def test_run_class_runs_the_old_names(pk):
    r = pk("pk-run-class", "kafka.admin.TopicCommand", "--create", "--topic", "old")
    assert (r.returncode, r.out) == (0, "Created topic old.\n")
    r = pk("pk-run-class", "org.apache.kafka.tools.TopicCommand", "--list")
    assert "old\n" in r.out
    r = pk("pk-run-class", "kafka.admin.ConfigCommand", "--describe", "--topic", "old")
    assert (r.returncode, r.out) == (0, "Dynamic configs for topic old are:\n")
    r = pk("pk-run-class", "kafka.tools.ConsoleProducer", "--topic", "old", input="a\n")
    assert r.returncode == 0, r.err
    r = pk("pk-run-class", "kafka.tools.ConsoleConsumer", "--topic", "old", "--from-beginning", "--max-messages", "1")
    assert (r.returncode, r.out) == (0, "a\n")


# a command line per tool that writes to stdout on a fresh data dir
STDOUT_CASES = [
    ["pk-topics", "--describe"],
    ["pk-topics", "--list"],
    ["pk-run-class", "kafka.admin.TopicCommand", "--describe"],
    ["pk-configs", "--describe", "--entity-type", "topics", "--all"],
    ["pk-get-offsets", "--topic", "t"],
    ["pk-consumer-groups", "--list"],
    ["pk-console-consumer", "--topic", "__consumer_offsets", "--from-beginning", "--timeout-ms", "500"],
    ["pk-dump-log", "--files", "{LOG}"],
    ["pk-delete-records", "--offset-json-file", "{JSON}"],
    ["pk-consumer-perf-test", "--topic", "t", "--messages", "1", "--timeout", "1000"],
    ["pk-producer-perf-test", "--topic", "t", "--num-records", "10", "--record-size", "10", "--throughput", "-1",
     "--producer-props", "acks=1"],
    ["pk-topics", "--help"],
]


@pytest.mark.parametrize("args", STDOUT_CASES, ids=lambda a: " ".join(a[:2]))
def test_closed_stdout_is_a_quiet_exit(pk, data_dir, tmp_path, args):
    pk("pk-topics", "--create", "--topic", "t")
    pk("pk-console-producer", "--topic", "t", input="a\nb\n")
    offsets = tmp_path / "offsets.json"
    offsets.write_text('{"partitions": [{"topic": "t", "partition": 0, "offset": 0}], "version": 1}')
    log = os.path.join(data_dir, "t-0", "00000000000000000000.log")
    args = [a.replace("{LOG}", log).replace("{JSON}", str(offsets)) for a in args]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the tool writes anything
    try:
        r = subprocess.run([tool_path(args[0]), *args[1:]], stdout=write, stderr=subprocess.PIPE,
                           env=pk.env, timeout=60)
    finally:
        os.close(write)
    err = r.stderr.decode()
    assert r.returncode == 0 and "Traceback" not in err and "Broken pipe" not in err, (args, r.returncode, err)


def test_scripts_run_from_python_too():
    """Each console script's target is importable and callable (the completions use them)."""
    for script, target in SCRIPTS.items():
        module, _, attribute = target.partition(":")
        r = subprocess.run([sys.executable, "-c", f"import {module} as m; assert callable(m.{attribute})"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (script, r.stderr)
