"""DumpLogSegments' column-wise record lines (commands/dump_log/record_lines.py) print exactly
what the record-by-record reader prints: for large uniform batches, compressed ones,
LogAppendTime, sequences that wrap past Integer.MAX_VALUE, offset gaps, and batches the
column path must hand back (headers, overlong varints, a corrupt record)."""

from __future__ import annotations

import pytest

from pk.commands.dump_log import record_lines, tool
from pk.engine import records

NOW = 1_700_000_000_000


def _batches() -> list[bytes]:
    out, offset = [], 0

    def add(batch: bytes) -> None:
        nonlocal offset
        batch = records.with_base_offset(batch, offset)
        out.append(batch)
        offset = records.read_header(batch).next_offset

    add(records.encode_batch([(None, b"v" * 100, (), NOW + i) for i in range(3000)], base_sequence=7,
                             producer_id=3, producer_epoch=0))
    add(records.encode_batch([(b"k%d" % i, b"%d" % i, (), NOW) for i in range(700)], compression_type=1))
    add(records.encode_batch([(b"key", None, (), NOW)] * 400, timestamp_type=records.LOG_APPEND_TIME,
                             max_timestamp=NOW + 5))
    add(records.encode_batch([(None, b"x" * 9000, (), NOW)] * 300, base_sequence=2**31 - 100,
                             producer_id=4, producer_epoch=1))
    add(records.encode_batch([(None, b"h", (("a", b"1"),), NOW)] * 300))  # headers: the record path
    add(records.encode_batch([(None, b"y", (), NOW)] * 20))  # small: the record path
    gaps = records.encode_batch([(None, b"z", (), NOW)] * 500, offset_deltas=[3 * i for i in range(500)],
                                last_offset_delta=1499)
    add(gaps)
    return out


def _dump(path: str, monkeypatch, columns_from: int, **options) -> tuple[str, int]:
    monkeypatch.setattr(record_lines, "COLUMNS_FROM", columns_from)
    written: list[str] = []
    out = tool.Output(written.append, written.append)
    try:
        tool.run(tool.DumpOptions(files=path, deep_iteration=True, **options), out)
        failed = 0
    except Exception:  # noqa: BLE001 - the same failure must come from both paths
        failed = 1
    out.flush()
    return "".join(written), failed


@pytest.fixture
def segment(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(_batches()))
    return str(path)


@pytest.mark.parametrize("options", [{}, {"skip_record_metadata": True}, {"print_data_log": True}])
def test_column_lines_equal_record_lines(segment, monkeypatch, options):
    expected = _dump(segment, monkeypatch, 1 << 60, **options)
    got = _dump(segment, monkeypatch, 1, **options)
    assert got == expected
    assert expected[1] == 0
    if not options:
        assert expected[0].count("| offset: ") == 5220


def test_overlong_varints_and_a_corrupt_record_take_the_record_path(tmp_path, monkeypatch):
    batch = bytearray(records.encode_batch([(None, b"v" * 10, (), NOW)] * 300))
    # The last record's value grows by one byte inside an unchanged batch length: the record
    # path reports Kafka's error for it; the column path must not print it as plain.
    batch[-2] = 0x80
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(batch))
    expected = _dump(str(path), monkeypatch, 1 << 60)
    assert _dump(str(path), monkeypatch, 1) == expected
    overlong = records.encode_batch([(None, b"v", (), NOW)] * 300)
    assert record_lines._plain(record_lines_columns(overlong))
    body = bytearray(overlong)
    at = records.HEADER_SIZE + 1 + 1  # first record: length, attributes, then its timestamp delta 00
    body[at:at + 1] = b"\x80\x00"  # the same 0 as two bytes: overlong
    assert not record_lines._plain(record_lines_columns(bytes(body), fix_length=True))


def record_lines_columns(batch: bytes, fix_length: bool = False):
    from pk.engine.records import columns

    if fix_length:  # the first record grew by one byte: its length and the batch's follow
        batch = bytearray(batch)
        batch[records.HEADER_SIZE] += 2  # zig-zag length + 1
        size = len(batch) - records.LOG_OVERHEAD
        batch[8:12] = size.to_bytes(4, "big")
        batch = bytes(batch)
    return columns.scan(batch, [(0, records.read_header(batch))])
