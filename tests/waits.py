"""`wait_for`: poll a condition until it holds, for the tests and bench/ (no pytest import, so
bench/replication.py can use it too)."""

from __future__ import annotations

import time


def wait_for(predicate, timeout: float = 30.0, what: str = "condition", interval: float = 0.05):
    """predicate()'s first true value; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
