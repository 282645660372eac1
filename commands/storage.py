"""kafka-storage (StorageTool, Kafka 4.4) for pk's data directories: `format` writes each log
directory's meta.properties as Kafka writes it (the first log directory is the data directory
the bundled engine and pk-server-start use: they take its cluster.id), plus SCRAM credentials
(--add-scram) into it; `info` reports what is there; `random-uuid` prints a new cluster id.

pk is one node that is broker and controller at once and keeps no metadata log: a config
without process.roles (pk's own config/server.properties) is such a node; Kafka's checks that
involve the controller quorum apply when the config names one.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from dataclasses import dataclass, field


META_PROPERTIES = "meta.properties"
METADATA_VERSION_NAMES = {33: "4.4-IV2"}  # MetadataVersion levels pk's features can finalize


class StorageError(Exception):
    """A refusal, printed on stderr as one line (Kafka's text), exit 1."""


# --------------------------------------------------------------------------- --add-scram
@dataclass
class ScramEntry:
    user: str
    mechanism: str
    iterations: int
    password: str | None = None
    salt: bytes | None = None
    salted_password: bytes | None = None


def _b64(value: str) -> bytes:
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise StorageError(f"Illegal base64 value: {value}") from None


def parse_scram(arg: str) -> ScramEntry:
    """One --add-scram argument: MECHANISM=[name=...,password=...(,iterations=N,salt=B64)] or
    with saltedpassword=B64 and salt=B64 in place of password (ScramParser's checks)."""
    from pk.engine import scram_credentials as sc

    mechanism, eq, rest = arg.partition("=")
    if not eq:
        raise StorageError(f"Failed to find equals sign in SCRAM argument '{arg}'")
    if mechanism not in sc.MECHANISM_TYPES:
        raise StorageError(f"The add-scram mechanism {mechanism} is not supported.")
    rest = rest.strip()
    if not rest.startswith("["):
        raise StorageError("Expected configuration string to start with [")
    if not rest.endswith("]"):
        raise StorageError("Expected configuration string to end with ]")
    values: dict[str, str] = {}
    for part in filter(None, rest[1:-1].split(",")):
        key, eq, value = part.partition("=")
        if not eq:
            raise StorageError(f"Unable to find an equals sign in '{part}'")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        values[key.strip()] = value
    if "name" not in values:
        raise StorageError("You must supply 'name' to add-scram")
    java_name = mechanism.replace("-", "_")
    iterations = sc.MIN_ITERATIONS
    if "iterations" in values:
        try:
            iterations = int(values["iterations"])
        except ValueError:
            raise StorageError(f"Failed to parse iterations: {values['iterations']}") from None
        if iterations < sc.MIN_ITERATIONS:
            raise StorageError(f"The 'iterations' value must be >= {sc.MIN_ITERATIONS} for add-scram using "
                               f"{java_name}")
        if iterations > sc.MAX_ITERATIONS:
            raise StorageError(f"The 'iterations' value must be <= {sc.MAX_ITERATIONS} for add-scram using "
                               f"{java_name}")
    entry = ScramEntry(values["name"], mechanism, iterations,
                       salt=_b64(values["salt"]) if "salt" in values else None)
    if "password" in values:
        entry.password = values["password"]
    elif "saltedpassword" in values:
        if entry.salt is None:
            raise StorageError("You must supply 'salt' with 'saltedpassword' to add-scram")
        entry.salted_password = _b64(values["saltedpassword"])
    else:
        raise StorageError("You must supply one of 'password' or 'saltedpassword' to add-scram")
    return entry


def _kafka_salt() -> bytes:
    """A salt as Kafka's ScramFormatter makes one: 130 random bits written in base 36."""
    import secrets

    n, digits = secrets.randbits(130), ""
    while True:
        n, d = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[d] + digits
        if not n:
            return digits.encode()


def scram_credential(entry: ScramEntry):
    """The credential an entry stands for (a salt of Kafka's kind when none was given)."""
    from pk.engine import scram_credentials as sc

    if entry.salt is None:
        entry.salt = _kafka_salt()
    if entry.password is not None:
        return sc.Credential.from_password(entry.mechanism, entry.password, entry.iterations, entry.salt)
    return sc.Credential.from_salted_password(entry.mechanism, entry.salt, entry.salted_password, entry.iterations)


def _store_scram(data_dir: str, entry: ScramEntry) -> None:
    from pk.engine import scram_credentials as sc

    if entry.password is not None:  # the same credential scram_credential() printed: same salt
        sc.add_credential(data_dir, entry.user, entry.mechanism, entry.password, entry.iterations, entry.salt)
    else:
        sc.ScramCredentials(data_dir).alter([], [(entry.user, entry.mechanism, scram_credential(entry))])


def _java_bytes(data: bytes) -> str:
    """Arrays.toString(byte[]): signed bytes."""
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in data) + "]"


