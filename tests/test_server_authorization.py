"""pk-server-start with Kafka's authorizer: ACLs on User:ANONYMOUS (every connection's principal
until SASL/TLS), super.users, allow.everyone.if.no.acl.found, the ACL APIs, and each API's
check with real clients (confluent-kafka, kafka-python) and raw frames.

Two brokers per module: `open_broker` allows what no ACL names (allow.everyone.if.no.acl.found),
so each test DENYs on its own resources (`deny_only`: as in Kafka, once a resource has an ACL the
no-ACL default no longer applies to it, hence the ALLOW ALL beside each DENY); `closed_broker`
keeps Kafka's default (deny without an ACL), with no super user. Tests that need cluster ACLs
get a broker of their own. Every test names its own topics and groups.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient, NewTopic, ResourcePatternType,
    ResourceType,
)

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ANON = "User:ANONYMOUS"


def _start(tmp_path_factory, name: str, **overrides) -> BrokerProcess:
    d = str(tmp_path_factory.mktemp(name))
    return BrokerProcess(d, {"authorizer.class.name": STANDARD, **overrides}).start()


@pytest.fixture(scope="module")
def open_broker(tmp_path_factory):
    b = _start(tmp_path_factory, "authz-open", **{"allow.everyone.if.no.acl.found": "true"})
    yield b
    b.stop()


@pytest.fixture(scope="module")
def closed_broker(tmp_path_factory):
    b = _start(tmp_path_factory, "authz-closed")
    yield b
    b.stop()


def unique(base: str) -> str:
    return f"{base}-{uuid.uuid4().hex[:8]}"


def admin(b: BrokerProcess) -> AdminClient:
    """One AdminClient per broker, kept alive (a collected client fails its pending futures)."""
    client = getattr(b, "admin_client", None)
    if client is None:
        client = b.admin_client = AdminClient({"bootstrap.servers": b.bootstrap})
    return client


def acl(rtype, name, op, perm=AclPermissionType.DENY, pattern=ResourcePatternType.LITERAL, principal=ANON,
        host="*") -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, perm)


def deny_only(rtype, name, *ops) -> list[AclBinding]:
    """DENY `ops` on the resource to ANONYMOUS, ALLOW it everything else."""
    return [acl(rtype, name, op) for op in ops] + [acl(rtype, name, AclOperation.ALL, AclPermissionType.ALLOW)]


def create_acls(b: BrokerProcess, *bindings: AclBinding) -> None:
    for f in admin(b).create_acls(list(bindings), request_timeout=10).values():
        f.result()


def create_topic(b: BrokerProcess, name: str, partitions: int = 1) -> None:
    admin(b).create_topics([NewTopic(name, partitions)], request_timeout=10)[name].result()


# --------------------------------------------------------------------------- the ACL APIs
def test_acl_apis_create_describe_delete(open_broker):
    t = unique("acl-api")
    bindings = [acl(ResourceType.TOPIC, t, AclOperation.READ, AclPermissionType.ALLOW, principal="User:alice"),
                acl(ResourceType.TOPIC, t[:6], AclOperation.WRITE, pattern=ResourcePatternType.PREFIXED,
                    principal="User:bob", host="10.0.0.1")]
    create_acls(open_broker, *bindings)
    a = admin(open_broker)
    exact = AclBindingFilter(ResourceType.TOPIC, t, ResourcePatternType.LITERAL, None, None, AclOperation.ANY,
                             AclPermissionType.ANY)
    assert a.describe_acls(exact, request_timeout=10).result() == [bindings[0]]
    match = AclBindingFilter(ResourceType.TOPIC, t, ResourcePatternType.MATCH, None, None, AclOperation.ANY,
                             AclPermissionType.ANY)
    assert sorted(map(str, a.describe_acls(match, request_timeout=10).result())) == sorted(map(str, bindings))
    # DeleteAcls answers what each filter removed
    deleted = a.delete_acls([match], request_timeout=10)[match].result()
    assert sorted(map(str, deleted)) == sorted(map(str, bindings))
    assert a.describe_acls(match, request_timeout=10).result() == []


def test_acl_apis_raw_errors(open_broker):
    with ProtocolClient(open_broker.port) as c:
        bad = c.call(ApiKey.CREATE_ACLS, 3, {"creations": [
            {"resource_type": 4, "resource_name": "not-the-cluster", "resource_pattern_type": 3,
             "principal": "User:x", "host": "*", "operation": 7, "permission_type": 3},
            {"resource_type": 2, "resource_name": "", "resource_pattern_type": 3,
             "principal": "User:x", "host": "*", "operation": 3, "permission_type": 3},
            {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 2,
             "principal": "User:x", "host": "*", "operation": 3, "permission_type": 3},
            {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3,
             "principal": "User:x", "host": "*", "operation": 1, "permission_type": 3}]})
        assert [(r["error_code"], r["error_message"]) for r in bad["results"]] == [
            (E.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
            (E.INVALID_REQUEST, "Invalid empty resource name"),
            (E.INVALID_REQUEST, "Invalid patternType MATCH"),
            (E.INVALID_REQUEST, "Invalid operation ANY")]
        described = c.call(ApiKey.DESCRIBE_ACLS, 1, {
            "resource_type_filter": 0, "resource_name_filter": None, "pattern_type_filter": 1,
            "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1})
        assert (described["error_code"], described["error_message"]) == (E.INVALID_REQUEST, "Unknown patternFilter.")


def test_acl_apis_without_authorizer_are_security_disabled(tmp_path):
    b = BrokerProcess(str(tmp_path / "plain")).start()
    try:
        with ProtocolClient(b.port) as c:
            d = c.call(ApiKey.DESCRIBE_ACLS, 3, {
                "resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1})
            assert (d["error_code"], d["error_message"]) == (E.SECURITY_DISABLED,
                                                             "No Authorizer is configured on the broker")
            r = c.call(ApiKey.CREATE_ACLS, 3, {"creations": [
                {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3, "principal": "User:x",
                 "host": "*", "operation": 3, "permission_type": 3}]})
            assert [(x["error_code"], x["error_message"]) for x in r["results"]] == [
                (E.SECURITY_DISABLED, "No Authorizer is configured.")]
            versions = c.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
            ranges = {k["api_key"]: (k["min_version"], k["max_version"]) for k in versions["api_keys"]}
            assert ranges[29] == ranges[30] == ranges[31] == (1, 3)
    finally:
        b.stop()


def test_unknown_authorizer_class_stops_startup(tmp_path):
    b = BrokerProcess(str(tmp_path / "d"), {"authorizer.class.name": "com.example.NoSuchAuthorizer"})
    with pytest.raises(RuntimeError):
        b.start(timeout=15)
    assert ("Invalid value com.example.NoSuchAuthorizer for configuration authorizer.class.name: "
            "Class com.example.NoSuchAuthorizer could not be found.") in b.log()
    assert "Traceback" not in b.log()


# --------------------------------------------------------------------------- produce, fetch, metadata
def test_produce_and_fetch_denied_per_topic(open_broker):
    denied, allowed = unique("no-write"), unique("ok")
    for t in (denied, allowed):
        create_topic(open_broker, t)
    create_acls(open_broker, *deny_only(ResourceType.TOPIC, denied, AclOperation.WRITE))
    p = Producer({"bootstrap.servers": open_broker.bootstrap, "message.timeout.ms": 10000})
    results = {}
    for t in (denied, allowed):
        p.produce(t, b"v", on_delivery=lambda err, msg, t=t: results.__setitem__(t, err))
    p.flush(15)
    assert results[allowed] is None
    assert results[denied].code() == E.TOPIC_AUTHORIZATION_FAILED
    # READ denied: Fetch answers TOPIC_AUTHORIZATION_FAILED (raw: what a v12 fetch sees)
    create_acls(open_broker, *deny_only(ResourceType.TOPIC, allowed, AclOperation.READ))
    with ProtocolClient(open_broker.port) as c:
        r = c.call(ApiKey.FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [
                {"topic": allowed, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                   "last_fetched_epoch": -1, "log_start_offset": -1,
                                                   "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
        assert r["responses"][0]["partitions"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        lo = c.call(ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": denied, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
        assert lo["topics"][0]["partitions"][0]["error_code"] == E.NONE  # WRITE denied, DESCRIBE not


def test_metadata_hides_topics_the_principal_may_not_describe(open_broker):
    hidden, shown = unique("hidden"), unique("shown")
    for t in (hidden, shown):
        create_topic(open_broker, t)
    create_acls(open_broker, acl(ResourceType.TOPIC, hidden, AclOperation.DESCRIBE))
    names = set(admin(open_broker).list_topics(timeout=10).topics)
    assert shown in names and hidden not in names
    with ProtocolClient(open_broker.port) as c:
        r = c.call(ApiKey.METADATA, 12, {"topics": [{"topic_id": uuid.UUID(int=0), "name": hidden},
                                                    {"topic_id": uuid.UUID(int=0), "name": shown}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": True})
        by_name = {t["name"]: t for t in r["topics"]}
        assert by_name[hidden]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        assert by_name[hidden]["partitions"] == [] and by_name[hidden]["topic_id"] == uuid.UUID(int=0)
        assert by_name[shown]["error_code"] == E.NONE
        # allowed by the no-ACL default: every topic operation (READ..ALTER_CONFIGS)
        assert by_name[shown]["topic_authorized_operations"] == 3576


@pytest.fixture
def own_broker(tmp_path):
    """A broker of the test's own, allowing what no ACL names, for cluster ACLs."""
    b = BrokerProcess(str(tmp_path / "own"), {"authorizer.class.name": STANDARD,
                                              "allow.everyone.if.no.acl.found": "true"}).start()
    yield b
    b.stop()


