"""Dynamic broker configs (Kafka's DynamicBrokerConfig): AlterConfigs and IncrementalAlterConfigs
of a BROKER resource, per broker (`0`) or as the cluster-wide default (the empty name).

A lone broker keeps them in the data directory, `.pk/broker-configs.json` (engine/config_store.py),
under the names Kafka gives their ZooKeeper nodes (`<id>`, `<default>`), so they survive restarts.
In ZooKeeper mode the znodes themselves, `/config/brokers/<id>` and `/config/brokers/<default>`,
are the source of truth, written and watched as a Kafka 2.8 cluster does
(zk_broker_configs.py): a default set through one broker reaches every broker at once.

Checks, in Kafka's order (DynamicBrokerConfig.validateConfigs, then the reconfigurable
components' own checks): a known config that needs a restart is refused, a
listener security config must carry its listener prefix, a per-broker config cannot be a
default, each value must parse and lie within its ConfigDef bounds, and the thread counts may
at most double or halve.

Describe lists a broker's configs with Kafka's synonyms (per-broker dynamic, then dynamic
default, then static, then built-in), for each name of the synonym chain in turn.

What pk applies at runtime: every config the engine takes topic defaults from (log.retention.*,
log.segment.bytes, log.roll.*, log.cleanup.policy, log.cleaner.delete.retention.ms,
message.max.bytes, min.insync.replicas, compression.type, ...) takes effect on every open log at
once (Engine.apply_dynamic_broker_config). The rest (thread counts, log cleaner tuning, listener
security, quotas, ...) is accepted, checked and kept as Kafka keeps it, and describes as set,
but does not change what pk does (docs/protocol.md).
"""

from __future__ import annotations

import asyncio
import logging
import re

from ..config_store import ConfigStore
from ..errors import InvalidConfigurationError, InvalidRequestError
from ..javacompat import hashmap_order
from .. import topic_config
from ..topic_config import java_double_str
from . import config_docs
from .config import KNOWN
from .dynamic_config_keys import DYNAMIC, KAFKA_CONFIGS, NON_DYNAMIC

log = logging.getLogger("kafka.server.DynamicBrokerConfig")

FILE_NAME = "broker-configs"
DEFAULT_NAME = "<default>"  # the cluster-wide default's resource, as Kafka's ZooKeeper node names it
# DescribeConfigs config sources
DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 2, 3, 4, 5
CONFIG_TYPES = {"boolean": 1, "string": 2, "int": 3, "short": 4, "long": 5, "double": 6, "list": 7,
                "class": 8, "password": 9}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