# --------------------------------------------------------------------------- the node's config
@dataclass
class NodeConfig:
    node_id: int
    log_dirs: list[str]
    metadata_dir: str
    roles: list[str] = field(default_factory=lambda: ["broker", "controller"])
    static_voters: bool = False

    @classmethod
    def load(cls, path: str) -> "NodeConfig":
        from .errors import PropertiesError
        from .properties import load_properties

        try:
            props = load_properties(path)
        except PropertiesError as exc:
            raise StorageError(f'Exception in thread "main" {exc}') from None
        dirs = [d.strip() for d in (props.get("log.dirs") or props.get("log.dir") or "/tmp/kafka-logs").split(",")
                if d.strip()]
        node = props.get("node.id", props.get("broker.id", "0")).strip()
        try:
            node_id = int(node)
        except ValueError:
            raise StorageError(f'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
                               f'Invalid value {node} for configuration node.id: Not a number of type INT') from None
        roles = [r.strip() for r in props["process.roles"].split(",")] if "process.roles" in props else \
            ["broker", "controller"]
        metadata_dir = (props.get("metadata.log.dir") or dirs[0]).strip()
        return cls(node_id, dirs, metadata_dir, roles, bool(props.get("controller.quorum.voters", "").strip()))

    def directories(self) -> list[str]:
        """Every directory format writes, the metadata directory last (as Kafka prints them)."""
        return [d for d in self.log_dirs if d != self.metadata_dir] + [self.metadata_dir]


# --------------------------------------------------------------------------- meta.properties
def read_meta(directory: str) -> dict[str, str] | None:
    from .properties import load_properties

    path = os.path.join(directory, META_PROPERTIES)
    if not os.path.isfile(path):
        return None
    return load_properties(path)


def meta_text(node_id: int, cluster_id: str) -> str:
    """meta.properties as Kafka 4.4's format writes it (Properties.store: a date comment)."""
    from pk.engine.metadata import new_kafka_uuid

    stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
    return (f"#\n#{stamp}\nnode.id={node_id}\ndirectory.id={new_kafka_uuid()}\nversion=1\n"
            f"cluster.id={cluster_id}\n")


def bootstrap_metadata_line(entries: list[ScramEntry]) -> str:
    """The feature levels a new cluster starts with (pk-server-start's finalized levels) and
    the SCRAM credentials, as Kafka's format prints its BootstrapMetadata: metadata.version
    first, the other features by name, then the credentials in the order given."""
    from pk.engine import scram_credentials as sc
    from pk.engine.broker.features import FINALIZED

    level = FINALIZED["metadata.version"]
    names = ["metadata.version"] + sorted(n for n in FINALIZED if n != "metadata.version")
    items = [f"FeatureLevelRecord(name='{n}', featureLevel={FINALIZED[n]})" for n in names]
    for entry in entries:
        c = scram_credential(entry)
        items.append(f"UserScramCredentialRecord(name='{entry.user}', mechanism={sc.MECHANISM_TYPES[entry.mechanism]}, "
                     f"salt={_java_bytes(c.salt)}, storedKey={_java_bytes(c.stored_key)}, "
                     f"serverKey={_java_bytes(c.server_key)}, iterations={c.iterations})")
    records = ", ".join(f"ApiMessageAndVersion({item} at version 0)" for item in items)
    return f"Bootstrap metadata: BootstrapMetadata(records=[{records}], metadataVersionLevel={level}, " \
           "source=format command)"


