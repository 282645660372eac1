"""The authorization table of docs/authorization.md as tests: one row per API, each a function
that sends raw requests (conftest.ProtocolClient) as a fresh SCRAM user with only the ACLs the
row grants, and returns what the denial (and, where cheap, the allowed case) answered.

The rows run against any broker secured as `kafka_secure` is (tests/conftest.py): a PLAINTEXT
listener whose ANONYMOUS is a super user (set-up: users, ACLs, topics) and a SASL_SSL listener
(the restricted users). test_authorization_table.py runs them on pk-server-start and
test_oracle_authorization.py on Kafka 4.4 itself, against the same expected answers: a row
that passes on both is pk answering as Kafka does.

Every row makes its own user, topics, groups and transactional ids, so rows share a broker
without seeing each other's ACLs.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
import uuid

import scramp

import security_setup as S
from conftest import ProtocolClient
from pk.engine import acls as A
from pk.engine import records
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E
from waits import wait_for

INT32_MIN = -(1 << 31)
ZERO = uuid.UUID(int=0)
PASSWORD = "authz-secret"
SCRAM_ITERATIONS = 4096  # Kafka's minimum


class Target:
    """A secured broker: `bootstrap` (PLAINTEXT, super user), `sasl_ssl`, `certs`."""

    def __init__(self, broker):
        self.broker = broker

    # ------------------------------------------------------------------ set-up as the super user
    def su(self) -> ProtocolClient:
        return ProtocolClient(self.broker.bootstrap)

    def user(self) -> "User":
        """A fresh SCRAM-SHA-256 user (no ACL names it), once it can log in."""
        name = f"authz-{uuid.uuid4().hex[:10]}"
        salt = os.urandom(16)
        salted = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), salt, SCRAM_ITERATIONS)
        with self.su() as c:
            r = c.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [], "upsertions": [
                {"name": name, "mechanism": 1, "iterations": SCRAM_ITERATIONS, "salt": salt,
                 "salted_password": salted}]})
        assert [x["error_code"] for x in r["results"]] == [E.NONE], r
        user = User(self, name)
        wait_for(user.can_login, 120, f"{name} to log in")  # (Kafka: once the credential is published)
        return user

    def grant(self, user: "User", *grants) -> None:
        """ALLOW the user each (resource type, name, operation[, pattern type]); returns once the
        broker's authorizer has them (DescribeAcls reads the authorizer's own copy)."""
        creations = [{"resource_type": g[0], "resource_name": g[1],
                      "resource_pattern_type": g[3] if len(g) > 3 else A.LITERAL, "principal": user.principal,
                      "host": "*", "operation": g[2], "permission_type": A.ALLOW} for g in grants]
        with self.su() as c:
            r = c.call(ApiKey.CREATE_ACLS, 3, {"creations": creations})
            assert all(x["error_code"] == E.NONE for x in r["results"]), r

            def present():
                d = c.call(ApiKey.DESCRIBE_ACLS, 3, {
                    "resource_type_filter": A.ANY, "resource_name_filter": None, "pattern_type_filter": A.ANY,
                    "principal_filter": user.principal, "host_filter": None, "operation": A.ANY,
                    "permission_type": A.ANY})
                return d["error_code"] == E.NONE and sum(len(x["acls"]) for x in d["resources"]) >= len(grants)
            wait_for(present, 120, f"the ACLs of {user.principal}")

    def topic(self, base: str = "t", partitions: int = 1, name: str | None = None) -> str:
        """A new topic, once its partitions have a leader; returns its name."""
        name = name or unique(base)
        with self.su() as c:
            r = c.call(ApiKey.CREATE_TOPICS, 7, {"topics": [
                {"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                 "configs": []}], "timeout_ms": 30000, "validate_only": False})
            assert r["topics"][0]["error_code"] == E.NONE, r
            wait_for(lambda: self._ready(c, name), 120, f"topic {name}")
        return name

    @staticmethod
    def _ready(c: ProtocolClient, name: str):
        md = c.call(ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
        t = md["topics"][0]
        if t["error_code"] or not t["partitions"] or any(p["leader_id"] < 0 for p in t["partitions"]):
            return None
        return t

    def topic_id(self, name: str) -> uuid.UUID:
        with self.su() as c:
            return wait_for(lambda: self._ready(c, name), 120, f"topic {name}")["topic_id"]

    def commit(self, group: str, topic: str) -> None:
        """An offset for `group` (a simple-consumer commit makes the group exist, Empty)."""
        self.coordinator(group)
        with self.su() as c:
            def done():
                r = c.call(ApiKey.OFFSET_COMMIT, 8, {
                    "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                    "group_instance_id": None, "topics": [{"name": topic, "partitions": [
                        {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
                         "committed_metadata": None}]}]})
                return r["topics"][0]["partitions"][0]["error_code"] == E.NONE  # else: coordinator loading
            wait_for(done, 120, f"an offset commit for {group}")

    def coordinator(self, group: str) -> None:
        """Returns once the group has a coordinator: Kafka creates its offsets topic on the first
        FindCoordinator, and until then answers a heartbeat NOT_COORDINATOR, as clients expect."""
        with self.su() as c:
            wait_for(lambda: c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})[
                "coordinators"][0]["error_code"] == E.NONE, 60, f"a coordinator for {group}", interval=0.2)

    def transaction(self, tid: str) -> None:
        """A transactional id the coordinator knows (InitProducerId as the super user)."""
        with self.su() as c:
            def done():  # FindCoordinator first: Kafka creates its transaction log on that request
                found = c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [tid]})
                if found["coordinators"][0]["error_code"] != E.NONE:
                    return False
                r = c.call(ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                        "producer_id": -1, "producer_epoch": -1})
                return r["error_code"] == E.NONE  # else COORDINATOR_NOT_AVAILABLE/LOAD_IN_PROGRESS: not yet
            wait_for(done, 120, f"InitProducerId for {tid}", interval=0.2)


class User:
    def __init__(self, target: Target, name: str):
        self.target, self.name = target, name
        self.principal = f"User:{name}"

    def _login(self) -> tuple[ProtocolClient, int]:
        client = S.wrap_tls(ProtocolClient(self.target.broker.sasl_ssl), self.target.broker.certs)
        assert client.call(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == E.NONE
        scram = scramp.ScramClient(["SCRAM-SHA-256"], self.name, PASSWORD)
        first = client.call(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": scram.get_client_first().encode()})
        if first["error_code"]:
            return client, first["error_code"]
        scram.set_server_first(first["auth_bytes"].decode())
        final = client.call(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": scram.get_client_final().encode()})
        return client, final["error_code"]

    def can_login(self) -> bool:
        client, code = self._login()
        client.close()
        return code == E.NONE

    def client(self) -> ProtocolClient:
        client, code = self._login()
        assert code == E.NONE, code
        client.user = self.name
        return client


def unique(base: str) -> str:
    return f"authz-{base}-{uuid.uuid4().hex[:8]}"


def batch() -> bytes:
    return records.encode_batch([(None, b"v", (), int(time.time() * 1000))])


# ====================================================================== the rows
ROWS: dict[str, tuple] = {}  # row id -> (function, expected answer)


def row(expected):
    def register(fn):
        ROWS[fn.__name__.removeprefix("row_")] = (fn, expected)
        return fn
    return register


RETRIABLE = (E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR)


def settled(call, what: str = "a coordinator"):
    """call()'s error code once it is not a retriable coordinator error (Kafka's internal topics
    may still be coming up)."""
    box = []

    def done():
        box[:] = [call()]
        return box[0] not in RETRIABLE
    wait_for(done, 120, what, interval=0.2)  # (a state, not a speed: a loaded machine is slow to load 50 partitions)
    return box[0]


def codes(items, key="error_code") -> tuple:
    return tuple(x[key] for x in items)


def _pcodes(topics, key="partitions") -> tuple:
    return tuple(p["error_code"] for t in topics for p in t[key])


# ---------------------------------------------------------------------- data
@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_produce(t: Target):
    """Produce: topic WRITE per topic."""
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.WRITE))
    with u.client() as c:
        r = c.call(ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 10000, "topic_data": [
            {"name": n, "partition_data": [{"index": 0, "records": batch()}]} for n in (denied, allowed)]})
    by_name = {x["name"]: x["partition_responses"][0]["error_code"] for x in r["responses"]}
    return by_name[denied], by_name[allowed]


@row(((E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,), (E.NONE,)))
def row_produce_transactional(t: Target):
    """Transactional records need WRITE on the transactional id (every partition refused); a
    non-transactional batch beside an id is not checked."""
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.WRITE))

    def produce(c, data):
        r = c.call(ApiKey.PRODUCE, 9, {"transactional_id": unique("tx"), "acks": -1, "timeout_ms": 10000,
                                       "topic_data": [{"name": topic, "partition_data": [
                                           {"index": 0, "records": data}]}]})
        return _pcodes(r["responses"], "partition_responses")
    txn = records.encode_batch([(None, b"v", (), int(time.time() * 1000))], producer_id=1, producer_epoch=0,
                               base_sequence=0, transactional=True)
    with u.client() as c:
        return produce(c, txn), produce(c, batch())


@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_fetch(t: Target):
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [
                {"topic": n, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                             "last_fetched_epoch": -1, "log_start_offset": -1,
                                             "partition_max_bytes": 1 << 20}]} for n in (denied, allowed)],
            "forgotten_topics_data": [], "rack_id": ""})
    by_name = {x["topic"]: x["partitions"][0]["error_code"] for x in r["responses"]}
    return by_name[denied], by_name[allowed]


@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_list_offsets(t: Target):
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": n, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}
            for n in (denied, allowed)]})
    by_name = {x["name"]: x["partitions"][0]["error_code"] for x in r["topics"]}
    return by_name[denied], by_name[allowed]


@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_offset_for_leader_epoch(t: Target):
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
            {"topic": n, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}
            for n in (denied, allowed)]})
    by_name = {x["topic"]: x["partitions"][0]["error_code"] for x in r["topics"]}
    return by_name[denied], by_name[allowed]


@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_describe_producers(t: Target):
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [{"name": n, "partition_indexes": [0]}
                                                             for n in (denied, allowed)]})
    by_name = {x["name"]: x["partitions"][0]["error_code"] for x in r["topics"]}
    return by_name[denied], by_name[allowed]


# ---------------------------------------------------------------------- metadata
@row(((E.TOPIC_AUTHORIZATION_FAILED, True, 0), (E.NONE, True, 1), (E.TOPIC_AUTHORIZATION_FAILED, None, 0, False, 0),
      (False, True)))
def row_metadata(t: Target):
    """Metadata: named topic refused (zero id, no partitions); by id refused with the id kept and
    the name null (v12); left out of all topics."""
    denied, allowed = t.topic(), t.topic()
    denied_id = t.topic_id(denied)
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.DESCRIBE))
    with u.client() as c:
        by_name = c.call(ApiKey.METADATA, 12, {"topics": [{"name": n} for n in (denied, allowed)],
                                               "allow_auto_topic_creation": False})
        by_id = c.call(ApiKey.METADATA, 12, {"topics": [{"topic_id": denied_id, "name": None}],
                                             "allow_auto_topic_creation": False})
        every = c.call(ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False})
    named = {x["name"]: x for x in by_name["topics"]}
    listed = {x["name"] for x in every["topics"]}
    (hidden,) = by_id["topics"]
    return ((named[denied]["error_code"], named[denied]["topic_id"] == ZERO, len(named[denied]["partitions"])),
            (named[allowed]["error_code"], named[allowed]["topic_id"] != ZERO, len(named[allowed]["partitions"])),
            (hidden["error_code"], hidden["name"], int(hidden["topic_id"] != denied_id), hidden["is_internal"],
             len(hidden["partitions"])),
            (denied in listed, allowed in listed))


@row(((E.TOPIC_AUTHORIZATION_FAILED,), False))
def row_metadata_auto_create(t: Target):
    """Auto-creation needs CREATE (cluster, else topic); DESCRIBE alone does not create."""
    name = unique("auto")
    u = t.user()
    t.grant(u, (A.TOPIC, name, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": True})
    with t.su() as c:
        exists = c.call(ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
    return codes(r["topics"]), exists["topics"][0]["error_code"] == E.NONE


@row(((0, 1 << A.READ | 1 << A.DESCRIBE), (1 << A.DESCRIBE, 1 << A.READ | 1 << A.DESCRIBE)))
def row_metadata_authorized_operations(t: Target):
    """cluster_authorized_operations (v8-10): asked without cluster DESCRIBE, 0; topic operations
    per caller."""
    topic = t.topic()
    refused, allowed = t.user(), t.user()
    for u in (refused, allowed):
        t.grant(u, (A.TOPIC, topic, A.READ))
    t.grant(allowed, (A.CLUSTER, "kafka-cluster", A.DESCRIBE))
    answers = []
    for u in (refused, allowed):
        with u.client() as c:
            r = c.call(ApiKey.METADATA, 10, {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                                             "include_cluster_authorized_operations": True,
                                             "include_topic_authorized_operations": True})
        answers.append((r["cluster_authorized_operations"], r["topics"][0]["topic_authorized_operations"]))
    return tuple(answers)


@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE, False))
def row_describe_topic_partitions(t: Target):
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": n} for n in (denied, allowed)],
                                                         "response_partition_limit": 100, "cursor": None})
        every = c.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [], "response_partition_limit": 100,
                                                             "cursor": None})
    by_name = {x["name"]: x["error_code"] for x in r["topics"]}
    return by_name[denied], by_name[allowed], denied in {x["name"] for x in every["topics"]}


# ---------------------------------------------------------------------- topic administration
@row((E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_create_topics(t: Target):
    denied, allowed = unique("c"), unique("c")
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.CREATE))
    with u.client() as c:
        r = c.call(ApiKey.CREATE_TOPICS, 7, {"topics": [
            {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
            for n in (denied, allowed)], "timeout_ms": 30000, "validate_only": True})
    by_name = {x["name"]: x["error_code"] for x in r["topics"]}
    return by_name[denied], by_name[allowed]


@row(((E.TOPIC_AUTHORIZATION_FAILED, True), (E.TOPIC_AUTHORIZATION_FAILED, False),
      (E.TOPIC_AUTHORIZATION_FAILED, True)))
def row_delete_topics(t: Target):
    """DELETE per topic; by id, DESCRIBE first (a refused id keeps its name null); with DESCRIBE
    but not DELETE, the name is answered."""
    by_name, by_id, seen = t.topic(), t.topic(), t.topic()
    ids = {n: t.topic_id(n) for n in (by_id, seen)}
    u = t.user()
    t.grant(u, (A.TOPIC, seen, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": by_name, "topic_id": ZERO},
                                                        {"name": None, "topic_id": ids[by_id]},
                                                        {"name": None, "topic_id": ids[seen]}],
                                             "timeout_ms": 10000})
    out = {(x["name"], x["topic_id"]): x["error_code"] for x in r["responses"]}
    answer = []
    for name, tid in ((by_name, ZERO), (None, ids[by_id]), (seen, ids[seen])):
        hit = [(k, v) for k, v in out.items() if k[1] == tid and (tid != ZERO or k[0] == name)]
        answer.append((hit[0][1], hit[0][0][0] is not None) if hit else None)
    return tuple(answer)


@row((E.TOPIC_AUTHORIZATION_FAILED,))
def row_delete_records(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.DELETE_RECORDS, 2, {"topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "offset": 0}]}], "timeout_ms": 10000})
    return _pcodes(r["topics"])


@row((E.TOPIC_AUTHORIZATION_FAILED,))
def row_create_partitions(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.CREATE_PARTITIONS, 3, {"topics": [{"name": topic, "count": 2, "assignments": None}],
                                                 "timeout_ms": 10000, "validate_only": True})
    return codes(r["results"])


# ---------------------------------------------------------------------- configs
def _config_resources(topic: str) -> list:
    return [{"resource_type": 2, "resource_name": topic}, {"resource_type": 4, "resource_name": "0"},
            {"resource_type": 8, "resource_name": "0"}]


@row((E.NONE, E.TOPIC_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED))
def row_describe_configs(t: Target):
    """Topic, broker and broker-logger resources; DESCRIBE_CONFIGS on an allowed topic. The
    allowed resources are answered first, then the refused ones."""
    denied, allowed = t.topic(), t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, allowed, A.DESCRIBE_CONFIGS))
    with u.client() as c:
        r = c.call(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
            {**x, "configuration_keys": ["cleanup.policy"]}
            for x in _config_resources(denied) + [{"resource_type": 2, "resource_name": allowed}]],
            "include_synonyms": False, "include_documentation": False})
    return codes(r["results"])


@row((E.TOPIC_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED))
def row_alter_configs(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.DESCRIBE_CONFIGS))
    with u.client() as c:
        r = c.call(ApiKey.ALTER_CONFIGS, 2, {"resources": [
            {"resource_type": 2, "resource_name": topic, "configs": [{"name": "retention.ms", "value": "100000"}]},
            {"resource_type": 4, "resource_name": "0", "configs": [
                {"name": "log.cleaner.threads", "value": "1"}]}], "validate_only": True})
    return codes(r["responses"])


@row((E.TOPIC_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED))
def row_incremental_alter_configs(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.DESCRIBE_CONFIGS))
    with u.client() as c:
        r = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
            {**x, "configs": [{"name": n, "config_operation": 0, "value": v}]}
            for x, (n, v) in zip(_config_resources(topic), (("retention.ms", "100000"), ("log.cleaner.threads", "1"),
                                                            ("kafka.server.KafkaApis", "INFO")))],
            "validate_only": True})
    return codes(r["responses"])


@row(((E.GROUP_AUTHORIZATION_FAILED, E.NONE), (E.GROUP_AUTHORIZATION_FAILED, E.NONE)))
def row_group_configs(t: Target):
    """GROUP config resources (KIP-848 group configs): DESCRIBE_CONFIGS on the group to read,
    ALTER_CONFIGS to change; the refusal is the group's error, not the topic's or cluster's."""
    denied, allowed = unique("cfg-denied"), unique("cfg-allowed")
    u = t.user()
    t.grant(u, (A.GROUP, allowed, A.DESCRIBE_CONFIGS), (A.GROUP, allowed, A.ALTER_CONFIGS))
    with u.client() as c:
        described = c.call(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 32, "resource_name": g, "configuration_keys": None} for g in (denied, allowed)],
            "include_synonyms": False, "include_documentation": False})
        altered = c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
            {"resource_type": 32, "resource_name": g, "configs": [
                {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}
            for g in (denied, allowed)], "validate_only": True})
    by_name = {r["resource_name"]: r["error_code"] for r in described["results"]}
    altered_by_name = {r["resource_name"]: r["error_code"] for r in altered["responses"]}
    return ((by_name.get(denied), by_name.get(allowed)),
            (altered_by_name.get(denied), altered_by_name.get(allowed)))


