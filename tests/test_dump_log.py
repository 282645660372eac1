"""DumpLogSegments (pk-run-class kafka.tools.DumpLogSegments), Kafka 4.4 layouts.

Data is written through the engine (or, for what the engine refuses to write, such as
control batches, legacy messages and broken files, as raw bytes), then dumped by the installed
tool. Batch and record lines are checked byte for byte against texts Kafka 4.4's own
kafka-dump-log printed (`same_as_kafka` runs it on the same files where the `kafka_tools`
oracle is available) and against kafka-python's independent reader (kafka.record.MemoryRecords).
"""

from __future__ import annotations

import os
import struct

import pytest

from pk.engine import consumer_offsets as co
from pk.engine import records
from pk.engine.engine import Engine

DUMP = ("pk-run-class", "kafka.tools.DumpLogSegments")
SEG = "00000000000000000000"
# Two records built by kafka-python ("k1"/"hello", null/"world" with header h=v)
WORKED_EXAMPLE = bytes.fromhex(
    "00000000000000000000004f00000000024469c88d0000000000010000018bcfe568000000018bcfe56805ffffffffffff"
    "ffffffffffffffff000000021a000000046b310a68656c6c6f001e000a02010a776f726c640202680276")
TS = 1700000000000


def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert "Traceback" not in proc.err
    return proc.out


def fails(proc, message):
    """One line on stderr, exit 1, never a traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n", proc.err
    return proc


def same_as_kafka(kafka_tools, pk, *args):
    """Kafka 4.4's kafka-dump-log and pk's DumpLogSegments on the same files: the same stdout and
    exit status; the same stderr (its first line when the tool failed: Kafka adds a stack trace)."""
    k = kafka_tools("kafka-dump-log", *args)
    p = pk(*DUMP, *args)
    assert "Traceback" not in p.err
    assert (p.returncode, p.out) == (k.returncode, k.out), (args, p.err, k.err_first)
    if k.returncode == 0:
        assert p.err == k.err
    else:
        assert p.err == k.err_first + "\n"
    return p


def topic(data_dir, name, partitions=1, **configs) -> Engine:
    engine = Engine(data_dir)
    engine.create_topic(name, partitions, 1, configs={"retention.ms": "-1", **configs})
    return engine


def path_of(data_dir, name, partition=0, suffix=".log", base=SEG):
    return os.path.join(data_dir, f"{name}-{partition}", base + suffix)


def batch_line(b, position, *, ts_type="CreateTime", codec="none", valid="true"):
    """The 3.7 batch line, from kafka-python's view of the batch."""
    last_seq = -1 if b.base_sequence == -1 else b.base_sequence + b.last_offset_delta
    return (f"baseOffset: {b.base_offset} lastOffset: {b.base_offset + b.last_offset_delta} "
            f"count: {b.records_count} baseSequence: {b.base_sequence} lastSequence: {last_seq} "
            f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
            f"partitionLeaderEpoch: {b.leader_epoch} isTransactional: {str(b.is_transactional).lower()} "
            f"isControl: {str(b.is_control_batch).lower()} deleteHorizonMs: OptionalLong.empty "
            f"position: {position} {ts_type}: {b.max_timestamp} size: {b.size_in_bytes} magic: 2 "
            f"compresscodec: {codec} crc: {b.crc} isvalid: {valid}")


def record_line(r, b, ts_type="CreateTime", data=False):
    seq = -1 if b.base_sequence == -1 else b.base_sequence + (r.offset - b.base_offset)
    line = (f"| offset: {r.offset} {ts_type}: {r.timestamp} keySize: {-1 if r.key is None else len(r.key)} "
            f"valueSize: {-1 if r.value is None else len(r.value)} sequence: {seq} "
            f"headerKeys: [{','.join(k for k, _ in r.headers)}]")
    if data:
        if r.key is not None:
            line += f" key: {r.key.decode()}"
        if r.value is not None:
            line += f" payload: {r.value.decode()}"
    return line


def kafka_python_view(path):
    from kafka.record.memory_records import MemoryRecords

    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    for batch in MemoryRecords(data):
        out.append((pos, batch, list(batch)))
        pos += batch.size_in_bytes
    return out


