"""pk-get-offsets --output json (pk only): the offsets GetOffsetShell prints as
`topic:partition:offset` lines, as one JSON array on one line, in the same order:
[{"topic": "t", "partition": 0, "offset": 42}, ...]."""

from __future__ import annotations

from .json_out import dumps


def document(offsets: list[tuple[str, int, int]]) -> str:
    return dumps([{"topic": topic, "partition": partition, "offset": offset}
                  for topic, partition, offset in offsets])
