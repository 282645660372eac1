"""kafka-client-metrics' operations (Kafka 4.4's ClientMetricsCommand) over pk's wire client:
client-metrics subscriptions are CLIENT_METRICS config resources (type 16), listed with
ListConfigResources (ListClientMetricsResources, its v0, on older brokers), read with
DescribeConfigs and changed with IncrementalAlterConfigs."""

from __future__ import annotations

import base64
import uuid

from pk.engine import protocol as kp

from .backends.kafka_admin import known_error

CLIENT_METRICS = 16
SET, DELETE = 0, 1


class ClientMetricsCommandError(Exception):
    """A refused command line (Kafka's IllegalArgumentException)."""


def list_names(client) -> list[str]:
    answer = client.call(kp.ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": [CLIENT_METRICS]})
    if answer["error_code"]:
        raise known_error(answer["error_code"])
    return [r["resource_name"] for r in answer["config_resources"] if r.get("resource_type", 16) == CLIENT_METRICS]


def configs(client, name: str) -> list[tuple[str, str]]:
    """Every config of the resource (defaults included), as DescribeConfigs answers them."""
    answer = client.call(kp.ApiKey.DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": CLIENT_METRICS, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})
    result = answer["results"][0]
    if result["error_code"]:
        raise known_error(result["error_code"], result["error_message"])
    return [(e["name"], e["value"]) for e in result["configs"]]


def _alter(client, name: str, changes: list[tuple[str, int, str | None]]) -> None:
    answer = client.call(kp.ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [{"resource_type": CLIENT_METRICS, "resource_name": name,
                       "configs": [{"name": k, "config_operation": op, "value": v} for k, op, v in changes]}],
        "validate_only": False})
    result = answer["responses"][0]
    if result["error_code"]:
        raise known_error(result["error_code"], result["error_message"])


def generated_name() -> str:
    """Uuid.randomUuid().toString(): URL-safe Base64 of 16 random bytes, unpadded."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def check_interval(interval: str | None) -> None:
    """An integer, or empty (reset to the default)."""
    if interval:
        try:
            if interval.strip() != interval or not -2**31 <= int(interval) < 2**31:
                raise ValueError
        except ValueError:
            raise ClientMetricsCommandError("Invalid interval value. Enter an integer, or leave empty to "
                                            "reset.") from None


def _joined(values: list[str] | None) -> str | None:
    """The values of a repeatable comma-separated option as jopt-simple splits them (its
    StringTokenizer drops empty pieces; an argument without any piece is kept whole), joined
    by commas."""
    if values is None:
        return None
    return ",".join(piece for value in values for piece in ([p for p in value.split(",") if p] or [value]))


def alter(client, name: str, metrics: list[str] | None, interval: str | None, match: list[str] | None) -> str:
    """Each config given is set, or deleted when given empty."""
    changes = []
    for key, value in (("interval.ms", interval), ("metrics", _joined(metrics)), ("match", _joined(match))):
        if value is not None:
            changes.append((key, DELETE, None) if value == "" else (key, SET, value))
    _alter(client, name, changes)
    return f"Altered client metrics config for {name}."


def delete(client, name: str) -> str:
    _alter(client, name, [(key, DELETE, None) for key, _ in configs(client, name)])
    return f"Deleted client metrics config for {name}."


def describe(client, name: str | None) -> list[str]:
    names = list_names(client)
    if name is not None:
        if name not in names:
            return [f"The client metric resource {name} doesn't exist and doesn't have dynamic config."]
        names = [name]
    lines = []
    for entity in names:
        lines.append(f"Client metrics configs for {entity} are:")
        lines += [f"  {key}={value}" for key, value in configs(client, entity)]
    return lines
