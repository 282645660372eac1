"""A request for more partitions than Kafka's controller takes at once is refused at once with
Kafka's POLICY_VIOLATION texts (read from a Kafka 4.4 broker), before anything is built for it:
on the bundled engine, through pk-topics, and through pk-server-start's CreateTopics."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time

import pytest

from conftest import BrokerProcess, tool_path
from pk.engine import protocol as kp
from pk.engine.engine import Engine
from pk.engine.errors import PolicyViolationError

TOO_MANY = "Excessively large number of partitions per request."
TOO_BIG_A_BATCH = "Unable to perform excessively large batch operation."
TOO_MANY_MORE = "Excessively large number of additional partitions per request."


def test_engine_refuses_huge_partition_counts_at_once(tmp_path):
    engine = Engine(str(tmp_path / "data"))
    started = time.monotonic()
    with pytest.raises(PolicyViolationError, match=TOO_MANY):
        engine.create_topic("huge", 2147483647)
    assert time.monotonic() - started < 1  # nothing was built for two billion partitions
    with pytest.raises(PolicyViolationError, match=TOO_BIG_A_BATCH):  # 10000 partitions + the topic record
        engine.create_topic("big", 10000, validate_only=True)
    assert engine.create_topic("fits", 9999, validate_only=True).partitions == 9999
    engine.create_topic("small", 1)
    with pytest.raises(PolicyViolationError, match=TOO_MANY_MORE):
        engine.create_partitions("small", 10002)
    assert engine.create_partitions("small", 10001, validate_only=True).partitions == 1
    assert engine.list_topics() == ["__consumer_offsets", "small"]
    engine.close()


def test_pk_topics_prints_kafkas_line(tmp_path):
    env = {**os.environ, "PK_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run([tool_path("pk-topics"), "--create", "--topic", "huge", "--partitions", "2147483647"],
                          capture_output=True, env=env, timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, b"", f"Error while executing topic command : {TOO_MANY}\n".encode())


def test_broker_answers_policy_violation(tmp_path):
    broker = BrokerProcess(str(tmp_path / "data")).start()
    try:
        with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
            body = {"topics": [{"name": "huge", "num_partitions": 2147483647, "replication_factor": 1}],
                    "timeout_ms": 10000, "validate_only": False}
            sock.sendall(kp.encode_request(19, 7, 1, body))
            size = struct.unpack(">i", sock.recv(4))[0]
            data = b""
            while len(data) < size:
                data += sock.recv(size - len(data))
        _, answer = kp.parse_response(data, 19, 7)
        topic, = answer["topics"]
        assert (topic["error_code"], topic["error_message"]) == (44, TOO_MANY)
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
