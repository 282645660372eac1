"""The remote backends of the admin tools: a Kafka cluster through confluent-kafka's AdminClient.

Three implementations of interfaces the commands are written against, so that each tool
has one copy of its logic and two backends (the bundled engine, and this):

- `KafkaTopicsBackend`: commands/backend.py's Backend, for pk-topics (Kafka 4.4's TopicCommand
  in --bootstrap-server mode: Metadata, DescribeConfigs, DescribeCluster, CreateTopics,
  CreatePartitions, DeleteTopics).
- `KafkaOffsets`: get_offsets.OffsetsSource, for GetOffsetShell (Metadata, ListOffsets).
- `KafkaGroupsBackend`: consumer_groups.GroupBackend, for ConsumerGroupCommand (ListGroups,
  DescribeGroups, OffsetFetch, OffsetCommit, DeleteGroups, OffsetDelete, ListOffsets).

`KafkaAdmin` wraps the AdminClient with Kafka's client semantics: every call is bounded by
the tool's timeout (default.api.timeout.ms, or ConsumerGroupCommand's --timeout), and a
cluster that cannot be reached fails with the Java admin client's text,
`Timed out waiting for a node assignment. Call: <call>`; an authentication failure ends the
wait at once. librdkafka errors become `AdminError`s carrying Kafka's exception class and
message (the broker's message when it sent one, else Errors.java's default text).

confluent_kafka is imported only inside this module's functions, and this module only when
a tool is given --bootstrap-server.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Callable, Sequence

from pk.engine.errors import KafkaError, TopicExistsError

from ..backend import PartitionInfo, TopicInfo
from ..client_config import librdkafka_error
from ..errors import ClientConfigError

ERRORS_PACKAGE = "org.apache.kafka.common.errors."
TIMEOUT_EXCEPTION = ERRORS_PACKAGE + "TimeoutException"
NODE_ASSIGNMENT_TIMEOUT = "Timed out waiting for a node assignment. Call: {}"

# Kafka's Errors.java (apache/kafka clients/.../common/protocol/Errors.java): code -> (error
# name, exception class (in org.apache.kafka.common.errors unless qualified), default message),
# for the errors the admin tools meet.
JAVA_ERRORS = {
    -1: ('UNKNOWN_SERVER_ERROR', 'UnknownServerException',
         'The server experienced an unexpected error when processing the request.'),
    1: ('OFFSET_OUT_OF_RANGE', 'OffsetOutOfRangeException',
         'The requested offset is not within the range of offsets maintained by the server.'),
    2: ('CORRUPT_MESSAGE', 'CorruptRecordException',
         'This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted'
         ' topic, or is otherwise corrupt.'),
    3: ('UNKNOWN_TOPIC_OR_PARTITION', 'UnknownTopicOrPartitionException',
         'This server does not host this topic-partition.'),
    5: ('LEADER_NOT_AVAILABLE', 'LeaderNotAvailableException',
         'There is no leader for this topic-partition as we are in the middle of a leadership election.'),
    6: ('NOT_LEADER_OR_FOLLOWER', 'NotLeaderOrFollowerException',
         'For requests intended only for the leader, this error indicates that the broker is not the '
         'current leader. For requests intended for any replica, this error indicates that the broker is '
         'not a replica of the topic partition.'),
    7: ('REQUEST_TIMED_OUT', 'TimeoutException',
         'The request timed out.'),
    8: ('BROKER_NOT_AVAILABLE', 'BrokerNotAvailableException',
         'The broker is not available.'),
    10: ('MESSAGE_TOO_LARGE', 'RecordTooLargeException',
         'The request included a message larger than the max message size the server will accept.'),
    13: ('NETWORK_EXCEPTION', 'NetworkException',
         'The server disconnected before a response was received.'),
    14: ('COORDINATOR_LOAD_IN_PROGRESS', 'CoordinatorLoadInProgressException',
         "The coordinator is loading and hence can't process requests."),
    15: ('COORDINATOR_NOT_AVAILABLE', 'CoordinatorNotAvailableException',
         'The coordinator is not available.'),
    16: ('NOT_COORDINATOR', 'NotCoordinatorException',
         'This is not the correct coordinator.'),
    17: ('INVALID_TOPIC_EXCEPTION', 'InvalidTopicException',
         'The request attempted to perform an operation on an invalid topic.'),
    19: ('NOT_ENOUGH_REPLICAS', 'NotEnoughReplicasException',
         'Messages are rejected since there are fewer in-sync replicas than required.'),
    22: ('ILLEGAL_GENERATION', 'IllegalGenerationException',
         'Specified group generation id is not valid.'),
    24: ('INVALID_GROUP_ID', 'InvalidGroupIdException',
         'The configured groupId is invalid.'),
    25: ('UNKNOWN_MEMBER_ID', 'UnknownMemberIdException',
         'The coordinator is not aware of this member.'),
    27: ('REBALANCE_IN_PROGRESS', 'RebalanceInProgressException',
         'The group is rebalancing, so a rejoin is needed.'),
    29: ('TOPIC_AUTHORIZATION_FAILED', 'TopicAuthorizationException',
         'Topic authorization failed.'),
    30: ('GROUP_AUTHORIZATION_FAILED', 'GroupAuthorizationException',
         'Group authorization failed.'),
    31: ('CLUSTER_AUTHORIZATION_FAILED', 'ClusterAuthorizationException',
         'Cluster authorization failed.'),
    33: ('UNSUPPORTED_SASL_MECHANISM', 'UnsupportedSaslMechanismException',
         'The broker does not support the requested SASL mechanism.'),
    34: ('ILLEGAL_SASL_STATE', 'IllegalSaslStateException',
         'Request is not valid given the current SASL state.'),
    35: ('UNSUPPORTED_VERSION', 'UnsupportedVersionException',
         'The version of API is not supported.'),
    36: ('TOPIC_ALREADY_EXISTS', 'TopicExistsException',
         'Topic with this name already exists.'),
    37: ('INVALID_PARTITIONS', 'InvalidPartitionsException',
         'Number of partitions is below 1.'),
    38: ('INVALID_REPLICATION_FACTOR', 'InvalidReplicationFactorException',
         'Replication factor is below 1 or larger than the number of available brokers.'),
    39: ('INVALID_REPLICA_ASSIGNMENT', 'InvalidReplicaAssignmentException',
         'Replica assignment is invalid.'),
    40: ('INVALID_CONFIG', 'InvalidConfigurationException',
         'Configuration is invalid.'),
    41: ('NOT_CONTROLLER', 'NotControllerException',
         'This is not the correct controller for this cluster.'),
    42: ('INVALID_REQUEST', 'InvalidRequestException',
         'This most likely occurs because of a request being malformed by the client library or the '
         'message was sent to an incompatible broker. See the broker logs for more details.'),
    44: ('POLICY_VIOLATION', 'PolicyViolationException',
         'Request parameters do not satisfy the configured policy.'),
    56: ('KAFKA_STORAGE_ERROR', 'KafkaStorageException',
         'Disk error when trying to access log file on the disk.'),
    58: ('SASL_AUTHENTICATION_FAILED', 'SaslAuthenticationException',
         'SASL Authentication failed.'),
    61: ('DELEGATION_TOKEN_AUTH_DISABLED', 'DelegationTokenDisabledException',
         'Delegation Token feature is not enabled.'),
    62: ('DELEGATION_TOKEN_NOT_FOUND', 'DelegationTokenNotFoundException',
         'Delegation Token is not found on server.'),
    63: ('DELEGATION_TOKEN_OWNER_MISMATCH', 'DelegationTokenOwnerMismatchException',
         'Specified Principal is not valid Owner/Renewer.'),
    64: ('DELEGATION_TOKEN_REQUEST_NOT_ALLOWED', 'UnsupportedByAuthenticationException',
         'Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token '
         'authenticated channels.'),
    65: ('DELEGATION_TOKEN_AUTHORIZATION_FAILED', 'DelegationTokenAuthorizationException',
         'Delegation Token authorization failed.'),
    66: ('DELEGATION_TOKEN_EXPIRED', 'DelegationTokenExpiredException', 'Delegation Token is expired.'),
    67: ('INVALID_PRINCIPAL_TYPE', 'InvalidPrincipalTypeException', 'Supplied principalType is not supported.'),
    68: ('NON_EMPTY_GROUP', 'GroupNotEmptyException',
         'The group is not empty.'),
    69: ('GROUP_ID_NOT_FOUND', 'GroupIdNotFoundException',
         'The group id does not exist.'),
    73: ('TOPIC_DELETION_DISABLED', 'TopicDeletionDisabledException',
         'Topic deletion is disabled.'),
    74: ('FENCED_LEADER_EPOCH', 'FencedLeaderEpochException',
         'The leader epoch in the request is older than the epoch on the broker.'),
    76: ('UNSUPPORTED_COMPRESSION_TYPE', 'UnsupportedCompressionTypeException',
         'The requesting client does not support the compression type of given partition.'),
    79: ('MEMBER_ID_REQUIRED', 'MemberIdRequiredException',
         'The group member needs to have a valid member id before actually entering a consumer group.'),
    80: ('PREFERRED_LEADER_NOT_AVAILABLE', 'PreferredLeaderNotAvailableException',
         'The preferred leader was not available.'),
    81: ('GROUP_MAX_SIZE_REACHED', 'GroupMaxSizeReachedException',
         'The consumer group has reached its max size.'),
    82: ('FENCED_INSTANCE_ID', 'FencedInstanceIdException',
         'The broker rejected this static consumer since another consumer with the same group.instance.id '
         'has registered with a different member.id.'),
    83: ('ELIGIBLE_LEADERS_NOT_AVAILABLE', 'EligibleLeadersNotAvailableException',
         'Eligible topic partition leaders are not available.'),
    84: ('ELECTION_NOT_NEEDED', 'ElectionNotNeededException', 'Leader election not needed for topic partition.'),
    86: ('GROUP_SUBSCRIBED_TO_TOPIC', 'GroupSubscribedToTopicException',
         'Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.'),
    87: ('INVALID_RECORD', 'org.apache.kafka.common.InvalidRecordException',
         'This record has failed the validation on broker and hence will be rejected.'),
    88: ('UNSTABLE_OFFSET_COMMIT', 'UnstableOffsetCommitException',
         'There are unstable offsets that need to be cleared.'),
    89: ('THROTTLING_QUOTA_EXCEEDED', 'ThrottlingQuotaExceededException',
         'The throttling quota has been exceeded.'),
    91: ('RESOURCE_NOT_FOUND', 'ResourceNotFoundException',
         'A request illegally referred to a resource that does not exist.'),
    100: ('UNKNOWN_TOPIC_ID', 'UnknownTopicIdException',
         'This server does not host this topic ID.'),
    102: ('BROKER_ID_NOT_REGISTERED', 'BrokerIdNotRegisteredException', 'The given broker ID was not registered.'),
    114: ('MISMATCHED_ENDPOINT_TYPE', 'MismatchedEndpointTypeException',
         'The request was sent to an endpoint of the wrong type.'),
    115: ('UNSUPPORTED_ENDPOINT_TYPE', 'UnsupportedEndpointTypeException', 'This endpoint type is not supported yet.'),
    116: ('UNKNOWN_CONTROLLER_ID', 'UnknownControllerIdException', 'This controller ID is not known.'),
}

# librdkafka's own (negative) error codes used here
_TRANSPORT = -195
_SSL = -181
_ALL_BROKERS_DOWN = -187
_TIMED_OUT = -185
_UNKNOWN_PARTITION = -190
_UNKNOWN_TOPIC = -188
_AUTHENTICATION = -169
_TIMED_OUT_QUEUE = -166
_UNSUPPORTED_FEATURE = -165
_NOENT = -156
_TIMEOUT_CODES = frozenset({_TRANSPORT, _ALL_BROKERS_DOWN, _TIMED_OUT, _TIMED_OUT_QUEUE})
_SSL_HANDSHAKE = "SSL handshake failed"  # librdkafka reports it as a transport error
_METADATA_SLICE_S = 0.5  # metadata is asked in growing slices, so an authentication failure ends the wait


class AdminError(KafkaError):
    """A failed admin call as the Java admin client reports it. str() is the exception's
    message (what TopicCommand prints); `java_class` its class; `name` Kafka's error name."""

    def __init__(self, name: str, java_class: str, message: str, code: int = -1):
        super().__init__(message)
        self.name = name
        self.java_class = java_class
        self.code = code

    def execution_message(self) -> str:
        """ExecutionException.getMessage() of a future failing with this: `<class>: <message>`."""
        return f"{self.java_class}: {self.message}"