# --------------------------------------------------------------------------- exact texts
def test_worked_example_exact_text(pk, data_dir, kafka_tools):
    engine = topic(data_dir, "ex")
    engine.partition("ex", 0).append_batches([WORKED_EXAMPLE])
    engine.close()
    log = path_of(data_dir, "ex")
    with open(log, "rb") as f:
        assert f.read() == WORKED_EXAMPLE
    head = (f"Dumping {log}\n"
            "Log starting offset: 0\n"
            "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 "
            "producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false "
            "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000005 size: 91 magic: 2 "
            "compresscodec: none crc: 1147783309 isvalid: true\n")
    assert ok(pk(*DUMP, "--files", log)) == head
    assert ok(pk(*DUMP, "--files", log, "--deep-iteration")) == head + (
        "| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 5 sequence: -1 headerKeys: []\n"
        "| offset: 1 CreateTime: 1700000000005 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [h]\n")
    assert ok(pk(*DUMP, "--files", log, "--print-data-log")) == head + (
        "| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 5 sequence: -1 headerKeys: [] "
        "key: k1 payload: hello\n"
        "| offset: 1 CreateTime: 1700000000005 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [h] "
        "payload: world\n")
    # --skip-record-metadata: "| key: .. payload: ..", "| payload: .." without a key (4.4)
    assert ok(pk(*DUMP, "--files", log, "--print-data-log", "--skip-record-metadata")) == head + (
        "| key: k1 payload: hello\n"
        "| payload: world\n")
    # ... and without --print-data-log no record line at all
    assert ok(pk(*DUMP, "--files", log, "--skip-record-metadata")) == head
    # a decoder option implies --print-data-log; single-dash options work as in jopt-simple
    assert ok(pk(*DUMP, "-files", log, "--value-decoder-class")) == ok(pk(*DUMP, "--files", log, "--print-data-log"))
    for args in (["--print-data-log"], ["--deep-iteration"], ["--print-data-log", "--skip-record-metadata"],
                 ["--skip-record-metadata"], ["--value-decoder-class"]):
        same_as_kafka(kafka_tools, pk, "--files", log, *args)


def test_idempotent_batches_and_null_value(pk, data_dir):
    engine = topic(data_dir, "idem")
    batch = records.encode_batch([(b"a", b"1", (("x", b"1"), ("y", None)), TS), (b"b", None, (), TS + 7)],
                                 producer_id=4000, producer_epoch=3, base_sequence=2147483646)
    engine.partition("idem", 0).append_batches([batch])
    engine.close()
    log = path_of(data_dir, "idem")
    out = ok(pk(*DUMP, "--files", log, "--print-data-log")).splitlines()
    assert out[2].startswith("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 2147483646 lastSequence: 2147483647 "
                             "producerId: 4000 producerEpoch: 3 partitionLeaderEpoch: 0 ")
    assert out[3] == ("| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 1 sequence: 2147483646 "
                      "headerKeys: [x,y] key: a payload: 1")
    assert out[4] == ("| offset: 1 CreateTime: 1700000000007 keySize: 1 valueSize: -1 sequence: 2147483647 "
                      "headerKeys: [] key: b")


def test_sequence_wraps_like_java(pk, tmp_path):
    batch = records.encode_batch([(None, b"v", (), TS)] * 3, producer_id=1, producer_epoch=0,
                                 base_sequence=2147483646)
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(batch)
    out = ok(pk(*DUMP, "--files", str(log), "--deep-iteration")).splitlines()
    assert "baseSequence: 2147483646 lastSequence: 0 " in out[2]  # DefaultRecordBatch.incrementSequence
    assert [line.split("sequence: ")[1].split()[0] for line in out[3:]] == ["2147483646", "2147483647", "0"]


def test_log_append_time(pk, tmp_path):
    batch = records.encode_batch([(None, b"a", (), TS), (None, b"b", (), TS + 1)],
                                 timestamp_type=records.LOG_APPEND_TIME)
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(batch)
    out = ok(pk(*DUMP, "--files", str(log), "--deep-iteration")).splitlines()
    assert " LogAppendTime: 1700000000001 size: " in out[2]
    # every record of a LogAppendTime batch carries the batch's max timestamp
    assert out[3].startswith("| offset: 0 LogAppendTime: 1700000000001 ")
    assert out[4].startswith("| offset: 1 LogAppendTime: 1700000000001 ")


def _as_control(batch: bytes) -> bytes:
    b = bytearray(batch)
    attributes = struct.unpack_from(">h", b, 21)[0] | records.CONTROL_MASK | records.TRANSACTIONAL_MASK
    struct.pack_into(">h", b, 21, attributes)
    struct.pack_into(">I", b, 17, records.crc32c(bytes(b[21:])))
    return bytes(b)


def test_transactional_batch_and_commit_marker(pk, tmp_path, kafka_tools):
    data = records.encode_batch([(b"k", b"v", (), TS)], producer_id=9, producer_epoch=1, base_sequence=0,
                                transactional=True)
    marker = _as_control(records.with_base_offset(
        records.encode_batch([(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 5), (), TS + 1)],
                             producer_id=9, producer_epoch=1), 1))
    unknown = _as_control(records.with_base_offset(
        records.encode_batch([(struct.pack(">hh", 0, 9), b"", (), TS + 2)]), 2))
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(data + marker + unknown)
    for args in (["--print-data-log"], ["--deep-iteration"], ["--print-data-log", "--skip-record-metadata"]):
        same_as_kafka(kafka_tools, pk, "--files", str(log), *args)
    out = ok(pk(*DUMP, "--files", str(log), "--print-data-log")).splitlines()
    assert "isTransactional: true isControl: false" in out[2]
    assert out[3].endswith("sequence: 0 headerKeys: [] key: k payload: v")
    assert "baseOffset: 1 lastOffset: 1 count: 1 baseSequence: -1 lastSequence: -1 producerId: 9 " in out[4]
    assert "isTransactional: true isControl: true" in out[4]
    # control records: the marker, never key/payload
    assert out[5] == ("| offset: 1 CreateTime: 1700000000001 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
                      "endTxnMarker: COMMIT coordinatorEpoch: 5")
    assert out[7] == ("| offset: 2 CreateTime: 1700000000002 keySize: 4 valueSize: 0 sequence: -1 headerKeys: [] "
                      "controlType: UNKNOWN(9)")


