"""Log compaction, as Kafka's log cleaner does it (kafka-protocol.md §5.3).

For a partition of a topic whose cleanup.policy contains `compact`:

1. the dirty range runs from the cleaner checkpoint (or the log start) to the first
   uncleanable offset: the active segment's base, or earlier where records are younger than
   `min.compaction.lag.ms`;
2. a map from each key to the highest offset at which it appears in the dirty range;
3. every closed segment up to the end of that range is rewritten keeping, per key, only
   the latest record (offsets and gaps preserved; keyless records dropped); tombstones
   (null values) survive until their batch's delete horizon, stamped `delete.retention.ms`
   after the first cleaning that saw them (KIP-534);
4. kept records are re-packed into batches with the original base and last offsets,
   producer fields, codec and leader epoch; segments are grouped so each new one fits
   `segment.bytes`.

`clean_batch` and `build_offset_map` are pure functions on bytes: the Spark job
(spark_ops) calls the same ones, so the engine's cleaner and the Spark job write identical
segments for the same input. `swap_in` replaces segments crash-safely: new files are written
as `.cleaned`, renamed `.swap`, the old ones renamed `.deleted`, then the `.swap` files take
their final names; `complete_swaps` finishes or rolls back an interrupted swap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import records
from .fileutil import fsync_dir
from .segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, LogSegment, file_stem

CLEANED, SWAP, DELETED = ".cleaned", ".swap", ".deleted"
_INT32_MAX = 2**31 - 1


@dataclass
class CleanPlan:
    first_dirty: int
    first_uncleanable: int
    segments: list  # LogSegment objects to rewrite (closed, below first_uncleanable)
    dirty_ratio: float


# --------------------------------------------------------------------------- pure functions
def build_offset_map(segment_bytes: list[bytes], start: int, end: int) -> dict[bytes, int]:
    """Key -> highest offset at which it appears in [start, end) (keyless records skipped)."""
    latest: dict[bytes, int] = {}
    for data in segment_bytes:
        for pos, header in records.iter_batches(data):
            if header.is_control or header.next_offset <= start or header.base_offset >= end:
                continue
            for rec in records.decode_records(data, pos, header):
                if start <= rec.offset < end and rec.key is not None:
                    if rec.offset > latest.get(rec.key, -1):
                        latest[rec.key] = rec.offset
    return latest


def clean_batch(data: bytes, pos: int, header: records.BatchHeader, offset_map: dict[bytes, int],
                now_ms: int, delete_retention_ms: int, keep_empty: bool = False) -> bytes | None:
    """The batch as the cleaner rewrites it, or None when nothing of it remains.

    The original bytes come back unchanged when every record is kept and no delete horizon
    needs stamping (Kafka writes such batches as they were).
    """
    original = bytes(memoryview(data)[pos:pos + header.size])
    if header.is_control:
        return original  # no transactions on pk: markers are never written, keep any found
    recs = records.decode_records(data, pos, header)
    horizon = header.base_timestamp if header.has_delete_horizon else None
    kept = []
    has_tombstone = False
    for rec in recs:
        if rec.key is None or rec.offset < offset_map.get(rec.key, -1):
            continue  # keyless, or superseded by a later record of the same key
        if rec.value is None:
            if horizon is not None and now_ms >= horizon:
                continue  # a tombstone past its delete horizon
            has_tombstone = True
        kept.append(rec)
    stamp = has_tombstone and horizon is None
    if len(kept) == len(recs) and not stamp:
        return original
    if not kept and not keep_empty:
        return None
    if stamp:
        horizon = now_ms + delete_retention_ms
    return records.encode_batch(
        [(r.key, r.value, r.headers, r.timestamp) for r in kept],
        base_offset=header.base_offset,
        compression_type=header.compression,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        partition_leader_epoch=header.partition_leader_epoch,
        transactional=header.is_transactional,
        timestamp_type=header.timestamp_type,
        offset_deltas=[r.offset - header.base_offset for r in kept],
        last_offset_delta=header.last_offset_delta,
        base_timestamp=horizon if horizon is not None else None,
        max_timestamp=header.max_timestamp,
        delete_horizon=horizon is not None,
    )


def clean_segments(segment_bytes: list[tuple[int, bytes]], offset_map: dict[bytes, int], now_ms: int,
                   delete_retention_ms: int, segment_bytes_limit: int) -> list[tuple[int, bytes]]:
    """Clean consecutive segments [(base offset, bytes)] into new [(base offset, bytes)].

    Cleaned output is grouped so that each new segment stays within segment.bytes and its
    offsets within an int32 of its base, as Kafka's groupSegmentsBySize does.
    """
    cleaned: list[tuple[int, bytes]] = []  # per input segment
    last_by_producer: dict[int, tuple[int, int]] = {}  # producer id -> (segment index, position)
    per_segment: list[list[bytes]] = []
    for index, (base, data) in enumerate(segment_bytes):
        out = []
        for pos, header in records.iter_batches(data):
            batch = clean_batch(data, pos, header, offset_map, now_ms, delete_retention_ms)
            if batch is None and header.producer_id >= 0:
                # Kafka keeps an empty batch where it is the producer's last: it carries the
                # producer's state (epoch, sequence) that idempotence checks need.
                batch = clean_batch(data, pos, header, offset_map, now_ms, delete_retention_ms, keep_empty=True)
                last_by_producer[header.producer_id] = (index, len(out))
            elif header.producer_id >= 0:
                last_by_producer[header.producer_id] = (index, -1)
            out.append(batch)
        per_segment.append(out)
    # Drop the empty batches kept for a producer that wrote again later.
    keep_empty = {v for v in last_by_producer.values() if v[1] >= 0}
    for index, out in enumerate(per_segment):
        batches = [b for i, b in enumerate(out) if b is not None and
                   (records.read_header(b).records_count > 0 or (index, i) in keep_empty)]
        cleaned.append((segment_bytes[index][0], b"".join(batches)))
    # Group consecutive cleaned segments into new ones of at most segment.bytes.
    groups: list[tuple[int, bytes]] = []
    current_base, current = None, []
    size = 0
    for base, data in cleaned:
        next_span_ok = current_base is None or _last_offset(data, base) - current_base <= _INT32_MAX
        if current_base is not None and (size + len(data) > segment_bytes_limit or not next_span_ok):
            groups.append((current_base, b"".join(current)))
            current_base, current, size = None, [], 0
        if current_base is None:
            current_base = base
        current.append(data)
        size += len(data)
    if current_base is not None:
        groups.append((current_base, b"".join(current)))
    return groups


def _last_offset(data: bytes, base: int) -> int:
    last = base
    for _, header in records.iter_batches(data):
        last = header.last_offset
    return last


# --------------------------------------------------------------------------- planning
def plan(log, now_ms: int, cleaner_checkpoint: int | None) -> CleanPlan | None:
    """What one cleaning pass of `log` (a PartitionLog) would rewrite, or None."""
    cfg = log.config
    segments = log.segments
    if len(segments) < 2:
        return None  # only the active segment: never cleaned
    start = log.log_start_offset
    active_base = segments[-1].base_offset
    first_dirty = cleaner_checkpoint if cleaner_checkpoint is not None else start
    if not start <= first_dirty <= active_base:
        first_dirty = start
    first_uncleanable = active_base
    lag = cfg.get("min.compaction.lag.ms", 0)
    if lag > 0:
        for seg in segments[:-1]:
            if seg.base_offset >= first_dirty and seg.largest_timestamp() > now_ms - lag:
                first_uncleanable = min(first_uncleanable, seg.base_offset)
                break
    closed = [s for s in segments[:-1] if s.base_offset < first_uncleanable]
    if not closed:
        return None
    first_dirty = min(first_dirty, first_uncleanable)  # nothing dirty: a pass only expires tombstones
    clean_bytes = sum(s.file_size() for s in closed if s.base_offset < first_dirty)
    dirty_bytes = sum(s.file_size() for s in closed if s.base_offset >= first_dirty)
    total = clean_bytes + dirty_bytes
    ratio = dirty_bytes / total if total else 0.0
    return CleanPlan(first_dirty, first_uncleanable, closed, ratio)


def has_expired_tombstones(plan: CleanPlan, now_ms: int) -> bool:
    """Whether some batch's delete horizon has passed (KIP-534: such a log is cleaned even
    when it has no new dirty records, so that its tombstones go)."""
    for seg in plan.segments:
        for _, header in seg.batch_positions():
            if header.has_delete_horizon and header.base_timestamp <= now_ms:
                return True
    return False


# --------------------------------------------------------------------------- swapping files
def _paths(directory: str, base: int) -> dict[str, str]:
    stem = os.path.join(directory, file_stem(base))
    return {s: stem + s for s in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX)}


def write_cleaned(directory: str, base: int, data: bytes, index_interval_bytes: int) -> None:
    """Write one new segment as `<base>.log.cleaned` plus indexes, fsynced."""
    paths = _paths(directory, base)
    tmp_seg = LogSegment(directory, base)
    tmp_seg.log_path = paths[LOG_SUFFIX] + CLEANED
    tmp_seg.offset_index.path = paths[INDEX_SUFFIX] + CLEANED
    tmp_seg.time_index.path = paths[TIME_INDEX_SUFFIX] + CLEANED
    with open(tmp_seg.log_path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    for path in (tmp_seg.offset_index.path, tmp_seg.time_index.path):
        open(path, "wb").close()
    tmp_seg.rebuild_indexes(index_interval_bytes, len(data))
    tmp_seg.load_state(len(data))
    tmp_seg.on_become_inactive()  # the final time-index entry: the segment's max timestamp
    tmp_seg.close()


def swap_in(directory: str, old_bases: list[int], new_bases: list[int]) -> None:
    """Replace the old segments by the `.cleaned` ones; each step survives a crash.

    After the `.cleaned` files are renamed `.swap`, the new state is decided: recovery
    (complete_swaps) finishes the swap from there; before that it discards the `.cleaned` files.
    """
    for base in new_bases:
        for path in _paths(directory, base).values():
            os.rename(path + CLEANED, path + SWAP)
    fsync_dir(directory)
    for base in old_bases:
        for path in _paths(directory, base).values():
            if os.path.exists(path):
                os.rename(path, path + DELETED)
    fsync_dir(directory)
    for base in new_bases:
        for path in _paths(directory, base).values():
            os.rename(path + SWAP, path)
    fsync_dir(directory)
    _remove_deleted(directory)


def _remove_deleted(directory: str) -> None:
    for name in os.listdir(directory):
        if name.endswith(DELETED):
            try:
                os.unlink(os.path.join(directory, name))
            except FileNotFoundError:
                pass


def complete_swaps(directory: str) -> bool:
    """Finish (or discard) a swap a crash interrupted. Returns True when files changed.

    `.cleaned` files are an unfinished rewrite: deleted. `.swap` files mean the rewrite was
    complete: the segments they replace (any `.log` whose offsets they cover) are removed and
    the `.swap` files take their final names. `.deleted` files are removed.
    """
    names = os.listdir(directory)
    changed = False
    for name in names:
        if name.endswith(CLEANED):
            os.unlink(os.path.join(directory, name))
            changed = True
    swaps = sorted(n for n in names if n.endswith(LOG_SUFFIX + SWAP))
    if swaps:
        new_bases = [int(n[:20]) for n in swaps]
        covered_until = max(_swap_end(directory, n) for n in swaps)
        for name in names:
            if len(name) == 24 and name.endswith(LOG_SUFFIX) and name[:20].isdigit():
                base = int(name[:20])
                if new_bases[0] <= base < covered_until and base not in new_bases:
                    for path in _paths(directory, base).values():
                        if os.path.exists(path):
                            os.unlink(path)
        for base in new_bases:
            for path in _paths(directory, base).values():
                if os.path.exists(path + SWAP):
                    os.replace(path + SWAP, path)
        changed = True
    if any(n.endswith(DELETED) for n in names):
        _remove_deleted(directory)
        changed = True
    if changed:
        fsync_dir(directory)
    return changed


def _swap_end(directory: str, swap_name: str) -> int:
    with open(os.path.join(directory, swap_name), "rb") as f:
        data = f.read()
    base = int(swap_name[:20])
    return _last_offset(data, base) + 1
