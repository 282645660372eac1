"""Tests for pk.engine.topic_config against Kafka's LogConfig / ConfigDef / TopicCommand.

The table (names, types, defaults, validator ranges) is Kafka 4.4.0's, as its classes define it;
the expected messages in the table-driven tests were read from the 3.7.1 sources and checked by
running those sources (ConfigDef, ThrottledReplicaListValidator and TopicCommand's --config
parsing, with LogConfig's definitions) on a JDK; test_oracle_topics.py compares the new 4.4
configs' messages with Kafka 4.4's own tool.
"""

import math

import pytest

from pk.engine import topic_config as tc
from pk.engine.errors import InvalidConfigurationError
from pk.engine.topic_config import (
    CONFIG_NAMES, CONFIGS, ConfigKey, effective, parse_config_args, to_kafka_string, typed, validate,
)

FORMAT_ERROR = 'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'
THROTTLE_REASON = ("must be the literal '*' or a list of replicas in the following format: "
                   "[partitionId]:[brokerId],[partitionId]:[brokerId],...")
LONG_MAX = 9223372036854775807


def error_of(fn, *args, **kwargs) -> str:
    with pytest.raises(InvalidConfigurationError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def run_create(*args: str) -> dict:
    """What kafka-topics --create does with --config values before talking to the broker."""
    return validate(parse_config_args(list(args)))


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

def test_config_names_are_the_described_topic_configs_of_4_4():
    # The 37 topic configs a Kafka 4.4.0 broker lists in DescribeConfigs (LogConfig's ConfigDef
    # less the internal internal.segment.bytes), sorted as kafka-topics' --config help lists them.
    assert CONFIG_NAMES == (
        "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
        "compression.zstd.level", "delete.retention.ms", "errors.deadletterqueue.group.enable",
        "file.delete.delay.ms", "flush.messages", "flush.ms", "follower.replication.throttled.replicas",
        "index.interval.bytes", "leader.replication.throttled.replicas", "local.retention.bytes",
        "local.retention.ms", "max.compaction.lag.ms", "max.decompressed.message.bytes", "max.message.bytes",
        "message.timestamp.after.max.ms", "message.timestamp.before.max.ms", "message.timestamp.type",
        "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
        "remote.copy.lag.bytes", "remote.copy.lag.ms", "remote.log.copy.disable", "remote.log.delete.on.disable",
        "remote.storage.enable", "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes",
        "segment.jitter.ms", "segment.ms", "unclean.leader.election.enable",
    )
    assert isinstance(CONFIG_NAMES, tuple)
    assert sorted(tc.DESCRIBE_ORDER) == list(CONFIG_NAMES)


def test_configs_keep_definition_order():
    # ConfigDef.parse walks its LinkedHashMap in define() order (4.4.0's LogConfig); that decides
    # which bad value is reported first.
    assert list(CONFIGS) == [
        "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages",
        "flush.ms", "retention.bytes", "retention.ms", "max.message.bytes", "max.decompressed.message.bytes",
        "index.interval.bytes", "delete.retention.ms", "min.compaction.lag.ms", "max.compaction.lag.ms",
        "file.delete.delay.ms", "min.cleanable.dirty.ratio", "cleanup.policy",
        "unclean.leader.election.enable", "min.insync.replicas", "compression.type", "compression.gzip.level",
        "compression.lz4.level", "compression.zstd.level", "preallocate", "message.timestamp.type",
        "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
        "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
        "remote.storage.enable", "local.retention.ms", "local.retention.bytes", "remote.log.copy.disable",
        "remote.copy.lag.ms", "remote.copy.lag.bytes", "remote.log.delete.on.disable",
        "errors.deadletterqueue.group.enable", "internal.segment.bytes",
    ]


EXPECTED = {  # name: (type, default, broker synonym), as Kafka 4.4.0's classes define them
    "segment.bytes": ("int", 1073741824, "log.segment.bytes"),
    "segment.ms": ("long", 604800000, "log.roll.ms"),
    "segment.jitter.ms": ("long", 0, "log.roll.jitter.ms"),
    "segment.index.bytes": ("int", 10485760, "log.index.size.max.bytes"),
    "flush.messages": ("long", LONG_MAX, "log.flush.interval.messages"),
    "flush.ms": ("long", LONG_MAX, "log.flush.interval.ms"),
    "retention.bytes": ("long", -1, "log.retention.bytes"),
    "retention.ms": ("long", 604800000, "log.retention.ms"),
    "max.message.bytes": ("int", 1048588, "message.max.bytes"),
    "max.decompressed.message.bytes": ("int", 2147483639, "max.decompressed.message.bytes"),
    "index.interval.bytes": ("int", 4096, "log.index.interval.bytes"),
    "delete.retention.ms": ("long", 86400000, "log.cleaner.delete.retention.ms"),
    "min.compaction.lag.ms": ("long", 0, "log.cleaner.min.compaction.lag.ms"),
    "max.compaction.lag.ms": ("long", LONG_MAX, "log.cleaner.max.compaction.lag.ms"),
    "file.delete.delay.ms": ("long", 60000, "log.segment.delete.delay.ms"),
    "min.cleanable.dirty.ratio": ("double", 0.5, "log.cleaner.min.cleanable.ratio"),
    "cleanup.policy": ("list", ["delete"], "log.cleanup.policy"),
    "unclean.leader.election.enable": ("boolean", False, "unclean.leader.election.enable"),
    "min.insync.replicas": ("int", 1, "min.insync.replicas"),
    "compression.type": ("string", "producer", "compression.type"),
    "compression.gzip.level": ("int", -1, "compression.gzip.level"),
    "compression.lz4.level": ("int", 9, "compression.lz4.level"),
    "compression.zstd.level": ("int", 3, "compression.zstd.level"),
    "preallocate": ("boolean", False, "log.preallocate"),
    "message.timestamp.type": ("string", "CreateTime", "log.message.timestamp.type"),
    "message.timestamp.before.max.ms": ("long", LONG_MAX, "log.message.timestamp.before.max.ms"),
    "message.timestamp.after.max.ms": ("long", 3600000, "log.message.timestamp.after.max.ms"),
    "leader.replication.throttled.replicas": ("list", [], None),
    "follower.replication.throttled.replicas": ("list", [], None),
    "remote.storage.enable": ("boolean", False, None),
    "local.retention.ms": ("long", -2, "log.local.retention.ms"),
    "local.retention.bytes": ("long", -2, "log.local.retention.bytes"),
    "remote.log.copy.disable": ("boolean", False, None),
    "remote.copy.lag.ms": ("long", 0, "log.remote.copy.lag.ms"),
    "remote.copy.lag.bytes": ("long", -1, "log.remote.copy.lag.bytes"),
    "remote.log.delete.on.disable": ("boolean", False, None),
    "errors.deadletterqueue.group.enable": ("boolean", False, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_type_default_and_synonym(name):
    key = CONFIGS[name]
    assert isinstance(key, ConfigKey)
    assert key.name == name
    assert (key.type, key.default, key.broker_synonym) == EXPECTED[name]
    assert type(key.default) is {"int": int, "long": int, "double": float, "boolean": bool,
                                 "string": str, "list": list}[key.type]


def test_table_covers_exactly_the_config_names():
    assert set(EXPECTED) == set(CONFIGS) - tc.INTERNAL == set(CONFIG_NAMES)
    assert CONFIGS["internal.segment.bytes"].default is None  # internal: no default, never described


def test_validators_present_where_kafka_defines_one():
    no_validator = {"retention.bytes", "unclean.leader.election.enable", "preallocate", "remote.storage.enable",
                    "remote.log.copy.disable", "remote.log.delete.on.disable", "errors.deadletterqueue.group.enable",
                    "internal.segment.bytes"}
    for name, key in CONFIGS.items():
        assert (key.validator is None) == (name in no_validator), name


def test_config_key_is_read_only():
    with pytest.raises(AttributeError):
        CONFIGS["retention.ms"].default = 1


# ---------------------------------------------------------------------------------------------
# parse_config_args: TopicCommand's split on \s*=\s* with Java String.split semantics
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("arg, expected", [
    ("a=b", {"a": "b"}),
    (" a = b ", {"a": "b"}),
    ("a\t=\tb", {"a": "b"}),
    ("=b", {"": "b"}),                   # the leading empty string is kept
    ("a=b=", {"a": "b"}),                # trailing empty strings are dropped: 2 parts
    ("a=b==", {"a": "b"}),
    ("\ta\x01=b", {"a": "b"}),           # String.trim also strips control characters
    ("a=\u00a0b", {"a": "\u00a0b"}),     # ... but not a no-break space
    ("retention.ms = 1000", {"retention.ms": "1000"}),
])
def test_parse_config_args_accepts(arg, expected):
    assert parse_config_args([arg]) == expected


@pytest.mark.parametrize("arg", ["a=b=c", "a=", "a", "", "=", "==", "a==b", "a = = b", "cleanup.policy="])
def test_parse_config_args_rejects(arg):
    assert error_of(parse_config_args, [arg]) == FORMAT_ERROR


def test_parse_config_args_checks_all_before_any():
    assert error_of(parse_config_args, ["retention.ms=1", "bad"]) == FORMAT_ERROR


def test_parse_config_args_later_duplicate_wins():
    assert parse_config_args(["retention.ms=1", "segment.ms=5", "retention.ms=2"]) == {
        "retention.ms": "2", "segment.ms": "5"}


def test_parse_config_args_empty():
    assert parse_config_args([]) == {}


# ---------------------------------------------------------------------------------------------
# validate: good values and their typed results
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("arg, name, value", [
    ("retention.ms=1000", "retention.ms", 1000),
    ("retention.ms=-1", "retention.ms", -1),
    ("retention.ms=+5", "retention.ms", 5),
    ("retention.ms=\u0661\u0662", "retention.ms", 12),   # Character.digit takes Arabic-Indic digits
    ("retention.ms=9223372036854775807", "retention.ms", LONG_MAX),
    ("retention.bytes=-9223372036854775808", "retention.bytes", -LONG_MAX - 1),
    ("segment.bytes=+0014", "segment.bytes", 14),
    ("segment.bytes=2147483647", "segment.bytes", 2147483647),
    ("max.message.bytes=0", "max.message.bytes", 0),
    ("min.insync.replicas=2", "min.insync.replicas", 2),
    ("local.retention.ms=-2", "local.retention.ms", -2),
    ("min.cleanable.dirty.ratio=0.1", "min.cleanable.dirty.ratio", 0.1),
    ("min.cleanable.dirty.ratio=1", "min.cleanable.dirty.ratio", 1.0),
    ("min.cleanable.dirty.ratio=.5f", "min.cleanable.dirty.ratio", 0.5),
    ("min.cleanable.dirty.ratio=5e-1d", "min.cleanable.dirty.ratio", 0.5),
    ("min.cleanable.dirty.ratio=0x1p-1", "min.cleanable.dirty.ratio", 0.5),
    ("min.cleanable.dirty.ratio=1e-5", "min.cleanable.dirty.ratio", 1e-5),
    ("unclean.leader.election.enable=TRUE", "unclean.leader.election.enable", True),
    ("preallocate=False", "preallocate", False),
    ("unclean.leader.election.enable=fal\u017fe", "unclean.leader.election.enable", False),  # equalsIgnoreCase
    ("cleanup.policy=compact", "cleanup.policy", ["compact"]),
    ("cleanup.policy= compact , delete ", "cleanup.policy", ["compact", "delete"]),
    ("cleanup.policy=delete,delete", "cleanup.policy", ["delete", "delete"]),
    ("compression.type=zstd", "compression.type", "zstd"),
    ("message.timestamp.type=LogAppendTime", "message.timestamp.type", "LogAppendTime"),
    ("compression.gzip.level=5", "compression.gzip.level", 5),         # 4.4's new configs, as Kafka
    ("compression.gzip.level=-1", "compression.gzip.level", -1),       # 4.4 accepts them
    ("compression.zstd.level=-131072", "compression.zstd.level", -131072),
    ("internal.segment.bytes=1000", "internal.segment.bytes", 1000),
    ("errors.deadletterqueue.group.enable=true", "errors.deadletterqueue.group.enable", True),
    ("leader.replication.throttled.replicas=*", "leader.replication.throttled.replicas", ["*"]),
    ("leader.replication.throttled.replicas=0:1 , 1:2", "leader.replication.throttled.replicas", ["0:1", "1:2"]),
    ("follower.replication.throttled.replicas=*,", "follower.replication.throttled.replicas", ["*", ""]),
    ("follower.replication.throttled.replicas=,,", "follower.replication.throttled.replicas", ["", "", ""]),
    ("remote.storage.enable=true", "remote.storage.enable", True),   # no client-side tiered check
])
def test_validate_accepts(arg, name, value):
    assert run_create(arg) == {name: value}


def test_validate_returns_typed_values_of_the_given_names_only():
    result = run_create("retention.ms=1", "cleanup.policy=compact,delete", "preallocate=true")
    assert result == {"retention.ms": 1, "cleanup.policy": ["compact", "delete"], "preallocate": True}
    assert validate({}) == {}


def test_nan_passes_the_range_check_and_prints_as_nan():
    value = run_create("min.cleanable.dirty.ratio=NaN")["min.cleanable.dirty.ratio"]
    assert math.isnan(value)
    assert to_kafka_string("min.cleanable.dirty.ratio", value) == "NaN"


def test_negative_zero_ratio_is_accepted():
    value = run_create("min.cleanable.dirty.ratio=-0.0")["min.cleanable.dirty.ratio"]
    assert to_kafka_string("min.cleanable.dirty.ratio", value) == "-0.0"


# ---------------------------------------------------------------------------------------------
# validate: bad values, with ConfigDef's exact messages
# ---------------------------------------------------------------------------------------------

def invalid(value, name, reason):
    return f"Invalid value {value} for configuration {name}: {reason}"


@pytest.mark.parametrize("arg, message", [
    # LONG / INT parsing (NumberFormatException)
    ("retention.ms=abc", invalid("abc", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=1.0", invalid("1.0", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=1e3", invalid("1e3", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=1_000", invalid("1_000", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=0x10", invalid("0x10", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=+", invalid("+", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=\u00a05", invalid("\u00a05", "retention.ms", "Not a number of type LONG")),
    ("retention.ms=9223372036854775808", invalid("9223372036854775808", "retention.ms", "Not a number of type LONG")),
    ("segment.bytes=2147483648", invalid("2147483648", "segment.bytes", "Not a number of type INT")),
    ("segment.bytes=1g", invalid("1g", "segment.bytes", "Not a number of type INT")),
    # Range: the message quotes the parsed value
    ("retention.ms=-2", invalid("-2", "retention.ms", "Value must be at least -1")),
    ("segment.bytes=13", invalid("13", "segment.bytes", "Value must be at least 14")),
    ("segment.ms=0", invalid("0", "segment.ms", "Value must be at least 1")),
    ("min.insync.replicas=-0", invalid("0", "min.insync.replicas", "Value must be at least 1")),
    ("min.insync.replicas=+000", invalid("0", "min.insync.replicas", "Value must be at least 1")),
    ("max.message.bytes=-1", invalid("-1", "max.message.bytes", "Value must be at least 0")),
    ("segment.index.bytes=3", invalid("3", "segment.index.bytes", "Value must be at least 4")),
    ("flush.messages=0", invalid("0", "flush.messages", "Value must be at least 1")),
    ("max.compaction.lag.ms=0", invalid("0", "max.compaction.lag.ms", "Value must be at least 1")),
    ("local.retention.bytes=-3", invalid("-3", "local.retention.bytes", "Value must be at least -2")),
    ("message.timestamp.after.max.ms=-1", invalid("-1", "message.timestamp.after.max.ms", "Value must be at least 0")),
    # DOUBLE: Double.parseDouble syntax, Double.toString in the Range message, Integer bounds
    ("min.cleanable.dirty.ratio=2", invalid("2.0", "min.cleanable.dirty.ratio", "Value must be no more than 1")),
    ("min.cleanable.dirty.ratio=1e400", invalid("Infinity", "min.cleanable.dirty.ratio", "Value must be no more than 1")),
    ("min.cleanable.dirty.ratio=-0.1", invalid("-0.1", "min.cleanable.dirty.ratio", "Value must be at least 0")),
    ("min.cleanable.dirty.ratio=-1e-7", invalid("-1.0E-7", "min.cleanable.dirty.ratio", "Value must be at least 0")),
    ("min.cleanable.dirty.ratio=inf", invalid("inf", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    ("min.cleanable.dirty.ratio=nan", invalid("nan", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    ("min.cleanable.dirty.ratio=.", invalid(".", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    ("min.cleanable.dirty.ratio=1e", invalid("1e", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    ("min.cleanable.dirty.ratio=0x1", invalid("0x1", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    ("min.cleanable.dirty.ratio=1_0", invalid("1_0", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    ("min.cleanable.dirty.ratio=half", invalid("half", "min.cleanable.dirty.ratio", "Not a number of type DOUBLE")),
    # BOOLEAN
    ("preallocate=yes", invalid("yes", "preallocate", "Expected value to be either true or false")),
    ("unclean.leader.election.enable=1", invalid("1", "unclean.leader.election.enable",
                                                 "Expected value to be either true or false")),
    # ValidString
    ("compression.type=GZIP", invalid("GZIP", "compression.type",
                                      "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer")),
    ("compression.type=none", invalid("none", "compression.type",
                                      "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer")),
    ("message.timestamp.type=logappendtime", invalid("logappendtime", "message.timestamp.type",
                                                     "String must be one of: CreateTime, LogAppendTime")),
    # ValidList: element by element, trailing empty elements kept
    ("cleanup.policy=Compact", invalid("Compact", "cleanup.policy", "String must be one of: compact, delete")),
    ("cleanup.policy=compact,", invalid("", "cleanup.policy", "String must be one of: compact, delete")),
    ("cleanup.policy=compact,,delete", invalid("", "cleanup.policy", "String must be one of: compact, delete")),
    ("cleanup.policy=[compact]", invalid("[compact]", "cleanup.policy", "String must be one of: compact, delete")),
    # ThrottledReplicaListValidator: the message quotes the whole list
    ("leader.replication.throttled.replicas=foo, 0:1", invalid(
        "[foo, 0:1]", "leader.replication.throttled.replicas",
        "leader.replication.throttled.replicas " + THROTTLE_REASON)),
    ("follower.replication.throttled.replicas=*,*", invalid(
        "[*, *]", "follower.replication.throttled.replicas",
        "follower.replication.throttled.replicas " + THROTTLE_REASON)),
    ("leader.replication.throttled.replicas=0:", invalid(
        "[0:]", "leader.replication.throttled.replicas",
        "leader.replication.throttled.replicas " + THROTTLE_REASON)),
    ("leader.replication.throttled.replicas=0:1:2", invalid(
        "[0:1:2]", "leader.replication.throttled.replicas",
        "leader.replication.throttled.replicas " + THROTTLE_REASON)),
    # Kafka 4.4's messages for its new configs (as its kafka-topics prints them)
    ("compression.gzip.level=0", invalid("0", "compression.gzip.level", "Value must be between 1 and 9 or equal to -1")),
    ("compression.lz4.level=18", invalid("18", "compression.lz4.level", "Value must be no more than 17")),
    ("compression.zstd.level=-200000", invalid("-200000", "compression.zstd.level", "Value must be at least -131072")),
    ("remote.copy.lag.ms=-2", invalid("-2", "remote.copy.lag.ms", "Value must be at least -1")),
    ("max.decompressed.message.bytes=0", invalid("0", "max.decompressed.message.bytes", "Value must be at least 1")),
    ("message.timestamp.after.max.ms=-1", invalid("-1", "message.timestamp.after.max.ms", "Value must be at least 0")),
    ("errors.deadletterqueue.group.enable=x", invalid("x", "errors.deadletterqueue.group.enable",
                                                      "Expected value to be either true or false")),
    # removed in 4.0
    ("message.format.version=3.0", "Unknown topic config name: message.format.version"),
    ("message.downconversion.enable=true", "Unknown topic config name: message.downconversion.enable"),
    ("message.timestamp.difference.max.ms=5", "Unknown topic config name: message.timestamp.difference.max.ms"),
])
def test_validate_rejects(arg, message):
    assert error_of(run_create, arg) == message


def test_unknown_name():
    assert error_of(run_create, "retention.hours=1") == "Unknown topic config name: retention.hours"
    assert error_of(run_create, "=1") == "Unknown topic config name: "


def test_names_are_checked_before_values():
    assert error_of(run_create, "retention.ms=x", "bogus=1") == "Unknown topic config name: bogus"


@pytest.mark.parametrize("args, reported", [
    # Several unknown names: the first in java.util.Properties (ConcurrentHashMap) order.
    (["zz=1", "yy=2"], "zz"),
    (["yy=2", "zz=1"], "yy"),
    (["foo=1", "bar=2", "baz=3", "qux=4"], "bar"),
    ([f"n{i}=1" for i in range(14)], "n0"),      # 14 keys: the table has grown to 32 bins
])
def test_first_unknown_name_in_properties_order(args, reported):
    assert error_of(run_create, *args) == f"Unknown topic config name: {reported}"


def test_values_are_checked_in_definition_order():
    # segment.bytes is defined before retention.ms, whatever the order on the command line.
    assert error_of(run_create, "retention.ms=x", "segment.bytes=y") == invalid(
        "y", "segment.bytes", "Not a number of type INT")
    assert error_of(run_create, "cleanup.policy=x", "min.insync.replicas=0", "segment.bytes=1") == invalid(
        "1", "segment.bytes", "Value must be at least 14")


def test_compaction_lag_conflict():
    assert error_of(run_create, "min.compaction.lag.ms=10", "max.compaction.lag.ms=5") == (
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)")
    assert run_create("min.compaction.lag.ms=5", "max.compaction.lag.ms=5") == {
        "min.compaction.lag.ms": 5, "max.compaction.lag.ms": 5}
    # against the default max (Long.MAX_VALUE) any min passes
    assert run_create("min.compaction.lag.ms=9223372036854775807") == {"min.compaction.lag.ms": LONG_MAX}


def test_typed_value_checks_come_before_the_conflict_check():
    assert error_of(run_create, "min.compaction.lag.ms=10", "max.compaction.lag.ms=0") == invalid(
        "0", "max.compaction.lag.ms", "Value must be at least 1")


# ---------------------------------------------------------------------------------------------
# validate, broker side (controller): tiered-storage checks
# ---------------------------------------------------------------------------------------------

TIERED_OFF = ("Tiered Storage functionality is disabled in the broker. "
              "Topic cannot be configured with remote log storage.")


def test_broker_side_rejects_remote_storage_when_the_system_is_off():
    assert error_of(validate, {"remote.storage.enable": "true"}, {}) == TIERED_OFF
    assert validate({"remote.storage.enable": "false"}, {}) == {"remote.storage.enable": False}


def test_broker_side_remote_storage_checks():
    on = dict(remote_storage_system_enabled=True)
    assert validate({"remote.storage.enable": "true"}, {}, **on) == {"remote.storage.enable": True}
    assert error_of(validate, {"remote.storage.enable": "true", "cleanup.policy": "delete,compact"}, {}, **on) == (
        "Remote log storage is unsupported for the compacted topics")
    # cleanup.policy may come from the broker
    assert error_of(validate, {"remote.storage.enable": "true"}, {"log.cleanup.policy": "compact"}, **on) == (
        "Remote log storage is unsupported for the compacted topics")
    assert error_of(validate, {"remote.storage.enable": "true", "retention.bytes": "100",
                               "local.retention.bytes": "-1"}, {}, **on) == invalid(
        "-1", "local.retention.bytes", "Value must not be -1 as retention.bytes value is set as 100.")
    assert error_of(validate, {"remote.storage.enable": "true", "retention.bytes": "100",
                               "local.retention.bytes": "200"}, {}, **on) == invalid(
        "200", "local.retention.bytes", "Value must not be more than retention.bytes property value: 100")
    assert error_of(validate, {"remote.storage.enable": "true", "local.retention.ms": "-1"}, {}, **on) == invalid(
        "-1", "local.retention.ms", "Value must not be -1 as retention.ms value is set as 604800000.")
    assert error_of(validate, {"remote.storage.enable": "true", "retention.ms": "1000",
                               "local.retention.ms": "2000"}, {}, **on) == invalid(
        "2000", "local.retention.ms", "Value must not be more than retention.ms property value: 1000")
    # retention.bytes -1 (unlimited) / retention.ms -1 (forever): any local value passes
    assert validate({"remote.storage.enable": "true", "local.retention.bytes": "-1",
                     "retention.ms": "-1", "local.retention.ms": "-1"}, {}, **on)["local.retention.ms"] == -1


def test_client_side_skips_the_tiered_checks():
    assert validate({"remote.storage.enable": "true", "cleanup.policy": "compact"}) == {
        "remote.storage.enable": True, "cleanup.policy": ["compact"]}


def test_broker_side_compaction_conflict_uses_broker_values():
    assert error_of(validate, {"min.compaction.lag.ms": "10"}, {"log.cleaner.max.compaction.lag.ms": "5"}) == (
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)")
    assert validate({"min.compaction.lag.ms": "10"}) == {"min.compaction.lag.ms": 10}


# ---------------------------------------------------------------------------------------------
# typed
# ---------------------------------------------------------------------------------------------

def test_typed_parses_and_validates_one_value():
    assert typed("retention.ms", " 1000 ") == 1000
    assert typed("cleanup.policy", "compact,delete") == ["compact", "delete"]
    assert typed("cleanup.policy", "") == []            # an empty list passes ValidList in 3.7
    assert typed("leader.replication.throttled.replicas", "") == []
    assert typed("compression.type", " lz4 ") == "lz4"
    assert typed("min.cleanable.dirty.ratio", "0.25") == 0.25
    assert typed("preallocate", "true") is True
    # messages quote the value as given, before trimming
    assert error_of(typed, "retention.ms", " x ") == invalid(" x ", "retention.ms", "Not a number of type LONG")
    assert error_of(typed, "segment.ms", "0") == invalid("0", "segment.ms", "Value must be at least 1")
    assert error_of(typed, "nope", "1") == "Unknown topic config name: nope"


# ---------------------------------------------------------------------------------------------
# effective: override, else broker synonym (in Kafka's precedence), else default
# ---------------------------------------------------------------------------------------------

def test_effective_defaults():
    values = effective({})
    assert list(values) == list(CONFIG_NAMES)
    assert values == {name: exp[1] for name, exp in EXPECTED.items()}
    assert values["retention.ms"] == 604800000
    assert values["segment.bytes"] == 1073741824
    assert values["max.message.bytes"] == 1048588
    assert values["cleanup.policy"] == ["delete"]


def test_effective_does_not_share_mutable_defaults():
    effective({})["cleanup.policy"].append("compact")
    assert CONFIGS["cleanup.policy"].default == ["delete"]
    assert effective({})["cleanup.policy"] == ["delete"]


def test_effective_override_wins_over_broker():
    values = effective({"retention.ms": "1000", "cleanup.policy": "compact"},
                       {"log.retention.ms": "5", "log.cleanup.policy": "delete"})
    assert values["retention.ms"] == 1000
    assert values["cleanup.policy"] == ["compact"]


def test_effective_override_is_validated():
    assert error_of(effective, {"segment.ms": "0"}) == invalid("0", "segment.ms", "Value must be at least 1")


def test_effective_ignores_unknown_override_names():
    assert effective({"not.a.config": "1"}) == effective({})


@pytest.mark.parametrize("broker, expected", [
    ({}, 604800000),
    ({"log.retention.hours": "1"}, 3600000),
    ({"log.retention.minutes": "2", "log.retention.hours": "1"}, 120000),
    ({"log.retention.ms": "3", "log.retention.minutes": "2", "log.retention.hours": "1"}, 3),
    ({"log.retention.ms": "-5"}, -1),           # KafkaConfig: any negative retention is -1
    ({"log.retention.hours": "-1"}, -1),
    ({"log.retention.hours": "8760"}, 8760 * 3600000),
])
def test_effective_retention_ms_precedence(broker, expected):
    assert effective({}, broker)["retention.ms"] == expected


@pytest.mark.parametrize("broker, expected", [
    ({}, 604800000),
    ({"log.roll.hours": "1"}, 3600000),
    ({"log.roll.ms": "500", "log.roll.hours": "1"}, 500),
])
def test_effective_segment_ms_precedence(broker, expected):
    assert effective({}, broker)["segment.ms"] == expected


def test_effective_other_synonym_chains():
    assert effective({}, {"log.roll.jitter.hours": "2"})["segment.jitter.ms"] == 7200000
    assert effective({}, {"log.roll.jitter.ms": "7", "log.roll.jitter.hours": "2"})["segment.jitter.ms"] == 7
    assert effective({}, {"log.flush.scheduler.interval.ms": "3000"})["flush.ms"] == 3000
    assert effective({}, {"log.flush.interval.ms": "10", "log.flush.scheduler.interval.ms": "3000"})["flush.ms"] == 10


def test_effective_single_synonyms():
    broker = {
        "log.segment.bytes": "1048576", "message.max.bytes": "2000000", "log.cleanup.policy": "compact, delete",
        "log.cleaner.min.cleanable.ratio": "0.25", "unclean.leader.election.enable": "true",
        "compression.type": "gzip", "min.insync.replicas": "2", "log.retention.bytes": "1000",
        "log.message.timestamp.type": "LogAppendTime", "log.preallocate": "true",
    }
    values = effective({}, broker)
    assert values["segment.bytes"] == 1048576
    assert values["max.message.bytes"] == 2000000
    assert values["cleanup.policy"] == ["compact", "delete"]
    assert values["min.cleanable.dirty.ratio"] == 0.25
    assert values["unclean.leader.election.enable"] is True
    assert values["compression.type"] == "gzip"
    assert values["min.insync.replicas"] == 2
    assert values["retention.bytes"] == 1000
    assert values["message.timestamp.type"] == "LogAppendTime"
    assert values["preallocate"] is True


def test_effective_ignores_broker_settings_that_are_not_synonyms():
    # topic names are not broker names; configs without a server default have no synonym
    assert effective({}, {"retention.ms": "1", "remote.storage.enable": "true"}) == effective({})


def test_effective_ignores_configs_kafka_4_removed():
    # a data directory written before 4.4 may hold message.format.version: ignored, as unknown names are
    assert effective({"message.format.version": "2.8"}) == effective({})


def test_effective_bad_broker_value_names_the_broker_setting():
    assert error_of(effective, {}, {"log.retention.hours": "x"}) == invalid(
        "x", "log.retention.hours", "Not a number of type INT")
    assert error_of(effective, {}, {"log.segment.bytes": "1g"}) == invalid(
        "1g", "log.segment.bytes", "Not a number of type INT")


# ---------------------------------------------------------------------------------------------
# to_kafka_string and Double.toString
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, value, text", [
    ("cleanup.policy", ["compact", "delete"], "compact,delete"),
    ("cleanup.policy", [], ""),
    ("leader.replication.throttled.replicas", ["*", ""], "*,"),
    ("preallocate", True, "true"),
    ("unclean.leader.election.enable", False, "false"),
    ("min.cleanable.dirty.ratio", 0.5, "0.5"),
    ("min.cleanable.dirty.ratio", 1.0, "1.0"),
    ("min.cleanable.dirty.ratio", 0.0001, "1.0E-4"),
    ("retention.ms", 604800000, "604800000"),
    ("retention.ms", -1, "-1"),
    ("compression.type", "zstd", "zstd"),
])
def test_to_kafka_string(name, value, text):
    assert to_kafka_string(name, value) == text


def test_describe_strings_normalise_the_given_text():
    # the broker describes the parsed value, not the string it stored
    given = {"retention.ms": "+0100", "preallocate": "TRUE", "cleanup.policy": " compact , delete ",
             "min.cleanable.dirty.ratio": ".50"}
    assert {k: to_kafka_string(k, v) for k, v in validate(given).items()} == {
        "retention.ms": "100", "preallocate": "true", "cleanup.policy": "compact,delete",
        "min.cleanable.dirty.ratio": "0.5"}


@pytest.mark.parametrize("value, text", [
    (0.5, "0.5"), (1.0, "1.0"), (0.1, "0.1"), (100.0, "100.0"), (0.001, "0.001"), (0.0001, "1.0E-4"),
    (1e-5, "1.0E-5"), (1.5e-5, "1.5E-5"), (9999999.0, "9999999.0"), (1e7, "1.0E7"), (12345678.9, "1.23456789E7"),
    (1e21, "1.0E21"), (1e23, "1.0E23"), (0.30000000000000004, "0.30000000000000004"), (-2.5, "-2.5"),
    (0.0, "0.0"), (-0.0, "-0.0"), (math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity"),
    (5e-324, "4.9E-324"), (1.7976931348623157e308, "1.7976931348623157E308"),
])
def test_java_double_str(value, text):
    assert tc.java_double_str(value) == text
