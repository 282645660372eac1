"""Where pk reproduces Java, Scala and Jackson behaviour that shows in Kafka's output. One home
for these, used by the engine and the tools:

* Java's String/TopicPartition hashing and java.util.HashMap iteration order, which decide the
  order in which Kafka's tools print many of their lists (topics, configs, reset rows) and
  which partition of `__consumer_offsets` a group belongs to;
* ScalaHashMap / JavaHashMap: the iteration order of Scala's mutable.HashMap and of a
  java.util.HashMap filled by computeIfAbsent (String keys);
* jackson_string / jackson_json: JSON text as Jackson writes it;
* java_split: String.split(regex);
* JavaRandom: java.util.Random.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Iterable

DEFAULT_CAPACITY = 16  # new HashMap<>()


def string_hash(text: str) -> int:
    """java.lang.String.hashCode() over UTF-16 code units, as an unsigned 32-bit int."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def signed32(h: int) -> int:
    """An unsigned 32-bit hash as the Java int it is."""
    return h - (1 << 32) if h & 0x80000000 else h


def topic_partition_hash(topic: str, partition: int) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode(), unsigned."""
    return (31 * (31 + partition) + string_hash(topic)) & 0xFFFFFFFF


def _default_hash(key) -> int:
    if isinstance(key, tuple):  # (topic, partition)
        return topic_partition_hash(*key)
    return string_hash(key)


def hashmap_order(keys: Iterable[Hashable], *, sized_for: int | None = None,
                  hash_of: Callable[[Hashable], int] | None = None) -> list:
    """The iteration order of a java.util.HashMap after putting `keys` in this order (a key put
    twice keeps its first place): by bucket, `spread(hash) & (capacity - 1)`, and by insertion
    within a bucket (resizing keeps that order). The table starts at 16 buckets, or at
    tableSizeFor(n) for `new HashMap<>(n)` (sized_for=n), and doubles while the size exceeds
    three quarters of it. String keys hash as Java strings, (topic, partition) tuples as
    TopicPartitions."""
    keys = list(dict.fromkeys(keys))
    hash_of = hash_of or _default_hash
    capacity = DEFAULT_CAPACITY
    if sized_for is not None:
        capacity = 1
        while capacity < sized_for:
            capacity *= 2
    while len(keys) > capacity * 3 // 4:  # the resize threshold, (int) (capacity * 0.75)
        capacity *= 2

    def bucket(key) -> int:
        h = hash_of(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # stable: a bucket keeps the insertion order


class ScalaHashMap:
    """Iteration order of scala.collection.mutable.HashMap (Scala 2.13) with String keys.

    Nodes sit in bucket `improved & (len - 1)`, sorted by improved hash inside a bucket
    (ties: insertion order); the table doubles when `size + 1 >= 0.75 * len` on a put.
    """

    def __init__(self):
        self.length = 16
        self.values: dict = {}
        self._seq: dict = {}

    def put(self, key: str, value) -> None:
        if len(self.values) + 1 >= int(self.length * 0.75):
            self.length *= 2
        if key not in self.values:
            self._seq[key] = len(self._seq)
        self.values[key] = value

    def get(self, key: str, default=None):
        return self.values.get(key, default)

    def __contains__(self, key) -> bool:
        return key in self.values

    def __len__(self) -> int:
        return len(self.values)

    def items(self) -> list[tuple]:
        def order(key):
            h = string_hash(key)
            improved = h ^ (h >> 16)
            signed = improved - (1 << 32) if improved & 0x80000000 else improved
            return improved & (self.length - 1), signed, self._seq[key]

        return [(k, self.values[k]) for k in sorted(self.values, key=order)]


class JavaHashMap(ScalaHashMap):
    """Iteration order of a java.util.HashMap with String keys filled by computeIfAbsent: bucket
    `(h ^ h >>> 16) & (n - 1)`, and inside a bucket the newest key first (computeIfAbsent links a
    new node at the head of its bucket; resizing keeps that order). The table (16) doubles when
    an insertion makes size > 0.75 n."""

    def put(self, key: str, value) -> None:
        if key not in self.values:
            self._seq[key] = len(self._seq)
            if len(self.values) + 1 > int(self.length * 0.75):
                self.length *= 2
        self.values[key] = value

    def items(self) -> list[tuple]:
        def order(key):
            h = string_hash(key)
            return (h ^ (h >> 16)) & (self.length - 1), -self._seq[key]

        return [(k, self.values[k]) for k in sorted(self.values, key=order)]


# --------------------------------------------------------------------------- Jackson
def jackson_string(text: str) -> str:
    """A JSON string as Jackson writes it (control characters escaped, \\uXXXX upper-case)."""
    out = ['"']
    for ch in text:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(c, f"\\u{c:04X}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jackson_json(value) -> str:
    """Jackson's ObjectNode.toString() of a tree of dicts, lists, str, int, bool, bytes, None."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return jackson_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        import base64

        return '"' + base64.b64encode(bytes(value)).decode() + '"'  # BinaryNode
    if isinstance(value, dict):
        return "{" + ",".join(f"{jackson_string(k)}:{jackson_json(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(jackson_json(v) for v in value) + "]"