# --------------------------------------------------------------------------- cross-check
@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_matches_kafka_python_reader(pk, data_dir, codec):
    from pk.engine.compression import codec_code

    engine = topic(data_dir, "cc", **{"segment.bytes": "1000000"})
    log_ = engine.partition("cc", 0)
    for n in range(12):
        items = [(None if i % 3 == 0 else f"key-{n}-{i}".encode(), f"value-{n}-{i}-".encode() * (i + 1),
                  (("h1", b"x"),) if i % 2 else (), TS + n * 10 + i) for i in range(n % 4 + 1)]
        log_.append_records(items, compression_type=codec_code(codec))
    engine.close()
    log = path_of(data_dir, "cc")
    expected = [f"Dumping {log}", "Log starting offset: 0"]
    for pos, batch, recs in kafka_python_view(log):
        expected.append(batch_line(batch, pos, codec=codec))
        expected.extend(record_line(r, batch, data=True) for r in recs)
    assert ok(pk(*DUMP, "--files", log, "--print-data-log")) == "\n".join(expected) + "\n"


def test_big_segment_with_indexes_matches_kafka_python(pk, data_dir):
    engine = topic(data_dir, "big")
    log_ = engine.partition("big", 0)
    for n in range(40):
        log_.append_records([(b"k%d" % n, b"x" * 700, (), TS + n)] * 3)
    engine.close()
    log = path_of(data_dir, "big")
    view = kafka_python_view(log)
    out = ok(pk(*DUMP, "--files", log)).splitlines()
    assert out[2:] == [batch_line(b, pos) for pos, b, _ in view]

    # the offset index: one line per entry, each pointing at a batch whose last offset it names
    index = path_of(data_dir, "big", suffix=".index")
    with open(index, "rb") as f:
        entries = list(struct.iter_unpack(">ii", f.read()))
    assert entries, "the engine wrote no index entries"
    last_offset_at = {pos: b.last_offset for pos, b, _ in view}
    assert all(last_offset_at[p] == rel for rel, p in entries)
    assert ok(pk(*DUMP, "--files", index)) == f"Dumping {index}\n" + "".join(
        f"offset: {rel} position: {p}\n" for rel, p in entries)
    assert ok(pk(*DUMP, "--files", index, "--verify-index-only")) == f"Dumping {index}\n"
    assert ok(pk(*DUMP, "--files", index, "--index-sanity-check")) == (
        f"Dumping {index}\n{index} passed sanity check.\n")

    timeindex = path_of(data_dir, "big", suffix=".timeindex")
    with open(timeindex, "rb") as f:
        tentries = list(struct.iter_unpack(">qi", f.read()))
    proc = pk(*DUMP, "--files", timeindex)
    assert ok(proc) == f"Dumping {timeindex}\n" + "".join(f"timestamp: {t} offset: {o}\n" for t, o in tentries)
    assert proc.err == ""
    assert ok(pk(*DUMP, "--files", timeindex, "--index-sanity-check")) == (
        f"Dumping {timeindex}\n{timeindex} passed sanity check.\n")


def test_index_mismatches_reported_newest_first(pk, data_dir, tmp_path, kafka_tools):
    engine = topic(data_dir, "mm")
    log_ = engine.partition("mm", 0)
    for n in range(30):
        log_.append_records([(None, b"y" * 1500, (), TS + n)])
    engine.close()
    d = tmp_path / "copy"
    d.mkdir()
    for suffix in (".log", ".index", ".timeindex"):
        with open(path_of(data_dir, "mm", suffix=suffix), "rb") as f:
            (d / (SEG + suffix)).write_bytes(f.read())
    raw = bytearray((d / f"{SEG}.index").read_bytes())
    entries = list(struct.iter_unpack(">ii", raw))
    assert len(entries) >= 3
    # claim wrong offsets for the first two entries
    struct.pack_into(">i", raw, 0, entries[0][0] + 100)
    struct.pack_into(">i", raw, 8, entries[1][0] + 200)
    (d / f"{SEG}.index").write_bytes(bytes(raw))
    index = str(d / f"{SEG}.index")
    proc = pk(*DUMP, "--files", index, "--verify-index-only")
    assert ok(proc) == f"Dumping {index}\n"
    assert proc.err == (f"Mismatches in :{index}\n"
                        f"  Index offset: {entries[1][0] + 200}, log offset: {entries[1][0]}\n"
                        f"  Index offset: {entries[0][0] + 100}, log offset: {entries[0][0]}\n")
    same_as_kafka(kafka_tools, pk, "--files", index, "--verify-index-only")
    same_as_kafka(kafka_tools, pk, "--files", index)
    # a trailing partial entry fails the sanity check
    (d / f"{SEG}.index").write_bytes(bytes(raw) + b"\x00\x00\x00")
    same_as_kafka(kafka_tools, pk, "--files", index, "--index-sanity-check")
    fails(pk(*DUMP, "--files", index, "--index-sanity-check"),
          f'Exception in thread "main" org.apache.kafka.storage.internals.log.CorruptIndexException: '
          f"Index file {index} is corrupt, found {len(raw) + 3} bytes which is neither positive nor a multiple of 8")


