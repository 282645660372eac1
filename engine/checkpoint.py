"""Kafka's offset checkpoint files (`recovery-point-offset-checkpoint`, ...).

Text: a version line (0), an entry count, then "<topic> <partition> <offset>" lines
(docs/on-disk-layout.md). One file per data directory is shared by every partition, so
updates are read-modify-write under a lock and land atomically.
"""

from __future__ import annotations

import os

from .fileutil import atomic_write, inside, locked

RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET = "log-start-offset-checkpoint"
HIGH_WATERMARK = "replication-offset-checkpoint"
CLEANER_OFFSET = "cleaner-offset-checkpoint"
# pk's own (in .pk/, unseen by Kafka): when retention last checked each partition, in epoch ms
RETENTION_CHECK = os.path.join(".pk", "retention-check-checkpoint")


def read(path: str) -> dict[tuple[str, int], int]:
    """Entries of a checkpoint file; a missing or malformed file reads as empty (it is a hint)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return {}
    entries: dict[tuple[str, int], int] = {}
    try:
        if int(lines[0]) != 0:
            return {}
        count = int(lines[1])
        for line in lines[2:2 + count]:
            topic, partition, offset = line.split()
            entries[(topic, int(partition))] = int(offset)
    except (ValueError, IndexError):
        return {}
    return entries


def render(entries: dict[tuple[str, int], int]) -> bytes:
    lines = ["0", str(len(entries))]
    lines += [f"{t} {p} {o}" for (t, p), o in sorted(entries.items())]
    return ("\n".join(lines) + "\n").encode()


def update(data_dir: str, name: str, changes: dict[tuple[str, int], int | None]) -> None:
    """Set (or, with None, remove) entries of one checkpoint file."""
    path = inside(data_dir, name)
    with locked(os.path.join(data_dir, ".pk", "checkpoint.lock")):
        entries = read(path)
        before = dict(entries)
        for key, offset in changes.items():
            if offset is None:
                entries.pop(key, None)
            else:
                entries[key] = offset
        if entries != before or not os.path.exists(path):
            atomic_write(path, render(entries))


def rewrite(data_dir: str, name: str, change) -> None:
    """Replace one checkpoint file's entries with change(entries), under the lock; written when
    they changed or the file is missing (Kafka writes its checkpoint files in every log dir,
    with no entries when there is nothing to say)."""
    path = inside(data_dir, name)
    with locked(os.path.join(data_dir, ".pk", "checkpoint.lock")):
        entries = read(path)
        fresh = change(dict(entries))
        if fresh != entries or not os.path.exists(path):
            atomic_write(path, render(fresh))


def drop_partition(data_dir: str, topic: str, partition: int) -> None:
    """Forget one partition's entries in every checkpoint file (a replica removed from this broker)."""
    with locked(os.path.join(data_dir, ".pk", "checkpoint.lock")):
        for name in (RECOVERY_POINT, LOG_START_OFFSET, HIGH_WATERMARK, CLEANER_OFFSET, RETENTION_CHECK):
            path = inside(data_dir, name)
            entries = read(path)
            if (topic, partition) in entries:
                del entries[(topic, partition)]
                atomic_write(path, render(entries))


def drop_topic(data_dir: str, topic: str) -> None:
    """Forget a deleted topic's entries in every checkpoint file."""
    with locked(os.path.join(data_dir, ".pk", "checkpoint.lock")):
        for name in (RECOVERY_POINT, LOG_START_OFFSET, HIGH_WATERMARK, CLEANER_OFFSET, RETENTION_CHECK):
            path = inside(data_dir, name)
            entries = read(path)
            kept = {k: v for k, v in entries.items() if k[0] != topic}
            if kept != entries:
                atomic_write(path, render(kept))
