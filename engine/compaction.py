"""What log compaction keeps, and the batches it rewrites (see cleaner.py).

Pure functions on segment bytes, shared by the engine's cleaner (cleaner.py, PartitionLog)
and the Spark job (spark_ops/compact.py), so both write the same bytes for the same input:

- `build_offset_map`: each key's highest offset in the dirty range;
- `clean_segments` (= `clean_segment` on each, then `finish` for the partition-wide steps;
  Spark runs the first per segment): consecutive segments rewritten as Kafka's
  `MemoryRecords.filterTo` does:
  a record stays when no later record of its key exists (keyless records go; a tombstone
  also goes once its batch's delete horizon has passed); a batch whose records all stay is
  copied as it was; otherwise its kept records are re-packed under the original base offset,
  last offset delta, producer fields, leader epoch and codec, the base timestamp being the
  first kept record's (or the delete horizon, stamped `delete.retention.ms` after the first
  cleaning that keeps a tombstone: KIP-534) and the max timestamp the kept records' (the
  append time for LogAppendTime batches); a batch left empty is kept as an empty header only
  where it is its producer's last (its sequence numbers carry idempotence).

Speed: records are never turned into Python objects. records.columns gives their fields as
NumPy columns, and the map is grouped by Arrow from keys read as 64-bit words; for the dirty
range a record stays exactly when its offset is one of the map's values (offsets are
unique, so that offset's key is the record's own key), a sorted search with no per-record
Python; only records of the already clean part, below the dirty range, look their key up.
Kept records are copied as bytes: offset deltas stay relative to the unchanged base offset,
and timestamp deltas are rewritten only when the base timestamp moves.

Memory: a compressed batch is scanned into the columns only when it inflates to at most
SCAN_LIMIT bytes. A larger one (a decompression bomb a producer got accepted: a few KB
on disk, a gigabyte inflated) is walked record by record over its inflating stream, values
skipped (records/walk.py), and when only some of its records stay they are copied from a
second pass of that stream straight into the compressor: never held inflated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import compression, records
from .records import walk
from .records.columns import RecordColumns, scan

_INT32_MAX = 2**31 - 1
SCAN_LIMIT = 16 << 20  # a compressed batch inflating beyond this is walked, not scanned


@dataclass
class OffsetMap:
    """Key -> highest offset at which it appears in the dirty range [start, end).

    Held as an Arrow table (key: binary, offset: int64), one row per key: built, merged and
    looked up by Arrow's hash grouping in C++ (a Python dict of bytes costs ~0.5 µs a record
    once it outgrows the CPU caches). Spark's stages hand it on as an Arrow file (save/load).
    """

    start: int
    end: int
    table: object = None  # pyarrow.Table; None: empty
    _retained: np.ndarray | None = None

    def retained(self) -> np.ndarray:
        """The dirty range's surviving offsets, sorted."""
        if self._retained is None:
            self._retained = np.sort(self.table["offset"].to_numpy()) if self.table is not None \
                else np.zeros(0, dtype=np.int64)
        return self._retained

    def lookup(self, keys: list[bytes]) -> np.ndarray:
        """Each key's offset in the map, -1 where it has none."""
        if self.table is None or not keys:
            return np.full(len(keys), -1, dtype=np.int64)
        import pyarrow as pa
        import pyarrow.compute as pc

        at = pc.index_in(pa.array(keys, pa.binary()), value_set=self.table["key"]).fill_null(-1).to_numpy()
        offsets = self.table["offset"].to_numpy()
        return np.where(at >= 0, offsets[np.maximum(at, 0)], -1)

    @classmethod
    def merged(cls, maps: list["OffsetMap"], start: int, end: int) -> "OffsetMap":
        """One map of several parts of the dirty range [start, end) (the highest offset wins)."""
        tables = [m.table for m in maps if m.table is not None]
        if len(tables) < 2:
            return cls(start, end, tables[0] if tables else None)
        return cls(start, end, _max_per_key(tables))

    def save(self, path: str) -> None:
        """Write the map as an Arrow IPC file (Spark tasks hand maps on through files)."""
        import pyarrow as pa

        table = self.table if self.table is not None else pa.table(
            {"key": pa.array([], pa.binary()), "offset": pa.array([], pa.int64())})
        table = table.replace_schema_metadata({"start": str(self.start), "end": str(self.end)})
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)

    @classmethod
    def load(cls, path: str) -> "OffsetMap":
        import pyarrow as pa

        with pa.memory_map(path) as source:
            table = pa.ipc.open_file(source).read_all()
        meta = table.schema.metadata
        return cls(int(meta[b"start"]), int(meta[b"end"]), table if table.num_rows else None)

    @property
    def latest(self) -> dict[bytes, int]:
        """The map as a dict (for inspection and tests)."""
        if self.table is None:
            return {}
        return dict(zip(self.table["key"].to_pylist(), self.table["offset"].to_pylist()))

    def __len__(self) -> int:
        return 0 if self.table is None else self.table.num_rows


