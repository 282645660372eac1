"""`__consumer_offsets` record formats and consumer protocol payloads (engine/consumer_offsets.py).

Expected bytes come from Kafka 3.7's message schemas and are
cross-checked against kafka-python's independent implementation of the consumer protocol.
"""

from __future__ import annotations

import pytest

from pk.engine import consumer_offsets as co


# --------------------------------------------------------------------------- group -> partition
@pytest.mark.parametrize("group, hash_code, partition", [
    ("my-group", -1906497762, 12),
    ("test-group", 627841412, 12),
    ("group1", -1237460590, 40),
    ("console-consumer-12345", 158455506, 6),
    ("", 0, 0),
    # String.hashCode is Integer.MIN_VALUE: Kafka's Utils.abs gives 0 (Python's abs: 48).
    ("polygenelubricants", -2147483648, 0),
    # Outside the BMP: two UTF-16 code units (0xD83D, 0xDE00) -> 55357 * 31 + 56832.
    ("\U0001F600", 1772899, 1772899 % 50),
    ("é", 233, 233 % 50),
])
def test_partition_for(group, hash_code, partition):
    assert co.java_string_hash(group) == hash_code
    assert co.partition_for(group) == partition


def test_partition_for_other_partition_counts():
    assert co.partition_for("my-group", 1) == 0
    assert co.partition_for("my-group", 7) == 1906497762 % 7
    assert co.partition_for("polygenelubricants", 3) == 0


def test_kafka_abs():
    assert co.kafka_abs(-(2**31)) == 0
    assert co.kafka_abs(-5) == 5
    assert co.kafka_abs(7) == 7


# --------------------------------------------------------------------------- keys
def test_offset_commit_key_bytes():
    raw = co.offset_commit_key("g1", "t1", 0)
    assert raw == bytes.fromhex("0001" "0002" "6731" "0002" "7431" "00000000")
    assert co.decode_key(raw) == co.OffsetCommitKey("g1", "t1", 0, 1)


def test_group_metadata_key_bytes():
    raw = co.group_metadata_key("g1")
    assert raw == bytes.fromhex("0002" "0002" "6731")
    assert co.decode_key(raw) == co.GroupMetadataKey("g1")


def test_decode_key_tells_kinds_apart_by_version():
    v0 = bytes.fromhex("0000" "0001" "61" "0001" "62" "00000007")
    assert co.decode_key(v0) == co.OffsetCommitKey("a", "b", 7, version=0)
    assert co.decode_key(bytes.fromhex("0003" "0001" "61")) == co.UnknownKey(3)
    assert co.decode_key(bytes.fromhex("0007")) == co.UnknownKey(7)


def test_key_utf8_and_truncation():
    key = co.OffsetCommitKey("grüppe", "tópic", 2)
    assert co.decode_key(key.encode()) == key
    with pytest.raises(co.SchemaError):
        co.decode_key(key.encode()[:-1])
    with pytest.raises(co.SchemaError):
        co.decode_key(b"\x00")


def test_key_with_null_group_is_rejected():
    with pytest.raises(co.SchemaError, match="non-nullable field group was serialized as null"):
        co.decode_key(bytes.fromhex("0002ffff"))


# --------------------------------------------------------------------------- offset commit values
def test_offset_commit_value_v3_bytes():
    raw = co.offset_commit_value(4, commit_timestamp=1700000000000)
    assert raw == bytes.fromhex("0003" "0000000000000004" "ffffffff" "0000" "0000018bcfe56800")
    assert co.decode_offset_commit_value(raw) == co.OffsetCommitValue(4, "", 1700000000000, -1, -1, 3)


def test_offset_commit_value_with_expire_timestamp_is_v1():
    raw = co.offset_commit_value(9, "meta", 1000, expire_timestamp=2000)
    assert raw == bytes.fromhex("0001" "0000000000000009" "0004" + b"meta".hex() + "00000000000003e8" "00000000000007d0")
    value = co.decode_offset_commit_value(raw)
    assert (value.version, value.offset, value.metadata, value.commit_timestamp, value.expire_timestamp) == \
        (1, 9, "meta", 1000, 2000)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_offset_commit_value_roundtrip_every_version(version):
    value = co.OffsetCommitValue(
        offset=123456789012, metadata="m€ta", commit_timestamp=1700000000123,
        leader_epoch=5 if version >= 3 else -1,
        expire_timestamp=1700000099999 if version == 1 else -1, version=version)
    assert co.decode_offset_commit_value(value.encode()) == value


