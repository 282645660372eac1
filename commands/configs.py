"""kafka-configs (Kafka 4.4's ConfigCommand): describe and alter the configs of topics,
brokers, broker loggers, users, clients, IPs, client-metrics resources and groups.

The command line is read as Kafka reads it (`Options.entity_types()` / `entity_names()`:
--entity-type/--entity-name pairs in command-line order, then the --topic/--user/...
shorthands, then the --*-defaults flags), checked by `check_args` with Kafka's messages, and
run by `describe` / `alter` over a backend:

- `backends/configs_engine.py`: the bundled engine (topic configs, the cluster's broker
  defaults);
- `backends/configs_remote.py`: a cluster through --bootstrap-server.

A backend answers `entries(type, name, describe_all)` (DescribeConfigs entries, sorted by
name), `names(type)` (every entity of a type), `alter(type, name, set, delete)`,
`quotas(types, names)` / `alter_quotas(...)` and `scram(users)` / `alter_scram(...)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import UsageError

TOPICS, CLIENTS, USERS, BROKERS, BROKER_LOGGERS = "topics", "clients", "users", "brokers", "broker-loggers"
IPS, CLIENT_METRICS, GROUPS = "ips", "client-metrics", "groups"
# In the order Kafka 4.4 names them in "Invalid entity type ..."
ENTITY_TYPES = (BROKER_LOGGERS, TOPICS, CLIENTS, USERS, BROKERS, IPS, CLIENT_METRICS, GROUPS)
# the shorthand flags, in the order ConfigCommandOptions lists them
ENTITY_FLAGS = (("topic", TOPICS), ("client", CLIENTS), ("user", USERS), ("broker", BROKERS),
                ("broker_logger", BROKER_LOGGERS), ("ip", IPS), ("client_metrics", CLIENT_METRICS),
                ("group", GROUPS))
DEFAULT_FLAGS = (("client_defaults", CLIENTS), ("user_defaults", USERS), ("broker_defaults", BROKERS),
                 ("ip_defaults", IPS))
SCRAM_MECHANISMS = {"SCRAM-SHA-256": 4096, "SCRAM-SHA-512": 4096}  # name -> minimum iterations
DEFAULT_ITERATIONS = 4096
# DynamicConfig.User/Client/Ip quota names
QUOTA_CONFIGS = frozenset({"producer_byte_rate", "consumer_byte_rate", "request_percentage",
                           "controller_mutation_rate"})
IP_CONFIGS = frozenset({"connection_creation_rate"})
# ConfigEntry.ConfigSource names by DescribeConfigs' config_source
SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
           7: "DYNAMIC_CLIENT_METRICS_CONFIG", 8: "DYNAMIC_GROUP_CONFIG"}
# which source is "dynamic" for each entity type (None: every entry)
DYNAMIC_SOURCE = {TOPICS: 1, BROKERS: 2, BROKER_LOGGERS: None, CLIENT_METRICS: 7, GROUPS: 8}
RESOURCE_TYPES = (TOPICS, BROKERS, BROKER_LOGGERS, CLIENT_METRICS, GROUPS)


# UsageError stands for what ConfigCommand's main() prints as the message alone
# (IllegalArgumentException, InvalidConfigurationException, jopt's OptionException).


class ConfigCommandError(Exception):
    """What ConfigCommand prints as "Error while executing config command with args '...'"
    followed by the exception's toString (`java_line`)."""

    def __init__(self, java_line: str):
        super().__init__(java_line)
        self.java_line = java_line


@dataclass
class Entry:
    """One DescribeConfigs entry: synonyms as (source name, name, value)."""
    name: str
    value: str | None
    sensitive: bool
    source: int
    synonyms: list[tuple[str, str, str | None]] = field(default_factory=list)

    def line(self) -> str:
        synonyms = ", ".join(f"{s}:{n}={_java(v)}" for s, n, v in self.synonyms)
        return f"  {self.name}={_java(self.value)} sensitive={'true' if self.sensitive else 'false'} synonyms={{{synonyms}}}"


