"""pk's JSON output (`--output json`, `--input json`): one encoding of bytes and one way of
writing a document, shared by every tool that offers it, so that `jq` sees the same shapes
everywhere and `pk-console-producer --input json` reads back what the consumer wrote."""

from __future__ import annotations

import base64
import json


def bytes_field(data: bytes | None):
    """A key, value or header value: None stays null, valid UTF-8 is a string, anything else
    is {"base64": "..."} so that binary data survives a round trip exactly."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def field_bytes(value) -> bytes | None:
    """The inverse of bytes_field; a ValueError names what is wrong with `value`."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and set(value) == {"base64"} and isinstance(value["base64"], str):
        try:
            return base64.b64decode(value["base64"], validate=True)
        except ValueError:
            raise ValueError(f"invalid base64: {value['base64']!r}") from None
    raise ValueError(f"expected a string, {{\"base64\": ...}} or null, not {json.dumps(value)}")


def dumps(document) -> str:
    """One document on one line: keys in the order the tool built them (each tool's schema
    fixes that order), UTF-8 as is, no spaces."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
