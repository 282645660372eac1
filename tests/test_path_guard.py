"""The engine's second line of defence: whatever name validation lets through, no path the
engine creates or removes resolves outside the data directory (fileutil.inside), symlinks
included."""

from __future__ import annotations

import os
import uuid

import pytest

from conftest import BrokerProcess, ProtocolClient
from pk.engine.engine import Engine
from pk.engine.errors import PathOutsideDataDirError
from pk.engine.fileutil import inside


def test_inside_refuses_what_resolves_elsewhere(tmp_path):
    root = tmp_path / "data"
    (root / "t-0").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "away-0")
    os.symlink(root / "t-0", root / "alias-0")
    assert inside(str(root), "t-0") == str(root / "t-0")
    assert inside(str(root), "alias-0", "x") == str(root / "alias-0" / "x")  # a link that stays inside
    assert inside(str(root), "new-0") == str(root / "new-0")  # need not exist yet
    for parts in (("..", "outside"), ("/etc",), ("away-0",), ("away-0", "00000000000000000000.log")):
        with pytest.raises(PathOutsideDataDirError):
            inside(str(root), *parts)


def _outside_with_file(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    return outside


def test_a_symlinked_topic_dir_is_neither_deleted_nor_written_through(tmp_path):
    data = tmp_path / "data"
    engine = Engine(str(data))
    engine.create_topic("t", 2)
    outside = _outside_with_file(tmp_path)
    # someone swaps a partition directory for a link to a directory of theirs
    os.rename(data / "t-1", tmp_path / "t-1.moved")
    os.symlink(outside, data / "t-1")
    with pytest.raises(PathOutsideDataDirError):
        engine.delete_topic("t")
    assert os.listdir(outside) == ["keep.txt"]
    assert engine.list_topics().count("t") == 1  # refused before anything was removed
    with pytest.raises(PathOutsideDataDirError):
        Engine(str(data)).partition("t", 1)  # nor opened for appends
    # a new topic whose partition directory is already such a link is refused, nothing written there
    os.symlink(outside, data / "u-0")
    with pytest.raises(PathOutsideDataDirError):
        engine.create_topic("u", 1)
    assert os.listdir(outside) == ["keep.txt"]
    assert "u" not in engine.list_topics()


def test_the_broker_answers_a_storage_error_for_it(tmp_path):
    data = tmp_path / "data"
    Engine(str(data)).create_topic("t", 1)
    outside = _outside_with_file(tmp_path)
    os.rename(data / "t-0", tmp_path / "t-0.moved")
    os.symlink(outside, data / "t-0")
    broker = BrokerProcess(str(data)).start()
    try:
        with ProtocolClient(broker.port) as client:

            answer = client.call(20, 6, {"topics": [{"name": "t", "topic_id": uuid.UUID(int=0)}], "timeout_ms": 5000})
            assert answer["responses"][0]["error_code"] == 56  # KAFKA_STORAGE_ERROR
        assert os.listdir(outside) == ["keep.txt"]
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
