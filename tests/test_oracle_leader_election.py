"""pk-leader-election against Kafka 4.4's kafka-leader-election (the oracle), on the session's
Kafka 4.4 broker and on a pk-server-start: the same lines on stdout, and the first line of
Kafka's stderr (Kafka follows it with a stack trace, pk does not)."""

from __future__ import annotations

import json
import subprocess

from conftest import tool_path

TOPIC = "ole-t"


def _pk(*args):
    proc = subprocess.run([tool_path("pk-leader-election"), *args], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_leader_election_matches(kafka, kafka_tools, pk_server, tmp_path):
    files = {"two": {"partitions": [{"topic": TOPIC, "partition": 0}, {"topic": TOPIC, "partition": 1}]},
             "dup": {"partitions": [{"topic": TOPIC, "partition": 0}, {"topic": TOPIC, "partition": 0}]},
             "nop": {"x": 1}}
    for name, js in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(js))
    (tmp_path / "bad.json").write_text("nojson")
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists", "--topic",
                        TOPIC, "--partitions", "2")
        assert r.returncode == 0, r.err
        base = ["--bootstrap-server", bootstrap]
        for args in (["--election-type", "PREFERRED", "--topic", TOPIC, "--partition", "0"],
                     ["--election-type", "unclean", "--topic", TOPIC, "--partition", "1"],
                     ["--election-type", "PREFERRED", "--topic", "ole-none", "--partition", "1"],
                     ["--election-type", "PREFERRED", "--topic", TOPIC, "--partition", "7"],
                     ["--election-type", "PREFERRED", "--all-topic-partitions"],
                     ["--election-type", "bogus", "--all-topic-partitions"],
                     ["--all-topic-partitions"],
                     ["--election-type", "PREFERRED"],
                     ["--election-type", "PREFERRED", "--topic", TOPIC],
                     ["--election-type", "PREFERRED", "--partition", "1", "--all-topic-partitions"],
                     ["--election-type", "PREFERRED", "--topic", TOPIC, "--partition", "x"],
                     ["--election-type", "PREFERRED", "--topic", TOPIC, "--partition", "0", "--bogus"],
                     *(["--election-type", "PREFERRED", "--path-to-json-file", str(tmp_path / f"{n}.json")]
                       for n in ("two", "dup", "nop", "bad", "missing"))):
            k = kafka_tools("kafka-leader-election", *base, *args)
            rc, out, err = _pk(*base, *args)
            assert (rc, out, err.split("\n", 1)[0]) == (k.returncode, k.out, k.err_first), (bootstrap, args)
    k = kafka_tools("kafka-leader-election", "--election-type", "PREFERRED", "--all-topic-partitions")
    assert _pk("--election-type", "PREFERRED", "--all-topic-partitions")[::2] == (k.returncode, k.err_first + "\n")
