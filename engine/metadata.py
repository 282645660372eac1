"""Durable topic metadata: what Kafka keeps in KRaft's metadata log, pk keeps as one JSON
file per topic under `<data dir>/.pk/topics/`.

Each file is replaced atomically (temp file, fsync, rename), so a crash leaves a topic
either fully described or absent, never half-written. Callers serialise changes with the
admin lock (`Engine.admin_lock`).
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from dataclasses import dataclass, field

from . import validation
from .errors import DataDirError, KafkaStorageError, UnknownTopicOrPartitionError
from .fileutil import atomic_write, fsync_dir, inside


def new_kafka_uuid() -> str:
    """A random UUID in Kafka's text form (22 chars, URL-safe base64, no padding).

    Kafka never hands out ids whose text starts with '-' (they would read as options).
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def uuid_of(text: str) -> uuid.UUID:
    """A Kafka id's text form (new_kafka_uuid) as the UUID the wire protocol carries."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


def text_of(value: uuid.UUID) -> str:
    """The text form of a UUID taken from the wire (uuid_of's inverse)."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


@dataclass
class TopicMetadata:
    name: str
    topic_id: str
    assignment: dict[int, list[int]]  # partition -> replica broker ids, in order
    configs: dict[str, str] = field(default_factory=dict)  # overrides only, as strings

    @property
    def partitions(self) -> int:
        return len(self.assignment)

    @property
    def replication_factor(self) -> int:
        return len(self.assignment[0]) if self.assignment else 0

    def to_json(self) -> bytes:
        return json.dumps({
            "version": 1,
            "name": self.name,
            "topic_id": self.topic_id,
            "partitions": {str(p): r for p, r in sorted(self.assignment.items())},
            "configs": dict(sorted(self.configs.items())),
        }, indent=1).encode()

    @classmethod
    def from_json(cls, data: bytes) -> "TopicMetadata":
        doc = json.loads(data)
        return cls(
            name=doc["name"],
            topic_id=doc["topic_id"],
            assignment={int(p): list(r) for p, r in doc["partitions"].items()},
            configs=dict(doc.get("configs", {})),
        )


class TopicStore:
    def __init__(self, directory: str):
        self.directory = directory

    def _path(self, name: str) -> str:
        """The topic's metadata file. A name that is not a legal topic name names no stored
        topic (and never a path: `../x` must not reach another topic's file or leave the
        data dir)."""
        if validation.topic_name_problem(name) is not None:
            raise UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {name}")
        return os.path.join(self.directory, name + ".json")

    def names(self) -> list[str]:
        try:
            entries = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(e[:-5] for e in entries if e.endswith(".json"))

    def exists(self, name: str) -> bool:
        return validation.topic_name_problem(name) is None and os.path.exists(self._path(name))

    def get(self, name: str) -> TopicMetadata:
        try:
            with open(self._path(name), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise UnknownTopicOrPartitionError(
                f"This server does not host this topic-partition: {name}") from None
        try:
            return TopicMetadata.from_json(data)
        except (ValueError, KeyError, TypeError) as exc:
            raise DataDirError(f"Topic metadata file {self._path(name)} is corrupt: {exc}") from None

    def mtime_ns(self, name: str) -> int:
        try:
            return os.stat(self._path(name)).st_mtime_ns
        except (FileNotFoundError, UnknownTopicOrPartitionError):
            return -1

    def put(self, meta: TopicMetadata) -> None:
        atomic_write(inside(self.directory, os.path.basename(self._path(meta.name))), meta.to_json())

    def put_or_undo(self, meta: TopicMetadata, undo) -> None:
        """put(), or, when the file system refuses it, undo() and KafkaStorageError."""
        try:
            self.put(meta)
        except OSError as exc:
            undo()
            if not exc.filename:
                exc = OSError(exc.errno, exc.strerror, self._path(meta.name))
            raise KafkaStorageError.from_os_error(exc) from None

    def remove(self, name: str) -> None:
        os.unlink(inside(self.directory, os.path.basename(self._path(name))))
        fsync_dir(self.directory)


def discover_partition_dirs(data_dir: str) -> list[TopicMetadata]:
    """Topics found as Kafka lays them out, for a log directory pk has no metadata for (a copy
    of a Kafka broker's log dir): each `<topic>-<partition>/` directory holding a
    `partition.metadata` gives a partition and its topic id; replicas are this node (0);
    configs are left to the defaults (Kafka keeps them in its KRaft metadata log). Kafka's own
    `__cluster_metadata` log and directories being deleted (`.<uuid>-delete`), moved
    (`-future`) or stray are not topics."""
    from .log import read_partition_topic_id

    found: dict[str, TopicMetadata] = {}
    try:
        entries = sorted(os.listdir(data_dir))
    except OSError:
        return []
    for entry in entries:
        name, dash, number = entry.rpartition("-")
        if not dash or not name or not number.isdigit() or name == "__cluster_metadata":
            continue
        directory = os.path.join(data_dir, entry)
        topic_id = read_partition_topic_id(directory) if os.path.isdir(directory) else None
        if topic_id is None:
            continue
        if validation.topic_name_problem(name) is not None:
            continue
        meta = found.setdefault(name, TopicMetadata(name=name, topic_id=topic_id, assignment={}))
        if meta.topic_id == topic_id:
            meta.assignment[int(number)] = [0]
    configs = kraft_topic_configs(os.path.join(data_dir, "__cluster_metadata-0"))
    for meta in found.values():
        # partitions are numbered 0..n-1: a missing directory is an empty partition
        meta.assignment = {p: [0] for p in range(max(meta.assignment) + 1)}
        meta.configs = dict(configs.get(meta.name, {}))
    return list(found.values())


def kraft_topic_configs(metadata_dir: str) -> dict[str, dict[str, str]]:
    """Topic config overrides replayed from a KRaft metadata log (`__cluster_metadata-0`): its
    latest snapshot (`.checkpoint`), then its segments. Only what pk uses is decoded: each
    record value is a frame (uvarint frame version 1, api key, record version) around a
    flexible message; ConfigRecord (api key 4) sets (or, with a null value, removes) a
    resource's config, type 2 being a topic; RemoveTopicRecord (9) drops the topic's configs
    (by id, known from TopicRecord, 2). Anything unreadable is skipped: no configs, not an error."""
    from . import records

    try:
        names = sorted(os.listdir(metadata_dir))
    except OSError:
        return {}
    snapshots = [n for n in names if n.endswith(".checkpoint") and n != "bootstrap.checkpoint"]
    files = snapshots[-1:] + [n for n in names if n.endswith(".log")]
    configs: dict[str, dict[str, str]] = {}
    topic_names: dict[bytes, str] = {}
    for name in files:
        try:
            with open(os.path.join(metadata_dir, name), "rb") as f:
                data = f.read()
            for pos, header in records.iter_batches(data):
                if header.is_control:
                    continue
                for rec in records.decode_records(data, pos, header):
                    if rec.value:
                        _replay(bytes(rec.value), configs, topic_names)
        except Exception:  # noqa: BLE001 - a log pk cannot read gives no configs
            continue
    return configs


def _replay(value: bytes, configs: dict, topic_names: dict) -> None:
    from .records import varint

    pos = 0

    def uvarint() -> int:
        nonlocal pos
        n, pos = varint.decode_unsigned(value, pos)
        return n

    def compact_string() -> str | None:
        nonlocal pos
        n = uvarint() - 1
        if n < 0:
            return None
        text = value[pos:pos + n].decode("utf-8", "replace")
        pos += n
        return text

    if uvarint() != 1:  # frame version
        return
    api_key = uvarint()
    uvarint()  # record version
    if api_key == 2:  # TopicRecord: name, topic id
        name = compact_string()
        topic_names[value[pos:pos + 16]] = name
    elif api_key == 4:  # ConfigRecord: resource type, resource name, name, value
        resource_type = value[pos]
        pos += 1
        resource, key, setting = compact_string(), compact_string(), compact_string()
        if resource_type == 2 and resource is not None and key is not None:
            if setting is None:
                configs.get(resource, {}).pop(key, None)
            else:
                configs.setdefault(resource, {})[key] = setting
    elif api_key == 9:  # RemoveTopicRecord: topic id
        configs.pop(topic_names.pop(value[pos:pos + 16], None), None)

