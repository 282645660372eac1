"""DumpLogSegments' main loop: the options, the output, the dump of each file by its kind and
the per-file reports printed after the last one."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Callable

from pk.engine import records
from pk.engine.javacompat import JavaHashMap, java_split

from ..errors import (ACCESS_DENIED, ILLEGAL_ARGUMENT, IO_EXCEPTION, KAFKA_EXCEPTION, NO_SUCH_ELEMENT,
                      NO_SUCH_FILE, JavaError, UsageError)
from .index import OffsetIndexFile, TimeIndexFile
from .java import (I16, I32, INT_MAX, U32, absolute, decrement_sequence, file_name, increment_sequence,
                   int_value_of, java_file, optional_long, parse_int, parse_long, sibling, start_offset_of,
                   substring_error, value_of)
from .parsers import control_record_text, message_parser
from .record_lines import RECORD_INDENT, record_lines
from .segment import (CODEC_NAMES, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, Batch, SegmentFile, iter_batches,
                      iter_records, legacy_outer, legacy_timestamp_type)

DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024


# --------------------------------------------------------------------------- options
@dataclass
class DumpOptions:
    # Options Kafka reads with valueOf may arrive as lists (given several times); the
    # "Found multiple arguments" error surfaces where 3.7 reads the value.
    files: str | list[str] | None = None
    print_data_log: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    deep_iteration: bool = False
    max_message_size: int | list[int] | None = None
    max_bytes: int | list[int] | None = None
    key_decoder_class: str | None = None  # None: option absent
    value_decoder_class: str | None = None
    offsets_decoder: bool = False
    skip_record_metadata: bool = False
    transaction_log_decoder: bool = False
    cluster_metadata_decoder: bool = False
    remote_log_metadata_decoder: bool = False
    share_group_state_decoder: bool = False

    @property
    def should_print_data_log(self) -> bool:
        return (self.print_data_log or self.offsets_decoder or self.transaction_log_decoder
                or self.cluster_metadata_decoder or self.remote_log_metadata_decoder
                or self.share_group_state_decoder or self.value_decoder_class is not None
                or self.key_decoder_class is not None)

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.should_print_data_log



def check_args(o: DumpOptions) -> None:
    if o.files in (None, [], ()):
        raise UsageError('Missing required argument "[files]"')


# --------------------------------------------------------------------------- output
class Output:
    """Scala print/println onto a text sink, with the partial line kept for crashes."""

    def __init__(self, write: Callable[[str], None], write_err: Callable[[str], None]):
        self._write = write
        self._write_err = write_err
        self._lines: list[str] = []
        self._line: list[str] = []

    def print(self, text: str) -> None:
        self._line.append(text)

    def println(self, text: str = "") -> None:
        self._line.append(text)
        self._lines.append("".join(self._line))
        self._line = []
        if len(self._lines) >= 2048:
            self._flush_lines()

    def _flush_lines(self) -> None:
        if self._lines:
            self._lines.append("")
            self._write("\n".join(self._lines))
            self._lines = []

    def print_lines(self, text: str) -> None:
        """Whole lines at once (each ending in a line break), after the lines before them."""
        self._flush_lines()
        self._write(text)

    def err(self, line: str) -> None:
        self.flush()
        self._write_err(line + "\n")

    def flush(self) -> None:
        """Everything printed so far, the unfinished line included (as the JVM leaves it)."""
        self._flush_lines()
        if self._line:
            self._write("".join(self._line))
            self._line = []



# --------------------------------------------------------------------------- the tool
class Reports:
    """The per-file problem lists DumpLogSegments prints on stderr after the last file."""

    def __init__(self):
        # java.util.HashMaps by file (JavaHashMap) of the (offset, offset) pairs found
        self.index_mismatches = JavaHashMap()
        self.time_mismatches = JavaHashMap()
        self.time_out_of_order = JavaHashMap()
        self.time_not_found = JavaHashMap()
        self.non_consecutive = JavaHashMap()

    @staticmethod
    def append(m: "JavaHashMap", key: str, pair) -> None:
        if key not in m:
            m.put(key, [])
        m.get(key).append(pair)

    def print(self, out: Output) -> None:
        for name, pairs in self.index_mismatches.items():
            out.err(f"Mismatches in :{name}")
            # a TreeMap(reverseOrder) by index offset: the largest first, one line per offset
            for index_offset, log_offset in sorted(dict(pairs).items(), reverse=True):
                out.err(f"  Index offset: {index_offset}, log offset: {log_offset}")
        for name, pairs in self.time_mismatches.items():
            out.err(f"Found timestamp mismatch in :{name}")
            for index_ts, log_ts in pairs:
                out.err(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}")
        for name, pairs in self.time_out_of_order.items():
            out.err(f"Found out of order timestamp in :{name}")
            for index_ts, prev_ts in pairs:
                out.err(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {prev_ts}")
        for name, pairs in self.time_not_found.items():
            out.err(f"The following indexed offsets are not found in :{name}")
            for indexed, found in pairs:
                out.err(f"Indexed offset: {indexed}, found log offset: {found}")
        for name, pairs in self.non_consecutive.items():
            out.err(f"Non-consecutive offsets in {name}")
            for first, second in sorted(dict(pairs).items()):  # a TreeMap by the first offset
                out.err(f"  {first} is followed by {second}")


def run(o: DumpOptions, out: Output) -> None:
    """DumpLogSegments.main after option parsing. Raises UsageError, JavaError, Unsupported."""
    check_args(o)
    files_arg = value_of("files", o.files)
    paths = files_arg.split(",") if "," in files_arg else [files_arg]
    while len(paths) > 1 and paths[-1] == "":
        paths.pop()
    if files_arg and all(p == "" for p in paths) and "," in files_arg:
        paths = []
    reports = Reports()
    for arg in paths:
        path = java_file(arg)
        out.println(f"Dumping {path}")
        name = file_name(path)
        dot = name.rfind(".")
        suffix = name[dot:] if dot >= 0 else None
        if suffix in (".log", ".checkpoint"):
            dump_log(path, o, out, reports)
        elif suffix == ".index":
            dump_index(path, o, out, reports)
        elif suffix == ".timeindex":
            dump_time_index(path, o, out, reports)
        elif suffix == ".snapshot":
            dump_producer_snapshot(path, out)
        elif suffix == ".txnindex":
            dump_txn_index(path, out)
        else:
            out.err(f"Ignoring unknown file {path}")
    reports.print(out)


# ----------------------------------------------------------------- .log
def dump_log(path: str, o: DumpOptions, out: Output, reports: Reports) -> None:
    name = file_name(path)
    # Kafka evaluates both before the body runs: the parser (always built) and --max-bytes.
    parser = message_parser(o)
    max_bytes = int_value_of("max-bytes", o.max_bytes, INT_MAX)
    if not o.should_print_data_log:
        parser = None
    if name.endswith(".log"):
        out.println(f"Log starting offset: {start_offset_of(path)}")
    elif name.endswith(".checkpoint"):
        if name == "bootstrap.checkpoint":
            out.println("KRaft bootstrap snapshot")
        else:
            if len(name) < 20:
                raise substring_error(0, 20, len(name))
            end_offset = parse_long(name[:20])
            if len(name) < 31:
                raise substring_error(21, 31, len(name))
            epoch = parse_int(name[21:31])
            out.println(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
    f = SegmentFile(path)
    try:
        _, end = f.slice(0, max_bytes)
        valid_bytes = 0
        last_offset = -1
        deep = o.is_deep_iteration
        skip_meta = o.skip_record_metadata
        for batch in iter_batches(f, 0, end):
            print_batch_level(batch, valid_bytes, out)
            if deep:
                control = batch.magic >= 2 and batch.header().is_control
                ts_type = batch_timestamp_type(batch)
                lines = None
                if not skip_meta and parser is None and batch.magic >= 2:
                    lines = record_lines(batch, ts_type, last_offset)  # large batches, column-wise
                if lines is not None:
                    text, gaps, last_offset = lines
                    for gap in gaps:
                        Reports.append(reports.non_consecutive, absolute(path), gap)
                    out.print_lines(text)
                    valid_bytes += batch.size
                    continue
                for rec in iter_records(batch):
                    if rec.offset != last_offset + 1:
                        Reports.append(reports.non_consecutive, absolute(path), (last_offset, rec.offset))
                    last_offset = rec.offset
                    if skip_meta and parser is None:
                        continue  # nothing to print for this record, not even the line break
                    prefix = RECORD_INDENT + " "
                    line = ""
                    try:
                        if not skip_meta:
                            line = (f"{prefix}offset: {rec.offset} {ts_type}: {rec.timestamp} "
                                    f"keySize: {rec.key_size} valueSize: {rec.value_size}")
                            prefix = " "
                            if batch.magic >= 2:
                                line += f" sequence: {rec.sequence} headerKeys: [{','.join(rec.header_keys)}]"
                            else:
                                line += f" isValid: {'true' if rec.legacy_valid else 'false'} crc: {rec.legacy_crc}"
                            if control:
                                line += control_record_text(rec)
                        if parser is not None and not control:
                            key, payload = parser.parse(rec)
                            if key is not None:
                                line += f"{prefix}key: {key}"
                                prefix = " "
                            if payload is not None:
                                line += f"{prefix}payload: {payload}"
                    except JavaError:
                        out.print(line)  # the JVM leaves the started line unfinished
                        raise
                    out.println(line)
            valid_bytes += batch.size
        trailing = end - valid_bytes
        if trailing > 0 and max_bytes == INT_MAX:
            out.println(f"Found {trailing} invalid bytes at the end of {name}")
    finally:
        f.close()


def batch_timestamp_type(batch: Batch) -> str:
    if batch.magic >= 2:
        return "LogAppendTime" if batch.header().attributes & records.TIMESTAMP_TYPE_MASK else "CreateTime"
    return legacy_timestamp_type(legacy_outer(batch))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def codec_name(codec: int) -> str:
    try:
        return CODEC_NAMES[codec]
    except KeyError:
        raise JavaError(ILLEGAL_ARGUMENT, f"Unknown compression type id: {codec}") from None


def print_batch_level(batch: Batch, position: int, out: Output) -> None:
    if batch.magic >= 2:
        h = batch.header()
        last_seq = -1 if h.base_sequence == -1 else increment_sequence(h.base_sequence, h.last_offset_delta)
        horizon = h.base_timestamp if h.attributes & records.DELETE_HORIZON_MASK else None
        out.print(f"baseOffset: {h.base_offset} lastOffset: {h.base_offset + h.last_offset_delta} "
                  f"count: {h.records_count} baseSequence: {h.base_sequence} lastSequence: {last_seq} "
                  f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
                  f"partitionLeaderEpoch: {h.partition_leader_epoch} "
                  f"isTransactional: {_bool(h.attributes & records.TRANSACTIONAL_MASK)} "
                  f"isControl: {_bool(h.attributes & records.CONTROL_MASK)} "
                  f"deleteHorizonMs: {optional_long(horizon)}")
        ts_type = batch_timestamp_type(batch)
        codec = codec_name(h.attributes & records.CODEC_MASK)
        valid = batch.size >= RECORD_BATCH_OVERHEAD and \
            h.crc == records.crc32c(memoryview(batch.file.data)[batch.position + 21:batch.position + batch.size])
        out.println(f" position: {position} {ts_type}: {h.max_timestamp} size: {batch.size} magic: {batch.magic} "
                    f"compresscodec: {codec} crc: {h.crc} isvalid: {_bool(valid)}")
    else:
        out.print(f"offset: {batch.offset}")
        msg = legacy_outer(batch)
        out.println(f" position: {position} {legacy_timestamp_type(msg)}: {msg.timestamp} size: {batch.size} "
                    f"magic: {batch.magic} compresscodec: {codec_name(msg.attributes & 0x07)} crc: {msg.crc} "
                    f"isvalid: {_bool(msg.valid)}")



def _segment_paths(path: str) -> tuple[int, str, str]:
    start = start_offset_of(path)
    parts = java_split(file_name(path), r"\.")
    stem = parts[0] if parts else ""
    return start, sibling(path, stem + ".log"), sibling(path, stem + ".index")


def _first_batch_last_offset(f: SegmentFile, start: int, end: int) -> int:
    for batch in iter_batches(f, start, end):
        return batch.last_offset
    raise JavaError(NO_SUCH_ELEMENT)


def dump_index(path: str, o: DumpOptions, out: Output, reports: Reports) -> None:
    max_message_size = int_value_of("max-message-size", o.max_message_size, DEFAULT_MAX_MESSAGE_SIZE)
    start, log_path, _ = _segment_paths(path)
    f = SegmentFile(log_path)
    try:
        index = OffsetIndexFile(path, start)
        if index.entries == 0:
            out.println(f"{path} is empty.")
            return
        if o.index_sanity_check:
            index.sanity_check()
            out.println(f"{path} passed sanity check.")
            return
        for i in range(index.entries):
            offset, position = index.entry_at(i)
            if offset == index.base_offset and i > 0:
                return
            s_start, s_end = f.slice(position, max_message_size)
            first_last = _first_batch_last_offset(f, s_start, s_end)
            if first_last != offset:
                Reports.append(reports.index_mismatches, absolute(path), (offset, first_last))
            if not o.verify_index_only:
                out.println(f"offset: {offset} position: {position}")
    finally:
        f.close()


def dump_time_index(path: str, o: DumpOptions, out: Output, reports: Reports) -> None:
    start, log_path, index_path = _segment_paths(path)
    f = SegmentFile(log_path)
    try:
        index = OffsetIndexFile(index_path, start)
        time_index = TimeIndexFile(path, start)
        if o.index_sanity_check:
            time_index.sanity_check()
            out.println(f"{path} passed sanity check.")
            return
        key = absolute(path)
        prev_ts = NO_TIMESTAMP
        for i in range(time_index.entries):
            ts, offset = time_index.entry_at(i)
            if offset == time_index.base_offset and i > 0:
                return
            position = index.lookup(offset)[1]
            s_start, s_end = f.slice(position, INT_MAX)
            found = None
            for batch in iter_batches(f, s_start, s_end):
                if batch.last_offset >= offset:
                    found = batch
                    break
            if found is None:
                Reports.append(reports.time_not_found, key, (offset, -1))
            elif found.last_offset != offset:
                Reports.append(reports.time_not_found, key, (offset, found.last_offset))
            else:
                max_ts = NO_TIMESTAMP
                for rec in iter_records(found):
                    max_ts = max(max_ts, rec.timestamp)
                if max_ts != ts:
                    Reports.append(reports.time_mismatches, key, (ts, max_ts))
                if prev_ts >= ts:
                    Reports.append(reports.time_out_of_order, key, (ts, prev_ts))
            if not o.verify_index_only:
                out.println(f"timestamp: {ts} offset: {offset}")
            prev_ts = ts
    finally:
        f.close()



# ----------------------------------------------------------------- producer snapshot, txn index
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")


def dump_producer_snapshot(path: str, out: Output) -> None:
    """ProducerStateManager.readSnapshot; a corrupt snapshot is reported on stderr, not fatal."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise JavaError(NO_SUCH_FILE, path) from None
    except PermissionError:
        raise JavaError(ACCESS_DENIED, path) from None
    except IsADirectoryError:
        raise JavaError(IO_EXCEPTION, "Is a directory") from None
    if len(data) < 10:
        out.err("Snapshot failed schema validation: Error reading field 'version': "
                "java.nio.BufferUnderflowException" if len(data) < 2 else
                "Snapshot failed schema validation: Error reading field 'crc': java.nio.BufferUnderflowException"
                if len(data) < 6 else
                "Snapshot failed schema validation: Error reading field 'producer_entries': "
                "java.nio.BufferUnderflowException")
        return
    version = I16.unpack_from(data, 0)[0]
    stored_crc = U32.unpack_from(data, 2)[0]
    count = I32.unpack_from(data, 6)[0]
    if count < 0 or 10 + count * _SNAPSHOT_ENTRY.size > len(data):
        out.err("Snapshot failed schema validation: Error reading field 'producer_entries': "
                "java.nio.BufferUnderflowException")
        return
    if version != 1:
        out.err(f"Snapshot contained an unknown file version {version}")
        return
    computed = records.crc32c(data[6:])
    if stored_crc != computed:
        out.err(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored_crc}. Computed crc: {computed}")
        return
    for i in range(count):
        (pid, epoch, last_seq, last_offset, offset_delta, timestamp, coordinator_epoch,
         txn_first) = _SNAPSHOT_ENTRY.unpack_from(data, 10 + i * _SNAPSHOT_ENTRY.size)
        line = (f"producerId: {pid} producerEpoch: {epoch} coordinatorEpoch: {coordinator_epoch} "
                f"currentTxnFirstOffset: {optional_long(txn_first if txn_first >= 0 else None)} "
                f"lastTimestamp: {timestamp}")
        if last_offset >= 0:
            line += (f" firstSequence: {decrement_sequence(last_seq, offset_delta)} lastSequence: {last_seq} "
                     f"lastOffset: {last_offset} offsetDelta: {offset_delta} timestamp: {timestamp}")
        out.println(line)


_ABORTED_TXN = struct.Struct(">hqqqq")


def dump_txn_index(path: str, out: Output) -> None:
    """TransactionIndex.allAbortedTxns (a missing file has no entries)."""
    name = file_name(path)
    dot = name.find(".")
    parse_long(name[:dot] if dot >= 0 else name)
    if not os.path.exists(path):
        return
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except PermissionError:
        raise JavaError(ACCESS_DENIED, path) from None
    except IsADirectoryError:
        raise JavaError(IO_EXCEPTION, "Is a directory") from None
    for pos in range(0, len(data) - _ABORTED_TXN.size + 1, _ABORTED_TXN.size):
        version, pid, first, last, lso = _ABORTED_TXN.unpack_from(data, pos)
        if version > 0:
            raise JavaError(KAFKA_EXCEPTION, f"Unexpected aborted transaction version {version} in transaction "
                                             f"index {absolute(path)}, current version is 0")
        out.println(f"version: {version} producerId: {pid} firstOffset: {first} lastOffset: {last} "
                    f"lastStableOffset: {lso}")
