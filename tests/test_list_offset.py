"""PartitionLog.list_offset: the one ListOffsets lookup that GetOffsetShell, the broker and
the Spark data source share."""

import random

import pytest

from pk.engine import log as L
from pk.engine.engine import Engine

T0 = 1_700_000_000_000


@pytest.fixture
def plog(tmp_path):
    eng = Engine(str(tmp_path), {"offsets.topic.num.partitions": "1"})
    eng.create_topic("t", 1, configs={"retention.ms": "-1", "segment.bytes": "600",
                                      "index.interval.bytes": "100"})
    yield eng.partition("t", 0)
    eng.close()


def test_an_empty_log(plog):
    assert plog.list_offset(L.LATEST_TIMESTAMP) == (0, -1)
    assert plog.list_offset(L.EARLIEST_TIMESTAMP) == (0, -1)
    assert plog.list_offset(L.EARLIEST_LOCAL_TIMESTAMP) == (0, -1)
    assert plog.list_offset(L.MAX_TIMESTAMP) is None
    assert plog.list_offset(T0) is None


def test_specs_on_a_log_of_many_segments(plog):
    rng = random.Random(5)
    stamped = []
    for _ in range(50):
        rows = [(b"k", b"v" * 10, (), T0 + rng.randint(0, 3000)) for _ in range(rng.randint(1, 3))]
        first, _ = plog.append_records(rows)
        stamped += [(first + i, row[3]) for i, row in enumerate(rows)]
    assert len(plog.segments) > 3
    end = stamped[-1][0] + 1
    assert plog.list_offset(L.LATEST_TIMESTAMP) == (end, -1)
    assert plog.list_offset(L.EARLIEST_TIMESTAMP) == (0, -1)
    top = max(ts for _, ts in stamped)
    assert plog.list_offset(L.MAX_TIMESTAMP) == next((o, ts) for o, ts in stamped if ts == top)
    assert plog.list_offset(L.LATEST_TIERED_TIMESTAMP) is None
    assert plog.list_offset(L.EARLIEST_PENDING_UPLOAD_TIMESTAMP) is None
    for t in range(T0 - 5, T0 + 3010, 97):
        assert plog.list_offset(t) == next(((o, ts) for o, ts in stamped if ts >= t), None), t
    with pytest.raises(ValueError):
        plog.list_offset(-7)


def test_earliest_follows_the_log_start_offset(plog):
    for i in range(10):
        plog.append_records([(b"k", b"v", (), T0 + i)])
    plog.delete_records_before(4)
    assert plog.list_offset(L.EARLIEST_TIMESTAMP) == (4, -1)
    assert plog.list_offset(L.EARLIEST_LOCAL_TIMESTAMP) == (4, -1)
    assert plog.list_offset(T0) == (4, T0 + 4)  # records below the log start are gone


def test_no_timestamps_at_all_answers_the_first_segment(plog):
    plog.append_records([(b"k", b"v", (), -1), (b"k", b"w", (), -1)])
    assert plog.list_offset(L.MAX_TIMESTAMP) == (0, -1)