# DynamicBrokerConfig.brokerConfigSynonyms: the settings that stand for one another, first wins
_CHAINS = [("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
           ("log.roll.ms", "log.roll.hours"), ("log.roll.jitter.ms", "log.roll.jitter.hours"),
           ("log.flush.interval.ms", "log.flush.scheduler.interval.ms")]
_BUILT_IN = {"log.retention.hours": "168", "log.roll.hours": "168", "log.roll.jitter.hours": "0",
             "log.flush.scheduler.interval.ms": str(2**63 - 1)}
_LISTENER_PREFIX = re.compile(r"^listener\.name\.[^.]+\.(.+)$")
# DynamicThreadPool's configs: a change may at most double, or halve, the current count
_THREAD_POOLS = ("num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
                 "background.threads")
_SECURITY = ("ssl.key.password", "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.keystore.location",
             "ssl.keystore.password", "ssl.keystore.type", "ssl.truststore.certificates",
             "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type")


def chain(name: str) -> tuple[str, ...]:
    for c in _CHAINS:
        if name in c:
            return c[c.index(name):]
    m = _LISTENER_PREFIX.match(name)
    return (name, m.group(1)) if m else (name,)


def config_type(name: str) -> str | None:
    """The ConfigDef type of a broker config (a listener-prefixed one: its suffix's); None when
    Kafka does not know the name."""
    m = _LISTENER_PREFIX.match(name)
    base = m.group(1) if m else name
    if base in KAFKA_CONFIGS:
        return KAFKA_CONFIGS[base][0]
    if base in DYNAMIC:  # KafkaConfig.configTypeExact: then DynamicConfig.Broker's (the replication throttles)
        return DYNAMIC[base][0]
    return config_docs.BROKER_TYPES.get(base) or ("string" if base in KNOWN or base in NON_DYNAMIC else None)


def _java_set(names) -> str:
    return "[" + ", ".join(hashmap_order(list(dict.fromkeys(names)))) + "]"


def _invalid(name: str, value, reason: str) -> InvalidRequestError:
    return InvalidRequestError(f"Invalid value {value} for configuration {name}: {reason}")


def _check_value(name: str, value: str) -> None:
    """ConfigDef's parse and validator of one value (DynamicBrokerConfig.validateConfigTypes)."""
    m = _LISTENER_PREFIX.match(name)
    spec = DYNAMIC.get(m.group(1) if m else name)
    if spec is None:
        return
    kind, _default, _per_broker, validator = spec
    text = value.strip()
    number = None
    if kind in ("int", "long", "short"):
        bits = {"int": 31, "long": 63, "short": 15}[kind]
        if not re.fullmatch(r"[+-]?\d+", text) or not -2**bits <= int(text) < 2**bits:
            raise _invalid(name, value, f"Not a number of type {kind.upper()}")
        number = int(text)
    elif kind == "double":
        try:
            number = float(text)
        except ValueError:
            raise _invalid(name, value, "Not a number of type DOUBLE") from None
    elif kind == "boolean" and text.lower() not in ("true", "false"):
        raise _invalid(name, value, "Expected value to be either true or false")
    bounds = re.fullmatch(r"\[(-?[\d.]+),\.\.\.(?:,(-?[\d.]+))?\]", validator)
    if number is not None and bounds:
        low, high = float(bounds.group(1)), bounds.group(2)
        shown = number if kind != "double" else java_double_str(number)
        if number < low:
            raise _invalid(name, shown, f"Value must be at least {bounds.group(1)}")
        if high is not None and number > float(high):
            raise _invalid(name, shown, f"Value must be no more than {high}")
    choices = re.fullmatch(r"\[([^\].]+)\]", validator)
    if choices and kind in ("string", "list"):
        allowed = [c.strip() for c in choices.group(1).split(",")]
        items = [v.strip() for v in text.split(",")] if kind == "list" else [text]
        bad = next((v for v in items if v not in allowed), None)
        if bad is not None:
            raise _invalid(name, value, f"String must be one of: {', '.join(allowed)}")


class DynamicBrokerConfigs:
    def __init__(self, broker, store=None):
        """`store`: where the configs are kept, a ZooKeeperBrokerConfigs in ZooKeeper mode;
        the data directory's file otherwise."""
        self.broker = broker
        self.node = str(broker.node_id)
        self.store = store if store is not None else ConfigStore(broker.engine.data_dir, FILE_NAME)
        self.apply()
        if hasattr(self.store, "watch"):  # another broker's (or kafka-configs') change applies here too
            loop = asyncio.get_running_loop()
            self.store.watch(lambda resource, configs: loop.call_soon_threadsafe(self._changed_elsewhere,
                                                                                resource, configs))

    def _changed_elsewhere(self, resource: str, configs: dict[str, str]) -> None:
        """BrokerConfigHandler.processConfigChanges: a znode of this broker's changed."""
        log.info("Processing override for entityPath: brokers/%s with config names: %s", resource, sorted(configs))
        self.store.update(resource, configs)
        self.apply()

    # ------------------------------------------------------------------ values
    def per_broker(self) -> dict[str, str]:
        return self.store.get(self.node)

    def defaults(self) -> dict[str, str]:
        return self.store.get(DEFAULT_NAME)

    def current(self, name: str) -> str | None:
        """A setting's value now: this broker's dynamic value, the dynamic default, the
        server.properties one, then Kafka's default."""
        for source in (self.per_broker(), self.defaults(), self.broker.config.values):
            if source.get(name) is not None:
                return source[name]
        spec = DYNAMIC.get(name)
        return spec[1] if spec is not None else KNOWN.get(name)

    def apply(self) -> None:
        """Hand the dynamic values to the engine, which re-derives every open log's config."""
        values = {**self.defaults(), **self.per_broker()}
        self.broker.engine.apply_dynamic_broker_config(values)

    # ------------------------------------------------------------------ checks
    def _resource(self, name: str) -> str:
        if name == "":
            return DEFAULT_NAME
        if not name.lstrip("-").isdigit():
            raise InvalidRequestError(f"Node id must be an integer, but it is: {name}")
        if name != self.node:
            raise InvalidRequestError(f"Unexpected broker id, expected {self.node}, but received {name}")
        return name

    def validate(self, props: dict[str, str], per_broker: bool) -> None:
        """DynamicBrokerConfig.validateConfigs of a resource's new set of configs, then the
        reconfigurable components' checks against the current values."""
        fixed = [n for n in props if n in NON_DYNAMIC]
        if fixed:
            raise InvalidRequestError(f"Cannot update these configs dynamically: {_java_set(fixed)}")
        unprefixed = [n for n in props if n in _SECURITY]
        if unprefixed:
            raise InvalidRequestError("These security configs can be dynamically updated only per-listener "
                                      f"using the listener prefix: {_java_set(unprefixed)}")
        if not per_broker:
            only = [n for n in props if (n in DYNAMIC and DYNAMIC[n][2]) or _LISTENER_PREFIX.match(n)]
            if only:
                raise InvalidRequestError("Cannot update these configs at default cluster level, broker id must "
                                          f"be specified: {_java_set(only)}")
        for name, value in props.items():
            _check_value(name, value)
        for name, value in props.items():
            problem = self._reconfiguration_problem(name, value)
            if problem:
                raise InvalidRequestError(f"Invalid value org.apache.kafka.common.config.ConfigException: {problem} "
                                          "for configuration Invalid dynamic configuration")

    def _reconfiguration_problem(self, name: str, value: str) -> str | None:
        if name not in _THREAD_POOLS and name != "log.cleaner.threads":
            return None
        try:
            new, old = int(value.strip()), int(str(self.current(name)).strip())
        except ValueError:  # (a malformed server.properties value: the broker's own problem)
            return None
        if name == "log.cleaner.threads":  # LogCleaner.validateReconfiguration
            if new == 0:  # Kafka 4.4 divides by the new count first
                raise InvalidRequestError("/ by zero")
            if new > 2 * old:
                return f"Log cleaner threads cannot be increased to more than double the current value {old}"
            if new < old / 2:
                return f"Log cleaner threads cannot be decreased to less than half the current value {old}"
            return None
        if new > 2 * old:
            return (f"Dynamic thread count update validation failed for {name}={new}, value should not be "
                    f"greater than double the current value {old}")
        if new < old / 2:
            return (f"Dynamic thread count update validation failed for {name}={new}, value should be at "
                    f"least half the current value {old}")
        return None

    # ------------------------------------------------------------------ alterations
    async def incremental_alter(self, name: str, configs: list[dict], validate_only: bool) -> None:
        resource = self._resource(name)

        def change(current: dict[str, str]) -> dict[str, str]:
            for c in configs:
                _apply(current, c["name"], c["config_operation"], c["value"])
            self.validate(current, resource != DEFAULT_NAME)
            return current

        await self._alter(resource, change, validate_only)

    async def replace(self, name: str, configs: list[dict], validate_only: bool) -> None:
        """AlterConfigs: the resource's dynamic configs become exactly those given."""
        resource = self._resource(name)

        def change(_current: dict[str, str]) -> dict[str, str]:
            new = {}
            for c in configs:
                if c["value"] is None:
                    raise InvalidRequestError(f"Null value not supported for : {c['name']}")
                new[c["name"]] = c["value"]
            self.validate(new, resource != DEFAULT_NAME)
            return new

        await self._alter(resource, change, validate_only)

    async def _alter(self, resource: str, change, validate_only: bool) -> None:
        if validate_only:
            change(dict(self.store.get(resource)))
            return
        if isinstance(self.store, ConfigStore):
            self.store.alter(resource, change)
        else:  # ZooKeeper's round trips off the event loop
            await asyncio.get_running_loop().run_in_executor(None, self.store.alter, resource, change)
        self.apply()

    # ------------------------------------------------------------------ DescribeConfigs
    def broker_entries(self, with_synonyms: bool) -> list[dict]:
        """Every config of this broker, sorted: Kafka's KafkaConfig names, the dynamic ones set,
        and pk's own settings where server.properties sets them."""
        static = self.static_values()
        names = set(KAFKA_CONFIGS) | set(self.per_broker()) | set(self.defaults()) | \
            {k for k in static if k in KNOWN}
        return [self.entry(key, with_synonyms, static, read_only=key not in DYNAMIC) for key in sorted(names)]

    def static_values(self) -> dict[str, str]:
        """What server.properties (and --override) set."""
        static = {k: v for k, v in self.broker.config.values.items() if v is not None}
        if "node.id" in static and "broker.id" not in static:
            static["broker.id"] = static["node.id"]  # as KafkaConfig, which takes one for the other
        return static

    def synonyms(self, name: str) -> list[dict]:
        """The synonym chain of one broker config, as a group config that defaults to it shows it."""
        return self.entry(name, True, self.static_values(), read_only=True)["synonyms"]

    def entry(self, name: str, with_synonyms: bool, static: dict[str, str], read_only: bool) -> dict:
        """One config of this broker as DescribeConfigs tells it (ConfigHelper.createBrokerConfigEntry)."""
        kind = config_type(name)
        sensitive = kind is None or kind == "password"  # Kafka hides what it cannot type
        names = chain(name)
        found = []
        # Kafka 4's controller always records the cluster-wide min.insync.replicas (ELR)
        defaults = {"min.insync.replicas": topic_config.cluster_defaults(static)["min.insync.replicas"],
                    **self.defaults()}
        for values, source in ((self.per_broker(), DYNAMIC_BROKER_CONFIG), (defaults, DYNAMIC_DEFAULT_BROKER_CONFIG),
                               (static, STATIC_BROKER_CONFIG)):
            found += [{"name": n, "value": values[n], "source": source} for n in names if values.get(n) is not None]
        for n in names:
            default = _default(n)
            if default is not None:
                found.append({"name": n, "value": default, "source": DEFAULT_CONFIG})
        while found and found[0]["name"] != name:
            found.pop(0)  # as Kafka: a chain whose head is not set describes nothing (log.retention.ms=null)
        own = [f for f in found if f["name"] == name]
        value = own[0]["value"] if own else None
        source = found[0]["source"] if found else DEFAULT_CONFIG
        if sensitive:
            value, found = None, [{**f, "value": None} for f in found]
        return {"name": name, "value": value, "read_only": read_only, "config_source": source,
                "is_sensitive": sensitive, "synonyms": found if with_synonyms else [],
                "config_type": CONFIG_TYPES.get(kind or "", 0), "documentation": None}

    def default_entries(self, min_insync_replicas: str, with_synonyms: bool) -> list[dict]:
        """The cluster-wide defaults: Kafka 4's controller always records min.insync.replicas
        there (ELR); the rest are what was set."""
        values = {"min.insync.replicas": min_insync_replicas, **self.defaults()}
        entries = []
        for name in sorted(values):
            kind = config_type(name)
            sensitive = kind is None or kind == "password"
            value = None if sensitive else values[name]
            entries.append({"name": name, "value": value, "read_only": False,
                            "config_source": DYNAMIC_DEFAULT_BROKER_CONFIG, "is_sensitive": sensitive,
                            "synonyms": [{"name": name, "value": value, "source": DYNAMIC_DEFAULT_BROKER_CONFIG}]
                            if with_synonyms else [],
                            "config_type": CONFIG_TYPES.get(kind or "", 0), "documentation": None})
        return entries


def _default(name: str) -> str | None:
    """A config's built-in default: pk's own where pk's differs (config.KNOWN: listeners on
    loopback, one replica for the internal topics, ...), else Kafka's."""
    if KNOWN.get(name) is not None and name != "broker.id":  # (broker.id: KafkaConfig's -1, node.id stands in)
        return KNOWN[name]
    if name in KAFKA_CONFIGS:
        return KAFKA_CONFIGS[name][1]
    return _BUILT_IN.get(name)


def _apply(configs: dict[str, str], name: str, op: int, value: str | None) -> None:
    if op == DELETE:
        configs.pop(name, None)
    elif op == SET:
        if value is None:
            raise InvalidRequestError(f"Null value not supported for : {name}")
        configs[name] = value
    elif op in (APPEND, SUBTRACT):
        if config_type(name) != "list":
            verb = "append" if op == APPEND else "subtract"
            raise InvalidConfigurationError(f"Config value {verb} is not allowed for config key: {name}")
        items = [v for v in configs.get(name, "").split(",") if v]
        changes = [v.strip() for v in (value or "").split(",") if v.strip()]
        items = items + [v for v in changes if v not in items] if op == APPEND else \
            [v for v in items if v not in changes]
        configs[name] = ",".join(items)
    else:
        raise InvalidRequestError(f"Unknown operations type {op}")
