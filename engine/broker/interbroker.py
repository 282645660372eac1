"""Requests from this broker to another one (Kafka's inter-broker NetworkClient): the
follower's fetches (replication.py) and the transaction coordinator's WriteTxnMarkers
(transactions.py) go over these connections, with pk's own codec.

`Connection` is one socket carrying one request at a time. `BrokerClients` keeps one
connection per destination broker for callers that send occasional requests (the marker
channel): it opens it on first use, serialises the requests on it, and drops it on any
connection error, so the next call reconnects to the broker's current endpoint.
"""

from __future__ import annotations

import asyncio
import struct

from ..protocol import encode_request, parse_response

CONNECT_TIMEOUT_S = 5
# What a broken connection raises (the caller retries later).
CONNECTION_ERRORS = (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError)


class Connection:
    """One socket to another broker, requests one at a time with pk's codec."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str):
        self.reader, self.writer, self.client_id = reader, writer, client_id
        self.correlation = 0

    @classmethod
    async def open(cls, host: str, port: int, client_id: str) -> "Connection":
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        return cls(reader, writer, client_id)

    async def call(self, api_key: int, version: int, body: dict, timeout: float) -> dict:
        self.correlation += 1
        self.writer.write(encode_request(api_key, version, self.correlation, body, client_id=self.client_id))
        await self.writer.drain()
        size = struct.unpack(">i", await asyncio.wait_for(self.reader.readexactly(4), timeout))[0]
        frame = await asyncio.wait_for(self.reader.readexactly(size), timeout)
        correlation, answer = parse_response(frame, api_key, version)
        if correlation != self.correlation:
            raise ConnectionError(f"correlation id {correlation}, expected {self.correlation}")
        return answer

    def close(self) -> None:
        self.writer.close()


class BrokerClients:
    """One lazily opened connection per destination broker, shared by this broker's callers."""

    def __init__(self, client_id: str):
        self.client_id = client_id
        self._connections: dict[int, tuple[tuple[str, int], Connection]] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def call(self, broker_id: int, endpoint: tuple[str, int], api_key: int, version: int, body: dict,
                   timeout: float) -> dict:
        """Send one request to `broker_id` at `endpoint`; raises one of CONNECTION_ERRORS when
        the broker cannot be reached or the connection breaks (it is dropped then)."""
        lock = self._locks.setdefault(broker_id, asyncio.Lock())
        async with lock:
            known = self._connections.get(broker_id)
            if known is not None and known[0] != endpoint:  # the broker came back elsewhere
                known[1].close()
                known = None
            if known is None:
                known = self._connections[broker_id] = (endpoint, await Connection.open(*endpoint, self.client_id))
            try:
                return await known[1].call(api_key, version, body, timeout)
            except BaseException:
                self._connections.pop(broker_id, None)
                known[1].close()
                raise

    def close(self) -> None:
        for _, conn in self._connections.values():
            conn.close()
        self._connections.clear()