def _qualified(java_class: str) -> str:
    return java_class if "." in java_class else ERRORS_PACKAGE + java_class


def timeout_error(call: str) -> AdminError:
    return AdminError("REQUEST_TIMED_OUT", TIMEOUT_EXCEPTION, NODE_ASSIGNMENT_TIMEOUT.format(call), 7)


def known_error(code: int, message: str | None = None) -> AdminError:
    name, java_class, default = JAVA_ERRORS.get(code, JAVA_ERRORS[-1])
    return AdminError(name, _qualified(java_class), message or default, code)


def _strip_local(text: str) -> str:
    for prefix in ("Local: ", "Broker: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def error_from(code: int, text: str, call: str) -> AdminError:
    """A librdkafka error (code, text) as Kafka's exception."""
    if code == _SSL or (code == _TRANSPORT and _SSL_HANDSHAKE in text):
        return AdminError("SSL_AUTHENTICATION_FAILED", ERRORS_PACKAGE + "SslAuthenticationException", text, -1)
    if code in _TIMEOUT_CODES:
        return timeout_error(call)
    if code in (_UNKNOWN_TOPIC, _UNKNOWN_PARTITION, _NOENT):
        return known_error(3)
    if code == _AUTHENTICATION:
        return AdminError("SASL_AUTHENTICATION_FAILED", ERRORS_PACKAGE + "SaslAuthenticationException",
                          _strip_local(text), 58)
    if code == _UNSUPPORTED_FEATURE:
        return known_error(35, _strip_local(text))
    if code >= -1:
        # librdkafka's text is the broker's message when it sent one; its generic description of
        # the code ("Broker: ...", possibly after a context prefix) means there was none.
        generic = text.startswith("Broker: ") or ": Broker: " in text
        return known_error(code, None if generic else text)
    return AdminError("UNKNOWN", "org.apache.kafka.common.KafkaException", _strip_local(text), code)


def admin_error(err, call: str) -> AdminError:
    """A confluent_kafka.KafkaError as Kafka's exception."""
    return error_from(err.code(), err.str(), call)


# --------------------------------------------------------------------------- the client
class KafkaAdmin:
    """A confluent-kafka AdminClient whose calls are bounded by `timeout_ms` each."""

    def __init__(self, conf: dict, timeout_ms: int):
        import confluent_kafka
        from confluent_kafka.admin import AdminClient

        self.conf = dict(conf)
        self.timeout_ms = max(int(timeout_ms), 1)
        self._failure = None  # an authentication error reported by librdkafka meanwhile
        try:
            self.client = AdminClient({**self.conf, "error_cb": self._on_error})
        except confluent_kafka.KafkaException as exc:
            raise librdkafka_error(exc.args[0].str()) from None
        except (TypeError, ValueError) as exc:
            raise ClientConfigError(str(exc)) from None

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000.0

    def _on_error(self, err) -> None:
        if self._failure is None and (err.code() in (_AUTHENTICATION, _SSL) or err.fatal()
                                      or (err.code() == _TRANSPORT and _SSL_HANDSHAKE in err.str())):
            self._failure = err  # Java's client fails the calls at once; librdkafka would retry until the timeout

    def _check_failure(self, call: str) -> None:
        self.client.poll(0)  # serves error_cb
        if self._failure is not None:
            raise admin_error(self._failure, call)

    def wait(self, futures, call: str) -> None:
        """Wait for the futures, at most the call timeout (plus a margin: librdkafka fails them
        itself at the timeout), ending early on an authentication failure."""
        pending = set(futures)
        deadline = time.monotonic() + self.timeout_s + 5.0
        while pending:
            _, pending = concurrent.futures.wait(pending, timeout=0.05)
            self._check_failure(call)
            if pending and time.monotonic() > deadline:
                raise timeout_error(call)

    def result(self, future, call: str):
        import confluent_kafka

        self.wait([future], call)
        try:
            return future.result()
        except confluent_kafka.KafkaException as exc:
            self._check_failure(call)
            raise admin_error(exc.args[0], call) from None

    def results(self, futures: dict, call: str) -> dict:
        """{key: result}; the first failure (in the request's order) is raised."""
        self.wait(futures.values(), call)
        return {key: self.result(f, call) for key, f in futures.items()}

    def metadata(self, call: str = "listTopics"):
        """The cluster's metadata (all topics), within the timeout."""
        import confluent_kafka

        deadline = time.monotonic() + self.timeout_s
        slice_s = _METADATA_SLICE_S
        while True:
            remaining = deadline - time.monotonic()
            try:
                return self.client.list_topics(timeout=max(min(slice_s, remaining), 0.001))
            except confluent_kafka.KafkaException as exc:
                self._check_failure(call)
                err = exc.args[0]
                if err.code() not in _TIMEOUT_CODES:
                    raise admin_error(err, call) from None
                if time.monotonic() >= deadline:
                    raise timeout_error(call) from None
                slice_s *= 2  # a slow cluster still gets its answer in

    def list_offsets(self, requests: dict[tuple[str, int], int], call: str = "listOffsets(api=METADATA)"
                     ) -> dict[tuple[str, int], int | AdminError]:
        """ListOffsets for each (topic, partition): ListOffsetsRequest's timestamp (-1 latest,
        -2 earliest, -3 max timestamp, -4 earliest local, else a time) -> offset (-1: none) or
        the partition's error."""
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import OffsetSpec

        def spec(ts: int):
            if ts == -1:
                return OffsetSpec.latest()
            if ts in (-2, -4):  # earliest-local: librdkafka has no such spec; no tiered storage assumed
                return OffsetSpec.earliest()
            if ts == -3:
                return OffsetSpec.max_timestamp()
            return OffsetSpec.for_timestamp(ts)

        # latest-tiered (-5) and earliest-pending-upload (-6): librdkafka has no such specs; a
        # broker without tiered storage answers -1 (no offset), so pk answers that itself.
        tiered = {tp: -1 for tp, ts in requests.items() if ts in (-5, -6)}
        requests = {tp: ts for tp, ts in requests.items() if tp not in tiered}
        if not requests:
            return tiered
        import confluent_kafka

        try:
            futures = self.client.list_offsets({TopicPartition(t, p): spec(ts) for (t, p), ts in requests.items()},
                                               request_timeout=self.timeout_s)
        except confluent_kafka.KafkaException as exc:
            error = admin_error(exc.args[0], call)
            return {**tiered, **{tp: error for tp in requests}}
        self.wait(futures.values(), call)
        out: dict[tuple[str, int], int | AdminError] = dict(tiered)
        for tp, future in futures.items():
            try:
                out[(tp.topic, tp.partition)] = future.result().offset
            except confluent_kafka.KafkaException as exc:
                out[(tp.topic, tp.partition)] = admin_error(exc.args[0], call)
        return out

    def elect_leaders(self, election_type: str, partitions: list[tuple[str, int]] | None
                      ) -> dict[tuple[str, int], AdminError | None]:
        """ElectLeaders (PREFERRED or UNCLEAN) of the partitions (None: all): each partition's
        error, or None where a leader was elected."""
        from confluent_kafka import ElectionType, TopicPartition

        call = "electLeaders"
        tps = None if partitions is None else [TopicPartition(t, p) for t, p in partitions]
        # (no request_timeout: confluent-kafka 2.16 fails on any keyword argument here; the
        # wait below bounds the call instead)
        results = self.result(self.client.elect_leaders(ElectionType[election_type], tps), call)
        return {(tp.topic, tp.partition): None if err is None else admin_error(getattr(err, "args", [err])[0], call)
                for tp, err in results.items()}

    def close(self) -> None:
        self.client = None


def open_admin(bootstrap: str, command_config: str | None, x_args: dict[str, str] | None,
               client_id: str | None = None, default_timeout_ms: int = 60000,
               timeout_ms: int | None = None) -> KafkaAdmin:
    """A KafkaAdmin for an admin tool: --command-config, bootstrap and client.id, -X; bounded by
    `timeout_ms` if given, else the configuration's default.api.timeout.ms. Fails fast, as the
    Java client does, when no bootstrap host resolves."""
    from ..client_config import admin_config, check_resolvable

    conf, api_timeout = admin_config(bootstrap, command_config, x_args, client_id, default_timeout_ms)
    check_resolvable(bootstrap)
    return KafkaAdmin(conf, api_timeout if timeout_ms is None else timeout_ms)


# --------------------------------------------------------------------------- pk-topics
def _node_id(node) -> int | None:
    return None if node is None or node.id is None or node.id < 0 else node.id


class KafkaTopicsBackend:
    """Backend (commands/backend.py) over a cluster, as Kafka 4.4's TopicCommand uses the
    Admin API: the Configs: of a topic are its DescribeConfigs entries whose source is not
    DEFAULT_CONFIG (static broker settings and cluster-wide dynamic defaults included), the
    live brokers those DescribeCluster lists. Topic configs cannot be altered here (Kafka 4.4
    refuses --alter --config with --bootstrap-server; check_args reports it).

    Reads go through `wire` (a WireClient factory) when the tool's connection is one pk's wire
    client speaks: librdkafka sends DescribeTopics, DescribeCluster and a topic's
    DescribeConfigs to the controller, and in a ZooKeeper-mode cluster /controller keeps naming
    a crashed broker until its session expires, so a describe would wait out its whole
    timeout where Kafka's Admin (least-loaded node) answers at once. Metadata and
    DescribeConfigs to the bootstrap broker give the same answers without that wait. Writes
    (CreateTopics, CreatePartitions, DeleteTopics) go to the controller in Kafka's Admin too."""

    def __init__(self, admin: KafkaAdmin, wire: "Callable[[], object] | None" = None):
        self.admin = admin
        self._wire_factory = wire
        self._wire = None

    def _wire_client(self):
        if self._wire is None and self._wire_factory is not None:
            self._wire = self._wire_factory()
        return self._wire

    def list_topics(self, include_internal: bool = True) -> list[str]:
        from pk.engine.topic_names import is_internal

        names = sorted(self.admin.metadata("listTopics").topics)
        return names if include_internal else [n for n in names if not is_internal(n)]

    def describe_topics(self, names: list[str]) -> list[TopicInfo]:
        if not names:
            return []
        wire = self._wire_client()
        if wire is not None:
            try:
                descriptions, configs = _wire_topics(wire, names), _wire_topic_configs(wire, names)
            except (TimeoutError, ConnectionError) as exc:  # the bootstrap broker stopped answering
                raise timeout_error("describeTopics") from exc
        else:
            descriptions, configs = self._rdkafka_topics(names), self._rdkafka_topic_configs(names)
        out = []
        for name in names:
            topic_id, partitions = descriptions[name]
            entries = configs.get(name, [])
            # TopicCommand prints the entries of a Config, a java.util.HashMap filled in the
            # response's order: the same iteration order here.
            from pk.engine.javacompat import hashmap_order

            overrides = {k: "null" if value is None else value for k, value, shown in entries if shown}
            overrides = {k: overrides[k] for k in hashmap_order(k for k, _, _ in entries) if k in overrides}
            min_isr = next((value for k, value, _ in entries if k == "min.insync.replicas"), None)
            try:
                min_isr_value = int(min_isr) if min_isr is not None else 1
            except (TypeError, ValueError):
                min_isr_value = 1
            # Metadata has no ELR: a cluster with topic ids is taken to answer
            # DescribeTopicPartitions with (empty) ELRs, as a healthy Kafka 3.8+ cluster does;
            # one without (Metadata < v10, e.g. pk-server-start) gets "N/A".
            out.append(TopicInfo(name, topic_id, partitions, overrides, min_isr_value,
                                 elr_known=topic_id is not None and topic_id != _ZERO_TOPIC_ID))
        return out

    def _rdkafka_topics(self, names: list[str]) -> dict[str, tuple[str | None, list[PartitionInfo]]]:
        from confluent_kafka import TopicCollection

        descriptions = self.admin.results(self.admin.client.describe_topics(
            TopicCollection(list(names)), request_timeout=self.admin.timeout_s), "describeTopics")
        out = {}
        for name, d in descriptions.items():
            # librdkafka writes a Uuid in standard base64; Kafka's Uuid.toString is URL-safe.
            topic_id = (str(d.topic_id).replace("+", "-").replace("/", "_")
                        if getattr(d, "topic_id", None) is not None else None)
            out[name] = (topic_id, [PartitionInfo(p.id, _node_id(p.leader), [r.id for r in p.replicas],
                                                  [r.id for r in p.isr])
                                    for p in sorted(d.partitions, key=lambda p: p.id)])
        return out

    def _rdkafka_topic_configs(self, names: list[str]) -> dict[str, list[tuple[str, str | None, bool]]]:
        from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

        resources = [ConfigResource(ResourceType.TOPIC, n) for n in names]
        results = self.admin.results(self.admin.client.describe_configs(resources, request_timeout=self.admin.timeout_s),
                                     "describeConfigs")
        return {res.name: [(k, e.value, e.source != ConfigSource.DEFAULT_CONFIG.value and not (
                    e.source == ConfigSource.UNKNOWN_CONFIG.value and e.is_default)) for k, e in entries.items()]
                for res, entries in results.items()}

    def live_brokers(self) -> set[int]:
        wire = self._wire_client()
        if wire is not None:  # a ZooKeeper-mode broker lists the registered brokers in both answers
            return {b.node_id for b in wire.brokers()}
        cluster = self.admin.result(self.admin.client.describe_cluster(request_timeout=self.admin.timeout_s),
                                    "listNodes")
        return {n.id for n in cluster.nodes}

    def _run(self, futures: dict, call: str) -> None:
        import confluent_kafka

        self.admin.wait(futures.values(), call)
        for future in futures.values():
            try:
                future.result()
            except confluent_kafka.KafkaException as exc:
                err = exc.args[0]
                if err.code() == 36:  # TOPIC_ALREADY_EXISTS
                    raise TopicExistsError(admin_error(err, call).message) from None
                raise admin_error(err, call) from None

    def create_topic(self, name, partitions, replication_factor, assignment, configs) -> None:
        from confluent_kafka.admin import NewTopic

        try:
            if assignment:
                topic = NewTopic(name, num_partitions=len(assignment),
                                 replica_assignment=[list(assignment[p]) for p in sorted(assignment)],
                                 config=dict(configs))
            else:
                topic = NewTopic(name, num_partitions=partitions, replication_factor=replication_factor,
                                 config=dict(configs))
            futures = self.admin.client.create_topics([topic], request_timeout=self.admin.timeout_s)
        except (TypeError, ValueError) as exc:  # confluent-kafka's own checks of the request
            raise KafkaError(str(exc)) from None
        self._run(futures, "createTopics")

    def create_partitions(self, name, total, assignment) -> None:
        from confluent_kafka.admin import NewPartitions

        try:
            request = (NewPartitions(name, total, replica_assignment=[list(r) for r in assignment]) if assignment
                       else NewPartitions(name, total))
            futures = self.admin.client.create_partitions([request], request_timeout=self.admin.timeout_s)
        except (TypeError, ValueError) as exc:
            raise KafkaError(str(exc)) from None
        self._run(futures, "createPartitions")

    def delete_topics(self, names: list[str]) -> None:
        if names:
            self._run(self.admin.client.delete_topics(list(names), request_timeout=self.admin.timeout_s),
                      "deleteTopics")

    def alter_topic_configs(self, name, set_configs, delete_configs) -> None:
        raise KafkaError("Topic configs are altered with kafka-configs when using --bootstrap-server")

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()
        self.admin.close()


_ZERO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID: a cluster without topic ids
_DEFAULT_CONFIG = 5  # DescribeConfigs' config_source


def _wire_topics(wire, names: list[str]) -> dict[str, tuple[str | None, list[PartitionInfo]]]:
    """{name: (topic id, partitions)} from the bootstrap broker: DescribeTopicPartitions where
    it takes it (Kafka 4.4's Admin.describeTopics, which brings the ELRs), else Metadata."""
    from pk.engine import protocol as kp
    from pk.engine.metadata import text_of
    from pk.engine.protocol.types import ZERO_UUID

    if int(kp.ApiKey.DESCRIBE_TOPIC_PARTITIONS) in wire.api_versions(None):
        return _wire_topic_partitions(wire, names)
    md = wire.call(kp.ApiKey.METADATA, 12, {"topics": [{"name": n, "topic_id": ZERO_UUID} for n in names],
                                            "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    out = {}
    for t in md["topics"]:
        if t["error_code"] and t["name"] in names:
            raise known_error(t["error_code"], t.get("error_message"))
        out[t["name"]] = (None if t.get("topic_id") is None else text_of(t["topic_id"]),
                          [PartitionInfo(p["partition_index"], p["leader_id"] if p["leader_id"] >= 0 else None,
                                         list(p["replica_nodes"]), list(p["isr_nodes"]))
                           for p in sorted(t["partitions"], key=lambda p: p["partition_index"])])
    missing = [n for n in names if n not in out]
    if missing:
        raise known_error(3)
    return out


def _wire_topic_partitions(wire, names: list[str]) -> dict[str, tuple[str | None, list[PartitionInfo]]]:
    """DescribeTopicPartitions v0, following its cursor (a topic's partitions may span answers)."""
    from pk.engine import protocol as kp
    from pk.engine.metadata import text_of

    out: dict[str, tuple[str | None, list[PartitionInfo]]] = {}
    cursor = None
    while True:
        answer = wire.call(kp.ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, {
            "topics": [{"name": n} for n in sorted(names)], "response_partition_limit": 2000, "cursor": cursor})
        for t in answer["topics"]:
            if t["error_code"] and t["name"] in names:
                raise known_error(t["error_code"], None)
            topic_id = None if t.get("topic_id") is None else text_of(t["topic_id"])
            partitions = out.get(t["name"], (topic_id, []))[1]
            partitions += [PartitionInfo(p["partition_index"], p["leader_id"] if p["leader_id"] >= 0 else None,
                                         list(p["replica_nodes"]), list(p["isr_nodes"]),
                                         list(p["eligible_leader_replicas"] or []), list(p["last_known_elr"] or []))
                           for p in t["partitions"]]
            out[t["name"]] = (topic_id, sorted(partitions, key=lambda p: p.partition))
        cursor = answer["next_cursor"]
        if cursor is None:
            break
    missing = [n for n in names if n not in out]
    if missing:
        raise known_error(3)
    return out


def _wire_topic_configs(wire, names: list[str]) -> dict[str, list[tuple[str, str | None, bool]]]:
    """{name: [(config, value, shown in Configs:)]} in the answer's order, from DescribeConfigs
    to the bootstrap broker (a topic's configs are answered by any broker)."""
    from pk.engine import protocol as kp

    answer = wire.call(kp.ApiKey.DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": 2, "resource_name": n, "configuration_keys": None} for n in names],
        "include_synonyms": False, "include_documentation": False})
    out = {}
    for r in answer["results"]:
        if r["error_code"]:
            raise known_error(r["error_code"], r["error_message"] or None)
        out[r["resource_name"]] = [(c["name"], c["value"], c["config_source"] != _DEFAULT_CONFIG)
                                   for c in r["configs"]]
    return out


# --------------------------------------------------------------------------- GetOffsetShell
class KafkaOffsets:
    """get_offsets.OffsetsSource over a cluster (GetOffsetShell's listTopics + listOffsets).
    `admin` may be a function that opens the KafkaAdmin: it is then called at the first
    request, after GetOffsetShell's own argument checks, as Kafka creates its Admin client."""

    def __init__(self, admin):
        self._admin = admin
        self._metadata = None

    @property
    def admin(self) -> KafkaAdmin:
        if not isinstance(self._admin, KafkaAdmin):
            self._admin = self._admin()
        return self._admin

    def _md(self):
        if self._metadata is None:
            self._metadata = self.admin.metadata("listTopics")
        return self._metadata

    def list_topics(self, include_internal: bool = True) -> list[str]:
        from pk.engine.topic_names import is_internal

        return sorted(t for t in self._md().topics if include_internal or not is_internal(t))

    def partitions(self, topics: Sequence[str]) -> dict[str, list[int]]:
        md = self._md()
        return {t: sorted(md.topics[t].partitions) for t in topics
                if t in md.topics and md.topics[t].error is None}

    def list_offsets(self, requests):
        from ..errors import PartitionError

        out = {}
        for tp, result in self.admin.list_offsets(requests).items():
            out[tp] = PartitionError(result.java_class, result.message) if isinstance(result, AdminError) else result
        return out

    def close(self) -> None:
        if isinstance(self._admin, KafkaAdmin):
            self._admin.close()


# --------------------------------------------------------------------------- ConsumerGroupCommand
_STATES = {"UNKNOWN": "Unknown", "PREPARING_REBALANCING": "PreparingRebalance",
           "COMPLETING_REBALANCING": "CompletingRebalance", "STABLE": "Stable", "DEAD": "Dead", "EMPTY": "Empty",
           "ASSIGNING": "Assigning", "RECONCILING": "Reconciling"}


def _group_type(group_type) -> str:
    """ConsumerGroupType as Kafka's GroupType prints it (Classic, Consumer; Unknown when not said)."""
    name = getattr(group_type, "name", None) or "UNKNOWN"
    return {"CLASSIC": "Classic", "CONSUMER": "Consumer"}.get(name, "Unknown")


def _state(state) -> str:
    return _STATES.get(getattr(state, "name", str(state)), "Unknown")


def _api_errors(method):
    """GroupBackend methods report failures as consumer_groups.ApiError."""

    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except AdminError as exc:
            raise self._api_error(exc) from None

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


class KafkaGroupsBackend:
    """consumer_groups.GroupBackend over a cluster, with the Admin calls Kafka 3.7's
    ConsumerGroupCommand makes; failures are consumer_groups.ApiError."""

    def __init__(self, admin: KafkaAdmin):
        self.admin = admin

    @staticmethod
    def _api_error(error: AdminError):
        from ..consumer_groups import ApiError

        return ApiError(error.name, error.java_class, error.message)

    def _result(self, future, call: str):
        try:
            return self.admin.result(future, call)
        except AdminError as exc:
            raise self._api_error(exc) from None

    @_api_errors
    def list_groups(self) -> list[tuple[str, str]]:
        result = self._result(self.admin.client.list_consumer_groups(request_timeout=self.admin.timeout_s),
                              "findAllBrokers")
        if result.errors:
            raise self._api_error(admin_error(result.errors[0], "findAllBrokers"))
        listings = [(g.group_id, _state(g.state)) for g in result.valid]
        types = {g.group_id: _group_type(getattr(g, "type", None)) for g in result.valid}
        # Brokers before ListGroups v4 do not say the state (Kafka's tool then prints Unknown):
        # ask DescribeGroups instead.
        unknown = [g for g, s in listings if s == "Unknown"]
        states = {g: d.state for g, d in self.describe_groups(unknown).items()} if unknown else {}
        self.group_types = types  # ConsumerGroupCommand's --list --type column
        return [(g, states.get(g, s)) for g, s in listings]

    @_api_errors
    def describe_groups(self, group_ids: list[str]) -> dict:
        from ..consumer_groups import Coordinator, GroupDescription, MemberDescription

        if not group_ids:
            return {}
        call = "describeConsumerGroups(api=FIND_COORDINATOR)"
        futures = self.admin.client.describe_consumer_groups(list(group_ids), request_timeout=self.admin.timeout_s)
        self.admin.wait(futures.values(), call)
        out = {}
        for group_id, future in futures.items():
            try:
                d = self.admin.result(future, call)
            except AdminError as exc:
                if exc.name == "GROUP_ID_NOT_FOUND":  # the new coordinator's answer for no such group
                    out[group_id] = GroupDescription(group_id, "Dead", "", [], Coordinator(None, None, -1))
                    continue
                raise self._api_error(exc) from None
            members = [MemberDescription(m.member_id, m.client_id, m.host,
                                         sorted((tp.topic, tp.partition) for tp in
                                                (m.assignment.topic_partitions if m.assignment else [])),
                                         m.group_instance_id)
                       for m in d.members]
            node = d.coordinator
            coordinator = (Coordinator(node.host, node.port, node.id) if node is not None
                           else Coordinator(None, None, -1))
            out[group_id] = GroupDescription(group_id, _state(d.state), d.partition_assignor or "", members,
                                             coordinator)
        return out

    @_api_errors
    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        from confluent_kafka import ConsumerGroupTopicPartitions

        futures = self.admin.client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)],
                                                                request_timeout=self.admin.timeout_s)
        result = self._result(futures[group_id], "offsetFetch(api=FIND_COORDINATOR)")
        found = [tp for tp in result.topic_partitions or [] if tp.error is None and tp.offset >= 0]
        # the leader epochs of the commits (--describe --offsets --verbose); None where unknown
        epochs = self.__dict__.setdefault("leader_epochs", {})
        epochs.update({(group_id, tp.topic, tp.partition): tp.leader_epoch for tp in found
                       if tp.leader_epoch is not None and tp.leader_epoch >= 0})
        return {(tp.topic, tp.partition): tp.offset for tp in found}

    @_api_errors
    def topic_partitions(self, topic: str) -> list[int]:
        from confluent_kafka import TopicCollection

        futures = self.admin.client.describe_topics(TopicCollection([topic]), request_timeout=self.admin.timeout_s)
        description = self._result(futures[topic], "describeTopics")
        return sorted(p.id for p in description.partitions)

    def _offsets(self, partitions: list, timestamp: int) -> dict:
        from ..consumer_groups import unknown_topic_or_partition

        results = self.admin.list_offsets({tp: timestamp for tp in partitions})
        out = {}
        known = None
        for tp in partitions:
            result = results[tp]
            if isinstance(result, AdminError):
                if result.name == "UNKNOWN_TOPIC_OR_PARTITION":
                    if known is None:
                        known = set(self.admin.metadata("listOffsets(api=METADATA)").topics)
                    if tp[0] not in known:  # what Kafka 3.7's admin client says for a topic it cannot find
                        raise unknown_topic_or_partition(
                            f"Failed to fetch metadata for partition {tp[0]}-{tp[1]} because metadata for topic "
                            f"`{tp[0]}` could not be found")
                raise self._api_error(result)
            out[tp] = result
        return out

    @_api_errors
    def log_start_offsets(self, partitions):
        return self._offsets(list(partitions), -2)

    @_api_errors
    def log_end_offsets(self, partitions):
        return self._offsets(list(partitions), -1)

    @_api_errors
    def offsets_for_timestamp(self, partitions, timestamp: int):
        return {tp: (None if offset is None or offset < 0 else offset)
                for tp, offset in self._offsets(list(partitions), timestamp).items()}

    @_api_errors
    def alter_offsets(self, group_id: str, offsets: dict) -> None:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        if not offsets:
            return
        call = "offsetCommit(api=FIND_COORDINATOR)"
        request = ConsumerGroupTopicPartitions(group_id, [TopicPartition(t, p, o) for (t, p), o in offsets.items()])
        futures = self.admin.client.alter_consumer_group_offsets([request], request_timeout=self.admin.timeout_s)
        result = self._result(futures[group_id], call)
        for tp in result.topic_partitions or []:
            if tp.error is not None:
                raise self._api_error(admin_error(tp.error, call))

    @_api_errors
    def delete_groups(self, group_ids: list[str]) -> dict:
        import confluent_kafka

        if not group_ids:
            return {}
        call = "deleteConsumerGroups(api=FIND_COORDINATOR)"
        futures = self.admin.client.delete_consumer_groups(list(group_ids), request_timeout=self.admin.timeout_s)
        self.admin.wait(futures.values(), call)
        out = {}
        for group_id, future in futures.items():
            try:
                future.result()
                out[group_id] = None
            except confluent_kafka.KafkaException as exc:
                out[group_id] = self._api_error(admin_error(exc.args[0], call))
        return out

    @_api_errors
    def delete_offsets(self, group_id: str, partitions: list):
        call = "offsetDelete(api=FIND_COORDINATOR)"
        if not partitions:
            return None, {}
        delete = getattr(self.admin.client, "delete_consumer_group_offsets", None)
        if delete is not None:  # a confluent-kafka that exposes it
            return self._delete_offsets_python(delete, group_id, partitions, call)
        from .rdkafka_offset_delete import delete_group_offsets

        group_error, errors = delete_group_offsets(self.admin.conf, group_id, list(partitions), self.admin.timeout_ms)
        if group_error is not None:
            return self._api_error(error_from(*group_error, call)), {}
        return None, {tp: None if errors.get(tp) is None else self._api_error(error_from(*errors[tp], call))
                      for tp in partitions}

    def _delete_offsets_python(self, delete, group_id, partitions, call):
        import confluent_kafka
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        request = ConsumerGroupTopicPartitions(group_id, [TopicPartition(t, p) for t, p in partitions])
        futures = delete([request], request_timeout=self.admin.timeout_s)
        future = futures[group_id] if isinstance(futures, dict) else futures
        self.admin.wait([future], call)
        try:
            result = future.result()
        except confluent_kafka.KafkaException as exc:
            return self._api_error(admin_error(exc.args[0], call)), {}
        errors = {(tp.topic, tp.partition): tp.error for tp in result.topic_partitions or []}
        return None, {tp: None if errors.get(tp) is None else self._api_error(admin_error(errors[tp], call))
                      for tp in partitions}

    def close(self) -> None:
        self.admin.close()
