"""pk-console-consumer's ranges (pk-only options): --from-time, --to-time, --to-offset and
--until-end. Kafka's console consumer has none of them; kcat (`-o s@T -o e@T`, `-e`) and rpk
(`-o @T:T`, `-o :N`, `-o :end`) do.

Each partition gets its range when the consumer first owns it (at once with --partition,
when the group assigns it otherwise), looked up once with the consumer's own ListOffsets:
- start: --from-time T seeks to the first offset whose timestamp is >= T (offsetsForTimes);
  no such record: the partition's end;
- end (exclusive), the smallest of:
  --until-end: the end offset at that moment (high watermark, or the last stable offset
  under read_committed);
  --to-offset N: N;
  --to-time T: the first offset whose timestamp is > T (offsetsForTimes(T + 1)), as kcat's
  `-o e@T` looks it up once: records are in offset order, and a CreateTime record later in
  the log with a smaller timestamp is past the end all the same. When no record has a
  timestamp > T yet: a T in the past ends at the partition's end at that moment (so a window
  in the past always ends, empty partitions included); a T still ahead leaves the end open, and
  the first record that arrives with a timestamp > T ends it.
A partition is done when the consumer's position (which steps over the offset gaps of
compaction, aborted transactions and markers) reaches its end; it is paused then, and stays done for the run (a rebalance that hands it
back does not reopen it). The run ends
when every partition the consumer owns is done, so a range over offset gaps ends without
waiting for a record that will never come. A record at or past its partition's end is never
printed, and the position moves back to the end, so a group commits only what was printed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class RangeSpec:
    from_time: int | None = None  # epoch ms
    to_time: int | None = None  # epoch ms
    to_offset: int | None = None
    until_end: bool = False

    def active(self) -> bool:
        return (self.from_time is not None or self.to_time is not None or self.to_offset is not None
                or self.until_end)


class Ranges:
    """The ranges of the partitions a consumer owns, kept beside it by the print loop."""

    def __init__(self, spec: RangeSpec, consumer):
        self.spec = spec
        self.consumer = consumer
        self.ends: dict[tuple[str, int], int | None] = {}  # None: open (--to-time checks each record)
        self._paused: set[tuple[str, int]] = set()
        hook = getattr(consumer, "start_at_assignment", None)
        if hook is not None:  # librdkafka: the group's assignments start at the range's start
            hook(self._start_offsets)

    def admit(self) -> set[tuple[str, int]]:
        """Give the partitions the consumer owns for the first time their range; returns those
        moved to their --from-time start (records polled from them before are stale)."""
        new = [tp for tp in self.consumer.assignment() if tp not in self.ends]
        if not new:
            return set()
        starts = self._start_offsets(new)
        for tp, offset in starts.items():
            self.consumer.seek(tp[0], tp[1], offset)
        return set(starts)

    def _start_offsets(self, new: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Give `new` partitions their ends; their --from-time starts ({} without it)."""
        spec, consumer = self.spec, self.consumer
        new = [tp for tp in new if tp not in self.ends]
        starts = {}
        if spec.from_time is not None and new:
            found = consumer.offsets_for_time(new, spec.from_time)
            missing = [tp for tp in new if found.get(tp) is None]
            ends = consumer.end_offsets(missing) if missing else {}
            starts = {tp: found[tp] if found.get(tp) is not None else ends[tp] for tp in new}
        bounds: dict[tuple[str, int], list[int]] = {tp: [] for tp in new}
        if spec.until_end:
            for tp, end in consumer.end_offsets(new).items():
                bounds[tp].append(end)
        if spec.to_offset is not None:
            for tp in new:
                bounds[tp].append(spec.to_offset)
        if spec.to_time is not None:
            found = consumer.offsets_for_time(new, spec.to_time + 1)
            # No record later than T yet: a T already past ends at today's end (what comes
            # next is stamped now, after T), a T still ahead waits for its first record.
            missing = [tp for tp in new if found.get(tp) is None]
            if missing and spec.to_time < time.time() * 1000:
                found.update(consumer.end_offsets(missing))
            for tp, end in found.items():
                if end is not None and tp in bounds:
                    bounds[tp].append(end)
        for tp in new:
            self.ends[tp] = min(bounds[tp]) if bounds[tp] else None
        return starts

    def clip(self, pieces: list) -> tuple[list, dict[tuple[str, int], int]]:
        """The records of `pieces` inside their partitions' ranges, and for each partition
        that went past its end, the offset to move back to."""
        kept, back = [], {}
        for piece in pieces:
            if piece.columns is not None:
                piece = self._clip_columns(piece, back)
            else:
                piece = self._clip_list(piece, back)
            if len(piece):
                kept.append(piece)
        return kept, back

    def _past_time(self, tp: tuple[str, int]) -> bool:
        return self.spec.to_time is not None and self.ends.get(tp, 0) is None

    def _clip_columns(self, piece, back: dict):
        """A RecordColumnsSet: one partition, offsets ascending."""
        tp = (piece.topic, piece.partition)
        end = self.ends.get(tp)
        cols, lo, hi = piece.columns, piece.lo, piece.hi
        keep = len(piece)
        if end is not None:
            keep = int(cols.offset[lo:hi].searchsorted(end))
        elif self._past_time(tp):
            late = (cols.timestamps()[lo:hi] > self.spec.to_time).nonzero()[0]
            if len(late):
                keep = int(late[0])
                self.ends[tp] = int(cols.offset[lo + keep])
        if keep == len(piece):
            return piece
        piece, rest = piece.split(keep)
        back.setdefault(tp, rest.first_offset)
        return piece

    def _clip_list(self, piece, back: dict):
        """A RecordList: records in offset order per partition, possibly of several."""
        from pk.engine.consumer import RecordList

        items = []
        for record in piece.records():
            tp = (record.topic, record.partition)
            end = self.ends.get(tp)
            if tp in back:
                continue
            if end is None and self._past_time(tp) and record.timestamp > self.spec.to_time:
                self.ends[tp] = end = record.offset
            if end is not None and record.offset >= end:
                back[tp] = record.offset
                continue
            items.append(record)
        if len(items) == len(piece):
            return piece
        return RecordList(piece.topic, piece.partition, items)

    def complete(self) -> bool:
        """Every partition the consumer owns has reached its end (pausing those that have)."""
        owned = self.consumer.assignment()
        if not owned:
            return False  # a group member waits for its partitions
        finished = True
        for tp in owned:
            if tp in self._paused:
                continue  # finished, and fetched no more
            end = self.ends.get(tp)
            position = None if end is None else self.consumer.position(*tp)
            if position is None or position < end:
                finished = False
            elif tp not in self._paused:
                self._paused.add(tp)
                self.consumer.pause([tp])
        return finished