def test_offset_commit_value_v4_is_flexible():
    raw = co.OffsetCommitValue(1, "ab", 2, 3, version=4).encode()
    # version, offset, leaderEpoch, compact string (length + 1 as unsigned varint), timestamp, no tags
    assert raw == bytes.fromhex("0004" "0000000000000001" "00000003" "03" "6162" "0000000000000002" "00")
    # an unknown tagged field is skipped
    tagged = raw[:-1] + bytes.fromhex("01" "05" "02" "abcd")
    assert co.decode_offset_commit_value(tagged) == co.OffsetCommitValue(1, "ab", 2, 3, version=4)


def test_offset_commit_tombstone_and_bad_versions():
    assert co.decode_offset_commit_value(None) is None
    with pytest.raises(co.SchemaError, match="Unknown offset message version: 5"):
        co.decode_offset_commit_value(bytes.fromhex("0005") + bytes(30))
    with pytest.raises(co.SchemaError, match="Unknown offset message version: -1"):
        co.decode_offset_commit_value(bytes.fromhex("ffff"))
    with pytest.raises(co.SchemaError):
        co.decode_offset_commit_value(bytes.fromhex("0003000000"))


# --------------------------------------------------------------------------- group metadata values
def _member(**kw):
    base = dict(member_id="consumer-1-abc", client_id="consumer-1", client_host="/127.0.0.1",
                session_timeout=45000, subscription=co.encode_subscription(["t"]),
                assignment=co.encode_assignment({"t": [0, 1]}), rebalance_timeout=300000,
                group_instance_id=None)
    base.update(kw)
    return co.MemberMetadata(**base)


def test_group_metadata_value_v3_bytes():
    member = co.MemberMetadata("m", "c", "h", 10, b"\x01", b"\x02", rebalance_timeout=20, group_instance_id="i")
    raw = co.group_metadata_value("consumer", 1, "range", "m", [member], current_state_timestamp=5)
    expected = ("0003" "0008" + b"consumer".hex() + "00000001" "0005" + b"range".hex() + "0001" "6d"
                "0000000000000005" "00000001"
                "0001" "6d" "0001" "69" "0001" "63" "0001" "68" "00000014" "0000000a" "00000001" "01" "00000001" "02")
    assert raw.hex() == expected
    decoded = co.decode_group_metadata_value(raw)
    assert decoded == co.GroupMetadataValue("consumer", 1, "range", "m", (member,), 5, 3)


def test_empty_group_metadata_value():
    raw = co.group_metadata_value("", 0, None, None)
    assert raw == bytes.fromhex("0003" "0000" "00000000" "ffff" "ffff" "ffffffffffffffff" "00000000")
    assert co.decode_group_metadata_value(raw) == co.GroupMetadataValue("", 0, None, None, (), -1, 3)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_group_metadata_value_roundtrip_every_version(version):
    members = (
        _member(rebalance_timeout=300000 if version >= 1 else -1,
                group_instance_id="static-1" if version >= 3 else None),
        _member(member_id="consumer-2-def", client_id="consumer-2",
                rebalance_timeout=300000 if version >= 1 else -1),
    )
    value = co.GroupMetadataValue("consumer", 7, "range", "consumer-1-abc", members,
                                  1700000000000 if version >= 2 else -1, version)
    assert co.decode_group_metadata_value(value.encode()) == value


def test_group_metadata_tombstone_and_bad_version():
    assert co.decode_group_metadata_value(None) is None
    with pytest.raises(co.SchemaError, match="Unknown group metadata message version: 9"):
        co.decode_group_metadata_value(bytes.fromhex("0009"))


def test_decode_record_dispatches_on_key():
    key = co.offset_commit_key("g", "t", 1)
    assert co.decode_record(key, co.offset_commit_value(5)) == (co.OffsetCommitKey("g", "t", 1), co.OffsetCommitValue(5))
    assert co.decode_record(key, None) == (co.OffsetCommitKey("g", "t", 1), None)
    gkey = co.group_metadata_key("g")
    k, v = co.decode_record(gkey, co.group_metadata_value("", 0, None, None))
    assert k == co.GroupMetadataKey("g") and v.members == ()
    assert co.decode_record(bytes.fromhex("0004"), b"anything") == (co.UnknownKey(4), None)


