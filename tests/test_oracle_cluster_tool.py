"""pk-cluster's list-endpoints, api-versions, unregister and unregister-controller against
Kafka 4.4's kafka-cluster (the oracle), on the session's Kafka 4.4 broker and on a
pk-server-start. Kafka's failures log a line before the exception's: compared is the
exception's line, which pk prints alone."""

from __future__ import annotations

import re
import subprocess

from conftest import tool_path


def _pk(*args):
    proc = subprocess.run([tool_path("pk-cluster"), *args], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _exception_line(err: str) -> str:
    return next((line for line in err.splitlines() if line.startswith("java.util.concurrent.ExecutionException")),
                err.split("\n", 1)[0])


def test_cluster_commands_match(kafka, kafka_tools, pk_server):
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        for args in (["list-endpoints", "--bootstrap-server", bootstrap],
                     ["list-endpoints", "-b", bootstrap, "--include-fenced-brokers"],
                     ["api-versions", "--bootstrap-server", bootstrap],
                     ["list-endpoints", "--bootstrap-controller", bootstrap],
                     ["unregister", "--bootstrap-server", bootstrap, "--id", "7"]):
            k = kafka_tools("kafka-cluster", *args)
            rc, out, err = _pk(*args)
            assert (rc, out, _exception_line(err)) == (k.returncode, k.out, _exception_line(k.err)), (bootstrap, args)
    for args in (["list-endpoints"], ["unregister", "-b", kafka.bootstrap], ["unregister", "-b", kafka.bootstrap,
                                                                             "--id", "x"]):
        k = kafka_tools("kafka-cluster", *args)
        rc, out, err = _pk(*args)
        kafka_error = " ".join(" ".join(line.split()) for line in k.err.splitlines()
                               if not line.startswith(("usage:", " ")))
        kafka_error = re.sub(r"-- (?=\w)", "--", kafka_error)  # argparse4j wraps lines after a "--"
        assert (rc, out, " ".join(err.split())) == (k.returncode, k.out, kafka_error), args
