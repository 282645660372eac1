"""Kafka 4.4's topic-level configs: names, types, defaults, validation and broker synonyms.

The table is LogConfig's ConfigDef as Kafka 4.4.0's jars define it (names, types, defaults,
validator ranges read from the running classes); the rest mirrors, at tag 3.7.1 (unchanged
where pk uses it):
  storage/.../log/LogConfig.java              the definitions, validate(), validateValues()
  clients/.../config/ConfigDef.java           parseType() and the validators' messages
  storage/.../log/ThrottledReplicaListValidator.java, server-common/.../MetadataVersion.java
  server-common/.../config/ServerTopicConfigSynonyms.java and core/.../KafkaConfig.scala
                                              which broker setting stands in for a topic config

Values are parsed the way Java parses them (String.trim, Integer.parseInt, Double.parseDouble,
String.split), not the way Python would: Python's int()/float() accept "1_000", " 5\u00a0",
"inf" and "nan", Java does not (and Java accepts "1d", "0x1p3", "NaN" that Python rejects).

Stdlib only and cheap to import: nothing is compiled at import time; the one regular expression
(for Double.parseDouble) is built the first time a double is parsed.
"""

from __future__ import annotations

import math

from .errors import InvalidConfigurationError
from .javacompat import hashmap_order, java_split, string_hash

TYPE_CHECKING = False
if TYPE_CHECKING:  # for type checkers only: importing typing costs the CLI start-up time
    from typing import Any, Callable
    Validator = Callable[[str, Any], None]

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1

# Java's String.trim() strips every char <= U+0020; Java's regex \s is only these six.
_JAVA_TRIM = "".join(map(chr, range(33)))
_JAVA_REGEX_WS = " \t\n\x0b\f\r"


def _trim(s: str) -> str:
    return s.strip(_JAVA_TRIM)


def _invalid(name: str, value: Any, reason: str) -> InvalidConfigurationError:
    # ConfigException(name, value, message): "Invalid value " + value + " for configuration " ...
    return InvalidConfigurationError(f"Invalid value {_java_str(value)} for configuration {name}: {reason}")


# --------------------------------------------------------------------------------------------
# Java's toString() of the values that appear in messages and in describe output
# --------------------------------------------------------------------------------------------

def java_double_str(d: float) -> str:
    """Double.toString: shortest round-trip digits (JDK 19+ algorithm, which repr also uses),
    plain notation for 1e-3 <= |d| < 1e7, else computerized scientific ("1.0E7", "1.5E-4")."""
    if d != d:
        return "NaN"
    if d in (math.inf, -math.inf):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    shortest = repr(abs(d))
    if len(shortest.replace(".", "").replace("0", "").partition("e")[0]) == 1:
        # JDK 19+: when one digit is enough, the closest 2-digit decimal that still reads back
        # as d is preferred (Double.MIN_VALUE prints "4.9E-324", not "5.0E-324").
        two = "%.1e" % abs(d)
        if float(two) == abs(d):
            shortest = two
    mantissa, _, exp = shortest.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + int(exp or 0)      # value = 0.<digits> * 10**point
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    e10 = point - 1                          # value = d.ddd * 10**e10
    if -3 <= e10 < 7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        digits = digits.ljust(point, "0")
        return f"{sign}{digits[:point]}.{digits[point:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e10}"


def _java_str(value: Any) -> str:
    """String.valueOf for the Java types a config value can have."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, list):                     # AbstractCollection.toString
        return "[" + ", ".join(_java_str(v) for v in value) + "]"
    return str(value)


# --------------------------------------------------------------------------------------------
# ConfigDef.parseType
# --------------------------------------------------------------------------------------------

def _parse_integer(s: str, lo: int, hi: int) -> int | None:
    """Integer.parseInt / Long.parseLong: optional sign, then decimal digits only (Java's
    Character.digit also takes non-ASCII Nd digits of the BMP); no spaces, no '_'."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not all(c.isdecimal() and c <= "\uffff" for c in body):
        return None
    n = 0
    for c in body:                  # digit by digit: no int() length limit, stops on overflow
        n = n * 10 + int(c)
        if n > hi + 1:
            return None
    n = -n if s[0] == "-" else n
    return n if lo <= n <= hi else None


