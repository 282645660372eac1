"""Frames, headers and the ApiVersions special cases (docs/protocol.md).

A frame on the wire is ``int32 length`` + ``length`` bytes of header and body.
``parse_request`` takes the bytes *after* the length prefix;
``encode_response`` returns the full frame *with* its prefix.

Header rules:

- request header v2 (client id + tagged fields) when the request version is
  flexible, else v1; the client id is always the old int16-length string;
- response header v1 (correlation id + tagged fields) when the response
  version is flexible, else v0, **except ApiVersions, always v0**.
"""

from __future__ import annotations

import struct

from .errors import (
    DecodeError, EncodeError, MalformedFrame, UnknownApiKey, UnsupportedVersion,
)
from .messages import API_NAMES, REQUESTS, RESPONSES, SUPPORTED_VERSIONS, ApiKey, advertised
from .types import FileRegion, read_int16, read_nullable_string, skip_tagged_fields, write_nullable_string

__all__ = [
    "Request", "parse_request", "encode_response", "api_versions_fallback", "api_versions_body",
    "read_frame_size", "encode_request", "parse_response", "MAX_FRAME_SIZE",
]

# Kafka's socket.request.max.bytes default.
MAX_FRAME_SIZE = 104857600

_I32 = struct.Struct(">i")
# A piece of an encoded response at least this large is handed to the writer as it is.
LARGE_PIECE = 1 << 16
_REQUEST_HEADER = struct.Struct(">hhi")
_API_VERSIONS = int(ApiKey.API_VERSIONS)
_UNSUPPORTED_VERSION = 35
# librdkafka's Metadata v9+ for all topics leaves its 4-byte placeholder for the topic count
# in the frame (a null compact array, then the other fields shifted): Kafka, which never
# checks for bytes after a body, reads it, and so does pk, ignoring what follows the body.
_METADATA = int(ApiKey.METADATA)
# librdkafka's AlterUserScramCredentials ends with one byte more than the body (an extra empty
# tagged-field count); Kafka reads past it, and so does pk.
_TRAILING_BYTE_ALLOWED = {_METADATA, int(ApiKey.ALTER_USER_SCRAM_CREDENTIALS)}


class Request:
    """A decoded request.

    - ``api_key``, ``api_version``, ``correlation_id``, ``client_id`` (a str; a
      null client id reads as ``""``, as in Kafka's ``RequestHeader.parse``)
    - ``body``: dict of the request's fields (see ``messages.py``); ``None``
      when ``unsupported_version`` is set.
    - ``unsupported_version``: True only for an ApiVersions request whose version
      is outside ``SUPPORTED_VERSIONS``; answer it with
      ``api_versions_fallback(req.correlation_id)`` (its body was not parsed).
    """

    __slots__ = ("api_key", "api_version", "correlation_id", "client_id", "body",
                 "unsupported_version", "client_host", "principal", "listener_name", "security_protocol",
                 "token_authenticated")

    def __init__(self, api_key: int, api_version: int, correlation_id: int,
                 client_id: str | None, body: dict | None, unsupported_version: bool = False):
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.body = body
        self.unsupported_version = unsupported_version
        self.client_host = ""  # the peer as Kafka prints it ("/127.0.0.1"), set by the server
        # Who sent it and where, set by the server from the connection: the authenticated
        # principal as Kafka writes it ("User:alice"; "User:ANONYMOUS" before or without SASL/TLS
        # client auth), and the listener it came in on. The authorizer decides from these.
        self.principal = "User:ANONYMOUS"
        self.listener_name = "PLAINTEXT"
        self.security_protocol = "PLAINTEXT"
        self.token_authenticated = False  # SASL with a delegation token (tokenauth=true)

    @property
    def name(self) -> str:
        """The API's name, e.g. ``"Produce"``."""
        return API_NAMES.get(self.api_key, f"ApiKey{self.api_key}")

    def response(self, body: dict, pieces: bool = False) -> bytes | list:
        """``encode_response`` for this request's key, version and correlation id."""
        if self.unsupported_version:
            fallback = api_versions_fallback(self.correlation_id)
            return [fallback] if pieces else fallback
        return encode_response(self.api_key, self.api_version, self.correlation_id, body, pieces)

    def __repr__(self):
        flag = " unsupported_version" if self.unsupported_version else ""
        return (f"<Request {self.name} v{self.api_version} corr={self.correlation_id} "
                f"client_id={self.client_id!r}{flag} body={self.body!r}>")


def _as_view(frame) -> memoryview:
    mv = frame if type(frame) is memoryview else memoryview(frame)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv


