"""engine/records: walking a segment file's batches, and LogAppendTime restamping."""

import os
import struct

import pytest

from pk.engine import records
from pk.engine.errors import CorruptRecordError, InvalidRecordError


def _batches(n, records_each=3, value=b"v"):
    out = []
    for i in range(n):
        out.append(records.encode_batch([(b"k", value * (i + 1), (), 1000 + i)] * records_each,
                                        base_offset=i * records_each))
    return out


def _file(tmp_path, data: bytes):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return os.open(path, os.O_RDONLY)


@pytest.mark.parametrize("chunk", [records.HEADER_SIZE, 100, 1000, records.FILE_CHUNK])
@pytest.mark.parametrize("with_data", [False, True])
def test_walks_every_batch_whatever_the_chunk(tmp_path, chunk, with_data):
    batches = _batches(20, value=b"x" * 37)
    fd = _file(tmp_path, b"".join(batches))
    try:
        walked = list(records.iter_file_batches(fd, with_data=with_data, chunk=chunk))
    finally:
        os.close(fd)
    positions = [sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    assert [w[0] for w in walked] == positions
    assert [w[1].base_offset for w in walked] == [3 * i for i in range(20)]
    if with_data:
        assert [bytes(w[2]) for w in walked] == batches


def test_starts_and_ends_where_asked_and_stops_at_a_cut_tail(tmp_path):
    batches = _batches(5)
    data = b"".join(batches)
    fd = _file(tmp_path, data + batches[0][:40])  # a torn tail: a batch being written
    try:
        start = len(batches[0])
        walked = [pos for pos, _ in records.iter_file_batches(fd, start, chunk=70)]
        assert walked == [sum(len(b) for b in batches[:i]) for i in range(1, 5)]
        cut = list(records.iter_file_batches(fd, 0, len(data) - 1))  # the end cuts the last batch
        assert len(cut) == 4
    finally:
        os.close(fd)


def test_an_impossible_length_stops_the_walk_or_raises_when_strict(tmp_path):
    batches = _batches(4)
    data = bytearray(b"".join(batches))
    bad = len(batches[0]) + len(batches[1])
    struct.pack_into(">i", data, bad + 8, 3)
    fd = _file(tmp_path, bytes(data))
    try:
        assert len(list(records.iter_file_batches(fd))) == 2
        with pytest.raises(records.BadBatchLength) as info:
            list(records.iter_file_batches(fd, strict=True, with_data=True))
        assert (info.value.position, info.value.size) == (bad, 15)
        assert isinstance(info.value, CorruptRecordError)
    finally:
        os.close(fd)


def test_log_append_time_restamps_the_header_and_keeps_the_crc_valid():
    batch = records.encode_batch([(b"k", b"v", (), 1000), (None, b"w", (), 1005)], compression_type=0)
    stamped = records.with_log_append_time(batch, 9999)
    header = records.check_batch(stamped)
    assert header.timestamp_type == records.LOG_APPEND_TIME
    assert header.max_timestamp == 9999
    assert header.base_timestamp == 1000
    assert [r.timestamp for r in records.decode_records(stamped)] == [9999, 9999]
    assert stamped[records.CRC_OFFSET:records.ATTRIBUTES_OFFSET] != batch[records.CRC_OFFSET:records.ATTRIBUTES_OFFSET]


def test_field_offsets_name_the_header_layout():
    raw = records.encode_batch([(b"k", b"v", (), 7)], base_offset=5, producer_id=11, producer_epoch=2,
                               base_sequence=4)
    header = records.read_header(raw)
    assert struct.unpack_from(">q", raw, records.BASE_OFFSET_OFFSET)[0] == header.base_offset
    assert struct.unpack_from(">i", raw, records.BATCH_LENGTH_OFFSET)[0] == header.batch_length
    assert raw[records.MAGIC_OFFSET] == records.MAGIC
    assert struct.unpack_from(">I", raw, records.CRC_OFFSET)[0] == header.crc
    assert struct.unpack_from(">q", raw, records.MAX_TIMESTAMP_OFFSET)[0] == 7
    assert struct.unpack_from(">q", raw, records.PRODUCER_ID_OFFSET)[0] == 11
    assert struct.unpack_from(">h", raw, records.PRODUCER_EPOCH_OFFSET)[0] == 2
    assert struct.unpack_from(">i", raw, records.BASE_SEQUENCE_OFFSET)[0] == 4
    assert struct.unpack_from(">i", raw, records.RECORDS_COUNT_OFFSET)[0] == 1


def test_validate_batch_checks_counts_after_the_crc():
    good = records.encode_batch([(b"k", b"v", (), 1), (b"k", b"w", (), 2)])
    assert records.validate_batch(good).records_count == 2
    # lastOffsetDelta 5 for two records: offsets would be assigned past the records
    bad = records.encode_batch([(b"k", b"v", (), 1), (b"k", b"w", (), 2)], last_offset_delta=5)
    with pytest.raises(InvalidRecordError, match="offset deltas do not match its record count"):
        records.validate_batch(bad)
    torn = bytearray(good)
    torn[-1] ^= 1
    with pytest.raises(CorruptRecordError, match="is corrupt"):
        records.validate_batch(bytes(torn))
