"""Names that are not topic names (too long, a NUL, a path, empty) in every request that
carries a topic name: pk-server-start answers each (an error per topic, as Kafka does), logs
no traceback, and creates nothing outside its data directory."""

from __future__ import annotations

import os
import uuid

import pytest

from conftest import BrokerProcess, ProtocolClient
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

ZERO = uuid.UUID(int=0)
HOSTILE = ["x" * 300, "a\x00b", "../x", ""]


def requests(name: str):
    partition = [{"partition_index": 0, "offset": 0}]
    return [
        (ApiKey.METADATA, 12, {"topics": [{"name": name, "topic_id": ZERO}], "allow_auto_topic_creation": True}),
        (ApiKey.FETCH, 12, {"max_wait_ms": 0, "min_bytes": 0, "topics": [{"topic": name, "partitions": [
            {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 100}]}]}),
        (ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "topics": [{"name": name, "partitions": [
            {"partition_index": 0, "timestamp": -1}]}]}),
        (ApiKey.CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1}],
                                   "timeout_ms": 1000}),
        (ApiKey.CREATE_PARTITIONS, 3, {"topics": [{"name": name, "count": 3}], "timeout_ms": 1000}),
        (ApiKey.DELETE_TOPICS, 4, {"topic_names": [name], "timeout_ms": 1000}),
        (ApiKey.DELETE_RECORDS, 2, {"topics": [{"name": name, "partitions": partition}], "timeout_ms": 1000}),
        (ApiKey.OFFSET_COMMIT, 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                   "topics": [{"name": name, "partitions": [
                                       {"partition_index": 0, "committed_offset": 1}]}]}),
        (ApiKey.OFFSET_FETCH, 7, {"group_id": "g", "topics": [{"name": name, "partition_indexes": [0]}]}),
        (ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [{"resource_type": 2, "resource_name": name}]}),
        (ApiKey.ALTER_CONFIGS, 2, {"resources": [{"resource_type": 2, "resource_name": name, "configs": [
            {"name": "retention.ms", "value": "1000"}]}]}),
        (ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [{"resource_type": 2, "resource_name": name, "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "1000"}]}]}),
    ]


def error_codes(answer) -> set[int]:
    """Every error_code anywhere in an answer."""
    found = set()
    if isinstance(answer, dict):
        for key, value in answer.items():
            if key == "error_code":
                found.add(value)
            else:
                found |= error_codes(value)
    elif isinstance(answer, list):
        for item in answer:
            found |= error_codes(item)
    return found


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    b = BrokerProcess(str(root / "data")).start()
    try:
        yield b, root
    finally:
        b.stop()


@pytest.mark.parametrize("name", HOSTILE, ids=["300-chars", "nul", "path", "empty"])
def test_every_request_is_answered_with_an_error(broker, name):
    b, root = broker
    before = set(os.listdir(root))
    for key, version, body in requests(name):
        with ProtocolClient(b.port) as client:
            answer = client.call(key, version, body)
        if key == ApiKey.OFFSET_FETCH:  # as Kafka: no offset for a partition that cannot exist, no error
            assert answer["topics"][0]["partitions"][0]["committed_offset"] == -1
        else:
            assert error_codes(answer) - {E.NONE}, (key.name, answer)  # refused, never served
    assert set(os.listdir(root)) == before
    assert b.proc.poll() is None and "Traceback" not in b.log()