def test_time_index_mismatch_reports(pk, tmp_path, kafka_tools):
    # three one-record batches at 100-byte-ish positions; a hand-made time index with problems
    batches = [records.with_base_offset(records.encode_batch([(None, b"z", (), TS + 10 * i)]), i) for i in range(3)]
    (tmp_path / f"{SEG}.log").write_bytes(b"".join(batches))
    (tmp_path / f"{SEG}.index").write_bytes(b"")
    entries = [(TS + 10, 1), (TS + 5, 2), (TS + 20, 7)]  # right offset/wrong ts + out of order; unknown offset
    (tmp_path / f"{SEG}.timeindex").write_bytes(b"".join(struct.pack(">qi", t, o) for t, o in entries))
    ti = str(tmp_path / f"{SEG}.timeindex")
    proc = pk(*DUMP, "--files", ti)
    assert ok(proc) == (f"Dumping {ti}\n" + "".join(f"timestamp: {t} offset: {o}\n" for t, o in entries))
    assert proc.err == (f"Found timestamp mismatch in :{ti}\n"
                        f"  Index timestamp: {TS + 5}, log timestamp: {TS + 20}\n"
                        f"Found out of order timestamp in :{ti}\n"
                        f"  Index timestamp: {TS + 5}, Previously indexed timestamp: {TS + 10}\n"
                        f"The following indexed offsets are not found in :{ti}\n"
                        "Indexed offset: 7, found log offset: -1\n")
    same_as_kafka(kafka_tools, pk, "--files", ti)
    same_as_kafka(kafka_tools, pk, "--files", ti, "--verify-index-only")


def test_empty_index(pk, data_dir):
    Engine(data_dir).create_topic("e", 1, 1)
    index = path_of(data_dir, "e", suffix=".index")
    assert ok(pk(*DUMP, "--files", index)) == f"Dumping {index}\n{index} is empty.\n"
    assert ok(pk(*DUMP, "--files", index, "--index-sanity-check")) == f"Dumping {index}\n{index} is empty.\n"
    log = path_of(data_dir, "e")
    assert ok(pk(*DUMP, "--files", log)) == f"Dumping {log}\nLog starting offset: 0\n"


# --------------------------------------------------------------------------- log oddities
def test_non_consecutive_offsets_and_trailing_bytes(pk, tmp_path, kafka_tools):
    a = records.encode_batch([(None, b"a", (), TS)])
    b = records.with_base_offset(records.encode_batch([(None, b"b", (), TS), (None, b"c", (), TS)]), 5)
    c = records.with_base_offset(records.encode_batch([(None, b"d", (), TS)]), 9)
    log = tmp_path / "00000000000000000042.log"
    log.write_bytes(a + b + c + b"\x00" * 7)
    proc = pk(*DUMP, "--files", str(log), "--deep-iteration")
    lines = ok(proc).splitlines()
    assert lines[1] == "Log starting offset: 42"
    assert [ln.split()[2] for ln in lines if ln.startswith("| offset:")] == ["0", "5", "6", "9"]
    assert lines[-1] == "Found 7 invalid bytes at the end of 00000000000000000042.log"
    assert proc.err == (f"Non-consecutive offsets in {log}\n"
                        "  0 is followed by 5\n"
                        "  6 is followed by 9\n")
    same_as_kafka(kafka_tools, pk, "--files", str(log), "--deep-iteration")
    # --max-bytes stops after the batches that fit and never reports trailing bytes
    same_as_kafka(kafka_tools, pk, "--files", str(log), "--max-bytes", str(len(a) + 10))
    lines = ok(pk(*DUMP, "--files", str(log), "--max-bytes", str(len(a) + 10))).splitlines()
    assert len(lines) == 3 and lines[2].startswith("baseOffset: 0 ")


def test_corrupt_batch_is_reported_invalid(pk, tmp_path):
    batch = bytearray(records.encode_batch([(b"k", b"v", (), TS)]))
    batch[-3] ^= 0xFF  # inside the value: CRC no longer matches
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(bytes(batch))
    out = ok(pk(*DUMP, "--files", str(log))).splitlines()
    assert out[2].endswith(f"crc: {struct.unpack_from('>I', batch, 17)[0]} isvalid: false")


