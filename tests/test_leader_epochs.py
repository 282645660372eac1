"""engine/leader_epochs.py: Kafka's leader-epoch-checkpoint file and the lookups of
LeaderEpochFileCache (endOffsetFor, truncateFromStart), and a partition log stamping and
recording its epochs."""

from __future__ import annotations

import os
import time

from pk.engine import leader_epochs as LE
from pk.engine import records
from pk.engine.engine import Engine

ENTRIES = [(0, 0), (2, 10), (5, 30)]


def test_end_offset_for_follows_kafka():
    assert LE.end_offset_for(ENTRIES, 5, 42) == (5, 42)      # the latest epoch: up to the log end
    assert LE.end_offset_for(ENTRIES, 2, 42) == (2, 30)      # ends where the next one starts
    assert LE.end_offset_for(ENTRIES, 3, 42) == (2, 30)      # unknown in between: the one below
    assert LE.end_offset_for(ENTRIES, 0, 42) == (0, 10)
    assert LE.end_offset_for(ENTRIES[1:], 1, 42) == (1, 10)  # below the earliest: its start
    assert LE.end_offset_for(ENTRIES, 6, 42) == (-1, -1)     # above the latest
    assert LE.end_offset_for(ENTRIES, -1, 42) == (-1, -1)
    assert LE.end_offset_for([], 0, 42) == (-1, -1)


def test_visible_entries_and_epoch_at():
    assert LE.visible_entries(ENTRIES, 0) == ENTRIES
    assert LE.visible_entries(ENTRIES, 12) == [(2, 12), (5, 30)]
    assert LE.visible_entries(ENTRIES, 30) == [(5, 30)]
    assert [LE.epoch_at(ENTRIES, o) for o in (0, 9, 10, 29, 30, 99)] == [0, 0, 2, 2, 5, 5]
    assert LE.epoch_at(ENTRIES[1:], 3) == -1


def test_checkpoint_file_round_trip_and_bad_files(tmp_path):
    d = str(tmp_path)
    assert LE.read_entries(d) == []
    LE.write_entries(d, ENTRIES)
    with open(os.path.join(d, LE.FILE_NAME)) as f:
        assert f.read() == "0\n3\n0 0\n2 10\n5 30\n"
    assert LE.read_entries(d) == ENTRIES
    for bad in ("1\n1\n0 0\n", "0\n2\n0 0\n", "0\nx\n", ""):
        with open(os.path.join(d, LE.FILE_NAME), "w") as f:
            f.write(bad)
        assert LE.read_entries(d) == []


def test_a_log_stamps_its_epoch_and_records_where_each_began(tmp_path):
    now = int(time.time() * 1000)  # recent timestamps: retention keeps them
    with Engine(str(tmp_path / "data")) as engine:
        engine.create_topic("t")
        log = engine.partition("t", 0)
        assert log.leader_epoch_entries() == [(0, 0)]  # nothing appended yet: epoch 0 from the start
        log.append_records([(b"k", b"a", (), now)])
        log.leader_epoch = 3  # a new leadership (ZooKeeper mode's epoch bump)
        assert log.leader_epoch_entries() == [(0, 0), (3, 1)]
        log.append_records([(b"k", b"b", (), now)])
        log.append_batches([records.encode_batch([(b"k", b"c", (), now)]),
                            records.encode_batch([(b"k", b"d", (), now)])])
        data = log.read(0, 1 << 20)
        assert [h.partition_leader_epoch for _, h in records.iter_batches(data)] == [0, 3, 3, 3]
        with open(os.path.join(log.dir, LE.FILE_NAME)) as f:
            assert f.read() == "0\n2\n0 0\n3 1\n"
        log.delete_records_before(2)
        assert log.leader_epoch_entries() == [(3, 2)]
