"""Reading JSON as Kafka's tools read it (server-common's Json and DecodeJson over Jackson):
the same acceptance (trailing content after the first value is ignored, an empty text is
Jackson's missing node, while a text of no characters at all is refused) and the same error texts, which the tools print after "Error: "."""

from __future__ import annotations

import json
import re



class JsonError(Exception):
    """A JSON text or value Kafka's decoder refuses; str() is Jackson's/DecodeJson's message."""


class _Missing:
    """Jackson's MissingNode: what an empty (or blank) text parses to; it prints as nothing."""


MISSING = _Missing()
_BARE_WORD = re.compile(r"[^\s\[\]{}:,\"]+")


def node_text(value) -> str:
    """A value as Jackson's JsonNode.toString() writes it (compact JSON)."""
    if value is MISSING:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse(text: str):
    """Json.tryParseFull: the first JSON value of `text`, or JsonError with Jackson's first line."""
    if not text:
        raise JsonError("The input string shouldn't be empty")
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return MISSING
    try:
        value, _end = json.JSONDecoder().raw_decode(stripped)
    except ValueError as exc:
        raise JsonError(_jackson_message(stripped, exc)) from None
    return value


def parse_or_none(text: str):
    """Json.parseFull: None where tryParseFull would fail."""
    try:
        return parse(text)
    except JsonError:
        return None


def _jackson_message(text: str, exc: ValueError) -> str:
    """Jackson's text for the usual mistakes: a bare word where a value starts, a text cut short;
    other malformed texts get the shape of Jackson's unexpected-character message."""
    word = _BARE_WORD.match(text)
    if text[0].isalpha() and word:
        return (f"Unrecognized token '{word[0]}': was expecting (JSON String, Number, Array, Object or token "
                f"'null', 'true' or 'false')")
    position = getattr(exc, "pos", len(text))
    if position >= len(text.rstrip()):
        opened = _innermost_open(text)
        if opened is not None:
            kind, line, column = opened
            return (f"Unexpected end-of-input: expected close marker for {kind} (start marker at [Source: REDACTED "
                    f"(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {line}, column: {column}])")
        return "Unexpected end-of-input"
    char = text[position]
    return f"Unexpected character ('{char}' (code {ord(char)}))"


def _innermost_open(text: str) -> tuple[str, int, int] | None:
    """The container still open at the end of `text`: ("Object" or "Array", line, column), 1-based."""
    stack, in_string, escaped, line, column = [], False, False, 1, 0
    for char in text:
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        elif in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append(("Array" if char == "[" else "Object", line, column))
        elif char in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def as_object(value) -> dict:
    if not isinstance(value, dict):
        raise JsonError(f"Expected JSON object, received {node_text(value)}")
    return value


def as_array(value) -> list:
    if not isinstance(value, list):
        raise JsonError(f"Expected JSON array, received {node_text(value)}")
    return value


def field(obj: dict, name: str):
    """JsonObject.apply: the field's value, or Kafka's "No such field exists" error."""
    if name not in obj:
        raise JsonError(f"No such field exists: `{name}`")
    return obj[name]


def to_int(value) -> int:
    """DecodeJson.DecodeInteger: a JSON integer within Java's int range."""
    if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**31:
        raise JsonError(f"Expected `Integer` value, received {node_text(value)}")
    return value


def to_str(value) -> str:
    if not isinstance(value, str):
        raise JsonError(f"Expected `String` value, received {node_text(value)}")
    return value


def to_int_list(value) -> list[int]:
    if not isinstance(value, list):
        raise JsonError(f"Expected `JSON array` value, received {node_text(value)}")
    return [to_int(v) for v in value]


def to_str_list(value) -> list[str]:
    if not isinstance(value, list):
        raise JsonError(f"Expected `JSON array` value, received {node_text(value)}")
    return [to_str(v) for v in value]
