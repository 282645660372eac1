"""A partition's leader-epoch cache: which leader epoch began at which offset.

Kept in the partition's `leader-epoch-checkpoint`, Kafka's file format: a version line (0),
the number of entries, then one `<epoch> <start offset>` line per epoch, oldest first. The
broker stamps every batch it appends with the partition's current leader epoch (the
batch's partitionLeaderEpoch) and records here the offset where each new epoch began, so
that OffsetForLeaderEpoch, and the diverging-epoch check of Fetch, can tell a client where
an epoch ended (KIP-101, KIP-320).

A single broker keeps epoch 0; ZooKeeper mode bumps the epoch when the broker takes a
partition's leadership over (engine/broker/zookeeper.py).
"""

from __future__ import annotations

import os
from bisect import bisect_right

from .fileutil import atomic_write

FILE_NAME = "leader-epoch-checkpoint"
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


def read_entries(directory: str) -> list[tuple[int, int]]:
    """The checkpoint's (epoch, start offset) entries, oldest first; [] when there is none
    (or it is not a version-0 file: Kafka rebuilds a bad cache from the log, pk starts over)."""
    try:
        with open(os.path.join(directory, FILE_NAME), "rb") as f:
            lines = f.read().split(b"\n")
    except FileNotFoundError:
        return []
    try:
        if lines[0].strip() != b"0":
            return []
        count = int(lines[1])
        entries = [(int(a), int(b)) for a, b in (line.split() for line in lines[2:2 + count])]
    except (IndexError, ValueError):
        return []
    return entries if len(entries) == count else []


def write_entries(directory: str, entries: list[tuple[int, int]]) -> None:
    text = f"0\n{len(entries)}\n" + "".join(f"{e} {o}\n" for e, o in entries)
    atomic_write(os.path.join(directory, FILE_NAME), text.encode(), durable=False)


def visible_entries(entries: list[tuple[int, int]], log_start_offset: int) -> list[tuple[int, int]]:
    """The entries as they stand once the log starts at `log_start_offset` (Kafka's
    truncateFromStart: epochs that ended before it are gone, the one holding it starts there)."""
    out = []
    for i, (epoch, start) in enumerate(entries):
        following = entries[i + 1][1] if i + 1 < len(entries) else None
        if following is not None and following <= log_start_offset:
            continue
        out.append((epoch, max(start, log_start_offset)))
    return out


def end_offset_for(entries: list[tuple[int, int]], requested_epoch: int,
                   log_end_offset: int) -> tuple[int, int]:
    """Kafka's LeaderEpochFileCache.endOffsetFor: (the largest epoch <= `requested_epoch`,
    the start offset of the first epoch after it), or (requested, log end) for the latest
    epoch, or (-1, -1) when the epoch is unknown or above the latest."""
    if requested_epoch == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    epochs = [e for e, _ in entries]
    if epochs[-1] == requested_epoch:
        return requested_epoch, log_end_offset
    higher = bisect_right(epochs, requested_epoch)
    if higher == len(entries):
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if higher == 0:
        return requested_epoch, entries[0][1]
    return epochs[higher - 1], entries[higher][1]


def epoch_at(entries: list[tuple[int, int]], offset: int) -> int:
    """The epoch the record at `offset` was written in (the last one starting at or before
    it), or -1."""
    starts = [o for _, o in entries]
    i = bisect_right(starts, offset)
    return entries[i - 1][0] if i else UNDEFINED_EPOCH