_double_re = None


def _parse_double(s: str) -> float | None:
    """Double.parseDouble (FloatingDecimal.readJavaFormatString): "NaN", "Infinity", decimal or
    hex (0x...p...) with an optional f/F/d/D suffix, ASCII digits only, after a trim."""
    global _double_re
    if _double_re is None:
        import re
        _double_re = re.compile(
            r"[+-]?(?:NaN|Infinity"
            r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
            r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)")
    s = _trim(s)
    m = _double_re.fullmatch(s)
    if m is None:
        return None
    negative = s.startswith("-")
    if m["dec"] is not None:
        v = float(m["dec"])
    elif m["hex"] is not None:
        try:
            v = float.fromhex(m["hex"])
        except OverflowError:                       # Java rounds to Infinity
            v = math.inf
    else:
        v = math.nan if s.endswith("NaN") else math.inf
    return -v if negative else v


def _equals_ignore_case(a: str, b: str) -> bool:
    """String.equalsIgnoreCase: char by char, equal after toUpperCase or toLowerCase."""
    return len(a) == len(b) and all(
        x == y or x.upper() == y.upper() or x.lower() == y.lower() for x, y in zip(a, b))


def _split_list(trimmed: str) -> list[str]:
    # COMMA_WITH_WHITESPACE.split(trimmed, -1): "\s*,\s*", trailing empty strings kept.
    return [p.strip(_JAVA_REGEX_WS) for p in trimmed.split(",")]


def parse_type(name: str, value: str, type_: str) -> Any:
    """ConfigDef.parseType for a String value. Messages quote the value as given (untrimmed)."""
    trimmed = _trim(value)
    if type_ == "boolean":
        if _equals_ignore_case(trimmed, "true"):
            return True
        if _equals_ignore_case(trimmed, "false"):
            return False
        raise _invalid(name, value, "Expected value to be either true or false")
    if type_ == "string":
        return trimmed
    if type_ == "list":
        return _split_list(trimmed) if trimmed else []
    if type_ == "int":
        n = _parse_integer(trimmed, INT_MIN, INT_MAX)
    elif type_ == "long":
        n = _parse_integer(trimmed, LONG_MIN, LONG_MAX)
    elif type_ == "double":
        n = _parse_double(trimmed)
    else:
        raise ValueError(f"unknown config type {type_!r}")
    if n is None:                                   # NumberFormatException
        raise _invalid(name, value, f"Not a number of type {type_.upper()}")
    return n


# --------------------------------------------------------------------------------------------
# Validators: one factory per ConfigDef.Validator kind LogConfig uses. Each returns a
# callable(name, parsed_value) that raises InvalidConfigurationError; messages quote the
# *parsed* value (so "+007" is reported as 7 and "2" for a double as 2.0).
# --------------------------------------------------------------------------------------------

def at_least(minimum: int) -> Validator:
    return between(minimum, None)


def between(minimum: int, maximum: int | None) -> Validator:
    """ConfigDef.Range: compares as doubles (NaN passes both checks, as in Java); the bounds
    are Java Integers in LogConfig, so messages say "1", not "1.0"."""
    def validate(name: str, value: Any) -> None:
        if float(value) < float(minimum):
            raise _invalid(name, value, f"Value must be at least {minimum}")
        if maximum is not None and float(value) > float(maximum):
            raise _invalid(name, value, f"Value must be no more than {maximum}")
    return validate


def gzip_level() -> Validator:
    """GzipCompression's level check: 1..9, or -1 (Deflater.DEFAULT_COMPRESSION)."""
    def validate(name: str, value: Any) -> None:
        if value != -1 and not 1 <= value <= 9:
            raise _invalid(name, value, "Value must be between 1 and 9 or equal to -1")
    return validate


def valid_string(*allowed: str) -> Validator:
    """ConfigDef.ValidString: exact, case-sensitive membership."""
    reason = "String must be one of: " + ", ".join(allowed)

    def validate(name: str, value: Any) -> None:
        if value not in allowed:
            raise _invalid(name, value, reason)
    return validate


def valid_list(*allowed: str) -> Validator:
    """ConfigDef.ValidList (3.7): every element must be allowed; the empty list passes."""
    check = valid_string(*allowed)

    def validate(name: str, value: Any) -> None:
        for element in value:
            check(name, element)
    return validate