@row((E.CLUSTER_AUTHORIZATION_FAILED, E.NONE))
def row_list_config_resources(t: Target):
    return _cluster_call(t, A.DESCRIBE_CONFIGS, lambda c: c.call(ApiKey.LIST_CONFIG_RESOURCES, 1, {
        "resource_types": []})["error_code"])


# ---------------------------------------------------------------------- cluster
@row(((E.NONE, 0), (E.NONE, 1 << A.DESCRIBE | 1 << A.ALTER)))
def row_describe_cluster(t: Target):
    """Asked for authorized operations without cluster DESCRIBE: 0 (not INT32_MIN, "not asked");
    with it, the operations the caller may do (ALTER implies DESCRIBE)."""
    def call(c):
        r = c.call(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True, "endpoint_type": 1})
        return r["error_code"], r["cluster_authorized_operations"]
    return _cluster_call(t, A.ALTER, call)


@row((E.CLUSTER_AUTHORIZATION_FAILED, (E.CLUSTER_AUTHORIZATION_FAILED,)))
def row_elect_leaders(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.ALL))
    with u.client() as c:
        r = c.call(ApiKey.ELECT_LEADERS, 2, {"election_type": 0, "topic_partitions": [
            {"topic": topic, "partitions": [0]}], "timeout_ms": 10000})
    return r["error_code"], _pcodes(r["replica_election_results"], "partition_result")


