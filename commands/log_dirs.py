"""kafka-log-dirs (Kafka 4.4's LogDirsCommand): each broker's log directories and the size
of every partition in them, as Kafka's JSON. On the bundled engine: broker 0, whose one log
directory is the data directory; with --bootstrap-server: DescribeLogDirs to each broker
(wire.py)."""

from __future__ import annotations

import os

from pk.engine.javacompat import hashmap_order, jackson_json

from .errors import UsageError


def split_list(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def brokers_to_query(asked: list[str], cluster: list[int]) -> list[int]:
    """The brokers of --broker-list (all when empty) that exist, ascending as Java's HashSet of
    small Integers iterates; UsageError with Kafka's text for the others."""
    try:
        wanted = {int(b) for b in asked}
    except ValueError as exc:
        raise UsageError(f"For input string: \"{str(exc).rsplit(': ', 1)[-1].strip(chr(39))}\"") from None
    missing = sorted(wanted - set(cluster))
    if missing:
        raise UsageError("ERROR: The given brokers do not exist from --broker-list: "
                         f"{','.join(map(str, missing))}. Current existent brokers: "
                         f"{','.join(map(str, sorted(cluster)))}")
    return sorted(wanted or set(cluster))


def report(descriptions: dict[int, list[tuple[str, str | None, list[tuple[str, int, int, int, bool]]]]],
           topics: list[str]) -> str:
    """The JSON: broker -> [(log dir, error class or None, [(topic, partition, size, lag,
    future)])]; partitions of other topics than --topic-list's are left out."""
    brokers = []
    for broker in sorted(descriptions):
        dirs = []
        # Kafka's admin client keeps a broker's dirs in a HashMap sized for the answer's results
        by_path = {d[0]: d for d in descriptions[broker]}
        for path in hashmap_order(by_path, sized_for=len(descriptions[broker])):
            log_dir, error, replicas = by_path[path]
            kept = {(t, p): (size, lag, future) for t, p, size, lag, future in replicas if not topics or t in topics}
            partitions = [{"partition": f"{t}-{p}", "size": kept[(t, p)][0], "offsetLag": kept[(t, p)][1],
                           "isFuture": kept[(t, p)][2]} for t, p in hashmap_order(kept)]
            dirs.append({"partitions": partitions, "error": error, "logDir": log_dir})
        brokers.append({"broker": broker, "logDirs": dirs})
    return jackson_json({"brokers": brokers, "version": 1})


def run(source, broker_list: str, topic_list: str, out) -> None:
    queried = brokers_to_query(split_list(broker_list), source.brokers())
    out("Querying brokers for log directories information")
    descriptions = {b: source.log_dirs(b) for b in queried}
    out(f"Received log directory information from brokers {','.join(map(str, queried))}")
    out(report(descriptions, split_list(topic_list)))


class EngineLogDirs:
    """The bundled engine as broker 0 with one log directory."""

    def __init__(self, data_dir: str | None):
        from pk.engine.engine import Engine

        self.engine = Engine(data_dir)

    def brokers(self) -> list[int]:
        return [0]

    def log_dirs(self, broker: int):
        from pk.engine.errors import KafkaError

        replicas = []
        for topic in self.engine.list_topics():
            try:
                partitions = sorted(self.engine.topic(topic).assignment)
            except KafkaError:
                continue  # deleted meanwhile
            for p in partitions:
                try:
                    replicas.append((topic, p, self.engine.partition(topic, p).size_in_bytes(), 0, False))
                except KafkaError:
                    continue
        return [(os.path.abspath(self.engine.data_dir), None, replicas)]

    def close(self) -> None:
        self.engine.close()


class RemoteLogDirs:
    """DescribeLogDirs (all partitions) to each broker through wire.py."""

    def __init__(self, client):
        self.client = client

    def brokers(self) -> list[int]:
        return [b.node_id for b in self.client.brokers()]

    def log_dirs(self, broker: int):
        from pk.engine import protocol as kp

        from .backends.kafka_admin import known_error

        answer = self.client.call(kp.ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": None}, broker)
        out = []
        for r in answer["results"]:
            error = known_error(r["error_code"]).java_class if r["error_code"] else None
            replicas = [(t["name"], p["partition_index"], p["partition_size"], p["offset_lag"], p["is_future_key"])
                        for t in r["topics"] for p in t["partitions"]]
            out.append((r["log_dir"], error, replicas))
        return out

    def close(self) -> None:
        self.client.close()
