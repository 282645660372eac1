"""pk-configs --describe --output json: one JSON document per line for each thing Kafka's text
describes (a resource's configs, a quota entity's quotas, a user's SCRAM credentials), built
from configs.described(), the same facts the text printer renders.

    {"kind":"configs","entityType":"topics","entityName":"orders","default":false,"exists":true,
     "all":false,"configs":[{"name":"retention.ms","value":"1000","sensitive":false,
     "source":"DYNAMIC_TOPIC_CONFIG","synonyms":[{"source":"DYNAMIC_TOPIC_CONFIG","name":"retention.ms",
     "value":"1000"}]}]}
    {"kind":"quotas","entity":{"user":"alice","client-id":null},"quotas":{"producer_byte_rate":1024.0}}
    {"kind":"scram","user":"alice","credentials":[{"mechanism":"SCRAM-SHA-256","iterations":4096}]}

A default entity (the cluster's broker defaults, `--entity-default`) has entityName null and
default true; "all" is true with --all (every config, as "All configs for ..."), false for
the dynamic ones only; a resource that does not exist has exists false; in a quota entity a
null name is the default user, client-id or ip.
"""

from __future__ import annotations

from . import configs as cmd
from .json_out import dumps


def document(part) -> dict:
    if isinstance(part, cmd.ResourceConfigs):
        return {"kind": "configs", "entityType": part.entity_type,
                "entityName": part.entity or None, "default": part.entity == "",
                "exists": part.entries is not None, "all": part.describe_all,
                "configs": [_entry(e) for e in part.entries or []]}
    if isinstance(part, cmd.QuotaConfigs):
        entity = {t: part.entity[t] for t in ("user", "client-id", "ip") if t in part.entity}
        return {"kind": "quotas", "entity": entity,
                "quotas": {name: float(value) for name, value in part.values}}
    return {"kind": "scram", "user": part.user,
            "credentials": [{"mechanism": m, "iterations": int(i)} for m, i in part.credentials]}


def _entry(entry: cmd.Entry) -> dict:
    return {"name": entry.name, "value": entry.value, "sensitive": bool(entry.sensitive),
            "source": cmd.SOURCES.get(entry.source, "UNKNOWN"),
            "synonyms": [{"source": s, "name": n, "value": v} for s, n, v in entry.synonyms]}


def describe(backend, opts: cmd.Options, out) -> None:
    for part in cmd.described(backend, opts):
        out(dumps(document(part)))
