"""Group configs (KIP-848's GROUP config resources, ConfigResource type 32): the per-group
overrides of the group coordinator's settings, as Kafka 4.4's GroupConfig defines them.

Each group config defaults to a broker setting (its synonym: `consumer.session.timeout.ms` to
`group.consumer.session.timeout.ms`, ...) and must lie within the broker's min/max settings for
it (GroupConfig.validateValues). `validate(configs, broker)` checks a group's whole set of
configs as Kafka does, with Kafka's texts (InvalidConfigurationError); `effective(...)` is the
value a group runs with. The configs are kept per group in `.pk/group-configs.json`
(config_store.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InvalidConfigurationError

FILE_NAME = "group-configs"


@dataclass(frozen=True)
class GroupConfigKey:
    name: str
    type: str  # int, long, boolean, string, list
    synonym: str  # the broker setting it defaults to (its own name when there is none)
    default: str  # Kafka 4.4's default of that broker setting
    at_least: int | None = None  # GroupConfig's ConfigDef lower bound
    bounds: tuple[str, str] | None = None  # the broker's (min, max) settings it must lie within
    internal: bool = False  # described only when set (ConfigDef's internal configs)
    documentation: str = ""


def _key(name, type_, synonym, default, at_least=None, bounds=None, internal=False, doc=""):
    return GroupConfigKey(name, type_, synonym or name, default, at_least, bounds, internal, doc)


# In GroupConfig's definition order (ConfigDef parses them in it, so a change with several
# bad values reports the first of this order).
KEYS = [
    _key("consumer.session.timeout.ms", "int", "group.consumer.session.timeout.ms", "45000", 1,
         ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
         doc="How long a consumer-protocol member may go without a heartbeat before it is fenced."),
    _key("consumer.heartbeat.interval.ms", "int", "group.consumer.heartbeat.interval.ms", "5000", 1,
         ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
         doc="The heartbeat interval the coordinator gives a consumer-protocol member."),
    _key("consumer.assignment.interval.ms", "int", "group.consumer.assignment.interval.ms", "1000", 0,
         ("group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"),
         doc="The least time between two target assignments of a consumer group."),
    _key("consumer.assignor.offload.enable", "boolean", "group.consumer.assignor.offload.enable", "true",
         internal=True),
    _key("share.session.timeout.ms", "int", "group.share.session.timeout.ms", "45000", 1,
         ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
         doc="How long a share-group member may go without a heartbeat before it is fenced."),
    _key("share.heartbeat.interval.ms", "int", "group.share.heartbeat.interval.ms", "5000", 1,
         ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
         doc="The heartbeat interval the coordinator gives a share-group member."),
    _key("share.record.lock.duration.ms", "int", "group.share.record.lock.duration.ms", "30000", 1000,
         ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
         doc="How long a share-group consumer holds a record it acquired."),
    _key("share.delivery.count.limit", "int", "group.share.delivery.count.limit", "5", 2,
         ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
         doc="How many times a record is delivered to a share group at most."),
    _key("share.partition.max.record.locks", "int", "group.share.partition.max.record.locks", "2000", 100,
         ("group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"),
         doc="How many records of one share-partition may be acquired at once."),
    _key("share.auto.offset.reset", "string", None, "latest",
         doc="Where a share-partition starts: earliest, latest or by_duration:<ISO-8601 duration>."),
    _key("share.assignment.interval.ms", "int", "group.share.assignment.interval.ms", "1000", 0,
         ("group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"),
         doc="The least time between two target assignments of a share group."),
    _key("share.assignor.offload.enable", "boolean", "group.share.assignor.offload.enable", "true", internal=True),
    _key("streams.session.timeout.ms", "int", "group.streams.session.timeout.ms", "45000", 1,
         ("group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
         doc="How long a streams-group member may go without a heartbeat before it is fenced."),
    _key("streams.heartbeat.interval.ms", "int", "group.streams.heartbeat.interval.ms", "5000", 1,
         ("group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"),
         doc="The heartbeat interval the coordinator gives a streams-group member."),
    _key("streams.num.standby.replicas", "int", "group.streams.num.standby.replicas", "0", 0,
         (None, "group.streams.max.standby.replicas"), doc="How many standby replicas each task has."),
    _key("streams.initial.rebalance.delay.ms", "int", "group.streams.initial.rebalance.delay.ms", "3000", 0,
         doc="How long a new streams group waits for more members before its first assignment."),
    _key("streams.assignment.interval.ms", "int", "group.streams.assignment.interval.ms", "1000", 0,
         ("group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms"),
         doc="The least time between two target assignments of a streams group."),
    _key("streams.rack.aware.assignment.tags", "list", "group.streams.rack.aware.assignment.tags", "",
         doc="The client tags standby replicas are spread over."),
    _key("streams.assignor.offload.enable", "boolean", "group.streams.assignor.offload.enable", "true",
         internal=True),
    _key("streams.task.offset.interval.ms", "int", "group.streams.task.offset.interval.ms", "60000", 1,
         ("group.streams.min.task.offset.interval.ms", None), internal=True),
    _key("streams.num.warmup.replicas", "int", "group.streams.num.warmup.replicas", "2", 0,
         (None, "group.streams.max.warmup.replicas"), internal=True),
    _key("streams.acceptable.recovery.lag", "long", "group.streams.acceptable.recovery.lag", "10000", 0,
         internal=True),
    _key("streams.assignor.name", "string", "group.streams.assignors", "sticky",
         doc="The task assignor of this streams group (one of group.streams.assignors)."),
    _key("share.isolation.level", "string", None, "read_uncommitted",
         doc="read_committed: a share group gets only committed transactional records."),
    _key("share.renew.acknowledge.enable", "boolean", None, "true",
         doc="Whether share consumers may renew their acquisition locks."),
    _key("errors.deadletterqueue.topic.name", "string", None, "",
         doc="The dead-letter queue topic of this share group (none when blank)."),
    _key("errors.deadletterqueue.copy.record.enable", "boolean", None, "false",
         doc="Whether a dead-letter record carries a copy of the original record."),
]
CONFIGS = {k.name: k for k in KEYS}

# Kafka 4.4's defaults of the broker's bounds on group configs (GroupCoordinatorConfig,
# ShareGroupConfig); a broker may set them in server.properties.
BOUND_DEFAULTS = {
    "group.consumer.min.session.timeout.ms": "45000", "group.consumer.max.session.timeout.ms": "60000",
    "group.consumer.min.heartbeat.interval.ms": "5000", "group.consumer.max.heartbeat.interval.ms": "15000",
    "group.consumer.min.assignment.interval.ms": "0", "group.consumer.max.assignment.interval.ms": "15000",
    "group.share.min.session.timeout.ms": "45000", "group.share.max.session.timeout.ms": "60000",
    "group.share.min.heartbeat.interval.ms": "5000", "group.share.max.heartbeat.interval.ms": "15000",
    "group.share.min.record.lock.duration.ms": "15000", "group.share.max.record.lock.duration.ms": "60000",
    "group.share.min.delivery.count.limit": "2", "group.share.max.delivery.count.limit": "10",
    "group.share.min.partition.max.record.locks": "100", "group.share.max.partition.max.record.locks": "4000",
    "group.share.min.assignment.interval.ms": "0", "group.share.max.assignment.interval.ms": "15000",
    "group.streams.min.session.timeout.ms": "45000", "group.streams.max.session.timeout.ms": "60000",
    "group.streams.min.heartbeat.interval.ms": "5000", "group.streams.max.heartbeat.interval.ms": "15000",
    "group.streams.min.assignment.interval.ms": "0", "group.streams.max.assignment.interval.ms": "15000",
    "group.streams.max.standby.replicas": "2", "group.streams.min.task.offset.interval.ms": "15000",
    "group.streams.max.warmup.replicas": "20",
}
# (session, heartbeat) pairs: a group's session timeout must exceed its heartbeat interval
_SESSION_PAIRS = [(f"{kind}.session.timeout.ms", f"{kind}.heartbeat.interval.ms")
                  for kind in ("consumer", "share", "streams")]
_DURATION = re.compile(r"P(?!$)(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?", re.I)


def broker_setting(broker_get, name: str) -> str:
    """A broker setting the group configs depend on: the broker's own value, else Kafka's default."""
    value = broker_get(name)
    if value is not None:
        return str(value).strip()
    key = next((k for k in KEYS if k.synonym == name), None)
    return key.default if key is not None else BOUND_DEFAULTS[name]


def default_of(key: GroupConfigKey, broker_get) -> str:
    """The value a group runs with when it does not set `key`: the broker setting it defaults to
    (the first of group.streams.assignors for the assignor)."""
    value = broker_setting(broker_get, key.synonym) if key.synonym != key.name else key.default
    if key.name == "streams.assignor.name":
        value = value.split(",")[0].strip()
    return value


def _parse(key: GroupConfigKey, value: str):
    """ConfigDef's parse of one value, with its messages."""
    text = value.strip()
    if key.type in ("int", "long"):
        limit = 2**31 if key.type == "int" else 2**63
        if not re.fullmatch(r"[+-]?\d+", text) or not -limit <= int(text) < limit:
            raise InvalidConfigurationError(f"Invalid value {value} for configuration {key.name}: "
                                            f"Not a number of type {key.type.upper()}")
        number = int(text)
        if key.at_least is not None and number < key.at_least:
            raise InvalidConfigurationError(f"Invalid value {number} for configuration {key.name}: "
                                            f"Value must be at least {key.at_least}")
        return number
    if key.type == "boolean":
        if text.lower() not in ("true", "false"):
            raise InvalidConfigurationError(f"Invalid value {value} for configuration {key.name}: "
                                            "Expected value to be either true or false")
        return text.lower() == "true"
    if key.type == "list":
        return [t for t in re.split(r"\s*,\s*", text)] if text else []
    if key.name == "share.isolation.level" and text not in ("read_committed", "read_uncommitted"):
        raise InvalidConfigurationError(f"Invalid value {value} for configuration {key.name}: "
                                        "String must be one of: read_committed, read_uncommitted")
    if key.name == "share.auto.offset.reset" and not (
            text in ("earliest", "latest")
            or (text.startswith("by_duration:") and _DURATION.fullmatch(text[len("by_duration:"):]))):
        raise InvalidConfigurationError(
            f"Invalid value {value} for configuration {key.name}: Invalid value `{value}` for configuration "
            f"{key.name}. The value must be either 'earliest', 'latest' or of the format "
            "'by_duration:<PnDTnHnMn.nS>'.")
    return value


