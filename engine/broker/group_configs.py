"""GROUP config resources (type 32) on the broker: what DescribeConfigs, AlterConfigs and
IncrementalAlterConfigs (admin.py) do for a group, and the values the coordinator runs a group
with (consumer_group_848.py asks `value(group, name)` when it times a member). The configs are
kept in the data directory (`.pk/group-configs.json`, engine/config_store.py), so they survive
restarts; Kafka keeps them in its metadata log (GroupConfigManager).

Kafka authorizes them on the group: DESCRIBE_CONFIGS to read, ALTER_CONFIGS to change.
"""

from __future__ import annotations

from .. import group_config
from ..config_store import ConfigStore
from ..errors import InvalidConfigurationError, InvalidRequestError, KafkaError
from ..protocol import errors as E

DYNAMIC_GROUP_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 8, 4, 5  # DescribeConfigs config sources
CONFIG_TYPES = {"boolean": 1, "string": 2, "int": 3, "long": 5, "list": 7}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


class GroupConfigs:
    def __init__(self, broker):
        self.broker = broker
        self.store = ConfigStore(broker.engine.data_dir, group_config.FILE_NAME)

    def _broker_get(self, name: str):
        return self.broker.config.get(name)

    def _broker_synonyms(self, name: str) -> list[dict]:
        dynamic = getattr(self.broker, "dynamic_config", None)
        if dynamic is not None:
            return dynamic.synonyms(name)
        # the bundled engine (commands/backends/configs_engine.py): its settings, as static ones
        value = self._broker_get(name)
        return [] if value is None else [{"name": name, "value": str(value), "source": STATIC_BROKER_CONFIG}]

    def names(self) -> list[str]:
        return list(self.store.resources())

    def value(self, group: str, name: str) -> int:
        """The integer value of one config that `group` runs with (its own, else the broker's)."""
        return int(group_config.effective(self.store.get(group), name, self._broker_get))

    # ------------------------------------------------------------------ DescribeConfigs
    def config_entries(self, group: str, with_synonyms: bool, with_documentation: bool) -> list[dict]:
        if not group:
            raise InvalidRequestError("Group name must not be empty")
        current = self.store.get(group)
        entries = []
        for key in sorted(group_config.KEYS, key=lambda k: k.name):
            dynamic = key.name in current
            if key.internal and not dynamic:
                continue  # Kafka lists an internal config only once it is set
            default = group_config.default_of(key, self._broker_get)
            synonyms = [{"name": key.name, "value": current[key.name], "source": DYNAMIC_GROUP_CONFIG}] \
                if dynamic else []
            if key.synonym != key.name:  # the broker config's own chain: dynamic, static, Kafka's default
                synonyms += [s for s in self._broker_synonyms(key.synonym) if s["source"] != DEFAULT_CONFIG]
            synonyms.append({"name": key.synonym, "value": key.default, "source": DEFAULT_CONFIG})
            entries.append({"name": key.name, "value": current[key.name] if dynamic else default,
                            "read_only": False, "config_source": synonyms[0]["source"] if synonyms else DEFAULT_CONFIG,
                            "is_sensitive": False, "config_type": CONFIG_TYPES[key.type],
                            "synonyms": synonyms if with_synonyms else [],
                            "documentation": key.documentation if with_documentation else None})
        return entries

    # ------------------------------------------------------------------ alterations
    def incremental_alter(self, group: str, configs: list[dict], validate_only: bool) -> None:
        def change(current: dict[str, str]) -> dict[str, str]:
            for c in configs:
                _apply(current, c["name"], c["config_operation"], c["value"])
            group_config.validate(current, self._broker_get)
            return current

        self._alter(group, change, validate_only)

    def replace(self, group: str, configs: list[dict], validate_only: bool) -> None:
        """AlterConfigs: the group's configs become exactly those given."""
        def change(_current: dict[str, str]) -> dict[str, str]:
            new = {}
            for c in configs:
                if c["value"] is None:
                    raise InvalidRequestError(f"Null value not supported for : {c['name']}")
                new[c["name"]] = c["value"]
            group_config.validate(new, self._broker_get)
            return new

        self._alter(group, change, validate_only)

    def _alter(self, group: str, change, validate_only: bool) -> None:
        if not group:
            raise InvalidRequestError("Default group resources are not allowed.")
        if validate_only:
            change(dict(self.store.get(group)))
        else:
            self.store.alter(group, change)


def _apply(configs: dict[str, str], name: str, op: int, value: str | None) -> None:
    key = group_config.CONFIGS.get(name)
    if op == DELETE:
        configs.pop(name, None)  # an unknown name is deleted without a word, as for topics
    elif op == SET:
        if value is None:
            raise InvalidRequestError(f"Null value not supported for : {name}")
        configs[name] = value
    elif op in (APPEND, SUBTRACT):
        if key is None:
            raise InvalidConfigurationError(f"Unknown group config name: {name}")
        if key.type != "list":
            verb = "APPEND" if op == APPEND else "SUBTRACT"
            raise InvalidConfigurationError(f"Can't {verb} to key {name} because its type is not LIST.")
        items = [v for v in configs.get(name, key.default).split(",") if v]
        changes = [v.strip() for v in (value or "").split(",") if v.strip()]
        items = items + [v for v in changes if v not in items] if op == APPEND else \
            [v for v in items if v not in changes]
        configs[name] = ",".join(items)
    else:  # Kafka fails on an unknown operation without a message
        error = KafkaError("")
        error.code = E.UNKNOWN_SERVER_ERROR
        raise error
