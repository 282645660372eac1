"""The bad names and numbers of test_server_validation.py, sent to a real Kafka 4.4 broker:
its answers are the EXPECTED that pk-server-start is held to."""

from __future__ import annotations

import kafka_oracle
from test_server_validation import EXPECTED, answers, prepare


def test_kafka_answers_bad_names_and_numbers_as_recorded(kafka):
    prepare(kafka.bootstrap).close()
    kafka_oracle.wait_for_leaders(kafka.bootstrap, {"vt-b": 1})
    got = answers(kafka.bootstrap)
    assert {k: v for k, v in got.items() if v != EXPECTED[k]} == {}
