"""A bare Kafka protocol client over pk's own codec, for the admin requests librdkafka does
not expose: per-broker ApiVersions (kafka-broker-api-versions), DescribeConfigs with every
synonym (librdkafka keeps one per name), BROKER_LOGGER and CLIENT_METRICS resources, and
the client-quota APIs (kafka-configs).

One connection per broker, one request at a time, PLAINTEXT only (a --command-config asking
for TLS or SASL is refused with one line). `WireClient(bootstrap, timeout_s)` connects to the
first bootstrap address that answers; `call(api_key, version, body, node=None)` sends to that
broker or to a node of the cluster's metadata.
"""

from __future__ import annotations

import socket
import struct
import time

from pk.engine import protocol as kp

from ..client_config import bootstrap_hosts
from ..errors import ClientConfigError
from pk.engine.version import PK_VERSION

from .kafka_admin import known_error, timeout_error

CLIENT_ID = "pk-admin"
METADATA_VERSION = 12


class Broker:
    """One node of the cluster: `host:port (id: 0 rack: null isFenced: false)` as Kafka's
    Node.toString() prints it."""

    def __init__(self, node_id: int, host: str, port: int, rack: str | None, fenced: bool = False):
        self.node_id, self.host, self.port, self.rack, self.fenced = node_id, host, port, rack, fenced

    def __str__(self) -> str:
        return (f"{self.host}:{self.port} (id: {self.node_id} rack: {self.rack if self.rack is not None else 'null'}"
                f" isFenced: {'true' if self.fenced else 'false'})")


class _Connection:
    """One broker connection; `versions` is what its ApiVersions answer advertised."""

    def __init__(self, host: str, port: int, timeout_s: float):
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.corr = 0
        try:
            # v4+: v3 leaves out features whose lowest supported level is 0 (KAFKA-17011)
            answer = self.call(kp.ApiKey.API_VERSIONS, 4, {"client_software_name": "pk",
                                                           "client_software_version": PK_VERSION})
        except Exception:
            self.sock.close()
            raise
        self.versions = {a["api_key"]: (a["min_version"], a["max_version"]) for a in answer["api_keys"]}
        self.api_versions_answer = answer  # features (KIP-584) too

    def call(self, api_key: int, version: int, body: dict) -> dict:
        self.corr += 1
        self.sock.sendall(kp.encode_request(api_key, version, self.corr, body, client_id=CLIENT_ID))
        size = struct.unpack(">i", self._read(4))[0]
        corr, answer = kp.parse_response(self._read(size), api_key, version)
        if corr != self.corr:
            raise ConnectionError(f"correlation id {corr} for request {self.corr}")
        return answer

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return bytes(buf)

    def close(self) -> None:
        self.sock.close()


def check_plaintext(command_config: dict[str, str]) -> None:
    protocol = command_config.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol != "PLAINTEXT":
        raise ClientConfigError(f"pk: this tool speaks PLAINTEXT only; security.protocol={protocol} is not supported yet")


class WireClient:
    def __init__(self, bootstrap: str, timeout_s: float = 30.0, call_name: str = "describeCluster"):
        self.timeout_s = timeout_s
        self._connections: dict[int | None, _Connection] = {}
        deadline = time.monotonic() + timeout_s
        while True:
            for host, port in bootstrap_hosts(bootstrap):
                try:
                    self._connections[None] = _Connection(host, port, max(deadline - time.monotonic(), 0.5))
                    break
                except OSError:
                    continue
            if None in self._connections:
                break
            if time.monotonic() >= deadline:
                raise timeout_error(call_name)
            time.sleep(0.2)
        self._brokers: list[Broker] | None = None

    def brokers(self) -> list[Broker]:
        """The cluster's brokers, from a Metadata request to the bootstrap broker."""
        if self._brokers is None:
            md = self.call(kp.ApiKey.METADATA, METADATA_VERSION,
                           {"topics": [], "allow_auto_topic_creation": False,
                            "include_topic_authorized_operations": False})
            self._brokers = [Broker(b["node_id"], b["host"], b["port"], b["rack"]) for b in md["brokers"]]
        return self._brokers

    def call(self, api_key: int, version: int, body: dict, node: int | None = None) -> dict:
        """Send at `version`, or at the broker's highest below it; an API the broker does not
        advertise fails as Kafka's admin client fails it."""
        conn = self._connection(node)
        lo, hi = conn.versions.get(int(api_key), (None, None))
        if lo is None or lo > version:
            raise known_error(35, f"The node does not support {kp.ApiKey(int(api_key)).name}")
        return conn.call(int(api_key), min(version, hi), body)

    def api_versions(self, node: int) -> dict[int, tuple[int, int]]:
        return self._connection(node).versions

    def api_versions_answer(self, node: int | None = None) -> dict:
        """The whole ApiVersions answer of a broker (the bootstrap broker when node is None)."""
        return self._connection(node).api_versions_answer

    def _connection(self, node: int | None) -> _Connection:
        if node not in self._connections:
            broker = next((b for b in self.brokers() if b.node_id == node), None)
            if broker is None:
                raise ConnectionError(f"no broker with id {node}")
            self._connections[node] = _Connection(broker.host, broker.port, self.timeout_s)
        return self._connections[node]

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
