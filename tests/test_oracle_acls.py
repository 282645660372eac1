"""kafka-acls differential: the same calls, in the same order, through

- Kafka 4.4's kafka-acls.sh against a real Kafka 4.4 broker with its authorizer (`kafka_secure`),
- Kafka 4.4's kafka-acls.sh against pk-server-start with the authorizer,
- pk-acls --bootstrap-server against the real Kafka broker,
- pk-acls on the bundled engine's data directory (no server),

must print the same: exit status, stdout and the error line (Kafka prints "Error while executing
ACL command: ..." on stdout followed by a stack trace, pk on stderr alone; usage errors are the
first line of stderr on both). Kafka keeps entries and resources in Java hash sets whose order
changes from one JVM to the next: where more than one entry is printed, lines are compared as
multisets.
"""

from __future__ import annotations

import re
import subprocess
import uuid

import pytest

from conftest import BrokerProcess, tool_path

ERROR = "Error while executing ACL command: "
_SUPPORTED = re.compile(r"(only supports operations \[)(.*)(\])")


@pytest.fixture(scope="module")
def pk_secure(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("pk-secure")), {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS;User:admin"}).start()
    yield b
    b.stop()


def outcome(returncode: int, out: str, err: str) -> tuple:
    """(status, stdout, error line): the "Error while executing" line moved out of Kafka's
    stdout (with its stack trace), else stderr's first line."""
    lines = out.splitlines(True)
    error = next((l.rstrip("\n") for l in lines if l.startswith(ERROR)), None)
    if error is not None:
        lines = lines[:next(i for i, l in enumerate(lines) if l.startswith(ERROR))]
    else:
        error = err.splitlines()[0] if err.strip() else ""
    # (a hash set too: its order changes from one JVM to the next)
    error = _SUPPORTED.sub(lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))) + m.group(3), error)
    stdout = "".join(lines)
    entries = [l for l in stdout.splitlines() if l.lstrip(" ").startswith("\t(")]
    if len(entries) > 1:  # hash-set order: compare the lines, not their order
        stdout = sorted(l.replace(" \t", "\t") for l in stdout.splitlines())
    return returncode, stdout, error


@pytest.fixture
def targets(kafka_tools, kafka_secure, pk_secure, tmp_path):
    engine_dir = str(tmp_path / "engine")

    def kafka_tool(bootstrap):
        def run(args):
            r = kafka_tools("kafka-acls", "--bootstrap-server", bootstrap, *args)
            return outcome(r.returncode, r.out, r.err)
        return run

    def pk_tool(*where):
        def run(args):
            r = subprocess.run([tool_path("pk-acls"), *where, *args], capture_output=True, text=True, timeout=90)
            assert "Traceback" not in r.stderr, r.stderr
            return outcome(r.returncode, r.stdout, r.stderr)
        return run

    return {"kafka-acls on Kafka": kafka_tool(kafka_secure.bootstrap),
            "kafka-acls on pk-server-start": kafka_tool(pk_secure.bootstrap),
            "pk-acls on Kafka": pk_tool("--bootstrap-server", kafka_secure.bootstrap),
            "pk-acls on the engine": pk_tool("--data-dir", engine_dir)}


