"""The engine's follower side of replication (engine/log.py): appending a leader's batches
with their offsets and leader epochs kept, and truncating a divergent tail (KIP-101)."""

import pytest

from pk.engine import leader_epochs, records
from pk.engine.engine import Engine
from pk.engine.errors import OffsetOutOfRangeError


def _leader_and_follower(tmp_path, segment_bytes="1048576"):
    leader = Engine(str(tmp_path / "leader"))
    follower = Engine(str(tmp_path / "follower"))
    for engine in (leader, follower):
        engine.create_topic("t", 1, 1, configs={"segment.bytes": segment_bytes})
    return leader, follower


def _values(plog):
    out, offset = [], plog.log_start_offset
    while offset < plog.log_end_offset:
        data = plog.read(offset, 1 << 24)
        for pos, header in records.iter_batches(data):
            out += [(r.offset, r.value) for r in records.decode_records(data, pos, header)]
            offset = header.last_offset + 1
    return out


def test_follower_append_keeps_offsets_and_epochs_then_truncates(tmp_path):
    leader, follower = _leader_and_follower(tmp_path)
    lp, fp = leader.partition("t", 0), follower.partition("t", 0)
    lp.leader_epoch = 3
    for i in range(5):
        lp.append_records([(None, b"a%d" % i, [], 1700000000000), (None, b"b%d" % i, [], 1700000000000)])
    lp.leader_epoch = 5
    lp.append_records([(None, b"c", [], 1700000000000)])
    data = lp.read(0, 1 << 20)
    assert fp.append_as_follower(data) == 11
    assert _values(fp) == _values(lp)
    assert fp.read(0, 1 << 20) == data  # the same bytes, epochs and offsets included
    assert leader_epochs.read_entries(fp.dir) == [(3, 0), (5, 10)]
    with pytest.raises(OffsetOutOfRangeError):
        fp.append_as_follower(lp.read(4, 1 << 20))  # not at the log end

    assert fp.truncate_to(6) == 6
    assert fp.log_end_offset == 6 and [o for o, _ in _values(fp)] == list(range(6))
    assert leader_epochs.read_entries(fp.dir) == [(3, 0)]
    assert fp.append_as_follower(lp.read(6, 1 << 20)) == 11  # catches up again
    assert _values(fp) == _values(lp)
    assert leader_epochs.read_entries(fp.dir) == [(3, 0), (5, 10)]
    # A fresh engine on the follower's directory recovers the same log.
    follower.close()
    again = Engine(str(tmp_path / "follower"))
    assert _values(again.partition("t", 0)) == _values(lp)
    again.close()
    leader.close()


def test_truncate_across_segments(tmp_path):
    leader, follower = _leader_and_follower(tmp_path, segment_bytes="14000")
    lp, fp = leader.partition("t", 0), follower.partition("t", 0)
    for i in range(40):
        lp.append_records([(None, bytes(1000), [], 1700000000000)])
    while fp.log_end_offset < lp.log_end_offset:  # a read stops at a segment's end
        fp.append_as_follower(lp.read(fp.log_end_offset, 1 << 24))
    assert len(fp.segments) == len(lp.segments) > 2
    assert fp.truncate_to(3) == 3
    assert len(fp.segments) == 1 and fp.log_end_offset == 3
    assert fp.list_offset(-1)[0] == 3
    fp.leader_epoch = 1
    assert fp.append_records([(None, b"new", [], 1700000000000)]) == (3, 3)
    assert _values(fp)[-1] == (3, b"new")
    assert fp.truncate_to(0) == 0 and _values(fp) == []
    follower.close()
    leader.close()


def test_start_over_at_the_leaders_log_start(tmp_path):
    leader, follower = _leader_and_follower(tmp_path, segment_bytes="14000")
    lp, fp = leader.partition("t", 0), follower.partition("t", 0)
    for i in range(40):
        lp.append_records([(None, bytes(1000), [], 1700000000000)])
    fp.append_as_follower(lp.read(0, 1 << 24))
    start = lp.delete_records_before(lp.segments[-1].base_offset)
    assert fp.log_end_offset < start
    fp.truncate_fully_and_start_at(start)
    assert (fp.log_start_offset, fp.log_end_offset, len(fp.segments)) == (start, start, 1)
    assert fp.append_as_follower(lp.read(start, 1 << 24)) == lp.log_end_offset
    assert _values(fp) == _values(lp)
    follower.close()
    again = Engine(str(tmp_path / "follower"))
    assert _values(again.partition("t", 0)) == _values(lp)
    again.close()
    leader.close()