def throttled_replica_list() -> Validator:
    """ThrottledReplicaListValidator: every trimmed element is "" or <digits>:<digits>, or the
    elements concatenated are exactly "*" (so "*," passes too). The message quotes the list."""
    def ok(element: str) -> bool:
        p, sep, b = element.partition(":")
        return element == "" or (sep == ":" and _ascii_digits(p) and _ascii_digits(b))

    def validate(name: str, value: Any) -> None:
        proposed = [_trim(e) for e in value]
        if not (all(ok(e) for e in proposed) or "".join(proposed) == "*"):
            raise _invalid(name, value, name + " must be the literal '*' or a list of replicas in the "
                           "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
    return validate


def _ascii_digits(s: str) -> bool:
    return s != "" and all("0" <= c <= "9" for c in s)


# MetadataVersion at 3.7.1: release -> its IV suffixes ("" when the version has none). A string
# is valid if it (cut to 2 dot-segments, 3 for "0.x") is an ibpVersion ("3.0-IV1") or the
# release of a *production* version ("3.0"); 3.8-IV0 exists but is not production, so "3.8"
# is rejected while "3.8-IV0" is accepted.
_IBP = (
    ("0.8.0", ("",)), ("0.8.1", ("",)), ("0.8.2", ("",)), ("0.9.0", ("",)),
    ("0.10.0", ("IV0", "IV1")), ("0.10.1", ("IV0", "IV1", "IV2")), ("0.10.2", ("IV0",)),
    ("0.11.0", ("IV0", "IV1", "IV2")), ("1.0", ("IV0",)), ("1.1", ("IV0",)),
    ("2.0", ("IV0", "IV1")), ("2.1", ("IV0", "IV1", "IV2")), ("2.2", ("IV0", "IV1")),
    ("2.3", ("IV0", "IV1")), ("2.4", ("IV0", "IV1")), ("2.5", ("IV0",)), ("2.6", ("IV0",)),
    ("2.7", ("IV0", "IV1", "IV2")), ("2.8", ("IV0", "IV1")), ("3.0", ("IV0", "IV1")),
    ("3.1", ("IV0",)), ("3.2", ("IV0",)), ("3.3", ("IV0", "IV1", "IV2", "IV3")), ("3.4", ("IV0",)),
    ("3.5", ("IV0", "IV1", "IV2")), ("3.6", ("IV0", "IV1", "IV2")),
    ("3.7", ("IV0", "IV1", "IV2", "IV3", "IV4")), ("3.8", ("IV0",)),
)
_NON_PRODUCTION_RELEASES = ("3.8",)
_ibp_keys: frozenset | None = None


def metadata_version_valid(version: str) -> bool:
    """MetadataVersion.fromVersionString succeeds (as of 3.7.1)."""
    global _ibp_keys
    if _ibp_keys is None:
        keys = {rel + ("-" + iv if iv else "") for rel, ivs in _IBP for iv in ivs}
        keys.update(rel for rel, _ in _IBP if rel not in _NON_PRODUCTION_RELEASES)
        _ibp_keys = frozenset(keys)
    segments = java_split(version, r"\.")
    n = 3 if version.startswith("0.") else 2
    key = version if n >= len(segments) else ".".join(segments[:n])
    return key in _ibp_keys


def metadata_version() -> Validator:
    """MetadataVersionValidator."""
    def validate(name: str, value: Any) -> None:
        if not metadata_version_valid(value):
            raise _invalid(name, value, f"Version {value} is not a valid version")
    return validate


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

class ConfigKey:
    """One topic config (a frozen record; not a dataclass, to keep `dataclasses` and `inspect`
    out of the CLI's import time).

    name, type ("int" | "long" | "double" | "boolean" | "string" | "list"), default (Kafka's
    default, typed: ConfigDef parses it at definition), validator (callable(name, value) or None),
    broker_synonym (ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS: the first broker setting
    that stands in for it, or None).
    """

    __slots__ = ("name", "type", "default", "validator", "broker_synonym")

    def __init__(self, name: str, type: str, default: Any, validator: Validator | None,
                 broker_synonym: str | None):
        for field, value in zip(self.__slots__, (name, type, default, validator, broker_synonym)):
            object.__setattr__(self, field, value)

    def __setattr__(self, field: str, value: Any) -> None:
        raise AttributeError(f"ConfigKey is read-only: cannot set {field}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigKey) and all(
            getattr(self, f) == getattr(other, f) for f in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  (the default can be a list)

    def __repr__(self) -> str:
        return f"ConfigKey({self.name!r}, {self.type!r}, {self.default!r}, broker_synonym={self.broker_synonym!r})"


# Broker settings that stand in for a topic config, highest priority first, with the factor
# KafkaConfig multiplies by (hours/minutes settings are INTs converted to ms). Topic configs
# not listed have exactly one synonym, ConfigKey.broker_synonym, with the same type.
_SYNONYM_CHAINS = {
    "segment.ms": (("log.roll.ms", 1), ("log.roll.hours", 3_600_000)),
    "segment.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", 3_600_000)),
    "flush.ms": (("log.flush.interval.ms", 1), ("log.flush.scheduler.interval.ms", 1)),
    "retention.ms": (("log.retention.ms", 1), ("log.retention.minutes", 60_000),
                     ("log.retention.hours", 3_600_000)),
}



