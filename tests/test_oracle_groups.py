"""ConsumerGroupCommand against Kafka 4.4's own tool (the oracle).

One scenario is set up twice: on the session's Kafka 4.4 broker (topics, records with fixed
timestamps, a group made by committing offsets, one made by Kafka's console consumer, one with
a live confluent-kafka member) and on a bundled-engine data directory (the same topics and
records, the same commits, pk's console consumer, a live pk console consumer as the member).
Every command line then runs through

- Kafka's `kafka-consumer-groups --bootstrap-server <kafka>`,
- `pk-run-class org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server <kafka>`,
- the same pk command without --bootstrap-server on the engine's data directory,

and stdout, stderr's first line and the exit status are compared. What may differ is
normalised: the generated member ids (same length on both sides: client id `cid-1` + a UUID),
log timestamps, the coordinator's address (the engine has none: `-`). Deliberate differences
are asserted exactly as documented in README "Differences from Kafka's tools":

- Kafka's `Error: ...` lines (on stdout after a blank line, exit 0) are pk's stderr line, exit 1.
- --delete-offsets rows reporting an error make pk exit 1 (Kafka 0).
- Kafka lists the reset scenarios and the valid states from Java hash sets whose order
  changes from run to run (identity hash codes): compared as sets.
- --describe --offsets --verbose: the engine keeps no leader epoch with a commit (`-`).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import tool_path
from kafka_oracle import normalise

CLS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
P = "ocg-"
# (names whose partitions fall in different buckets of Kafka's HashMaps: rows sharing a bucket
# come in an order pk cannot know, see README)
A, B, C = P + "alpha", P + "beta", P + "gamma"
EMPTY, CONS, STABLE, NONE = P + "empty", P + "cons", P + "stable", P + "none"
# Groups the changing scenarios act on: Kafka's tool on the -k one, pk on its -p twin (the same
# commits), so that each tool meets the same state; pk's output is read with -p as -k.
XE_K, XE_P, XC_K, XC_P, XF_K, XF_P = (P + n for n in ("xe-k", "xe-p", "xc-k", "xc-p", "xf-k", "xf-p"))
TWINS = {XE_K: XE_P, XC_K: XC_P, XF_K: XF_P}
# Records are two hours old (younger than the 7-day retention, which would delete them at once
# on the engine), a minute apart.
BASE_TS = (int(time.time()) // 60 - 120) * 60_000
TOPICS = ((A, 3), (B, 2), (C, 1))
COMMITS = {(A, 0): 2, (A, 1): 3, (B, 0): 1}
GROUP_COMMITS = {EMPTY: COMMITS, XE_K: COMMITS, XE_P: COMMITS, XC_K: {(C, 0): 3}, XC_P: {(C, 0): 3}}
_MEMBER = re.compile(r"cid-1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def records():
    for topic, count in TOPICS:
        for partition in range(count):
            for i in range(5 + partition):
                yield topic, partition, f"v{i}".encode(), BASE_TS + i * 60_000


# --------------------------------------------------------------------------- set-up
def _kafka_side(kafka, kafka_tools):
    from confluent_kafka import Consumer, Producer, TopicPartition

    bootstrap = kafka.bootstrap
    for topic, count in TOPICS:
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                        "--partitions", str(count))
        assert r.returncode == 0, r.err
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    for topic, partition, value, ts in records():
        producer.produce(topic, value, partition=partition, timestamp=ts)
    assert producer.flush(30) == 0
    for group, commits in GROUP_COMMITS.items():
        deadline = time.monotonic() + 30
        while True:  # the coordinator may still be loading __consumer_offsets
            consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                                 "log_level": 0})
            try:
                consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in commits.items()],
                                asynchronous=False)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
            finally:
                consumer.close()
    r = kafka_tools("kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", C, "--group", CONS,
                    "--from-beginning", "--max-messages", "3")
    assert r.returncode == 0, r.err

    stop = threading.Event()
    member = Consumer({"bootstrap.servers": bootstrap, "group.id": STABLE, "client.id": "cid-1",
                       "auto.offset.reset": "earliest", "auto.commit.interval.ms": 100, "log_level": 0})
    member.subscribe([A, C])

    def poll():
        while not stop.is_set():
            member.poll(0.2)
        member.close()

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return stop, thread


def _engine_side(data_dir):
    from pk.engine import records as rec
    from pk.engine.engine import Engine
    from pk.engine.offsets import OffsetStore

    env = {**os.environ, "PK_DATA_DIR": data_dir}
    for topic, count in TOPICS:
        subprocess.run([tool_path("pk-topics"), "--create", "--topic", topic, "--partitions", str(count)],
                       env=env, check=True, capture_output=True)
    with Engine(data_dir) as engine:
        by_partition: dict = {}
        for topic, partition, value, ts in records():
            by_partition.setdefault((topic, partition), []).append((None, value, (), ts))
        for (topic, partition), rows in by_partition.items():
            engine.partition(topic, partition).append_batches([rec.encode_batch(rows)])
        for group in (EMPTY, XE_P, XC_P):
            OffsetStore(engine).commit(group, dict(GROUP_COMMITS[group]))
    subprocess.run([tool_path("pk-console-consumer"), "--topic", C, "--group", CONS, "--from-beginning",
                    "--max-messages", "3"], env=env, check=True, capture_output=True, timeout=60)
    member = subprocess.Popen([tool_path("pk-console-consumer"), "--include", f"{A}|{C}", "--group", STABLE,
                               "--from-beginning", "--consumer-property", "client.id=cid-1",
                               "--consumer-property", "auto.commit.interval.ms=100"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return member


def _run_pk(data_dir, *args):
    env = {**os.environ, "PK_DATA_DIR": data_dir}
    proc = subprocess.run([tool_path("pk-run-class"), CLS, *args], env=env, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _wait_stable(check, what):
    deadline = time.monotonic() + 60
    while True:
        out = check()
        if out is True:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: the group did not become Stable with its commits: {out}")
        time.sleep(0.3)


@pytest.fixture(scope="module")
def sides(kafka, kafka_tools, tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("oracle-groups"))
    stop, thread = _kafka_side(kafka, kafka_tools)
    member = _engine_side(data_dir)
    try:
        def lag_zero(run):
            def check():  # Stable, every partition assigned and committed up to its end
                offsets = run("--describe", "--group", STABLE)
                lags = [line.split()[5] for line in offsets.splitlines()[2:] if line.strip()]
                return True if len(lags) == 4 and set(lags) == {"0"} else offsets
            return check

        _wait_stable(lag_zero(lambda *a: kafka_tools("kafka-consumer-groups", "--bootstrap-server",
                                                     kafka.bootstrap, *a).out), "Kafka")
        _wait_stable(lag_zero(lambda *a: _run_pk(data_dir, *a)[1]), "engine")
        yield Sides(kafka, kafka_tools, data_dir)
    finally:
        stop.set()
        thread.join(10)
        member.terminate()
        try:
            member.wait(15)
        except subprocess.TimeoutExpired:
            member.kill()
            member.wait()


class Sides:
    def __init__(self, kafka, kafka_tools, data_dir):
        self.kafka = kafka
        self.tools = kafka_tools
        self.data_dir = data_dir

    def norm(self, text: str) -> str:
        for k, p in TWINS.items():
            text = text.replace(p, k)
        text = _MEMBER.sub("cid-1-<uuid-------------------------->", text)
        coordinator = self.kafka.bootstrap + "  (0)"
        text = text.replace(coordinator, "-  (0)".ljust(len(coordinator)))  # same column width
        return normalise(text)

    def run(self, args, *, files=None):
        """(kafka, pk on the broker, pk on the engine), each (rc, stdout, stderr's first line)."""
        b = ("--bootstrap-server", self.kafka.bootstrap)
        k = self.tools("kafka-consumer-groups", *b, *args)
        args = [TWINS.get(a, a) for a in args]
        rc, out, err = _run_pk(self.data_dir, *b, *args)
        erc, eout, eerr = _run_pk(self.data_dir, *args)
        if "--list" in args:  # the shared broker has other modules' groups; Kafka lists in broker order
            k.stdout = _ours(k.out).encode()
            out, eout = _ours(out), _ours(eout)
        first = lambda e: e.split("\n", 1)[0]  # noqa: E731
        return ((k.returncode, self.norm(k.out), self.norm(k.err_first)),
                (rc, self.norm(out), self.norm(first(err))),
                (erc, self.norm(eout), self.norm(first(eerr))))


def _ours(text: str) -> str:
    """A --list output's header and this module's groups, sorted (pk sorts its listings). The
    table's columns are as wide as the longest group id on the cluster, and the shared broker
    holds other modules' groups: runs of padding become one space."""
    lines = text.splitlines()
    if not lines:
        return text
    head = [lines[0]] if lines[0].startswith("GROUP ") else []
    mine = sorted(line for line in lines[len(head):] if line.startswith(P) and not line.startswith(P + "x"))
    return "".join(re.sub(r" {2,}", " ", line) + "\n" for line in head + mine)


def _kafka_error_moved(kafka):
    """Kafka's `\\nError: <line>` on stdout (exit 0) as pk prints it: the line on stderr, exit 1."""
    rc, out, err = kafka
    m = re.search(r"\nError: [^\n]*\n", out)
    if not m:
        return kafka
    line = m.group(0)[1:-1]
    return (1, out[:m.start()] + out[m.end():], line)


# --------------------------------------------------------------------------- scenarios
# Each: args, and how Kafka's answer maps onto pk's ("same": byte for byte; "error": Kafka's
# Error line moved to stderr with exit 1; "set": the message's bracketed list compared as a set;
# "rows-error": Kafka exit 0 where a --delete-offsets row reports an error, pk exit 1).
def _utc(ms: int, zone: str = "") -> str:
    tz = datetime.timezone(datetime.timedelta(hours=1)) if zone else datetime.timezone.utc
    return datetime.datetime.fromtimestamp(ms / 1000, tz).strftime("%Y-%m-%dT%H:%M:%S.000") + zone


READ_ONLY = [
    (["--list"], "same"),
    (["--list", "--state"], "same"),
    (["--list", "--state", "Stable"], "same"),
    (["--list", "--state", "stable,EMPTY"], "same"),
    (["--list", "--state", ","], "same"),
    (["--list", "--type"], "same"),
    (["--list", "--type", "classic"], "same"),
    (["--list", "--type", "consumer"], "same"),
    (["--list", "--type", "Classic,consumer", "--state", "empty"], "same"),
    (["--list", "--type", "bogus"], "same"),
    (["--list", "--state", "bogus"], "set"),
    (["--describe", "--group", STABLE], "same"),
    (["--describe", "--group", EMPTY], "same"),
    (["--describe", "--group", EMPTY, "--offsets"], "same"),
    (["--describe", "--group", EMPTY, "--offsets", "--verbose"], "same"),
    (["--describe", "--group", EMPTY, "--group", CONS], "same"),
    (["--describe", "--group", STABLE, "--offsets", "--verbose"], "same"),
    (["--describe", "--group", STABLE, "--members"], "same"),
    (["--describe", "--group", STABLE, "--members", "--verbose"], "same"),
    (["--describe", "--group", EMPTY, "--members"], "same"),
    (["--describe", "--group", EMPTY, "--members", "--verbose"], "same"),
    (["--describe", "--group", STABLE, "--state"], "same"),
    (["--describe", "--group", STABLE, "--state", "--verbose"], "same"),
    (["--describe", "--group", EMPTY, "--state"], "same"),
    (["--describe", "--group", NONE], "error"),
    (["--describe", "--group", NONE, "--members"], "error"),
    (["--describe", "--group", NONE, "--state"], "error"),
    (["--describe", "--group", STABLE, "--group", NONE], "error"),
    (["--describe", "--group", EMPTY, "--members", "--state"], "same"),
    (["--describe", "--group", EMPTY, "--state", "Stable"], "same"),
    (["--describe", "--group", EMPTY, "--type"], "same"),
    (["--describe"], "set"),
    (["--list", "--group", EMPTY], "same"),
    (["--list", "--describe"], "set"),
    (["--list", "--verbose"], "same"),
    (["--list", "--bogus"], "same"),
    ([], "same"),
    (["--validate-regex", "ocg.*"], "same"),
    (["--validate-regex", "ocg[.*"], "same"),
    # resets, dry runs (every scenario)
    (["--reset-offsets", "--group", EMPTY, "--topic", A, "--to-earliest", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--topic", A, "--to-earliest"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--topic", f"{A}:0,1", "--to-latest", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-current", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-offset", "4", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-offset", "40", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--shift-by", "-1", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--shift-by", "-10", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-datetime", _utc(BASE_TS + 90_000),
      "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-datetime", _utc(BASE_TS + 120_000, "+01:00"),
      "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--by-duration", "PT1M", "--dry-run"], "same"),
    # (older than every record: the first offsets, no fallback)
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--by-duration", "PT2H30M", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-earliest", "--dry-run", "--export"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--group", CONS, "--all-topics", "--to-latest", "--dry-run",
      "--export"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--group", CONS, "--all-topics", "--to-latest", "--dry-run"], "same"),
    (["--reset-offsets", "--group", NONE, "--topic", C, "--to-earliest", "--dry-run"], "same"),
    (["--reset-offsets", "--group", STABLE, "--all-topics", "--to-earliest", "--dry-run"], "error"),
    # bad reset input
    (["--reset-offsets", "--group", EMPTY, "--to-earliest", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--dry-run"], "set"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-earliest", "--to-latest"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-earliest", "--to-latest", "--dry-run"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--shift-by", "1", "--to-offset", "1", "--dry-run"],
     "same"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-earliest", "--dry-run", "--execute"], "same"),
    (["--reset-offsets", "--all-topics", "--to-earliest"], "same"),
    (["--reset-offsets", "--group", EMPTY, "--topic", f"{A}:7", "--to-earliest", "--dry-run"], "error"),
    (["--reset-offsets", "--group", EMPTY, "--topic", P + "nope", "--to-earliest", "--dry-run"], "error"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-datetime", "bogus", "--dry-run"], "error"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--by-duration", "bogus", "--dry-run"], "error"),
    (["--reset-offsets", "--group", EMPTY, "--all-topics", "--to-offset", "x", "--dry-run"], "error"),
    (["--reset-offsets", "--group", EMPTY, "--from-file", "/nonexistent/plan.csv", "--dry-run"], "error"),
    # deletes that change nothing
    (["--delete", "--group", NONE], "error"),
    (["--delete", "--group", STABLE], "error"),
    (["--delete", "--group", NONE, "--group", STABLE], "error"),
    (["--delete", "--group", EMPTY, "--topic", A], "same"),
    (["--delete-offsets", "--group", NONE, "--topic", A], "error"),
    (["--delete-offsets", "--group", STABLE, "--topic", A], "error"),
    (["--delete-offsets", "--group", EMPTY, "--topic", P + "nope"], "rows-error"),
    (["--delete-offsets", "--group", EMPTY], "set"),
]

CHANGING = [
    (["--reset-offsets", "--group", XE_K, "--topic", A, "--to-offset", "1", "--execute"], "same"),
    (["--describe", "--group", XE_K], "same"),
    (["--reset-offsets", "--group", XE_K, "--topic", f"{B}:1", "--to-earliest", "--execute"], "same"),
    (["--reset-offsets", "--group", XE_K, "--all-topics", "--shift-by", "2", "--execute"], "same"),
    (["--describe", "--group", XE_K], "same"),
    (["--reset-offsets", "--group", XF_K, "--topic", C, "--to-latest", "--execute"], "same"),
    (["--describe", "--group", XF_K], "same"),
    (["--reset-offsets", "--group", XE_K, "--group", XC_K, "--all-topics", "--to-earliest", "--execute",
      "--export"], "same"),
    (["--delete-offsets", "--group", XE_K, "--topic", f"{A}:0"], "same"),
    (["--delete-offsets", "--group", XE_K, "--topic", B], "same"),
    (["--describe", "--group", XE_K], "same"),
    (["--delete", "--group", XF_K], "same"),
    (["--delete", "--group", XC_K, "--group", XE_K], "same"),
    (["--describe", "--group", XC_K], "error"),
    (["--delete-offsets", "--group", XC_K, "--topic", C], "error"),
]


def _bracket_set(text: str) -> str:
    """A message ending in a list from a Java hash set (`...: [[a], [b]]`, `...: [a], [b]` or
    `...: A, B, C`) with its items sorted: Kafka's order changes from run to run."""
    m = re.search(r": (\[?)((?:\[[^\[\]]+\]|[A-Za-z]+)(?:, (?:\[[^\[\]]+\]|[A-Za-z]+))*)(\]?)$", text)
    if not m:
        return text
    return text[:m.start()] + ": " + m.group(1) + ", ".join(sorted(m.group(2).split(", "))) + m.group(3)


def _expect(kafka, how):
    rc, out, err = kafka
    if how == "error":
        return _kafka_error_moved(kafka)
    if how == "rows-error":
        return (1, out, err)
    return kafka


def _check(sides, scenarios):
    report = []
    for args, how in scenarios:
        k, pb, pe = sides.run(args)
        expected = _expect(k, how)
        if how == "set":
            expected = (expected[0], expected[1], _bracket_set(expected[2]))
            pb = (pb[0], pb[1], _bracket_set(pb[2]))
            pe = (pe[0], pe[1], _bracket_set(pe[2]))
        if pb != expected:
            report.append(f"pk/broker {json.dumps(args)}\n  kafka: {expected!r}\n  pk:    {pb!r}")
        engine_expected = pb
        if not args:  # no arguments at all: the tool's description, as Kafka's tool without arguments
            bare = sides.tools("kafka-consumer-groups")
            engine_expected = (bare.returncode, bare.out, bare.err_first)
        if "--verbose" in args and "--offsets" in args:  # the engine keeps no leader epochs
            engine_expected = (pb[0], re.sub(r"(?m)^(\S+ +\S+ +\d+ +)\d+( +)", r"\1-\2", pb[1]), pb[2])
        if pe != engine_expected:
            report.append(f"engine {json.dumps(args)}\n  pk/broker: {engine_expected!r}\n  engine:    {pe!r}")
    assert not report, "\n".join(report)


def test_read_only_scenarios(sides):
    _check(sides, READ_ONLY)


def test_changing_scenarios(sides, tmp_path):
    _check(sides, CHANGING)


def test_reset_from_exported_file(sides, tmp_path):
    """--export's CSV fed back through --from-file (single-group and multi-group formats)."""
    b = ("--bootstrap-server", sides.kafka.bootstrap)
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{A},1,2\n{A},2,1\n")
    k = sides.tools("kafka-consumer-groups", *b, "--reset-offsets", "--group", P + "file", "--from-file", str(plan),
                    "--dry-run")
    pk_out = _run_pk(sides.data_dir, *b, "--reset-offsets", "--group", P + "file", "--from-file", str(plan),
                     "--dry-run")
    engine = _run_pk(sides.data_dir, "--reset-offsets", "--group", P + "file", "--from-file", str(plan),
                     "--dry-run")
    assert (k.returncode, k.out) == pk_out[:2] == engine[:2]
    plan.write_text(f"{P}file,{A},0,3\n{P}file2,{C},0,1\n")
    args = ("--reset-offsets", "--group", P + "file", "--group", P + "file2", "--from-file", str(plan), "--execute")
    k = sides.tools("kafka-consumer-groups", *b, *args)
    assert (k.returncode, k.out) == _run_pk(sides.data_dir, *b, *args)[:2]
    assert (k.returncode, k.out) == _run_pk(sides.data_dir, *args)[:2]
    args = ("--describe", "--group", P + "file2")
    k = sides.tools("kafka-consumer-groups", *b, *args)
    assert (k.returncode, k.out, k.err) == _run_pk(sides.data_dir, *b, *args)
    assert (k.returncode, k.out, k.err) == _run_pk(sides.data_dir, *args)


def test_both_class_names_run_the_tool(sides):
    old = subprocess.run([tool_path("pk-run-class"), "kafka.admin.ConsumerGroupCommand", "--list"],
                         env={**os.environ, "PK_DATA_DIR": sides.data_dir}, capture_output=True)
    new = _run_pk(sides.data_dir, "--list")
    assert (old.returncode, old.stdout.decode()) == new[:2]
    assert STABLE in new[1]


RE2_CASES = [")", "(a))", "a|*", "x{2}{3}", "x**", "(?P<n>x)(?P<n>y)", "(?P<>x)", "\\Q", "\\Qab\\E", "\\z", "\\Z",
             "\\b", "[a", "[]a]", "[^]", "\\x{110000}", "(?i", "(?z)", "x{,3}", "x{3,}", "\\C", "\\pZ", "\\p{Greek}",
             "\\p{Foo}", "[\\d-z]", "a{2", "\\e", "\\0", "\\1", "(?i)(?s)x", "(?i-s:x)", "(?-)", "((((a", "x{1000}",
             "x{2}*", "x*{2}", "(?P<n!>x)", "(?<n", "\\pX", "[a-\\d]", "(?:", "**", "|", "()", "[[:alpha:]]",
             "[[:^alpha:]]", "\\x4", "\\x{4", "\\_", "\\-", "\\ ", "a)", "*a", "a**", "a\\", "[b-a]", "(?P<n>x)",
             "\\8", "(?i)x", "(a", "x{2,1}", "(?<n>x)", "a++", "\\pN", "[[:foo:]]", "(?=x)", "x{1001}", "", "ot.*",
             "ot[.*", "(?i)*", "a*?", "a*??", "[a-]", "[-a]", "[\\b]", "\\12", "[\\x41-\\x5A]", "[z-a-]",
             "x{1001,}", "(?U)a+", "\\P{Greek}", "\\p{^Greek}", "[[:word:]]", "(|a)*", "^*", "$+"]


def test_validate_regex_follows_re2j(kafka_tools):
    """--validate-regex's verdicts and messages (re2j's) for valid and broken expressions; the
    tool itself runs in the scenarios above, the checker in-process here (one JVM call each)."""
    from pk.commands.consumer_groups import validate_regex

    wrong = [(rx, k, validate_regex(rx)) for rx in RE2_CASES
             for k in [kafka_tools("kafka-consumer-groups", "--validate-regex", rx).out.rstrip("\n")]
             if k != validate_regex(rx)]
    assert not wrong
    k = kafka_tools("kafka-consumer-groups", "--validate-regex", "a", "--validate-regex", "b")
    rc, out, err = _run_pk(os.devnull, "--validate-regex", "a", "--validate-regex", "b")
    assert (rc, out, err.split("\n", 1)[0]) == (k.returncode, k.out, k.err_first)
