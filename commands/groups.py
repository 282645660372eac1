"""kafka-groups --list (Kafka 4.4's GroupsCommand, KIP-1043): every group of the cluster with
its type and protocol type, filtered by type, protocol or kind; on the bundled engine, its
classic consumer groups.

The filters follow GroupsCommand: --group-type (with --protocol as a further condition),
else --protocol alone (exact, case-sensitive), else --consumer (type Consumer, or a classic
group whose protocol type is "consumer" or empty), --share, --streams. A listing without a
type (a broker before ListGroups v5) matches no type filter and prints an empty TYPE cell.
"""

from __future__ import annotations

from dataclasses import dataclass

from pk.engine import protocol as kp

from .errors import UsageError

# GroupType's names as the tool prints them (GroupType.toString), by the name it parses
# (case-insensitively; "unknown" parses but is refused like any other bad name)
GROUP_TYPES = {"classic": "Classic", "consumer": "Consumer", "share": "Share", "streams": "Streams"}
CONSUMER_PROTOCOL = "consumer"
MIN_WIDTH = 20
LIST_GROUPS_VERSION = 5


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    group_type: str  # "Classic", "Consumer", ...; "" when the broker did not say
    protocol: str


def parse_group_type(text: str) -> str:
    name = GROUP_TYPES.get(text.lower())
    if name is None:
        raise UsageError("--group-type must be a valid group type.")
    return name


def matches(g: GroupListing, group_type: str | None, protocol: str | None,
            consumer: bool, share: bool, streams: bool) -> bool:
    if group_type is not None:
        return g.group_type == group_type and (protocol is None or g.protocol == protocol)
    if protocol is not None:
        return g.protocol == protocol
    if consumer:
        return g.protocol in (CONSUMER_PROTOCOL, "") or g.group_type == "Consumer"
    if share:
        return g.group_type == "Share"
    if streams:
        return g.group_type == "Streams"
    return True


def _jlen(text: str) -> int:
    """String.length(): UTF-16 code units, as Java pads."""
    return len(text.encode("utf-16-le")) // 2


def _pad(text: str, width: int) -> str:
    return text + " " * max(width - _jlen(text), 0)


def table_lines(listings: list[GroupListing]) -> list[str]:
    """The header and one row per group, in the listing's order; every column is as wide as
    the longest cell of the table (at least 20). Rows end with a space, the header does not,
    as GroupsCommand prints them."""
    width = max([MIN_WIDTH] + [_jlen(c) for g in listings for c in (g.group_id, g.group_type, g.protocol)])
    lines = [" ".join(_pad(c, width) for c in ("GROUP", "TYPE", "PROTOCOL"))]
    lines += ["".join(_pad(c, width) + " " for c in (g.group_id, g.group_type, g.protocol)) for g in listings]
    return lines


# --------------------------------------------------------------------------- sources
def engine_listings(data_dir: str | None) -> list[GroupListing]:
    """The bundled engine's groups, as pk-consumer-groups --list finds them: classic consumer
    groups (one known only by its committed offsets has no protocol type, as a simple consumer
    group on a broker); then its share groups."""
    from pk.engine.groups import list_group_ids

    from .backends.engine_groups import EngineGroupsBackend

    backend = EngineGroupsBackend(data_dir)
    with_files = set(list_group_ids(backend.engine.groups_dir))
    listings = [GroupListing(g, "Classic", CONSUMER_PROTOCOL if g in with_files else "")
                for g, _state in backend.list_groups()]
    from pk.engine.share_groups import ShareGroupStore  # the share groups (engine/share_groups.py)

    classic = {g.group_id for g in listings}
    return listings + [GroupListing(g, "Share", "share") for g in ShareGroupStore(backend.engine).group_ids()
                       if g not in classic]


def error_message(exc: Exception) -> str:
    """What GroupsCommand prints after "Error while executing groups command : ": the
    failure's message. It waits 30 s for the listing, no longer: a cluster that cannot be
    reached ends in a java.util.concurrent.TimeoutException, whose message is null."""
    if getattr(exc, "name", None) == "REQUEST_TIMED_OUT":
        return "null"
    return getattr(exc, "message", None) or str(exc)


def cluster_listings(client) -> list[GroupListing]:
    """Admin.listGroups(): ListGroups without filters to every broker of the cluster."""
    from .backends.kafka_admin import known_error

    listings: list[GroupListing] = []
    seen: set[str] = set()
    for broker in client.brokers():
        answer = client.call(kp.ApiKey.LIST_GROUPS, LIST_GROUPS_VERSION,
                             {"states_filter": [], "types_filter": []}, node=broker.node_id)
        if answer["error_code"]:
            raise known_error(answer["error_code"])
        for g in answer["groups"]:
            if g["group_id"] in seen:
                continue
            seen.add(g["group_id"])
            kind = g.get("group_type") or ""
            listings.append(GroupListing(g["group_id"], GROUP_TYPES.get(kind.lower(), kind), g["protocol_type"]))
    return listings