def read_frame_size(prefix, max_size: int = MAX_FRAME_SIZE) -> int:
    """Decode the 4-byte length prefix of a frame; MalformedFrame if negative,
    shorter than a request header (8 bytes) or above ``max_size``."""
    if len(prefix) != 4:
        raise MalformedFrame(f"frame length prefix must be 4 bytes, got {len(prefix)}")
    n = _I32.unpack(prefix)[0]
    if n < 8 or n > max_size:
        raise MalformedFrame(f"invalid frame length {n}")
    return n


def parse_request(frame) -> Request:
    """Decode one request frame (without its int32 length prefix).

    Raises :class:`UnknownApiKey`, :class:`UnsupportedVersion` (not for
    ApiVersions: that yields a Request with ``unsupported_version=True``) or
    :class:`MalformedFrame` (truncated/garbage header or body, trailing bytes).
    The ``records`` of a Produce request are zero-copy memoryview slices of
    ``frame``.
    """
    mv = _as_view(frame)
    if len(mv) < 8:
        raise MalformedFrame(f"request frame of {len(mv)} bytes is shorter than a header")
    api_key, api_version, correlation_id = _REQUEST_HEADER.unpack_from(mv, 0)
    schema = REQUESTS.get(api_key)
    if schema is None or api_key not in SUPPORTED_VERSIONS:  # unknown, or known but not served
        raise UnknownApiKey(f"unknown api key {api_key} (version {api_version})",
                            api_key=api_key, api_version=api_version,
                            correlation_id=correlation_id)
    lo, hi = SUPPORTED_VERSIONS[api_key]
    if not lo <= api_version <= hi:
        if api_key == _API_VERSIONS:
            # Do not parse the body (docs/protocol.md); the client id is best effort.
            try:
                client_id = read_nullable_string(mv, 8)[0] or ""
            except (DecodeError, struct.error):
                client_id = ""
            return Request(api_key, api_version, correlation_id, client_id, None, True)
        raise UnsupportedVersion(
            f"{API_NAMES[api_key]} v{api_version} is not supported (v{lo}-v{hi})",
            api_key=api_key, api_version=api_version, correlation_id=correlation_id)
    try:
        client_id, pos = read_nullable_string(mv, 8)
        if client_id is None:
            client_id = ""
        flexible = schema.is_flexible(api_version)
        if flexible:
            pos = skip_tagged_fields(mv, pos)
        body, pos = schema.reader(api_version, flexible)(mv, pos)
        if pos != len(mv) and not (api_key in _TRAILING_BYTE_ALLOWED and flexible):
            raise DecodeError(f"{len(mv) - pos} trailing bytes after the body")
    except DecodeError as e:
        raise MalformedFrame(f"{schema.name} v{api_version}: {e}", api_key=api_key,
                             api_version=api_version, correlation_id=correlation_id) from None
    except (struct.error, IndexError) as e:  # truncation inside the header fields
        raise MalformedFrame(f"{schema.name} v{api_version}: truncated header "
                             f"({type(e).__name__}: {e})", api_key=api_key,
                             api_version=api_version, correlation_id=correlation_id) from None
    return Request(api_key, api_version, correlation_id, client_id, body)


def _frame(out: list) -> bytes:
    # out[0] is a placeholder for the length prefix; every other piece is a
    # bytes-like object of byte format, so len() is its size in bytes.
    out[0] = _I32.pack(sum(map(len, out)))
    return b"".join(out)


def _frame_pieces(out: list) -> list:
    # _frame without its join: the small pieces joined, each large one (a Fetch answer's
    # records) kept as it is, so that a large answer is never copied whole.
    out[0] = _I32.pack(sum(map(len, out)))
    pieces, run = [], []
    for piece in out:
        if len(piece) < LARGE_PIECE and type(piece) is not FileRegion:
            run.append(piece)
            continue
        if run:
            pieces.append(b"".join(run))
            run = []
        pieces.append(piece)
    if run:
        pieces.append(b"".join(run))
    return pieces


def encode_response(api_key: int, api_version: int, correlation_id: int, body: dict,
                    pieces: bool = False) -> bytes | list:
    """Encode a response frame: int32 length, response header, body.

    ``body`` is a dict of the response's fields (missing ones take their
    defaults). Response header v1 for flexible versions, v0 otherwise, and
    always v0 for ApiVersions. Raises :class:`EncodeError` for a bad body,
    :class:`UnknownApiKey`/:class:`UnsupportedVersion` for a bad key/version.
    ``records`` values are written without being copied until the final join;
    with ``pieces``, the frame comes as a list of bytes-like pieces to write in
    order, large ``records`` values not copied at all, a ``FileRegion`` left for
    the writer to send from its file (only then may ``records`` be one).
    """
    schema = RESPONSES.get(api_key)
    if schema is None or api_key not in SUPPORTED_VERSIONS:
        raise UnknownApiKey(f"unknown api key {api_key}", api_key=api_key,
                            api_version=api_version, correlation_id=correlation_id)
    lo, hi = SUPPORTED_VERSIONS[api_key]
    if not lo <= api_version <= hi:  # the broker answers only what it advertised
        raise UnsupportedVersion(f"{API_NAMES[api_key]} v{api_version} is not served (v{lo}-v{hi})",
                                 api_key=api_key, api_version=api_version, correlation_id=correlation_id)
    flexible = schema.is_flexible(api_version)
    try:
        out = [b"", _I32.pack(correlation_id)]
    except struct.error as e:
        raise EncodeError(f"invalid correlation id {correlation_id!r}: {e}") from None
    if flexible and api_key != _API_VERSIONS:
        out.append(b"\x00")
    try:
        schema.writer(api_version, flexible)(out, body)
    except EncodeError as e:
        e.api_key, e.api_version, e.correlation_id = api_key, api_version, correlation_id
        e.args = (f"v{api_version} {e.args[0]}",)
        raise
    return _frame_pieces(out) if pieces else _frame(out)


