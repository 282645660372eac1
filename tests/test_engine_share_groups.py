"""Share groups (KIP-932) on the bundled engine: pk-console-share-consumer and pk-share-groups
without --bootstrap-server, several processes on one data directory sharing a group through
its files (engine/share_groups.py).

Three members split a topic, each record printed once; --release delivers a record again with
a growing delivery count until group.share.delivery.count.limit archives it; --reject never
delivers it again; a member SIGKILLed while holding records: once their acquisition locks
time out, another member gets every one of them (delivery count 2); pk-share-groups prints on
the engine what it prints against pk-server-start for the same scenario (member ids, the
coordinator's address and the names normalised).

The module's pk-server-start runs on the engine's data directory with the broker bound
group.share.min.record.lock.duration.ms lowered to 1 s (a Kafka broker's server.properties
may): a group config set through it (`pk-configs --bootstrap-server`) is kept in the data
directory, where the engine's members read it. The engine alone checks group configs against
Kafka's default bounds (15 s at the least for the lock)."""

from __future__ import annotations

import re
import selectors
import signal
import subprocess
import uuid

import pytest

from conftest import BrokerProcess, tool_path
from waits import wait_for

DELIVERY = ["--formatter-property", "print.offset=true", "--formatter-property", "print.delivery=true"]


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    server = BrokerProcess(str(tmp_path_factory.mktemp("engine-share") / "data"),
                           overrides={"group.share.min.record.lock.duration.ms": "1000"}).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def data_dir(pk_server) -> str:
    return pk_server.data_dir


def _pk(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([tool_path(args[0]), *args[1:]], capture_output=True, input=input, timeout=timeout)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _topic(where: list[str], lines: list[str], partitions: int = 1) -> str:
    """A new topic holding `lines`, made with pk's tools on `where` (--data-dir D or
    --bootstrap-server B)."""
    topic = _name("esg-t")
    r = _pk("pk-topics", *where, "--create", "--topic", topic, "--partitions", str(partitions))
    assert r.returncode == 0, r.stderr
    if lines:
        r = _pk("pk-console-producer", *where, "--topic", topic, input="".join(f"{x}\n" for x in lines).encode())
        assert r.returncode == 0, r.stderr
    return topic


def _group(where: list[str], **configs: str) -> str:
    """A new share group starting at the earliest records, with these group configs."""
    group = _name("esg-g")
    settings = {"share.auto.offset.reset": "earliest", **configs}
    r = _pk("pk-configs", *where, "--alter", "--entity-type", "groups", "--entity-name", group,
            "--add-config", ",".join(f"{k}={v}" for k, v in settings.items()))
    assert r.returncode == 0, r.stderr
    return group


def _rows(out: bytes) -> list[tuple[int, int, str]]:
    """(offset, delivery count, value) of each line printed with DELIVERY."""
    rows = []
    for line in out.decode().splitlines():
        offset, delivery, value = line.split("\t")
        rows.append((int(offset.split(":")[1]), int(delivery.split(":")[1]), value))
    return rows


def test_three_members_split_a_topic_each_record_once(data_dir, tmp_path):
    """Three processes, each to print 100 of 300 records, 10 acquired per poll: together they
    print every record exactly once (a member's unprinted records are released at its close
    and go to the others)."""
    where = ["--data-dir", data_dir]
    topic = _topic(where, [f"r{i}" for i in range(300)])
    group = _group(where)
    outs = [tmp_path / f"member{i}.out" for i in range(3)]
    procs = []
    for out in outs:
        with open(out, "wb") as f, open(str(out) + ".err", "wb") as err:
            procs.append(subprocess.Popen(
                [tool_path("pk-console-share-consumer"), *where, "--topic", topic, "--group", group, *DELIVERY,
                 "--max-messages", "100", "--timeout-ms", "60000", "--command-property", "max.poll.records=10"],
                stdout=f, stderr=err))
    for proc, out in zip(procs, outs):
        assert proc.wait(120) == 0, (tmp_path / (out.name + ".err")).read_text()
    printed = [_rows(out.read_bytes()) for out in outs]
    assert [len(p) for p in printed] == [100, 100, 100]
    assert sorted(o for rows in printed for o, _, _ in rows) == list(range(300))  # each once
    assert all(v == f"r{o}" for rows in printed for o, _, v in rows)
    r = _pk("pk-share-groups", *where, "--describe", "--group", group)
    # (no lag; the START-OFFSET stored lags one write behind, and which write came last
    # depends on how the three members' polls interleaved)
    words = r.stdout.decode().split()
    assert words[:8] == ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG", group, topic, "0"], r.stderr
    assert 0 <= int(words[8]) <= 300 and words[9] == "0", r.stderr
    r = _pk("pk-groups", *where, "--list", "--share")  # listed with the engine's other groups
    assert [group, "Share", "share"] in [line.split() for line in r.stdout.decode().splitlines()], r.stderr


def test_release_redelivers_up_to_the_delivery_count_limit_and_reject_never(data_dir):
    where = ["--data-dir", data_dir]
    topic = _topic(where, ["a", "b"])
    group = _group(where, **{"share.delivery.count.limit": "3"})
    # the engine's group configs (pk-configs without --bootstrap-server), within Kafka's default bounds
    r = _pk("pk-configs", *where, "--describe", "--entity-type", "groups", "--entity-name", group)
    assert "  share.delivery.count.limit=3 sensitive=false" in r.stdout.decode(), r.stderr
    r = _pk("pk-configs", *where, "--alter", "--entity-type", "groups", "--entity-name", group,
            "--add-config", "share.record.lock.duration.ms=1000")
    assert r.returncode == 1
    assert r.stderr.decode().splitlines()[-1].endswith(
        "InvalidConfigurationException: share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive.")
    r = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, "--release", *DELIVERY,
            "--max-messages", "6", "--timeout-ms", "30000")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout) == [(0, 1, "a"), (1, 1, "b"), (0, 2, "a"), (1, 2, "b"), (0, 3, "a"), (1, 3, "b")]
    # the third release archived them: nothing is left to deliver
    after = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, "--timeout-ms", "300")
    assert (after.returncode, after.stdout) == (0, b""), after.stderr
    assert after.stderr.decode().splitlines()[-1] == "Processed a total of 0 messages"

    group = _group(where)
    r = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, "--reject", *DELIVERY,
            "--max-messages", "2", "--timeout-ms", "30000")
    assert (r.returncode, _rows(r.stdout)) == (0, [(0, 1, "a"), (1, 1, "b")]), r.stderr
    after = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, "--timeout-ms", "300")
    assert (after.returncode, after.stdout) == (0, b""), after.stderr
    r = _pk("pk-share-groups", *where, "--describe", "--group", group)
    # partition, start offset, lag: the write of the rejects stored the start they moved (0), as
    # Kafka's share coordinator would
    assert r.stdout.decode().split()[-3:] == ["0", "0", "0"], r.stderr


