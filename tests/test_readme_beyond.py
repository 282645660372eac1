"""The README's "Beyond Kafka's tools" examples, run as written.

Every command of the section's console and sh blocks runs in a shell (pipes into jq and cat
included) against a prepared bundled engine and a pk-server-start standing in for the hosts the
examples name, and must exit 0; where the README shows JSON, the real output has the same shape
(the same keys, recursively), so a schema change that leaves the README behind fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import BrokerProcess, tool_path

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")
HOSTS = ("k1:9092,k2:9092", "localhost:9092", "kafka:9092")  # the examples' clusters
# Commands the section shows that cannot run here, each with the test that covers it instead.
NOT_RUN = {
    "--watch": "never ends by itself (test_admin_json2's watch tests stop it with SIGINT)",
    "--entity-type users": "pk-server-start keeps no client quotas (test_admin_json2 checks it on Kafka 4.4)",
}


def section() -> str:
    with open(README) as f:
        text = f.read()
    return text[text.index("## Beyond Kafka's tools\n"):text.index("## Differences from Kafka's tools\n")]


def examples() -> list[tuple[str, list[str]]]:
    """(command, the output lines the README shows under it) for every command in order; a
    `sh` block's lines (with backslash continuations) are one command."""
    out = []
    for kind, body in re.findall(r"^```(console|sh)\n(.*?)^```$", section(), flags=re.S | re.M):
        if kind == "sh":
            out.extend((line.split("  #")[0].strip(), []) for line in body.replace("\\\n", " ").splitlines())
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                out.append((line[2:].split("  #")[0].strip(), []))
            elif out:
                out[-1][1].append(line)
    return out


def shape(value):
    """What a schema fixes: keys (recursively) and types; a list's shape is its first item's."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__ if value is not None else None


def same_shape(expected, actual) -> bool:
    if isinstance(expected, dict):  # every key shown is there (a config map may hold more)
        return isinstance(actual, dict) and expected.keys() <= actual.keys() and all(
            same_shape(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and (not expected or not actual or same_shape(expected[0], actual[0]))
    # null stands for "unknown" in every schema; numbers may be int or float
    return expected is None or actual is None or expected == actual or {expected, actual} <= {"int", "float"}


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """A shell environment in which the examples' topics, group, config, ACL and profiles exist:
    the bundled engine as the default data dir, pk-server-start as every host they name."""
    root = tmp_path_factory.mktemp("readme")
    broker = BrokerProcess(str(root / "broker")).start()
    env = {**os.environ, "PATH": os.path.dirname(tool_path("pk-topics")) + os.pathsep + os.environ["PATH"],
           "PK_DATA_DIR": str(root / "engine"), "XDG_CONFIG_HOME": str(root / "config"), "HOME": str(root)}
    env.pop("PK_PROFILE", None)

    def sh(command: str, cwd=root, extra: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        for host in HOSTS:
            command = command.replace(host, broker.bootstrap)
        return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env={**env, **(extra or {})},
                              capture_output=True, text=True, timeout=timeout)

    # orders: 4 partitions, partition 3 past offset 1010, keyed records in 0 and 1, all recent
    records = "".join(json.dumps({"partition": p, "key": f"o-{i}", "value": f"order {i}"}) + "\n"
                      for p, n in ((0, 42), (1, 17), (3, 1100)) for i in range(n))
    for target in (f"--bootstrap-server {broker.bootstrap}", ""):
        setup = [f"pk-topics {target} --create --topic orders --partitions 4",
                 f"pk-topics {target} --create --topic payments --partitions 1",
                 f"pk-console-producer {target} --topic orders --input json < records.jsonl",
                 f"pk-console-consumer {target} --topic orders --from-beginning --max-messages 40 "
                 "--group billing > /dev/null",
                 f"pk-configs {target} --alter --entity-type topics --entity-name orders "
                 "--add-config retention.ms=86400000"]
        (root / "records.jsonl").write_text(records)
        for command in setup:
            done = sh(command)
            assert done.returncode == 0, (command, done.stderr)
    for command in ("pk-acls --add --allow-principal User:alice --operation Read --topic orders",
                    "printf 'security.protocol=PLAINTEXT\\n' > client.properties"):
        assert sh(command).returncode == 0, command
    from confluent_kafka import Producer  # a transactional id for `pk-transactions list`

    txn = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "payments-1"})
    txn.init_transactions(60)
    txn.begin_transaction()
    txn.produce("payments", b"paid")
    txn.commit_transaction(60)
    os.makedirs(root / "local", exist_ok=True)
    try:
        yield sh, root
    finally:
        broker.stop()


def test_every_example_runs_and_prints_the_shape_it_shows(setting):
    sh, root = setting
    ran = 0
    for command, shown in examples():
        if any(marker in command for marker in NOT_RUN):
            continue
        command = command.replace("/tmp/scratch", str(root / "scratch"))
        extra = {}
        if command.startswith("pk-profile") or "--profile" in command or command.startswith("PK_PROFILE=") \
                or command == "pk-topics --list":
            extra = {"PK_DATA_DIR": ""}  # the profile examples run as a user without PK_DATA_DIR would
        if "PK_PROFILE=scratch" in command:
            assert sh("pk-topics --profile scratch --create --topic t", extra=extra).returncode == 0
        done = sh(command, extra=extra)
        assert done.returncode == 0, (command, done.stderr)
        ran += 1
        expected = [line for line in shown if line.startswith(("{", "["))]
        if expected:
            actual = [line for line in done.stdout.splitlines() if line.strip()]
            assert actual, (command, "printed nothing")
            for want, got in zip(expected, actual):
                assert same_shape(shape(json.loads(want)), shape(json.loads(got))), (command, want, got)
    assert ran >= 15, ran


def test_the_record_schema_example_is_what_the_consumer_prints(setting):
    sh, _ = setting
    block = re.search(r"^```json\n(.*?)^```$", section(), flags=re.S | re.M)
    assert block is not None
    example = json.loads(block[1].splitlines()[0])
    done = sh("pk-console-consumer --topic orders --partition 0 --offset 0 --max-messages 1 --output json")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.splitlines()[0])
    assert list(got) == list(example)  # the documented key order
    assert same_shape(shape({k: v for k, v in example.items() if k not in ("value", "headers")}),
                      shape({k: v for k, v in got.items() if k not in ("value", "headers")}))


def test_commands_not_run_here_are_still_in_the_section():
    """NOT_RUN names commands the README shows: when one goes, its entry goes too."""
    commands = [c for c, _ in examples()]
    for marker in NOT_RUN:
        assert any(marker in c for c in commands), marker
