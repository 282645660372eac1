"""Topic ids on the wire: the engine keeps each topic's id in Kafka's text form (22 chars of
URL-safe base64, as in partition.metadata); requests and responses carry it as a UUID.
TopicIds maps ids back to names for the APIs that name topics by id (Metadata v10+,
Fetch v13+, Produce v13)."""

from __future__ import annotations

import base64
import uuid

from ..errors import UnknownTopicOrPartitionError

ZERO = uuid.UUID(int=0)


def to_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


class TopicIds:
    def __init__(self, engine):
        self.engine = engine
        self._names: dict[uuid.UUID, str] = {}
        self._ids: dict[str, uuid.UUID] = {}  # text form -> UUID, to skip the base64

    def uuid_of(self, text: str) -> uuid.UUID:
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = to_uuid(text)
        return found

    def cached_name(self, topic_id: uuid.UUID) -> str | None:
        """The name last seen for this id, unchecked (the hot path checks it against the
        partition's own topic id)."""
        return self._names.get(topic_id)

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with this id, or None. A cached answer is checked against the
        topic's metadata, which may have been deleted or recreated since."""
        name = self._names.get(topic_id)
        if name is not None and self._current_id(name) == topic_id:
            return name
        self._names = {}
        for topic in self.engine.list_topics():
            found = self._current_id(topic)
            if found is not None:
                self._names[found] = topic
        return self._names.get(topic_id)

    def _current_id(self, name: str) -> uuid.UUID | None:
        try:
            return self.uuid_of(self.engine.topic(name).topic_id)
        except UnknownTopicOrPartitionError:
            return None