def test_killed_member_records_go_to_another_after_the_lock(data_dir, pk_server):
    """SIGKILL a member holding every record of the topic: it is held mid-batch by its stdout,
    a pipe this test does not drain (it printed a record, so it holds the batch, and cannot
    acknowledge any of it). Once the locks time out, another member gets all of them with
    delivery count 2: none lost."""
    where = ["--data-dir", data_dir]
    pad = "x" * 4000  # 50 records of 4 kB: more than a pipe holds
    lines = [f"k{i}-{pad}" for i in range(50)]
    topic = _topic(where, lines)
    group = _group(["--bootstrap-server", pk_server.bootstrap], **{"share.record.lock.duration.ms": "1000"})
    proc = subprocess.Popen([tool_path("pk-console-share-consumer"), *where, "--topic", topic, "--group", group],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            assert sel.select(60), "the first member printed nothing"
        assert proc.stdout.readline().decode().strip() == lines[0]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
    r = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, *DELIVERY,
            "--max-messages", "50", "--timeout-ms", "30000")
    assert r.returncode == 0, r.stderr
    again = _rows(r.stdout)
    assert sorted(o for o, _, _ in again) == list(range(50))
    assert {d for _, d, _ in again} == {2}
    assert [v for _, _, v in sorted(again)] == lines


def _normalised(text: str, names: dict[str, str]) -> str:
    for name, placeholder in names.items():
        text = text.replace(name, placeholder)
    # the coordinator's cell, padded (the engine has no address: "-")
    text = re.sub(r"(?:127\.0\.0\.1:\d+|-)  \(0\) +", "COORDINATOR  (0) ", text)
    # a member id (22 characters of url-safe base64) in the CONSUMER-ID column
    return re.sub(r"^(GROUP +)(?!CONSUMER-ID)[A-Za-z0-9_-]{22} ", r"\1MEMBER-ID ", text, flags=re.M)


def _run_view(where: list[str], names: dict[str, str], *args: str) -> tuple:
    r = _pk("pk-share-groups", *where, *args)
    out = r.stdout.decode()
    if args[0] == "--list":  # other tests' groups may be listed too
        out = "\n".join(line for line in out.splitlines() if line.startswith(("GROUP ", *names)))
    return r.returncode, _normalised(out, names), _normalised(r.stderr.decode(), names)


