"""The broker: Kafka's request handlers over the bundled engine.

Knows nothing of sockets: the server (engine/server.py) hands it decoded requests
(`pk.engine.protocol.Request`) and writes back what it returns. Each API is one coroutine
`async def handler(request) -> body dict | None` (None: send no response, as for a Produce
with acks=0), registered by a handler module:

- data.py: ApiVersions, Produce, Fetch (sessions: fetch_sessions.py), ListOffsets,
  OffsetForLeaderEpoch; metadata.py: Metadata, DescribeTopicPartitions
- admin.py: CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, DeleteRecords, ...
- log_dirs.py: DescribeLogDirs, DescribeProducers
- reassignment.py: AlterPartitionReassignments, ListPartitionReassignments, AlterReplicaLogDirs
- log_upkeep.py: retention and compaction on Kafka's schedule (run by tick)
- groups.py: the group coordinator (FindCoordinator, JoinGroup, SyncGroup, ..., OffsetFetch), over
  group_state.py (the groups, their state machine, timers and records)
- share_groups.py: share groups (KIP-932): ShareGroupHeartbeat/Describe, ShareFetch,
  ShareAcknowledge, over engine/share_partition.py's record lifecycle
- transactions.py: the transaction coordinator (InitProducerId, AddPartitionsToTxn, EndTxn, ...)
- authorizer.py: the ACL APIs (CreateAcls, DescribeAcls, DeleteAcls) and `guard`, the checks
  every handler makes before acting
- sasl.py: SaslHandshake/SaslAuthenticate outside an authentication (the server runs each SASL
  connection's authentication); scram.py: Describe/AlterUserScramCredentials
- client_metrics.py: ListConfigResources and the client-metrics resources of the config APIs;
  group_configs.py: the GROUP resources of the config APIs
- delegation_tokens.py: Create/Renew/Expire/DescribeDelegationToken

ApiVersions advertises exactly the registered APIs, within the protocol profile, so a client
is never told about an API the broker cannot answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Awaitable, Callable

from ..engine import Engine
from ..protocol import SUPPORTED_VERSIONS, Request
from ..delegation_tokens import DelegationTokens
from ..scram_credentials import ScramCredentials
from .config import BrokerConfig

log = logging.getLogger("pk.broker")

Handler = Callable[[Request], Awaitable[dict | None]]


class Broker:
    def __init__(self, engine: Engine, config: BrokerConfig, broker_configs=None):
        """`broker_configs`: where the dynamic broker configs are kept in ZooKeeper mode
        (zk_broker_configs.py); the data directory's file otherwise."""
        self.engine = engine
        self.config = config
        self.node_id = config.node_id
        self.host, self.port = config.advertised  # the first listener's
        # Each listener's advertised (host, port): clients are told the endpoints of the
        # listener they came in on.
        self.endpoints = {l.name: (l.advertised_host, l.advertised_port) for l in config.listeners}
        self.scram_credentials = ScramCredentials(engine.data_dir)
        from .delegation_tokens import secret_key
        self.delegation_tokens = DelegationTokens(engine.data_dir, secret_key(config))
        self.handlers: dict[int, Handler] = {}
        self.started = time.time()
        # Woken on every append, so that waiting Fetch requests answer within milliseconds.
        self._data_event = asyncio.Event()
        self.zookeeper = None  # a ZooKeeperSync (zookeeper.py) when zookeeper.connect is set
        self.replication = None  # a ReplicaManager (replication.py) in ZooKeeper mode
        # fn(topic, partition, leader: bool), called when this broker starts or stops leading a
        # partition of an internal topic (the coordinators load or unload what it holds).
        self.leadership_listeners: list[Callable[[str, int, bool], None]] = []
        from . import (admin, authorizer, client_metrics, data, delegation_tokens, groups,  # each registers its handlers
                       dynamic_config, features, group_configs, log_dirs, log_upkeep, reassignment, sasl, scram,
                       share_groups, transactions)

        # Every handler asks this before acting (authorizer.py); it allows all without an authorizer.
        self.guard = authorizer.Guard(authorizer.authorizer_from_config(config, engine.data_dir))

        self.data = data.DataHandlers(self)
        self.admin = admin.AdminHandlers(self)
        self.dynamic_config = dynamic_config.DynamicBrokerConfigs(self, broker_configs)  # applied to the engine at once
        self.group_configs = group_configs.GroupConfigs(self)  # before the coordinator, which reads them
        self.groups = groups.GroupHandlers(self)
        self.share_groups = share_groups.ShareGroupHandlers(self)
        self.log_dirs = log_dirs.LogDirHandlers(self)
        self.log_upkeep = log_upkeep.LogUpkeep(self)
        self.transactions = transactions.TransactionHandlers(self)  # recovers __transaction_state
        self.acls = authorizer.AclHandlers(self)
        self.sasl = sasl.SaslHandlers(self)
        self.scram = scram.ScramHandlers(self)
        self.client_metrics = client_metrics.ClientMetricsHandlers(self)
        self.tokens = delegation_tokens.DelegationTokenHandlers(self)
        self.reassignments = reassignment.Reassignments(self)
        self.features = features.FeatureHandlers(self)

    def endpoint(self, request: Request) -> tuple[str, int]:
        """(host, port) advertised for the listener `request` came in on."""
        return self.endpoints.get(request.listener_name, (self.host, self.port))

    # ------------------------------------------------------------------ internal topics' leaders
    def internal_leader(self, topic: str, partition: int) -> int:
        """The broker leading this partition of an internal topic (`__consumer_offsets`,
        `__transaction_state`), i.e. its coordinator: this broker without ZooKeeper; in
        ZooKeeper mode the leader its state znode names, -1 when none is known."""
        if self.replication is None:
            return self.node_id
        return self.replication.leader_of(topic, partition)

    def on_internal_leadership(self, topic: str, partition: int, leader: bool) -> None:
        """ReplicaManager's notice that this broker now leads (or no longer leads) a partition
        of an internal topic."""
        for listener in list(self.leadership_listeners):
            try:
                listener(topic, partition, leader)
            except Exception:  # one coordinator's bug must not stop the others' loading
                log.exception("Leadership change of %s-%d failed in %r", topic, partition, listener)

    # ------------------------------------------------------------------ registry
    def register(self, api_key: int, handler: Handler) -> None:
        self.handlers[int(api_key)] = handler

    def advertised_versions(self) -> dict[int, tuple[int, int]]:
        return {k: v for k, v in SUPPORTED_VERSIONS.items() if k in self.handlers}

    async def handle(self, request: Request) -> dict | None:
        handler = self.handlers.get(request.api_key)
        if handler is None:
            raise LookupError(f"no handler for {request.name}")
        return await handler(request)

    # ------------------------------------------------------------------ data notifications
    def notify_data(self) -> None:
        """Called after every append: wakes long-polling fetches."""
        self._data_event.set()
        self._data_event = asyncio.Event()

    async def wait_for_data(self, timeout: float) -> None:
        """Sleep until an append in this process, or `timeout` seconds (appends made by
        other processes on the same data directory are noticed at the next re-check)."""
        try:
            await asyncio.wait_for(self._data_event.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    async def tick(self) -> None:
        """Periodic upkeep (retention, group session expiry); called by the server."""
        for part in (self.data, self.admin, self.groups, self.share_groups, self.log_upkeep, self.transactions,
                     self.acls, self.tokens):
            upkeep = getattr(part, "tick", None)
            if upkeep is not None:
                await upkeep()
        if self.zookeeper is not None:
            await self.zookeeper.tick()

    def rack_of(self, node_id: int) -> str | None:
        """A broker's broker.rack: this one's setting, the others' ZooKeeper registrations."""
        if node_id == self.node_id:
            return self.config.get("broker.rack")
        return self.zookeeper.racks.get(node_id) if self.zookeeper is not None else None

    async def controlled_shutdown(self) -> None:
        """Before stopping (SIGTERM): in ZooKeeper mode, hand the leaderships over first."""
        if self.zookeeper is not None:
            await self.zookeeper.controlled_shutdown()

    def close(self) -> None:
        if self.zookeeper is not None:
            self.zookeeper.close()  # the session ends: /brokers/ids/<id> goes away
        for part in (self.groups, self.share_groups, self.admin, self.data, self.transactions, self.log_upkeep):
            closer = getattr(part, "close", None)
            if closer is not None:
                closer()
        self.engine.close()
        if self.zookeeper is not None:
            self.zookeeper.mark_clean_shutdown()  # the logs are flushed: the next start is clean