# --------------------------------------------------------------------------- consumer protocol
def test_assignment_bytes_seen_from_librdkafka():
    # ConsumerProtocolAssignment version 0, topic t1 partition 0, 0-length user data
    raw = bytes.fromhex("0000" "00000001" "0002" "7431" "00000001" "00000000" "00000000")
    assert co.encode_assignment({"t1": [0]}, user_data=b"", version=0) == raw
    decoded = co.decode_assignment(raw)
    assert decoded == co.Assignment([("t1", [0])], b"", 0)
    assert decoded.partitions() == [("t1", 0)]
    empty = bytes(10)
    assert co.decode_assignment(empty) == co.Assignment([], b"", 0)


def test_assignment_groups_per_topic_in_first_seen_order():
    raw = co.encode_assignment([("b", 1), ("a", 0), ("b", 0)])
    assert co.decode_assignment(raw) == co.Assignment([("b", [1, 0]), ("a", [0])], None, 3)


def test_subscription_sorted_like_java():
    raw = co.encode_subscription(["b", "a"], owned_partitions=[("b", 2), ("a", 1), ("b", 0)],
                                 generation_id=4, rack_id="r1")
    sub = co.decode_subscription(raw)
    assert sub == co.Subscription(["a", "b"], None, [("a", [1]), ("b", [0, 2])], 4, "r1", 3)
    assert co.decode_subscription(co.encode_subscription(["x"], owned_partitions={"x": [3, 1]})).owned_partitions == \
        [("x", [1, 3])]


def test_newer_protocol_versions_read_as_3_and_negative_rejected():
    raw = bytearray(co.encode_subscription(["t"], user_data=b"u", generation_id=2, rack_id=None))
    raw[0:2] = b"\x00\x07"
    raw += b"future fields"
    sub = co.decode_subscription(bytes(raw))
    assert (sub.version, sub.topics, sub.user_data, sub.generation_id) == (7, ["t"], b"u", 2)
    with pytest.raises(co.SchemaError, match="Unsupported subscription version: -1"):
        co.decode_subscription(bytes.fromhex("ffff"))
    with pytest.raises(co.SchemaError, match="Unsupported assignment version: -2"):
        co.decode_assignment(bytes.fromhex("fffe"))
    with pytest.raises(co.SchemaError):
        co.decode_subscription(bytes.fromhex("0000000000"))


# --------------------------------------------------------------------------- kafka-python cross-checks
kp_metadata = pytest.importorskip("kafka.protocol.consumer.metadata")


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_matches_kafka_python(version):
    S = kp_metadata.ConsumerProtocolSubscription
    owned = [S.TopicPartition(topic="a", partitions=[0, 1]), S.TopicPartition(topic="b", partitions=[2])]
    theirs = S(version=version, topics=["a", "b"], user_data=b"ud", owned_partitions=owned,
               generation_id=9, rack_id="rack").encode()
    ours = co.encode_subscription(["b", "a"], user_data=b"ud", owned_partitions={"a": [1, 0], "b": [2]},
                                  version=version, generation_id=9, rack_id="rack")
    assert ours == theirs
    decoded = co.decode_subscription(theirs)
    assert decoded.topics == ["a", "b"] and decoded.user_data == b"ud" and decoded.version == version
    back = S.decode(ours)
    assert list(back.topics) == ["a", "b"] and back.user_data == b"ud"


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_matches_kafka_python(version):
    A = kp_metadata.ConsumerProtocolAssignment
    theirs = A(version=version, assigned_partitions=[A.TopicPartition(topic="t", partitions=[2, 0]),
                                                     A.TopicPartition(topic="u", partitions=[5])],
               user_data=None).encode()
    ours = co.encode_assignment({"t": [2, 0], "u": [5]}, version=version)
    assert ours == theirs
    assert co.decode_assignment(theirs).partitions() == [("t", 2), ("t", 0), ("u", 5)]
    assert [(tp.topic, tp.partition) for tp in A.decode(ours).partitions()] == [("t", 2), ("t", 0), ("u", 5)]


def test_matches_kafka_python_v0_structs():
    old = pytest.importorskip("kafka.protocol.old.consumer_protocol")
    meta = old.ConsumerProtocolMemberMetadata_v0(0, ["a", "b"], b"x").encode()
    assert co.encode_subscription(["b", "a"], user_data=b"x", version=0) == meta
    assign = old.ConsumerProtocolMemberAssignment_v0(0, [("t", [1, 2])], b"").encode()
    assert co.encode_assignment({"t": [1, 2]}, user_data=b"", version=0) == assign
    decoded = old.ConsumerProtocolMemberAssignment_v0.decode(co.encode_assignment({"t": [3]}, b"", version=0))
    assert decoded.partitions()[0].partition == 3
