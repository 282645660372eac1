"""The share-partition record lifecycle (engine/share_partition.py), as pure logic: acquire,
accept/release/reject, delivery counts and their limit, acquisition lock expiry, the start
offset's moves and the record-lock cap."""

import pytest

from pk.engine.share_partition import (ACCEPT, ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, GAP, RELEASE,
                                       REJECT, RENEW, InvalidRecordState, SharePartition)


def test_acquire_hands_out_new_records_once():
    sp = SharePartition(0)
    assert sp.acquire("a", range(0, 5), 500, now_ms=0) == [(0, 4, 1)]
    assert sp.end_offset == 5
    assert sp.acquire("b", range(0, 5), 500, now_ms=0) == []  # all held by a
    assert sp.acquire("b", range(5, 8), 2, now_ms=0) == [(5, 6, 1)]  # max_records


def test_accept_moves_the_start_offset():
    sp = SharePartition(10)
    sp.acquire("a", range(10, 14), 500, 0)
    sp.acknowledge("a", 11, 13, [ACCEPT])
    assert sp.start_offset == 10  # 10 is still acquired
    sp.acknowledge("a", 10, 10, [ACCEPT])
    assert sp.start_offset == 14 and sp.in_flight == {}


def test_release_redelivers_with_a_higher_delivery_count():
    sp = SharePartition(0)
    sp.acquire("a", range(3), 500, 0)
    sp.acknowledge("a", 0, 2, [ACCEPT, RELEASE, ACCEPT])
    assert sp.state_of(1) == (AVAILABLE, 1)
    assert sp.next_fetch_offset() == 1
    assert sp.acquire("b", range(1, 3), 500, 0) == [(1, 1, 2)]
    sp.acknowledge("b", 1, 1, [ACCEPT])
    assert sp.start_offset == 3


def test_reject_archives():
    sp = SharePartition(0)
    sp.acquire("a", range(2), 500, 0)
    sp.acknowledge("a", 0, 1, [REJECT])
    assert sp.start_offset == 2
    assert sp.acquire("a", range(2), 500, 0) == []


def test_delivery_count_limit_archives_on_release():
    sp = SharePartition(0, delivery_count_limit=2)
    sp.acquire("a", [0], 500, 0)
    sp.acknowledge("a", 0, 0, [RELEASE])
    assert sp.acquire("a", [0], 500, 0) == [(0, 0, 2)]
    sp.acknowledge("a", 0, 0, [RELEASE])
    assert sp.state_of(0)[0] == ARCHIVED or sp.start_offset == 1
    assert sp.acquire("a", [0], 500, 0) == []


def test_lock_expiry_makes_records_available_again():
    sp = SharePartition(0, lock_duration_ms=1000)
    sp.acquire("a", range(3), 500, now_ms=100)
    assert sp.next_deadline() == 1100
    assert not sp.expire_locks(1099)
    assert sp.expire_locks(1100)
    assert sp.state_of(0) == (AVAILABLE, 1)
    assert sp.acquire("b", range(3), 500, 2000) == [(0, 2, 2)]
    with pytest.raises(InvalidRecordState):
        sp.acknowledge("a", 0, 0, [ACCEPT])  # a's lock is gone


def test_renew_extends_the_lock():
    sp = SharePartition(0, lock_duration_ms=1000)
    sp.acquire("a", [0], 500, now_ms=0)
    sp.acknowledge("a", 0, 0, [RENEW], now_ms=900)
    assert not sp.expire_locks(1500)
    assert sp.state_of(0) == (ACQUIRED, 1)


def test_acknowledging_what_another_member_holds_changes_nothing():
    sp = SharePartition(0)
    sp.acquire("a", range(2), 500, 0)
    with pytest.raises(InvalidRecordState):
        sp.acknowledge("b", 0, 1, [ACCEPT])
    assert sp.state_of(0) == (ACQUIRED, 1) and sp.state_of(1) == (ACQUIRED, 1)
    with pytest.raises(InvalidRecordState):
        sp.acknowledge("a", 0, 1, [ACCEPT, ACCEPT, ACCEPT])  # one type per offset, or one for all