def _members(where: list[str], group: str) -> int:
    r = _pk("pk-share-groups", *where, "--describe", "--group", group, "--state")
    lines = r.stdout.decode().split("\n")
    return int(lines[2].split()[-1]) if r.returncode == 0 and len(lines) > 2 and lines[2].startswith(group) else -1


def test_share_groups_prints_the_same_on_the_engine_and_on_pk_server_start(data_dir, pk_server, tmp_path):
    """The same scenario on both: 10 records, a member reads 4 and leaves: --describe --verbose
    (offsets); a member joins: --describe --members/--state --verbose, --list --state; it leaves
    (SIGTERM): --describe --state, --delete of the group and of an unknown one, --describe of
    the deleted one."""
    views = []
    for where in (["--data-dir", data_dir], ["--bootstrap-server", pk_server.bootstrap]):
        topic = _topic(where, [f"m{i}" for i in range(10)])
        group = _group(where)
        names = {group: "GROUP", topic: "TOPIC"}
        r = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, "--max-messages", "4",
                "--timeout-ms", "30000")
        assert (r.returncode, r.stdout) == (0, b"m0\nm1\nm2\nm3\n"), r.stderr
        view = [_run_view(where, names, "--describe", "--group", group, "--verbose")]
        live = subprocess.Popen([tool_path("pk-console-share-consumer"), *where, "--topic", topic, "--group", group],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: _members(where, group) == 1, timeout=60, what="the live member in the group")
            view += [_run_view(where, names, "--describe", "--group", group, "--members", "--verbose"),
                     _run_view(where, names, "--describe", "--group", group, "--state", "--verbose"),
                     _run_view(where, names, "--list", "--state", "Stable")]
        finally:
            live.terminate()  # SIGTERM: it acknowledges what it holds, leaves the group (a call
            live.wait(60)     # answered before it exits) and exits
        for args in (["--describe", "--group", group, "--state"], ["--delete", "--group", group],
                     ["--delete", "--group", group + "-nosuch"], ["--describe", "--group", group]):
            view.append(_run_view(where, names, *args))
        views.append(view)
    assert views[0] == views[1]
    assert views[0][0][1].split() == ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG",
                                      "GROUP", "TOPIC", "0", "0", "4", "6"]


def test_reset_and_delete_offsets_on_the_engine(data_dir):
    """--reset-offsets and --delete-offsets, served by the engine (not yet by pk-server-start),
    print what Kafka 4.4's kafka-share-groups prints for the same steps on a Kafka 4.4 broker
    (its texts, taken from a run of it); a reset group starts over where it was reset to."""
    where = ["--data-dir", data_dir]
    topic = _topic(where, ["a", "b", "c"])
    other = _topic(where, [])
    group = _group(where)
    r = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, "--max-messages", "3",
            "--timeout-ms", "30000")
    assert (r.returncode, r.stdout) == (0, b"a\nb\nc\n"), r.stderr
    names = {group + "x": "Gx", group: "G", other: "U", topic: "T"}
    steps = [(["--delete-offsets", "--group", group, "--topic", other],
              "\nTOPIC           STATUS\nU Error: There is no offset information to delete.\n"),
             (["--delete-offsets", "--group", group, "--topic", "esg-nosuch"],
              "\nTOPIC           STATUS\nesg-nosuch      Error: This server does not host this topic-partition.\n"),
             (["--delete-offsets", "--group", group + "x", "--topic", topic],
              "\nError: Group Gx not found.\n\nTOPIC           STATUS\nT Error: Group Gx not found.\n"),
             (["--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute"],
              "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\nG T 0          0\n"),
             (["--describe", "--group", group],
              "\nGROUP           TOPIC           PARTITION  START-OFFSET  LAG\nG T 0          0             3\n")]
    for args, expected in steps:
        r = _pk("pk-share-groups", *where, *args)
        text = r.stdout.decode()
        for name, short in names.items():  # the names' padding goes with them
            text = re.sub(re.escape(name) + " *", short + " ", text)
        assert (r.returncode, text) == (0, expected), r.stderr
    r = _pk("pk-console-share-consumer", *where, "--topic", topic, "--group", group, *DELIVERY,
            "--max-messages", "3", "--timeout-ms", "30000")
    assert (r.returncode, _rows(r.stdout)) == (0, [(0, 1, "a"), (1, 1, "b"), (2, 1, "c")]), r.stderr
    r = _pk("pk-share-groups", *where, "--delete-offsets", "--group", group, "--topic", topic)
    assert r.stdout.decode().split() == ["TOPIC", "STATUS", topic, "Successful"]
    r = _pk("pk-share-groups", *where, "--describe", "--group", group)
    assert r.stdout.decode() == f"\nShare group '{group}' has no offset information.\n"
