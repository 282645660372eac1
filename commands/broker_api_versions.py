"""kafka-broker-api-versions (Kafka 4.4's BrokerApiVersionsCommand): each broker's ApiVersions
answer, as NodeApiVersions.toString(true) prints it against the client's own versions.

CLIENT_APIS is Kafka 4.4's ApiKeys as its Java client knows them: api key -> (name, oldest
version, latest stable version, whether it is a client API, i.e. served by brokers). It is
read from Kafka's message schemas (common/message/*Request.json in kafka-clients: the
unstable last version left out, as ApiKeys.latestVersion() does);
tests/test_broker_api_versions.py checks it against the jar.
"""

from __future__ import annotations

CLIENT_APIS: dict[int, tuple[str, int, int, bool]] = {
    0: ("Produce", 3, 13, True),
    1: ("Fetch", 4, 18, True),
    2: ("ListOffsets", 1, 11, True),
    3: ("Metadata", 0, 13, True),
    8: ("OffsetCommit", 2, 10, True),
    9: ("OffsetFetch", 1, 10, True),
    10: ("FindCoordinator", 0, 6, True),
    11: ("JoinGroup", 0, 9, True),
    12: ("Heartbeat", 0, 4, True),
    13: ("LeaveGroup", 0, 5, True),
    14: ("SyncGroup", 0, 5, True),
    15: ("DescribeGroups", 0, 6, True),
    16: ("ListGroups", 0, 5, True),
    17: ("SaslHandshake", 0, 1, True),
    18: ("ApiVersions", 0, 5, True),
    19: ("CreateTopics", 2, 7, True),
    20: ("DeleteTopics", 1, 6, True),
    21: ("DeleteRecords", 0, 2, True),
    22: ("InitProducerId", 0, 5, True),
    23: ("OffsetForLeaderEpoch", 2, 4, True),
    24: ("AddPartitionsToTxn", 0, 5, True),
    25: ("AddOffsetsToTxn", 0, 4, True),
    26: ("EndTxn", 0, 5, True),
    27: ("WriteTxnMarkers", 1, 2, True),
    28: ("TxnOffsetCommit", 0, 6, True),
    29: ("DescribeAcls", 1, 3, True),
    30: ("CreateAcls", 1, 3, True),
    31: ("DeleteAcls", 1, 3, True),
    32: ("DescribeConfigs", 1, 4, True),
    33: ("AlterConfigs", 0, 2, True),
    34: ("AlterReplicaLogDirs", 1, 2, True),
    35: ("DescribeLogDirs", 1, 5, True),
    36: ("SaslAuthenticate", 0, 2, True),
    37: ("CreatePartitions", 0, 3, True),
    38: ("CreateDelegationToken", 1, 3, True),
    39: ("RenewDelegationToken", 1, 2, True),
    40: ("ExpireDelegationToken", 1, 2, True),
    41: ("DescribeDelegationToken", 1, 3, True),
    42: ("DeleteGroups", 0, 3, True),
    43: ("ElectLeaders", 0, 2, True),
    44: ("IncrementalAlterConfigs", 0, 1, True),
    45: ("AlterPartitionReassignments", 0, 1, True),
    46: ("ListPartitionReassignments", 0, 0, True),
    47: ("OffsetDelete", 0, 0, True),
    48: ("DescribeClientQuotas", 0, 1, True),
    49: ("AlterClientQuotas", 0, 1, True),
    50: ("DescribeUserScramCredentials", 0, 0, True),
    51: ("AlterUserScramCredentials", 0, 0, True),
    52: ("Vote", 0, 2, False),
    53: ("BeginQuorumEpoch", 0, 1, False),
    54: ("EndQuorumEpoch", 0, 1, False),
    55: ("DescribeQuorum", 0, 2, True),
    56: ("AlterPartition", 2, 3, False),
    57: ("UpdateFeatures", 0, 2, True),
    58: ("Envelope", 0, 0, False),
    59: ("FetchSnapshot", 0, 1, False),
    60: ("DescribeCluster", 0, 2, True),
    61: ("DescribeProducers", 0, 0, True),
    62: ("BrokerRegistration", 0, 4, False),
    63: ("BrokerHeartbeat", 0, 2, False),
    64: ("UnregisterBroker", 0, 0, True),
    65: ("DescribeTransactions", 0, 0, True),
    66: ("ListTransactions", 0, 2, True),
    67: ("AllocateProducerIds", 0, 0, False),
    68: ("ConsumerGroupHeartbeat", 0, 1, True),
    69: ("ConsumerGroupDescribe", 0, 1, True),
    70: ("ControllerRegistration", 0, 0, False),
    71: ("GetTelemetrySubscriptions", 0, 0, True),
    72: ("PushTelemetry", 0, 0, True),
    73: ("AssignReplicasToDirs", 0, 0, False),
    74: ("ListConfigResources", 0, 1, True),
    75: ("DescribeTopicPartitions", 0, 0, True),
    76: ("ShareGroupHeartbeat", 1, 1, True),
    77: ("ShareGroupDescribe", 1, 1, True),
    78: ("ShareFetch", 1, 2, True),
    79: ("ShareAcknowledge", 1, 2, True),
    80: ("AddRaftVoter", 0, 1, True),
    81: ("RemoveRaftVoter", 0, 0, True),
    82: ("UpdateRaftVoter", 0, 0, False),
    83: ("InitializeShareGroupState", 0, 0, True),
    84: ("ReadShareGroupState", 0, 0, True),
    85: ("WriteShareGroupState", 0, 1, True),
    86: ("DeleteShareGroupState", 0, 0, True),
    87: ("ReadShareGroupStateSummary", 0, 1, True),
    88: ("StreamsGroupHeartbeat", 0, 1, True),
    89: ("StreamsGroupDescribe", 0, 1, True),
    90: ("DescribeShareGroupOffsets", 0, 1, True),
    91: ("AlterShareGroupOffsets", 0, 0, True),
    92: ("DeleteShareGroupOffsets", 0, 0, True),
    93: ("StreamsGroupTopologyDescriptionUpdate", 0, 0, True),
    94: ("UnregisterController", 0, 0, True),
}


