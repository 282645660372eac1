"""pk-console-share-consumer and pk-share-groups against Kafka 4.4's kafka-console-share-consumer
and kafka-share-groups (the oracle), on the session's Kafka 4.4 broker, which finalizes
share.version=2 by default (KIP-932's share groups are on in 4.4).

Each share group gets share.auto.offset.reset=earliest (a group config, through kafka-configs)
so that it reads records produced before it starts. The console consumers run in groups of
their own and must print the same records (per partition in offset order, with their delivery
counts) and the same closing line; bad command lines give the same first stderr line and
exit status (without --bootstrap-server pk's tools work on the bundled engine where Kafka's
refuse: tests/test_engine_share_groups.py). kafka-share-groups and pk-share-groups run back to
back on the same groups and must print the same stdout byte for byte, the same status and the same first stderr line:
with a live member (a pk-console-share-consumer process), after it left, and for the reset,
delete-offsets and delete actions. Nothing is normalised: both tools see the same member.

The last tests run the offset actions (AlterShareGroupOffsets, DeleteShareGroupOffsets) with
both tools on pk-server-start and on Kafka 4.4 too: every output must be the same on the two
brokers (the log timestamp of a warning aside).
"""

from __future__ import annotations

import base64
import os
import uuid
import signal
import subprocess

import pytest

from conftest import tool_path
from kafka_oracle import normalise
from waits import create_topic_with_leaders, wait_for

PREFIX = "osg-"
TOPIC = "osg-topic"
RECORDS = [f"k{i % 5}:v{i}" for i in range(30)]


def _pk(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    tool = args[0]
    return subprocess.run([tool_path(tool), *args[1:]], capture_output=True, timeout=timeout)


def _first_line(err: bytes) -> str:
    """The first line that is not blank, not a log4j line of the JVM's own set-up and not a
    client library's log line (org.apache.kafka.clients.*: whether one shows depends on timing)."""
    for line in err.decode(errors="replace").splitlines():
        if line.strip() and "log4j" not in line.lower() and "StatusLogger" not in line \
                and "(org.apache.kafka.clients." not in line:
            return line
    return ""


def _earliest(kafka_tools, bootstrap: str, group: str) -> None:
    r = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                    "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")
    assert r.returncode == 0, r.err


@pytest.fixture(scope="module")
def topic(kafka, kafka_tools):
    create_topic_with_leaders(kafka.bootstrap, TOPIC, partitions=3)
    r = kafka_tools("kafka-console-producer", "--bootstrap-server", kafka.bootstrap, "--topic", TOPIC,
                    "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
                    input="\n".join(RECORDS) + "\n")
    assert r.returncode == 0, r.err
    return TOPIC


FORMAT = ["--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
          "--formatter-property", "print.delivery=true", "--formatter-property", "print.key=true"]


def _by_partition(out: bytes) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in out.decode().splitlines():
        rows.setdefault(line.split("\t", 1)[0], []).append(line)
    return rows


def test_console_share_consumers_print_the_same_records(kafka, kafka_tools, topic):
    common = ["--bootstrap-server", kafka.bootstrap, "--topic", topic, "--max-messages", str(len(RECORDS)),
              "--timeout-ms", "90000", *FORMAT]
    _earliest(kafka_tools, kafka.bootstrap, "osg-console-kafka")
    _earliest(kafka_tools, kafka.bootstrap, "osg-console-pk")
    theirs = kafka_tools("kafka-console-share-consumer", *common, "--group", "osg-console-kafka", timeout=150)
    ours = _pk("pk-console-share-consumer", *common, "--group", "osg-console-pk", timeout=150)
    assert (theirs.returncode, _first_line(theirs.stderr)) == (0, f"Processed a total of {len(RECORDS)} messages")
    assert (ours.returncode, _first_line(ours.stderr)) == (0, f"Processed a total of {len(RECORDS)} messages")
    assert _by_partition(ours.stdout) == _by_partition(theirs.stdout)
    assert sum(len(v) for v in _by_partition(ours.stdout).values()) == len(RECORDS)