@row((E.CLUSTER_AUTHORIZATION_FAILED, E.NONE))
def row_describe_log_dirs(t: Target):
    return _cluster_call(t, A.DESCRIBE, lambda c: c.call(ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": []})["error_code"])


def _cluster_call(t: Target, operation: int, call) -> tuple:
    """call(client)'s answer for a user without, then one with, `operation` on the cluster."""
    refused, allowed = t.user(), t.user()
    t.grant(allowed, (A.CLUSTER, "kafka-cluster", operation))
    with refused.client() as c:
        first = call(c)
    with allowed.client() as c:
        return first, call(c)


@row((E.CLUSTER_AUTHORIZATION_FAILED,))
def row_alter_replica_log_dirs(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.ALL))
    with u.client() as c:
        r = c.call(ApiKey.ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [
            {"path": "/nonexistent", "topics": [{"name": topic, "partitions": [0]}]}]})
    return _pcodes(r["results"])


@row((E.CLUSTER_AUTHORIZATION_FAILED, (E.CLUSTER_AUTHORIZATION_FAILED,)))
def row_alter_partition_reassignments(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.ALL))
    with u.client() as c:
        r = c.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 10000, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "replicas": None}]}]})
    return r["error_code"], _pcodes(r["responses"])


@row((E.CLUSTER_AUTHORIZATION_FAILED, E.NONE))
def row_list_partition_reassignments(t: Target):
    return _cluster_call(t, A.DESCRIBE, lambda c: c.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {
        "timeout_ms": 10000, "topics": None})["error_code"])


