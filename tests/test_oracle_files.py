"""Kafka's files and pk's files, both ways, with Apache Kafka 4.4 as the oracle.

1. Segments the shared Kafka 4.4 broker wrote (every codec, keys, headers, an idempotent
   console producer, a transactional producer whose segment rolled, so commit markers and
   `.snapshot` files, a consumer group's `__consumer_offsets` records, `__transaction_state`)
   are dumped by Kafka's kafka-dump-log and by pk's DumpLogSegments with the same flags on the
   same files (a copy of the broker's partition directories, taken once): same stdout, same
   stderr (its first line where the tool failed), same exit status.
2. That copy, a Kafka log dir, is used as a pk data dir: pk-topics, the console consumer and
   GetOffsetShell read Kafka's topics from it (partition directories, topic ids from
   partition.metadata, configs from the KRaft metadata log) and print what Kafka's tools print
   on the broker.
3. Segments pk's bundled engine wrote are dumped by both tools: the same text, and Kafka finds
   nothing wrong with them (valid CRCs, indexes that pass its sanity check); so are the
   transaction markers, `.txnindex` and `__transaction_state` records pk-server-start writes.
4. log-start-offset-checkpoint: the same DeleteRecords leave the same entries in Kafka's log dir
   and in pk's data dir, and pk adopting Kafka's log dir keeps its log start offsets.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import time

import pytest

from conftest import Runner
from pk.engine import consumer_offsets as co

P = "ot-files-"
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
GROUP = P + "group"
GROUP_848 = P + "group848-45"  # a consumer-protocol group in the same __consumer_offsets partition
TXN_ID = P + "txn"
LINES = "h1:v1,h2:v2\tk1\thello\nh3:x\tk2\twörld\nh4:\tk3\tthird line\nh5:y\tk4\t\n"
DUMP = ("kafka.tools.DumpLogSegments", "org.apache.kafka.tools.DumpLogSegments")


def wait_for_end_offsets(kafka_tools, bootstrap, topic, want: str, timeout=30.0):
    """The console producer in the shared JVM sends asynchronously (its close runs in a shutdown
    hook the tool server never runs): wait until the records are in the log."""
    deadline = time.monotonic() + timeout
    while True:
        got = kafka_tools("kafka-get-offsets", "--bootstrap-server", bootstrap, "--topic", topic).out
        if got == want or time.monotonic() > deadline:
            assert got == want
            return
        time.sleep(0.1)


@pytest.fixture(scope="module")
def kafka_files(kafka, kafka_tools, tmp_path_factory):
    """Topics written by Kafka 4.4 on the shared broker, then a copy of their partition
    directories (plus meta.properties) in a Kafka-layout log dir of its own."""
    b = kafka.bootstrap
    for codec in CODECS:
        t = P + codec
        r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", t, "--partitions", "1")
        assert r.returncode == 0, r.err
        r = kafka_tools("kafka-console-producer", "--bootstrap-server", b, "--topic", t, "--compression-codec", codec,
                        "--reader-property", "parse.key=true", "--reader-property", "parse.headers=true", input=LINES)
        assert r.returncode == 0, r.err
    # a transactional producer, then (the segment older than segment.ms) a plain lz4 one: the
    # second append rolls the segment, so Kafka writes producer-state .snapshot files
    tx = P + "tx"
    r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", tx, "--partitions", "1",
                    "--config", "segment.ms=300")
    assert r.returncode == 0, r.err
    r = kafka_tools("kafka-producer-perf-test", "--topic", tx, "--num-records", "12", "--record-size", "8",
                    "--throughput", "-1", "--producer-props", f"bootstrap.servers={b}",
                    "--transactional-id", TXN_ID, "--transaction-duration-ms", "30")
    assert r.returncode == 0, r.err
    time.sleep(0.4)
    r = kafka_tools("kafka-producer-perf-test", "--topic", tx, "--num-records", "5", "--record-size", "8",
                    "--throughput", "-1", "--producer-props", f"bootstrap.servers={b}", "compression.type=lz4")
    assert r.returncode == 0, r.err
    for codec in CODECS:
        wait_for_end_offsets(kafka_tools, b, P + codec, f"{P}{codec}:0:4\n")
    # a consumer group: its commits in __consumer_offsets
    r = kafka_tools("kafka-console-consumer", "--bootstrap-server", b, "--topic", P + "gzip", "--group", GROUP,
                    "--from-beginning", "--max-messages", "4")
    assert r.returncode == 0, r.err
    # and a consumer-protocol group (KIP-848) in the same __consumer_offsets partition: its
    # member, assignment and epoch records
    r = kafka_tools("kafka-console-consumer", "--bootstrap-server", b, "--topic", P + "gzip", "--group", GROUP_848,
                    "--from-beginning", "--max-messages", "4", "--consumer-property", "group.protocol=consumer")
    assert r.returncode == 0, r.err
    root = tmp_path_factory.mktemp("kafka-files")
    copy = root / "logs"
    copy.mkdir()
    dirs = [f"{P}{c}-0" for c in CODECS] + [f"{tx}-0", f"__consumer_offsets-{co.partition_for(GROUP)}",
                                             f"__transaction_state-{co.partition_for(TXN_ID)}", "__cluster_metadata-0"]
    for d in dirs:
        shutil.copytree(os.path.join(kafka.log_dir, d), copy / d)
    shutil.copy(os.path.join(kafka.log_dir, "meta.properties"), copy / "meta.properties")
    return copy


BYTES = re.compile(r"\[B@[0-9a-f]+")


def same(kafka_tools, pk, *args, cls="kafka.tools.DumpLogSegments", norm=lambda text: text):
    """kafka-dump-log and pk's DumpLogSegments on the same files: the same stdout and exit
    status, the same stderr where the tool succeeded (the reports), its first line where it
    failed (Kafka adds a stack trace; pk prints one line, or its help when given nothing)."""
    k = kafka_tools("kafka-dump-log", *args)
    p = pk("pk-run-class", cls, *args)
    assert "Traceback" not in p.err
    assert (p.returncode, norm(p.out)) == (k.returncode, norm(k.out)), (args, p.err, k.err_first)
    if k.returncode == 0:
        assert p.err == k.err, args
    else:
        assert p.err.split("\n", 1)[0] == k.err_first, args
        assert args == () or p.err.count("\n") == 1, p.err
    return k


def files_of(copy, *dirs, suffixes=(".log", ".index", ".timeindex", ".snapshot")):
    found = []
    for d in dirs:
        found += sorted(f for f in glob.glob(str(copy / d / "*")) if os.path.splitext(f)[1] in suffixes)
    return found


# --------------------------------------------------------------------------- 1. Kafka's files, pk's tool
def test_kafka_segments_dumped_by_both(kafka_files, kafka_tools, tmp_path):
    pk = Runner(str(tmp_path / "unused"))
    topics = [f"{P}{c}-0" for c in CODECS] + [f"{P}tx-0"]
    files = files_of(kafka_files, *topics)
    assert any(f.endswith(".snapshot") for f in files), files  # the roll left producer snapshots
    every = ",".join(files)
    for flags in ([], ["--deep-iteration"], ["--print-data-log"], ["--print-data-log", "--skip-record-metadata"],
                  ["--skip-record-metadata"], ["--verify-index-only"], ["--index-sanity-check"]):
        k = same(kafka_tools, pk, "--files", every, *flags)
        assert k.returncode == 0
    # DefaultDecoder prints a byte[]'s identity hash: Java's is random, pk's a CRC of the bytes
    k = same(kafka_tools, pk, "--files", every, "--value-decoder-class", "org.apache.kafka.tools.api.DefaultDecoder",
             norm=lambda text: BYTES.sub("[B@<hash>", text))
    assert "payload: [B@" in k.out
    # the data is what was produced: keys, headers, values and codecs
    k = same(kafka_tools, pk, "--files", str(kafka_files / f"{P}gzip-0" / "00000000000000000000.log"),
             "--print-data-log", cls=DUMP[1])
    assert "compresscodec: gzip" in k.out
    assert "headerKeys: [h1,h2] key: k1 payload: hello" in k.out and "key: k2 payload: wörld" in k.out
    # the transactional topic: commit markers (endTxnMarker), and the same lines for each file
    tx = files_of(kafka_files, f"{P}tx-0", suffixes=(".log",))
    k = same(kafka_tools, pk, "--files", ",".join(tx), "--deep-iteration", cls=DUMP[1])
    assert "endTxnMarker: COMMIT" in k.out and "isTransactional: true" in k.out
    # the KRaft metadata log: LeaderChange control records among the metadata batches
    metadata = files_of(kafka_files, "__cluster_metadata-0", suffixes=(".log",))
    k = same(kafka_tools, pk, "--files", ",".join(metadata), "--deep-iteration")
    assert " LeaderChange: {" in k.out


def test_coordinator_logs_decoded_by_both(kafka_files, kafka_tools, tmp_path):
    pk = Runner(str(tmp_path / "unused"))
    offsets = files_of(kafka_files, f"__consumer_offsets-{co.partition_for(GROUP)}", suffixes=(".log",))
    k = same(kafka_tools, pk, "--files", ",".join(offsets), "--offsets-decoder")
    assert f'key: {{"type":"1","data":{{"group":"{GROUP}","topic":"{P}gzip","partition":0}}}}' in k.out
    same(kafka_tools, pk, "--files", ",".join(offsets), "--offsets-decoder", "--skip-record-metadata")
    txn = files_of(kafka_files, f"__transaction_state-{co.partition_for(TXN_ID)}", suffixes=(".log",))
    k = same(kafka_tools, pk, "--files", ",".join(txn), "--transaction-log-decoder")
    assert '"transactionStatus":"CompleteCommit"' in k.out
    # a decoder on records it does not fit: the same "Unknown record type" lines
    same(kafka_tools, pk, "--files", ",".join(offsets), "--transaction-log-decoder")


def test_bad_input_and_documented_differences(kafka_files, kafka_tools, tmp_path):
    pk = Runner(str(tmp_path / "unused"))
    log = str(kafka_files / f"{P}none-0" / "00000000000000000000.log")
    index = log[:-4] + ".index"
    for args in ([], ["--print-data-log"], ["--files"], ["--files", log, "--bogus"],
                 ["--files", log, "--max-bytes", "many"], ["--files", index, "--max-message-size", "x"],
                 ["--files", log, "--value-decoder-class", "kafka.serializer.StringDecoder"],
                 ["--files", log, "--key-decoder-class", "org.apache.kafka.tools.api.LongDecoder"],
                 ["--files", str(tmp_path / "00000000000000000000.log")], ["--files", str(tmp_path / "x.log")],
                 ["--files", str(kafka_files / f"{P}none-0" / "partition.metadata")],
                 ["--files", str(kafka_files / f"{P}none-0" / "leader-epoch-checkpoint")],
                 ["--files", log, "--files", log], ["--version"]):
        same(kafka_tools, pk, *args)
    # --help: Kafka prints its option table on stderr and exits 1; pk prints Click's help, exit 0
    k = kafka_tools("kafka-dump-log", "--help")
    p = pk("pk-run-class", DUMP[1], "--help")
    assert (k.returncode, k.out) == (1, "") and "--files <String: file1, file2, ...>" in k.err
    assert p.returncode == 0 and "--files" in p.out
    # --cluster-metadata-decoder (and the RLMM / share-group decoders): Kafka decodes, pk refuses
    k = kafka_tools("kafka-dump-log", "--files", log, "--cluster-metadata-decoder")
    p = pk("pk-run-class", DUMP[1], "--files", log, "--cluster-metadata-decoder")
    assert k.returncode == 0 and "Could not deserialize metadata record" in k.out
    assert (p.returncode, p.err) == (1, "--cluster-metadata-decoder is not supported by pk\n")


# --------------------------------------------------------------------------- 2. Kafka's log dir as pk's data dir
def test_kafka_log_dir_is_a_pk_data_dir(kafka, kafka_files, kafka_tools, tmp_path):
    data = tmp_path / "kafka-copy"
    shutil.copytree(kafka_files, data)
    pk = Runner(str(data))
    b = kafka.bootstrap
    listed = pk("pk-topics", "--list")
    assert listed.returncode == 0, listed.err
    k = kafka_tools("kafka-topics", "--bootstrap-server", b, "--list")
    assert [t for t in listed.out.splitlines() if t.startswith(P)] == [t for t in k.out.splitlines() if t.startswith(P)]
    assert "__consumer_offsets" in listed.out.splitlines() and "__cluster_metadata" not in listed.out
    assert "segment.ms=300" in pk("pk-topics", "--describe", "--topic", P + "tx").out
    for t in [P + c for c in CODECS] + [P + "tx"]:
        k = kafka_tools("kafka-topics", "--bootstrap-server", b, "--describe", "--topic", t)
        p = pk("pk-topics", "--describe", "--topic", t)
        # the same TopicId (partition.metadata), the configs from the KRaft metadata log
        assert (p.returncode, p.out) == (k.returncode, k.out)
        props = [a for prop in ("print.key", "print.headers", "print.offset", "print.timestamp", "print.partition")
                 for a in ("--formatter-property", f"{prop}=true")]
        n = "17" if t == P + "tx" else "4"
        k = kafka_tools("kafka-console-consumer", "--bootstrap-server", b, "--topic", t, "--from-beginning",
                        "--max-messages", n, *props)
        p = pk("pk-console-consumer", "--topic", t, "--from-beginning", "--max-messages", n, *props)
        assert (p.returncode, p.out, p.err) == (k.returncode, k.out, k.err)
        k = kafka_tools("kafka-get-offsets", "--bootstrap-server", b, "--topic", t)
        p = pk("pk-run-class", "org.apache.kafka.tools.GetOffsetShell", "--topic", t)
        assert (p.returncode, p.out) == (k.returncode, k.out)


# --------------------------------------------------------------------------- 3. pk's files, Kafka's tool
def test_pk_segments_dumped_by_both(kafka_tools, tmp_path):
    data = tmp_path / "pk-data"
    pk = Runner(str(data))
    for codec in CODECS:
        t = "pkfiles-" + codec
        assert pk("pk-topics", "--create", "--topic", t, "--partitions", "1").returncode == 0
        lines = LINES + "".join(f"h:{i}\tkey-{i % 7}\t{'value-%04d ' % i * 8}\n" for i in range(300))
        r = pk("pk-console-producer", "--topic", t, "--compression-codec", codec, "--batch-size", "2048",
               "--reader-property", "parse.key=true", "--reader-property", "parse.headers=true", input=lines)
        assert r.returncode == 0, r.err
    files = files_of(data, *[f"pkfiles-{c}-0" for c in CODECS])
    every = ",".join(files)
    for flags in (["--deep-iteration", "--print-data-log"], [], ["--verify-index-only"], ["--index-sanity-check"]):
        k = same(kafka_tools, pk, "--files", every, *flags)
        assert (k.returncode, k.err) == (0, "")  # no mismatch, corruption or invalid bytes reported
        assert "isvalid: false" not in k.out and "invalid bytes" not in k.out
        if flags == ["--index-sanity-check"]:
            assert k.out.count("passed sanity check.") == 2 * len(CODECS)
    k = kafka_tools("kafka-dump-log", "--files", every, "--print-data-log")
    for codec in CODECS[1:]:
        assert f"compresscodec: {codec}" in k.out
    assert "headerKeys: [h1,h2] key: k1 payload: hello" in k.out
    assert "| offset: 303 " in k.out


def test_pk_keyed_segments_dumped_by_both(kafka_tools, tmp_path):
    # Keyed lines without headers take the console producer's column-wise path
    # (engine/records/spans.py): its batches must be as valid for Kafka's reader.
    data = tmp_path / "pk-data"
    pk = Runner(str(data))
    dirs = []
    for codec in ("none", "zstd"):
        t = "pkkeys-" + codec
        assert pk("pk-topics", "--create", "--topic", t, "--partitions", "3").returncode == 0
        lines = "".join(f"key-{i % 97}\t{'v%05d ' % i * (1 + i % 3 * 20)}\n" for i in range(3000))
        lines += "".join(f"same-{i}\t{'w' * 90}\n" for i in range(1000))  # rows of one layout
        r = pk("pk-console-producer", "--topic", t, "--compression-codec", codec,
               "--reader-property", "parse.key=true", input=lines)
        assert r.returncode == 0, r.err
        dirs += [f"{t}-{p}" for p in range(3)]
    every = ",".join(files_of(data, *dirs))
    for flags in (["--deep-iteration", "--print-data-log"], ["--index-sanity-check"]):
        k = same(kafka_tools, pk, "--files", every, *flags)
        assert (k.returncode, k.err) == (0, "")
        assert "isvalid: false" not in k.out and "invalid bytes" not in k.out
    k = kafka_tools("kafka-dump-log", "--files", every, "--deep-iteration", "--print-data-log")
    assert k.out.count("key: same-") == 2 * 1000 and k.out.count("key: key-") == 2 * 3000


def test_pk_transaction_files_dumped_by_both(kafka_tools, tmp_path):
    """pk-server-start's transactions on disk (a commit and an abort marker, the abort's
    .txnindex entry, the coordinator's __transaction_state records) read by Kafka's tool."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic
    from conftest import BrokerProcess

    data = tmp_path / "pk-txn-data"
    b = BrokerProcess(str(data)).start()
    topic = P + "pk-txn"
    try:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
        p = confluent_kafka.Producer({"bootstrap.servers": b.bootstrap, "transactional.id": TXN_ID})
        p.init_transactions(15)
        for value, commit in ((b"kept", True), (b"dropped", False)):
            p.begin_transaction()
            p.produce(topic, value, key=b"k")
            p.flush(15)
            (p.commit_transaction if commit else p.abort_transaction)(15)
    finally:
        b.stop()
    pk = Runner(str(data))
    files = files_of(data, f"{topic}-0", suffixes=(".log", ".index", ".timeindex", ".txnindex"))
    k = same(kafka_tools, pk, "--files", ",".join(files), "--print-data-log")
    assert k.out.count("endTxnMarker: COMMIT coordinatorEpoch: 0") == 1
    assert k.out.count("endTxnMarker: ABORT coordinatorEpoch: 0") == 1
    assert "version: 0 producerId: 0 firstOffset: 2 lastOffset: 3 lastStableOffset: 4" in k.out
    from pk.engine import transaction_log as tlog
    state = glob.glob(str(data / f"{tlog.TRANSACTION_STATE_TOPIC}-{tlog.partition_for(TXN_ID)}" / "*.log"))
    k = same(kafka_tools, pk, "--files", ",".join(state), "--transaction-log-decoder")
    assert '"transactionStatus":"CompleteAbort"' in k.out and k.err == ""