def test_record_size_below_minimum_is_fatal(pk, tmp_path):
    good = records.encode_batch([(None, b"a", (), TS)])
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(good + struct.pack(">qi", 1, 3) + b"\x00" * 20)
    proc = fails(pk(*DUMP, "--files", str(log)),
                 'Exception in thread "main" org.apache.kafka.common.errors.CorruptRecordException: '
                 f"Found record size 3 smaller than minimum record overhead (14) in file {log}.")
    assert proc.out.splitlines()[2].startswith("baseOffset: 0 ")


def test_legacy_messages(pk, tmp_path, kafka_tools):
    legacy = pytest.importorskip("kafka.record.legacy_records")
    builder = legacy.LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    builder.append(0, timestamp=TS, key=b"k0", value=b"v0")
    builder.append(1, timestamp=TS + 1, key=None, value=b"v1")
    data = bytes(builder.build())
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(data)
    from kafka.record.memory_records import MemoryRecords

    assert [r.offset for batch in MemoryRecords(data) for r in batch] == [0, 1]
    out = ok(pk(*DUMP, "--files", str(log), "--print-data-log")).splitlines()
    crc0 = struct.unpack_from(">I", data, 12)[0]
    assert out[2] == f"offset: 0 position: 0 CreateTime: {TS} size: 38 magic: 1 compresscodec: none crc: {crc0} isvalid: true"
    assert out[3] == (f"| offset: 0 CreateTime: {TS} keySize: 2 valueSize: 2 isValid: true crc: {crc0} "
                      "key: k0 payload: v0")
    crc1 = struct.unpack_from(">I", data, 38 + 12)[0]
    assert out[5] == f"| offset: 1 CreateTime: {TS + 1} keySize: -1 valueSize: 2 isValid: true crc: {crc1} payload: v1"
    same_as_kafka(kafka_tools, pk, "--files", str(log), "--print-data-log")


# --------------------------------------------------------------------------- decoders
def test_offsets_decoder(pk, data_dir, kafka_tools):
    group = "my-group"
    p = co.partition_for(group)
    engine = Engine(data_dir)
    assignment = co.encode_assignment({"orders": [0, 1], "audit": [3]}, version=0)
    with_user_data = co.encode_assignment({"orders": [2]}, user_data=b"\x00\x01\xab")
    members = [
        co.MemberMetadata("consumer-1-aaaa", "consumer-1", "/127.0.0.1", 45000, co.encode_subscription(["orders"]),
                          assignment, 300000),
        co.MemberMetadata("consumer-2-bbbb", "consumer-2", "/127.0.0.1", 45000, co.encode_subscription(["orders"]),
                          with_user_data, 300000),
    ]
    items = [
        (co.offset_commit_key(group, "orders", 0), co.offset_commit_value(42, "", TS), (), TS),
        (co.offset_commit_key(group, "orders", 1), co.offset_commit_value(7, "note", TS), (), TS),
        (co.group_metadata_key(group), co.group_metadata_value("consumer", 3, "range", "consumer-1-aaaa", members, TS),
         (), TS),
        (co.group_metadata_key(group), co.group_metadata_value("", 0, None, None), (), TS),
        (co.group_metadata_key("connect"), co.group_metadata_value(
            "connect", 1, "sessioned", "w1", [co.MemberMetadata("w1", "c", "h", 1, b"", b"\x00\x01\x02", 2)]), (), TS),
        (co.offset_commit_key(group, "orders", 0), None, (), TS),
        (co.group_metadata_key(group), None, (), TS),
        (struct.pack(">h", 99) + b"future", b"whatever", (), TS),
    ]
    engine.partition("__consumer_offsets", p).append_batches([records.encode_batch(items)])
    engine.close()
    log = path_of(data_dir, "__consumer_offsets", p)
    out = ok(pk(*DUMP, "--files", log, "--offsets-decoder")).splitlines()
    tails = [line.split("headerKeys: [] ", 1)[1] for line in out[3:]]
    # Kafka 4.4's texts (same_as_kafka below runs it on this file)
    assert tails == [
        'key: {"type":"1","data":{"group":"my-group","topic":"orders","partition":0}} payload: {"version":"3",'
        '"data":{"offset":42,"leaderEpoch":-1,"metadata":"","commitTimestamp":1700000000000}}',
        'key: {"type":"1","data":{"group":"my-group","topic":"orders","partition":1}} payload: {"version":"3",'
        '"data":{"offset":7,"leaderEpoch":-1,"metadata":"note","commitTimestamp":1700000000000}}',
        'key: {"type":"2","data":{"group":"my-group"}} payload: {"version":"3","data":{"protocolType":"consumer",'
        '"generation":3,"protocol":"range","leader":"consumer-1-aaaa","currentStateTimestamp":1700000000000,'
        '"members":[{"memberId":"consumer-1-aaaa","groupInstanceId":null,"clientId":"consumer-1",'
        '"clientHost":"/127.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":'
        '["orders"],"userData":null,"ownedPartitions":[],"generationId":-1,"rackId":null},"assignment":'
        '{"assignedPartitions":[{"topic":"orders","partitions":[0,1]},{"topic":"audit","partitions":[3]}],'
        '"userData":null}},{"memberId":"consumer-2-bbbb","groupInstanceId":null,"clientId":"consumer-2",'
        '"clientHost":"/127.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":'
        '["orders"],"userData":null,"ownedPartitions":[],"generationId":-1,"rackId":null},"assignment":'
        '{"assignedPartitions":[{"topic":"orders","partitions":[2]}],"userData":"AAGr"}}]}}',
        'key: {"type":"2","data":{"group":"my-group"}} payload: {"version":"3","data":{"protocolType":"",'
        '"generation":0,"protocol":null,"leader":null,"currentStateTimestamp":-1,"members":[]}}',
        'key: {"type":"2","data":{"group":"connect"}} payload: {"version":"3","data":{"protocolType":"connect",'
        '"generation":1,"protocol":"sessioned","leader":"w1","currentStateTimestamp":-1,"members":[{"memberId":'
        '"w1","groupInstanceId":null,"clientId":"c","clientHost":"h","rebalanceTimeout":2,"sessionTimeout":1,'
        '"subscription":"","assignment":"AAEC"}]}}',
        'key: {"type":"1","data":{"group":"my-group","topic":"orders","partition":0}} payload: <DELETE>',
        'key: {"type":"2","data":{"group":"my-group"}} payload: <DELETE>',
        "key: Unknown record type 99 at offset 7, skipping.",
    ]
    same_as_kafka(kafka_tools, pk, "--files", log, "--offsets-decoder")
    same_as_kafka(kafka_tools, pk, "--files", log, "--offsets-decoder", "--skip-record-metadata")


