"""SCRAM credential administration: DescribeUserScramCredentials (50) and AlterUserScramCredentials (51)
over the data directory's credential store (engine/scram_credentials.py).

Kafka's rules (ScramControlManager, ScramImage): a user named twice in one request is refused
whole with DUPLICATE_RESOURCE; any error for a user refuses all of that user's changes; an
alteration is applied atomically; results are listed in the order of Kafka's hash maps.
"""

from __future__ import annotations

from .. import acls
from ..javacompat import hashmap_order
from ..protocol import ApiKey
from ..protocol import errors as E
from ..scram_credentials import (
    MAX_ITERATIONS, MECHANISM_TYPES, MECHANISMS, MIN_ITERATIONS, Credential, ScramCredentials,
)

_CLUSTER_DENIED = "Cluster authorization failed."
_TWICE = "A user credential cannot be altered twice in the same request"


class ScramHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.credentials: ScramCredentials = broker.scram_credentials
        broker.register(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, self.describe)
        broker.register(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, self.alter)

    # ------------------------------------------------------------------ DescribeUserScramCredentials
    async def describe(self, request) -> dict:
        if not self.broker.guard.allows_cluster(request, acls.DESCRIBE):
            # Kafka's DescribeUserScramCredentialsRequest.getErrorResponse: no message (the default
            # one is dropped), one nameless result per asked user (for "all users" Kafka 4.4 fails
            # to answer at all; pk answers none)
            return {"throttle_time_ms": 0, "error_code": E.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                    "results": [{"user": "", "error_code": E.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                                 "credential_infos": []} for _ in request.body["users"] or ()]}
        stored = self.credentials.users()
        wanted = request.body["users"]
        duplicated: dict[str, bool] = {}
        if not wanted:  # null or empty: every user
            for name in stored:
                duplicated[name] = False
        else:
            for user in wanted:
                duplicated[user["name"]] = user["name"] in duplicated
        results = []
        for name in hashmap_order(duplicated):
            result = {"user": name, "error_code": E.NONE, "error_message": "", "credential_infos": []}
            if duplicated[name]:
                result["error_code"] = E.DUPLICATE_RESOURCE
                result["error_message"] = f"Cannot describe SCRAM credentials for the same user twice in a single request: {name}"
            elif name in stored:
                result["credential_infos"] = [{"mechanism": MECHANISM_TYPES[m], "iterations": c.iterations}
                                              for m, c in sorted(stored[name].items())]
            else:
                result["error_code"] = E.RESOURCE_NOT_FOUND
                result["error_message"] = f"Attempt to describe a user credential that does not exist: {name}"
            results.append(result)
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": "", "results": results}

    # ------------------------------------------------------------------ AlterUserScramCredentials
    async def alter(self, request) -> dict:
        if not self.broker.guard.allows_cluster(request, acls.ALTER):
            # Kafka answers every named user with the error
            names = [u["name"] for u in (*request.body["upsertions"], *request.body["deletions"])]
            return {"throttle_time_ms": 0, "results": [
                {"user": name, "error_code": E.CLUSTER_AUTHORIZATION_FAILED, "error_message": _CLUSTER_DENIED}
                for name in names]}
        stored = self.credentials.users()
        deletions: dict[str, dict] = {}
        upsertions: dict[str, dict] = {}
        errors: dict[str, tuple[int, str | None]] = {}
        for deletion in request.body["deletions"]:
            name = deletion["name"]
            if name in errors:
                continue
            if deletions.pop(name, None) is not None:
                errors[name] = (E.DUPLICATE_RESOURCE, _TWICE)
                continue
            error = _check_name_and_mechanism(name, deletion["mechanism"])
            if error is None and MECHANISMS[deletion["mechanism"]] not in stored.get(name, {}):
                error = (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
            if error is None:
                deletions[name] = deletion
            else:
                errors[name] = error
        for upsertion in request.body["upsertions"]:
            name = upsertion["name"]
            if name in errors:
                continue
            if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
                errors[name] = (E.DUPLICATE_RESOURCE, _TWICE)
                continue
            error = _check_name_and_mechanism(name, upsertion["mechanism"])
            if error is None and upsertion["iterations"] < MIN_ITERATIONS:
                error = (E.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
            elif error is None and upsertion["iterations"] > MAX_ITERATIONS:
                error = (E.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
            if error is None:
                upsertions[name] = upsertion
            else:
                errors[name] = error
        results = []
        removed = []
        for name in hashmap_order(deletions):
            removed.append((name, MECHANISMS[deletions[name]["mechanism"]]))
            results.append({"user": name, "error_code": E.NONE, "error_message": None})
        added = []
        for name in hashmap_order(upsertions):
            up = upsertions[name]
            mechanism = MECHANISMS[up["mechanism"]]
            try:
                credential = Credential.from_salted_password(mechanism, bytes(up["salt"]),
                                                             bytes(up["salted_password"]), up["iterations"])
            except ValueError:  # Kafka's HMAC refuses an empty key: an unexpected error there
                errors[name] = (E.UNKNOWN_SERVER_ERROR, None)
                continue
            added.append((name, mechanism, credential))
            results.append({"user": name, "error_code": E.NONE, "error_message": None})
        if removed or added:
            self.credentials.alter(removed, added)
        for name in hashmap_order(errors):
            code, message = errors[name]
            results.append({"user": name, "error_code": code, "error_message": message})
        return {"throttle_time_ms": 0, "results": results}


def _check_name_and_mechanism(name: str, mechanism: int) -> tuple[int, str] | None:
    if not name:
        return E.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in MECHANISMS:
        return E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None
