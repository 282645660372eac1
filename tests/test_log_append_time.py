"""message.timestamp.type=LogAppendTime on the bundled engine, as pk-server-start applies it:
PartitionLog.append_batches stamps each batch with the append time, whichever writer appends
(the engine's producer, or the broker's Produce handler)."""

from __future__ import annotations

import re
import time

from pk.engine import records
from pk.engine.engine import Engine

from conftest import BrokerProcess

TIMESTAMPED = ["--formatter-property", "print.timestamp=true", "--formatter-property", "print.offset=true"]


def _stamps(out: str) -> list[tuple[str, int]]:
    return [(kind, int(ms)) for kind, ms in re.findall(r"^(\w+):(\d+)\tOffset:\d+\t", out, re.M)]


def test_topic_config_stamps_append_time_on_engine(pk, data_dir):
    with Engine(data_dir) as engine:
        engine.create_topic("lat", 1, configs={"message.timestamp.type": "LogAppendTime"})
        engine.create_topic("ct", 1)
    before = int(time.time() * 1000)
    for topic in ("lat", "ct"):
        # the producer's own timestamps lie in the past: only LogAppendTime replaces them
        r = pk("pk-console-producer", "--topic", topic, input="a\nb\n")
        assert r.returncode == 0, r.err
    after = int(time.time() * 1000)
    r = pk("pk-console-consumer", "--topic", "lat", "--from-beginning", "--max-messages", "2", *TIMESTAMPED)
    assert r.returncode == 0, r.err
    stamps = _stamps(r.out)
    assert [kind for kind, _ in stamps] == ["LogAppendTime", "LogAppendTime"], r.out
    assert all(before <= ms <= after for _, ms in stamps)
    assert r.out.splitlines()[0].endswith("\tOffset:0\ta")
    r = pk("pk-console-consumer", "--topic", "ct", "--from-beginning", "--max-messages", "2", *TIMESTAMPED)
    assert [kind for kind, _ in _stamps(r.out)] == ["CreateTime", "CreateTime"], r.out


def test_broker_default_stamps_append_time(data_dir):
    """log.message.timestamp.type, the broker's default, applies to a topic without its own
    setting; a topic's CreateTime wins over it."""
    past = 1_000_000
    with Engine(data_dir, {"log.message.timestamp.type": "LogAppendTime"}) as engine:
        engine.create_topic("d", 1)
        engine.create_topic("own", 1, configs={"message.timestamp.type": "CreateTime"})
        for topic in ("d", "own"):
            engine.partition(topic, 0).append_records([(b"k", b"v", [], past)], now_ms=past + 5)
        stored = {t: records.read_header(engine.partition(t, 0).read(0)) for t in ("d", "own")}
    assert (stored["d"].timestamp_type, stored["d"].max_timestamp) == (records.LOG_APPEND_TIME, past + 5)
    assert records.validate_batch(engine.partition("d", 0).read(0)).crc == stored["d"].crc  # the CRC still holds
    assert (stored["own"].timestamp_type, stored["own"].max_timestamp) == (records.CREATE_TIME, past)


def test_server_and_engine_stamp_alike(pk, data_dir, tmp_path):
    """pk-server-start with the broker default: a remote consumer and the engine's consumer
    both see LogAppendTime, from the one place that stamps it."""
    b = BrokerProcess(data_dir, {"log.message.timestamp.type": "LogAppendTime"}).start()
    try:
        before = int(time.time() * 1000)
        r = pk("pk-console-producer", "--bootstrap-server", b.bootstrap, "--topic", "srv", input="x\ny\n")
        assert r.returncode == 0, r.err
        after = int(time.time() * 1000)
        remote = pk("pk-console-consumer", "--bootstrap-server", b.bootstrap, "--topic", "srv", "--from-beginning",
                    "--max-messages", "2", *TIMESTAMPED)
        assert remote.returncode == 0, remote.err
        local = pk("pk-console-consumer", "--topic", "srv", "--from-beginning", "--max-messages", "2", *TIMESTAMPED)
        assert local.out == remote.out
        stamps = _stamps(remote.out)
        assert [kind for kind, _ in stamps] == ["LogAppendTime"] * 2, remote.out
        assert all(before <= ms <= after for _, ms in stamps)
    finally:
        b.stop()
