"""Kafka wire-protocol codec for pk's broker: pure functions on bytes.

No sockets, no asyncio, no storage: of the engine it uses only records/varint.py (the one varint
implementation) and records/file_region.py (records a Fetch answer leaves in their file).
Everything a broker handler needs::

    from pk.engine import protocol as kp
    from pk.engine.protocol import errors as E

    # --- reading a request ------------------------------------------------
    size = kp.read_frame_size(await reader.readexactly(4))   # MalformedFrame if absurd
    frame = await reader.readexactly(size)
    try:
        req = kp.parse_request(frame)          # -> kp.Request
    except kp.ProtocolError as e:              # UnknownApiKey / UnsupportedVersion / MalformedFrame
        log(e, e.api_key, e.api_version, e.correlation_id); close(); return

    if req.unsupported_version:                # ApiVersions of a version we do not serve
        writer.write(kp.api_versions_fallback(req.correlation_id))   # v0 body, error 35
        continue

    # --- handling it ------------------------------------------------------
    # req.api_key, req.api_version, req.correlation_id, req.client_id ("" if null), req.name
    # req.body: a plain dict with Kafka's JSON field names in snake_case, e.g.
    #   Produce: req.body["acks"], req.body["topic_data"][i]["partition_data"][j]["records"]
    #   Fetch:   req.body["topics"][i]["partitions"][j]["fetch_offset"]
    # Every field of the schema is present: fields that do not exist in this
    # version hold their default (e.g. Fetch v4 gives session_epoch == -1).
    # Produce ``records`` are zero-copy memoryview slices of ``frame`` (or None):
    # bytes(view) if a copy is needed; do not recycle ``frame`` while they live.

    # --- answering ----------------------------------------------------------
    body = {"throttle_time_ms": 0, "responses": [...]}   # missing keys take defaults
    writer.write(req.response(body))
    # same as kp.encode_response(req.api_key, req.api_version, req.correlation_id, body)
    # -> bytes: int32 length + response header (v0, or v1 when flexible; always v0
    #    for ApiVersions) + body. Fields of other versions in ``body`` are ignored;
    #    unknown keys, None in non-nullable fields, wrong types -> EncodeError.
    # Fetch ``records`` may be bytes/bytearray/memoryview or a list of them
    # (written back to back; copied once, into the returned frame).
    # Produce with acks == 0: send nothing.

    kp.api_versions_body()     # the ApiVersions response body advertising SUPPORTED_VERSIONS

Module map:

- ``messages``: ``SUPPORTED_VERSIONS`` (the advertised profile: api key ->
  (min, max)), ``API_NAMES``, ``ApiKey`` (IntEnum), ``REQUESTS``/``RESPONSES``
  (api key -> :class:`schema.Message`), one schema per API covering all its
  served versions (read that file for the field names of each body).
- ``frames``: ``parse_request``, ``encode_response``, ``api_versions_fallback``,
  ``api_versions_body``, ``read_frame_size``, ``Request``; client-side mirrors
  ``encode_request`` and ``parse_response`` (tests, tools).
- ``errors``: Kafka error-code constants (``E.NONE``, ``E.UNKNOWN_TOPIC_OR_PARTITION``,
  ...), ``error_name(code)``, and the exception classes.
- ``schema``: the declarative ``Field``/``Struct``/``Message`` system;
  ``Message.decode(data, version)``/``encode(body, version)`` work on bodies alone.
- ``types``: primitive readers/writers (ints, varints, strings, bytes, records,
  arrays, compact forms, tagged-field sections).

Served versions: ``SUPPORTED_VERSIONS`` in messages.py (docs/protocol.md has the table);
the codecs cover every version Kafka 4.4 defines, flexible ones included.
"""

from .errors import (
    DecodeError, EncodeError, MalformedFrame, ProtocolError, UnknownApiKey, UnsupportedVersion,
    error_name,
)
from .frames import (
    MAX_FRAME_SIZE, Request, api_versions_body, api_versions_fallback, encode_request,
    encode_response, parse_request, parse_response, read_frame_size,
)
from .messages import API_NAMES, REQUESTS, RESPONSES, SUPPORTED_VERSIONS, ApiKey
from .types import FileRegion

__all__ = [
    "ProtocolError", "DecodeError", "MalformedFrame", "UnknownApiKey", "UnsupportedVersion",
    "EncodeError", "error_name",
    "Request", "parse_request", "encode_response", "api_versions_fallback", "api_versions_body",
    "read_frame_size", "encode_request", "parse_response", "MAX_FRAME_SIZE",
    "SUPPORTED_VERSIONS", "API_NAMES", "ApiKey", "REQUESTS", "RESPONSES", "FileRegion",
]