def scenarios(p: str) -> list[list[str]]:
    """Calls in order; every name and principal carries the prefix `p`, so the shared Kafka
    broker's other ACLs never show."""
    t1, pre, x, tx, g = f"{p}-t1", f"{p}-pre", f"{p}-x", f"{p}-tx", f"{p}-g"
    alice, bob, prod, cons = (f"User:{p}-{n}" for n in ("alice", "bob", "prod", "cons"))
    return [
        ["--add", "--allow-principal", alice, "--operation", "Read", "--topic", t1],
        ["--add", "--allow-principal", alice, "--operation", "READ", "--topic", t1],            # already exists
        ["--add", "--allow-principal", alice, "--operation", "read", "--operation", "Write", "--topic", t1],
        ["--list", "--topic", t1],
        ["--add", "--deny-principal", bob, "--deny-host", "1.2.3.4", "--operation", "Write", "--topic", pre,
         "--resource-pattern-type", "prefixed"],
        ["--list", "--topic", pre + "fix-x", "--resource-pattern-type", "match"],
        ["--list", "--topic", pre, "--resource-pattern-type", "any"],
        ["--list", "--topic", pre],                                                          # literal: none
        ["--add", "--producer", "--idempotent", "--allow-principal", prod, "--topic", x, "--transactional-id", tx],
        ["--add", "--consumer", "--allow-principal", cons, "--topic", x, "--group", g],
        ["--add", "--allow-principal", cons, "--operation", "describeconfigs", "--group", g],
        ["--list", "--principal", prod],
        ["--list", "--principal", cons, "--principal", alice],
        ["--list", "--group", g, "--topic", x],
        ["--remove", "--force", "--allow-principal", alice, "--operation", "Read", "--topic", t1],
        ["--list", "--topic", t1],
        ["--remove", "--force", "--topic", pre, "--resource-pattern-type", "prefixed"],
        ["--remove", "--force", "--allow-principal", prod, "--operation", "IdempotentWrite", "--cluster"],
        ["--remove", "--force", "--topic", x, "--group", g, "--transactional-id", tx],
        ["--list", "--principal", prod, "--principal", cons],
        # usage errors, in AclCommand's order of checks
        ["--topic", t1],
        ["--add", "--list", "--topic", t1],
        ["--list", "--producer", "--topic", t1],
        ["--add", "--producer", "--operation", "Read", "--allow-principal", alice, "--topic", t1],
        ["--add", "--consumer", "--deny-principal", alice, "--topic", t1, "--group", g],
        ["--add", "--principal", alice, "--topic", t1],
        ["--add", "--producer", "--allow-principal", alice],
        ["--add", "--idempotent", "--allow-principal", alice, "--topic", t1],
        ["--add", "--consumer", "--allow-principal", alice, "--topic", t1],
        ["--add", "--allow-principal", alice],
        ["--add", "--topic", t1],
        ["--add", "--allow-host", "1.1.1.1", "--topic", t1],
        ["--add", "--allow-principal", alice, "--topic", t1, "--resource-pattern-type", "match"],
        ["--add", "--allow-principal", alice, "--cluster", "--operation", "Read"],
        ["--add", "--allow-principal", alice, "--group", g, "--operation", "Write"],
        ["--add", "--allow-principal", alice, "--topic", t1, "--operation", "describe_configs"],
        # failures while executing
        ["--add", "--allow-principal", "alice", "--topic", t1],
        ["--add", "--allow-principal", alice, "--topic", t1, "--operation", "Any"],
        ["--add", "--allow-principal", alice, "--topic", t1, "--resource-pattern-type", "bogus"],
        ["--list", "--principal", "nobody"],
        ["--add", "--allow-principal", alice, "--topic", ""],
    ]


def test_kafka_acls_same_output_everywhere(targets):
    """pk-acls on Kafka shares the Kafka broker with kafka-acls: it gets names of its own (shown
    as P); there, the --principal sections (in Java's HashSet order, which depends on the names)
    are compared as a set."""
    base = "acl" + uuid.uuid4().hex[:6]
    prefixes = {name: base + ("b" if name == "pk-acls on Kafka" else "a") for name in targets}
    calls = {name: scenarios(prefixes[name]) for name in targets}
    diffs = []
    for i in range(len(calls["kafka-acls on Kafka"])):
        results = {name: _unprefixed(run(calls[name][i]), prefixes[name]) for name, run in targets.items()}
        args = [a.replace(prefixes["kafka-acls on Kafka"], "P") for a in calls["kafka-acls on Kafka"][i]]
        reference = results["kafka-acls on Kafka"]
        for name, got in results.items():
            if prefixes[name] != prefixes["kafka-acls on Kafka"]:
                got, expected = _sections(got), _sections(reference)
            else:
                expected = reference
            if got != expected:
                diffs.append(f"{' '.join(args)}\n  kafka-acls on Kafka: {reference!r}\n  {name}: {got!r}")
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs)


def _sections(result: tuple) -> tuple:
    """The output's "ACLs for principal" sections in a fixed order."""
    status, stdout, error = result
    if isinstance(stdout, str) and stdout.startswith("ACLs for principal"):
        stdout = sorted(re.split(r"(?=^ACLs for principal)", stdout, flags=re.M))
    return status, stdout, error


def _unprefixed(result: tuple, prefix: str) -> tuple:
    status, stdout, error = result
    if isinstance(stdout, list):
        stdout = sorted(line.replace(prefix, "P") for line in stdout)
    else:
        stdout = stdout.replace(prefix, "P")
    return status, stdout, error.replace(prefix, "P")
