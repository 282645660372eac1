"""Topic ids on the wire: the engine keeps each topic's id in Kafka's text form (22 characters of
URL-safe base64); requests and answers carry it as a UUID (the zero UUID meaning "none").
Requests that name topics by id (OffsetCommit and OffsetFetch v10, ConsumerGroupHeartbeat)
are resolved here to names, and answers given ids back."""

from __future__ import annotations

import base64
import uuid

from ..errors import KafkaError

ZERO_UUID = uuid.UUID(int=0)


def uuid_of(text: str) -> uuid.UUID:
    """The UUID of a topic id in Kafka's text form."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


class TopicIds:
    def __init__(self, engine):
        self.engine = engine

    def ids(self) -> dict[str, uuid.UUID]:
        """{topic name: topic id} of every topic."""
        found = {}
        for name in self.engine.list_topics():
            try:
                found[name] = uuid_of(self.engine.topic(name).topic_id)
            except (KafkaError, ValueError):  # deleted meanwhile, or an id pk cannot read
                continue
        return found

    def names(self) -> dict[uuid.UUID, str]:
        """{topic id: topic name} of every topic."""
        return {tid: name for name, tid in self.ids().items()}

    def id_of(self, name: str) -> uuid.UUID:
        try:
            return uuid_of(self.engine.topic(name).topic_id)
        except (KafkaError, ValueError):
            return ZERO_UUID

    def name_topics(self, topics: list[dict], by_id: bool) -> list[dict]:
        """The request's topics with "name" filled in from "topic_id" when the version names
        topics by id (None: no such topic), and "topic_id" filled in from the name otherwise."""
        if not by_id:
            return [{**t, "topic_id": ZERO_UUID} for t in topics]
        names = self.names()
        return [{**t, "name": names.get(t["topic_id"])} for t in topics]