@row(((E.CLUSTER_AUTHORIZATION_FAILED, None, (("", E.CLUSTER_AUTHORIZATION_FAILED, None),)),
      (E.NONE, "", ((True, E.NONE, ""),))))
def row_describe_user_scram_credentials(t: Target):
    """Cluster DESCRIBE; the refusal names no user. (Asked for all users, Kafka 4.4 never answers.)"""
    def call(c):
        user = c.user
        r = c.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": user}]})
        return r["error_code"], r["error_message"], tuple(
            (x["user"] if x["error_code"] else x["user"] == user, x["error_code"], x["error_message"])
            for x in r["results"])
    return _cluster_call(t, A.DESCRIBE, call)


@row(((True, E.CLUSTER_AUTHORIZATION_FAILED, True),))
def row_alter_user_scram_credentials(t: Target):
    u = t.user()
    with u.client() as c:
        r = c.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [{"name": u.name, "mechanism": 1}],
                                                            "upsertions": []})
    # (Kafka forwards it to its controller, whose message describes the forwarded request)
    return tuple((x["user"] == u.name, x["error_code"], bool(x["error_message"])) for x in r["results"])


@row((E.CLUSTER_AUTHORIZATION_FAILED,))
def row_update_features(t: Target):
    u = t.user()
    with u.client() as c:
        r = c.call(ApiKey.UPDATE_FEATURES, 1, {"timeout_ms": 10000, "feature_updates": [
            {"feature": "group.version", "max_version_level": 1, "upgrade_type": 1}], "validate_only": True})
    return (r["error_code"],)


@row((E.CLUSTER_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED))
def row_acl_apis(t: Target):
    """CreateAcls, DeleteAcls: cluster ALTER; DescribeAcls: cluster DESCRIBE (topic ACLs do not help)."""
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.ALL))
    f = {"resource_type_filter": A.TOPIC, "resource_name_filter": topic, "pattern_type_filter": A.LITERAL,
         "principal_filter": None, "host_filter": None, "operation": A.ANY, "permission_type": A.ANY}
    with u.client() as c:
        d = c.call(ApiKey.DESCRIBE_ACLS, 3, f)
        cr = c.call(ApiKey.CREATE_ACLS, 3, {"creations": [
            {"resource_type": A.TOPIC, "resource_name": topic, "resource_pattern_type": A.LITERAL,
             "principal": u.principal, "host": "*", "operation": A.ALTER, "permission_type": A.ALLOW}]})
        de = c.call(ApiKey.DELETE_ACLS, 3, {"filters": [{
            "resource_type_filter": A.TOPIC, "resource_name_filter": topic, "pattern_type_filter": A.LITERAL,
            "principal_filter": None, "host_filter": None, "operation": A.ANY, "permission_type": A.ANY}]})
    return d["error_code"], cr["results"][0]["error_code"], de["filter_results"][0]["error_code"]


@row((E.NONE, True))
def row_api_versions(t: Target):
    """ApiVersions (and SaslHandshake/SaslAuthenticate, which every row's login uses): no check."""
    u = t.user()
    with u.client() as c:
        r = c.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    return r["error_code"], len(r["api_keys"]) > 40


# ---------------------------------------------------------------------- groups
@row((E.GROUP_AUTHORIZATION_FAILED, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.NONE))
def row_find_coordinator(t: Target):
    g, tid, ok = unique("g"), unique("tx"), unique("g")
    u = t.user()
    t.grant(u, (A.GROUP, ok, A.DESCRIBE))
    with u.client() as c:
        groups = c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [g]})
        txns = c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [tid]})

        def found():  # (Kafka: COORDINATOR_NOT_AVAILABLE until its offsets topic is up)
            r = c.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [ok]})
            return r["coordinators"][0]["error_code"] != E.COORDINATOR_NOT_AVAILABLE and r
        allowed = wait_for(found, 120, "a coordinator")
    return codes(groups["coordinators"]) + codes(txns["coordinators"]) + codes(allowed["coordinators"])


@row((E.GROUP_AUTHORIZATION_FAILED,) * 4)
def row_classic_group_apis(t: Target):
    """JoinGroup, SyncGroup, Heartbeat, LeaveGroup: group READ (DESCRIBE is not enough)."""
    g = unique("g")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.DESCRIBE))
    with u.client() as c:
        j = c.call(ApiKey.JOIN_GROUP, 9, {"group_id": g, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                          "member_id": "", "protocol_type": "consumer",
                                          "protocols": [{"name": "range", "metadata": b""}], "reason": None})
        s = c.call(ApiKey.SYNC_GROUP, 5, {"group_id": g, "generation_id": 1, "member_id": "m",
                                          "protocol_type": "consumer", "protocol_name": "range", "assignments": []})
        h = c.call(ApiKey.HEARTBEAT, 4, {"group_id": g, "generation_id": 1, "member_id": "m"})
        lv = c.call(ApiKey.LEAVE_GROUP, 5, {"group_id": g, "members": [{"member_id": "m", "reason": None}]})
    return j["error_code"], s["error_code"], h["error_code"], lv["error_code"]


@row((E.GROUP_AUTHORIZATION_FAILED, E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_offset_commit(t: Target):
    """Group READ (every partition refused), then topic READ per topic."""
    denied, allowed = t.topic(), t.topic()
    g_denied, g = unique("g"), unique("g")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, allowed, A.READ))
    t.coordinator(g)  # Kafka creates its offsets topic on a FindCoordinator, never on a commit

    def commit(c, group, topic):
        r = c.call(ApiKey.OFFSET_COMMIT, 8, {"group_id": group, "generation_id_or_member_epoch": -1,
                                             "member_id": "", "group_instance_id": None, "topics": [
                                                 {"name": topic, "partitions": [{
                                                     "partition_index": 0, "committed_offset": 0,
                                                     "committed_leader_epoch": -1, "committed_metadata": None}]}]})
        return r["topics"][0]["partitions"][0]["error_code"]
    with u.client() as c:
        return commit(c, g_denied, allowed), commit(c, g, denied), settled(lambda: commit(c, g, allowed))


