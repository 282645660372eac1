"""pk-server's network side: an asyncio server speaking the Kafka wire protocol.

One asyncio server per listener (`listeners`), TLS-wrapped for SSL and SASL_SSL listeners
(broker/tls.py); on SASL listeners each connection authenticates first (broker/sasl.py). Every
request carries the listener it came in on and its sender's principal (TLS client certificate
or SASL identity; User:ANONYMOUS otherwise).

One task per connection; each connection's requests are read, handled and answered strictly
one after another (Kafka's model: responses go back in request order). A malformed,
truncated or oversized frame, or an unknown API, closes that connection with a log line;
the server and every other connection carry on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import ssl
import struct
from dataclasses import dataclass

from . import protocol as kp
from .broker import Broker
from .broker.config import Listener
from .broker.sasl import PASS, AuthenticationFailed, SaslAuthenticator, SaslSettings
from .broker.tls import ANONYMOUS, tls_principal

log = logging.getLogger("pk.server")
_SIZE = struct.Struct(">i")
# How long a TLS client may take over its handshake (Kafka has no such bound; a stalled
# handshake would otherwise hold a connection forever).
TLS_HANDSHAKE_TIMEOUT = 30.0
# Kafka's sasl.server.max.receive.size: the largest bare SASL token accepted.
SASL_MAX_RECEIVE_SIZE = 524288
# How much of a large response is handed to the transport at a time (the most it buffers).
WRITE_CHUNK = 1 << 20


@dataclass
class Endpoint:
    """A listener as the server serves it: its TLS context (SSL, SASL_SSL) and SASL settings."""
    listener: Listener
    tls: ssl.SSLContext | None = None
    sasl: SaslSettings | None = None
    port: int = 0  # bound port (the listener's, or the one the OS chose for port 0)


class Server:
    def __init__(self, broker: Broker, endpoints: list[Endpoint], max_request_size: int = kp.MAX_FRAME_SIZE,
                 tick_interval: float = 1.0):
        self.broker = broker
        self.endpoints = endpoints
        self.max_request_size = max_request_size
        self.tick_interval = tick_interval
        self._servers: list[asyncio.base_events.Server] = []
        self._connections: set[asyncio.Task] = set()
        self._stopping = asyncio.Event()

    @property
    def port(self) -> int:
        """The first listener's bound port."""
        return self.endpoints[0].port

    async def start(self) -> None:
        asyncio.get_running_loop().set_exception_handler(_quiet_tls_errors)
        for endpoint in self.endpoints:
            listener = endpoint.listener
            server = await asyncio.start_server(
                functools.partial(self._serve_connection, endpoint), listener.host or None, listener.port,
                reuse_address=True, limit=1 << 20, ssl=endpoint.tls,
                ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT if endpoint.tls else None)
            self._servers.append(server)
            endpoint.port = server.sockets[0].getsockname()[1]

    async def run(self) -> None:
        """Serve until stop() (SIGTERM/SIGINT), then shut down cleanly."""
        if not self._servers:
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
            await self.broker.controlled_shutdown()  # still serving: followers fetch, ticks run
        finally:
            ticker.cancel()
            await self.stop()

    def request_stop(self) -> None:
        self._stopping.set()

    async def stop(self) -> None:
        for server in self._servers:
            server.close()
        for server in self._servers:
            await server.wait_closed()
        self._servers = []
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

    async def _serve_connection(self, endpoint: Endpoint, reader: asyncio.StreamReader,
                                writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        client_host = "/" + str(peer[0]) if isinstance(peer, tuple) and peer else ""
        listener = endpoint.listener
        principal = tls_principal(writer.get_extra_info("ssl_object")) if endpoint.tls else ANONYMOUS
        auth = (SaslAuthenticator(endpoint.sasl, self.broker.scram_credentials, str(peer),
                                  self.broker.delegation_tokens)
                if endpoint.sasl else None)
        try:
            while True:
                try:
                    prefix = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                    return  # the client went away
                try:
                    if auth is not None and auth.raw_tokens:
                        # After a v0 SaslHandshake: a bare SASL token (no Kafka header), answered bare.
                        size = _SIZE.unpack(prefix)[0]
                        if not 0 <= size <= SASL_MAX_RECEIVE_SIZE:
                            log.warning("Closing connection from %s: invalid SASL token size %d", peer, size)
                            return
                        try:
                            reply = auth.raw_token(await reader.readexactly(size))
                        except AuthenticationFailed as exc:
                            log.info("Failed authentication with %s (%s)", peer, exc)
                            return
                        writer.write(_SIZE.pack(len(reply)) + reply)
                        await writer.drain()
                        continue
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
                request.listener_name = listener.name
                request.security_protocol = listener.security_protocol
                request.principal = principal
                if request.unsupported_version:
                    writer.write(kp.api_versions_fallback(request.correlation_id))
                    await writer.drain()
                    continue
                if auth is not None:
                    if auth.needs(request.api_key):
                        try:
                            body, close = auth.handle(request)
                        except Exception:  # an authenticator bug closes this connection only
                            log.exception("Error authenticating %s from %s; closing the connection",
                                          request.name, peer)
                            return
                        if body is not PASS:
                            if body is not None:
                                writer.write(request.response(body))
                                await writer.drain()
                            if close:
                                return
                            continue
                    request.principal = auth.principal or ANONYMOUS
                    request.token_authenticated = auth.token_authenticated
                try:
                    body = await self.broker.handle(request)
                    response = request.response(body, pieces=True) if body is not None else None
                except LookupError as exc:
                    log.warning("Closing connection from %s: %s", peer, exc)
                    return
                except Exception:
                    # A handler bug must not take the server down; Kafka closes the
                    # connection when it cannot answer.
                    log.exception("Error handling %s from %s; closing the connection", request.name, peer)
                    return
                if response is not None:
                    del body  # the answer's records live on in `response` only, until written
                    await _write_pieces(writer, response)
                    del response
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()


async def _write_pieces(writer: asyncio.StreamWriter, pieces: list) -> None:
    """Write an encoded response a megabyte at a time, waiting for each to drain: the
    transport would otherwise copy what the socket did not take at once into its own buffer
    (a whole Fetch answer, tens of megabytes, per slow reader). Records left in their segment
    (FileRegion) go with sendfile, as Kafka's FileRecords.writeTo does; on a TLS connection
    asyncio reads and encrypts them a block at a time instead."""
    try:
        for piece in pieces:
            if type(piece) is kp.FileRegion:
                await writer.drain()
                sent = await asyncio.get_running_loop().sendfile(writer.transport, piece.file, piece.offset,
                                                                 piece.count)
                if sent != piece.count:  # the segment was cut meanwhile: the frame cannot be finished
                    log.warning("Closing connection from %s: a segment shrank while sent (%d of %d bytes)",
                                writer.get_extra_info("peername"), sent, piece.count)
                    raise ConnectionError("segment shrank while sent")
                continue
            if len(piece) <= WRITE_CHUNK:
                writer.write(piece)
                continue
            view = memoryview(piece)
            for start in range(0, len(view), WRITE_CHUNK):
                writer.write(view[start:start + WRITE_CHUNK])
                await writer.drain()
        await writer.drain()
    finally:
        for piece in pieces:
            if type(piece) is kp.FileRegion:
                piece.close()


def _quiet_tls_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """A client failing its TLS handshake (no or an untrusted certificate, plaintext sent to a TLS
    port) is the client's problem: one log line, not asyncio's traceback."""
    exc = context.get("exception")
    if isinstance(exc, (ssl.SSLError, ConnectionError, TimeoutError)):
        peer = getattr(context.get("transport"), "get_extra_info", lambda _: None)("peername")
        log.info("Failed TLS handshake with %s: %s", peer, getattr(exc, "reason", None) or exc)
        return
    loop.default_exception_handler(context)