def _java(value) -> str:
    return "null" if value is None else str(value)


@dataclass
class Options:
    describe: bool = False
    alter: bool = False
    all: bool = False
    bootstrap_server: str | None = None
    bootstrap_controller: str | None = None
    command_config: str | None = None
    entity_type: tuple = ()
    entity_name: tuple = ()
    entity_default: bool = False
    # the --entity-name / --entity-default occurrences in command-line order (True: a default)
    name_or_default_order: tuple = ()
    add_config: str | None = None
    add_config_file: str | None = None
    delete_config: tuple = ()
    flags: dict = field(default_factory=dict)  # shorthand flag -> value (or True for *_defaults)

    def entity_types(self) -> list[str]:
        return list(self.entity_type) + [t for f, t in ENTITY_FLAGS + DEFAULT_FLAGS if self.flags.get(f) is not None]

    def entity_names(self) -> list[str]:
        names = iter(self.entity_name)
        out = ["" if is_default else next(names, "") for is_default in self.name_or_default_order]
        out += [self.flags[f] for f, _ in ENTITY_FLAGS if self.flags.get(f) is not None]
        out += ["" for f, _ in DEFAULT_FLAGS if self.flags.get(f) is not None]
        return out

    def has_entity_flags(self) -> bool:
        return any(self.flags.get(f) is not None for f, _ in ENTITY_FLAGS + DEFAULT_FLAGS)


