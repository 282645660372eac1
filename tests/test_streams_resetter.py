"""pk-streams-application-reset against a pk-server-start subprocess: offsets committed for the
application's group, intermediate topics to their end, internal topics deleted (and kept with
--dry-run), a running application refused, and Kafka's usage errors."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import BrokerProcess, Runner, tool_path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("streams-reset")
    b = BrokerProcess(str(root / "data")).start()
    pk = Runner(str(root / "pk-data"))
    for topic, n in (("sr-in", 2), ("sr-mid", 1), ("app-agg-changelog", 1), ("app-by-key-repartition", 1),
                     ("other-x-changelog", 1)):
        r = pk("pk-topics", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions", str(n))
        assert r.returncode == 0, r.err
    for topic in ("sr-in", "sr-mid"):
        r = pk("pk-verifiable-producer", "--topic", topic, "--bootstrap-server", b.bootstrap, "--max-messages", "10",
               "--repeating-keys", "4")
        assert r.returncode == 0, r.err
    try:
        yield b, pk
    finally:
        b.stop()


def committed(bootstrap: str, group: str, tps) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return {(tp.topic, tp.partition): tp.offset
                for tp in c.committed([TopicPartition(t, p) for t, p in tps], timeout=10)}
    finally:
        c.close()


def topics(pk, b) -> set[str]:
    return set(pk("pk-topics", "--bootstrap-server", b.bootstrap, "--list").out.split())


def test_reset_commits_offsets_and_deletes_internal_topics(server):
    b, pk = server
    tps = [("sr-in", 0), ("sr-in", 1), ("sr-mid", 0)]
    dry = pk("pk-streams-application-reset", "--bootstrap-server", b.bootstrap, "--application-id", "app",
             "--input-topics", "sr-in", "--to-offset", "2", "--intermediate-topics", "sr-mid", "--dry-run")
    assert dry.returncode == 0, dry.err
    assert dry.out.splitlines()[0].startswith("----Dry run")
    assert "Deleting inferred internal topics [" in dry.out and "app-agg-changelog" in dry.out
    assert {"app-agg-changelog", "app-by-key-repartition"} <= topics(pk, b)
    assert all(o < 0 for o in committed(b.bootstrap, "app", tps).values())  # nothing committed by a dry run
    r = pk("pk-streams-application-reset", "--bootstrap-server", b.bootstrap, "--application-id", "app",
           "--input-topics", "sr-in", "--to-offset", "2", "--intermediate-topics", "sr-mid")
    assert (r.returncode, r.err) == (0, ""), r.err
    assert r.out == dry.out.split("\n", 1)[1]  # the plan the dry run showed, without its header
    ends = {tp: pk("pk-get-offsets", "--bootstrap-server", b.bootstrap, "--topic", tp[0], "--partitions", str(tp[1]))
            .out.strip().rsplit(":", 1)[1] for tp in tps}
    got = committed(b.bootstrap, "app", tps)
    assert got[("sr-mid", 0)] == int(ends[("sr-mid", 0)])
    assert all(got[tp] == min(2, int(ends[tp])) for tp in tps[:2])
    left = topics(pk, b)
    assert "app-agg-changelog" not in left and "app-by-key-repartition" not in left and "other-x-changelog" in left
    r = pk("pk-streams-application-reset", "--bootstrap-server", b.bootstrap, "--application-id", "app",
           "--input-topics", "sr-in", "--shift-by", "-1")
    assert r.returncode == 0, r.err
    assert all(committed(b.bootstrap, "app", tps[:2])[tp] == max(0, min(2, int(ends[tp])) - 1) for tp in tps[:2])


def test_missing_topics_make_the_status_1(server):
    b, pk = server
    r = pk("pk-streams-application-reset", "--bootstrap-server", b.bootstrap, "--application-id", "app2",
           "--input-topics", "nope", "--dry-run")
    assert r.returncode == 1 and "Following input topics are not found, skipping them\nTopic: nope\n" in r.out


def test_a_running_application_is_refused(server):
    b, pk = server
    proc = subprocess.Popen([tool_path("pk-verifiable-consumer"), "--topic", "sr-in", "--group-id", "live",
                             "--bootstrap-server", b.bootstrap], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        while json.loads(proc.stdout.readline())["name"] != "partitions_assigned":
            pass
        r = pk("pk-streams-application-reset", "--bootstrap-server", b.bootstrap, "--application-id", "live",
               "--input-topics", "sr-in")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert r.returncode == 1 and r.out == ""
    assert r.err.startswith("ERROR: java.lang.IllegalStateException: Consumer group 'live' is still active and has "
                            "following members: [(memberId=") and r.err.count("\n") == 1


def stopped_member(bootstrap: str, group: str, topic: str) -> subprocess.Popen:
    """A member that joined the group and then stopped (SIGSTOP) with a long session: what
    --force is for. The caller kills it."""
    import signal

    proc = subprocess.Popen([tool_path("pk-verifiable-consumer"), "--topic", topic, "--group-id", group,
                             "--session-timeout", "45000", "--bootstrap-server", bootstrap],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    while json.loads(proc.stdout.readline())["name"] != "partitions_assigned":
        pass
    proc.send_signal(signal.SIGSTOP)
    return proc


def test_force_removes_the_members_first(server):
    b, pk = server
    member = stopped_member(b.bootstrap, "stopped", "sr-in")
    try:
        r = pk("pk-streams-application-reset", "--bootstrap-server", b.bootstrap, "--application-id", "stopped",
               "--input-topics", "sr-in", "--to-offset", "1", "--force")
        assert (r.returncode, r.err) == (0, ""), r.err
        assert r.out.splitlines()[0] == "Force deleting all active members in the group: stopped"
        assert "Reset-offsets for input topics [sr-in]" in r.out
        assert committed(b.bootstrap, "stopped", [("sr-in", 0), ("sr-in", 1)]) == {("sr-in", 0): 1, ("sr-in", 1): 1}
        described = pk("pk-consumer-groups", "--bootstrap-server", b.bootstrap, "--describe", "--members", "--group",
                       "stopped")
        assert "Consumer group 'stopped' has no active members." in described.err
    finally:
        member.kill()
        member.wait(timeout=30)


@pytest.mark.parametrize("args,err", [
    (["--input-topics", "t"], "Missing required option(s) [application-id]"),
    (["--application-id", "a", "--to-earliest", "--to-latest"],
     'Option "[to-earliest]" can\'t be used with option "[to-latest]"'),
    (["--application-id", "a", "--nope"], "nope is not a recognized option"),
])
def test_usage_errors(server, args, err):
    _, pk = server
    r = pk("pk-streams-application-reset", *args)
    assert (r.returncode, r.out, r.err) == (1, "", err + "\n")
