"""pk-acls --list --output json: one JSON document per line for each ACL binding --list
reports, in the order Kafka's text lists them, built from acls.listed_acls():

    {"resourceType":"TOPIC","resourceName":"orders","patternType":"LITERAL","principal":"User:alice",
     "host":"*","operation":"READ","permissionType":"ALLOW"}

Names are Kafka's enum names, as its text prints them. With --principal, each principal's
bindings follow one another (Kafka's order of the principals), as in the text.
"""

from __future__ import annotations

from pk.engine import acls as A

from . import acls as cmd
from .json_out import dumps


def binding(pattern: cmd.Pattern, entry: cmd.Entry) -> dict:
    return {"resourceType": A.RESOURCE_NAMES[pattern[0]], "resourceName": pattern[1],
            "patternType": A.PATTERN_NAMES[pattern[2]], "principal": entry[0], "host": entry[1],
            "operation": A.OPERATION_NAMES[entry[2]], "permissionType": A.PERMISSION_NAMES[entry[3]]}


def list_acls(backend: cmd.AclBackend, opts: cmd.AclOptions, out) -> None:
    for _principal, by_resource in cmd.listed_acls(backend, opts):
        for pattern, entries in by_resource.items():
            for entry in entries:
                out(dumps(binding(pattern, entry)) + "\n")
