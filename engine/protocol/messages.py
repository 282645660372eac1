"""What pk's broker advertises, over the codecs of every message Kafka defines.

The codecs themselves are generated (kafka_messages.py, written by scripts/gen-messages from
Kafka's own message schemas): one declarative definition per request and response, every
version a Kafka 4.4 broker knows, flexible versions included. This module says which of
those pk's broker *serves*: ``SUPPORTED_VERSIONS`` is what ApiVersions advertises (but for
Produce's lower bound, see ``advertised``), api key -> (min, max), and a request outside it
is refused before it is decoded (frames.parse_request). docs/protocol.md explains each range.

Lookup::

    REQUESTS[api_key]  -> Message      RESPONSES[api_key] -> Message
    SUPPORTED_VERSIONS[api_key] -> (min, max)
    API_NAMES[api_key] -> "Produce"    ApiKey.PRODUCE == 0
"""

from __future__ import annotations

from .kafka_messages import API_NAMES, REQUESTS, RESPONSES, ApiKey

__all__ = ["ApiKey", "API_NAMES", "SUPPORTED_VERSIONS", "REQUESTS", "RESPONSES", "INT32_MIN", "advertised"]

INT32_MIN = -2147483648  # "authorized operations not requested"

# What the broker advertises in ApiVersions (sorted by key). Nothing else.
SUPPORTED_VERSIONS: dict[int, tuple[int, int]] = {int(k): v for k, v in {
    ApiKey.PRODUCE: (3, 13),
    ApiKey.FETCH: (4, 18),
    ApiKey.LIST_OFFSETS: (1, 11),
    ApiKey.METADATA: (0, 13),
    ApiKey.OFFSET_COMMIT: (2, 10),
    ApiKey.OFFSET_FETCH: (1, 10),
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.JOIN_GROUP: (0, 9),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 6),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.SASL_HANDSHAKE: (0, 1),
    ApiKey.API_VERSIONS: (0, 5),
    ApiKey.CREATE_TOPICS: (2, 7),
    ApiKey.DELETE_TOPICS: (1, 6),
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.INIT_PRODUCER_ID: (0, 5),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 4),
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 5),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 4),
    ApiKey.END_TXN: (0, 5),
    ApiKey.WRITE_TXN_MARKERS: (1, 2),
    ApiKey.TXN_OFFSET_COMMIT: (0, 6),
    ApiKey.DESCRIBE_ACLS: (1, 3),
    ApiKey.CREATE_ACLS: (1, 3),
    ApiKey.DELETE_ACLS: (1, 3),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),
    ApiKey.ALTER_CONFIGS: (0, 2),
    ApiKey.ALTER_REPLICA_LOG_DIRS: (1, 2),
    ApiKey.DESCRIBE_LOG_DIRS: (1, 5),
    ApiKey.SASL_AUTHENTICATE: (0, 2),
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.CREATE_DELEGATION_TOKEN: (1, 3),
    ApiKey.RENEW_DELEGATION_TOKEN: (1, 2),
    ApiKey.EXPIRE_DELEGATION_TOKEN: (1, 2),
    ApiKey.DESCRIBE_DELEGATION_TOKEN: (1, 3),
    ApiKey.DELETE_GROUPS: (0, 3),
    ApiKey.ELECT_LEADERS: (0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: (0, 1),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: (0, 0),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.UPDATE_FEATURES: (0, 2),
    ApiKey.DESCRIBE_CLUSTER: (0, 2),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 2),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (0, 1),
    ApiKey.CONSUMER_GROUP_DESCRIBE: (0, 1),
    ApiKey.LIST_CONFIG_RESOURCES: (0, 1),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: (0, 0),
    ApiKey.SHARE_GROUP_HEARTBEAT: (1, 1),
    ApiKey.SHARE_GROUP_DESCRIBE: (1, 1),
    ApiKey.SHARE_FETCH: (1, 2),
    ApiKey.SHARE_ACKNOWLEDGE: (1, 2),
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: (0, 0),
    ApiKey.READ_SHARE_GROUP_STATE: (0, 0),
    ApiKey.WRITE_SHARE_GROUP_STATE: (0, 1),
    ApiKey.DELETE_SHARE_GROUP_STATE: (0, 0),
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: (0, 1),
    ApiKey.STREAMS_GROUP_HEARTBEAT: (0, 1),
    ApiKey.STREAMS_GROUP_DESCRIBE: (0, 1),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: (0, 1),
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: (0, 0),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: (0, 0),
}.items()}

assert all(REQUESTS[k].min_version <= lo <= hi <= REQUESTS[k].max_version
           for k, (lo, hi) in SUPPORTED_VERSIONS.items())

# Kafka 4 advertises Produce from v0 (old librdkafka releases refuse a broker that does not)
# but serves it from v3, where its codec starts: a v0-2 request is refused as unsupported.
ADVERTISED_MIN_VERSIONS = {int(ApiKey.PRODUCE): 0}


def advertised(versions: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """What ApiVersions says of served `versions`: the same, but for ADVERTISED_MIN_VERSIONS."""
    return {k: (ADVERTISED_MIN_VERSIONS.get(k, lo), hi) for k, (lo, hi) in versions.items()}