def check_args(opts: Options) -> None:
    """ConfigCommandOptions.checkArgs, in Kafka 4.4's order. Without --bootstrap-server pk works
    on the bundled engine instead of asking for one."""
    if opts.describe + opts.alter != 1:
        raise UsageError("Command must include exactly one action: --describe, --alter")
    if opts.describe and (opts.add_config is not None or opts.delete_config):
        other = "add-config" if opts.add_config is not None else "delete-config"
        raise UsageError(f'Option "[describe]" can\'t be used with option "[{other}]"')
    types = opts.entity_types()
    duplicates = [t for i, t in enumerate(types) if t in types[:i]]
    if duplicates:
        raise UsageError("Duplicate entity type(s) specified: " + ",".join(dict.fromkeys(duplicates)))
    if opts.bootstrap_server is not None and opts.bootstrap_controller is not None:
        raise UsageError("Only one of --bootstrap-server or --bootstrap-controller can be specified")
    for t in types:
        if t not in ENTITY_TYPES:
            raise UsageError(f"Invalid entity type {t}, the entity type must be one of {', '.join(ENTITY_TYPES)} "
                             "with a --bootstrap-server or --bootstrap-controller argument")
    if not types:
        raise UsageError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {USERS, CLIENTS}:
        raise UsageError(f"Only '{USERS}' and '{CLIENTS}' entity types may be specified together")
    if (opts.entity_name or opts.entity_type or opts.entity_default) and opts.has_entity_flags():
        raise UsageError("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
    names = opts.entity_names()
    has_name = any(n for n in names)
    has_default = any(not n for n in names)
    if has_name and (BROKERS in types or BROKER_LOGGERS in types):
        for broker in [*opts.entity_name[:1], opts.flags.get("broker"), opts.flags.get("broker_logger")]:
            if broker is not None and not _java_int(broker):
                raise UsageError(f"The entity name for {types[0]} must be a valid integer broker id, but it is: {broker}")
    if opts.describe:
        if not {USERS, CLIENTS, BROKERS, IPS} & set(types) and opts.entity_default:
            raise UsageError(f"--entity-default must not be specified with --describe of {','.join(types)}")
        if BROKER_LOGGERS in types and not has_name:
            raise UsageError(f"An entity name must be specified with --describe of {','.join(types)}")
    if opts.alter:
        if {USERS, CLIENTS, BROKERS, IPS} & set(types):
            if not has_name and not has_default:
                raise UsageError("An entity-name or default entity must be specified with --alter of users, "
                                 "clients, brokers or ips")
        elif not has_name:
            raise UsageError(f"An entity name must be specified with --alter of {','.join(types)}")
        if opts.add_config is not None and opts.add_config_file is not None:
            raise UsageError("Only one of --add-config or --add-config-file must be specified")
        if opts.add_config is None and opts.add_config_file is None and not opts.delete_config:
            raise UsageError("At least one of --add-config, --add-config-file, or --delete-config must be "
                             "specified with --alter")


def _java_int(text: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", text) is not None and -2**31 <= int(text) < 2**31


# --------------------------------------------------------------------------- --add-config
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"


def parse_add_config(text: str) -> dict[str, str]:
    """`k1=v1,k2=[v1,v2],k3=v3`: split at commas outside brackets (Java's split drops trailing
    empty parts), each part at its `=` outside brackets; brackets are then removed."""
    parts = re.split("," + _OUTSIDE_BRACKETS, text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    props: dict[str, str] = {}
    pairs = [re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, part) for part in parts]
    if any(len(pair) != 2 for pair in pairs):
        raise UsageError('Invalid entity config: all configs to be added must be in the format "key=val" or  '
                         '"key=[val1,val2]" to group values which contain commas.')
    for key, value in pairs:
        props[key.strip()] = re.sub(r"[\[\]]", "", value).strip()
    return props


def configs_to_add(opts: Options) -> dict[str, str]:
    props: dict[str, str] = {}
    if opts.add_config_file is not None:
        from .errors import PropertiesError
        from .properties import load_properties

        try:
            props.update(load_properties(opts.add_config_file))
        except PropertiesError as exc:
            raise ConfigCommandError(str(exc)) from None
    if opts.add_config is not None:
        props.update(parse_add_config(opts.add_config))
    for key in props:
        if not re.fullmatch(r"[$a-zA-Z0-9._-]*", key):
            raise UsageError(f"Invalid character found for config key: {key}")
    return props


def configs_to_delete(opts: Options) -> list[str]:
    return [k.strip() for value in opts.delete_config for k in value.split(",")]


# --------------------------------------------------------------------------- describe
# What --describe finds, in the order Kafka prints it; the text printer below and
# configs_json.py both render these, so the two outputs never disagree on the facts.
@dataclass
class ResourceConfigs:
    entity_type: str
    entity: str  # "" for the cluster's defaults
    describe_all: bool
    entries: list[Entry] | None  # the entries shown (sorted by name); None: the resource does not exist


@dataclass
class QuotaConfigs:
    entity: dict  # quota entity type ("user", "client-id", "ip") -> name, None for the default
    values: list  # (quota name, float)


@dataclass
class ScramConfigs:
    user: str
    credentials: list  # (mechanism, iterations)


def described(backend, opts: Options):
    """ResourceConfigs, QuotaConfigs and ScramConfigs in the order --describe reports them."""
    types, names = opts.entity_types(), opts.entity_names()
    if types[0] in RESOURCE_TYPES:
        yield from _described_resources(backend, types[0], names[0] if names else None, opts.all)
    else:
        for entity, values in backend.quotas(quota_filter(types, names)):
            yield QuotaConfigs(entity, list(values))
        if types[0] in (USERS, CLIENTS) and CLIENTS not in types and "" not in names:
            for user, infos in backend.scram(names):
                yield ScramConfigs(user, list(infos))


def describe(backend, opts: Options, out) -> None:
    from pk.engine.topic_config import java_double_str  # Double.toString of the quota values

    for part in described(backend, opts):
        if isinstance(part, ResourceConfigs):
            if part.entries is None:
                out(f"The {part.entity_type[:-1]} '{part.entity}' doesn't exist and doesn't have dynamic config.")
                continue
            if part.entity == "":
                out(f"Default configs for {part.entity_type} in the cluster are:")
            else:
                out(f"{'All' if part.describe_all else 'Dynamic'} configs for {part.entity_type[:-1]} "
                    f"{part.entity} are:")
            for entry in part.entries:
                out(entry.line())
        elif isinstance(part, QuotaConfigs):
            words = []
            for quota_type in ("user", "client-id", "ip"):
                if quota_type in part.entity:
                    name = part.entity[quota_type]
                    word = _QUOTA_WORDS[quota_type]
                    words.append(f"{word} '{name}'" if name is not None else f"the default {word}")
            text = ", ".join(f"{k}={java_double_str(v)}" for k, v in part.values)
            out(f"Quota configs for {', '.join(words)} are {text}")
        else:
            text = ", ".join(f"{mechanism}=iterations={iterations}" for mechanism, iterations in part.credentials)
            out(f"SCRAM credential configs for user-principal '{part.user}' are {text}")


def _described_resources(backend, entity_type: str, name: str | None, describe_all: bool):
    if name is None:
        entities = backend.names(entity_type)
        if entity_type in (BROKERS, BROKER_LOGGERS):
            entities = entities + [""]
    else:
        entities = [name]
    for entity in entities:
        if entity_type == TOPICS and entity:
            from pk.engine import topic_names
            from pk.engine.errors import KafkaError

            try:
                topic_names.validate(entity)
            except KafkaError as exc:
                raise UsageError(str(exc)) from None
        entries = backend.entries(entity_type, entity, describe_all)
        if entries is None:  # the resource does not exist
            yield ResourceConfigs(entity_type, entity, describe_all, None)
            continue
        source = None if describe_all else DYNAMIC_SOURCE[entity_type]
        if entity_type == BROKERS and entity == "" and source is not None:
            source = 3  # DYNAMIC_DEFAULT_BROKER_CONFIG
        shown = [e for e in sorted(entries, key=lambda e: e.name) if source is None or e.source == source]
        yield ResourceConfigs(entity_type, entity, describe_all, shown)


_QUOTA_TYPES = {USERS: "user", CLIENTS: "client-id", IPS: "ip"}
_QUOTA_WORDS = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}


def quota_filter(types: list[str], names: list[str]) -> list[tuple[str, str | None, bool]]:
    """(quota entity type, name or None, is the default) per type, as ClientQuotaFilterComponent."""
    if len(names) > len(types):
        raise UsageError("More entity names specified than entity types")
    out = []
    for i, t in enumerate(types):
        name = names[i] if i < len(names) else None
        out.append((_QUOTA_TYPES[t], name or None, name == ""))
    return out


# --------------------------------------------------------------------------- alter
def alter(backend, opts: Options, out) -> None:
    types, names = opts.entity_types(), opts.entity_names()
    if len(types) != len(names):
        raise UsageError("An entity name must be specified for every entity type")
    add = configs_to_add(opts)
    delete = configs_to_delete(opts)
    head_type, head_name = types[0], names[0]
    if head_type in (TOPICS, BROKERS, CLIENT_METRICS, GROUPS):
        backend.alter(head_type, head_name, add, delete)
    elif head_type == BROKER_LOGGERS:
        valid = {e.name for e in backend.entries(BROKER_LOGGERS, head_name, False) or []}
        invalid = [k for k in delete if k not in valid] + [k for k in add if k not in valid]
        if invalid:
            raise UsageError(f"Invalid broker logger(s): {','.join(invalid)}")
        backend.alter(head_type, head_name, add, delete)
    elif head_type in (USERS, CLIENTS):
        _alter_users_clients(backend, types, names, add, delete)
    elif head_type == IPS:
        unknown = [k for k in list(add) + delete if k not in IP_CONFIGS]
        if unknown:
            raise UsageError(f"Only connection quota configs can be added for '{IPS}' using --bootstrap-server. "
                             f"Unexpected config names: {','.join(unknown)}")
        _alter_quotas(backend, types, names, add, delete)
    if head_name:
        out(f"Completed updating config for {head_type[:-1]} {head_name}.")
    else:
        out(f"Completed updating default config for {head_type} in the cluster.")


def _alter_users_clients(backend, types, names, add, delete) -> None:
    scram_add = {k: v for k, v in add.items() if k in SCRAM_MECHANISMS}
    scram_delete = [k for k in delete if k in SCRAM_MECHANISMS]
    unknown_add = [k for k in add if k not in SCRAM_MECHANISMS and k not in QUOTA_CONFIGS]
    unknown_delete = [k for k in delete if k not in SCRAM_MECHANISMS and k not in QUOTA_CONFIGS]
    quota_add = any(k in QUOTA_CONFIGS for k in add)
    quota_delete = any(k in QUOTA_CONFIGS for k in delete)
    if types[0] == CLIENTS or len(types) == 2:
        if unknown_add or scram_add:
            raise UsageError(f"Only quota configs can be added for '{CLIENTS}' using --bootstrap-server. "
                             f"Unexpected config names: {','.join(unknown_add + list(scram_add))}")
        if unknown_delete or scram_delete:
            raise UsageError(f"Only quota configs can be deleted for '{CLIENTS}' using --bootstrap-server. "
                             f"Unexpected config names: {','.join(unknown_delete + scram_delete)}")
    else:
        if unknown_add:
            raise UsageError(f"Only quota and SCRAM credential configs can be added for '{USERS}' using "
                             f"--bootstrap-server. Unexpected config names: {','.join(unknown_add)}")
        if unknown_delete:
            raise UsageError(f"Only quota and SCRAM credential configs can be deleted for '{USERS}' using "
                             f"--bootstrap-server. Unexpected config names: {','.join(unknown_delete)}")
        if scram_add or scram_delete:
            if "" in names:
                raise UsageError("The use of --entity-default or --user-defaults is not allowed with User SCRAM "
                                 "Credentials using --bootstrap-server.")
            if quota_add or quota_delete:
                raise UsageError(f"Cannot alter both quota and SCRAM credential configs simultaneously for "
                                 f"'{USERS}' using --bootstrap-server.")
    if quota_add or quota_delete:
        _alter_quotas(backend, types, names, add, delete)
    else:
        upserts = {m: scram_credential(m, v) for m, v in scram_add.items()}
        backend.alter_scram(names[0], upserts, scram_delete)


def scram_credential(mechanism: str, text: str) -> tuple[int, str]:
    """(iterations, password) from `[iterations=N,]password=P`."""
    m = re.fullmatch(r"(?:iterations=(-?[0-9]*),)?password=(.*)", text, re.S)
    if m is None:
        raise UsageError(f"Invalid credential property {mechanism.replace('-', '_')}={text}")
    iterations = int(m.group(1)) if m.group(1) not in (None, "-1") else DEFAULT_ITERATIONS
    if iterations < SCRAM_MECHANISMS[mechanism]:
        raise UsageError(f"Iterations {iterations} is less than the minimum {SCRAM_MECHANISMS[mechanism]} "
                         f"required for {mechanism}")
    return iterations, m.group(2)


def _alter_quotas(backend, types, names, add, delete) -> None:
    if len(types) != len(names):
        raise UsageError("Exactly one entity name must be specified for every entity type")
    current = dict(next(iter(backend.quotas(quota_filter(types, names))), ({}, []))[1])
    invalid = [k for k in delete if k not in current]
    if invalid:
        raise UsageError(f"Invalid config(s): {','.join(invalid)}")
    ops: list[tuple[str, float | None]] = []
    for key, value in add.items():
        try:
            ops.append((key, float(value)))
        except ValueError:
            raise UsageError(f"Cannot parse quota configuration value for {key}: {value}") from None
    ops += [(key, None) for key in delete]
    entity = {_QUOTA_TYPES[t]: (n or None) for t, n in zip(types, names)}
    backend.alter_quotas(entity, ops)