def broker_synonym_chains() -> list[tuple[str, ...]]:
    """The broker settings that stand for one another (first wins): log.retention.ms/minutes/hours, ..."""
    return [tuple(name for name, _ in chain) for chain in _SYNONYM_CHAINS.values()]


_COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")  # BrokerCompressionType order

# Definition order of LogConfig's ConfigDef (ConfigDef.parse checks values in this order, so it
# decides which bad value is reported first). Columns: name, type, default, validator, synonym.
_DEFINITIONS = (
    # Kafka 4.4 requires at least 1 MiB (tests there use internal.segment.bytes for less); the
    # engine keeps 3.7's minimum, LegacyRecord.RECORD_OVERHEAD_V0, so small segments stay possible.
    ("segment.bytes", "int", 1024 * 1024 * 1024, at_least(14), "log.segment.bytes"),
    ("segment.ms", "long", 7 * 24 * 3_600_000, at_least(1), "log.roll.ms"),
    ("segment.jitter.ms", "long", 0, at_least(0), "log.roll.jitter.ms"),
    ("segment.index.bytes", "int", 10 * 1024 * 1024, at_least(4), "log.index.size.max.bytes"),
    ("flush.messages", "long", LONG_MAX, at_least(1), "log.flush.interval.messages"),
    ("flush.ms", "long", LONG_MAX, at_least(0), "log.flush.interval.ms"),
    ("retention.bytes", "long", -1, None, "log.retention.bytes"),     # may be negative: no validator
    ("retention.ms", "long", 7 * 24 * 3_600_000, at_least(-1), "log.retention.ms"),
    ("max.message.bytes", "int", 1024 * 1024 + 12, at_least(0), "message.max.bytes"),  # + Records.LOG_OVERHEAD
    ("max.decompressed.message.bytes", "int", INT_MAX - 8, between(1, INT_MAX - 8), "max.decompressed.message.bytes"),
    ("index.interval.bytes", "int", 4096, at_least(0), "log.index.interval.bytes"),
    ("delete.retention.ms", "long", 24 * 3_600_000, at_least(0), "log.cleaner.delete.retention.ms"),
    ("min.compaction.lag.ms", "long", 0, at_least(0), "log.cleaner.min.compaction.lag.ms"),
    ("max.compaction.lag.ms", "long", LONG_MAX, at_least(1), "log.cleaner.max.compaction.lag.ms"),
    ("file.delete.delay.ms", "long", 60_000, at_least(0), "log.segment.delete.delay.ms"),
    ("min.cleanable.dirty.ratio", "double", 0.5, between(0, 1), "log.cleaner.min.cleanable.ratio"),
    ("cleanup.policy", "list", ["delete"], valid_list("compact", "delete"), "log.cleanup.policy"),
    ("unclean.leader.election.enable", "boolean", False, None, "unclean.leader.election.enable"),
    ("min.insync.replicas", "int", 1, at_least(1), "min.insync.replicas"),
    ("compression.type", "string", "producer", valid_string(*_COMPRESSION_TYPES), "compression.type"),
    ("compression.gzip.level", "int", -1, gzip_level(), "compression.gzip.level"),
    ("compression.lz4.level", "int", 9, between(1, 17), "compression.lz4.level"),
    ("compression.zstd.level", "int", 3, between(-131072, 22), "compression.zstd.level"),
    ("preallocate", "boolean", False, None, "log.preallocate"),
    ("message.timestamp.type", "string", "CreateTime", valid_string("CreateTime", "LogAppendTime"),
     "log.message.timestamp.type"),
    ("message.timestamp.before.max.ms", "long", LONG_MAX, at_least(0), "log.message.timestamp.before.max.ms"),
    ("message.timestamp.after.max.ms", "long", 3_600_000, at_least(0), "log.message.timestamp.after.max.ms"),
    ("leader.replication.throttled.replicas", "list", [], throttled_replica_list(), None),
    ("follower.replication.throttled.replicas", "list", [], throttled_replica_list(), None),
    ("remote.storage.enable", "boolean", False, None, None),
    ("local.retention.ms", "long", -2, at_least(-2), "log.local.retention.ms"),      # -2: use retention.ms
    ("local.retention.bytes", "long", -2, at_least(-2), "log.local.retention.bytes"),  # -2: use retention.bytes
    ("remote.log.copy.disable", "boolean", False, None, None),
    ("remote.copy.lag.ms", "long", 0, at_least(-1), "log.remote.copy.lag.ms"),
    ("remote.copy.lag.bytes", "long", -1, at_least(-1), "log.remote.copy.lag.bytes"),
    ("remote.log.delete.on.disable", "boolean", False, None, None),
    ("errors.deadletterqueue.group.enable", "boolean", False, None, None),
    ("internal.segment.bytes", "int", None, None, None),  # internal: accepted, never described
)
INTERNAL = frozenset({"internal.segment.bytes"})