@row((E.GROUP_AUTHORIZATION_FAILED, E.TOPIC_AUTHORIZATION_FAILED, E.NONE))
def row_offset_fetch(t: Target):
    """Group DESCRIBE per group; a named topic the caller may not DESCRIBE is refused."""
    denied, allowed = t.topic(), t.topic()
    g_denied, g = unique("g"), unique("g")
    t.commit(g, allowed)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.DESCRIBE), (A.TOPIC, allowed, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.OFFSET_FETCH, 8, {"groups": [
            {"group_id": g_denied, "topics": None},
            {"group_id": g, "topics": [{"name": denied, "partition_indexes": [0]},
                                       {"name": allowed, "partition_indexes": [0]}]}],
            "require_stable": False})
    groups = {x["group_id"]: x for x in r["groups"]}
    parts = {x["name"]: x["partitions"][0]["error_code"] for x in groups[g]["topics"]}
    return groups[g_denied]["error_code"], parts[denied], parts[allowed]


@row((False, True))
def row_list_groups(t: Target):
    """Without cluster DESCRIBE, only the groups the caller may DESCRIBE are listed."""
    topic = t.topic()
    hidden, shown = unique("g"), unique("g")
    for g in (hidden, shown):
        t.commit(g, topic)
    u = t.user()
    t.grant(u, (A.GROUP, shown, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.LIST_GROUPS, 4, {"states_filter": []})
    listed = {x["group_id"] for x in r["groups"]}
    return hidden in listed, shown in listed


@row(((E.GROUP_AUTHORIZATION_FAILED, INT32_MIN), (E.NONE, 1 << A.DESCRIBE)))
def row_describe_groups(t: Target):
    topic = t.topic()
    denied, shown = unique("g"), unique("g")
    t.commit(shown, topic)
    u = t.user()
    t.grant(u, (A.GROUP, shown, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.DESCRIBE_GROUPS, 5, {"groups": [denied, shown], "include_authorized_operations": True})
    return tuple((x["error_code"], x["authorized_operations"]) for x in r["groups"])


@row((E.GROUP_AUTHORIZATION_FAILED,))
def row_delete_groups(t: Target):
    topic = t.topic()
    g = unique("g")
    t.commit(g, topic)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.DELETE_GROUPS, 2, {"groups_names": [g]})
    return codes(r["results"])


@row((E.GROUP_AUTHORIZATION_FAILED, (E.NONE, E.TOPIC_AUTHORIZATION_FAILED)))
def row_offset_delete(t: Target):
    """Group DELETE, then topic READ per topic."""
    topic = t.topic()
    g_denied, g = unique("g"), unique("g")
    for group in (g_denied, g):
        t.commit(group, topic)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.DELETE), (A.TOPIC, topic, A.DESCRIBE))
    with u.client() as c:
        def delete(group):
            return c.call(ApiKey.OFFSET_DELETE, 0, {"group_id": group, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0}]}]})
        refused, r = delete(g_denied), delete(g)
    return refused["error_code"], (r["error_code"], r["topics"][0]["partitions"][0]["error_code"])


def _heartbeat(c: ProtocolClient, group: str, topics: list[str]) -> dict:
    return c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
        "group_id": group, "member_id": "", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": topics, "server_assignor": None,
        "topic_partitions": []})


@row((E.GROUP_AUTHORIZATION_FAILED, (E.TOPIC_AUTHORIZATION_FAILED, None, None, None, 0), (E.NONE, True)))
def row_consumer_group_heartbeat(t: Target):
    """Group READ; then every subscribed topic name needs DESCRIBE, else the heartbeat is refused
    as a whole (no member id, no assignment: issue 23's leak)."""
    secret, mine = t.topic(), t.topic()
    g_denied, g = unique("g"), unique("g")
    t.coordinator(g)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, mine, A.DESCRIBE))
    with u.client() as c:
        refused = _heartbeat(c, g_denied, [mine])
        leak = _heartbeat(c, g, [mine, secret])

        def joined():
            r = _heartbeat(c, g, [mine])
            return r if r["error_code"] not in RETRIABLE else None  # (Kafka: its offsets topic coming up)
        ok = wait_for(joined, 120, "a heartbeat answer")
    return (refused["error_code"], (leak["error_code"], leak["error_message"], leak["member_id"],
                                    leak["assignment"], leak["member_epoch"]),
            (ok["error_code"], bool(ok["member_id"])))


@row(((E.GROUP_AUTHORIZATION_FAILED, INT32_MIN),))
def row_consumer_group_describe(t: Target):
    """Group READ does not give DESCRIBE on another group."""
    g, other = unique("g"), unique("g")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": [other], "include_authorized_operations": True})
    return tuple((x["error_code"], x["authorized_operations"]) for x in r["groups"])


# ---------------------------------------------------------------------- streams groups (KIP-1071)
def _streams_heartbeat(c: ProtocolClient, group: str, source: str, changelog: str) -> dict:
    """A Kafka Streams member joining with a one-subtopology topology: `source` in, a store
    whose changelog topic is `changelog`."""
    topology = {"epoch": 0, "subtopologies": [{
        "subtopology_id": "0", "source_topics": [source], "source_topic_regex": [],
        "state_changelog_topics": [{"name": changelog, "partitions": 0, "replication_factor": 0,
                                    "topic_configs": [{"key": "cleanup.policy", "value": "compact"}]}],
        "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}]}
    return c.call(ApiKey.STREAMS_GROUP_HEARTBEAT, 0, {
        "group_id": group, "member_id": uuid.uuid4().hex[:22], "member_epoch": 0, "endpoint_information_epoch": 0,
        "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000, "topology": topology,
        "active_tasks": [], "standby_tasks": [], "warmup_tasks": [], "process_id": str(uuid.uuid4()),
        "user_endpoint": None, "client_tags": [], "task_offsets": [], "task_end_offsets": [],
        "shutdown_application": False})


@row((E.GROUP_AUTHORIZATION_FAILED, (E.TOPIC_AUTHORIZATION_FAILED, None, 0),
      (E.NONE, "Unauthorized to CREATE on topics {changelog}.", False)))
def row_streams_group_heartbeat(t: Target):
    """Group READ; then every topic of the topology needs DESCRIBE, else the heartbeat is refused
    as a whole; an internal topic the coordinator finds missing is created only with CREATE
    (cluster or topic), else the MISSING_INTERNAL_TOPICS status says so and nothing is made."""
    secret, mine = t.topic(), t.topic()
    g_denied, g = unique("stg"), unique("stg")
    changelog = f"{g}-store-changelog"
    t.coordinator(g)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, mine, A.DESCRIBE), (A.TOPIC, changelog, A.DESCRIBE))
    with u.client() as c:
        refused = _streams_heartbeat(c, g_denied, mine, changelog)
        leak = _streams_heartbeat(c, g, secret, changelog)

        def joined():
            r = _streams_heartbeat(c, g, mine, changelog)
            return r if r["error_code"] not in RETRIABLE else None  # (Kafka: its offsets topic coming up)
        ok = wait_for(joined, 120, "a streams heartbeat answer")
    details = [s["status_detail"] for s in ok["status"] or [] if s["status_code"] == 3]  # MISSING_INTERNAL_TOPICS
    unauthorized = details[0].rpartition("; ")[2].replace(changelog, "{changelog}") if details else None
    with t.su() as c:
        made = c.call(ApiKey.METADATA, 12, {"topics": [{"name": changelog, "topic_id": ZERO}],
                                            "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    return (refused["error_code"], (leak["error_code"], leak["error_message"], leak["member_epoch"]),
            (ok["error_code"], unauthorized, made["topics"][0]["error_code"] == E.NONE))


@row(((E.GROUP_AUTHORIZATION_FAILED, INT32_MIN),))
def row_streams_group_describe(t: Target):
    """Group READ does not give DESCRIBE on another group."""
    g, other = unique("stg"), unique("stg")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.STREAMS_GROUP_DESCRIBE, 0, {"group_ids": [other], "include_authorized_operations": True})
    return tuple((x["error_code"], x["authorized_operations"]) for x in r["groups"])


# ---------------------------------------------------------------------- share groups (KIP-932)
def _share_heartbeat(c: ProtocolClient, group: str, member: str, topics: list[str]) -> dict:
    return c.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {"group_id": group, "member_id": member, "member_epoch": 0,
                                                    "rack_id": None, "subscribed_topic_names": topics})