def test_offsets_decoder_members_in_written_order(pk, tmp_path, kafka_tools):
    # Kafka 4.4 prints the members as the record lists them (3.7 used a Scala HashMap's order)
    ids = ["m-%02d" % i for i in range(13)]
    members = [co.MemberMetadata(m, "c", "h", 1, co.encode_subscription(["t"]), co.encode_assignment({"t": [i]}), 1)
               for i, m in enumerate(ids)]
    value = co.group_metadata_value("consumer", 1, "range", ids[0], members)
    batch = records.encode_batch([(co.group_metadata_key("g"), value, (), TS)])
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(batch)
    out = ok(pk(*DUMP, "--files", str(log), "--offsets-decoder")).splitlines()
    assert [m.split('"', 1)[0] for m in out[3].split('"memberId":"')[1:]] == ids
    same_as_kafka(kafka_tools, pk, "--files", str(log), "--offsets-decoder")


def test_offsets_decoder_without_key_is_fatal(pk, tmp_path, kafka_tools):
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(records.encode_batch([(None, b"x", (), TS)]))
    proc = same_as_kafka(kafka_tools, pk, "--files", str(log), "--offsets-decoder")
    assert proc.returncode == 1
    # the record line was started when Kafka died: it is left unfinished, as the JVM leaves it
    assert proc.out.endswith("sequence: -1 headerKeys: []")


def test_transaction_log_decoder(pk, tmp_path, kafka_tools):
    def value(status, partitions, tagged=b"\x00"):
        body = struct.pack(">hqhib", 1, 1000, 2, 60000, status)
        if partitions is None:
            body += b"\x00"
        else:
            body += bytes([len(partitions) + 1])
            for t, ids in partitions:
                body += bytes([len(t) + 1]) + t.encode() + bytes([len(ids) + 1])
                body += b"".join(struct.pack(">i", i) for i in ids) + b"\x00"
        return body + struct.pack(">qq", TS, TS - 5) + tagged

    key = struct.pack(">hh", 0, 4) + b"tx-1"
    prev = struct.pack(">q", 999)
    tagged = b"\x02" + b"\x00\x08" + prev + b"\x02\x02" + struct.pack(">h", 2)
    items = [(key, value(0, None), (), TS), (key, value(1, [("orders", [0, 2])], tagged), (), TS),
             (key, None, (), TS), (struct.pack(">h", 7) + b"x", b"v", (), TS)]
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(records.encode_batch(items))
    proc = same_as_kafka(kafka_tools, pk, "--files", str(log), "--transaction-log-decoder")
    assert '"transactionStatus":"Ongoing","transactionPartitions":[{"topic":"orders","partitionIds":[0,2]}]' in proc.out


