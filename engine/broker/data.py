"""Handlers of the data path: ApiVersions, Metadata (more to come: Produce, Fetch, ListOffsets,
InitProducerId)."""

from __future__ import annotations

from .. import topic_names
from ..errors import KafkaError, UnknownTopicOrPartitionError
from ..protocol import ApiKey, api_versions_body
from ..protocol import errors as E


class DataHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        broker.register(ApiKey.API_VERSIONS, self.api_versions)
        broker.register(ApiKey.METADATA, self.metadata)

    async def api_versions(self, request) -> dict:
        return api_versions_body(self.broker.advertised_versions())

    def _broker_entry(self) -> dict:
        return {"node_id": self.broker.node_id, "host": self.broker.host, "port": self.broker.port,
                "rack": None}

    def topic_metadata(self, name: str) -> dict:
        try:
            meta = self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            return {"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "is_internal": False,
                    "partitions": []}
        node = self.broker.node_id
        return {
            "error_code": E.NONE, "name": name, "is_internal": topic_names.is_internal(name),
            "partitions": [{"error_code": E.NONE, "partition_index": p, "leader_id": node,
                            "replica_nodes": [node], "isr_nodes": [node]}
                           for p in sorted(meta.assignment)],
        }

    async def metadata(self, request) -> dict:
        body = request.body
        requested = body["topics"]
        if requested is None or (request.api_version == 0 and not requested):
            names = self.engine.list_topics()  # all topics (v0: an empty list means all)
        else:
            names = [t["name"] for t in requested]
            if body["allow_auto_topic_creation"] and self.broker.config.get_bool("auto.create.topics.enable"):
                for name in names:
                    self._auto_create(name)
        return {
            "throttle_time_ms": 0,
            "brokers": [self._broker_entry()],
            "cluster_id": self.engine.cluster_id,
            "controller_id": self.broker.node_id,
            "topics": [self.topic_metadata(n) for n in names],
        }

    def _auto_create(self, name: str) -> None:
        try:
            self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            try:
                self.engine.create_topic(name)
            except KafkaError:
                pass  # invalid name, or created meanwhile: the metadata answer tells