@row((E.GROUP_AUTHORIZATION_FAILED, (E.TOPIC_AUTHORIZATION_FAILED, None, None, 0), (E.NONE, True)))
def row_share_group_heartbeat(t: Target):
    """Group READ; then every subscribed topic needs DESCRIBE, else the heartbeat is refused as
    a whole (no member id, no assignment)."""
    secret, mine = t.topic(), t.topic()
    g_denied, g = unique("sg"), unique("sg")
    t.coordinator(g)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, mine, A.DESCRIBE))
    member = uuid.uuid4().hex[:22]
    with u.client() as c:
        refused = _share_heartbeat(c, g_denied, member, [mine])
        leak = _share_heartbeat(c, g, member, [mine, secret])

        def joined():
            r = _share_heartbeat(c, g, member, [mine])
            return r if r["error_code"] not in RETRIABLE else None  # (Kafka: its offsets topic coming up)
        ok = wait_for(joined, 120, "a share heartbeat answer")
    return (refused["error_code"], (leak["error_code"], leak["member_id"], leak["assignment"], leak["member_epoch"]),
            (ok["error_code"], ok["member_epoch"] > 0))


def _share_fetch(c: ProtocolClient, group: str, member: str, topic_ids: list) -> dict:
    return c.call(ApiKey.SHARE_FETCH, 1, {
        "group_id": group, "member_id": member, "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
        "max_bytes": 1 << 20, "max_records": 100, "batch_size": 100,
        "topics": [{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}
                   for tid in topic_ids], "forgotten_topics_data": []})


@row((E.GROUP_AUTHORIZATION_FAILED, (E.NONE, (E.TOPIC_AUTHORIZATION_FAILED, E.NONE))))
def row_share_fetch(t: Target):
    """ShareFetch: group READ (the whole request refused), then topic READ per topic."""
    denied, allowed = t.topic(), t.topic()
    ids = [t.topic_id(denied), t.topic_id(allowed)]
    g_denied, g = unique("sg"), unique("sg")
    t.coordinator(g)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, allowed, A.READ))
    member = uuid.uuid4().hex[:22]
    with u.client() as c:
        wait_for(lambda: _share_heartbeat(c, g, member, [allowed])["error_code"] not in RETRIABLE, 120,
                 "a share group member")
        refused = _share_fetch(c, g_denied, member, ids)
        r = _share_fetch(c, g, member, ids)
    by_id = {x["topic_id"]: x["partitions"][0]["error_code"] for x in r["responses"]}
    # (a partition with nothing to give may be left out of the answer: Kafka does so at times)
    return refused["error_code"], (r["error_code"], (by_id.get(ids[0]), by_id.get(ids[1], E.NONE)))


@row(((E.GROUP_AUTHORIZATION_FAILED, INT32_MIN),))
def row_share_group_describe(t: Target):
    """Group READ does not give DESCRIBE on another group."""
    g, other = unique("sg"), unique("sg")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, {"group_ids": [other], "include_authorized_operations": True})
    return tuple((x["error_code"], x["authorized_operations"]) for x in r["groups"])


@row((E.GROUP_AUTHORIZATION_FAILED, (E.NONE, (E.TOPIC_AUTHORIZATION_FAILED,))))
def row_alter_share_group_offsets(t: Target):
    """AlterShareGroupOffsets: READ on the group (the whole request refused), then READ per
    topic (its partitions answered TOPIC_AUTHORIZATION_FAILED)."""
    denied = t.topic()
    g_denied, g = unique("sg"), unique("sg")
    t.coordinator(g)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ))
    body = {"topics": [{"topic_name": denied, "partitions": [{"partition_index": 0, "start_offset": 0}]}]}
    with u.client() as c:
        refused = c.call(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": g_denied, **body})
        box = []

        def answered():
            box[:] = [c.call(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": g, **body})]
            return box[0]["error_code"] not in RETRIABLE
        wait_for(answered, 120, "an AlterShareGroupOffsets answer")
    r = box[0]
    return refused["error_code"], (r["error_code"], tuple(
        p["error_code"] for topic in r["responses"] for p in topic["partitions"]))


@row((E.GROUP_AUTHORIZATION_FAILED,))
def row_delete_share_group_offsets(t: Target):
    """DeleteShareGroupOffsets needs DELETE on the group: READ is not enough."""
    topic = t.topic()
    g = unique("sg")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, topic, A.READ))
    with u.client() as c:
        r = c.call(ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": g, "topics": [{"topic_name": topic}]})
    return (r["error_code"],)


@row(((E.CLUSTER_AUTHORIZATION_FAILED,), (E.CLUSTER_AUTHORIZATION_FAILED,), (E.CLUSTER_AUTHORIZATION_FAILED,)))
def row_share_group_state(t: Target):
    """The share coordinator's APIs (83-87) and FindCoordinator's SHARE key type are for
    brokers: CLUSTER_ACTION, which a user with every right on the group does not have."""
    topic = t.topic()
    topic_id = t.topic_id(topic)
    g = unique("sg")
    u = t.user()
    t.grant(u, (A.GROUP, g, A.ALL), (A.TOPIC, topic, A.ALL))
    key = f"{g}:{base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip('=')}:0"
    with u.client() as c:
        summary = c.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 1, {"group_id": g, "topics": [
            {"topic_id": topic_id, "partitions": [{"partition": 0, "leader_epoch": 0}]}]})
        init = c.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, {"group_id": g, "topics": [
            {"topic_id": topic_id, "partitions": [{"partition": 0, "state_epoch": 0, "start_offset": 0}]}]})
        found = c.call(ApiKey.FIND_COORDINATOR, 6, {"key_type": 2, "coordinator_keys": [key]})
    return (tuple(p["error_code"] for p in summary["results"][0]["partitions"]),
            tuple(p["error_code"] for p in init["results"][0]["partitions"]),
            tuple(x["error_code"] for x in found["coordinators"]))