def test_value_and_key_decoders(pk, tmp_path, kafka_tools):
    log = tmp_path / f"{SEG}.log"
    log.write_bytes(records.encode_batch([(struct.pack(">i", -7), struct.pack(">q", 2**40), (), TS)]))
    out = ok(pk(*DUMP, "--files", str(log), "--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder",
                "--value-decoder-class", "org.apache.kafka.tools.api.LongDecoder")).splitlines()
    assert out[3].endswith("key: -7 payload: 1099511627776")
    same_as_kafka(kafka_tools, pk, "--files", str(log), "--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder",
                  "--value-decoder-class", "org.apache.kafka.tools.api.LongDecoder")
    # 3.x's kafka.serializer classes are gone from 4.x: Kafka fails after the "Dumping" line
    for name in ("com.example.Nope", "kafka.serializer.StringDecoder"):
        proc = same_as_kafka(kafka_tools, pk, "--files", str(log), "--value-decoder-class", name)
        assert proc.err == 'Exception in thread "main" java.lang.RuntimeException: Failed to load decoder class\n'
        assert proc.out == f"Dumping {log}\n"
    # a too short value: the line is left unfinished
    same_as_kafka(kafka_tools, pk, "--files", str(log), "--key-decoder-class", "org.apache.kafka.tools.api.LongDecoder")


# --------------------------------------------------------------------------- other files
def test_producer_snapshot_and_txn_index(pk, tmp_path, kafka_tools):
    entries = struct.pack(">qhiqiqiq", 1000, 2, 9, 41, 3, TS, 4, -1) + struct.pack(">qhiqiqiq", 1001, 0, -1, -1, 0, TS, -1, 17)
    body = struct.pack(">i", 2) + entries
    snap = tmp_path / "00000000000000000050.snapshot"
    snap.write_bytes(struct.pack(">hI", 1, records.crc32c(body)) + body)
    txn = tmp_path / f"{SEG}.txnindex"
    txn.write_bytes(struct.pack(">hqqqq", 0, 1000, 5, 9, 3) + struct.pack(">hqqqq", 0, 1001, 10, 12, 10))
    out = ok(pk(*DUMP, "--files", f"{snap},{txn}"))
    assert out == (
        f"Dumping {snap}\n"
        f"producerId: 1000 producerEpoch: 2 coordinatorEpoch: 4 currentTxnFirstOffset: OptionalLong.empty "
        f"lastTimestamp: {TS} firstSequence: 6 lastSequence: 9 lastOffset: 41 offsetDelta: 3 timestamp: {TS}\n"
        f"producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[17] "
        f"lastTimestamp: {TS}\n"
        f"Dumping {txn}\n"
        "version: 0 producerId: 1000 firstOffset: 5 lastOffset: 9 lastStableOffset: 3\n"
        "version: 0 producerId: 1001 firstOffset: 10 lastOffset: 12 lastStableOffset: 10\n")
    same_as_kafka(kafka_tools, pk, "--files", f"{snap},{txn}")
    snap.write_bytes(struct.pack(">hI", 1, 12345) + body)
    same_as_kafka(kafka_tools, pk, "--files", str(snap))
    proc = pk(*DUMP, "--files", str(snap))
    assert ok(proc) == f"Dumping {snap}\n"
    assert proc.err == (f"Snapshot is corrupt (CRC is no longer valid). Stored crc: 12345. "
                        f"Computed crc: {records.crc32c(body)}\n")


def test_several_files_in_order_and_unknown_suffix(pk, data_dir, tmp_path, kafka_tools):
    Engine(data_dir).create_topic("s", 1, 1)
    log = path_of(data_dir, "s")
    other = tmp_path / "notes.txt"
    other.write_text("x")
    proc = pk(*DUMP, "--files", f"{other},{log},")
    assert ok(proc) == f"Dumping {other}\nDumping {log}\nLog starting offset: 0\n"
    assert proc.err == f"Ignoring unknown file {other}\n"
    same_as_kafka(kafka_tools, pk, "--files", f"{other},{log},")


# --------------------------------------------------------------------------- errors
def test_errors(pk, tmp_path, kafka_tools):
    missing = str(tmp_path / f"{SEG}.log")
    proc = fails(pk(*DUMP, "--files", missing), f'Exception in thread "main" java.nio.file.NoSuchFileException: {missing}')
    assert proc.out == f"Dumping {missing}\nLog starting offset: 0\n"
    fails(pk(*DUMP, "--files", str(tmp_path / "x.log")),
          'Exception in thread "main" java.lang.NumberFormatException: For input string: "x"')
    noext = str(tmp_path / "noext")
    proc = pk(*DUMP, "--files", noext)  # 4.4: a name without a dot is an unknown file
    assert (proc.returncode, proc.out, proc.err) == (0, f"Dumping {noext}\n", f"Ignoring unknown file {noext}\n")
    missing_index = str(tmp_path / f"{SEG}.index")
    fails(pk(*DUMP, "--files", missing_index),
          f'Exception in thread "main" java.nio.file.NoSuchFileException: {tmp_path}/{SEG}.log')
    fails(pk(*DUMP, "--print-data-log"), 'Missing required argument "[files]"')
    fails(pk(*DUMP, "--bogus"), 'Exception in thread "main" joptsimple.UnrecognizedOptionException: '
                                "bogus is not a recognized option")
    fails(pk(*DUMP, "--files"), 'Exception in thread "main" joptsimple.OptionMissingRequiredArgumentException: '
                                "Option files requires an argument")
    fails(pk(*DUMP, "--files", missing_index, "--max-message-size", "big"),
          'Exception in thread "main" joptsimple.OptionArgumentConversionException: '
          "Cannot parse argument 'big' of option max-message-size")
    fails(pk(*DUMP, "--files", "a", "--files", "b"),
          'Exception in thread "main" joptsimple.MultipleArgumentsForOptionException: '
          "Found multiple arguments for option files, but you asked for only one")
    fails(pk(*DUMP, "--files", missing, "--cluster-metadata-decoder"),
          "--cluster-metadata-decoder is not supported by pk")
    for args in (["--files", missing], ["--files", str(tmp_path / "x.log")], ["--files", noext],
                 ["--files", missing_index], ["--print-data-log"], ["--bogus"], ["--files"],
                 ["--files", missing, "--max-message-size", "big"], ["--files", missing_index, "--max-message-size", "big"],
                 ["--files", missing, "--max-bytes", "big"], ["--files", "a", "--files", "b"]):
        same_as_kafka(kafka_tools, pk, *args)
    proc = pk(*DUMP)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("This tool helps to parse a log file and dump its contents to the console")


