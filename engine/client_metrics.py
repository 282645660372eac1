"""Client-metrics subscriptions (KIP-714): the CLIENT_METRICS config resources a Kafka cluster
keeps (resource type 16), stored in the data directory so that they survive restarts and every
process sharing the directory sees them.

One file, `.pk/client-metrics.json`:

    {"version": 1, "resources": {"sub1": {"metrics": "org.apache.kafka.producer.", "interval.ms": "5000"}}}

Only the configs set on a resource are kept, in the normalised form Kafka keeps (a list's items
trimmed and joined by commas, an integer as parsed); a resource whose last config is deleted
is gone. Changes are read-modify-write under an flock on `.pk/client-metrics.lock` and replace
the file atomically; readers re-read the file when its modification stamp changes.

`validate(configs)` checks a resource's configs as Kafka's ClientMetricsConfigs does, with
Kafka's error codes and texts (ClientMetricsError.code).
"""

from __future__ import annotations

import re

from .config_store import ConfigStore
from .javacompat import hashmap_order
from .protocol import errors as E

FILE_NAME = "client-metrics.json"  # and its client-metrics.lock (config_store.py)

METRICS, INTERVAL, MATCH = "metrics", "interval.ms", "match"
# name -> (default, DescribeConfigs config type: 3 INT, 7 LIST, documentation)
CONFIGS = {
    INTERVAL: ("300000", 3, "Metrics push interval in milliseconds"),
    MATCH: ("", 7, "Client match criteria"),
    METRICS: ("", 7, "Telemetry metric name prefix list"),
}
PARSE_ORDER = (METRICS, INTERVAL, MATCH)  # the order Kafka's ConfigDef parses them in
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3600000
MATCH_SELECTORS = frozenset({"client_id", "client_instance_id", "client_software_name", "client_software_version",
                             "client_source_address", "client_source_port"})


class ClientMetricsError(Exception):
    """A refused change: `code` is Kafka's error code, str() its message."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------- validation
def _list_items(name: str, value: str) -> list[str]:
    """ConfigDef's LIST parse: the trimmed value split at commas (with the blanks around them);
    an empty value is an empty list, an empty item is refused."""
    value = value.strip()
    if not value:
        return []
    items = re.split(r"\s*,\s*", value)
    if any(not item for item in items):
        raise ClientMetricsError(E.INVALID_CONFIG, f"Configuration '{name}' values must not be empty.")
    return items


def _int_value(value: str) -> int:
    text = value.strip()
    if not re.fullmatch(r"[+-]?\d+", text) or not -2**31 <= int(text) < 2**31:
        raise ClientMetricsError(E.INVALID_CONFIG,
                                 f"Invalid value {value} for configuration {INTERVAL}: Not a number of type INT")
    return int(text)


def _check_pattern(pattern: str) -> None:
    key, sep, regex = pattern.partition("=")
    key, regex = key.strip(), regex.strip()
    if not sep or "=" in regex or key not in MATCH_SELECTORS or not regex:
        raise ClientMetricsError(E.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
    try:
        re.compile(regex)
    except re.error:
        raise ClientMetricsError(E.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}") from None


def normalise(configs: dict[str, str]) -> dict[str, str]:
    """The configs of one resource checked as Kafka checks them (parse in ConfigDef's order,
    then the interval's bounds, then the match patterns) and in the form Kafka keeps."""
    unknown = [name for name in configs if name not in CONFIGS]
    if unknown:
        raise ClientMetricsError(E.INVALID_REQUEST, f"Unknown client metrics configuration: {unknown[0]}")
    parsed: dict[str, object] = {}
    for name in PARSE_ORDER:
        if name in configs:
            parsed[name] = _int_value(configs[name]) if name == INTERVAL else _list_items(name, configs[name])
    interval = parsed.get(INTERVAL)
    if interval is not None and not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise ClientMetricsError(E.INVALID_REQUEST, f"Invalid value {interval} for {INTERVAL}, interval must be "
                                                    f"between {MIN_INTERVAL_MS} and {MAX_INTERVAL_MS} (1 hour)")
    for pattern in parsed.get(MATCH, []):
        _check_pattern(pattern)
    return {name: str(value) if name == INTERVAL else ",".join(value) for name, value in parsed.items()}


def check_name(name: str, *, describing: bool = False) -> None:
    if not name:
        raise ClientMetricsError(E.INVALID_REQUEST, "Client metrics subscription name must not be empty"
                                 if describing else "Subscription name can't be empty")


# --------------------------------------------------------------------------- storage
class ClientMetricsStore(ConfigStore):
    """The client-metrics resources of one data directory: name -> {config: value}."""

    def __init__(self, data_dir: str):
        super().__init__(data_dir, FILE_NAME.removesuffix(".json"), "client metrics")

    def names(self) -> list[str]:
        """The resource names in the order Kafka lists them (its controller's HashMap)."""
        return hashmap_order(self.resources())
