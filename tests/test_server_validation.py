"""Bad names and numbers in every request type that carries them (empty group ids and
transactional ids, negative, zero and huge counts, illegal topic names, bad config values),
sent as raw frames to a live pk-server-start: each is answered with the error code (and text)
a Kafka 4.4 broker answers, never a traceback or a closed connection.

EXPECTED was recorded from a Kafka 4.4 broker whose internal topics exist (FindCoordinator
first), with topic `vt-b` (1 partition) created; test_oracle_validation.py re-checks it live.
"""

from __future__ import annotations

import time
import uuid

import pytest

from conftest import BrokerProcess, ProtocolClient

BIG = 2**31 - 1


def ct(name, np=1, rf=1, configs=()):
    """A CreateTopics v7 body for one topic."""
    return {"topics": [{"name": name, "num_partitions": np, "replication_factor": rf, "assignments": [],
                        "configs": [{"name": k, "value": v} for k, v in configs]}],
            "timeout_ms": 5000, "validate_only": False}


# (label, api key, version, body)
CASES = [
    ("ct np=0", 19, 7, ct("vt-a", 0)),
    ("ct np=-5", 19, 7, ct("vt-a", -5)),
    ("ct np=BIG", 19, 7, ct("vt-a", BIG)),
    ("ct rf=0", 19, 7, ct("vt-a", 1, 0)),
    ("ct rf=3", 19, 7, ct("vt-a", 1, 3)),
    ("ct rf=-5", 19, 7, ct("vt-a", 1, -5)),
    ("ct rf=32767", 19, 7, ct("vt-a", 1, 32767)),
    ("ct cfg bad int", 19, 7, ct("vt-a", 1, 1, [("retention.ms", "abc")])),
    ("ct cfg unknown", 19, 7, ct("vt-a", 1, 1, [("nope.nope", "1")])),
    ("ct cfg neg seg", 19, 7, ct("vt-a", 1, 1, [("segment.bytes", "-1")])),
    ("ct cfg bad policy", 19, 7, ct("vt-a", 1, 1, [("cleanup.policy", "zap")])),
    ("ct cfg minisr 0", 19, 7, ct("vt-a", 1, 1, [("min.insync.replicas", "0")])),
    ("ct cfg comp bad", 19, 7, ct("vt-a", 1, 1, [("compression.type", "zip")])),
    ("ct cfg maxmsg neg", 19, 7, ct("vt-a", 1, 1, [("max.message.bytes", "-1")])),
    ("ct cfg bigint", 19, 7, ct("vt-a", 1, 1, [("retention.ms", "99999999999999999999")])),
    ("ct cfg ts type", 19, 7, ct("vt-a", 1, 1, [("message.timestamp.type", "x")])),
    ("ct cfg bool", 19, 7, ct("vt-a", 1, 1, [("unclean.leader.election.enable", "yes")])),
    ("cp count 0", 37, 3, {"topics": [{"name": "vt-b", "count": 0, "assignments": None}], "timeout_ms": 5000, "validate_only": False}),
    ("cp count -1", 37, 3, {"topics": [{"name": "vt-b", "count": -1, "assignments": None}], "timeout_ms": 5000, "validate_only": False}),
    ("cp count BIG", 37, 3, {"topics": [{"name": "vt-b", "count": BIG, "assignments": None}], "timeout_ms": 5000, "validate_only": False}),
    ("cp __consumer_offsets", 37, 3, {"topics": [{"name": "__consumer_offsets", "count": 80, "assignments": None}], "timeout_ms": 5000, "validate_only": True}),
    ("cp __transaction_state", 37, 3, {"topics": [{"name": "__transaction_state", "count": 80, "assignments": None}], "timeout_ms": 5000, "validate_only": True}),
    ("ct __consumer_offsets", 19, 7, ct("__consumer_offsets")),
    ("ct __transaction_state", 19, 7, ct("__transaction_state")),
    ("join empty", 11, 9, {"group_id": "", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}),
    ("sync empty", 14, 5, {"group_id": "", "generation_id": 1, "member_id": "m"}),
    ("hb empty", 12, 4, {"group_id": "", "generation_id": 1, "member_id": "m"}),
    ("leave empty", 13, 5, {"group_id": "", "members": [{"member_id": "m"}]}),
    ("commit empty", 8, 9, {"group_id": "", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]}),
    ("commit v2 empty", 8, 2, {"group_id": "", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]}),
    ("commit neg offset", 8, 9, {"group_id": "vt-g1", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": -5}]}]}),
    ("commit neg partition", 8, 9, {"group_id": "vt-g1", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [{"name": "vt-b", "partitions": [{"partition_index": -1, "committed_offset": 5}]}]}),
    ("fetch empty v7", 9, 7, {"group_id": "", "topics": None}),
    ("fetch empty v9", 9, 9, {"groups": [{"group_id": "", "topics": None}]}),
    ("describe empty", 15, 5, {"groups": [""]}),
    ("delete empty", 42, 2, {"groups_names": [""]}),
    ("offsetdelete empty", 47, 0, {"group_id": "", "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0}]}]}),
    ("findcoord empty v3", 10, 3, {"key": "", "key_type": 0}),
    ("findcoord empty v4", 10, 4, {"coordinator_keys": [""], "key_type": 0}),
    ("findcoord txn empty v4", 10, 4, {"coordinator_keys": [""], "key_type": 1}),
    ("findcoord badtype", 10, 4, {"coordinator_keys": ["x"], "key_type": 7}),
    ("cghb empty", 68, 0, {"group_id": "", "member_id": "abcdefghijabcdefghij22", "member_epoch": 0, "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["vt-b"], "topic_partitions": []}),
    ("cgdesc empty", 69, 0, {"group_ids": [""]}),
    ("initpid empty", 22, 5, {"transactional_id": "", "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}),
    ("initpid timeout neg", 22, 5, {"transactional_id": "vt-t1", "transaction_timeout_ms": -1, "producer_id": -1, "producer_epoch": -1}),
    ("initpid timeout big", 22, 5, {"transactional_id": "vt-t1", "transaction_timeout_ms": BIG, "producer_id": -1, "producer_epoch": -1}),
    ("addparts empty v3", 24, 3, {"v3_and_below_transactional_id": "", "v3_and_below_producer_id": 1, "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [{"name": "vt-b", "partitions": [0]}]}),
    ("addoffsets empty tid", 25, 4, {"transactional_id": "", "producer_id": 1, "producer_epoch": 0, "group_id": "vt-g"}),
    ("addoffsets empty gid", 25, 4, {"transactional_id": "vt-t9", "producer_id": 1, "producer_epoch": 0, "group_id": ""}),
    ("endtxn empty", 26, 4, {"transactional_id": "", "producer_id": 1, "producer_epoch": 0, "committed": True}),
    ("txncommit empty tid", 28, 4, {"transactional_id": "", "group_id": "vt-g", "producer_id": 1, "producer_epoch": 0, "topics": []}),
    ("txncommit empty gid", 28, 4, {"transactional_id": "vt-t9", "group_id": "", "producer_id": 1, "producer_epoch": 0, "topics": []}),
    ("desctxn empty", 65, 0, {"transactional_ids": [""]}),
    ("deleterecords neg", 21, 2, {"topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "offset": -5}]}], "timeout_ms": 1000}),
    ("deleterecords big", 21, 2, {"topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "offset": 2**62}]}], "timeout_ms": 1000}),
    ("listoffsets neg part", 2, 9, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "vt-b", "partitions": [{"partition_index": -1, "current_leader_epoch": -1, "timestamp": -1}]}]}),
    ("listoffsets weird ts", 2, 9, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -99}]}]}),
    ("listoffsets iso 7", 2, 9, {"replica_id": -1, "isolation_level": 7, "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}),
    ("fetch neg offset", 1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1000, "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [{"topic": "vt-b", "partitions": [{"partition": 0, "fetch_offset": -5, "partition_max_bytes": 1000}]}], "forgotten_topics_data": [], "rack_id": ""}),
    ("fetch neg maxbytes", 1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": -1, "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [{"topic": "vt-b", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": -1}]}], "forgotten_topics_data": [], "rack_id": ""}),
    ("fetch iso 5", 1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1000, "isolation_level": 5, "session_id": 0, "session_epoch": -1, "topics": [{"topic": "vt-b", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1000}]}], "forgotten_topics_data": [], "rack_id": ""}),
    ("produce acks 5", 0, 9, {"transactional_id": None, "acks": 5, "timeout_ms": 1000, "topic_data": []}),
    ("produce empty tid", 0, 9, {"transactional_id": "", "acks": 1, "timeout_ms": 1000, "topic_data": []}),
    ("metadata bad name", 3, 12, {"topics": [{"topic_id": uuid.UUID(int=0), "name": "a/b"}], "allow_auto_topic_creation": False}),
    ("alterconfigs bad", 33, 2, {"resources": [{"resource_type": 2, "resource_name": "vt-b", "configs": [{"name": "retention.ms", "value": "x"}]}], "validate_only": True}),
    ("incalter bad", 44, 1, {"resources": [{"resource_type": 2, "resource_name": "vt-b", "configs": [{"name": "retention.ms", "config_operation": 0, "value": "-7"}]}], "validate_only": True}),
    ("incalter bad op", 44, 1, {"resources": [{"resource_type": 2, "resource_name": "vt-b", "configs": [{"name": "retention.ms", "config_operation": 9, "value": "1"}]}], "validate_only": True}),
    ("incalter empty name", 44, 1, {"resources": [{"resource_type": 2, "resource_name": "", "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1"}]}], "validate_only": True}),
    # dynamic broker configs and group configs (validate_only: nothing is kept)
    ("alterconfigs broker fixed", 33, 2, {"resources": [{"resource_type": 4, "resource_name": "0", "configs": [{"name": "broker.id", "value": "3"}]}], "validate_only": True}),
    ("alterconfigs broker ok", 33, 2, {"resources": [{"resource_type": 4, "resource_name": "0", "configs": [{"name": "sasl.kerberos.min.time.before.relogin", "value": "58000"}]}], "validate_only": True}),
    ("incalter broker default per-broker", 44, 1, {"resources": [{"resource_type": 4, "resource_name": "", "configs": [{"name": "ssl.client.auth", "config_operation": 0, "value": "none"}]}], "validate_only": True}),
    ("incalter broker bad value", 44, 1, {"resources": [{"resource_type": 4, "resource_name": "0", "configs": [{"name": "log.retention.bytes", "config_operation": 0, "value": "lots"}]}], "validate_only": True}),
    ("incalter broker unprefixed ssl", 44, 1, {"resources": [{"resource_type": 4, "resource_name": "0", "configs": [{"name": "ssl.truststore.location", "config_operation": 0, "value": "/x"}]}], "validate_only": True}),
    ("incalter group bad", 44, 1, {"resources": [{"resource_type": 32, "resource_name": "vt-g", "configs": [{"name": "consumer.heartbeat.interval.ms", "config_operation": 0, "value": "1"}]}], "validate_only": True}),
    ("incalter group unknown", 44, 1, {"resources": [{"resource_type": 32, "resource_name": "vt-g", "configs": [{"name": "nope", "config_operation": 0, "value": "1"}]}], "validate_only": True}),
    ("desccfg empty group", 32, 4, {"resources": [{"resource_type": 32, "resource_name": "", "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}),
    ("incalter group append int", 44, 1, {"resources": [{"resource_type": 32, "resource_name": "vt-g", "configs": [{"name": "consumer.session.timeout.ms", "config_operation": 2, "value": "5"}]}], "validate_only": True}),
    ("incalter group bad op", 44, 1, {"resources": [{"resource_type": 32, "resource_name": "vt-g", "configs": [{"name": "consumer.session.timeout.ms", "config_operation": 9, "value": "5"}]}], "validate_only": True}),
    ("incalter broker bad op", 44, 1, {"resources": [{"resource_type": 4, "resource_name": "0", "configs": [{"name": "num.io.threads", "config_operation": 9, "value": "1"}]}], "validate_only": True}),
    ("incalter broker bad id", 44, 1, {"resources": [{"resource_type": 4, "resource_name": "x", "configs": [{"name": "num.io.threads", "config_operation": 0, "value": "8"}]}], "validate_only": True}),
    ("alterconfigs other broker", 33, 2, {"resources": [{"resource_type": 4, "resource_name": "5", "configs": [{"name": "num.io.threads", "value": "8"}]}], "validate_only": True}),
    ("alterconfigs group ok", 33, 2, {"resources": [{"resource_type": 32, "resource_name": "vt-g", "configs": [{"name": "share.isolation.level", "value": "read_committed"}]}], "validate_only": True}),
    ("describeconfigs badtype", 32, 4, {"resources": [{"resource_type": 99, "resource_name": "x", "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}),
    ("listtxn neg dur", 66, 1, {"state_filters": [], "producer_id_filters": [], "duration_filter": -5}),
    ("listgroups badstate", 16, 5, {"states_filter": ["Bogus"], "types_filter": ["zzz"]}),
    ("describeproducers neg", 61, 0, {"topics": [{"name": "vt-b", "partition_indexes": [-1, 99]}]}),
    ("offsetforleader neg", 23, 4, {"replica_id": -1, "topics": [{"topic": "vt-b", "partitions": [{"partition": -1, "current_leader_epoch": -1, "leader_epoch": -5}]}]}),
    ("sync empty v5 typed", 14, 5, {"group_id": "", "generation_id": 1, "member_id": "m", "protocol_type": "consumer", "protocol_name": "range"}),
    ("sync v4 empty", 14, 4, {"group_id": "", "generation_id": 1, "member_id": "m"}),
    ("hb v0 empty", 12, 0, {"group_id": "", "generation_id": 1, "member_id": "m"}),
    ("leave v0 empty", 13, 0, {"group_id": "", "member_id": "m"}),
    ("txncommit empty tid parts", 28, 4, {"transactional_id": "", "group_id": "vt-g", "producer_id": 1, "producer_epoch": 0, "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]}),
    ("txncommit empty gid parts", 28, 4, {"transactional_id": "vt-t9", "group_id": "", "producer_id": 1, "producer_epoch": 0, "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]}),
    ("addparts v4 empty", 24, 4, {"transactions": [{"transactional_id": "", "producer_id": 1, "producer_epoch": 0, "verify_only": False, "topics": [{"name": "vt-b", "partitions": [0]}]}]}),
    ("endtxn v5 empty", 26, 5, {"transactional_id": "", "producer_id": 1, "producer_epoch": 0, "committed": False}),
    ("initpid v0 empty", 22, 0, {"transactional_id": "", "transaction_timeout_ms": 60000}),
    ("ct np=BIG validate", 19, 7, {**ct("vt-c", BIG), "validate_only": True}),
    ("ct assignments empty replicas", 19, 7, {"topics": [{"name": "vt-c", "num_partitions": -1, "replication_factor": -1, "assignments": [{"partition_index": 0, "broker_ids": []}], "configs": []}], "timeout_ms": 5000, "validate_only": True}),
    ("ct assignments bad broker", 19, 7, {"topics": [{"name": "vt-c", "num_partitions": -1, "replication_factor": -1, "assignments": [{"partition_index": 0, "broker_ids": [7]}], "configs": []}], "timeout_ms": 5000, "validate_only": True}),
    ("ct name too long", 19, 7, ct("x" * 250)),
    ("ct name slash", 19, 7, ct("../etc")),
    ("cp count 1 of 1", 37, 3, {"topics": [{"name": "vt-b", "count": 1, "assignments": None}], "timeout_ms": 5000, "validate_only": True}),
    ("cp unknown topic", 37, 3, {"topics": [{"name": "nope-nope", "count": 3, "assignments": None}], "timeout_ms": 5000, "validate_only": True}),
    ("join v0 empty", 11, 0, {"group_id": "", "session_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}),
    ("join session neg", 11, 9, {"group_id": "vt-g2", "session_timeout_ms": -1, "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}),
    ("join session huge", 11, 9, {"group_id": "vt-g2", "session_timeout_ms": 2**31-1, "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}),
    ("commit metadata huge", 8, 9, {"group_id": "vt-g1", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 1, "committed_metadata": "m" * 5000}]}]}),
    ("dtp limit 0", 75, 0, {"topics": [{"name": "vt-b"}], "response_partition_limit": 0, "cursor": None}),
    ("dtp limit neg", 75, 0, {"topics": [{"name": "vt-b"}], "response_partition_limit": -1, "cursor": None}),
    ("dtp bad name", 75, 0, {"topics": [{"name": "a/b"}], "response_partition_limit": 10, "cursor": None}),
    ("dtp cursor neg", 75, 0, {"topics": [{"name": "vt-b"}], "response_partition_limit": 10, "cursor": {"topic_name": "vt-b", "partition_index": -5}}),
    ("dld bad name", 35, 4, {"topics": [{"topic": "a/b", "partitions": [0]}]}),
    ("dld neg partition", 35, 4, {"topics": [{"topic": "vt-b", "partitions": [-1]}]}),
    ("wtm bad topic", 27, 1, {"markers": [{"producer_id": 5, "producer_epoch": 0, "transaction_result": False, "topics": [{"name": "a/b", "partition_indexes": [0, -1]}], "coordinator_epoch": 0}]}),
    ("listtxn bad state", 66, 1, {"state_filters": ["Bogus"], "producer_id_filters": [-7], "duration_filter": -1}),
    ("dt empty name", 20, 6, {"topics": [{"name": "", "topic_id": uuid.UUID(int=0)}], "timeout_ms": 1000}),
    ("dt bad name", 20, 6, {"topics": [{"name": "a/b", "topic_id": uuid.UUID(int=0)}], "timeout_ms": 1000}),
    ("dt v5 empty", 20, 5, {"topic_names": [""], "timeout_ms": 1000}),
    ("dr neg partition", 21, 2, {"topics": [{"name": "vt-b", "partitions": [{"partition_index": -1, "offset": 0}]}], "timeout_ms": 1000}),
    ("dr bad topic", 21, 2, {"topics": [{"name": "", "partitions": [{"partition_index": 0, "offset": 0}]}], "timeout_ms": 1000}),
    ("cp neg assignment", 37, 3, {"topics": [{"name": "vt-b", "count": 2, "assignments": [{"broker_ids": [-1]}]}], "timeout_ms": 5000, "validate_only": True}),
    ("cp empty name", 37, 3, {"topics": [{"name": "", "count": 2, "assignments": None}], "timeout_ms": 5000, "validate_only": True}),
    ("describecluster", 60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 7}),
    ("listgroups v5", 16, 5, {"states_filter": [], "types_filter": ["bogus"]}),
    ("join v9 empty protocols", 11, 9, {"group_id": "vt-g3", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer", "protocols": []}),
    ("join bad rebalance", 11, 9, {"group_id": "vt-g3", "session_timeout_ms": 10000, "rebalance_timeout_ms": -7, "member_id": "", "protocol_type": "", "protocols": [{"name": "range", "metadata": b""}]}),
    ("cghb neg epoch", 68, 0, {"group_id": "vt-g4", "member_id": "abcdefghijabcdefghij22", "member_epoch": -9, "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["vt-b"], "topic_partitions": []}),
    ("cghb neg rebalance", 68, 0, {"group_id": "vt-g4", "member_id": "abcdefghijabcdefghij22", "member_epoch": 0, "rebalance_timeout_ms": -9, "subscribed_topic_names": ["vt-b"], "topic_partitions": []}),
    ("cghb empty member", 68, 1, {"group_id": "vt-g4", "member_id": "", "member_epoch": 0, "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["vt-b"], "topic_partitions": []}),
    ("commit v2 neg retention", 8, 2, {"group_id": "vt-g1", "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -99, "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]}),
    ("fetch v7 neg partition", 9, 7, {"group_id": "vt-g1", "topics": [{"name": "vt-b", "partition_indexes": [-1, 5]}]}),
    ("desccfg empty topic", 32, 4, {"resources": [{"resource_type": 2, "resource_name": "", "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}),
    ("desccfg bad topic", 32, 4, {"resources": [{"resource_type": 2, "resource_name": "a/b", "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}),
    ("desccfg bad broker", 32, 4, {"resources": [{"resource_type": 4, "resource_name": "x", "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}),
    ("desccfg other broker", 32, 4, {"resources": [{"resource_type": 4, "resource_name": "7", "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}),
    ("alter bad topic", 33, 2, {"resources": [{"resource_type": 2, "resource_name": "a/b", "configs": [{"name": "retention.ms", "value": "1"}]}], "validate_only": True}),
    ("descproducers bad", 61, 0, {"topics": [{"name": "", "partition_indexes": [0]}]}),
]


# label -> [(error code, error message)] of every non-zero error in the answer, in order
EXPECTED = {
    'ct np=0': [(37, 'Number of partitions was set to an invalid non-positive value.')],
    'ct np=-5': [(37, 'Number of partitions was set to an invalid non-positive value.')],
    'ct np=BIG': [(44, 'Excessively large number of partitions per request.')],
    'ct rf=0': [(38, 'Replication factor must be larger than 0, or -1 to use the default value.')],
    'ct rf=3': [(38, 'Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned.')],
    'ct rf=-5': [(38, 'Replication factor must be larger than 0, or -1 to use the default value.')],
    'ct rf=32767': [(38, 'Unable to replicate the partition 32767 time(s): The target replication factor of 32767 cannot be reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned.')],
    'ct cfg bad int': [(40, 'Invalid value abc for configuration retention.ms: Not a number of type LONG')],
    'ct cfg unknown': [(40, 'Unknown topic config name: nope.nope')],
    'ct cfg bad policy': [(40, 'Invalid value zap for configuration cleanup.policy: String must be one of: compact, delete')],
    'ct cfg minisr 0': [(40, 'Invalid value 0 for configuration min.insync.replicas: Value must be at least 1')],
    'ct cfg comp bad': [(40, 'Invalid value zip for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer')],
    'ct cfg maxmsg neg': [(40, 'Invalid value -1 for configuration max.message.bytes: Value must be at least 0')],
    'ct cfg bigint': [(40, 'Invalid value 99999999999999999999 for configuration retention.ms: Not a number of type LONG')],
    'ct cfg ts type': [(40, 'Invalid value x for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime')],
    'ct cfg bool': [(40, 'Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or false')],
    'cp count 0': [(37, 'The topic vt-b currently has 1 partition(s); 0 would not be an increase.')],
    'cp count -1': [(37, 'The topic vt-b currently has 1 partition(s); -1 would not be an increase.')],
    'cp count BIG': [(44, 'Excessively large number of additional partitions per request.')],
    'join empty': [(24, None)],
    'sync empty': [(23, None)],
    'hb empty': [(24, None)],
    'leave empty': [(24, None)],
    'commit empty': [],
    'commit v2 empty': [],
    'commit neg offset': [],
    'commit neg partition': [(3, None)],
    'fetch empty v7': [],
    'fetch empty v9': [],
    'describe empty': [],
    'delete empty': [],
    'offsetdelete empty': [(24, None)],
    'findcoord empty v3': [],
    'findcoord empty v4': [],
    'findcoord txn empty v4': [],
    'findcoord badtype': [(42, 'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.')],
    'cghb empty': [(42, "GroupId can't be empty.")],
    'cgdesc empty': [(24, None)],
    'initpid empty': [(42, None)],
    'initpid timeout neg': [(50, None)],
    'initpid timeout big': [(50, None)],
    'addparts empty v3': [(42, None)],
    'addoffsets empty tid': [(42, None)],
    'addoffsets empty gid': [(49, None)],
    'endtxn empty': [(42, None)],
    'txncommit empty tid': [],
    'txncommit empty gid': [],
    'desctxn empty': [(42, None)],
    'deleterecords neg': [(1, None)],
    'deleterecords big': [(1, None)],
    'listoffsets neg part': [(3, None)],
    'listoffsets weird ts': [(35, None)],
    'fetch neg offset': [(1, None)],
    'fetch neg maxbytes': [],
    'produce acks 5': [],
    'produce empty tid': [],
    'metadata bad name': [(17, None)],
    'alterconfigs bad': [(40, 'Invalid value x for configuration retention.ms: Not a number of type LONG')],
    'alterconfigs broker fixed': [(42, 'Cannot update these configs dynamically: [broker.id]')],
    'alterconfigs broker ok': [],
    'incalter broker default per-broker': [(42, 'Cannot update these configs at default cluster level, broker id must be specified: [ssl.client.auth]')],
    'incalter broker bad value': [(42, 'Invalid value lots for configuration log.retention.bytes: Not a number of type LONG')],
    'incalter broker unprefixed ssl': [(42, 'These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.truststore.location]')],
    # (the suite's brokers take KIP-848 heartbeats from 1 s: kafka_oracle.GROUP_HEARTBEATS)
    'incalter group bad': [(40, 'consumer.heartbeat.interval.ms must be in the range 1000 to 15000 inclusive.')],
    'incalter group unknown': [(40, 'Unknown group config name: nope')],
    'alterconfigs group ok': [],
    'desccfg empty group': [(42, 'Group name must not be empty')],
    'incalter group append int': [(40, "Can't APPEND to key consumer.session.timeout.ms because its type is not LIST.")],
    'incalter group bad op': [(-1, None)],
    'incalter broker bad op': [(42, 'Unknown operations type 9')],
    'incalter broker bad id': [(42, 'Node id must be an integer, but it is: x')],
    'alterconfigs other broker': [(42, 'Unexpected broker id, expected 0, but received 5')],
    'incalter bad': [(40, 'Invalid value -7 for configuration retention.ms: Value must be at least -1')],
    'incalter empty name': [(42, 'Default topic resources are not allowed.')],
    'describeconfigs badtype': [(42, 'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.')],
    'listtxn neg dur': [],
    'listgroups badstate': [],
    'describeproducers neg': [(3, None), (3, None)],
    'offsetforleader neg': [(3, None)],
    'sync empty v5 typed': [(24, None)],
    'sync v4 empty': [(24, None)],
    'hb v0 empty': [(24, None)],
    'leave v0 empty': [(24, None)],
    'txncommit empty tid parts': [(42, None)],
    'txncommit empty gid parts': [(24, None)],
    'addparts v4 empty': [(42, None)],
    'endtxn v5 empty': [(42, None)],
    'initpid v0 empty': [(42, None)],
    'ct np=BIG validate': [(44, 'Excessively large number of partitions per request.')],
    'ct assignments empty replicas': [(39, 'The manual partition assignment includes an empty replica list.')],
    'ct assignments bad broker': [(39, 'The manual partition assignment includes broker 7, but no such broker is registered.')],
    'ct name too long': [(17, "Topic name is invalid: the length of 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' is longer than the max allowed length 249")],
    'ct name slash': [(17, "Topic name is invalid: '../etc' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")],
    'cp count 1 of 1': [(37, 'Topic already has 1 partition(s).')],
    'cp unknown topic': [(3, None)],
    'join v0 empty': [(24, None)],
    'join session neg': [(26, None)],
    'join session huge': [(26, None)],
    'commit metadata huge': [(12, None)],
    'dtp limit 0': [],
    'dtp limit neg': [],
    'dtp bad name': [(17, None)],
    'dtp cursor neg': [(42, None)],
    'dld bad name': [],
    'dld neg partition': [],
    'wtm bad topic': [(3, None), (3, None)],
    'listtxn bad state': [],
    'dt empty name': [(3, 'This server does not host this topic-partition.')],
    'dt bad name': [(3, 'This server does not host this topic-partition.')],
    'dt v5 empty': [(3, 'This server does not host this topic-partition.')],
    'dr neg partition': [(3, None)],
    'dr bad topic': [(3, None)],
    'cp neg assignment': [(39, 'The manual partition assignment includes broker -1, but no such broker is registered.')],
    'cp empty name': [(3, None)],
    'describecluster': [(115, 'Unsupported endpoint type 7')],
    'listgroups v5': [],
    'join v9 empty protocols': [(23, None)],
    'join bad rebalance': [(23, None)],
    'cghb neg epoch': [(42, 'MemberEpoch is invalid.')],
    'cghb neg rebalance': [],
    'cghb empty member': [(42, "MemberId can't be empty.")],
    'commit v2 neg retention': [],
    'fetch v7 neg partition': [],
    'desccfg empty topic': [(17, 'Topic name is invalid: the empty string is not allowed')],
    'desccfg bad topic': [(17, "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")],
    'desccfg bad broker': [(42, 'Broker id must be an integer, but it is: x')],
    'desccfg other broker': [(42, 'Unexpected broker id, expected 0 or empty string, but received 7')],
    'alter bad topic': [(17, "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")],
    'descproducers bad': [(17, 'Topic name is invalid: the empty string is not allowed')],
    'listoffsets iso 7': [(-1, None)],  # (Kafka fails the partition: IsolationLevel.forId throws)
}


def errors(value) -> list:
    """Every non-zero (error code, message) of an answer, depth first."""
    found = []
    if isinstance(value, dict):
        for key in ("error_code", "partition_error_code"):
            if value.get(key):
                found.append((value[key], value.get("error_message")))
        for key, inner in value.items():
            if key not in ("error_code", "partition_error_code"):
                found += errors(inner)
    elif isinstance(value, list):
        for inner in value:
            found += errors(inner)
    return found


def prepare(address) -> ProtocolClient:
    """The state EXPECTED was recorded in: both coordinators' internal topics, topic vt-b."""
    client = ProtocolClient(address, timeout=30)
    deadline = time.monotonic() + 60
    for key_type in (0, 1):  # (a Kafka broker answers COORDINATOR_NOT_AVAILABLE while it creates them)
        while client.call(10, 4, {"coordinator_keys": ["x"], "key_type": key_type})["coordinators"][0]["error_code"]:
            assert time.monotonic() < deadline, "no coordinator"
            time.sleep(0.2)
    assert client.call(19, 7, ct("vt-b"))["topics"][0]["error_code"] in (0, 36)  # 36: an earlier run's
    return client


def answers(address) -> dict:
    client = prepare(address)
    got = {}
    for label, key, version, body in CASES:
        if label in EXPECTED:
            got[label] = errors(client.call(key, version, body))
    client.close()
    return got


@pytest.fixture(scope="module")
def pk_broker(tmp_path_factory):
    broker = BrokerProcess(str(tmp_path_factory.mktemp("validation") / "data")).start()
    yield broker
    broker.stop()


def test_bad_names_and_numbers_get_kafkas_answers(pk_broker):
    got = answers(pk_broker.port)
    assert {k: v for k, v in got.items() if v != EXPECTED[k]} == {}
    log = pk_broker.log()
    assert "Traceback" not in log, log


def test_deleted_internal_topics_come_back_and_group_commits_work_again(pk_broker):
    """Kafka 4.4 lets a client delete __consumer_offsets and __transaction_state; its
    coordinators create them again (FindCoordinator), after which commits work."""
    client = prepare(pk_broker.port)  # both internal topics exist (the test may run first)
    client.call(19, 7, ct("vt-internal"))
    commit = {"group_id": "g-int", "generation_id_or_member_epoch": -1, "member_id": "",
              "topics": [{"name": "vt-internal", "partitions": [{"partition_index": 0, "committed_offset": 7}]}]}
    assert errors(client.call(8, 9, commit)) == []
    deleted = client.call(20, 6, {"topics": [{"name": n, "topic_id": uuid.UUID(int=0)}
                                             for n in ("__consumer_offsets", "__transaction_state")],
                                  "timeout_ms": 5000})
    assert errors(deleted) == []

    def internal() -> dict:
        listed = client.call(3, 12, {"topics": None, "allow_auto_topic_creation": False})["topics"]
        return {t["name"]: len(t["partitions"]) for t in listed if t["is_internal"]}

    assert internal() == {}
    for key_type in (0, 1):
        found = client.call(10, 4, {"coordinator_keys": ["g-int"], "key_type": key_type})["coordinators"][0]
        assert (found["error_code"], found["node_id"]) == (0, 0)
    assert internal() == {"__consumer_offsets": 50, "__transaction_state": 50}
    fetch = {"groups": [{"group_id": "g-int", "topics": None}], "require_stable": False}
    assert client.call(9, 9, fetch)["groups"][0]["topics"] == []  # the old offsets went with the topic
    commit["topics"][0]["partitions"][0]["committed_offset"] = 9
    assert errors(client.call(8, 9, commit)) == []
    offsets = client.call(9, 9, fetch)["groups"][0]["topics"][0]["partitions"]
    assert [(p["partition_index"], p["committed_offset"]) for p in offsets] == [(0, 9)]
    client.close()
    assert "Traceback" not in pk_broker.log()


def test_a_broker_started_without_consumer_offsets_creates_it_for_the_first_group(tmp_path):
    from pk.engine.engine import Engine

    data = str(tmp_path / "data")
    engine = Engine(data)
    engine.create_topic("vt-b", 1)
    engine.delete_topic("__consumer_offsets")
    engine.close()
    broker = BrokerProcess(data).start()
    try:
        with ProtocolClient(broker.port) as client:
            found = client.call(10, 4, {"coordinator_keys": ["g-start"], "key_type": 0})["coordinators"][0]
            assert found["error_code"] == 0
            commit = {"group_id": "g-start", "generation_id_or_member_epoch": -1, "member_id": "",
                      "topics": [{"name": "vt-b", "partitions": [{"partition_index": 0, "committed_offset": 3}]}]}
            assert errors(client.call(8, 9, commit)) == []
            fetched = client.call(9, 9, {"groups": [{"group_id": "g-start", "topics": None}]})
            assert [p["committed_offset"] for p in fetched["groups"][0]["topics"][0]["partitions"]] == [3]
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