# --------------------------------------------------------------------------- Pattern.compile
# Python's re and Java's Pattern disagree on some syntax; these are the messages of Java's
# PatternSyntaxException for the mistakes people make in topic patterns.
_PATTERN_MESSAGES = {"unterminated character set": "Unclosed character class",
                     "missing ), unterminated subpattern": "Unclosed group",
                     "unbalanced parenthesis": "Unmatched closing ')'",
                     "nothing to repeat": "Dangling meta character"}


def pattern_syntax_error(pattern: str) -> tuple[str, str] | None:
    """None when `pattern` compiles; else (description with its index, Java's full
    getMessage()): `Unclosed character class near index 0`, then the pattern, then a caret
    under the index when it lies inside the pattern."""
    try:
        re.compile(pattern)
        return None
    except re.error as exc:
        index = exc.pos
        description = _PATTERN_MESSAGES.get(exc.msg, exc.msg)
        if description == "multiple repeat":  # Java: the second quantifier dangles
            description = "Dangling meta character"
        if description == "Dangling meta character" and index is not None and index < len(pattern):
            description += f" '{pattern[index]}'"
        elif description == "Unclosed character class":
            index = len(pattern) - 1
        elif description == "Unclosed group":
            index = len(pattern)
        elif description == "Unmatched closing ')'":
            index -= 1
        elif exc.msg.startswith("bad character range "):
            description = "Illegal character range"
            index += len(exc.msg) - len("bad character range ") - 1  # at the range's upper end
        short = f"{description} near index {index}"
        full = f"{short}\n{pattern}"
        if index is not None and 0 <= index < len(pattern):
            full += "\n" + " " * index + "^"
        return short, full


# --------------------------------------------------------------------------- String.split
_REGEX_META = ".$|()[{^?*+\\"


def _literal_separator(regex: str) -> str | None:
    """The char String.split's fast path splits on (no regex engine), or None: a single char
    that is not one of `.$|()[{^?*+\\`, or a backslash and a char that is not an ASCII letter
    or digit (r"\\." is a literal dot). Surrogates never take the fast path."""
    if len(regex) == 1 and regex not in _REGEX_META:
        ch = regex
    elif len(regex) == 2 and regex[0] == "\\" and not (regex[1].isascii() and regex[1].isalnum()):
        ch = regex[1]
    else:
        return None
    return None if 0xD800 <= ord(ch) <= 0xDFFF else ch


def java_split(text: str, regex: str) -> list[str]:
    """java.lang.String.split(regex), i.e. with limit 0:

    * when nothing matches, the result is the whole text: `"".split(",")` is `[""]`;
    * otherwise the pieces between matches, with every trailing empty string removed:
      `",".split(",")` is `[]`, `"a,,b,,".split(",")` is `["a", "", "b"]`; leading empty
      strings stay (`",a"` gives `["", "a"]`), except that a zero-width match at index 0
      gives no leading piece;
    * `regex` is a Java regex: a single char other than `.$|()[{^?*+\\` (or a backslash and a
      non-alphanumeric char, r"\\.") is a literal split; anything else goes through Python's
      `re`, which raises re.error where Java throws PatternSyntaxException.
    """
    sep = _literal_separator(regex)
    if sep is not None:
        if sep not in text:
            return [text]
        parts = text.split(sep)
    else:
        import re

        parts = []
        index = 0
        for m in re.finditer(regex, text):
            if index == 0 and m.start() == 0 and m.end() == 0:
                continue  # no leading empty piece for a zero-width match at the start
            parts.append(text[index:m.start()])
            index = m.end()
        if index == 0:
            return [text]
        parts.append(text[index:])
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# --------------------------------------------------------------------------- java.util.Random
class JavaRandom:
    """java.util.Random (the 48-bit LCG), so that a seed picks what Kafka's Random would."""

    _MULTIPLIER = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int | None = None):
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "big")
        self._seed = (seed ^ self._MULTIPLIER) & self._MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULTIPLIER + 0xB) & self._MASK
        r = self._seed >> (48 - bits)
        return r - (1 << 32) if r & 0x80000000 else r

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise ValueError("bound must be positive")
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:  # a power of two
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m < 2**31:  # Java: the int sum did not overflow
                return r
            u = self._next(31)
