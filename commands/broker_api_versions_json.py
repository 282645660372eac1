"""pk-broker-api-versions --output json: one JSON document per line for each broker, built
from the ApiVersions answer the text printer renders (broker_api_versions.node_text):

    {"broker":{"id":0,"host":"127.0.0.1","port":9092,"rack":null,"isFenced":false},"error":null,
     "apis":[{"key":0,"name":"Produce","minVersion":3,"maxVersion":13,"usableVersion":13,"status":"usable"}, ...]}

`apis` is in api-key order, as the text: each API the broker advertises, then each client API it
does not (minVersion, maxVersion and usableVersion null, status "unsupported"). status is
"usable", "node_too_new", "node_too_old" (Kafka's `[unusable: node too ...]`), "unsupported",
or "unknown" for a key Kafka 4.4's client does not know (name null, usableVersion null). A
broker that could not be asked has "error" (the text's `ERROR: <message>`) and "apis" null.
"""

from __future__ import annotations

from .broker_api_versions import CLIENT_APIS
from .json_out import dumps


def api(api_key: int, lo: int | None, hi: int | None) -> dict:
    known = CLIENT_APIS.get(api_key)
    doc = {"key": api_key, "name": known[0] if known else None, "minVersion": lo, "maxVersion": hi,
           "usableVersion": None}
    if known is None:
        doc["status"] = "unknown"
    elif lo is None:
        doc["status"] = "unsupported"
    elif known[2] < lo:
        doc["status"] = "node_too_new"
    elif hi < known[1]:
        doc["status"] = "node_too_old"
    else:
        doc["usableVersion"] = min(known[2], hi)
        doc["status"] = "usable"
    return doc


def apis(versions: dict[int, tuple[int, int]]) -> list[dict]:
    """Every advertised API and every client API left out, by api key (as node_text)."""
    keys = set(versions) | {k for k, (_, _, _, client) in CLIENT_APIS.items() if client}
    return [api(k, *versions.get(k, (None, None))) for k in sorted(keys)]


def broker(b) -> dict:
    return {"id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack, "isFenced": bool(b.fenced)}


def run(client, out) -> None:
    for b in client.brokers():
        try:
            doc = {"broker": broker(b), "error": None, "apis": apis(client.api_versions(b.node_id))}
        except (OSError, ConnectionError) as exc:
            doc = {"broker": broker(b), "error": str(exc), "apis": None}
        out(dumps(doc) + "\n")
