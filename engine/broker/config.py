"""The broker's configuration: Kafka's `server.properties` keys that pk-server-start honours.

Values are kept as strings, as Kafka's properties are; `get_int`/`get_bool` parse them.
Unknown keys are reported (Kafka warns about them and starts anyway).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .dynamic_config_keys import KAFKA_CONFIGS

# Key -> default (None: no default). Kafka's names and defaults.
KNOWN: dict[str, str | None] = {
    "node.id": None,
    "broker.id": "0",
    "process.roles": None,
    "controller.quorum.voters": None,
    "controller.listener.names": None,
    "inter.broker.listener.name": None,
    "listener.security.protocol.map": None,
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "advertised.listeners": None,
    "log.dirs": None,
    "log.dir": "/tmp/kafka-logs",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "auto.create.topics.enable": "true",
    "max.incremental.fetch.session.cache.slots": "1000",
    "fetch.max.bytes": "57671680",
    "min.incremental.fetch.session.eviction.ms": "120000",
    "delete.topic.enable": "true",
    "log.retention.hours": "168",
    "log.retention.minutes": None,
    "log.retention.ms": None,
    "log.retention.bytes": "-1",
    "log.segment.bytes": "1073741824",
    "log.roll.ms": None,
    "log.roll.hours": "168",
    "log.retention.check.interval.ms": "300000",
    "log.initial.task.delay.ms": "30000",
    "log.cleaner.backoff.ms": "15000",
    "log.flush.start.offset.checkpoint.interval.ms": "60000",
    "log.cleanup.policy": "delete",
    "log.cleaner.enable": "true",
    "message.max.bytes": "1048588",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.segment.bytes": "104857600",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "50",
    "transaction.state.log.segment.bytes": "104857600",
    "transaction.max.timeout.ms": "900000",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "10000",
    "transactional.id.expiration.ms": "604800000",
    "group.initial.rebalance.delay.ms": "3000",
    "group.min.session.timeout.ms": "6000",
    "group.max.session.timeout.ms": "1800000",
    "group.consumer.session.timeout.ms": "45000",
    "group.consumer.heartbeat.interval.ms": "5000",
    "group.consumer.assignors": "uniform,range",
    # the bounds of a group's own consumer.session.timeout.ms / consumer.heartbeat.interval.ms
    # configs (engine/group_config.py)
    "group.consumer.min.session.timeout.ms": "45000",
    "group.consumer.max.session.timeout.ms": "60000",
    "group.consumer.min.heartbeat.interval.ms": "5000",
    "group.consumer.max.heartbeat.interval.ms": "15000",
    "socket.request.max.bytes": "104857600",
    "socket.send.buffer.bytes": "102400",
    "socket.receive.buffer.bytes": "102400",
    "num.network.threads": "3",
    "num.io.threads": "8",
    "num.recovery.threads.per.data.dir": "2",
    "log.flush.interval.messages": None,
    "log.flush.interval.ms": None,
    "zookeeper.connect": None,
    "zookeeper.connection.timeout.ms": "18000",
    "zookeeper.session.timeout.ms": "18000",
    # Replication between ZooKeeper-mode brokers (replication.py)
    "replica.lag.time.max.ms": "30000",
    "replica.fetch.wait.max.ms": "500",
    "replica.fetch.max.bytes": "1048576",
    "replica.fetch.response.max.bytes": "10485760",
    "unclean.leader.election.enable": "false",
    "broker.rack": None,
    "controlled.shutdown.enable": "true",
    "controlled.shutdown.max.retries": "3",
    "controlled.shutdown.retry.backoff.ms": "5000",
    "auto.leader.rebalance.enable": "true",
    "leader.imbalance.check.interval.seconds": "300",
    "leader.imbalance.per.broker.percentage": "10",
    "offsets.commit.required.acks": "-1",
    "offsets.commit.timeout.ms": "5000",
    "min.insync.replicas": "1",
    "cluster.id": None,
    "authorizer.class.name": "",
    "super.users": None,
    "allow.everyone.if.no.acl.found": "false",
    # Listener security (engine/broker/tls.py, sasl.py); each ssl.* and sasl.* key may also be
    # given per listener as listener.name.<lower-case listener name>.<key>.
    "security.inter.broker.protocol": "PLAINTEXT",
    "sasl.mechanism.inter.broker.protocol": "GSSAPI",
    "sasl.enabled.mechanisms": "GSSAPI",
    "sasl.jaas.config": None,
    "connections.max.reauth.ms": "0",
    "ssl.protocol": "TLSv1.3",
    "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
    "ssl.cipher.suites": None,
    "ssl.client.auth": "none",
    "ssl.keystore.type": "JKS",
    "ssl.keystore.location": None,
    "ssl.keystore.password": None,
    "ssl.key.password": None,
    "ssl.keystore.key": None,
    "ssl.keystore.certificate.chain": None,
    "ssl.truststore.type": "JKS",
    "ssl.truststore.location": None,
    "ssl.truststore.password": None,
    "ssl.truststore.certificates": None,
    "ssl.endpoint.identification.algorithm": "https",
    "ssl.principal.mapping.rules": "DEFAULT",
    # Delegation tokens (engine/broker/delegation_tokens.py): off unless a secret is set.
    "delegation.token.secret.key": None,
    "delegation.token.master.key": None,
    "delegation.token.max.lifetime.ms": "604800000",
    "delegation.token.expiry.time.ms": "86400000",
    "delegation.token.expiry.check.interval.ms": "3600000",
}

# Kafka's listener.security.protocol.map when unset: every security protocol's name is a
# listener name of that protocol.
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# Listener names pk served as PLAINTEXT before it knew the map; still so when no map is given.
PLAINTEXT_ALIASES = ("BROKER", "CLIENT", "INTERNAL", "EXTERNAL")


@dataclass(frozen=True)
class Listener:
    """One `listeners` entry the broker serves: where it binds, what it advertises, how it
    authenticates (security_protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)."""
    name: str
    security_protocol: str
    host: str
    port: int
    advertised_host: str
    advertised_port: int

    @property
    def tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

# The streams group coordinator's settings (KIP-1071; defaults in engine/group_config.py, which
# reads them as the bounds and defaults of a streams group's own configs).
KNOWN.update({name: None for name in (
    "group.streams.session.timeout.ms", "group.streams.heartbeat.interval.ms",
    "group.streams.initial.rebalance.delay.ms", "group.streams.num.standby.replicas",
    "group.streams.acceptable.recovery.lag", "group.streams.assignors", "group.streams.max.size",
    "group.streams.task.offset.interval.ms", "group.streams.num.warmup.replicas",
    "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms",
    "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms",
    "group.streams.max.standby.replicas", "group.streams.min.task.offset.interval.ms")})

_LISTENER = re.compile(r"^(?:(?P<name>[A-Za-z0-9_]+)://)?(?P<host>\[[^\]]*\]|[^:/]*):(?P<port>\d+)$")


class ConfigError(ValueError):
    """A broker setting that cannot be used; the message is what the broker logs."""


@dataclass
class BrokerConfig:
    values: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)

    @classmethod
    def from_properties(cls, props: dict[str, str], overrides: dict[str, str] | None = None) -> "BrokerConfig":
        values = {**props, **(overrides or {})}
        # Kafka warns about a name that is not one of its configs, not about one pk leaves alone
        unknown = sorted(k for k in values if k not in KNOWN and k not in KAFKA_CONFIGS
                         and not k.startswith(("log4j.", "listener.name.")))
        return cls(values, unknown)

    def get(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if value is not None else KNOWN.get(key)

    def get_int(self, key: str) -> int:
        value = self.get(key)
        try:
            return int(str(value).strip())
        except (TypeError, ValueError):
            raise ConfigError(f"Invalid value {value} for configuration {key}: Not a number of type INT") from None

    def get_int_at_least(self, key: str, minimum: int) -> int:
        """get_int, refused below `minimum` (Kafka's ConfigDef.Range.atLeast, with its text)."""
        number = self.get_int(key)
        if number < minimum:
            raise ConfigError(f"Invalid value {number} for configuration {key}: Value must be at least {minimum}")
        return number

    def get_bool(self, key: str) -> bool:
        return str(self.get(key)).strip().lower() == "true"

    @property
    def node_id(self) -> int:
        return self.get_int("node.id" if self.values.get("node.id") is not None else "broker.id")

    @property
    def data_dir(self) -> str:
        """The first log dir: it also holds pk's own state (.pk/)."""
        return self.log_dirs[0]

    @property
    def log_dirs(self) -> list[str]:
        """log.dirs (else log.dir), each once, as absolute paths."""
        dirs = self.get("log.dirs") or self.get("log.dir")
        return list(dict.fromkeys(os.path.abspath(d.strip()) for d in dirs.split(",") if d.strip()))

    @property
    def listener(self) -> tuple[str, int]:
        """(host, port) of the first listener served; loopback unless told otherwise."""
        first = self.listeners[0]
        return first.host, first.port

    @property
    def advertised(self) -> tuple[str, int]:
        """(host, port) clients of the first listener are told to connect to."""
        first = self.listeners[0]
        return first.advertised_host, first.advertised_port

    def protocol_map(self) -> dict[str, str]:
        """listener.security.protocol.map: listener name -> security protocol."""
        text = self.get("listener.security.protocol.map")
        if not text:
            return {p: p for p in SECURITY_PROTOCOLS}
        mapping = {}
        for item in text.split(","):
            name, sep, protocol = item.strip().partition(":")
            if not sep or protocol.strip().upper() not in SECURITY_PROTOCOLS:
                raise ConfigError(f"Invalid value {text} for configuration listener.security.protocol.map: "
                                  f"Map entry '{item.strip()}' is invalid. The format must be listener:protocol "
                                  f"and the protocol one of {', '.join(SECURITY_PROTOCOLS)}")
            mapping[name.strip().upper()] = protocol.strip().upper()
        return mapping

    @property
    def listeners(self) -> list[Listener]:
        """Every client listener of `listeners`, in order (controller listeners are not served),
        with its advertised endpoint (`advertised.listeners` by listener name, else its own)."""
        text = self.get("listeners")
        controllers = {n.strip().upper() for n in (self.get("controller.listener.names") or "CONTROLLER").split(",")}
        mapping = self.protocol_map()
        advertised = {name: (host, port) for name, host, port in self._endpoints(self.get("advertised.listeners"))}
        served = []
        for name, host, port in self._endpoints(text):
            if name in controllers:
                continue
            protocol = mapping.get(name)
            if protocol is None and not self.get("listener.security.protocol.map") and name in PLAINTEXT_ALIASES:
                protocol = "PLAINTEXT"
            if protocol is None:
                raise ConfigError(f"No security protocol defined for listener {name}")
            ad_host, ad_port = advertised.get(name, (host, port))
            if ad_host in ("", "0.0.0.0", "::"):
                ad_host = "127.0.0.1"  # never advertise a wildcard: clients must reach it
            served.append(Listener(name, protocol, host, port, ad_host, ad_port))
        if not served:
            raise ConfigError(f"No listener to serve in listeners={text}")
        names = [listener.name for listener in served]
        if len(set(names)) != len(names):
            raise ConfigError(f"Each listener must have a different name, listeners: {text}")
        return served

    @staticmethod
    def _endpoints(text: str | None) -> list[tuple[str, str, int]]:
        """(NAME, host, port) of each entry of a listeners-style list; a name-less entry is PLAINTEXT."""
        found = []
        for item in (text or "").split(","):
            item = item.strip()
            if not item:
                continue
            m = _LISTENER.match(item)
            if not m:
                raise ConfigError(f"Error creating broker listeners from '{text}': Unable to parse {item} to a broker endpoint")
            found.append(((m.group("name") or "PLAINTEXT").upper(), m.group("host").strip("[]"), int(m.group("port"))))
        return found

    def listener_get(self, listener: str, key: str) -> str | None:
        """A listener's own value of `key` (listener.name.<listener>.<key>), else the broker's."""
        value = self.values.get(f"listener.name.{listener.lower()}.{key}")
        return value if value is not None else self.get(key)

    def engine_settings(self) -> dict[str, str]:
        """The broker settings the engine applies to topics and groups."""
        keys = ("num.partitions", "default.replication.factor", "auto.create.topics.enable",
                "delete.topic.enable", "offsets.topic.num.partitions", "offsets.topic.segment.bytes",
                "log.retention.check.interval.ms", "log.retention.hours", "log.retention.minutes",
                "log.retention.ms", "log.retention.bytes", "log.segment.bytes", "log.roll.ms",
                "log.roll.hours", "log.cleanup.policy", "message.max.bytes", "log.message.timestamp.type",
                "min.insync.replicas", "zookeeper.connect")
        return {k: self.values[k] for k in keys if self.values.get(k) is not None}
