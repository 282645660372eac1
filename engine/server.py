"""pk-server's network side: an asyncio server speaking the Kafka wire protocol.

One task per connection; each connection's requests are read, handled and answered strictly
one after another (Kafka's model: responses go back in request order). A malformed,
truncated or oversized frame, or an unknown API, closes that connection with a log line;
the server and every other connection carry on.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from . import protocol as kp
from .broker import Broker

log = logging.getLogger("pk.server")


class Server:
    def __init__(self, broker: Broker, host: str, port: int, max_request_size: int = kp.MAX_FRAME_SIZE,
                 tick_interval: float = 1.0):
        self.broker = broker
        self.host = host
        self.port = port
        self.max_request_size = max_request_size
        self.tick_interval = tick_interval
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve_connection, self.host, self.port,
                                                  reuse_address=True, limit=1 << 20)
        sock = self._server.sockets[0].getsockname()
        self.port = sock[1]

    async def run(self) -> None:
        """Serve until stop() (SIGTERM/SIGINT), then shut down cleanly."""
        if self._server is None:
            await self.start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self._stopping.set)
            except (NotImplementedError, RuntimeError):
                pass
        ticker = asyncio.create_task(self._ticks())
        try:
            await self._stopping.wait()
        finally:
            ticker.cancel()
            await self.stop()

    def request_stop(self) -> None:
        self._stopping.set()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        self.broker.close()  # flushes logs and writes the recovery checkpoints

    async def _ticks(self) -> None:
        while True:
            await asyncio.sleep(self.tick_interval)
            try:
                await self.broker.tick()
            except Exception:  # upkeep must never take the server down
                log.exception("Error in periodic broker upkeep")

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        client_host = "/" + str(peer[0]) if isinstance(peer, tuple) and peer else ""
        try:
            while True:
                try:
                    prefix = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the client went away
                try:
                    size = kp.read_frame_size(prefix, self.max_request_size)
                    frame = await reader.readexactly(size)
                    request = kp.parse_request(frame)
                except asyncio.IncompleteReadError:
                    log.warning("Closing connection from %s: truncated request frame", peer)
                    return
                except kp.ProtocolError as exc:
                    log.warning("Closing connection from %s: %s", peer, exc)
                    return
                request.client_host = client_host
                if request.unsupported_version:
                    writer.write(kp.api_versions_fallback(request.correlation_id))
                    await writer.drain()
                    continue
                try:
                    body = await self.broker.handle(request)
                    response = request.response(body) if body is not None else None
                except LookupError as exc:
                    log.warning("Closing connection from %s: %s", peer, exc)
                    return
                except Exception:
                    # A handler bug must not take the server down; Kafka closes the
                    # connection when it cannot answer.
                    log.exception("Error handling %s from %s; closing the connection", request.name, peer)
                    return
                if response is not None:
                    writer.write(response)
                    await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