def test_metadata_auto_create_needs_create(own_broker):
    """Auto-creation needs CREATE on the cluster, else on the topic."""
    t = unique("auto")
    create_acls(own_broker, *deny_only(ResourceType.BROKER, "kafka-cluster", AclOperation.CREATE),
                *deny_only(ResourceType.TOPIC, t, AclOperation.CREATE))
    with ProtocolClient(own_broker.port) as c:
        r = c.call(ApiKey.METADATA, 9, {"topics": [{"name": t}], "allow_auto_topic_creation": True,
                                        "include_topic_authorized_operations": False})
    assert [(x["name"], x["error_code"]) for x in r["topics"]] == [(t, E.TOPIC_AUTHORIZATION_FAILED)]
    assert t not in admin(own_broker).list_topics(timeout=10).topics


def test_kafka_python_sees_topic_authorization_failed(open_broker):
    from kafka import KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    t = unique("kp")
    create_topic(open_broker, t)
    create_acls(open_broker, *deny_only(ResourceType.TOPIC, t, AclOperation.WRITE))
    producer = KafkaProducer(bootstrap_servers=open_broker.bootstrap, max_block_ms=10000, retries=0)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(t, b"v").get(timeout=15)
    finally:
        producer.close(timeout=5)


# --------------------------------------------------------------------------- admin APIs
def test_admin_apis_refused_per_resource(open_broker):
    t = unique("adm")
    create_topic(open_broker, t)
    create_acls(open_broker, *deny_only(ResourceType.TOPIC, t, AclOperation.DELETE, AclOperation.ALTER,
                                        AclOperation.ALTER_CONFIGS))
    with ProtocolClient(open_broker.port) as c:
        cp = c.call(ApiKey.CREATE_PARTITIONS, 3, {"topics": [{"name": t, "count": 3, "assignments": None}],
                                                  "timeout_ms": 1000, "validate_only": False})
        assert cp["results"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        ia = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
            {"resource_type": 2, "resource_name": t, "configs": [
                {"name": "retention.ms", "config_operation": 0, "value": "1000"}]}], "validate_only": False})
        assert ia["responses"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        # a DENY ALTER_CONFIGS does not deny DESCRIBE_CONFIGS (only an ALLOW implies it)
        dc = c.call(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 2, "resource_name": t, "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False})
        assert dc["results"][0]["error_code"] == E.NONE
        dr = c.call(ApiKey.DELETE_RECORDS, 2, {"topics": [
            {"name": t, "partitions": [{"partition_index": 0, "offset": 0}]}], "timeout_ms": 1000})
        assert dr["topics"][0]["partitions"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
    assert t in admin(open_broker).list_topics(timeout=10).topics  # still there


def test_create_topics_needs_cluster_or_topic_create(closed_broker, tmp_path):
    """Default deny: nothing without an ACL; a topic CREATE ALLOW lets exactly that topic be
    created; cluster DESCRIBE gives the authorized operations."""
    t, other = unique("mine"), unique("theirs")
    pk_acls(closed_broker.data_dir, "--add", "--allow-principal", ANON, "--operation", "Create", "--topic", t)
    pk_acls(closed_broker.data_dir, "--add", "--allow-principal", ANON, "--operation", "Describe", "--cluster")
    wait_for_acl(closed_broker, t)
    with ProtocolClient(closed_broker.port) as c:
        r = c.call(ApiKey.CREATE_TOPICS, 7, {"topics": [
            {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
            for n in (t, other)], "timeout_ms": 5000, "validate_only": False})
        assert [(x["name"], x["error_code"]) for x in r["topics"]] == [(t, E.NONE),
                                                                       (other, E.TOPIC_AUTHORIZATION_FAILED)]
        dc = c.call(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True, "endpoint_type": 1})
        assert dc["cluster_authorized_operations"] == 1 << 8  # DESCRIBE only
        # no ACL on the topic for DESCRIBE: all-topics Metadata shows nothing; ALTER the cluster is denied
        md = c.call(ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        assert md["topics"] == []
        cr = c.call(ApiKey.CREATE_ACLS, 3, {"creations": [
            {"resource_type": 2, "resource_name": t, "resource_pattern_type": 3, "principal": ANON,
             "host": "*", "operation": 3, "permission_type": 3}]})
        assert cr["results"][0]["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        # neither cluster nor topic DELETE: the topic stays
        d = c.call(ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": t, "topic_id": uuid.UUID(int=0)}],
                                             "timeout_ms": 1000})
        assert d["responses"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED


# --------------------------------------------------------------------------- groups and transactions
def test_consumer_group_denied(open_broker):
    t, g = unique("gtopic"), unique("group")
    create_topic(open_broker, t)
    create_acls(open_broker, *deny_only(ResourceType.GROUP, g, AclOperation.READ))
    consumer = Consumer({"bootstrap.servers": open_broker.bootstrap, "group.id": g, "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000})
    try:
        consumer.subscribe([t])
        deadline = time.monotonic() + 15
        error = None
        while time.monotonic() < deadline and error is None:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error():
                error = msg.error()
        assert error is not None and error.code() == E.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()
    with ProtocolClient(open_broker.port) as c:
        oc = c.call(ApiKey.OFFSET_COMMIT, 8, {"group_id": g, "generation_id_or_member_epoch": -1, "member_id": "",
                                              "group_instance_id": None, "topics": [
                                                  {"name": t, "partitions": [{"partition_index": 0,
                                                                              "committed_offset": 1,
                                                                              "committed_leader_epoch": -1,
                                                                              "committed_metadata": None}]}]})
        assert oc["topics"][0]["partitions"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED
        fc = c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [g]})
        assert fc["coordinators"][0]["error_code"] == E.NONE  # READ denied, DESCRIBE not
        dg = c.call(ApiKey.DELETE_GROUPS, 2, {"groups_names": [g]})
        assert dg["results"][0]["error_code"] == E.GROUP_ID_NOT_FOUND  # DELETE is not denied


def test_offset_commit_topic_read_denied_and_groups_listing(own_broker):
    t, g, hidden = unique("ctopic"), unique("cgroup"), unique("hidden-group")
    create_topic(own_broker, t)
    with ProtocolClient(own_broker.port) as c:
        for group in (g, hidden):
            c.call(ApiKey.OFFSET_COMMIT, 2, {"group_id": group, "generation_id_or_member_epoch": -1,
                                             "member_id": "", "retention_time_ms": -1, "topics": [
                {"name": t, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                            "committed_metadata": None}]}]})
        create_acls(own_broker, *deny_only(ResourceType.TOPIC, t, AclOperation.READ),
                    *deny_only(ResourceType.GROUP, hidden, AclOperation.DESCRIBE),
                    *deny_only(ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE))
        oc = c.call(ApiKey.OFFSET_COMMIT, 8, {"group_id": g, "generation_id_or_member_epoch": -1, "member_id": "",
                                              "group_instance_id": None, "topics": [
                                                  {"name": t, "partitions": [{"partition_index": 0,
                                                                              "committed_offset": 1,
                                                                              "committed_leader_epoch": -1,
                                                                              "committed_metadata": None}]}]})
        assert oc["topics"][0]["partitions"][0]["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
        lg = c.call(ApiKey.LIST_GROUPS, 4, {"states_filter": []})
        listed = {x["group_id"] for x in lg["groups"]}
        assert hidden not in listed  # no cluster DESCRIBE: only the groups it may DESCRIBE
        dg = c.call(ApiKey.DESCRIBE_GROUPS, 5, {"groups": [hidden], "include_authorized_operations": True})
        assert dg["groups"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED


def test_transactional_id_write_denied(open_broker):
    tid = unique("txn")
    create_acls(open_broker, *deny_only(ResourceType.TRANSACTIONAL_ID, tid, AclOperation.WRITE))
    p = Producer({"bootstrap.servers": open_broker.bootstrap, "transactional.id": tid})
    with pytest.raises(KafkaException) as info:
        p.init_transactions(15)
    assert info.value.args[0].code() == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    with ProtocolClient(open_broker.port) as c:
        ip = c.call(ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                 "producer_id": -1, "producer_epoch": -1})
        assert ip["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        et = c.call(ApiKey.END_TXN, 3, {"transactional_id": tid, "producer_id": 1, "producer_epoch": 0,
                                        "committed": True})
        assert et["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_idempotent_producer_needs_idempotent_write_or_a_topic_write(closed_broker):
    """Default deny, no ACL: an idempotent producer's InitProducerId is refused; WRITE on any
    topic (here a prefix) is enough (authorizeByResourceType)."""
    with ProtocolClient(closed_broker.port) as c:
        body = {"transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}
        assert c.call(ApiKey.INIT_PRODUCER_ID, 4, body)["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        pk_acls(closed_broker.data_dir, "--add", "--allow-principal", ANON, "--operation", "Write",
                "--topic", "idem-", "--resource-pattern-type", "prefixed")
        wait_for_acl(closed_broker, "idem-")
        assert c.call(ApiKey.INIT_PRODUCER_ID, 4, body)["error_code"] == E.NONE


# --------------------------------------------------------------------------- super users, persistence
def test_super_user_and_acls_survive_a_restart(tmp_path):
    """super.users=User:ANONYMOUS passes every check whatever the ACLs; the ACLs are on disk and
    are enforced again after a restart (without the super user)."""
    d = str(tmp_path / "data")
    t = unique("su")
    b = BrokerProcess(d, {"authorizer.class.name": STANDARD, "super.users": "User:admin;" + ANON,
                          "allow.everyone.if.no.acl.found": "true"}).start()
    try:
        create_topic(b, t)
        create_acls(b, acl(ResourceType.TOPIC, t, AclOperation.ALL))
        assert t in admin(b).list_topics(timeout=10).topics  # a super user is not denied
    finally:
        b.stop()
    b = BrokerProcess(d, {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                          "allow.everyone.if.no.acl.found": "true"}, port=b.port).start()
    try:
        assert t not in admin(b).list_topics(timeout=10).topics
        found = admin(b).describe_acls(AclBindingFilter(ResourceType.TOPIC, t, ResourcePatternType.ANY, None, None,
                                                        AclOperation.ANY, AclPermissionType.ANY),
                                       request_timeout=10).result()
        assert found == [acl(ResourceType.TOPIC, t, AclOperation.ALL)]
    finally:
        b.stop()
    assert os.path.exists(os.path.join(d, ".pk", "acls.json"))


# --------------------------------------------------------------------------- helpers
def pk_acls(data_dir: str, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([tool_path("pk-acls"), "--data-dir", data_dir, *args], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r


def wait_for_acl(b: BrokerProcess, name: str, timeout: float = 10) -> None:
    """The broker picks up ACLs pk-acls wrote beside it at its next tick (every second)."""
    with ProtocolClient(b.port) as c:
        deadline = time.monotonic() + timeout
        while True:
            # DescribeAcls needs cluster DESCRIBE; a refusal counts as "not yet" only if ACLs exist
            r = c.call(ApiKey.DESCRIBE_ACLS, 3, {
                "resource_type_filter": 1, "resource_name_filter": name, "pattern_type_filter": 1,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1})
            if r["error_code"] == E.NONE and r["resources"]:
                return
            if r["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED:
                time.sleep(1.1)  # cannot look: give the broker one tick
                return
            assert time.monotonic() < deadline, r
            time.sleep(0.1)
