"""commands/parse_ahead.py: the console producer's parse-ahead process, in this process.

The tool's runs through it (records stored, lines handed back, standard input read in part) are
in test_console_producer.py; these check the parent's side directly: the columns it hands over,
where the ordinary reader continues, and that the child is always stopped and reaped."""

from __future__ import annotations

import os

import pytest

from pk.commands import parse_ahead
from pk.commands import producer as cmd
from pk.engine.partitioner import murmur2_many

CHUNK = 64 * 1024  # small blocks: many of them from a small file


def keyed_file(tmp_path, lines: list[bytes], name: str = "input.txt"):
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    return path


def reader(**props):
    return cmd.LineReader({"parse.key": "true", "key.separator": ":", **props})


def lines_of(n: int) -> list[bytes]:
    return [b"key%d:value %d %s\n" % (i % 313, i, b"y" * (i % 17)) for i in range(n)]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_blocks_are_the_readers_columns_with_the_keys_hashes(tmp_path):
    lines = lines_of(20000)
    path = keyed_file(tmp_path, lines)
    r = reader()
    with open(path, "rb") as f:
        ahead = parse_ahead.ParseAhead.start(f.fileno(), r, CHUNK)
        assert ahead is not None
        pid = ahead.pid
        try:
            blocks = list(ahead.blocks())
        finally:
            ahead.close()
        assert os.lseek(f.fileno(), 0, os.SEEK_CUR) == path.stat().st_size  # all of it parsed ahead
    assert gone(pid)
    assert b"".join(block for block, _, _ in blocks) == path.read_bytes()
    for block, spans, hashes in blocks:
        assert len(block) <= CHUNK and block.endswith(b"\n")
        expected = r.parse_spans(block)
        for name in ("key_starts", "key_lengths", "value_starts", "value_lengths"):
            assert getattr(spans, name).tolist() == getattr(expected, name).tolist()
        own = murmur2_many(block, expected.key_starts, expected.key_lengths)
        assert [h & 0xFFFFFFFF for h in own.tolist()] == hashes.tolist()


@pytest.mark.parametrize("bad", [b"no separator here\n", b"key:carriage\r\n", b"key:\xff\xfe\n"])
def test_a_block_it_does_not_take_is_handed_back(tmp_path, bad):
    lines = lines_of(20000)
    lines[15000] = bad
    path = keyed_file(tmp_path, lines)
    with open(path, "rb") as f:
        ahead = parse_ahead.ParseAhead.start(f.fileno(), reader(), CHUNK)
        pid = ahead.pid
        try:
            blocks = list(ahead.blocks())
        finally:
            ahead.close()
        position = os.lseek(f.fileno(), 0, os.SEEK_CUR)
    assert gone(pid)
    taken = b"".join(block for block, _, _ in blocks)
    assert position == len(taken)  # the ordinary reader goes on right after the last block taken
    bad_at = sum(map(len, lines[:15000]))
    assert bad_at - CHUNK < position <= bad_at  # from the block with the bad line on
    assert taken == path.read_bytes()[:position]


def test_a_last_line_without_newline_is_left_to_the_ordinary_reader(tmp_path):
    lines = lines_of(20000)
    lines[-1] = lines[-1].rstrip(b"\n")
    path = keyed_file(tmp_path, lines)
    with open(path, "rb") as f:
        ahead = parse_ahead.ParseAhead.start(f.fileno(), reader(), CHUNK)
        try:
            taken = b"".join(block for block, _, _ in ahead.blocks())
        finally:
            ahead.close()
        assert os.read(f.fileno(), 1 << 20) == path.read_bytes()[len(taken):]
    assert path.read_bytes()[len(taken):].endswith(lines[-1])


def test_not_started_where_it_does_not_apply(tmp_path):
    path = keyed_file(tmp_path, lines_of(20000))
    small = keyed_file(tmp_path, lines_of(10), "small.txt")
    with open(path, "rb") as f:
        assert parse_ahead.ParseAhead.start(f.fileno(), reader(**{"parse.key": "false"}), CHUNK) is None
        assert parse_ahead.ParseAhead.start(f.fileno(), reader(**{"parse.headers": "true"}), CHUNK) is None
    with open(small, "rb") as f:
        assert parse_ahead.ParseAhead.start(f.fileno(), reader(), CHUNK) is None  # under two blocks
    r, w = os.pipe()
    try:
        assert parse_ahead.ParseAhead.start(r, reader(), CHUNK) is None  # not a regular file
    finally:
        os.close(r)
        os.close(w)


def test_closing_early_stops_the_child(tmp_path):
    path = keyed_file(tmp_path, lines_of(50000))
    with open(path, "rb") as f:
        ahead = parse_ahead.ParseAhead.start(f.fileno(), reader(), CHUNK)
        pid = ahead.pid
        blocks = ahead.blocks()
        first, _, _ = next(blocks)
        ahead.close()
        ahead.close()  # again: nothing
        assert os.lseek(f.fileno(), 0, os.SEEK_CUR) == len(first)
    assert gone(pid)


def test_a_silent_child_is_given_up_on(monkeypatch):
    monkeypatch.setattr(parse_ahead, "STALL_SECONDS", 0.05)
    r, w = os.pipe()
    try:
        os.write(w, b"1234")
        assert parse_ahead._read_into(r, bytearray(8)) is False  # half a message, then nothing
    finally:
        os.close(r)
        os.close(w)


def test_no_process_to_be_had_means_reading_without_one(tmp_path, monkeypatch):
    """fork() refused (EAGAIN, ENOMEM): no parse-ahead, no descriptor left open, the input where it was."""
    import errno

    def refuse():
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    path = keyed_file(tmp_path, lines_of(20000))
    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(parse_ahead.os, "fork", refuse)
    with open(path, "rb") as f:
        assert parse_ahead.ParseAhead.start(f.fileno(), reader(), CHUNK) is None
        assert os.lseek(f.fileno(), 0, os.SEEK_CUR) == 0
    assert len(os.listdir("/proc/self/fd")) == before