CONFIGS: dict[str, ConfigKey] = {d[0]: ConfigKey(*d) for d in _DEFINITIONS}

# The public (described) topic configs, sorted, as the --config help lists them.
CONFIG_NAMES: tuple[str, ...] = tuple(sorted(set(CONFIGS) - INTERNAL))


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

# Java's "\\s*=\\s*": its \\s is these six characters only (Python's is Unicode-wide).
_KEY_VALUE_SEPARATOR = "[ \t\n\x0b\f\r]*=[ \t\n\x0b\f\r]*"


def _split_key_value(s: str) -> list[str]:
    """s.split("\\s*=\\s*") with Java's semantics (javacompat.java_split)."""
    return java_split(s, _KEY_VALUE_SEPARATOR)


def parse_config_args(args: list[str]) -> dict[str, str]:
    """TopicCommand.parseTopicConfigsToBeAdded, up to (not including) LogConfig.validate."""
    pairs = [_split_key_value(a) for a in args]
    if not all(len(p) == 2 for p in pairs):
        raise InvalidConfigurationError(
            'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".')
    props: dict[str, str] = {}
    for key, value in pairs:         # Properties.setProperty: a later duplicate wins
        props[_trim(key)] = _trim(value)
    return props


def typed(name: str, value: str) -> Any:
    """ConfigDef.parseValue for one topic config: parse, then run its validator."""
    key = CONFIGS.get(name)
    if key is None:
        raise InvalidConfigurationError(f"Unknown topic config name: {name}")
    v = parse_type(name, value, key.type)
    if key.validator is not None:
        key.validator(name, v)
    return v


