"""Group configs and dynamic broker configs on a real pk-server-start: they take effect at
runtime (a group's heartbeat interval and session timeout in KIP-848's coordinator, the
cluster-wide message.max.bytes on produce) and are still there after a restart. Kafka's own
output for the same commands is compared in test_oracle_configs.py."""

from __future__ import annotations

import subprocess
import uuid

import pytest
from confluent_kafka import KafkaException, Producer
from conftest import BrokerProcess, tool_path
from test_server_groups_protocol import Conn
from waits import wait_for

from pk.engine.engine import Engine
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

TOPIC = "dyn"
BOUNDS = {"group.consumer.min.session.timeout.ms": "1000", "group.consumer.min.heartbeat.interval.ms": "100"}


def configs(bootstrap: str, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([tool_path("pk-configs"), "--bootstrap-server", bootstrap, *args],
                          capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def produce(bootstrap: str, size: int) -> str | None:
    """One record of `size` bytes; None when it was written, else the delivery error's name."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0, "linger.ms": 0})
    producer.produce(TOPIC, b"x" * size, on_delivery=lambda err, _msg: errors.append(err))
    assert producer.flush(30) == 0
    assert len(errors) == 1
    return errors[0].name() if errors[0] is not None else None


def heartbeat(conn, group: str, member_id: str = "member-1", epoch: int = 0) -> dict:
    return conn.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, {
        "group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC], "subscribed_topic_regex": None,
        "server_assignor": None, "topic_partitions": []})


def members(conn, group: str) -> int | None:
    [g] = conn.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": [group],
                                                        "include_authorized_operations": False})["groups"]
    return len(g["members"]) if g["error_code"] == E.NONE else None


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("dynamic-configs") / "data")
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 1)
    broker = BrokerProcess(data_dir, BOUNDS).start()
    yield broker
    broker.stop()


def test_group_configs_set_heartbeat_interval_and_session_timeout(server):
    group, other = f"gcfg-{uuid.uuid4().hex[:6]}", f"gdef-{uuid.uuid4().hex[:6]}"
    rc, out, err = configs(server.bootstrap, "--alter", "--group", group, "--add-config",
                           "consumer.heartbeat.interval.ms=300,consumer.session.timeout.ms=1500")
    assert (rc, err) == (0, ""), err
    # the group's bounds are the broker's: below group.consumer.min.session.timeout.ms is refused
    rc, _, err = configs(server.bootstrap, "--alter", "--group", group, "--add-config", "consumer.session.timeout.ms=500")
    assert rc == 1 and err.splitlines()[1].endswith(
        "InvalidConfigurationException: consumer.session.timeout.ms must be in the range 1000 to 60000 inclusive.")
    conn = Conn(server.bootstrap)
    try:
        joined = heartbeat(conn, group)
        assert (joined["error_code"], joined["heartbeat_interval_ms"]) == (E.NONE, 300)
        # the broker's group.consumer.heartbeat.interval.ms (the suite's: kafka_oracle.GROUP_HEARTBEATS)
        assert heartbeat(conn, other)["heartbeat_interval_ms"] == int(server.overrides["group.consumer.heartbeat.interval.ms"])
        assert members(conn, group) == 1
        # no more heartbeats: the group's 1.5 s session ends and the member is fenced
        wait_for(lambda: members(conn, group) == 0, timeout=20, what="the member fenced after its group's session")
        assert members(conn, other) == 1  # the broker's 45 s session still holds the other
    finally:
        conn.close()


def test_dynamic_message_max_bytes_applies_at_once(server):
    assert produce(server.bootstrap, 5000) is None
    rc, out, err = configs(server.bootstrap, "--alter", "--entity-type", "brokers", "--entity-default",
                           "--add-config", "message.max.bytes=2000")
    assert (rc, out, err) == (0, "Completed updating default config for brokers in the cluster.\n", "")
    try:
        assert produce(server.bootstrap, 5000) == "MSG_SIZE_TOO_LARGE"
        assert produce(server.bootstrap, 500) is None
        rc, out, _ = configs(server.bootstrap, "--describe", "--all", "--topic", TOPIC)
        # the dynamic default first, then the sample server.properties' own setting
        assert "  max.message.bytes=2000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2000, " \
               "STATIC_BROKER_CONFIG:message.max.bytes=1048588, DEFAULT_CONFIG:message.max.bytes=1048588}" \
            in out.splitlines()
    finally:
        rc, _, err = configs(server.bootstrap, "--alter", "--broker-defaults", "--delete-config", "message.max.bytes")
        assert rc == 0, err
    assert produce(server.bootstrap, 5000) is None


def test_configs_survive_a_restart(tmp_path):
    data_dir = str(tmp_path / "data")
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 1)
    broker = BrokerProcess(data_dir).start()
    alters = [["--group", "kept", "--add-config", "consumer.session.timeout.ms=50000"],
              ["--broker", "0", "--add-config", "log.cleaner.threads=2,message.max.bytes=3000"],
              ["--broker-defaults", "--add-config", "log.retention.ms=600000"]]
    describes = [["--group", "kept"], ["--entity-type", "brokers"], ["--topic", TOPIC, "--all"]]
    try:
        for args in alters:
            assert configs(broker.bootstrap, "--alter", *args)[0] == 0
        before = [configs(broker.bootstrap, "--describe", *args) for args in describes]
    finally:
        broker.stop()
    broker = BrokerProcess(data_dir, port=broker.port).start()
    try:
        after = [configs(broker.bootstrap, "--describe", *args) for args in describes]
        assert produce(broker.bootstrap, 5000) == "MSG_SIZE_TOO_LARGE"  # message.max.bytes=3000 still applies
    finally:
        broker.stop()
    assert after == before
    assert "  consumer.session.timeout.ms=50000 sensitive=false" in before[0][1]
    assert "  log.retention.ms=600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=600000}" \
        in before[1][1].splitlines()
    assert any(line.startswith("  retention.ms=600000 ") for line in before[2][1].splitlines())


def test_librdkafka_alters_and_describes_broker_configs(server):
    """What librdkafka's own admin test (0081) does with a broker: AlterConfigs and
    IncrementalAlterConfigs of broker 0 (validate-only, then for real), then describe."""
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                       ResourceType)

    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    name = "sasl.kerberos.min.time.before.relogin"
    resource = ConfigResource(ResourceType.BROKER, "0", set_config={name: "58000"})
    with pytest.warns(DeprecationWarning):
        admin.alter_configs([resource], validate_only=True)[resource].result(timeout=30)
    described = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")])
    assert list(described.values())[0].result(timeout=30)[name].value == "60000"  # validate_only kept nothing
    with pytest.warns(DeprecationWarning):
        admin.alter_configs([resource])[resource].result(timeout=30)
    incremental = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
        ConfigEntry("log.cleaner.threads", "2", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([incremental])[incremental].result(timeout=30)
    entries = list(admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values())[0].result(timeout=30)
    try:
        assert (entries[name].value, entries[name].source) == ("58000", 2)  # DYNAMIC_BROKER_CONFIG
        assert (entries["log.cleaner.threads"].value, entries["log.cleaner.threads"].is_read_only) == ("2", False)
        refused = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
            ConfigEntry("broker.id", "3", incremental_operation=AlterConfigOpType.SET)])
        with pytest.raises(KafkaException, match=r"Cannot update these configs dynamically: \[broker.id\]"):
            admin.incremental_alter_configs([refused])[refused].result(timeout=30)
    finally:
        cleanup = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
            ConfigEntry(n, None, incremental_operation=AlterConfigOpType.DELETE) for n in (name, "log.cleaner.threads")])
        admin.incremental_alter_configs([cleanup])[cleanup].result(timeout=30)