def data_batches(data: bytes, aborted=None) -> tuple[list, list]:
    """(all batches, the data ones) of a segment, as [(pos, header)]: control batches are not
    data, nor, with `aborted` (txn_index.aborted_batches), those of aborted transactions."""
    every = list(records.iter_batches(data))
    return every, [b for b in every if not b[1].attributes & records.CONTROL_MASK
                   and not (aborted is not None and aborted(b[1]))]


def build_offset_map(segment_bytes: list[bytes], start: int, end: int, scans: dict | None = None,
                     aborted=None) -> OffsetMap:
    """The map over [start, end) of consecutive segments. With `scans` (a dict), each
    segment's RecordColumns are left in it by index for clean_segments to reuse. Records of
    aborted transactions (`aborted`) never count as a key's latest."""
    offset_map = OffsetMap(start, end)
    parts = []
    for index, data in enumerate(segment_bytes):
        _, batches = data_batches(data, aborted)
        batches = [(p, h) for p, h in batches if h.next_offset > start and h.base_offset < end]
        if not batches:
            continue
        cols = scan(data, batches, SCAN_LIMIT)
        if scans is not None:
            scans[index] = cols
        which = np.flatnonzero((cols.key_len >= 0) & (cols.offset >= start) & (cols.offset < end))
        if len(which):
            parts.append(_latest_per_key(cols, which))
        for pos, header in cols.skipped:
            walked = [(r.key, header.base_offset + r.offset_delta) for r in walk.walk(data, pos, header, keys=True)]
            walked = [(k, o) for k, o in walked if k is not None and start <= o < end]
            if walked:
                import pyarrow as pa

                keys, offsets = zip(*walked)
                parts.append(_max_per_key([pa.table({"key": pa.array(keys, pa.binary()),
                                                     "offset": pa.array(offsets, pa.int64())})]))
    if parts:
        offset_map.table = parts[0] if len(parts) == 1 else _max_per_key(parts)
    return offset_map


_MAX_WORD_KEY = 128  # keys up to this many bytes are grouped as 64-bit words