BAD = [
    ("no-topic", ["--bootstrap-server", "{b}"]),
    ("reject-and-release", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--reject", "--release"]),
    ("unknown-option", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--bogus"]),
    ("group-mismatch", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--group", "a",
                        "--command-property", "group.id=b"]),
    ("unknown-formatter", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--formatter", "no.such.Formatter"]),
    ("property-twice", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--property", "a=b",
                        "--formatter-property", "c=d"]),
    ("consumer-property-twice", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--consumer-property", "a=b",
                                 "--command-property", "c=d"]),
    ("bad-max-messages-missing", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--max-messages"]),
    # converted outside the option parser: Kafka logs the failure of its run (with a timestamp)
    ("bad-max-messages", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--max-messages", "x"]),
    ("bad-timeout", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--timeout-ms", "x"]),
    ("missing-formatter-config", ["--bootstrap-server", "{b}", "--topic", TOPIC, "--formatter-config", "/nonexistent"]),
]


@pytest.mark.parametrize("name,args", BAD, ids=[n for n, _ in BAD])
def test_console_share_consumer_bad_input(kafka, kafka_tools, name, args):
    args = [a.replace("{b}", kafka.bootstrap) for a in args]
    theirs = kafka_tools("kafka-console-share-consumer", *args)
    ours = _pk("pk-console-share-consumer", *args)
    assert (ours.returncode, normalise(_first_line(ours.stderr))) == \
        (theirs.returncode, normalise(_first_line(theirs.stderr)))
    assert theirs.returncode != 0
    assert b"Traceback" not in ours.stderr


def test_console_share_consumer_timeout_and_systest_events(kafka, kafka_tools, topic):
    """--timeout-ms ends the run as Kafka's does (its receive loop's TimeoutException, logged,
    exit 0); --enable-systest-events prints shutdown_complete at the end."""
    for tool in ("kafka", "pk"):  # each group takes every record first: then none is left
        group = f"osg-timeout-{tool}"
        _earliest(kafka_tools, kafka.bootstrap, group)
        r = _pk("pk-console-share-consumer", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--group",
                group, "--max-messages", str(len(RECORDS)), "--timeout-ms", "90000")
        assert r.returncode == 0 and len(r.stdout.splitlines()) == len(RECORDS), r.stderr
    args = ["--bootstrap-server", kafka.bootstrap, "--topic", topic, "--timeout-ms", "3000",
            "--enable-systest-events", *FORMAT]
    theirs = kafka_tools("kafka-console-share-consumer", *args, "--group", "osg-timeout-kafka", timeout=150)
    ours = _pk("pk-console-share-consumer", *args, "--group", "osg-timeout-pk")
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout == b"shutdown_complete\n"
    assert [normalise(line) for line in ours.stderr.decode().splitlines()] == \
        [normalise(line) for line in theirs.stderr.decode().splitlines()]


# --------------------------------------------------------------------------- kafka-share-groups
def _compare(kafka_tools, *args: str):
    theirs = kafka_tools("kafka-share-groups", *args)
    ours = _pk("pk-share-groups", *args)
    assert ours.stdout.decode() == theirs.stdout.decode(), args
    assert (ours.returncode, _first_line(ours.stderr)) == (theirs.returncode, _first_line(theirs.stderr)), args
    return ours


def _settled(kafka_tools, *args: str):
    """_compare for a group that may still be changing (a live member's records being
    acknowledged, the start offsets written after them): both tools are asked again until
    they agree, then compared."""
    def agree() -> bool:
        theirs = kafka_tools("kafka-share-groups", *args)
        ours = _pk("pk-share-groups", *args)
        return ours.stdout == theirs.stdout
    try:
        wait_for(agree, timeout=60, what="the two tools to agree", interval=0.5)
    except AssertionError:
        pass  # the comparison below shows the difference
    return _compare(kafka_tools, *args)


def _offsets_known(bootstrap: str, group: str) -> bool:
    r = _pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
    rows = [line.split() for line in r.stdout.decode().splitlines() if line.startswith(group)]
    return r.returncode == 0 and len(rows) == 3 and all(row[3] != "-" for row in rows)


def _state(bootstrap: str, group: str) -> str:
    r = _pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group, "--state")
    lines = r.stdout.decode().split("\n")
    return lines[2].split()[3] if r.returncode == 0 and len(lines) > 2 and lines[2].startswith(group) else ""


@pytest.fixture(scope="module")
def groups(kafka, kafka_tools, topic, tmp_path_factory):
    """osg-live (a pk share consumer that keeps running) and osg-done (consumed, then left)."""
    b = kafka.bootstrap
    for g in ("osg-live", "osg-done", "osg-gone"):
        _earliest(kafka_tools, b, g)
    for g in ("osg-done", "osg-gone"):
        r = _pk("pk-console-share-consumer", "--bootstrap-server", b, "--topic", topic, "--group", g,
                "--max-messages", str(len(RECORDS)), "--timeout-ms", "90000", timeout=150)
        assert r.returncode == 0, r.stderr
    printed = tmp_path_factory.mktemp("osg-live") / "out"
    with open(printed, "wb") as out:
        live = subprocess.Popen([tool_path("pk-console-share-consumer"), "--bootstrap-server", b, "--topic", topic,
                                 "--group", "osg-live"], stdout=out, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _state(b, "osg-live") == "Stable", timeout=90, what="osg-live's member")
        # its records taken and acknowledged, and the start offsets written after them
        wait_for(lambda: len(printed.read_bytes().splitlines()) == len(RECORDS), timeout=90,
                 what="osg-live's records")
        wait_for(lambda: _offsets_known(b, "osg-live"), timeout=90, what="osg-live's start offsets")
        wait_for(lambda: _state(b, "osg-done") == "Empty", timeout=90, what="osg-done to be empty")
        yield live
    finally:
        if live.poll() is None:
            os.kill(live.pid, signal.SIGTERM)
        live.wait(30)


DESCRIBE = [[], ["--verbose"], ["--offsets"], ["--offsets", "--verbose"], ["--members"], ["--members", "--verbose"],
            ["--state"], ["--state", "--verbose"]]


@pytest.mark.parametrize("mode", DESCRIBE, ids=lambda m: "-".join(m) or "default")
@pytest.mark.parametrize("group", ["osg-live", "osg-done", "osg-nonesuch"])
def test_share_groups_describe(kafka, kafka_tools, groups, group, mode):
    _settled(kafka_tools, "--bootstrap-server", kafka.bootstrap, "--describe", "--group", group, *mode)


def test_share_groups_list_with_states(kafka, kafka_tools, groups):
    for args in (["--list"], ["--list", "--state"], ["--list", "--state", "stable"], ["--list", "--state", "Empty"]):
        theirs = kafka_tools("kafka-share-groups", "--bootstrap-server", kafka.bootstrap, *args)
        ours = _pk("pk-share-groups", "--bootstrap-server", kafka.bootstrap, *args)
        assert ours.returncode == theirs.returncode == 0
        # other modules' share groups may come and go: this module's rows, and the header
        mine = [line for line in ours.stdout.decode().splitlines() if line.startswith(PREFIX)]
        kafkas = [line for line in theirs.stdout.decode().splitlines() if line.startswith(PREFIX)]
        assert mine == kafkas and mine, args
        assert ours.stdout.decode().splitlines()[0] == theirs.stdout.decode().splitlines()[0]


RESETS = [["--to-earliest", "--dry-run"], ["--to-latest", "--dry-run"], ["--to-offset", "2", "--dry-run"],
          ["--to-current", "--dry-run"], ["--to-earliest", "--dry-run", "--export"],
          ["--to-datetime", "2000-01-01T00:00:00.000", "--dry-run"]]


@pytest.mark.parametrize("reset", RESETS, ids=lambda r: "-".join(a.strip("-") for a in r))
def test_share_groups_reset_plans(kafka, kafka_tools, groups, reset):
    b = kafka.bootstrap
    _compare(kafka_tools, "--bootstrap-server", b, "--reset-offsets", "--group", "osg-done", "--topic", TOPIC, *reset)
    _compare(kafka_tools, "--bootstrap-server", b, "--reset-offsets", "--group", "osg-done", "--all-topics", *reset)
    _compare(kafka_tools, "--bootstrap-server", b, "--reset-offsets", "--group", "osg-done", "--topic",
             f"{TOPIC}:0,2", *reset)
    # a group with a live member is refused
    _compare(kafka_tools, "--bootstrap-server", b, "--reset-offsets", "--group", "osg-live", "--topic", TOPIC, *reset)


def test_share_groups_reset_execute_then_describe(kafka, kafka_tools, groups):
    b = kafka.bootstrap
    theirs = kafka_tools("kafka-share-groups", "--bootstrap-server", b, "--reset-offsets", "--group", "osg-done",
                         "--topic", f"{TOPIC}:0", "--to-offset", "1", "--execute")
    assert theirs.returncode == 0, theirs.err
    ours = _pk("pk-share-groups", "--bootstrap-server", b, "--reset-offsets", "--group", "osg-gone",
               "--topic", f"{TOPIC}:0", "--to-offset", "1", "--execute")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.decode() == theirs.stdout.decode().replace("osg-done", "osg-gone")
    for group in ("osg-done", "osg-gone"):
        wait_for(lambda: f"{group}        {TOPIC}       0          1" in _pk(
            "pk-share-groups", "--bootstrap-server", b, "--describe", "--group", group).stdout.decode(),
            timeout=60, what=f"{group}'s new start offset")
        _compare(kafka_tools, "--bootstrap-server", b, "--describe", "--group", group)


def test_share_groups_delete_offsets_and_delete(kafka, kafka_tools, groups):
    b = kafka.bootstrap
    _compare(kafka_tools, "--bootstrap-server", b, "--delete-offsets", "--group", "osg-live", "--topic", TOPIC)
    _compare(kafka_tools, "--bootstrap-server", b, "--delete-offsets", "--group", "osg-nonesuch", "--topic", TOPIC)
    _compare(kafka_tools, "--bootstrap-server", b, "--delete", "--group", "osg-live")
    _compare(kafka_tools, "--bootstrap-server", b, "--delete", "--group", "osg-nonesuch")
    # the same deletion once each: Kafka's tool deletes osg-gone's offsets, pk's osg-done's
    theirs = kafka_tools("kafka-share-groups", "--bootstrap-server", b, "--delete-offsets", "--group", "osg-gone",
                         "--topic", TOPIC)
    ours = _pk("pk-share-groups", "--bootstrap-server", b, "--delete-offsets", "--group", "osg-done", "--topic", TOPIC)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)
    theirs = kafka_tools("kafka-share-groups", "--bootstrap-server", b, "--delete", "--group", "osg-gone")
    ours = _pk("pk-share-groups", "--bootstrap-server", b, "--delete", "--group", "osg-done")
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout.decode() == theirs.stdout.decode().replace("osg-gone", "osg-done")


def test_share_groups_numbers_converted_while_running(kafka, kafka_tools):
    """--timeout and --to-offset are converted by the running command: Kafka prints the error
    as the command's failure on stdout and exits 0."""
    b = kafka.bootstrap
    _compare(kafka_tools, "--bootstrap-server", b, "--describe", "--group", "osg-x", "--timeout", "soon")
    _compare(kafka_tools, "--bootstrap-server", b, "--reset-offsets", "--group", "osg-x", "--all-topics",
             "--to-offset", "x", "--dry-run")


SG_BAD = [[], ["--describe"], ["--describe", "--group", "g", "--members", "--state"],
          ["--list", "--members"], ["--list", "--group", "g"], ["--describe", "--group", "g", "--all-groups"],
          ["--delete"], ["--delete-offsets", "--group", "g"], ["--reset-offsets", "--group", "g", "--topic", "t",
                                                               "--to-earliest"],
          ["--reset-offsets", "--group", "g", "--topic", "t", "--dry-run"],
          ["--reset-offsets", "--group", "g", "--to-earliest", "--dry-run"],
          ["--reset-offsets", "--all-groups", "--topic", "t", "--to-earliest", "--dry-run"],
          ["--list", "--state", "Bogus"]]


def _states_sorted(line: str) -> str:
    """Kafka lists the valid states from a HashSet of enum constants, whose order (identity
    hash codes) changes from one JVM to the next: compared as a set."""
    head, sep, states = line.partition("Valid states are: ")
    return head + sep + ", ".join(sorted(states.split(", "))) if sep else line


@pytest.mark.parametrize("args", SG_BAD, ids=lambda a: "_".join(x.strip("-") for x in a) or "none")
def test_share_groups_bad_input(kafka, kafka_tools, args):
    full = ["--bootstrap-server", kafka.bootstrap, *args] if args else []
    theirs = kafka_tools("kafka-share-groups", *full)
    ours = _pk("pk-share-groups", *full)
    assert (ours.returncode, _states_sorted(_first_line(ours.stderr))) == \
        (theirs.returncode, _states_sorted(_first_line(theirs.stderr)))
    assert theirs.returncode != 0
    assert b"Traceback" not in ours.stderr


# ---------------------------------------------------------------------- the same on pk-server-start
# Kafka's kafka-share-groups and pk-share-groups altering and deleting share-group offsets
# (AlterShareGroupOffsets 91, DeleteShareGroupOffsets 92) on pk-server-start and on Kafka 4.4:
# every output must be the same on both brokers, and the two tools must agree on each.
BOTH_TOPIC = "osg-both"
RETRIABLE = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


@pytest.fixture(scope="module")
def brokers(kafka, kafka_tools, pk_server):
    """{name: bootstrap} of Kafka 4.4 and of this module's pk-server-start, each with
    BOTH_TOPIC (3 partitions, RECORDS keyed alike, so partitioned alike)."""
    out = {"kafka": kafka.bootstrap, "pk": pk_server.bootstrap}
    for b in out.values():
        create_topic_with_leaders(b, BOTH_TOPIC, partitions=3)
        r = kafka_tools("kafka-console-producer", "--bootstrap-server", b, "--topic", BOTH_TOPIC,
                        "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
                        input="\n".join(RECORDS) + "\n")
        assert r.returncode == 0, r.err
    return out


def _both_tools(kafka_tools, bootstrap: str, tool: str, *args: str) -> tuple[int, str, str]:
    """(status, stdout, first stderr line without its log timestamp) of one tool's run."""
    r = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, *args) if tool == "kafka" \
        else _pk("pk-share-groups", "--bootstrap-server", bootstrap, *args)
    err = _first_line(r.stderr)
    return r.returncode, r.stdout.decode(), err.split("] ", 1)[-1] if err.startswith("[") else err