def format_storage(config_path: str, cluster_id: str, scram: list[str], ignore_formatted: bool,
                   standalone: bool, out) -> None:
    """StorageTool format: every unformatted log directory gets its meta.properties; the
    metadata directory (pk's data directory) also the SCRAM credentials."""
    from pk.engine.broker.features import FINALIZED

    config = NodeConfig.load(config_path)
    entries = [parse_scram(arg) for arg in scram]
    controller = "controller" in config.roles
    if standalone and config.static_voters:
        raise StorageError("You cannot specify controller.quorum.voters and format the node with "
                           "--initial-controllers or --standalone. If you want to use dynamic quorum, please "
                           "remove controller.quorum.voters and specify controller.quorum.bootstrap.servers "
                           "instead.")
    if standalone and not controller:
        raise StorageError("You can only specify --standalone or --initial-controllers on a controller.")
    formatted = [d for d in config.directories() if read_meta(d) is not None]
    if formatted and not ignore_formatted:
        raise StorageError(f"Log directory {formatted[0]} is already formatted. Use --ignore-formatted to ignore "
                           "this directory and format the others.")
    todo = [d for d in config.directories() if d not in formatted]
    if not todo:
        out("All of the log directories are already formatted.")
        return
    version = METADATA_VERSION_NAMES[FINALIZED["metadata.version"]]
    out(bootstrap_metadata_line(entries))
    for directory in todo:
        if directory != config.metadata_dir:
            kind = "data directory"
        else:
            kind = "dynamic metadata voter directory" if standalone else "metadata directory"
        out(f"Formatting {kind} {directory} with metadata.version {version}.")
        try:
            os.makedirs(directory, exist_ok=True)
            from pk.engine.fileutil import atomic_write

            atomic_write(os.path.join(directory, META_PROPERTIES), meta_text(config.node_id, cluster_id).encode())
            if directory == config.metadata_dir:
                for entry in entries:
                    _store_scram(directory, entry)
        except OSError as exc:
            raise StorageError(f'Exception in thread "main" java.io.UncheckedIOException: Error while writing '
                               f"meta.properties file {directory}: {exc.strerror}") from None


def info(config_path: str, out) -> int:
    """StorageTool info: the log directories found and their meta.properties (exit 1 when
    there is a problem: a directory missing or not formatted)."""
    config = NodeConfig.load(config_path)
    found, problems, metas = [], [], []
    for directory in config.log_dirs:
        if not os.path.isdir(directory):
            problems.append(f"{directory} does not exist")
            continue
        found.append(directory)
        meta = read_meta(directory)
        if meta is None:
            problems.append(f"{directory} is not formatted.")
        elif meta not in metas:
            metas.append(meta)
    lines = []
    if found:
        lines += ["Found log directory:" if len(found) == 1 else "Found log directories:",
                  *(f"  {d}" for d in sorted(found)), ""]
    if metas:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(metas[0].items()))
        lines += [f"Found metadata: {{{shown}}}", ""]
    if problems:
        lines += ["Found problem:" if len(problems) == 1 else "Found problems:", *(f"  {p}" for p in problems), ""]
    out("\n".join(lines))
    return 1 if problems else 0


def random_uuid() -> str:
    from pk.engine.metadata import new_kafka_uuid

    return new_kafka_uuid()

