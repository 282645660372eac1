"""Dynamic broker configs in ZooKeeper mode on two pk-server-start brokers (engine/broker/
zk_broker_configs.py; docs/replication.md): a cluster-wide default set through broker 0 is
described and applied by broker 1, a per-broker config reaches ZooKeeper only through its own
broker (Kafka 2.8's ZkAdminManager refuses another broker's id), a restarted broker reads its
znodes back, and Kafka 2.8's `kafka-configs --zookeeper` and pk write the same znode bytes and
each sees the other's writes."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from confluent_kafka import Producer
from conftest import ProtocolClient, tool_path
from replication_cluster import ReplicationCluster, wait_for

from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

pytest.importorskip("kazoo.client")

BROKER = 4  # ConfigResource.Type.BROKER
SET, DELETE = 0, 1
DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 2, 3


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    with ReplicationCluster(zookeeper, tmp_path_factory.mktemp("zk-broker-configs"), 2) as c:
        c.start_all()
        yield c


def alter(cluster, via: int, name: str, configs: dict[str, str | None]) -> tuple[int, str | None]:
    """IncrementalAlterConfigs of broker resource `name` sent to broker `via`: SET, or DELETE for None."""
    with ProtocolClient(cluster.brokers[via].bootstrap) as c:
        answer = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": BROKER, "resource_name": name, "configs": [
                {"name": k, "config_operation": SET if v is not None else DELETE, "value": v}
                for k, v in configs.items()]}]})
    (r,) = answer["responses"]
    return r["error_code"], r["error_message"]


def replace(cluster, via: int, name: str, configs: dict[str, str]) -> tuple[int, str | None]:
    """AlterConfigs (the whole set) of broker resource `name` sent to broker `via`."""
    with ProtocolClient(cluster.brokers[via].bootstrap) as c:
        answer = c.call(ApiKey.ALTER_CONFIGS, 2, {"validate_only": False, "resources": [
            {"resource_type": BROKER, "resource_name": name, "configs": [
                {"name": k, "value": v} for k, v in configs.items()]}]})
    (r,) = answer["responses"]
    return r["error_code"], r["error_message"]


def described(cluster, broker_id: int, name: str) -> tuple[str | None, int] | None:
    """(value, source) of config `name` as broker `broker_id` describes itself ((None, None) when
    not listed); None while the broker does not answer."""
    try:
        with ProtocolClient(cluster.brokers[broker_id].bootstrap) as c:
            answer = c.call(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
                {"resource_type": BROKER, "resource_name": str(broker_id), "configuration_keys": [name]}],
                "include_synonyms": False, "include_documentation": False})
    except OSError:
        return None
    (r,) = answer["results"]
    if r["error_code"] != E.NONE:
        return None
    if not r["configs"]:  # (a config of DynamicConfig.Broker's that is not set)
        return None, None
    (c,) = r["configs"]
    return c["value"], c["config_source"]


def notifications(cluster) -> list[dict]:
    children = sorted(cluster.zk.get_children("/config/changes"))
    return [json.loads(cluster.get(f"/config/changes/{c}")) for c in children]


def produce(cluster, topic: str, size: int) -> str | None:
    """One record of `size` bytes; None when written, else the delivery error's name."""
    errors = []
    p = Producer({"bootstrap.servers": cluster.bootstrap, "retries": 0, "linger.ms": 0})
    p.produce(topic, b"x" * size, on_delivery=lambda err, _msg: errors.append(err))
    assert p.flush(30) == 0
    assert len(errors) == 1
    return errors[0].name() if errors[0] is not None else None


