"""pk-share-consumer-perf-test, pk-verifiable-share-consumer, pk-dump-log
--share-group-state-decoder and the console consumer's ShareGroupStateMessageFormatter against
Kafka 4.4's own tools, on the session's Kafka 4.4 broker and on a pk-server-start.

The perf figures differ from run to run, so outputs are compared by SHAPE as
test_oracle_perf.py does for kafka-consumer-perf-test: every number blanked, the same lines
with the same words. Each run reads in a share group of its own set to
share.auto.offset.reset=earliest (a group config), so that it reads the records produced by the
fixture. Option errors give Kafka's first stderr line (its help table follows) as pk's only
line; an error of the run gives the header on stdout, then the exception's message.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import os
import re
import shutil

import pytest

from conftest import Runner
from kafka_oracle import normalise
from waits import create_topic_with_leaders, wait_for

P = "ost-"
PERF = "org.apache.kafka.tools.ShareConsumerPerformance"
RECORDS = 120
NUMBER = re.compile(r"-?\d+(\.\d+)?|NaN|Infinity")
DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}")
HEADER = "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms"
_groups = itertools.count()
# The wait for records, where every record must be read: a share group's first assignment can
# take Kafka's broker several heartbeats (5 s each) on a loaded machine; a run still ends as soon
# as --num-records arrived.
PATIENT = ["--timeout", "60000"]


def shape(text: str) -> list[str]:
    """Lines with every figure (dates, counts, rates) blanked."""
    return [NUMBER.sub("N", DATE.sub("DATE", line)) for line in text.splitlines()]


@pytest.fixture(scope="module", params=["kafka", "pk"])
def broker(request, kafka_tools, tmp_path_factory):
    """(bootstrap, topic, pk runner, log directory) on the session's Kafka 4.4 broker or the module's
    pk-server-start; the topic (per xdist worker: each worker builds this fixture) holds
    RECORDS records over two partitions."""
    server = request.getfixturevalue("kafka") if request.param == "kafka" else request.getfixturevalue("pk_server")
    bootstrap = server.bootstrap
    log_dir = server.log_dir if request.param == "kafka" else server.data_dir
    topic = f"{P}{request.param}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    create_topic_with_leaders(bootstrap, topic, partitions=2)
    r = kafka_tools("kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                    input="".join(f"record-{i}\n" for i in range(RECORDS)))
    assert r.returncode == 0, r.err
    return bootstrap, topic, Runner(str(tmp_path_factory.mktemp("ost") / "pk-data")), log_dir


def first_line(err: str) -> str:
    """stderr's first line that is not a client library's log line (whether one shows, such as
    a close that took over its 500 ms, depends on timing)."""
    return next((line for line in err.splitlines() if "(org.apache.kafka.clients." not in line), "")


def fresh_group(kafka_tools, bootstrap: str, side: str) -> str:
    """A share group of its own that starts at the earliest offset."""
    group = f"{P}{side}-{os.getpid()}-{next(_groups)}"
    r = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                    "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")
    assert r.returncode == 0, r.err
    return group


def both_perf(kafka_tools, broker, *args: str):
    """Kafka's tool and pk's (through pk-run-class and the class name), each in a fresh earliest
    group, on the same broker and topic; pk's runs while Kafka's does (each waits for its share
    group's assignment)."""
    bootstrap, topic, pk, _ = broker
    return both_raw(kafka_tools, broker, "--bootstrap-server", bootstrap, "--topic", topic, *args)


def both_raw(kafka_tools, broker, *args: str):
    bootstrap, _, pk, _ = broker
    ours_group, theirs_group = fresh_group(kafka_tools, bootstrap, "p"), fresh_group(kafka_tools, bootstrap, "k")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        ours = pool.submit(pk, "pk-run-class", PERF, *args, "--group", ours_group, timeout=150)
        theirs = kafka_tools("kafka-share-consumer-perf-test", *args, "--group", theirs_group, timeout=150)
        return theirs, ours.result()


# --------------------------------------------------------------------------- ShareConsumerPerformance
# More records asked for than the topic holds. Kafka's tool waits --timeout + 100 ms for its
# consumers' threads, then interrupts them: a consumer whose last record came after the start
# is still reading then and the run fails with the interrupt; one that got nothing usually ends
# first (Kafka's own race, of ~100 ms): either ending is Kafka's, and pk has both.
TIMED_OUT = [HEADER, "Share consumer N having client id perf-share-consumer-client consumption metrics- "
             "DATE, DATE, N, N, N, N, N",
             "WARNING: Exiting before consuming the expected number of records: timeout (N ms) exceeded. "
             "You can use the --timeout option to increase the timeout.", "DATE, DATE, N, N, N, N, N"]
INTERRUPTED = "org.apache.kafka.common.errors.InterruptException: Timeout waiting for results from fetching records"


def test_share_perf_timeout(kafka_tools, broker):
    theirs, ours = both_perf(kafka_tools, broker, "--num-records", str(RECORDS * 10), "--timeout", "1500",
                             "--show-consumer-stats")
    def ending(result, err: str):
        """Kafka's interrupt may land in another place of its poll: another message."""
        if err.startswith("org.apache.kafka.common.errors.InterruptException: "):
            err = INTERRUPTED
        return result.returncode, shape(result.out), err

    endings = [(0, TIMED_OUT, ""), (1, [HEADER], INTERRUPTED)]
    assert ending(theirs, first_line(theirs.err)) in endings
    assert ending(ours, ours.err.rstrip("\n")) in endings


def test_share_perf_threads_detailed_stats_and_metrics(kafka_tools, broker):
    """The deprecation warning of --messages, the header, two consumers (client ids numbered),
    progress lines (how many depends on timing), each consumer's line, the group's line, then a
    metrics table per consumer: pk's rows are some of the Kafka client's."""
    theirs, ours = both_perf(kafka_tools, broker, "--messages", str(RECORDS), "--threads", "2",
                             "--show-consumer-stats", "--show-detailed-stats", "--reporting-interval", "1",
                             "--print-metrics", "--command-property", "client.id=ost-client", *PATIENT)
    assert (ours.returncode, theirs.returncode) == (0, 0), (ours.err, theirs.err)
    progress = "DATE, DATE, N, N, N, N, N for share consumer N"
    for out in (theirs.out, ours.out):
        lines = shape(out)  # --messages is deprecated: a warning before the header
        assert lines[:2] == ["Warning: --messages is deprecated. Use --num-records instead.", HEADER]
        body = [line for line in lines[2:lines.index("")] if line != progress]
        assert body == ["Share consumer N having client id ost-clientN consumption metrics- "
                        "DATE, DATE, N, N, N, N, N"] * 2 + ["DATE, DATE, N, N, N, N, N"], out
    row = re.compile(r"([\w-]+:[\w-]+:\{[^}]*\}) +: (\S+)")
    names = [{row.fullmatch(line).group(1) for line in out.splitlines() if row.fullmatch(line)}
             for out in (theirs.out, ours.out)]
    assert {"ost-client-1", "ost-client-2"} == {re.search(r"client-id=([\w-]+)", n).group(1) for n in names[1]}
    assert names[1] and names[1] <= names[0]
    assert ours.out.count("Metric Name") == theirs.out.count("Metric Name") == 2
    assert ours.err.startswith("pk: ")
    group_line = ours.out.splitlines()[ours.out.splitlines().index("") - 1]
    assert f", {RECORDS}, " in group_line  # every record read, once, by the two consumers


OPTION_ERRORS = [
    ["--num-records", "5"],
    ["--topic", "{t}"],  # neither --messages nor --num-records
    ["--topic", "{t}", "--messages", "5", "--num-records", "5"],
    ["--topic", "{t}", "--num-records", "5", "--consumer.config", "{props}", "--command-config", "{props}"],
    ["--topic", "{t}", "--num-records", "5", "--bogus"],
    ["--topic", "{t}", "--num-records"],
    ["--topic", "{t}", "--num-records", "5", "--include", "x"],
]
RUN_ERRORS = [  # after the header: the exception's message
    ["--topic", "{t}", "--num-records", "x"],
    ["--topic", "{t}", "--num-records", "5", "--threads", "x"],
    ["--topic", "{t}", "--num-records", "5", "--threads", "0"],
    ["--topic", "{t}", "--num-records", "5", "--fetch-size", "big"],
    ["--topic", "{t}", "--num-records", "5", "--command-config", "/nonexistent/x.properties"],
    # read in the consumer's thread: the ExecutionException's message
    ["--topic", "{t}", "--num-records", "5", "--date-format", "QQ"],
    ["--topic", "{t}", "--num-records", "5", "--reporting-interval", "0", "--timeout", "60000"],
]


def test_share_perf_errors(kafka_tools, broker, tmp_path):
    bootstrap, topic, pk, _ = broker
    if "-kafka-" not in topic:
        pytest.skip("the errors do not depend on the broker: checked on Kafka's")
    props = tmp_path / "c.properties"
    props.write_text("a=b\n")
    for args in OPTION_ERRORS + RUN_ERRORS:
        full = ["--bootstrap-server", bootstrap] + [a.replace("{t}", topic).replace("{props}", str(props))
                                                    for a in args]
        theirs, ours = both_raw(kafka_tools, broker, *full)  # groups with records: the threads' checks run
        assert (ours.returncode, ours.out, ours.err) == (theirs.returncode, theirs.out, theirs.err_first + "\n"), args
    # no arguments: the description and the help on stderr, exit 1
    theirs, ours = kafka_tools("kafka-share-consumer-perf-test"), pk("pk-share-consumer-perf-test")
    assert (theirs.returncode, ours.returncode, theirs.out, ours.out) == (1, 1, "", "")
    assert ours.err.split("\n")[0] == theirs.err_first == "This tool is used to verify the share consumer performance."
    theirs, ours = kafka_tools("kafka-share-consumer-perf-test", "--version"), pk("pk-share-consumer-perf-test",
                                                                                 "--version")
    assert (ours.returncode, ours.out) == (theirs.returncode, theirs.out) and theirs.out.startswith("4.4.0")
    theirs = kafka_tools("kafka-share-consumer-perf-test", "--topic", topic, "--num-records", "1")
    ours = pk("pk-share-consumer-perf-test", "--topic", topic, "--num-records", "1")
    assert (ours.returncode, ours.err) == (theirs.returncode, theirs.err_first + "\n") == \
        (1, 'Missing required argument "[bootstrap-server]"\n')


# --------------------------------------------------------------------------- DumpLogSegments
def _state_segments(log_dir: str) -> list[str]:
    """The __share_group_state segments that hold records."""
    found = []
    for name in sorted(os.listdir(log_dir)):
        if name.startswith("__share_group_state-"):
            folder = os.path.join(log_dir, name)
            found += [os.path.join(folder, f) for f in sorted(os.listdir(folder))
                      if f.endswith(".log") and os.path.getsize(os.path.join(folder, f)) > 0]
    return found


def test_dump_log_share_group_state_decoder(kafka_tools, broker, tmp_path):
    """The broker's own __share_group_state segments (Kafka 4.4's share coordinator's, or
    pk-server-start's), after a share group read and acknowledged the topic, through both
    tools' --share-group-state-decoder: the same output byte for byte. The segments are copied
    first, so that both tools read the same bytes while the broker keeps writing."""
    bootstrap, topic, pk, log_dir = broker
    group = fresh_group(kafka_tools, bootstrap, "d")
    r = pk("pk-share-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
           "--num-records", str(RECORDS), *PATIENT, timeout=150)
    assert r.returncode == 0 and f", {RECORDS}, " in r.out, r.err
    wait_for(lambda: any(group.encode() in open(path, "rb").read() for path in _state_segments(log_dir)),
             timeout=60, what=f"{group}'s share-partition state in __share_group_state")
    copies = []
    for i, path in enumerate(_state_segments(log_dir)):
        folder = tmp_path / f"{os.path.basename(os.path.dirname(path))}"
        folder.mkdir(exist_ok=True)
        copies.append(str(folder / os.path.basename(path)))
        shutil.copyfile(path, copies[-1])
    seen = set()
    for path in copies:
        for extra in ([], ["--skip-record-metadata"]):
            args = ["--files", path, "--share-group-state-decoder", *extra]
            theirs, ours = kafka_tools("kafka-dump-log", *args), pk("pk-dump-log", *args)
            assert (ours.returncode, ours.out) == (theirs.returncode, theirs.out), path
            seen |= set(re.findall(r'key: \{"type":"(\d)"', ours.out))
            seen |= {"complete"} if '"deliveryCompleteCount":' in ours.out else set()
    # ShareSnapshot records; Kafka 4.4 also writes ShareUpdate ones, and delivery complete counts
    assert seen >= ({"0", "1", "complete"} if "-kafka-" in topic else {"0"})


STATE_FORMATTER = "org.apache.kafka.tools.consumer.group.share.ShareGroupStateMessageFormatter"


def _offsets(kafka_tools, bootstrap: str, time: str) -> dict[int, int]:
    r = kafka_tools("kafka-get-offsets", "--bootstrap-server", bootstrap, "--topic", "__share_group_state",
                    "--time", time)
    assert r.returncode == 0, r.err
    return {int(p): int(o) for p, o in (line.rsplit(":", 2)[1:] for line in r.out.splitlines())}


def test_console_consumer_share_group_state_formatter(kafka_tools, broker):
    """The console consumer's ShareGroupStateMessageFormatter on the broker's busiest
    __share_group_state partition, the same records read by both tools (from its start to the
    end offset seen first): the same JSON lines."""
    bootstrap, topic, pk, _ = broker
    group = fresh_group(kafka_tools, bootstrap, "f")
    r = pk("pk-share-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
           "--num-records", str(RECORDS), *PATIENT, timeout=150)
    assert r.returncode == 0, r.err
    wait_for(lambda: any(_offsets(kafka_tools, bootstrap, "-1").values()), timeout=60,
             what="records in __share_group_state")
    start, end = _offsets(kafka_tools, bootstrap, "-2"), _offsets(kafka_tools, bootstrap, "-1")
    partition = max(end, key=lambda p: end[p] - start.get(p, 0))
    args = ["--bootstrap-server", bootstrap, "--topic", "__share_group_state", "--partition", str(partition),
            "--offset", "earliest", "--max-messages", str(end[partition] - start.get(partition, 0)),
            "--formatter", STATE_FORMATTER]
    theirs, ours = kafka_tools("kafka-console-consumer", *args), pk("pk-console-consumer", *args)
    assert ours.returncode == theirs.returncode == 0, (ours.err, theirs.err)
    assert ours.out == theirs.out and '{"key":{"type":0,"data":{"groupId":' in ours.out


# --------------------------------------------------------------------------- VerifiableShareConsumer
VERIFIABLE = "verifiable-share-consumer"


def _events(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def _offsets_by_partition(events: list[dict], name: str) -> dict[int, list[int]]:
    """Every offset the events of one name list, per partition (in the order printed)."""
    found: dict[int, list[int]] = {}
    for e in events:
        if e["name"] == name:
            for part in e["partitions"]:
                assert part["count"] == len(part["offsets"])
                found.setdefault(part["partition"], []).extend(part["offsets"])
    return found


def _event_shape(events: list[dict]) -> dict:
    """What does not depend on timing: the first and last events (no timestamps), each event
    name's fields in order, every offset consumed and acknowledged once, the record lines."""
    for e in events:
        assert list(e)[:2] == ["timestamp", "name"]
    consumed = _offsets_by_partition(events, "records_consumed")
    acked = [e for e in events if e["name"] == "offsets_acknowledged"]
    for e in acked:  # one partition an event (Kafka's callback), all accepted
        assert len(e["partitions"]) == 1 and e["success"] is True and e["count"] == e["partitions"][0]["count"]
        # in no fixed order in Kafka 4.4 (lowest first, highest first, or runs of each): compared as sets
    for e in events:
        if e["name"] == "records_consumed":
            assert e["count"] == sum(p["count"] for p in e["partitions"])
            assert all(p["offsets"] == sorted(p["offsets"]) for p in e["partitions"])
    return {
        "ends": [{k: v for k, v in e.items() if k != "timestamp"} for e in events[:2] + events[-2:]],
        "fields": {e["name"]: list(e) for e in events},
        "partition fields": sorted({tuple(p) for e in events if e["name"] in ("records_consumed",
                                                                               "offsets_acknowledged")
                                    for p in e["partitions"]}),
        "consumed": {p: sorted(o) for p, o in consumed.items()},
        "acknowledged": {p: sorted(o) for p, o in _offsets_by_partition(acked, "offsets_acknowledged").items()},
        "records": sorted((e["partition"], e["offset"], e["key"], e["value"]) for e in events
                          if e["name"] == "record_data"),
    }


@pytest.mark.parametrize("mode", ["auto", "sync", "async"])
def test_verifiable_share_consumer_events(kafka_tools, broker, mode):
    """Each tool in a group of its own reads the topic's records (set to earliest by
    --offset-reset-strategy) until all are acknowledged: the same events but for how the records
    fall into polls and acknowledgement callbacks (timing): every record consumed and
    acknowledged once, each event with Kafka's fields in Kafka's order."""
    bootstrap, topic, pk, _ = broker
    if (mode, "-kafka-" in topic) in (("async", True), ("sync", False)):
        pytest.skip("the suite's time: sync on Kafka's broker, async on pk-server-start, auto on both")
    args = ["--bootstrap-server", bootstrap, "--topic", topic, "--max-messages", str(RECORDS),
            "--offset-reset-strategy", "earliest", "--acknowledgement-mode", mode]
    if mode == "auto":
        args.append("--verbose")
    tag = f"{os.getpid()}-{next(_groups)}"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        ours = pool.submit(pk, "pk-run-class", "org.apache.kafka.tools.VerifiableShareConsumer", *args,
                           "--group-id", f"{P}vp-{tag}", timeout=150)
        theirs = kafka_tools.run_process("kafka-verifiable-share-consumer", *args, "--group-id", f"{P}vk-{tag}",
                                         timeout=150)
        ours = ours.result()
    assert (ours.returncode, theirs.returncode) == (0, 0), (ours.err, theirs.err)
    mine, kafkas = _event_shape(_events(ours.out)), _event_shape(_events(theirs.out))
    assert mine == kafkas
    assert sum(len(o) for o in mine["consumed"].values()) == RECORDS == sum(len(o) for o in mine["acknowledged"].values())
    assert [e["name"] for e in mine["ends"]] == ["startup_complete", "offset_reset_strategy_set", "shutdown_complete",
                                                 "shutdown_requested"]
    assert ours.err == ""


# Each offset's pattern position is its offset modulo 4; a renewed record comes back and takes the
# next type, a released one is delivered again and starts over at its own position, until the
# group's delivery count limit (2) archives it. So, per offset o (whatever the polls): o % 4 == 0
# accepted once; 1: renew, release, (delivered again) renew, release: consumed 4 times; 2:
# released twice; 3: rejected once. Every acknowledgement counts towards --max-messages.
PATTERN = "accept,renew,release,reject"
PATTERN_ACKS = {"ACCEPT": RECORDS // 4, "REJECT": RECORDS // 4, "RENEW": RECORDS // 2, "RELEASE": RECORDS}
PATTERN_CONSUMED = {0: 1, 1: 4, 2: 2, 3: 1}
ACK_TYPE_ORDER = ["ACCEPT", "REJECT", "RENEW", "RELEASE"]  # Java's HashMap order of the names


def test_verifiable_share_consumer_ack_pattern(kafka_tools, broker):
    """--ack-pattern: each tool in a group of its own (delivery count limit 2) acknowledges every
    record explicitly with the pattern's types. The same events but for how records fall into
    polls, the same ackTypeCounts in sum, each in Kafka's key order; the broker then holds
    every record acknowledged or archived (kafka-share-groups: start offset at the end, lag 0)."""
    bootstrap, topic, pk, _ = broker
    tag = f"{os.getpid()}-{next(_groups)}"
    groups = {"ours": f"{P}ap-{tag}", "theirs": f"{P}ak-{tag}"}
    for group in groups.values():
        r = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                        "--entity-name", group, "--add-config", "share.delivery.count.limit=2")
        assert r.returncode == 0, r.err
    acks = sum(PATTERN_ACKS.values())
    args = ["--bootstrap-server", bootstrap, "--topic", topic, "--max-messages", str(acks),
            "--offset-reset-strategy", "earliest", "--acknowledgement-mode", "sync", "--ack-pattern", PATTERN]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        ours = pool.submit(pk, "pk-verifiable-share-consumer", *args, "--group-id", groups["ours"], timeout=150)
        theirs = kafka_tools.run_process("kafka-verifiable-share-consumer", *args, "--group-id", groups["theirs"],
                                         timeout=150)
        ours = ours.result()
    assert (ours.returncode, theirs.returncode) == (0, 0), (ours.err, theirs.err)
    assert ours.err == ""
    runs = {"ours": _events(ours.out), "theirs": _events(theirs.out)}
    shapes = {side: _event_shape(events) for side, events in runs.items()}
    assert shapes["ours"] == shapes["theirs"]
    for events in runs.values():
        totals: dict[str, int] = {}
        for e in events:
            if e["name"] == "offsets_acknowledged":
                counts = e["ackTypeCounts"]
                assert list(counts) == [k for k in ACK_TYPE_ORDER if k in counts]
                assert sum(counts.values()) == e["count"]
                for kind, n in counts.items():
                    totals[kind] = totals.get(kind, 0) + n
        assert totals == PATTERN_ACKS
        consumed = _offsets_by_partition(events, "records_consumed")
        assert sum(len(o) for o in consumed.values()) == sum(PATTERN_CONSUMED.values()) * RECORDS // 4
        for offsets in consumed.values():
            assert all(offsets.count(o) == PATTERN_CONSUMED[o % 4] for o in offsets)
    # the broker's side: every record acknowledged or archived, in both groups: a lag of 0 where
    # there were records (Kafka 4.4 may leave the start offset behind, counting the records
    # done past it instead), no state where there were none
    read = _offsets_by_partition(runs["ours"], "records_consumed")
    wanted = sorted((str(p), "0" if p in read else "-") for p in (0, 1))
    for group in groups.values():
        r = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
        assert r.returncode == 0, r.err
        rows = [line.split() for line in r.out.splitlines() if line.split()[:1] == [group]]
        assert sorted((row[2], row[-1]) for row in rows) == wanted, r.out


def test_renew_acknowledgements_on_the_wire(kafka_tools, broker):
    """What a broker answers the acknowledgements the pattern sends, and malformed ones (KafkaApis'
    checks), on a record pk's share client acquired: the same codes on Kafka 4.4 and pk."""
    from pk.commands.backends.wire_share import ACCEPT, RENEW, ShareConsumer
    from pk.engine.protocol import ApiKey

    bootstrap, topic, _, _ = broker
    group = fresh_group(kafka_tools, bootstrap, "w")
    consumer = ShareConsumer(bootstrap, group, topic)
    try:
        record = wait_for(lambda: consumer.poll(0.5), timeout=60, what="records")[0]
        session = consumer._sessions[consumer._leaders[(topic, record.partition)]]
        topic_id, offset = consumer._topic_ids[topic], record.offset

        def partitions(first: int, last: int, types: list[int]) -> list[dict]:
            return [{"topic_id": topic_id, "partitions": [{
                "partition_index": record.partition,
                "acknowledgement_batches": [{"first_offset": first, "last_offset": last,
                                             "acknowledge_types": types}]}]}]

        def acknowledge(version: int, types: list[int], renew: bool, first: int = offset, last: int = offset):
            answer = session.conn.call(ApiKey.SHARE_ACKNOWLEDGE, version, {
                "group_id": group, "member_id": consumer.member_id, "share_session_epoch": session.epoch,
                "is_renew_ack": renew, "topics": partitions(first, last, types)})
            session.epoch += 1  # a ShareAcknowledge moves the session's epoch before its checks
            return answer["error_code"], [p["error_code"] for t in answer["responses"] for p in t["partitions"]]

        def fetch(types: list[int], limits: int) -> tuple:
            answer = session.conn.call(ApiKey.SHARE_FETCH, 2, {
                "group_id": group, "member_id": consumer.member_id, "share_session_epoch": session.epoch,
                "max_wait_ms": limits, "min_bytes": limits, "max_bytes": limits, "max_records": limits,
                "batch_size": limits, "is_renew_ack": True,
                "topics": [{**t, "partitions": [{**p, "partition_max_bytes": 0} for p in t["partitions"]]}
                           for t in partitions(offset, offset, types)],
                "forgotten_topics_data": []})
            if answer["error_code"] == 0:
                session.epoch += 1
            parts = [p for t in answer["responses"] for p in t["partitions"]]
            return (answer["error_code"], answer["error_message"],
                    [(p["acknowledge_error_code"], p["acquired_records"]) for p in parts])

        invalid = 42  # INVALID_REQUEST
        assert acknowledge(2, [RENEW], renew=False) == (0, [invalid])  # RENEW in a request not flagged
        assert acknowledge(1, [RENEW], renew=False) == (0, [invalid])  # v1 knows no RENEW
        assert acknowledge(2, [ACCEPT], renew=False, first=offset + 1, last=offset) == (0, [invalid])
        assert acknowledge(2, [ACCEPT, ACCEPT], renew=False) == (0, [invalid])  # two types for one offset
        assert acknowledge(2, [RENEW], renew=True) == (0, [0])
        # a renewing fetch takes no records: limits other than 0 are refused (the reason is only logged)
        assert fetch([RENEW], 500) == (invalid, None, [])
        assert fetch([RENEW], 0) == (0, None, [(0, [])])
        r = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                        "--entity-name", group, "--add-config", "share.renew.acknowledge.enable=false")
        assert r.returncode == 0, r.err
        # the record is still this member's, so renewing works until the broker sees the config
        wait_for(lambda: acknowledge(2, [RENEW], renew=True) == (0, [121]), timeout=30,
                 what="INVALID_RECORD_STATE for a renewal the group no longer allows")
        assert acknowledge(2, [ACCEPT], renew=False) == (0, [0])
    finally:
        consumer.close()


def test_verifiable_share_consumer_errors(kafka_tools, broker, tmp_path):
    bootstrap, topic, pk, _ = broker
    if "-kafka-" not in topic:
        pytest.skip("the errors do not depend on the broker: checked on Kafka's")
    common = ["--bootstrap-server", bootstrap, "--topic", topic]
    usage = [  # argparse4j's errors: its usage, then `verifiable-share-consumer: error: ...`
        ["--topic", topic, "--group-id", "g"],
        common,
        [*common, "--group-id", "g", "--max-messages", "x"],
        [*common, "--group-id", "g", "--bogus"],
        [*common, "--group-id", "g", "--command-config", str(tmp_path / "missing.properties")],
        [*common, "--group-id", "g", "--ack-pattern", "accept"],
        [*common, "--group-id", "g", "--ack-pattern", "renew,RENEW", "--acknowledgement-mode", "sync"],
    ]
    for args in usage:
        theirs, ours = kafka_tools("kafka-verifiable-share-consumer", *args), pk("pk-verifiable-share-consumer", *args)
        assert (ours.returncode, theirs.returncode) == (1, 1), args
        assert ours.err == argparse_error(theirs.err, VERIFIABLE) + "\n", args
        assert ours.out == ""
    for args in ([*common, "--group-id", "g", "--acknowledgement-mode", "bogus"],
                 [*common, "--group-id", "g", "--ack-pattern", "accept,maybe", "--acknowledgement-mode", "sync"]):
        theirs, ours = kafka_tools("kafka-verifiable-share-consumer", *args), pk("pk-verifiable-share-consumer", *args)
        assert (ours.returncode, ours.err) == (theirs.returncode, theirs.err_first + "\n") and ours.returncode == 1
    # an unknown reset strategy fails the run, which Kafka logs; the run still ends as usual, exit 0
    args = [*common, "--group-id", f"{P}bad-reset", "--offset-reset-strategy", "Bogus", "--max-messages", "1"]
    theirs, ours = kafka_tools.run_process("kafka-verifiable-share-consumer", *args), pk("pk-verifiable-share-consumer",
                                                                                      *args)
    assert ours.returncode == theirs.returncode == 0
    assert [e["name"] for e in _events(ours.out)] == [e["name"] for e in _events(theirs.out)] == [
        "startup_complete", "shutdown_complete", "shutdown_requested"]
    assert [normalise(line) for line in ours.err.splitlines()] == \
        [normalise(line) for line in theirs.err.splitlines()[:2]]


def argparse_error(err: str, prog: str) -> str:
    """argparse4j's error paragraph after its usage, unwrapped."""
    m = re.search(rf"{prog}:\s+error:", err)
    assert m, err
    text = err[m.start():].split("\n\n", 1)[0].rstrip("\n")
    return re.sub(r"\s+", " ", re.sub(r"-\n", "-", text))
