"""The keyed console producer's parse-ahead process: the columns of the next blocks of lines
found on the other core while the producer encodes and stores this one.

Why a process: finding each line's key and value (`LineReader.parse_spans`) and hashing the
keys (`partitioner.murmur2_many`) is about a third of the keyed producer's work on a file,
and it is a chain of NumPy calls of a millisecond each. A thread doing it paid for every
call with a GIL hand-over and made the run slower (docs/hot-paths.md); a forked process
has its own interpreter and needs no hand-over at all.

How: for a regular file, `ParseAhead.start` forks before the producer opens (so before it
starts any thread: a fork copies only the thread that calls it). The child reads blocks of
whole lines with `pread` (the file position is the parent's, untouched), parses each, and
writes through a pipe the block's place in the file and five int64 columns (key start, key
length, value start, value length, murmur2 of the key). The parent reads the block's bytes
itself (`pread`, one copy) and hands both to the producer.

The child takes only the plain case: lines that are valid UTF-8 without `\\r`, each with the
key separator, no null marker. At the first block that is anything else (or a line longer
than a block, or the end of a file whose last line has no `\\n`) it says where, and stops;
the parent seeks there and its ordinary line reader does the rest, reporting errors exactly
as before. Anything the child cannot do becomes such a hand-back, never a failure of its own.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import stat
import struct
import sys

# A message: start and end of the block in the file, its lines, what it is.
_HEADER = struct.Struct("<qqqq")
_SPANS, _FROM_HERE = 0, 1  # columns follow; or: the ordinary reader goes on from `start`
_COLUMNS = 5
_PIPE_BYTES = 1 << 20  # Linux's default cap for an unprivileged F_SETPIPE_SZ
MIN_BLOCKS = 2  # a file of fewer blocks is not worth a process
STALL_SECONDS = 10.0  # a block takes the child milliseconds: this long means it is stuck


class ParseAhead:
    """The parent's side: `blocks()` yields (block bytes, Spans, key hashes) in file order;
    `resume_at` is then where the ordinary reader continues."""

    def __init__(self, fd: int, pid: int, pipe: int, start: int):
        self.fd = fd
        self.pid = pid
        self.pipe = pipe
        self.resume_at = start

    @classmethod
    def start(cls, fd: int, reader, chunk_bytes: int) -> "ParseAhead | None":
        """Fork the child for input `fd`, or None where it does not apply (not Linux, not a
        regular file, one of fewer than two blocks, or lines parse_spans does not take)."""
        if not sys.platform.startswith("linux") or not reader.spans_apply():
            return None
        try:
            st = os.fstat(fd)
            start = os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size - start < MIN_BLOCKS * chunk_bytes:
            return None
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None  # out of descriptors: the producer reads as it would without
        try:
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        except (OSError, AttributeError):
            pass  # a smaller pipe only means more, smaller writes
        # Ctrl-C is held back across the fork: the child must never run the parent's
        # handlers, nor the parent's code after this call.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pid = os.fork()
            if pid == 0:
                _child(fd, read_end, write_end, reader, start, chunk_bytes, mask)  # never returns
        except OSError:  # no process to be had (EAGAIN, ENOMEM): read without one
            os.close(read_end)
            return None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(write_end)
        return cls(fd, pid, read_end, start)

    def blocks(self):
        from pk.engine.records.spans import Spans
        import numpy as np

        header = bytearray(_HEADER.size)
        while _read_into(self.pipe, header):
            start, end, lines, kind = _HEADER.unpack(header)
            if kind != _SPANS:
                self.resume_at = start
                return
            columns = np.empty((_COLUMNS, lines), np.int64)
            if not _read_into(self.pipe, memoryview(columns).cast("B")):
                return  # the child is gone: the ordinary reader goes on from resume_at
            block = os.pread(self.fd, end - start, start)
            if len(block) != end - start:
                return  # the file shrank under us: the ordinary reader sees what is left
            self.resume_at = end
            ks, kl, vs, vl, hashes = columns
            yield block, Spans(block, ks, kl, vs, vl), hashes

    def close(self) -> None:
        """Stop the child (whatever it was doing) and reap it; the input's position is then
        where the ordinary reader continues. Closing again does nothing."""
        if self.pid is None:
            return
        try:
            os.close(self.pipe)
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        self.pid = None
        try:
            os.lseek(self.fd, self.resume_at, os.SEEK_SET)
        except OSError:
            pass


def _read_into(fd: int, buf) -> bool:
    """Fill buf from the pipe; False at its end (the child gone before a whole message) or
    when the child has said nothing for STALL_SECONDS (a child that hangs must not hang the
    producer: the ordinary reader takes over)."""
    view = memoryview(buf)
    got = 0
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while got < len(view):
        if not poller.poll(STALL_SECONDS * 1000):
            return False
        n = os.readv(fd, [view[got:]])
        if n == 0:
            return False
        got += n
    return True


def _child(fd: int, read_end: int, pipe: int, reader, start: int, chunk_bytes: int, mask) -> None:
    """The forked side: parse blocks until the file ends or a block needs the ordinary
    reader, then exit without running anything of the parent's (no atexit, no buffers)."""
    code = 0
    try:
        # Ctrl-C is the parent's to handle: it stops the child. A parent gone away closes
        # the pipe, and the next write ends the child (SIGPIPE).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.close(read_end)
        _parse_blocks(fd, pipe, reader, start, chunk_bytes)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _parse_blocks(fd: int, pipe: int, reader, pos: int, chunk_bytes: int) -> None:
    import numpy as np

    from pk.engine.partitioner import murmur2_many

    while True:
        data = os.pread(fd, chunk_bytes, pos)
        cut = data.rfind(b"\n") + 1
        spans = None
        if cut:
            block = data if cut == len(data) else data[:cut]
            if _plain(block):
                spans = reader.parse_spans(block)
        if spans is None:  # the end, or lines for the ordinary reader
            os.write(pipe, _HEADER.pack(pos, pos, 0, _FROM_HERE))
            return
        columns = np.empty((_COLUMNS, spans.n), np.int64)
        columns[0] = spans.key_starts
        columns[1] = spans.key_lengths
        columns[2] = spans.value_starts
        columns[3] = spans.value_lengths
        columns[4] = murmur2_many(spans.data, spans.key_starts, spans.key_lengths).view(np.uint32)
        _write_all(pipe, [_HEADER.pack(pos, pos + cut, spans.n, _SPANS), memoryview(columns).cast("B")])
        pos += cut


def _plain(block: bytes) -> bool:
    """Lines the ordinary reader hands over unchanged: no `\\r` (which it turns into line
    ends) and valid UTF-8 (which it refuses otherwise)."""
    if b"\r" in block:
        return False
    if block.isascii():
        return True
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _write_all(fd: int, pieces: list) -> None:
    views = [memoryview(p) for p in pieces]
    while views:
        n = os.writev(fd, views)
        while views and n >= len(views[0]):
            n -= len(views[0])
            views.pop(0)
        if views and n:
            views[0] = views[0][n:]