def api_line(api_key: int, lo: int, hi: int) -> str:
    """One advertised API: `Produce(0): 0 to 13 [usable: 13]`."""
    known = CLIENT_APIS.get(api_key)
    head = f"{known[0]}({api_key}): " if known else f"UNKNOWN({api_key}): "
    head += str(lo) if lo == hi else f"{lo} to {hi}"
    if known is None:
        return head
    _, oldest, latest, _ = known
    if latest < lo:
        return head + " [unusable: node too new]"
    if hi < oldest:
        return head + " [unusable: node too old]"
    return head + f" [usable: {min(latest, hi)}]"


def node_text(versions: dict[int, tuple[int, int]]) -> str:
    """NodeApiVersions.toString(true): every advertised API, then each client API the broker
    does not advertise as UNSUPPORTED, by api key."""
    lines = {k: api_line(k, lo, hi) for k, (lo, hi) in versions.items()}
    for key, (name, _, _, client) in CLIENT_APIS.items():
        if client and key not in lines:
            lines[key] = f"{name}({key}): UNSUPPORTED"
    return "(\n\t" + ",\n\t".join(lines[k] for k in sorted(lines)) + "\n)"


def run(client, out) -> None:
    """`<broker> -> (...)` for each broker of the cluster, or `<broker> -> ERROR: <message>`."""
    for broker in client.brokers():
        try:
            text = node_text(client.api_versions(broker.node_id))
        except (OSError, ConnectionError) as exc:
            out(f"{broker} -> ERROR: {exc}\n")
            continue
        out(f"{broker} -> {text}\n")