# --------------------------------------------------------------------------- 4. log start offsets, both ways
LS = "ot-logstart-"
# topic suffix -> DeleteRecords offset (None: none) on 5 records in one segment: inside the
# segment (an entry), up to the log end (an entry: the active segment stays), none (no entry)
LS_CASES = {"mid": 2, "end": 5, "none": None}


def _delete_records_json(tmp_path, run: str) -> str:
    import json
    path = tmp_path / "delete-records.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": f"{LS}{run}{name}", "partition": 0, "offset": offset}
        for name, offset in LS_CASES.items() if offset is not None]}))
    return str(path)


def _log_starts(path: str, prefix: str) -> dict:
    from pk.engine import checkpoint
    return {k: v for k, v in checkpoint.read(path).items() if k[0].startswith(prefix)}


def test_log_start_offset_checkpoint_both_ways(kafka_tuned, kafka_tools, tmp_path):
    """The same DeleteRecords on Kafka 4.4 (checkpointing every 300 ms) and on pk's bundled
    engine leave the same log-start-offset-checkpoint entries (only where the log start is past
    the first segment's base), and a copy of Kafka's log dir, adopted by pk, keeps Kafka's log
    start offsets (GetOffsetShell's earliest offsets match Kafka's)."""
    from waits import wait_for
    run = f"{int(time.time() * 1000) % 100000}-"
    b = kafka_tuned.bootstrap
    data = tmp_path / "pk-data"
    pk = Runner(str(data))
    for name in LS_CASES:
        t = f"{LS}{run}{name}"
        r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", t, "--partitions", "1")
        assert r.returncode == 0, r.err
        assert kafka_tools("kafka-console-producer", "--bootstrap-server", b, "--topic", t,
                           input="a\nb\nc\nd\ne\n").returncode == 0
        assert pk("pk-topics", "--create", "--topic", t, "--partitions", "1").returncode == 0
        assert pk("pk-console-producer", "--topic", t, input="a\nb\nc\nd\ne\n").returncode == 0
        wait_for_end_offsets(kafka_tools, b, t, f"{t}:0:5\n")
    # a fresh pk data dir holds the file from the start, as every Kafka log dir does
    assert (data / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    spec = _delete_records_json(tmp_path, run)
    k = kafka_tools("kafka-delete-records", "--bootstrap-server", b, "--offset-json-file", spec)
    assert k.returncode == 0, k.err
    p = pk("pk-delete-records", "--offset-json-file", spec)
    # (the same lines; pk prints them in the file's order, Kafka in its HashMap's)
    assert (p.returncode, sorted(p.out.splitlines())) == (0, sorted(k.out.splitlines()))
    want = {(f"{LS}{run}mid", 0): 2, (f"{LS}{run}end", 0): 5}
    kafka_file = os.path.join(kafka_tuned.log_dir, "log-start-offset-checkpoint")
    wait_for(lambda: _log_starts(kafka_file, LS + run) == want, 30, "Kafka's log start offset checkpoint")
    assert _log_starts(str(data / "log-start-offset-checkpoint"), LS + run) == want
    # Kafka's log dir adopted by pk
    copy = tmp_path / "kafka-copy"
    copy.mkdir()
    for name in LS_CASES:
        shutil.copytree(os.path.join(kafka_tuned.log_dir, f"{LS}{run}{name}-0"), copy / f"{LS}{run}{name}-0")
    for f in ("meta.properties", "log-start-offset-checkpoint"):
        shutil.copy(os.path.join(kafka_tuned.log_dir, f), copy / f)
    adopted = Runner(str(copy))
    for name in LS_CASES:
        t = f"{LS}{run}{name}"
        k = kafka_tools("kafka-get-offsets", "--bootstrap-server", b, "--topic", t, "--time", "-2")
        assert k.out == f"{t}:0:{LS_CASES[name] or 0}\n"
        assert adopted("pk-get-offsets", "--topic", t, "--time", "-2").out == k.out
        assert pk("pk-get-offsets", "--topic", t, "--time", "-2").out == k.out
