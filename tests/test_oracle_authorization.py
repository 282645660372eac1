"""tests/authz_table.py's rows on the real Kafka 4.4 (the session's `kafka_secure`), with the
expected answers test_authorization_table.py holds pk to: each row passing in both modules is
pk refusing (and allowing) as Kafka does. Each row makes its own SCRAM user, so the ACLs other
oracle tests grant on `kafka_secure` (to alice, to User:*-less principals) do not reach it."""

from __future__ import annotations

import pytest

import authz_table as T


@pytest.fixture(scope="module")
def target(kafka_secure):
    return T.Target(kafka_secure)


@pytest.mark.parametrize("name", list(T.ROWS))
def test_row_on_kafka(target, name):
    fn, expected = T.ROWS[name]
    assert fn(target) == expected