def test_a_default_set_through_broker_0_applies_on_broker_1(cluster):
    proc = subprocess.run([tool_path("pk-topics"), "--bootstrap-server", cluster.brokers[0].bootstrap, "--create",
                           "--topic", "on1", "--replica-assignment", "1"], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    cluster.wait_state("on1", 0, lambda s: s["leader"] == 1)
    cluster.wait_applied("on1", 1)
    wait_for(lambda: produce(cluster, "on1", 5000) is None, what="a first record on broker 1")

    assert alter(cluster, 0, "", {"message.max.bytes": "2000"}) == (E.NONE, None)
    assert cluster.get("/config/brokers/<default>") == b'{"version":1,"config":{"message.max.bytes":"2000"}}'
    assert {"version": 2, "entity_path": "brokers/<default>"} in notifications(cluster)
    try:
        wait_for(lambda: described(cluster, 1, "message.max.bytes") == ("2000", DYNAMIC_DEFAULT_BROKER_CONFIG),
                 what="broker 1 to describe the default")
        assert produce(cluster, "on1", 5000) == "MSG_SIZE_TOO_LARGE"
        assert produce(cluster, "on1", 500) is None
    finally:
        assert alter(cluster, 0, "", {"message.max.bytes": None}) == (E.NONE, None)
    # Kafka keeps the emptied znode (setOrCreateEntityConfigs)
    assert cluster.get("/config/brokers/<default>") == b'{"version":1,"config":{}}'
    wait_for(lambda: described(cluster, 1, "message.max.bytes") not in (None, ("2000", DYNAMIC_DEFAULT_BROKER_CONFIG)),
             what="broker 1 to drop the default")
    assert produce(cluster, "on1", 5000) is None


def test_a_per_broker_config_goes_through_its_own_broker_and_survives_a_restart(cluster):
    # ZkAdminManager.getBrokerId: a broker alters only its own per-broker configs
    assert alter(cluster, 0, "1", {"log.cleaner.threads": "2"}) == (
        E.INVALID_REQUEST, "Unexpected broker id, expected 0, but received 1")
    assert cluster.get("/config/brokers/1") is None
    assert alter(cluster, 1, "1", {"log.cleaner.threads": "2"}) == (E.NONE, None)
    assert alter(cluster, 0, "", {"log.retention.ms": "3600000"}) == (E.NONE, None)
    try:
        assert cluster.get("/config/brokers/1") == b'{"version":1,"config":{"log.cleaner.threads":"2"}}'
        assert {"version": 2, "entity_path": "brokers/1"} in notifications(cluster)
        assert described(cluster, 1, "log.cleaner.threads") == ("2", DYNAMIC_BROKER_CONFIG)
        on_0 = described(cluster, 0, "log.cleaner.threads")
        assert on_0 is not None and on_0[1] not in (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG)
        wait_for(lambda: described(cluster, 1, "log.retention.ms") == ("3600000", DYNAMIC_DEFAULT_BROKER_CONFIG),
                 what="broker 1 to describe the default")

        cluster.stop(1)
        cluster.start(1)
        wait_for(lambda: described(cluster, 1, "log.cleaner.threads") == ("2", DYNAMIC_BROKER_CONFIG),
                 what="the restarted broker 1 to describe its config")
        assert described(cluster, 1, "log.retention.ms") == ("3600000", DYNAMIC_DEFAULT_BROKER_CONFIG)
        # ZooKeeper, not the data directory, keeps them
        assert not os.path.exists(os.path.join(cluster.brokers[1].data_dir, ".pk", "broker-configs.json"))
    finally:
        wait_for(lambda: alter(cluster, 1, "1", {"log.cleaner.threads": None}) == (E.NONE, None),
                 what="broker 1 to take the deletion")
        assert alter(cluster, 0, "", {"log.retention.ms": None}) == (E.NONE, None)


def zk_configs(cluster, tools, *args: str) -> list[str]:
    """Kafka 2.8's `kafka-configs --zookeeper` on the cluster's chroot: its output past the
    deprecation warning."""
    r = tools("kafka-configs", "--zookeeper", cluster.connect, "--entity-type", "brokers", *args)
    assert r.returncode == 0, r.err
    lines = r.out.splitlines()
    assert lines[:2] == ["Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.",
                         "Use --bootstrap-server instead to specify a broker to connect to."], r.out
    return lines[2:]


def test_kafka_28_kafka_configs_and_pk_share_the_znodes(cluster, kafka28_tools):
    rates = "leader.replication.throttled.rate=5000,follower.replication.throttled.rate=7000"
    # Kafka 2.8's tool may change the replication throttles of a running broker through ZooKeeper
    assert zk_configs(cluster, kafka28_tools, "--entity-name", "1", "--alter", "--add-config", rates) == [
        "Completed updating config for entity: brokers '1'."]
    wait_for(lambda: described(cluster, 1, "follower.replication.throttled.rate") == ("7000", DYNAMIC_BROKER_CONFIG),
             what="broker 1 to apply Kafka 2.8's write")
    r = kafka28_tools("kafka-configs", "--bootstrap-server", cluster.brokers[1].bootstrap, "--entity-type",
                      "brokers", "--entity-name", "1", "--describe")
    assert r.returncode == 0, r.err
    assert r.out.splitlines() == [
        "Dynamic configs for broker 1 are:",
        "  leader.replication.throttled.rate=5000 sensitive=false "
        "synonyms={DYNAMIC_BROKER_CONFIG:leader.replication.throttled.rate=5000}",
        "  follower.replication.throttled.rate=7000 sensitive=false "
        "synonyms={DYNAMIC_BROKER_CONFIG:follower.replication.throttled.rate=7000}"]

    # pk writes the same configs for broker 0: the same bytes, read alike by Kafka 2.8's tool
    assert replace(cluster, 0, "0", {"leader.replication.throttled.rate": "5000",
                                     "follower.replication.throttled.rate": "7000"}) == (E.NONE, None)
    try:
        assert cluster.get("/config/brokers/0") == cluster.get("/config/brokers/1")
        assert {"version": 2, "entity_path": "brokers/0"} in notifications(cluster)
        outs = [zk_configs(cluster, kafka28_tools, "--entity-name", b, "--describe") for b in ("0", "1")]
        assert outs[1] == [f"Configs for brokers '1' are {rates}"]
        assert outs[0] == [f"Configs for brokers '0' are {rates}"]
    finally:
        assert alter(cluster, 0, "0", {"leader.replication.throttled.rate": None,
                                       "follower.replication.throttled.rate": None}) == (E.NONE, None)
        zk_configs(cluster, kafka28_tools, "--entity-name", "1", "--alter", "--delete-config",
                   "leader.replication.throttled.rate,follower.replication.throttled.rate")
    wait_for(lambda: described(cluster, 1, "follower.replication.throttled.rate") == (None, None),
             what="broker 1 to apply Kafka 2.8's deletion")
