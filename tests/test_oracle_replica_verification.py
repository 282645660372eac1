"""pk-replica-verification against Kafka 4.4's kafka-replica-verification (the oracle): on the
session's Kafka 4.4 broker and on a pk-server-start, the same reports (timestamps dropped) for a
few report intervals, and the same errors. Each partition has its one replica there, so the
reports carry lag 0 for the first partition of Java's HashMap of partitions."""

from __future__ import annotations

import re
import signal
import subprocess
import time

from conftest import tool_path

TOOL = "org.apache.kafka.tools.ReplicaVerificationTool"
STAMP = re.compile(r"^\[?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]?:? ?")


def _prepare(kafka_tools, bootstrap: str) -> None:
    for topic, count in (("orv-a", "3"), ("orv-b", "2")):
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists", "--topic",
                        topic, "--partitions", count)
        assert r.returncode == 0, r.err
    lines = "".join(f"k{i}:v{i}\n" for i in range(40))
    subprocess.run([tool_path("pk-console-producer"), "--bootstrap-server", bootstrap, "--topic", "orv-a",
                    "--property", "parse.key=true", "--property", "key.separator=:"], input=lines.encode(),
                   check=True, capture_output=True, timeout=60)


def _reports(command: list[str], reports: int, timeout: float = 90) -> list[str]:
    """The tool's stdout lines, timestamps dropped, until `reports` lag reports came."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while sum("max lag" in line for line in lines) < reports and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(STAMP.sub("", line.rstrip("\n")))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    return lines


def test_reports_match(kafka, kafka_tools, pk_server):
    args = ["--topics-include", "orv-.*", "--time", "-2", "--report-interval-ms", "300", "--max-wait-ms", "100"]
    runs = {}
    for name, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
        _prepare(kafka_tools, bootstrap)
        java = [*kafka_tools.dist.java("tools", "256m"), TOOL, "--broker-list", bootstrap, *args]
        runs[f"kafka tool on {name}"] = _reports(java, 3)
        runs[f"pk tool on {name}"] = _reports([tool_path("pk-replica-verification"), "--broker-list", bootstrap, *args], 3)
    expected = runs["kafka tool on kafka"]
    assert expected[0] == "verification process is started"
    assert len(expected) == 4 and len(set(expected[1:])) == 1
    assert re.fullmatch(r"max lag is 0 for partition orv-[ab]-\d at offset \d+ among 5 partitions", expected[1])
    for name, lines in runs.items():
        assert lines == expected, name


def test_errors_match(kafka, kafka_tools, pk_server):
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        _prepare(kafka_tools, bootstrap)
        for args in (["--topics-include", "orv-a"], ["--broker-list", "nohost"],
                     ["--broker-list", bootstrap, "--topics-include", "("],
                     ["--broker-list", bootstrap, "--topics-include", "orv-none"],
                     ["--broker-list", bootstrap, "--topics-include", "orv-a", "--fetch-size", "x"],
                     ["--broker-list", bootstrap, "--topics-include", "orv-a", "--max-wait-ms", "1.5"],
                     ["--broker-list", bootstrap, "--topics-include", "orv-a", "--time", "x"],
                     ["--broker-list", bootstrap, "--topics-include", "orv-a", "--report-interval-ms", "x"],
                     ["--broker-list", bootstrap, "--topics-include", "orv-.*", "--time", "1"]):
            k = kafka_tools.run_class(TOOL, *args)
            proc = subprocess.run([tool_path("pk-replica-verification"), *args], capture_output=True, text=True,
                                  timeout=60)
            # the deprecation warning, then the failure's line (Kafka follows it with a trace or its help)
            k_err = [STAMP.sub("", line) for line in k.err.splitlines()[:2]]
            pk_err = [STAMP.sub("", line) for line in proc.stderr.splitlines()[:2]]
            assert (proc.returncode, proc.stdout, pk_err) == (k.returncode, k.out, k_err), args
