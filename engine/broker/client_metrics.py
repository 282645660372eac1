"""Client-metrics resources (KIP-714, ConfigResource type 16) on the broker: ListConfigResources
(API 74, which lists them and the other config resources), and what DescribeConfigs,
IncrementalAlterConfigs and AlterConfigs (admin.py) do for a type-16 resource. The resources
live in the data directory (engine/client_metrics.py), shared with every process on it.

Kafka authorizes all of them on the cluster: DESCRIBE_CONFIGS to read, ALTER_CONFIGS to change.
"""

from __future__ import annotations

from .. import acls
from ..client_metrics import CONFIGS, ClientMetricsError, ClientMetricsStore, check_name, normalise
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol import errors as E

CLIENT_METRICS = 16
TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
DYNAMIC_CLIENT_METRICS_CONFIG, DEFAULT_CONFIG = 7, 5  # DescribeConfigs config sources
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OPERATION_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
# the order Kafka's ListConfigResources answers the types in
LISTED_TYPES = (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC)


def refusal(exc: ClientMetricsError) -> KafkaError:
    error = KafkaError(str(exc))
    error.code = exc.code
    return error


class ClientMetricsHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.store = ClientMetricsStore(broker.engine.data_dir)
        broker.register(ApiKey.LIST_CONFIG_RESOURCES, self.list_config_resources)

    async def list_config_resources(self, request) -> dict:
        """v0 (ListClientMetricsResources) lists the client-metrics resources; v1 the resources
        of the types asked (all of them for none), a type Kafka does not list refused."""
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "config_resources": []}
        if not self.broker.guard.allows_cluster(request, acls.DESCRIBE_CONFIGS):
            answer["error_code"] = E.CLUSTER_AUTHORIZATION_FAILED
            return answer
        wanted = set(request.body.get("resource_types") or []) if request.api_version >= 1 else {CLIENT_METRICS}
        if wanted - set(LISTED_TYPES):
            answer["error_code"] = E.UNSUPPORTED_VERSION
            return answer
        for kind in LISTED_TYPES:
            if wanted and kind not in wanted:
                continue
            answer["config_resources"] += [{"resource_name": name, "resource_type": kind}
                                           for name in self._names(kind)]
        return answer

    def _names(self, kind: int) -> list[str]:
        if kind == CLIENT_METRICS:
            return self.store.names()
        if kind in (BROKER, BROKER_LOGGER):
            return [str(self.broker.node_id)]
        if kind == TOPIC:
            return sorted(self.broker.engine.list_topics())
        return self.broker.group_configs.names()  # GROUP: the groups with configs set

    # ------------------------------------------------------------------ DescribeConfigs
    def config_entries(self, name: str, with_synonyms: bool, with_documentation: bool) -> list[dict]:
        try:
            check_name(name, describing=True)
        except ClientMetricsError as exc:
            raise refusal(exc) from None
        current = self.store.resources().get(name, {})
        entries = []
        for key, (default, config_type, documentation) in sorted(CONFIGS.items()):
            dynamic = key in current
            value = current[key] if dynamic else default
            entries.append({"name": key, "value": value, "read_only": False,
                            "config_source": DYNAMIC_CLIENT_METRICS_CONFIG if dynamic else DEFAULT_CONFIG,
                            "is_sensitive": False, "config_type": config_type,
                            "synonyms": [{"name": key, "value": value, "source": DYNAMIC_CLIENT_METRICS_CONFIG}]
                            if dynamic and with_synonyms else [],
                            "documentation": documentation if with_documentation else None})
        return entries

    # ------------------------------------------------------------------ alterations
    def incremental_alter(self, name: str, configs: list[dict], validate_only: bool) -> None:
        """SET and DELETE (APPEND and SUBTRACT are refused, as Kafka refuses them for these
        configs), then the resource's whole configuration is checked."""

        def change(current: dict[str, str]) -> dict[str, str]:
            for c in configs:
                key, op, value = c["name"], c["config_operation"], c["value"]
                if op == SET:
                    if value is None:
                        raise ClientMetricsError(E.INVALID_REQUEST, f"Null value not supported for : {key}")
                    current[key] = value
                elif op == DELETE:
                    current.pop(key, None)
                elif op in OPERATION_NAMES:
                    raise ClientMetricsError(E.INVALID_CONFIG, f"Can't {OPERATION_NAMES[op]} to key {key} because "
                                                               "its type is not LIST.")
                else:  # Kafka fails on an unknown operation without a message
                    raise ClientMetricsError(E.UNKNOWN_SERVER_ERROR, "")
            return self._checked(name, current)

        self._apply(name, change, validate_only)

    def replace(self, name: str, configs: list[dict], validate_only: bool) -> None:
        """AlterConfigs: the resource's configs become exactly those given."""

        def change(_current: dict[str, str]) -> dict[str, str]:
            new = {}
            for c in configs:
                if c["value"] is None:
                    raise ClientMetricsError(E.INVALID_REQUEST, f"Null value not supported for : {c['name']}")
                new[c["name"]] = c["value"]
            return self._checked(name, new)

        self._apply(name, change, validate_only)

    @staticmethod
    def _checked(name: str, configs: dict[str, str]) -> dict[str, str]:
        check_name(name)
        return normalise(configs)

    def _apply(self, name: str, change, validate_only: bool) -> None:
        try:
            if validate_only:
                change(dict(self.store.resources().get(name, {})))
            else:
                self.store.alter(name, change)
        except ClientMetricsError as exc:
            raise refusal(exc) from None