def validate(props: dict[str, str], broker_defaults: dict[str, str] | None = None, *,
             remote_storage_system_enabled: bool = False) -> dict[str, Any]:
    """LogConfig.validate. Returns the typed values of `props` (in their order).

    broker_defaults None: the client-side check TopicCommand runs (LogConfig.validate(props)):
    names, then every value in definition order, then min <= max compaction lag, all against
    Kafka's defaults. A dict (the broker's settings, possibly empty): the check the controller
    runs (LogConfig.validate(props, extractLogConfigMap, remoteStorageSystemEnabled)), against
    the broker's values, plus the tiered-storage checks when remote.storage.enable is true.
    """
    for name in _properties_order(props):           # validateNames: Properties key order
        if name not in CONFIGS:
            raise InvalidConfigurationError(f"Unknown topic config name: {name}")
    base = _defaults() if broker_defaults is None else _broker_values(broker_defaults)
    values = {}
    for name, key in CONFIGS.items():               # ConfigDef.parse: definition order
        v = parse_type(name, props[name], key.type) if name in props else base[name]
        if key.validator is not None:
            key.validator(name, v)
        values[name] = v
    lag_min, lag_max = values["min.compaction.lag.ms"], values["max.compaction.lag.ms"]
    if lag_min > lag_max:                           # validateValues
        raise InvalidConfigurationError(
            f"conflict topic config setting min.compaction.lag.ms ({lag_min}) > max.compaction.lag.ms ({lag_max})")
    if broker_defaults is not None and values["remote.storage.enable"]:
        _validate_remote_storage(values, remote_storage_system_enabled)
    return {name: values[name] for name in props}


def effective(overrides: dict[str, str], broker_defaults: dict[str, str] | None = None) -> dict[str, Any]:
    """Every topic config's typed value (CONFIG_NAMES order): the topic override, else the
    broker's setting of its synonym(s), else Kafka's default — as LogConfig.fromProps(
    kafkaConfig.extractLogConfigMap, overrides) sees them. Overrides are parsed and validated
    (typed); unknown override names are ignored, as AbstractConfig ignores them."""
    base = _broker_values(broker_defaults or {})
    return {name: typed(name, overrides[name]) if name in overrides else base[name]
            for name in CONFIG_NAMES}


def to_kafka_string(name: str, value: Any) -> str:
    """ConfigDef.convertToString of a typed value, as DescribeConfigs reports it: lists joined
    with "," (no spaces), booleans "true"/"false", doubles as Double.toString ("0.5", "1.0E-4")."""
    key = CONFIGS.get(name)
    if (key is not None and key.type == "list") or isinstance(value, (list, tuple)):
        return ",".join(_java_str(v) for v in value)
    return _java_str(value)


# --------------------------------------------------------------------------------------------
# Helpers for validate / effective
# --------------------------------------------------------------------------------------------

def _defaults() -> dict[str, Any]:
    return {name: list(k.default) if isinstance(k.default, list) else k.default
            for name, k in CONFIGS.items()}


def _broker_values(broker: dict[str, str]) -> dict[str, Any]:
    """KafkaConfig.extractLogConfigMap: each topic config's value as the broker derives it.

    Broker settings are parsed with their broker type (the hours/minutes ones are INT) but not
    range-checked here: a broker with a bad setting does not start.
    """
    values = _defaults()
    for name, key in CONFIGS.items():
        chain = _SYNONYM_CHAINS.get(name, ((key.broker_synonym, 1),) if key.broker_synonym else ())
        for broker_name, factor in chain:
            if broker_name in broker:
                if factor == 1:
                    values[name] = parse_type(broker_name, broker[broker_name], key.type)
                else:
                    values[name] = parse_type(broker_name, broker[broker_name], "int") * factor
                break
    # KafkaConfig.logRetentionTimeMillis: any negative retention means "forever" (-1).
    if values["retention.ms"] < 0:
        values["retention.ms"] = -1
    return values


def _validate_remote_storage(values: dict[str, Any], system_enabled: bool) -> None:
    """LogConfig.validateTopicLogConfigValues, the part after validateValues."""
    if not system_enabled:
        raise InvalidConfigurationError("Tiered Storage functionality is disabled in the broker. "
                                        "Topic cannot be configured with remote log storage.")
    # props.get(CLEANUP_POLICY).toString().toLowerCase().contains("compact")
    if "compact" in _java_str(values["cleanup.policy"]).lower():
        raise InvalidConfigurationError("Remote log storage is unsupported for the compacted topics")
    for total_name, local_name, unlimited in (("retention.bytes", "local.retention.bytes", None),
                                              ("retention.ms", "local.retention.ms", -1)):
        total, local = values[total_name], values[local_name]
        # size: checked when retention.bytes > -1; time: when retention.ms != -1
        applies = total > -1 if unlimited is None else total != unlimited
        if applies and local != -2:
            if local == -1:
                raise _invalid(local_name, local, f"Value must not be -1 as {total_name} value is set as {total}.")
            if local > total:
                raise _invalid(local_name, local, f"Value must not be more than {total_name} property value: {total}")