def _latest_per_key(cols: RecordColumns, which: np.ndarray):
    """Arrow table (key, offset): the highest offset of each key among records `which`.

    Keys are grouped as columns of little-endian 64-bit words (bytes past a key's end
    zeroed) plus the length: equal exactly when the keys are equal, and read from the
    buffer with one vectorised gather per word instead of a Python bytes object per record.
    """
    import pyarrow as pa

    lengths = cols.key_len[which]
    offsets = cols.offset[which]
    longest = int(lengths.max())
    if longest > _MAX_WORD_KEY:
        table = pa.table({"key": pa.array(cols.keys(which), pa.binary()), "offset": offsets})
        return _max_per_key([table])
    n_words = max(1, -(-longest // 8))
    columns = {f"w{j}": _key_word(cols.buf, cols.key_start[which], lengths, j) for j in range(n_words)}
    columns["len"] = lengths
    columns["offset"] = offsets
    grouped = pa.table(columns).group_by(list(columns)[:-1], use_threads=False).aggregate([("offset", "max")])
    # Back to bytes, for the (far fewer) distinct keys: row j of the word matrix, cut to its length.
    words = np.column_stack([grouped[f"w{j}"].to_numpy().astype("<u8") for j in range(n_words)])
    matrix = words.view(np.uint8).reshape(len(words), n_words * 8)
    key_len = grouped["len"].to_numpy()
    data = matrix[np.arange(n_words * 8)[None, :] < key_len[:, None]]
    bounds = np.zeros(len(key_len) + 1, dtype=np.int64)
    np.cumsum(key_len, out=bounds[1:])
    keys = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(key_len),
                                            [None, pa.py_buffer(bounds), pa.py_buffer(data.tobytes())])
    return pa.table({"key": keys.cast(pa.binary()), "offset": grouped["offset_max"]})


def _key_word(buf: bytes, starts: np.ndarray, lengths: np.ndarray, j: int) -> np.ndarray:
    """Bytes 8j..8j+7 of each key as a little-endian uint64, bytes past the key zeroed."""
    words = np.ndarray(shape=(max(len(buf) - 7, 0),), dtype="<u8", buffer=buf, strides=(1,))  # unaligned reads
    at = starts + 8 * j
    near_end = at > len(buf) - 8
    word = words[np.where(near_end, 0, at)]
    for i in np.flatnonzero(near_end).tolist():  # the last bytes of an unpadded buffer
        word[i] = int.from_bytes(buf[at[i]:at[i] + 8].ljust(8, b"\0"), "little")
    keep = np.clip(lengths - 8 * j, 0, 8)  # how many of the 8 bytes belong to the key
    mask = np.where(keep >= 8, np.uint64(2**64 - 1),
                    (np.uint64(1) << (keep.astype(np.uint64) * np.uint64(8))) - np.uint64(1))
    return word & mask


def _max_per_key(tables: list):
    """One Arrow (key, offset) table of the highest offset per key across `tables`."""
    import pyarrow as pa

    merged = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    grouped = merged.group_by("key", use_threads=False).aggregate([("offset", "max")])
    return pa.table({"key": grouped["key"], "offset": grouped["offset_max"]})


def clean_segments(segment_bytes: list[tuple[int, bytes]], offset_map: OffsetMap, now_ms: int,
                   delete_retention_ms: int, segment_bytes_limit: int, scans: dict | None = None,
                   aborted=None) -> list[tuple[int, bytes]]:
    """Clean consecutive segments [(base offset, bytes)] into new [(base offset, bytes)]:
    clean_segment on each, then finish. `scans`: RecordColumns by segment index that
    build_offset_map left for these same bytes."""
    cleaned = [clean_segment(data, offset_map, now_ms, delete_retention_ms,
                             None if scans is None else scans.get(index), aborted)
               for index, (_, data) in enumerate(segment_bytes)]
    return finish(cleaned, [(base, len(data)) for base, data in segment_bytes], offset_map.end,
                  segment_bytes_limit)


@dataclass
class CleanedSegment:
    """One segment's batches after cleaning, before the partition-wide steps of `finish`.

    data: every batch, the empty ones included; empties: the byte ranges of the empty
    batches; last: producer id -> index into empties of the producer's last batch in this
    segment when that batch is empty, -1 when it has records.
    """

    data: bytes
    empties: list = field(default_factory=list)
    last: dict = field(default_factory=dict)


def clean_segment(data: bytes, offset_map: OffsetMap, now_ms: int, delete_retention_ms: int,
                  cols: RecordColumns | None = None, aborted=None) -> CleanedSegment:
    """One segment cleaned with the partition's map (the part Spark runs per segment); the
    batches of aborted transactions (`aborted`) lose their records, as Kafka's cleaner drops them."""
    parts, empties, last, size = [], [], {}, 0
    for batch, header, empty in _clean_batches(data, offset_map, now_ms, delete_retention_ms, cols, aborted):
        if empty:
            empties.append((size, size + len(batch)))
        if header.producer_id >= 0:
            last[header.producer_id] = len(empties) - 1 if empty else -1
        parts.append(batch)
        size += len(batch)
    return CleanedSegment(b"".join(parts), empties, last)


def finish(cleaned: list[CleanedSegment], inputs: list[tuple[int, int]], end: int,
           limit: int) -> list[tuple[int, bytes]]:
    """The new segments [(base, bytes)] of a partition from its cleaned segments in order.

    An empty batch stays only where it is its producer's last (the sequence numbers it
    carries keep idempotence working). Neighbouring segments are merged as Kafka's
    groupSegmentsBySize merges them: by their sizes before cleaning (`inputs`: [(base,
    size)]), at most `limit` (segment.bytes) together, and offsets within an int32 of the
    group's base (a segment's last offset taken as the next base - 1, or `end` - 1).
    """
    last: dict[int, tuple[int, int]] = {}
    for index, segment in enumerate(cleaned):
        for producer, empty in segment.last.items():
            last[producer] = (index, empty)
    keep = {v for v in last.values() if v[1] >= 0}
    out = []
    for index, segment in enumerate(cleaned):
        data, at, parts = segment.data, 0, []
        for i, (lo, hi) in enumerate(segment.empties):
            if (index, i) not in keep:
                parts.append(data[at:lo])
                at = hi
        out.append(b"".join(parts) + data[at:] if parts else data)
    groups: list[tuple[int, bytes]] = []
    i = 0
    while i < len(inputs):
        base, size = inputs[i]
        members = [out[i]]
        i += 1
        while i < len(inputs) and size + inputs[i][1] <= limit and (
                inputs[i][1] == 0 or (inputs[i + 1][0] if i + 1 < len(inputs) else end) - 1 - base <= _INT32_MAX):
            size += inputs[i][1]
            members.append(out[i])
            i += 1
        groups.append((base, b"".join(members)))
    return groups


def _clean_batches(data: bytes, offset_map: OffsetMap, now_ms: int, delete_retention_ms: int,
                   cols: RecordColumns | None, aborted=None) -> list[tuple[bytes, records.BatchHeader, bool]]:
    """[(new batch bytes, original header, left empty)] for each batch of a segment."""
    every, all_batches = data_batches(data, aborted)
    if cols is None or sorted(p for p, _ in cols.batches + cols.skipped) != [p for p, _ in all_batches]:
        cols = scan(data, all_batches, SCAN_LIMIT)
    batches, walked = cols.batches, {p for p, _ in cols.skipped}
    keep = _kept(cols, offset_map)
    tombstone = cols.value_len < 0
    # Per batch: its delete horizon (if stamped) and whether it has passed.
    horizon = np.fromiter((h.base_timestamp if h.attributes & records.DELETE_HORIZON_MASK else -1
                           for _, h in batches), dtype=np.int64, count=len(batches))
    counts = np.diff(cols.first)
    batch_of = np.repeat(np.arange(len(batches)), counts)
    expired = (horizon >= 0) & (now_ms >= horizon)
    keep &= ~(tombstone & expired[batch_of])
    kept_per_batch = _per_batch(keep, cols.first)
    tombstones_kept = _per_batch(keep & tombstone, cols.first) > 0

    out = []
    by_pos = {p: i for i, (p, _) in enumerate(batches)}
    kept_list, stamp_list, horizons, first = (kept_per_batch.tolist(), tombstones_kept.tolist(),
                                              horizon.tolist(), cols.first.tolist())
    for pos, header in every:
        i = by_pos.get(pos)
        original = data[pos:pos + header.size]
        if pos in walked:
            out.append(_clean_walked(data, pos, header, offset_map, now_ms, delete_retention_ms))
            continue
        if i is None:
            if header.attributes & records.CONTROL_MASK:  # a transaction marker: kept as it is
                out.append((original, header, False))
            else:  # an aborted transaction's batch: emptied
                out.append((original if header.records_count == 0 else _empty_batch(header), header, True))
            continue
        n = kept_list[i]
        stamp = stamp_list[i] and horizons[i] < 0
        if n == 0:
            out.append((original if header.records_count == 0 else _empty_batch(header), header, True))
        elif n == header.records_count and not stamp:
            out.append((original, header, False))
        else:
            new_horizon = now_ms + delete_retention_ms if stamp else horizons[i]
            which = np.flatnonzero(keep[first[i]:first[i + 1]]) + first[i]
            out.append((_rebuild(cols, header, which, new_horizon), header, False))
    return out


def _kept(cols: RecordColumns, offset_map: OffsetMap) -> np.ndarray:
    """Whether each record survives its key's later records (tombstone expiry aside)."""
    return _kept_of(cols.offset, cols.key_len >= 0, cols.keys, offset_map)


def _kept_of(offsets: np.ndarray, keyed: np.ndarray, keys_of, offset_map: OffsetMap) -> np.ndarray:
    """_kept for records given as offsets, whether each has a key, and keys_of(indexes)."""
    keep = np.zeros(len(offsets), dtype=bool)
    retained = offset_map.retained()
    in_map = (offsets >= offset_map.start) & (offsets < offset_map.end)
    if len(retained):
        at = np.minimum(np.searchsorted(retained, offsets), len(retained) - 1)
        keep = retained[at] == offsets
    keep &= keyed & in_map
    # Records outside the mapped range (the clean part): kept unless the map has their key.
    outside = np.flatnonzero(keyed & ~in_map)
    if len(outside):
        keep[outside] = offsets[outside] >= offset_map.lookup(keys_of(outside))
    return keep


def _clean_walked(data: bytes, pos: int, header: records.BatchHeader, offset_map: OffsetMap, now_ms: int,
                  delete_retention_ms: int) -> tuple[bytes, records.BatchHeader, bool]:
    """A batch too large inflated for the column scan, cleaned as _clean_batches cleans the
    others, from a walk over its records (values skipped)."""
    infos = list(walk.walk(data, pos, header, keys=True))
    offsets = np.asarray([header.base_offset + r.offset_delta for r in infos], dtype=np.int64)
    keyed = np.asarray([r.key is not None for r in infos], dtype=bool)
    keep = _kept_of(offsets, keyed, lambda which: [infos[i].key for i in which.tolist()], offset_map)
    tombstone = np.asarray([r.value_len < 0 for r in infos], dtype=bool)
    horizon = header.base_timestamp if header.attributes & records.DELETE_HORIZON_MASK else -1
    if horizon >= 0 and now_ms >= horizon:
        keep &= ~tombstone
    original = data[pos:pos + header.size]
    n = int(keep.sum())
    stamp = bool((keep & tombstone).any()) and horizon < 0
    if n == 0:
        return (original if header.records_count == 0 else _empty_batch(header)), header, True
    if n == header.records_count and not stamp:
        return original, header, False
    kept = [infos[i] for i in np.flatnonzero(keep).tolist()]
    return _rebuild_walked(data, pos, header, kept, now_ms + delete_retention_ms if stamp else horizon), header, False


def _rebuild_walked(data: bytes, pos: int, header: records.BatchHeader, kept: list, horizon: int) -> bytes:
    """_rebuild for a walked batch: the kept records' bytes copied from a second pass of the
    inflating stream into the compressor (timestamp deltas re-encoded when the base moves)."""
    log_append = bool(header.attributes & records.TIMESTAMP_TYPE_MASK)
    stamps = [header.max_timestamp if log_append else header.base_timestamp + r.timestamp_delta for r in kept]
    base_ts = horizon if horizon >= 0 else stamps[0]
    max_ts = header.max_timestamp if log_append else max(stamps)
    varint = records.encode_varint
    if not log_append and base_ts == header.base_timestamp:
        spans = [(r.start, r.end, b"") for r in kept]  # deltas unchanged
    else:
        spans = []
        for r, ts in zip(kept, stamps):
            td = varint(ts - base_ts)
            spans.append((r.od_pos, r.end, varint(1 + len(td) + r.end - r.od_pos) + bytes((r.attributes,)) + td))
    codec = header.attributes & records.CODEC_MASK
    packer = compression.Packer(codec)
    _copy_spans(walk.payload_pieces(data, pos, header), spans, packer.add)
    attributes = header.attributes & (records.CODEC_MASK | records.TIMESTAMP_TYPE_MASK | records.TRANSACTIONAL_MASK)
    if horizon >= 0:
        attributes |= records.DELETE_HORIZON_MASK
    return records.pack_batch(header, attributes, base_ts, max_ts, len(kept), packer.finish())


def _copy_spans(pieces, spans: list, emit) -> None:
    """emit() each span's prefix, then the stream's bytes [lo, hi) of it, in order, as the
    pieces pass (spans sorted and disjoint)."""
    spans = iter(spans)
    span = next(spans, None)
    at = 0
    for piece in pieces:
        after = at + len(piece)
        while span is not None and span[0] < after:
            lo, hi, prefix = span
            if prefix:
                emit(prefix)
                span = (lo, hi, b"")
            if min(hi, after) > max(lo, at):
                emit(piece[max(lo, at) - at:min(hi, after) - at])
            if hi > after:
                break
            span = next(spans, None)
        at = after
        if span is None:
            return


def _per_batch(flags: np.ndarray, first: np.ndarray) -> np.ndarray:
    sums = np.zeros(len(flags) + 1, dtype=np.int64)
    np.cumsum(flags, out=sums[1:])
    return sums[first[1:]] - sums[first[:-1]]


def _rebuild(cols: RecordColumns, header: records.BatchHeader, which: np.ndarray, horizon: int) -> bytes:
    """The batch of `header` with only the records at `which`, as Kafka's builder writes it."""
    buf = cols.buf
    log_append = bool(header.attributes & records.TIMESTAMP_TYPE_MASK)
    if log_append:
        stamps = np.full(len(which), header.max_timestamp, dtype=np.int64)
    else:
        stamps = cols.ts_delta[which] + header.base_timestamp
    base_ts = horizon if horizon >= 0 else int(stamps[0])
    max_ts = header.max_timestamp if log_append else int(stamps.max())
    starts, ends = cols.start[which].tolist(), cols.end[which].tolist()
    if not log_append and base_ts == header.base_timestamp:
        payload = b"".join([buf[s:e] for s, e in zip(starts, ends)])  # deltas unchanged
    else:
        varint = records.encode_varint
        parts = []
        deltas = (stamps - base_ts).tolist()
        for body, od, end, delta in zip(cols.body[which].tolist(), cols.od_pos[which].tolist(), ends, deltas):
            td = varint(delta)
            rest = buf[od:end]
            parts += (varint(1 + len(td) + len(rest)), buf[body:body + 1], td, rest)
        payload = b"".join(parts)
    codec = header.attributes & records.CODEC_MASK
    if codec:
        payload = compression.compress(codec, payload)
    attributes = header.attributes & (records.CODEC_MASK | records.TIMESTAMP_TYPE_MASK | records.TRANSACTIONAL_MASK)
    if horizon >= 0:
        attributes |= records.DELETE_HORIZON_MASK
    return records.pack_batch(header, attributes, base_ts, max_ts, len(which), payload)


def _empty_batch(header: records.BatchHeader) -> bytes:
    """Kafka's empty batch (DefaultRecordBatch.writeEmptyHeader): no records, no codec, no base
    timestamp; the original offsets, producer fields and max timestamp."""
    attributes = header.attributes & (records.TIMESTAMP_TYPE_MASK | records.TRANSACTIONAL_MASK | records.CONTROL_MASK)
    return records.pack_batch(header, attributes, records.NO_TIMESTAMP, header.max_timestamp, 0, b"")