def _sequence(kafka_tools, bootstrap: str, steps: list[list[str]]) -> dict[str, list]:
    """Each tool runs the steps on a group of its own (osg-seq-kt, osg-seq-pk: names of one
    length, so that the tables are as wide), which the outputs name as GROUP."""
    out = {}
    for tool in ("kafka", "pk"):
        group = "osg-seq-kt" if tool == "kafka" else "osg-seq-pk"
        runs = []
        for step in steps:
            args = [a.replace("GROUP", group) for a in step]
            code, stdout, err = _both_tools(kafka_tools, bootstrap, tool, *args)
            runs.append((step, code, stdout.replace(group, "GROUP"), err.replace(group, "GROUP")))
        out[tool] = runs
    return out


ALTER_DELETE_STEPS = [
    ["--reset-offsets", "--group", "GROUP", "--topic", BOTH_TOPIC, "--to-earliest", "--execute"],  # a new group
    ["--reset-offsets", "--group", "GROUP", "--topic", f"{BOTH_TOPIC}:0", "--to-offset", "1", "--execute"],
    ["--reset-offsets", "--group", "GROUP", "--topic", f"{BOTH_TOPIC}:2", "--to-offset", "99", "--execute"],
    ["--describe", "--group", "GROUP", "--verbose"],
    ["--delete-offsets", "--group", "GROUP", "--topic", BOTH_TOPIC, "--topic", "osg-nonesuch",
     "--topic", "__consumer_offsets"],
    ["--delete-offsets", "--group", "GROUP", "--topic", BOTH_TOPIC],
    ["--delete-offsets", "--group", "GROUP-none", "--topic", BOTH_TOPIC],
    ["--describe", "--group", "GROUP"],
]


