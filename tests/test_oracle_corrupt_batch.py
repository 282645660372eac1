"""Kafka 4.4's own console consumer reading a partition with a corrupt middle batch from
pk-server-start: it gets the records before the batch, then an error; the broker stays up."""

from __future__ import annotations

from conftest import BrokerProcess
from test_corrupt_batch import corrupt_dir  # noqa: F401  (the fixture)


def test_kafkas_console_consumer_gets_the_records_before_it(corrupt_dir, kafka_tools):  # noqa: F811
    broker = BrokerProcess(corrupt_dir).start()
    try:
        got = kafka_tools("kafka-console-consumer", "--bootstrap-server", broker.bootstrap, "--topic", "t",
                          # the corrupt batch ends the run; the timeout only bounds a hang (a
                          # loaded machine took over 5 s to join the group and fetch)
                          "--from-beginning", "--timeout-ms", "60000")
        assert got.out == "a1\nb1\n"
        assert "Processed a total of 2 messages" in got.err
        # served as stored, as a Kafka broker does: the consumer names the batch in its own words
        assert ("Caused by: org.apache.kafka.common.KafkaException: Record batch for partition t-0 at offset 2 "
                "is invalid, cause: Record is corrupt (stored crc = ") in got.err
        assert broker.proc.poll() is None
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
