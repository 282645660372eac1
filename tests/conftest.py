"""Shared fixtures: run the installed pk tools as a user would, on a throwaway data dir."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)


def tool_path(name: str) -> str:
    """The installed console script next to this interpreter (the venv's bin/)."""
    path = os.path.join(BIN_DIR, name)
    if not os.path.exists(path):
        pytest.fail(f"{name} is not installed next to {sys.executable}: run scripts/test")
    return path


class Runner:
    def __init__(self, data_dir: str):
        self.data_dir = data_dir
        self.env = {**os.environ, "PK_DATA_DIR": data_dir}

    def __call__(self, tool: str, *args: str, input: str | bytes | None = None,
                 timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run([tool_path(tool), *args], input=data, capture_output=True,
                              timeout=timeout, env={**self.env, **(env or {})})
        proc.out = proc.stdout.decode(errors="replace")
        proc.err = proc.stderr.decode(errors="replace")
        return proc


@pytest.fixture
def data_dir(tmp_path) -> str:
    return str(tmp_path / "data")


@pytest.fixture
def pk(data_dir) -> Runner:
    """pk("pk-topics", "--list") runs the installed tool with PK_DATA_DIR set."""
    return Runner(data_dir)