# ---------------------------------------------------------------------- transactions
@row((E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED, E.NONE))
def row_init_producer_id(t: Target):
    """Transactional: id WRITE. Idempotent: cluster IDEMPOTENT_WRITE or WRITE on some topic."""
    u, writer = t.user(), t.user()
    t.grant(writer, (A.TOPIC, unique("w"), A.WRITE, A.PREFIXED))
    body = {"transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}
    with u.client() as c:
        txn = c.call(ApiKey.INIT_PRODUCER_ID, 4, {**body, "transactional_id": unique("tx")})
        idem = c.call(ApiKey.INIT_PRODUCER_ID, 4, body)
    with writer.client() as c:
        ok = settled(lambda: c.call(ApiKey.INIT_PRODUCER_ID, 4, body)["error_code"], "InitProducerId")
    return txn["error_code"], idem["error_code"], ok


@row((E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,))
def row_add_partitions_to_txn(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.WRITE))
    with u.client() as c:
        r = c.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {"v3_and_below_transactional_id": unique("tx"),
                                                     "v3_and_below_producer_id": 1, "v3_and_below_producer_epoch": 0,
                                                     "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
    return tuple(p["partition_error_code"] for x in r["results_by_topic_v3_and_below"]
                 for p in x["results_by_partition"])


@row((E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
def row_txn_apis(t: Target):
    """AddOffsetsToTxn, TxnOffsetCommit, EndTxn: transactional id WRITE first."""
    topic, g, tid = t.topic(), unique("g"), unique("tx")
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.ALL), (A.GROUP, g, A.ALL))
    with u.client() as c:
        ao = c.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, {"transactional_id": tid, "producer_id": 1, "producer_epoch": 0,
                                                   "group_id": g})
        to = c.call(ApiKey.TXN_OFFSET_COMMIT, 3, {"transactional_id": tid, "group_id": g, "producer_id": 1,
                                                  "producer_epoch": 0, "generation_id_or_member_epoch": -1,
                                                  "member_id": "",
                                                  "group_instance_id": None, "topics": [
                                                      {"name": topic, "partitions": [{
                                                          "partition_index": 0, "committed_offset": 0,
                                                          "committed_leader_epoch": -1,
                                                          "committed_metadata": None}]}]})
        et = c.call(ApiKey.END_TXN, 3, {"transactional_id": tid, "producer_id": 1, "producer_epoch": 0,
                                        "committed": True})
    return ao["error_code"], to["topics"][0]["partitions"][0]["error_code"], et["error_code"]


@row((E.CLUSTER_AUTHORIZATION_FAILED,))
def row_write_txn_markers(t: Target):
    topic = t.topic()
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.ALL))
    with u.client() as c:
        r = c.call(ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [
            {"producer_id": 1, "producer_epoch": 0, "transaction_result": True,
             "topics": [{"name": topic, "partition_indexes": [0]}], "coordinator_epoch": 0}]})
    return tuple(p["error_code"] for m in r["markers"] for x in m["topics"] for p in x["partitions"])


@row(((E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, False), (E.NONE, True)))
def row_transactions_listing(t: Target):
    """DescribeTransactions: id DESCRIBE per id; ListTransactions: only the ids the caller may DESCRIBE."""
    tid = unique("tx")
    t.transaction(tid)
    refused, allowed = t.user(), t.user()
    t.grant(allowed, (A.TRANSACTIONAL_ID, tid, A.DESCRIBE))
    answers = []
    for u in (refused, allowed):
        with u.client() as c:
            d = c.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]})
            lt = c.call(ApiKey.LIST_TRANSACTIONS, 1, {"state_filters": [], "producer_id_filters": [],
                                                      "duration_filter": -1})
        answers.append((d["transaction_states"][0]["error_code"],
                        tid in {x["transactional_id"] for x in lt["transaction_states"]}))
    return tuple(answers)


# ---------------------------------------------------------------------- delegation tokens
@row((E.DELEGATION_TOKEN_AUTHORIZATION_FAILED, E.DELEGATION_TOKEN_OWNER_MISMATCH,
      E.DELEGATION_TOKEN_OWNER_MISMATCH, (0, 1)))
