"""pk-groups --output json (pk only): the --list table as one JSON array on one line, in the
table's order: [{"group": "g", "type": "Classic", "protocol": "consumer"}, ...]. The type is
null where the text's TYPE cell is empty (a broker that did not say); the protocol type is a
string, empty for a group without one (a simple consumer group), as the cluster reports it."""

from __future__ import annotations

from .groups import GroupListing
from .json_out import dumps


def document(listings: list[GroupListing]) -> str:
    return dumps([{"group": g.group_id, "type": g.group_type or None, "protocol": g.protocol}
                  for g in listings])
