"""Kafka's per-segment indexes: `.index` (offset → position) and `.timeindex`.

Both are sorted arrays of big-endian fixed-size entries with no header
(docs/on-disk-layout.md). pk appends entries as it goes instead of preallocating, so a file's length is
always a whole number of entries once written, and Kafka reads it the same way (entry count
= length / entry size). They are caches: when one fails the sanity check it is rebuilt from
the log.
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_right

_OFFSET_ENTRY = struct.Struct(">ii")  # relative offset, position
_TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset


class _Index:
    entry: struct.Struct

    def __init__(self, path: str, base_offset: int):
        self.path = path
        self.base_offset = base_offset
        self.keys: list[int] = []
        self.values: list[int] = []
        self._loaded_size = 0
        self._fd: int | None = None

    def load(self) -> bool:
        """(Re)read the file; return False when it fails the sanity check."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        self._loaded_size = len(data)
        size = self.entry.size
        usable = len(data) - len(data) % size
        keys, values = [], []
        for a, b in self.entry.iter_unpack(data[:usable]):
            keys.append(a)
            values.append(b)
        self.keys, self.values = keys, values
        if len(data) % size == 0 and self._sane():
            return True
        # A damaged index must not steer lookups (bisect over unsorted or misaligned entries
        # finds wrong positions): until it is rebuilt, use no entries, i.e. scan from the start.
        self.keys, self.values = [], []
        return False

    def quick_check(self) -> bool:
        """Kafka's cheap sanity check (AbstractIndex.sanityCheck): the file exists, holds whole
        entries, and its last entry does not sort before its first. Reads two entries only;
        the last one is left in `checked_last` (None when the index is empty)."""
        self.checked_last = None
        try:
            with open(self.path, "rb") as f:
                length = os.fstat(f.fileno()).st_size
                size = self.entry.size
                if length % size:
                    return False
                if length == 0:
                    return True
                first = self.entry.unpack(f.read(size))
                f.seek(length - size)
                last = self.entry.unpack(f.read(size))
        except FileNotFoundError:
            return False
        self.checked_last = last
        return self._pair_sane(first, last)

    @staticmethod
    def _pair_sane(first: tuple[int, int], last: tuple[int, int]) -> bool:
        return first[0] <= last[0] and 0 <= first[1] <= last[1]

    def refresh(self) -> None:
        """Pick up entries another process appended since the last load."""
        try:
            size = os.path.getsize(self.path)
        except FileNotFoundError:
            size = 0
        if size != self._loaded_size:
            self.load()

    def _sane(self) -> bool:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.keys)

    def append(self, a: int, b: int) -> None:
        self.append_many([(a, b)])

    def append_many(self, pairs: list[tuple[int, int]]) -> None:
        """Append entries with one write. The descriptor stays open across appends (one open
        per batch was a large share of the write path); rewrite() works in place, so it never
        goes stale."""
        if not pairs:
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, b"".join(self.entry.pack(a, b) for a, b in pairs))
        for a, b in pairs:
            self.keys.append(a)
            self.values.append(b)
        self._loaded_size += self.entry.size * len(pairs)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def rewrite(self, pairs: list[tuple[int, int]]) -> None:
        """Rewrite the whole file in place (after recovery or truncation; under the partition
        lock). In place rather than by rename, so that open append descriptors stay valid;
        a reader catching it half-written fails the sanity check and scans instead."""
        data = b"".join(self.entry.pack(a, b) for a, b in pairs)
        with open(self.path, "r+b" if os.path.exists(self.path) else "wb") as f:
            f.write(data)
            f.truncate(len(data))
        self.keys = [a for a, _ in pairs]
        self.values = [b for _, b in pairs]
        self._loaded_size = len(data)


class OffsetIndex(_Index):
    """Entries (offset - base, file position of the batch holding that offset)."""

    entry = _OFFSET_ENTRY

    def _sane(self) -> bool:
        keys, values = self.keys, self.values
        return all(keys[i] < keys[i + 1] and values[i] < values[i + 1] for i in range(len(keys) - 1)) and \
            all(k >= 0 for k in keys[:1])

    def lookup(self, offset: int) -> int:
        """File position from which a forward scan finds `offset` (0 when no entry helps)."""
        i = bisect_right(self.keys, offset - self.base_offset) - 1
        return self.values[i] if i >= 0 else 0

    def lookup_entry(self, offset: int) -> tuple[int, int] | None:
        """The entry (relative offset, position) `lookup` uses, or None."""
        i = bisect_right(self.keys, offset - self.base_offset) - 1
        return (self.keys[i], self.values[i]) if i >= 0 else None

    def last_entry(self) -> tuple[int, int] | None:
        return (self.keys[-1], self.values[-1]) if self.keys else None

    def position_at_most(self, position: int) -> int:
        """The last indexed batch position at or before `position` (0 when none)."""
        i = bisect_right(self.values, position) - 1
        return self.values[i] if i >= 0 else 0

    @staticmethod
    def _pair_sane(first: tuple[int, int], last: tuple[int, int]) -> bool:
        return 0 <= first[0] <= last[0] and 0 <= first[1] <= last[1]

    def last_position(self) -> int:
        return self.values[-1] if self.values else -1


class TimeIndex(_Index):
    """Entries (max timestamp so far, offset - base of the batch holding it)."""

    entry = _TIME_ENTRY

    def _sane(self) -> bool:
        keys, values = self.keys, self.values
        return all(keys[i] < keys[i + 1] and values[i] <= values[i + 1] for i in range(len(keys) - 1))

    def lookup(self, timestamp: int) -> int:
        """Offset from which a forward scan finds the first record with ts >= timestamp."""
        i = bisect_right(self.keys, timestamp) - 1
        return self.base_offset + self.values[i] if i >= 0 else self.base_offset

    def last_timestamp(self) -> int:
        return self.keys[-1] if self.keys else -1
