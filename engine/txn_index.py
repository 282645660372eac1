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