def row_delegation_tokens(t: Target):
    """Create for another owner: USER CREATE_TOKENS; renew/expire: owner or renewer only;
    describe: a stranger's token is not listed."""
    owner, stranger = t.user(), t.user()
    with owner.client() as c:
        mine = c.call(ApiKey.CREATE_DELEGATION_TOKEN, 3, {"owner_principal_type": None, "owner_principal_name": None,
                                                          "renewers": [], "max_lifetime_ms": -1})
        assert mine["error_code"] == E.NONE, mine
        ids = lambda r: {x["token_id"] for x in r["tokens"]}  # noqa: E731
        # (Kafka: the token reaches the broker's cache through the metadata log)
        own = wait_for(lambda: (lambda r: mine["token_id"] in ids(r) and r)(
            c.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": None})), 30, "the owner's token")
    with stranger.client() as c:
        other = c.call(ApiKey.CREATE_DELEGATION_TOKEN, 3, {"owner_principal_type": "User",
                                                           "owner_principal_name": owner.name, "renewers": [],
                                                           "max_lifetime_ms": -1})
        renew = c.call(ApiKey.RENEW_DELEGATION_TOKEN, 2, {"hmac": mine["hmac"], "renew_period_ms": -1})
        expire = c.call(ApiKey.EXPIRE_DELEGATION_TOKEN, 2, {"hmac": mine["hmac"], "expiry_time_period_ms": -1})
        seen = c.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": None})
    return (other["error_code"], renew["error_code"], expire["error_code"],
            (int(mine["token_id"] in ids(seen)), int(mine["token_id"] in ids(own))))


# ---------------------------------------------------------------------- further cases
@row(((E.TOPIC_AUTHORIZATION_FAILED,), (E.TOPIC_AUTHORIZATION_FAILED,)))
def row_by_topic_id(t: Target):
    """Produce v13 and Fetch v13 name topics by id: the same topic WRITE/READ checks."""
    topic = t.topic()
    tid = t.topic_id(topic)
    u = t.user()
    t.grant(u, (A.TOPIC, topic, A.DESCRIBE))
    with u.client() as c:
        p = c.call(ApiKey.PRODUCE, 13, {"transactional_id": None, "acks": 1, "timeout_ms": 10000, "topic_data": [
            {"topic_id": tid, "partition_data": [{"index": 0, "records": batch()}]}]})
        f = c.call(ApiKey.FETCH, 13, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [
                {"topic_id": tid, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                  "last_fetched_epoch": -1, "log_start_offset": -1,
                                                  "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
    return _pcodes(p["responses"], "partition_responses"), _pcodes(f["responses"])


@row(((False, True), (True, True)))
def row_list_groups_with_cluster_describe(t: Target):
    """ListGroups: cluster DESCRIBE lists every group."""
    topic = t.topic()
    hidden, shown = unique("g"), unique("g")
    for g in (hidden, shown):
        t.commit(g, topic)
    refused, allowed = t.user(), t.user()
    for u in (refused, allowed):
        t.grant(u, (A.GROUP, shown, A.DESCRIBE))
    t.grant(allowed, (A.CLUSTER, "kafka-cluster", A.DESCRIBE))
    answers = []
    for u in (refused, allowed):
        with u.client() as c:
            listed = {x["group_id"] for x in c.call(ApiKey.LIST_GROUPS, 4, {"states_filter": []})["groups"]}
        answers.append((hidden in listed, shown in listed))
    return tuple(answers)


@row(((False, True),))
def row_offset_fetch_all_topics(t: Target):
    """OffsetFetch of all topics leaves out those the caller may not DESCRIBE."""
    hidden, shown = t.topic(), t.topic()
    g = unique("g")
    for topic in (hidden, shown):
        t.commit(g, topic)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.DESCRIBE), (A.TOPIC, shown, A.DESCRIBE))
    with u.client() as c:
        r = c.call(ApiKey.OFFSET_FETCH, 8, {"groups": [{"group_id": g, "topics": None}], "require_stable": False})
    listed = {x["name"] for x in r["groups"][0]["topics"]}
    return ((hidden in listed, shown in listed),)


@row((True, False))
def row_consumer_group_regex(t: Target):
    """A KIP-848 member's regex only matches topics its principal may DESCRIBE (Kafka's
    GroupMetadataManager resolves it as the member)."""
    base = unique("rx")
    mine, secret = (t.topic(name=f"{base}-{n}") for n in ("mine", "secret"))
    ids = {t.topic_id(n): n for n in (mine, secret)}
    g = unique("g")
    t.coordinator(g)
    u = t.user()
    t.grant(u, (A.GROUP, g, A.READ), (A.TOPIC, mine, A.DESCRIBE))
    seen: set[str] = set()
    with u.client() as c:
        state = {"member_id": str(uuid.uuid4()), "member_epoch": 0, "owned": []}  # (v1: the client's id)

        def beat():
            first = state["member_epoch"] == 0
            r = c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, {
                "group_id": g, "member_id": state["member_id"], "member_epoch": state["member_epoch"],
                "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000 if first else -1,
                "subscribed_topic_names": None, "subscribed_topic_regex": f"{base}-.*" if first else None,
                "server_assignor": None, "topic_partitions": state["owned"]})
            if r["error_code"] in RETRIABLE:
                return False
            assert r["error_code"] == E.NONE, r
            state["member_id"], state["member_epoch"] = r["member_id"], r["member_epoch"]
            if r["assignment"] is not None:
                state["owned"] = r["assignment"]["topic_partitions"]
                seen.update(ids.get(x["topic_id"], "?") for x in state["owned"])
            return mine in seen
        wait_for(beat, 120, "the regex's assignment", interval=0.3)
    return mine in seen, secret in seen


@row(((E.GROUP_AUTHORIZATION_FAILED, INT32_MIN), (E.NONE, 1 << A.READ | 1 << A.DESCRIBE)))
def row_consumer_group_describe_allowed(t: Target):
    """ConsumerGroupDescribe: group DESCRIBE per group; authorized_operations per caller."""
    topic = t.topic()
    g = unique("g")
    t.coordinator(g)
    member = t.user()
    t.grant(member, (A.GROUP, g, A.READ), (A.TOPIC, topic, A.DESCRIBE))
    with member.client() as c:
        settled(lambda: _heartbeat(c, g, [topic])["error_code"], "a member")
        stranger = c.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": [unique("g")],
                                                              "include_authorized_operations": True})
        mine = c.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": [g], "include_authorized_operations": True})
    return tuple((x["error_code"], x["authorized_operations"]) for x in stranger["groups"] + mine["groups"])


@row(((E.TOPIC_AUTHORIZATION_FAILED, E.OPERATION_NOT_ATTEMPTED), E.GROUP_AUTHORIZATION_FAILED,
      (E.GROUP_AUTHORIZATION_FAILED, E.TOPIC_AUTHORIZATION_FAILED)))
def row_txn_apis_past_the_id(t: Target):
    """With WRITE on the transactional id: AddPartitionsToTxn needs topic WRITE (a refused topic
    fails the others with OPERATION_NOT_ATTEMPTED); AddOffsetsToTxn needs group READ;
    TxnOffsetCommit group READ, then topic READ."""
    denied, allowed = t.topic(), t.topic()
    tid, g_denied, g = unique("tx"), unique("g"), unique("g")
    u = t.user()
    t.grant(u, (A.TRANSACTIONAL_ID, tid, A.WRITE), (A.TOPIC, allowed, A.ALL), (A.GROUP, g, A.READ))

    def txn_commit(c, group, topic):
        r = c.call(ApiKey.TXN_OFFSET_COMMIT, 3, {
            "transactional_id": tid, "group_id": group, "producer_id": 1, "producer_epoch": 0,
            "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                "committed_leader_epoch": -1, "committed_metadata": None}]}]})
        return r["topics"][0]["partitions"][0]["error_code"]
    with u.client() as c:
        ap = c.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
            "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": 1, "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": n, "partitions": [0]} for n in (denied, allowed)]})
        ao = c.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, {"transactional_id": tid, "producer_id": 1, "producer_epoch": 0,
                                                   "group_id": g_denied})
        commits = txn_commit(c, g_denied, allowed), txn_commit(c, g, denied)
    by_name = {x["name"]: x["results_by_partition"][0]["partition_error_code"]
               for x in ap["results_by_topic_v3_and_below"]}
    return (by_name[denied], by_name[allowed]), ao["error_code"], commits


@row(((E.NONE, E.NONE), (True, True)))
def row_delegation_tokens_allowed(t: Target):
    """USER CREATE_TOKENS on the owner lets a caller create a token for it; USER DESCRIBE_TOKENS
    lets it see the owner's tokens."""
    owner, helper = t.user(), t.user()
    t.grant(helper, (A.USER, owner.principal, A.CREATE_TOKENS), (A.USER, owner.principal, A.DESCRIBE_TOKENS))
    with owner.client() as c:
        mine = c.call(ApiKey.CREATE_DELEGATION_TOKEN, 3, {"owner_principal_type": None, "owner_principal_name": None,
                                                          "renewers": [], "max_lifetime_ms": -1})
    with helper.client() as c:
        made = c.call(ApiKey.CREATE_DELEGATION_TOKEN, 3, {"owner_principal_type": "User",
                                                          "owner_principal_name": owner.name, "renewers": [],
                                                          "max_lifetime_ms": -1})
        def seen_all():
            got = {x["token_id"] for x in c.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": None})["tokens"]}
            return {mine["token_id"], made["token_id"]} <= got and got
        seen = wait_for(seen_all, 120, "the owner's tokens")
    return (mine["error_code"], made["error_code"]), (mine["token_id"] in seen, made["token_id"] in seen)