def api_versions_body(versions: dict[int, tuple[int, int]] | None = None,
                      error_code: int = 0) -> dict:
    """The ApiVersions response body advertising ``versions`` (default: SUPPORTED_VERSIONS)."""
    versions = advertised(SUPPORTED_VERSIONS if versions is None else versions)
    return {
        "error_code": error_code,
        "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi}
                     for k, (lo, hi) in versions.items()],
        "throttle_time_ms": 0,
    }


def api_versions_fallback(correlation_id: int,
                          versions: dict[int, tuple[int, int]] | None = None) -> bytes:
    """The reply to an ApiVersions request of an unsupported version (docs/protocol.md):
    response header v0 and a v0 body: error 35 (UNSUPPORTED_VERSION), then every
    advertised (key, min, max) with an int32 count, no throttle time. Full frame.

    The Java broker lists only its ApiVersions entry here (``ApiVersionsRequest.
    getErrorResponse``); clients only need that entry, and the whole list,
    which pk sends, worked with every client tested.
    Pass ``versions={18: (0, 3)}`` for the Java form."""
    versions = advertised(SUPPORTED_VERSIONS if versions is None else versions)
    body = struct.pack(">ihi", correlation_id, _UNSUPPORTED_VERSION, len(versions))
    body += b"".join(struct.pack(">hhh", k, lo, hi) for k, (lo, hi) in versions.items())
    return _I32.pack(len(body)) + body


# ------------------------------------------------ client side (tests, tools)

def encode_request(api_key: int, api_version: int, correlation_id: int, body: dict,
                   client_id: str | None = "pk") -> bytes:
    """Encode a request frame (with its length prefix): the client-side mirror
    of ``parse_request``, used by tests and tools."""
    schema = REQUESTS.get(api_key)
    if schema is None:
        raise UnknownApiKey(f"unknown api key {api_key}", api_key=api_key)
    schema._check_version(api_version)
    flexible = schema.is_flexible(api_version)
    try:
        out = [b"", _REQUEST_HEADER.pack(api_key, api_version, correlation_id)]
        write_nullable_string(out, client_id)
    except (struct.error, AttributeError) as e:
        raise EncodeError(f"invalid request header: {e}") from None
    if flexible:
        out.append(b"\x00")
    schema.writer(api_version, flexible)(out, body)
    return _frame(out)


def parse_response(frame, api_key: int, api_version: int) -> tuple[int, dict]:
    """Decode a response frame (without its length prefix) of a request sent at
    ``api_version``: returns (correlation_id, body). Like the clients, an
    ApiVersions response with a non-zero error code is decoded as v0."""
    schema = RESPONSES.get(api_key)
    if schema is None:
        raise UnknownApiKey(f"unknown api key {api_key}", api_key=api_key)
    mv = _as_view(frame)
    try:
        correlation_id = _I32.unpack_from(mv, 0)[0]
        pos = 4
        flexible = schema.is_flexible(api_version)
        if api_key == _API_VERSIONS:
            flexible_header = False
            if read_int16(mv, pos)[0] != 0:
                api_version, flexible = 0, False
        else:
            flexible_header = flexible
        if flexible_header:
            pos = skip_tagged_fields(mv, pos)
        body, pos = schema.read(mv, pos, api_version)
        if pos != len(mv):
            raise DecodeError(f"{len(mv) - pos} trailing bytes after the body")
    except (DecodeError, UnsupportedVersion) as e:
        raise MalformedFrame(f"{schema.name} v{api_version}: {e}", api_key=api_key,
                             api_version=api_version) from None
    except (struct.error, IndexError) as e:
        raise MalformedFrame(f"{schema.name} v{api_version}: truncated header "
                             f"({type(e).__name__}: {e})", api_key=api_key,
                             api_version=api_version) from None
    return correlation_id, body