def _bounds_order() -> list:
    """KEYS in the order Kafka's GroupConfig checks their bounds (the first failing one is
    reported): each kind's heartbeat interval before its session timeout."""
    order = list(KEYS)
    for kind in ("consumer", "share", "streams"):
        names = [k.name for k in order]
        session, heartbeat = f"{kind}.session.timeout.ms", f"{kind}.heartbeat.interval.ms"
        if session in names and heartbeat in names:
            i, j = names.index(session), names.index(heartbeat)
            if i < j:
                order[i], order[j] = order[j], order[i]
    return order


def validate(configs: dict[str, str], broker_get) -> None:
    """GroupConfig.validate: the names, each value's parse, then the broker's bounds and the
    rules between configs. `broker_get(name)` reads a broker setting (None: unset)."""
    for name in configs:
        if name not in CONFIGS:
            raise InvalidConfigurationError(f"Unknown group config name: {name}")
    parsed = {k.name: _parse(k, configs[k.name]) for k in KEYS if k.name in configs}
    tags = parsed.get("streams.rack.aware.assignment.tags")
    if tags is not None and len(set(tags)) != len(tags):
        raise InvalidConfigurationError("streams.rack.aware.assignment.tags must not contain duplicate tag keys.")
    for key in _BOUNDS_ORDER:
        if key.bounds is None or key.name not in parsed:
            continue
        low, high = (int(broker_setting(broker_get, b)) if b else None for b in key.bounds)
        value = parsed[key.name]
        if low is not None and high is not None and not low <= value <= high:
            raise InvalidConfigurationError(f"{key.name} must be in the range {low} to {high} inclusive.")
        if low is None and value > high:
            raise InvalidConfigurationError(f"{key.name} must be less than or equal to {high}")
        if high is None and value < low:
            raise InvalidConfigurationError(f"{key.name} must be greater than or equal to {low}")
    assignor = parsed.get("streams.assignor.name")
    if assignor is not None:
        registered = [a.strip() for a in broker_setting(broker_get, "group.streams.assignors").split(",")]
        if assignor not in registered:
            raise InvalidConfigurationError(f"streams.assignor.name '{assignor}' is not a registered task "
                                            f"assignor. Registered assignors are: [{', '.join(registered)}].")
    for session, heartbeat in _SESSION_PAIRS:
        if session in parsed or heartbeat in parsed:
            s = parsed.get(session, int(default_of(CONFIGS[session], broker_get)))
            h = parsed.get(heartbeat, int(default_of(CONFIGS[heartbeat], broker_get)))
            if s <= h:
                raise InvalidConfigurationError(f"{session} must be greater than {heartbeat}")
    dlq = configs.get("errors.deadletterqueue.topic.name")
    if dlq and dlq.startswith("__"):
        raise InvalidConfigurationError("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'")


def effective(overrides: dict[str, str], name: str, broker_get) -> str:
    """The value of one config for a group with these overrides."""
    key = CONFIGS[name]
    return overrides[name].strip() if name in overrides else default_of(key, broker_get)


_BOUNDS_ORDER = _bounds_order()
