"""kcat's `-f` format strings for `pk-console-consumer --format` (pk only).

The output is what kcat 1.7 prints for the same string (its format.c, fmt_parse and
fmt_msg_output_str), byte for byte, including its corners:

- tokens: %t topic, %p partition, %o offset, %k key, %s value, %K and %S their lengths (-1
  for null), %R the value's length as 4 big-endian bytes (0xffffffff for null), %T the
  timestamp in ms (-1 when there is none), %h the headers as name=value joined by ',' (a null
  value prints NULL; nothing at all without headers), %% a percent sign;
- a null or empty key or value prints nothing (kcat's -Z is not offered);
- a header value is printed with C's "%.*s", so it stops at its first NUL byte;
- escapes in the text between tokens: \\t \\n \\r; \\xHH is strtoul base 16 (only when a decimal
  digit follows the x, else the character after the x); \\ followed by a digit is strtoul with
  base 0 (0x.. hex, 0.. octal, else decimal), the number taken modulo 256; \\ before any other
  character is that character; a text piece ends at its first NUL (kcat keeps C strings).
"""

from __future__ import annotations

import struct

TOKENS = "okKsSRtpTh"
_ULONG_MAX = (1 << 64) - 1


class FormatStringError(ValueError):
    """A format string kcat refuses; str() is the reason."""


def _strtoul(text: str, i: int, base: int) -> tuple[int, int]:
    """C's strtoul from text[i] (a decimal digit there): (value, index after the number).
    Base 0 picks 16 after "0x", 8 after "0", else 10; base 16 also skips a "0x"."""
    digits = "0123456789abcdef"
    if base in (0, 16) and text[i:i + 2].lower() == "0x" and text[i + 2:i + 3].lower() in tuple(digits):
        base, i = 16, i + 2
    elif base == 0:
        base = 8 if text[i] == "0" else 10
    value, j = 0, i
    while j < len(text) and text[j].lower() in digits[:base]:
        value = value * base + digits.index(text[j].lower())
        j += 1
    return min(value, _ULONG_MAX), j


def unescape(piece: str) -> bytes:
    """A text piece between tokens as kcat's fmt_add converts it."""
    out = bytearray()
    i, n = 0, len(piece)
    while i < n:
        c = piece[i]
        if c == "\\" and i + 1 < n:
            i += 1
            c = piece[i]
            base = 0
            if c in "tnr":
                out += {"t": b"\t", "n": b"\n", "r": b"\r"}[c]
                i += 1
                continue
            if c == "x":
                i += 1
                base = 16
                if i >= n:
                    break  # "\x" at the end: kcat's copy stops at the string's end
                c = piece[i]
            if "0" <= c <= "9":
                value, i = _strtoul(piece, i, base)
                out.append(value & 0xFF)
                continue
            out += c.encode("utf-8")
            i += 1
            continue
        out += c.encode("utf-8")
        i += 1
    nul = out.find(0)
    return bytes(out if nul < 0 else out[:nul])


def parse(fmt: str) -> list:
    """The format string as a list of bytes (text) and one-letter tokens."""
    parts: list = []
    i = 0
    while i < len(fmt):
        j = fmt.find("%", i)
        if j < 0:
            parts.append(unescape(fmt[i:]))
            break
        if j > i:
            parts.append(unescape(fmt[i:j]))
        if j + 1 >= len(fmt):
            raise FormatStringError("Empty formatter")
        token = fmt[j + 1]
        if token == "%":
            parts.append(b"%")
        elif token in TOKENS:
            parts.append(token)
        else:
            raise FormatStringError(f"Unsupported formatter: %{token}")
        i = j + 2
    return parts


def _headers(headers) -> bytes:
    out = []
    for name, value in headers:
        if value is None:
            text = b"NULL"
        else:
            value = bytes(value)
            nul = value.find(0)
            text = value if nul < 0 else value[:nul]
        out.append(name.encode("utf-8") + b"=" + text)
    return b",".join(out)


def _length(data) -> bytes:
    return b"-1" if data is None else str(len(data)).encode()


class KcatFormatter:
    """The console consumer's formatter for --format: format(record) -> bytes."""

    def __init__(self, fmt: str):
        self.parts = parse(fmt)

    def format(self, record) -> bytes:
        out = []
        for part in self.parts:
            if type(part) is bytes:
                out.append(part)
            elif part == "s":
                if record.value:
                    out.append(bytes(record.value))
            elif part == "k":
                if record.key:
                    out.append(bytes(record.key))
            elif part == "o":
                out.append(str(record.offset).encode())
            elif part == "p":
                out.append(str(record.partition).encode())
            elif part == "t":
                out.append(record.topic.encode("utf-8"))
            elif part == "T":
                out.append(str(record.timestamp if record.timestamp_type in (0, 1) else -1).encode())
            elif part == "S":
                out.append(_length(record.value))
            elif part == "K":
                out.append(_length(record.key))
            elif part == "R":
                out.append(struct.pack(">i", -1 if record.value is None else len(record.value)))
            elif part == "h":
                out.append(_headers(record.headers))
        return b"".join(out)
