"""Kafka's transaction index: `<base offset>.txnindex` beside each segment.

One 34-byte entry per transaction aborted while the segment was the active one, in the order
the aborts happened (Kafka's AbortedTxn, version 0):

    int16 version | int64 producer id | int64 first offset | int64 last offset | int64 last stable offset

`first offset` is the transaction's first record, `last offset` its abort marker, `last
stable offset` the partition's LSO once the abort was written. A read_committed Fetch
answers, with its records, the aborted transactions that overlap them (collect), so the
consumer can drop their records; the index is what spares it reading markers ahead.

The file is created on the first abort (as Kafka does) and deleted with its segment.
"""

from __future__ import annotations

import os
import struct
from typing import Iterable, NamedTuple

from . import records
from .segment import file_stem

SUFFIX = ".txnindex"
VERSION = 0
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def path_for(directory: str, base_offset: int) -> str:
    return os.path.join(directory, file_stem(base_offset) + SUFFIX)


def encode(entry: AbortedTxn) -> bytes:
    return _ENTRY.pack(VERSION, *entry)


def append(path: str, entry: AbortedTxn) -> None:
    with open(path, "ab") as f:
        f.write(encode(entry))


def decode(data: bytes) -> list[AbortedTxn]:
    """The entries of a .txnindex's bytes (a torn last entry is ignored)."""
    out = []
    for pos in range(0, len(data) - ENTRY_SIZE + 1, ENTRY_SIZE):
        version, *fields = _ENTRY.unpack_from(data, pos)
        if version != VERSION:
            raise ValueError(f"Unexpected aborted transaction version {version}, current version is {VERSION}")
        out.append(AbortedTxn(*fields))
    return out


def read(path: str) -> list[AbortedTxn]:
    try:
        with open(path, "rb") as f:
            return decode(f.read())
    except FileNotFoundError:
        return []


def collect(paths: Iterable[str], start: int, upper: int) -> list[AbortedTxn]:
    """Aborted transactions with records in [start, upper): those of the given segments'
    indexes (the segments from the one holding `start` on) ending at or after `start` and
    beginning before `upper`."""
    found = []
    for path in paths:
        for entry in read(path):
            if entry.last_offset >= start and entry.first_offset < upper:
                found.append(entry)
    return found


# --------------------------------------------------------------------------- reading committed data
class OpenTransactions:
    """The open transactions of one partition, as a reader without a broker sees them: the
    batch headers from the log start on (read once, then only what was appended), a
    transactional batch opening its producer's transaction, a control batch closing it.
    Gives the last stable offset, where a read_committed reader stops."""

    def __init__(self) -> None:
        self.scanned = -1  # the offset up to which headers were read
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction

    def last_stable_offset(self, log) -> int:
        start, end = log.log_start_offset, log.log_end_offset
        if self.scanned < start:
            self.scanned, self.ongoing = start, {}
        while self.scanned < end:
            data = log.read(self.scanned, 1 << 20)
            if not data:
                break
            for _, header in records.iter_batches(data):
                if header.is_control:
                    self.ongoing.pop(header.producer_id, None)
                elif header.is_transactional:
                    self.ongoing.setdefault(header.producer_id, header.base_offset)
                self.scanned = header.next_offset
        return min(self.ongoing.values(), default=end)


def committed_batches(data, batches: list, aborted: list[AbortedTxn]) -> list:
    """The (position, header) pairs of `batches` (from `data`) a read_committed consumer
    keeps: as Kafka's consumer does, a producer's batches are dropped from the first offset of
    one of its aborted transactions until its ABORT marker; control batches are dropped."""
    pending = sorted(aborted, key=lambda a: a.first_offset)
    aborting: set[int] = set()
    kept = []
    for pos, header in batches:
        while pending and pending[0].first_offset <= header.last_offset:
            aborting.add(pending.pop(0).producer_id)
        if header.is_control:
            if records.control_type(data, pos, header) == records.CONTROL_ABORT:
                aborting.discard(header.producer_id)
        elif not (header.is_transactional and header.producer_id in aborting):
            kept.append((pos, header))
    return kept


def aborted_batches(entries: list[AbortedTxn]):
    """A test `header -> bool` telling the data batches of the given aborted transactions (a
    transactional batch of the producer within an entry's first..last offsets), or None when
    there are none: the log cleaner drops those batches' records."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for e in entries:
        ranges.setdefault(e.producer_id, []).append((e.first_offset, e.last_offset))
    if not ranges:
        return None

    def aborted(header: records.BatchHeader) -> bool:
        return (header.is_transactional and not header.is_control
                and any(lo <= header.base_offset <= hi for lo, hi in ranges.get(header.producer_id, ())))
    return aborted


def segment_paths(log, offset: int) -> list[str]:
    """The .txnindex paths of the segment holding `offset` and of those after it."""
    segments = log.segments
    return [path_for(log.dir, seg.base_offset) for i, seg in enumerate(segments)
            if i + 1 == len(segments) or segments[i + 1].base_offset > offset]
