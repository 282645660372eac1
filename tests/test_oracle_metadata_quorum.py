"""pk-metadata-quorum against Kafka 4.4's kafka-metadata-quorum (the oracle) on the session's
Kafka 4.4 combined node (a one-voter quorum: the moving numbers, high watermark, offsets and
times, are normalised) and on a pk-server-start, which offers none of the quorum APIs: both
tools must fail there with the same exception. Kafka prints the exception's stack trace (and
sometimes a log line) after its first line: compared is that first line, which pk prints
alone; argparse4j's usage before an error is dropped as well."""

from __future__ import annotations

import itertools
import re
import subprocess

from conftest import tool_path


def _pk(*args):
    proc = subprocess.run([tool_path("pk-metadata-quorum"), *args], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _error_line(err: str) -> str:
    """argparse4j's message (its wrapped lines joined, spaces squeezed) or the exception's first
    line (after any log line)."""
    lines = err.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("kafka-metadata-quorum:")), None)
    if at is not None:
        return re.sub(r"-- (?=\w)", "--", " ".join(" ".join(lines[at:]).split()))
    return next((line for line in lines if not line.startswith("[20")), "")


def _moving(text: str) -> str:
    """The numbers that move between two calls: offsets, high watermark, times."""
    text = re.sub(r"(HighWatermark: +)\d+", r"\1N", text)
    text = re.sub(r"\d+ ms ago", "T ms ago", text)
    return re.sub(r"(?m)^(0 +\tAAAAAAAAAAAAAAAAAAAAAA\t)\d+( *\t0 +\t)[^\t]+\t[^\t]+\t", r"\1N\2T\tT\t", text)


def _squeezed(text: str) -> str:
    return re.sub(r" +\t", "\t", text)


def _controller(kafka) -> str:
    """The combined node's CONTROLLER listener, from its configuration file."""
    with open(kafka.config_path) as f:
        voters = next(line for line in f if line.startswith("controller.quorum.voters="))
    return voters.strip().split("@", 1)[1]


def test_describe_matches_on_kafka(kafka, kafka_tools):
    connections = (["--bootstrap-server", kafka.bootstrap], ["--bootstrap-controller", _controller(kafka)])
    for connection, args in itertools.product(connections, (["describe", "--status"], ["describe", "--replication"],
                                                             ["describe", "--replication", "--human-readable"])):
        k = kafka_tools("kafka-metadata-quorum", *connection, *args)
        rc, out, err = _pk(*connection, *args)
        assert k.returncode == 0, k.err
        # column widths follow the offsets' and times' lengths
        assert (rc, _squeezed(_moving(out)), err) == (0, _squeezed(_moving(k.out)), ""), (connection, args)


def test_failures_match(kafka, kafka_tools, pk_server, tmp_path):
    controller = tmp_path / "controller.properties"
    controller.write_text(f"node.id=3\nprocess.roles=controller\nlog.dirs={tmp_path / 'meta'}\n"
                          "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://localhost:9999\n")
    formatted = subprocess.run([tool_path("pk-storage"), "format", "-t", "MkU3OEVBNTcwNTJENDM2Qk", "-c",
                                str(controller), "--standalone"], capture_output=True, timeout=60)
    assert formatted.returncode == 0, formatted.stderr
    broker_only = tmp_path / "broker.properties"
    broker_only.write_text("node.id=3\n")
    for b in (kafka.bootstrap, pk_server.bootstrap):
        calls = [["--bootstrap-server", b, "describe", "--status"],
                 ["--bootstrap-server", b, "describe", "--replication"],
                 ["--bootstrap-controller", b, "describe", "--status"],
                 ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAAAAAAAAAAAAAAAAAAAAQ"],
                 ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAAAAAAAAAAAAAAAAAAAAQ",
                  "--unregister"],
                 ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAAAAAAAAAAAAAAAAAAAAQ",
                  "--dry-run", "--unregister"],
                 ["--bootstrap-server", b, "--command-config", str(controller), "add-controller"],
                 ["--bootstrap-server", b, "--command-config", str(controller), "add-controller", "--dry-run"],
                 ["--bootstrap-server", b, "--command-config", str(broker_only), "add-controller", "--dry-run"]]
        if b == kafka.bootstrap:
            calls += [[], ["--bootstrap-server", b], ["describe", "--status"], ["--bootstrap-server", b, "describe"],
                      ["--bootstrap-server", b, "describe", "--status", "--replication"],
                      ["--bootstrap-server", b, "describe", "--status", "--human-readable"],
                      ["--bootstrap-server", b, "add-controller"],
                      ["--bootstrap-server", b, "--command-config", "/nonexistent", "add-controller"],
                      ["--bootstrap-server", b, "remove-controller"],
                      ["--bootstrap-server", b, "remove-controller", "--controller-id", "x", "-d", "y"],
                      ["--bootstrap-server", b, "remove-controller", "--controller-id", "-1", "-d", "y"],
                      ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "y"],
                      ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAAA"],
                      ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "AAA!"],
                      ["--bootstrap-server", b, "remove-controller", "-i", "1", "-d", "A" * 30],
                      ["--bootstrap-server", b, "foo"], ["--bootstrap-server", b, "describe", "--foo"],
                      ["--bootstrap-server", b, "--bootstrap-controller", b, "describe", "--status"],
                      ["--boot", b, "describe", "--stat"], ["--bootstrap-server", b, "describe", "x"]]
        for args in calls:
            k = kafka_tools("kafka-metadata-quorum", *args)
            rc, out, err = _pk(*args)
            assert (rc, _squeezed(_moving(out)), _error_line(err)) == (
                k.returncode, _squeezed(_moving(k.out)), _error_line(k.err)), args