def test_gaps_are_skipped_and_acknowledged_as_gaps():
    sp = SharePartition(0)
    assert sp.acquire("a", [0, 3, 4], 500, 0) == [(0, 0, 1), (3, 4, 1)]
    sp.acknowledge("a", 0, 4, [ACCEPT, GAP, GAP, ACCEPT, ACCEPT])
    assert sp.start_offset == 5


def test_record_lock_cap():
    sp = SharePartition(0, max_record_locks=3)
    assert sp.acquire("a", range(10), 500, 0) == [(0, 2, 1)]
    assert sp.acquire("b", range(3, 10), 500, 0) == []
    sp.acknowledge("a", 0, 0, [ACCEPT])
    assert sp.acquire("b", range(3, 10), 500, 0) == [(3, 3, 1)]


def test_member_leaving_releases_what_it_holds():
    sp = SharePartition(0)
    sp.acquire("a", range(2), 500, 0)
    sp.acquire("b", range(2, 4), 500, 0)
    assert sp.release_member("a")
    assert sp.state_of(0) == (AVAILABLE, 1) and sp.state_of(2) == (ACQUIRED, 1)


def test_log_start_moving_drops_what_lies_below():
    sp = SharePartition(0)
    sp.acquire("a", range(4), 500, 0)
    sp.move_start(2)
    assert sp.start_offset == 2 and sorted(sp.in_flight) == [2, 3]
    sp.move_start(10)
    assert sp.start_offset == sp.end_offset == 10


def test_snapshot_batches():
    sp = SharePartition(0)
    sp.acquire("a", range(4), 500, 0)
    sp.acknowledge("a", 1, 3, [ACCEPT, ACCEPT, REJECT])
    assert sp.snapshot() == {"start_offset": 0, "batches": [
        (0, 0, 1, AVAILABLE), (1, 2, 1, ACKNOWLEDGED), (3, 3, 1, ARCHIVED)]}


# ---------------------------------------------------------------------- __share_group_state records
def test_share_state_records_are_kafkas_bytes():
    """A ShareSnapshot key and value as Kafka 4.4's generated ShareSnapshotKey/Value write them
    (MessageUtil.toCoordinatorTypePrefixedBytes / toVersionPrefixedBytes, printed by Kafka 4.4's
    classes for these fields)."""
    import uuid

    from pk.engine import share_state_log as slog

    value = slog.ShareStateValue(10, [(10, 12, 1, ACKNOWLEDGED)], snapshot_epoch=3, state_epoch=1, leader_epoch=2,
                                 create_ms=1000, write_ms=2000)
    kafka_value = ("0000000000030000000100000002000000000000000a00000000000003e800000000000007d002"
                   "000000000000000a000000000000000c0200010000")
    assert slog.encode_snapshot(value).hex() == kafka_value
    assert slog.decode_value(slog.SNAPSHOT, bytes.fromhex(kafka_value)) == value
    topic_id = uuid.UUID(int=(1 << 64) | 2)
    kafka_key = "0000000267310000000000000001000000000000000200000007"
    assert slog.encode_key("g1", topic_id, 7).hex() == kafka_key
    assert slog.decode_key(bytes.fromhex(kafka_key)) == (slog.SNAPSHOT, "g1", topic_id, 7)
    assert slog.decode_value(slog.SNAPSHOT, None) is None


def test_simple_assignor():
    from pk.engine.share_groups import simple_assignment

    tps = [("t", 0), ("t", 1), ("t", 2)]
    assert simple_assignment(["b", "a"], tps) == {"a": [("t", 0), ("t", 2)], "b": [("t", 1)]}
    # more members than partitions: every member has one, partitions shared
    assert simple_assignment(["m1", "m2", "m3"], [("t", 0), ("t", 1)]) == {
        "m1": [("t", 0)], "m2": [("t", 1)], "m3": [("t", 0)]}
    assert simple_assignment(["a"], []) == {"a": []}