def test_help_and_version(pk):
    proc = pk(*DUMP, "--help")
    assert proc.returncode == 0 and "--files" in proc.out
    proc = pk(*DUMP, "--version")
    assert proc.returncode == 0 and proc.out == "4.4.0\n"


# --------------------------------------------------------------------------- against the JVM
_JVM_CHECK = r"""
import java.io.*;
import java.util.*;
public class JvmCheck {
  public static void main(String[] a) throws Exception {
    BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    List<String> lines = new ArrayList<>();
    for (String l; (l = r.readLine()) != null; ) lines.add(l);
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    if (a[0].equals("map")) {          // scala.collection.mutable.HashMap iteration order
      scala.collection.mutable.HashMap<String, Object> m = new scala.collection.mutable.HashMap<>();
      for (String l : lines) m.put(l, 1);
      scala.collection.Iterator<String> it = m.keysIterator();
      while (it.hasNext()) out.println(it.next());
    } else if (a[0].equals("json")) {  // Jackson's string escaping
      com.fasterxml.jackson.databind.ObjectMapper om = new com.fasterxml.jackson.databind.ObjectMapper();
      for (String l : lines) out.println(om.writeValueAsString(new String(hex(l), "UTF-8")));
    } else {                           // new String(bytes, UTF8), as code units
      for (String l : lines) {
        StringBuilder sb = new StringBuilder();
        for (char c : new String(hex(l), "UTF8").toCharArray()) sb.append(String.format("%04x", (int) c));
        out.println(sb);
      }
    }
  }
  static byte[] hex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }
}
"""


def _jvm_classpath():
    import glob
    import shutil

    try:
        import pyspark
    except ImportError:
        return None
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    wanted = [glob.glob(os.path.join(jars, p)) for p in
              ("scala-library-2.13*.jar", "jackson-databind-*.jar", "jackson-core-*.jar", "jackson-annotations-*.jar")]
    if shutil.which("java") is None or not all(wanted):
        return None
    return ":".join(sorted(w)[0] for w in wanted)


def test_emulations_match_the_jvm(tmp_path):
    """ScalaHashMap, the Jackson escaping and the UTF-8 replacement against the real libraries
    (Scala 2.13 and Jackson from pyspark's jars; skipped without a JVM)."""
    import random
    import subprocess

    from pk.engine.consumer_offsets import java_utf8
    from pk.engine.javacompat import ScalaHashMap, jackson_string

    cp = _jvm_classpath()
    if cp is None:
        pytest.skip("no java or no pyspark jars")
    src = tmp_path / "JvmCheck.java"
    src.write_text(_JVM_CHECK)

    def jvm(mode, lines):
        proc = subprocess.run(["java", "-cp", cp, str(src), mode], input="\n".join(lines).encode() + b"\n",
                              capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout.decode("utf-8").splitlines()

    rng = random.Random(5)
    keys = [f"consumer-{i}-{rng.getrandbits(64):x}" for i in range(40)] + [f"/tmp/d/{i:020d}.index" for i in range(9)]
    keys += ["", "é", "\U0001F600", keys[3]]
    m = ScalaHashMap()
    for k in keys:
        m.put(k, None)
    assert jvm("map", keys) == [k for k, _ in m.items()]

    texts = ['plain', 'q"b\\s', "t\tn\nr\rb\bf\f", "\x01\x1f\x7f", "é€\U0001F600 /<>&'"]
    assert jvm("json", [t.encode().hex() for t in texts]) == [jackson_string(t) for t in texts]

    alphabet = [0x41, 0x80, 0xA0, 0xBF, 0xC0, 0xC3, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF8, 0xFF]
    samples = [bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(400)]
    samples.append(bytes.fromhex("eda080"))

    def units(text):
        return "".join(f"{u:04x}" for u in struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H",
                                                           text.encode("utf-16-be")))

    assert jvm("utf8", [s.hex() for s in samples]) == [units(java_utf8(s)) for s in samples]
