"""Output as Kafka's Java tools write it: JSON event lines as Jackson serialises the tools'
event objects (timestamp and name first, compact), and doubles as Double.toString prints them."""

from __future__ import annotations

import json
import math
import time

from pk.engine.topic_config import java_double_str


def java_double(x: float):
    """A double as Jackson writes it: Double.toString for finite values, the strings "NaN" and
    "Infinity" otherwise (Jackson's default quotes non-numeric numbers)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return JavaDouble(x)


class JavaDouble(float):
    """A float that event() writes as Java's Double.toString: 2.5, 1.0E7, 1.5E-4."""

    def __repr__(self) -> str:
        return java_double_str(float(self))


def event(name: str, **fields) -> str:
    """One line: {"timestamp":<now ms>,"name":<name>, fields...} as Jackson writes it."""
    parts = [f'"timestamp":{int(time.time() * 1000)}', f'"name":{json.dumps(name)}']
    for key, value in fields.items():
        if isinstance(value, JavaDouble):
            text = repr(value)
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        parts.append(f"{json.dumps(key)}:{text}")
    return "{" + ",".join(parts) + "}"