def test_alter_and_delete_offsets_on_both_brokers(kafka_tools, brokers):
    seen = {name: _sequence(kafka_tools, b, ALTER_DELETE_STEPS) for name, b in brokers.items()}
    for tool in ("kafka", "pk"):
        for theirs, ours in zip(seen["kafka"][tool], seen["pk"][tool]):
            assert ours == theirs, tool
    # and the two tools agree, step by step, on each broker
    for name in brokers:
        assert [r[1:3] for r in seen[name]["pk"]] == [r[1:3] for r in seen[name]["kafka"]], name


def test_alter_and_delete_offsets_refused_while_members(kafka_tools, brokers, tmp_path):
    """A group with a member: both actions are refused, the same way on both brokers."""
    steps = [["--reset-offsets", "--group", "osg-busy", "--topic", BOTH_TOPIC, "--to-earliest", "--execute"],
             ["--delete-offsets", "--group", "osg-busy", "--topic", BOTH_TOPIC]]
    live, seen = [], {}
    try:
        for name, b in brokers.items():
            live.append(subprocess.Popen([tool_path("pk-console-share-consumer"), "--bootstrap-server", b,
                                          "--topic", BOTH_TOPIC, "--group", "osg-busy"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for name, b in brokers.items():
            wait_for(lambda: _state(b, "osg-busy") == "Stable", timeout=90, what=f"osg-busy's member on {name}")
            seen[name] = [(tool, *_both_tools(kafka_tools, b, tool, *step))
                          for step in steps for tool in ("kafka", "pk")]
    finally:
        for proc in live:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
            proc.wait(30)
    assert seen["pk"] == seen["kafka"]
    assert all("not empty" in (run[2] + run[3]).lower() for run in seen["pk"]), seen["pk"]


def _group_api_answers(bootstrap: str) -> dict:
    """What one broker answers to the group APIs about a share group (osg-apis, made by
    AlterShareGroupOffsets) and a group that is not there, through pk's codec."""
    from conftest import ProtocolClient
    from pk.engine.protocol import ApiKey

    out = {}
    with ProtocolClient(bootstrap) as c:
        md = c.call(ApiKey.METADATA, 12, {"topics": [{"name": BOTH_TOPIC, "topic_id": None}],
                                          "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        topic_id = md["topics"][0]["topic_id"]

        def coordinator_ready() -> bool:  # (Kafka: its group coordinator loaded)
            r = c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["osg-apis"]})
            return r["coordinators"][0]["error_code"] == 0
        wait_for(coordinator_ready, timeout=60, what="the group coordinator")

        def altered():
            r = c.call(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": "osg-apis", "topics": [
                {"topic_name": BOTH_TOPIC, "partitions": [{"partition_index": 0, "start_offset": 3}]}]})
            return r if r["error_code"] not in RETRIABLE else None
        out["alter"] = wait_for(altered, timeout=60, what="AlterShareGroupOffsets")
        for t in out["alter"]["responses"]:
            t["topic_id"] = "TOPIC-ID" if t["topic_id"] == topic_id else t["topic_id"]
        for version in (0, 5, 6):
            for ops in (False, True):
                body = {"groups": ["osg-apis", "osg-apis-none"], "include_authorized_operations": ops}
                answer = c.call(ApiKey.DESCRIBE_GROUPS, version, body)
                # (Kafka answers the groups in its coordinator partitions' hash order)
                out[f"describe-v{version}-{ops}"] = sorted(answer["groups"], key=lambda g: g["group_id"])
        for version, body in ((2, {}), (4, {"states_filter": ["EMPTY"]}),
                              *((5, {"states_filter": [], "types_filter": types})
                                for types in (["share"], ["Share", "classic"], ["consumer"], ["bogus"])),
                              (5, {"states_filter": ["stable"], "types_filter": ["share"]})):
            answer = c.call(ApiKey.LIST_GROUPS, version, body)
            answer["groups"] = [g for g in answer["groups"] if g["group_id"].startswith("osg-apis")]
            out[f"list-v{version}-{body}"] = answer
        keys = [f"osg-apis:{topic_id}:0", "osg-apis:nope:0", "bad"]
        for version in (4, 6):
            answer = c.call(ApiKey.FIND_COORDINATOR, version, {"key_type": 2, "coordinator_keys": keys})
            for x in answer["coordinators"]:
                x["key"] = x["key"].replace(str(topic_id), "TOPIC-ID")
                x.pop("port")  # (each broker's own)
            out[f"find-v{version}"] = answer
    return out


def test_share_groups_in_group_apis_on_both_brokers(kafka_tools, brokers):
    """DescribeGroups, ListGroups (with its type filter) and FindCoordinator's SHARE key type
    answer alike, field by field; kafka-groups and pk-groups list the share group alike."""
    seen = {name: _group_api_answers(b) for name, b in brokers.items()}
    for key, theirs in seen["kafka"].items():
        assert seen["pk"][key] == theirs, key
    assert seen["pk"]["describe-v6-False"][0]["error_message"] == "Group osg-apis is not a classic group."
    for args in (["--list", "--share"], ["--list", "--consumer"]):
        rows = set()
        for b in brokers.values():
            theirs = kafka_tools("kafka-groups", "--bootstrap-server", b, *args)
            ours = _pk("pk-groups", "--bootstrap-server", b, *args)
            assert ours.returncode == theirs.returncode == 0, (ours.stderr, theirs.err)
            # (other modules' groups come and go on the session's Kafka; Kafka lists in hash order)
            for r in (theirs, ours):
                lines = r.stdout.decode().splitlines()
                rows.add((lines[0], tuple(sorted(line for line in lines if line.startswith("osg-apis")))))
        assert len(rows) == 1, (args, rows)


# The share coordinator's APIs (83-87), sent as a broker would: (name, api key, version, the
# partitions of BOTH_TOPIC, or of a topic id no broker has). One group, on each broker.
def _parts(*parts: dict) -> list[dict]:
    return list(parts)


def _batch(first: int, last: int, state: int, count: int) -> dict:
    return {"first_offset": first, "last_offset": last, "delivery_state": state, "delivery_count": count}


def _w(partition: int, state_epoch: int, leader_epoch: int, start: int, done: int, *batches: dict) -> dict:
    return {"partition": partition, "state_epoch": state_epoch, "leader_epoch": leader_epoch, "start_offset": start,
            "delivery_complete_count": done, "state_batches": list(batches)}


STATE_STEPS = [
    ("read-uninitialized", 84, 0, _parts({"partition": 0, "leader_epoch": 0})),
    ("summary-uninitialized", 87, 1, _parts({"partition": 0, "leader_epoch": 5})),
    ("write-uninitialized", 85, 1, _parts(_w(0, 0, 0, 0, 0))),
    ("delete-uninitialized", 86, 0, _parts({"partition": 0})),
    ("init", 83, 0, _parts({"partition": 0, "state_epoch": 2, "start_offset": 10},
                           {"partition": 1, "state_epoch": 0, "start_offset": -1},
                           {"partition": 9, "state_epoch": 0, "start_offset": 0},
                           {"partition": 2, "state_epoch": -1, "start_offset": 0},
                           {"partition": -1, "state_epoch": 0, "start_offset": 0})),
    ("init-unknown-topic", 83, 0, "unknown"),
    ("read-unknown-topic", 84, 0, "unknown"),
    ("init-lower-epoch", 83, 0, _parts({"partition": 0, "state_epoch": 1, "start_offset": 3})),
    ("summary-v1", 87, 1, _parts({"partition": 0, "leader_epoch": 5}, {"partition": 1, "leader_epoch": -1})),
    ("summary-v0", 87, 0, _parts({"partition": 0, "leader_epoch": 5})),
    ("read-negative-leader", 84, 0, _parts({"partition": 0, "leader_epoch": -1})),
    ("write-negative-epochs", 85, 1, _parts(_w(0, -1, 1, 10, 0), _w(0, 2, -1, 10, 0))),
    ("write-lower-state-epoch", 85, 1, _parts(_w(0, 1, 0, 10, 0))),
    ("write", 85, 1, _parts(_w(0, 3, 3, 12, 5, _batch(12, 14, 2, 1), _batch(15, 15, 0, 1)))),
    ("read", 84, 0, _parts({"partition": 0, "leader_epoch": 3})),
    ("read-older-leader", 84, 0, _parts({"partition": 0, "leader_epoch": 2})),
    ("write-older-leader", 85, 1, _parts(_w(0, 2, 2, 12, 0))),
    ("write-keep-start", 85, 1, _parts(_w(0, 2, 3, -1, 1, _batch(15, 16, 4, 2)))),
    ("summary-after-writes", 87, 1, _parts({"partition": 0, "leader_epoch": 0})),
    ("write-v0", 85, 0, _parts(_w(0, 2, 4, 15, 0, _batch(17, 17, 0, 1)))),
    ("write-lower-start", 85, 1, _parts(_w(0, 2, 4, 13, 7, _batch(13, 13, 2, 9)))),
    ("read-newer-leader", 84, 0, _parts({"partition": 0, "leader_epoch": 9})),
    ("summary-older-leader", 87, 1, _parts({"partition": 0, "leader_epoch": 1})),
    ("negative-partitions", 86, 0, _parts({"partition": -1})),
    ("negative-partition-summary", 87, 1, _parts({"partition": -1, "leader_epoch": 0})),
    ("delete", 86, 0, _parts({"partition": 0}, {"partition": 1})),
    ("summary-after-delete", 87, 1, _parts({"partition": 0, "leader_epoch": 7})),
    ("read-after-delete", 84, 0, _parts({"partition": 0, "leader_epoch": 7})),
]


def _state_answers(bootstrap: str) -> list:
    from conftest import ProtocolClient
    from pk.engine.protocol import ApiKey

    out = []
    with ProtocolClient(bootstrap) as c:
        md = c.call(ApiKey.METADATA, 12, {"topics": [{"name": BOTH_TOPIC, "topic_id": None}],
                                          "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        topic_id = md["topics"][0]["topic_id"]
        nowhere = uuid.UUID("0123456789abcdef0123456789abcdef")

        def coordinator_ready() -> bool:
            """(Kafka: __share_group_state made by the FindCoordinator, then its partitions
            loaded; the summary of a partition never initialized changes nothing)"""
            c.call(ApiKey.FIND_COORDINATOR, 6, {"key_type": 2, "coordinator_keys": [
                f"osg-state:{base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip('=')}:{p}" for p in range(3)]})
            r = c.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 1, {"group_id": "osg-state", "topics": [
                {"topic_id": topic_id, "partitions": [{"partition": p, "leader_epoch": 0} for p in range(3)]}]})
            return all(x["error_code"] not in RETRIABLE for x in r["results"][0]["partitions"])
        wait_for(coordinator_ready, timeout=60, what="the share coordinator")
        for name, key, version, parts in STATE_STEPS:
            if parts == "unknown":
                part = {"partition": 0, "leader_epoch": 0}
                if key == ApiKey.INITIALIZE_SHARE_GROUP_STATE:
                    part = {"partition": 0, "state_epoch": 0, "start_offset": 0}
                topics = [{"topic_id": nowhere, "partitions": [part]}]
            else:
                topics = [{"topic_id": topic_id, "partitions": parts}]
            answer = c.call(key, version, {"group_id": "osg-state", "topics": topics})
            for r in answer["results"]:
                r["topic_id"] = "TOPIC-ID" if r["topic_id"] == topic_id else str(r["topic_id"])
            out.append((name, answer))
        out.append(("empty-group", c.call(ApiKey.READ_SHARE_GROUP_STATE, 0, {"group_id": "", "topics": [
            {"topic_id": topic_id, "partitions": [{"partition": 0, "leader_epoch": 0}]}]})))
    return out


def test_share_state_apis_on_both_brokers(brokers):
    """Initialize/Read/Write/Delete/ReadSummaryShareGroupState (83-87): pk-server-start
    answers each step as Kafka 4.4's share coordinator does, field by field."""
    seen = {name: _state_answers(b) for name, b in brokers.items()}
    for (step, theirs), (_, ours) in zip(seen["kafka"], seen["pk"]):
        assert ours == theirs, step


def test_group_share_configs_on_both_brokers(kafka_tools, brokers):
    """Share-group configs through kafka-configs and pk-configs --entity-type groups print the
    same on both brokers (refusals too), and are used: with share.delivery.count.limit=2 a
    released record is delivered twice, then archived (the group's start offsets reach the log
    end), the same on both brokers."""
    alters = [["share.delivery.count.limit=2,share.auto.offset.reset=earliest"],
              ["share.heartbeat.interval.ms=1000,share.session.timeout.ms=20000"],  # (which one is reported)
              ["group.share.delivery.count.limit=3"]]
    seen = {}
    for name, b in brokers.items():
        runs = []
        for tool, group in (("kafka-configs", "osg-cfg-kt"), ("pk-configs", "osg-cfg-pk")):
            def run(*args):
                r = kafka_tools(tool, "--bootstrap-server", b, *args) if tool == "kafka-configs" \
                    else _pk(tool, "--bootstrap-server", b, *args)
                # (the first two lines: the command, then the broker's reason; not Java's stack)
                lines = [line for line in r.stderr.decode().splitlines() if line.strip() and "log4j" not in line]
                err = "\n".join(lines[:2]).replace(b, "BOOTSTRAP").replace(group, "GROUP")
                return r.returncode, r.stdout.decode().replace(group, "GROUP"), err
            for configs in alters:
                runs.append(run("--alter", "--entity-type", "groups", "--entity-name", group, "--add-config", *configs))
            runs.append(run("--describe", "--entity-type", "groups", "--entity-name", group))
        printed = _pk("pk-console-share-consumer", "--bootstrap-server", b, "--topic", BOTH_TOPIC,
                      "--group", "osg-cfg-kt", "--release", "--max-messages", str(2 * len(RECORDS)),
                      "--timeout-ms", "60000", *FORMAT, timeout=150)
        assert printed.returncode == 0, printed.stderr
        rows = sorted(printed.stdout.decode().splitlines())
        wait_for(lambda: _offsets_at_end(b, "osg-cfg-kt"), timeout=60, what="the records archived")
        seen[name] = (runs, rows)
    assert seen["pk"] == seen["kafka"]
    runs, rows = seen["pk"]
    assert runs[:len(alters) + 1] == runs[len(alters) + 1:]  # the two tools alike
    assert len(rows) == 2 * len(RECORDS) and sum("Delivery:2" in r for r in rows) == len(RECORDS), rows


def _offsets_at_end(bootstrap: str, group: str) -> bool:
    r = _pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
    rows = [line.split() for line in r.stdout.decode().splitlines() if line.startswith(group)]
    return r.returncode == 0 and len(rows) == 3 and all(row[4] == "0" for row in rows)


SPSO_TOPIC = "osg-spso"


def test_start_offsets_after_acknowledgements_on_both_brokers(kafka_tools, brokers):
    """The START-OFFSET a share group describes is the one its share coordinator last stored,
    and a share-partition stores the start it had before the acknowledgements it writes move it
    (Kafka's SharePartition writes the state, then moves its start): Kafka's console share
    consumer takes 4 of 10 records, then the other 6, on each broker, and after each run both
    brokers describe the group alike."""
    seen = {}
    for name, bootstrap in brokers.items():
        create_topic_with_leaders(bootstrap, SPSO_TOPIC)
        r = kafka_tools("kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", SPSO_TOPIC,
                        input="".join(f"r{i}\n" for i in range(10)))
        assert r.returncode == 0, r.err
        _earliest(kafka_tools, bootstrap, "osg-spso-g")
        views = []
        for count in (4, 6):
            r = kafka_tools("kafka-console-share-consumer", "--bootstrap-server", bootstrap, "--topic", SPSO_TOPIC,
                            "--group", "osg-spso-g", "--max-messages", str(count), "--timeout-ms", "60000")
            assert r.returncode == 0, r.stderr
            lag = 10 - 4 if count == 4 else 0
            wait_for(lambda: _lag(bootstrap, "osg-spso-g") == lag, what=f"lag {lag} on {name}")
            views.append(_pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group",
                             "osg-spso-g").stdout.decode())
            # the group's epochs too: each join and leave, and the partition's state initialized
            # at the first assignment (twice more in Kafka 4.4's coordinator)
            state = _pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", "osg-spso-g",
                        "--state", "--verbose")
            views.append(state.stdout.decode().replace(bootstrap, "HOST:PORT"))
        seen[name] = views
    assert seen["pk"] == seen["kafka"]


def _lag(bootstrap: str, group: str) -> int | None:
    r = _pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
    rows = [line.split() for line in r.stdout.decode().splitlines() if line.startswith(group)]
    return int(rows[0][4]) if r.returncode == 0 and len(rows) == 1 and rows[0][4].isdigit() else None
