"""The offset and time indexes as AbstractIndex opens them read-only: entries, lookups
(the largest lower bound, warm section first) and the sanity checks."""

from __future__ import annotations

import struct
from typing import Callable

from ..errors import CORRUPT_INDEX, ILLEGAL_ARGUMENT, JavaError
from .java import absolute
from .segment import NO_TIMESTAMP

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class IndexFile:
    """OffsetIndex / TimeIndex opened read-only (AbstractIndex): entries = length / entry size."""

    def __init__(self, path: str, base_offset: int, entry: struct.Struct):
        self.path = path
        self.base_offset = base_offset
        self.entry = entry
        try:
            with open(path, "rb") as fh:
                self.data = fh.read()
        except FileNotFoundError:
            # Kafka creates the missing file, then refuses to size it (maxIndexSize = -1).
            raise JavaError(ILLEGAL_ARGUMENT, "Invalid max index size: -1") from None
        except PermissionError:
            raise JavaError("java.io.FileNotFoundException", f"{path} (Permission denied)") from None
        except IsADirectoryError:
            raise JavaError("java.io.FileNotFoundException", f"{path} (Is a directory)") from None
        self.length = len(self.data)
        self.entries = self.length // entry.size

    def raw(self, i: int) -> tuple[int, int]:
        return self.entry.unpack_from(self.data, i * self.entry.size)


class OffsetIndexFile(IndexFile):
    def __init__(self, path: str, base_offset: int):
        super().__init__(path, base_offset, _OFFSET_ENTRY)

    def entry_at(self, i: int) -> tuple[int, int]:
        rel, position = self.raw(i)
        return self.base_offset + rel, position

    def sanity_check(self) -> None:
        last = self.entry_at(self.entries - 1)[0] if self.entries else self.base_offset
        if self.entries != 0 and last < self.base_offset:
            raise JavaError(CORRUPT_INDEX, f"Corrupt index found, index file {absolute(self.path)} has non-zero "
                                           f"size but the last offset is {last} which is less than the base "
                                           f"offset {self.base_offset}")
        if self.length % 8 != 0:
            raise JavaError(CORRUPT_INDEX, f"Index file {absolute(self.path)} is corrupt, found {self.length} "
                                           "bytes which is neither positive nor a multiple of 8")

    def lookup(self, target: int) -> tuple[int, int]:
        """OffsetIndex.lookup: the largest entry with offset <= target, else (base, 0)."""
        slot = largest_lower_bound_slot(self.entries, lambda i: self.entry_at(i)[0], target, 8192 // 8)
        return (self.base_offset, 0) if slot == -1 else self.entry_at(slot)


class TimeIndexFile(IndexFile):
    def __init__(self, path: str, base_offset: int):
        super().__init__(path, base_offset, _TIME_ENTRY)

    def entry_at(self, i: int) -> tuple[int, int]:
        ts, rel = self.raw(i)
        return ts, self.base_offset + rel

    def sanity_check(self) -> None:
        last_ts, last_offset = self.entry_at(self.entries - 1) if self.entries else (NO_TIMESTAMP, self.base_offset)
        if self.entries != 0:
            first_ts = self.entry_at(0)[0]
            if last_ts < first_ts:
                raise JavaError(CORRUPT_INDEX, f"Corrupt time index found, time index file ({absolute(self.path)}) "
                                               f"has non-zero size but the last timestamp is {last_ts} which is "
                                               f"less than the first timestamp {first_ts}")
            if last_offset < self.base_offset:
                raise JavaError(CORRUPT_INDEX, f"Corrupt time index found, time index file ({absolute(self.path)}) "
                                               f"has non-zero size but the last offset is {last_offset} which is "
                                               f"less than the first offset {self.base_offset}")
        if self.length % 12 != 0:
            raise JavaError(CORRUPT_INDEX, f"Time index file {absolute(self.path)} is corrupt, found {self.length} "
                                           "bytes which is neither positive nor a multiple of 12")


def largest_lower_bound_slot(entries: int, key_at: Callable[[int], int], target: int, warm_entries: int) -> int:
    """AbstractIndex.indexSlotRangeFor(..., KEY, LARGEST_LOWER_BOUND), warm section included."""
    if entries == 0:
        return -1

    def search(lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            found = key_at(mid)
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        return lo

    first_hot = max(0, entries - 1 - warm_entries)
    if key_at(first_hot) < target:
        return search(first_hot, entries - 1)
    if key_at(0) > target:
        return -1
    return search(0, first_hot)
