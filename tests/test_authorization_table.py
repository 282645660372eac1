"""docs/authorization.md's table, row by row, on pk-server-start: one module-scoped broker secured
as the session's Kafka 4.4 (`kafka_secure`) is, each row a fresh SCRAM user with only the ACLs
it grants (tests/authz_table.py). test_oracle_authorization.py runs the same rows, with the
same expected answers, on Kafka 4.4."""

from __future__ import annotations

import os

import pytest

import authz_table as T
import security_setup as S
from conftest import BrokerProcess, free_port


@pytest.fixture(scope="module")
def target(tmp_path_factory, tls_certs):
    """pk-server-start with kafka_secure's authorizer, super users, token secret and listeners."""
    data_dir = str(tmp_path_factory.mktemp("authz-table") / "data")
    os.makedirs(data_dir)
    broker = S.secured_like_kafka_secure(BrokerProcess(data_dir), free_port(), tls_certs)
    broker.start()
    try:
        yield T.Target(broker)
    finally:
        broker.stop()


@pytest.mark.parametrize("name", list(T.ROWS))
def test_row(target, name):
    fn, expected = T.ROWS[name]
    assert fn(target) == expected
