"""Log compaction, as Kafka's log cleaner does it (docs/on-disk-layout.md).

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

Steps 2-4 are pure functions on bytes in compaction.py (`build_offset_map`,
`clean_segments`; imported only when a pass runs, for NumPy and Arrow): the Spark job
(spark_ops) calls the same ones, so the engine's cleaner and
the Spark job write identical segments for the same input. This module plans a pass and
swaps its output in. `swap_in` replaces segments crash-safely: new files are written
as `.cleaned`, renamed `.swap`, the old ones renamed `.deleted`, then the `.swap` files take
their final names; `complete_swaps` finishes or rolls back an interrupted swap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .records import last_offset
from .fileutil import fsync_dir
from .segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, LogSegment, file_stem

CLEANED, SWAP, DELETED = ".cleaned", ".swap", ".deleted"


@dataclass
class CleanPlan:
    first_dirty: int
    first_uncleanable: int
    segments: list  # LogSegment objects to rewrite (closed, below first_uncleanable)
    dirty_ratio: float


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
    # Kafka cleans below the last stable offset only: an open transaction may still abort.
    stable, holding = log.last_stable_offset(), active_base
    for seg in segments:
        if seg.base_offset <= stable:
            holding = seg.base_offset
    first_uncleanable = min(first_uncleanable, holding)
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
    return last_offset(data, base) + 1