# The order of a topic's entries in Kafka 4.4's DescribeConfigs response (as a KRaft broker
# sends them, seen from the oracle); TopicCommand prints the non-default ones in the iteration
# order of a default-sized java.util.HashMap filled in this order, which is this order again.
DESCRIBE_ORDER = (
    "compression.type", "errors.deadletterqueue.group.enable", "remote.copy.lag.bytes",
    "remote.log.delete.on.disable", "leader.replication.throttled.replicas", "remote.storage.enable",
    "min.insync.replicas", "segment.jitter.ms", "remote.log.copy.disable", "local.retention.ms",
    "cleanup.policy", "flush.ms", "follower.replication.throttled.replicas", "compression.lz4.level",
    "segment.bytes", "retention.ms", "compression.gzip.level", "remote.copy.lag.ms", "flush.messages",
    "compression.zstd.level", "max.compaction.lag.ms", "file.delete.delay.ms", "max.message.bytes",
    "min.compaction.lag.ms", "message.timestamp.type", "local.retention.bytes", "preallocate",
    "index.interval.bytes", "min.cleanable.dirty.ratio", "unclean.leader.election.enable",
    "retention.bytes", "delete.retention.ms", "message.timestamp.after.max.ms",
    "max.decompressed.message.bytes", "message.timestamp.before.max.ms", "segment.ms", "segment.index.bytes",
)


def cluster_defaults(broker: dict[str, str] | None = None) -> dict[str, str]:
    """Topic configs a freshly formatted Kafka 4.4 cluster holds as cluster-wide dynamic
    defaults (DYNAMIC_DEFAULT_BROKER_CONFIG): with eligible leader replicas enabled (the 4.x
    default) the controller records min.insync.replicas at the cluster level, so every topic
    reports it as not default (`Configs: min.insync.replicas=1`)."""
    return {"min.insync.replicas": (broker or {}).get("min.insync.replicas", "1")}


def describe_order(names) -> list[str]:
    """`names` in the order Kafka 4.4's kafka-topics --describe prints a topic's configs."""
    names = set(names)  # the map holds every topic config (the printed ones are filtered from it)
    every = list(DESCRIBE_ORDER) + sorted(names - set(DESCRIBE_ORDER))
    return [n for n in java_hashmap_order(every, default_capacity=True) if n in names]


def java_hashmap_order(keys, default_capacity: bool = False) -> list[str]:
    """The iteration order of a java.util.HashMap<String, ?> after putting `keys` in this order:
    `new HashMap<>(n)`, or with default_capacity `new HashMap<>()`."""
    keys = list(dict.fromkeys(keys))
    return hashmap_order(keys, sized_for=None if default_capacity else len(keys))


def _properties_order(keys) -> list[str]:
    """Iteration order of a java.util.Properties holding `keys` (inserted in this order).

    Since Java 9 Properties keeps its entries in a ConcurrentHashMap(8): 16 bins, bin =
    spread(hash) & (n-1), entries appended to their bin, iteration by ascending bin. When the
    count reaches 3/4 of n the table doubles, and transfer() moves each bin's nodes before its
    "lastRun" in reverse. Only matters when several unknown names are given at once.
    """
    n, bins, count = 16, [[] for _ in range(16)], 0
    for k in keys:
        h = string_hash(k)
        h = (h ^ (h >> 16)) & 0x7FFFFFFF
        bins[h & (n - 1)].append((h, k))
        count += 1
        if count >= n - (n >> 2):
            grown: list = [None] * (2 * n)
            for i, nodes in enumerate(bins):
                low: list = []
                high: list = []
                if nodes:
                    run_bit, last = nodes[0][0] & n, 0
                    for j in range(1, len(nodes)):
                        if nodes[j][0] & n != run_bit:
                            run_bit, last = nodes[j][0] & n, j
                    (high if run_bit else low).extend(nodes[last:])
                    for node in nodes[:last]:
                        (high if node[0] & n else low).insert(0, node)
                grown[i], grown[i + n] = low, high
            bins, n = grown, 2 * n
    return [k for nodes in bins for _, k in nodes]
