"""Decompression bombs against a live pk-server-start (issue 23): one Produce request small on
the wire and up to 1 GB inflated, into the topics where the broker must look inside a batch
(a compacted topic's key check, a topic codec's re-compression). The broker reads the records
piece by piece (records/walk.py): its RSS grows by less than 64 MB, and another client's
ApiVersions is answered meanwhile (the work runs in a worker thread)."""

from __future__ import annotations

import functools

import pytest

from bombs import bomb, probe
from conftest import BrokerProcess, ProtocolClient
from pk.engine import compression
from pk.engine import protocol as kp
from pk.engine.protocol import errors as E

GB = 1 << 30
MB = 1 << 20
RSS_GROWTH_MB = 64
# Another client's ApiVersions while the bomb is read: the worker thread gives the event loop
# the GIL every 5 ms (sys.getswitchinterval); the bound leaves room for a loaded 2-core machine.
WORST_LATENCY = 0.5


@functools.lru_cache(maxsize=None)
def _bomb(codec: int, inflated: int, count: int = 1, keyed: bool = True) -> bytes:
    return bomb(codec, inflated, count, b"k" if keyed else None)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    broker = BrokerProcess(str(tmp_path_factory.mktemp("bombs") / "data")).start()
    topics = {"compacted": {"cleanup.policy": "compact"}, "gzipped": {"compression.type": "gzip"},
              "snappied": {"compression.type": "snappy"},
              "capped": {"cleanup.policy": "compact", "max.decompressed.message.bytes": str(MB)}}
    try:
        with ProtocolClient(broker.port) as client:
            answer = client.call(19, 7, {"topics": [
                {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": k, "value": v} for k, v in configs.items()]}
                for name, configs in topics.items()], "timeout_ms": 10000, "validate_only": False})
            assert [t["error_code"] for t in answer["topics"]] == [0] * len(topics), answer
        yield broker
    finally:
        broker.stop()


def _take(server, topic: str, batch: bytes):
    seen = probe(server.port, server.proc.pid, topic, batch)
    print(f"{topic}: {len(batch)} bytes -> error {seen.error_code} in {seen.seconds:.2f}s, RSS +{seen.growth_mb:.0f} MB, "
          f"other client's worst ApiVersions {seen.worst_latency * 1000:.0f} ms over {len(seen.latencies)}")
    assert server.proc.poll() is None, server.log()[-3000:]
    assert seen.growth_mb < RSS_GROWTH_MB, seen
    assert seen.latencies and seen.worst_latency < WORST_LATENCY, seen
    return seen


def test_a_1gb_zstd_bomb_into_a_compacted_topic_is_accepted_in_bounded_memory(server):
    batch = _bomb(compression.ZSTD, GB)
    assert len(batch) < 64 * 1024
    assert _take(server, "compacted", batch).error_code == E.NONE


def test_a_timestamp_lookup_walks_a_stored_bomb_in_bounded_memory(server):
    """ListOffsets by timestamp reads the records of the batches that may reach it: the 1 GB
    batch stored here (xdist may run the test above on another worker) is walked, not inflated."""
    assert _take(server, "compacted", _bomb(compression.ZSTD, GB)).error_code == E.NONE
    request = kp.encode_request(2, 7, 3, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "compacted", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                              "timestamp": 0}]}]})
    seen = probe(server.port, server.proc.pid, "compacted", None, request=request)
    _, body = kp.parse_response(seen.answer, 2, 7)
    part = body["topics"][0]["partitions"][0]
    assert (part["error_code"], part["offset"]) == (E.NONE, 0), part
    assert seen.growth_mb < RSS_GROWTH_MB, seen


@pytest.mark.parametrize("codec", [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD],
                         ids=["gzip", "snappy", "lz4", "zstd"])
def test_each_codec_s_bomb_into_a_compacted_topic(server, codec):
    # as much as each codec packs into well under message.max.bytes (snappy: ~21:1 at most)
    inflated = {compression.SNAPPY: 16 * MB, compression.LZ4: 128 * MB}.get(codec, 256 * MB)
    batch = _bomb(codec, inflated)
    assert len(batch) < 1024 * 1024
    assert _take(server, "compacted", batch).error_code == E.NONE


def test_many_records_inflating_to_256mb_keep_other_clients_answered(server):
    assert _take(server, "compacted", _bomb(compression.ZSTD, 256 * MB, 20_000)).error_code == E.NONE


def test_a_million_tiny_records_are_checked_column_wise(server):
    """740 KB of zstd holding 1,000,000 records: checked in NumPy windows, not one by one."""
    seen = _take(server, "compacted", _bomb(compression.ZSTD, 16_000_000, 1_000_000))
    assert seen.error_code == E.NONE


def test_a_keyless_bomb_is_refused_by_a_compacted_topic(server):
    assert _take(server, "compacted", _bomb(compression.ZSTD, 256 * MB, 1, False)).error_code == E.INVALID_RECORD


def test_a_record_above_max_decompressed_message_bytes_is_invalid(server):
    assert _take(server, "capped", _bomb(compression.ZSTD, 4 * MB)).error_code == E.INVALID_RECORD
    assert _take(server, "capped", _bomb(compression.ZSTD, MB // 2)).error_code == E.NONE


def test_a_topic_codec_re_compresses_a_bomb_as_it_inflates(server):
    assert _take(server, "gzipped", _bomb(compression.ZSTD, 256 * MB)).error_code == E.NONE


def test_a_re_compression_past_max_message_bytes_is_refused_early(server):
    # 1 GB of zeros is ~47 MB as snappy: the broker stops at message.max.bytes
    seen = _take(server, "snappied", _bomb(compression.ZSTD, GB))
    assert seen.error_code == E.MESSAGE_TOO_LARGE


def test_a_corrupt_compressed_payload_is_stored_where_the_broker_need_not_read_it(server):
    """README, "Compressed batches": a zstd payload cut short under a valid CRC goes into a plain
    topic as it came, and is refused where the broker reads it (a compacted topic: the records
    end before the batch's count, INVALID_RECORD)."""
    from pk.engine import records

    whole = records.encode_batch([(b"k", b"v" * 5000, (), 1)], compression_type=compression.ZSTD)
    header = records.read_header(whole)
    payload = whole[records.HEADER_SIZE:-20]
    cut = records.frame(0, 0, compression.ZSTD, 0, header.base_timestamp, header.max_timestamp, -1, -1, -1, 1,
                        payload)
    with ProtocolClient(server.port) as client:
        created = client.call(19, 7, {"topics": [{"name": "plain", "num_partitions": 1, "replication_factor": 1,
                                                  "assignments": [], "configs": []}],
                                      "timeout_ms": 10000, "validate_only": False})
        assert created["topics"][0]["error_code"] in (E.NONE, E.TOPIC_ALREADY_EXISTS)
        for topic, expected in (("plain", E.NONE), ("compacted", E.INVALID_RECORD)):
            answer = client.call(0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": cut}]}]})
            assert answer["responses"][0]["partition_responses"][0]["error_code"] == expected, (topic, answer)
