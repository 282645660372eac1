"""Authorization on the broker: the authorizer Kafka's `authorizer.class.name` names, the checks
the handlers make (one call per request, topic, group or transactional id), and the ACL APIs
CreateAcls, DescribeAcls and DeleteAcls.

Without an authorizer (the default) every check is a single attribute test that allows, so the
Produce and Fetch paths cost what they did; the ACL APIs answer SECURITY_DISABLED, as Kafka's do.
With one, the decision is engine/acls.py's (StandardAuthorizer semantics) over the ACLs stored in
the data directory; a change written there by pk-acls is picked up at the next tick.
"""

from __future__ import annotations

import logging

from .. import acls as A
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol import errors as E
from .config import ConfigError

log = logging.getLogger("kafka.authorizer.logger")

# The class names Kafka accepts for its ACL authorizer: KRaft's, and the ZooKeeper era's
# (which pk serves with the same store and semantics).
AUTHORIZER_CLASSES = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                      "kafka.security.authorizer.AclAuthorizer")


# The error a refused check answers, per resource type, with Kafka's default text.
_REFUSALS = {
    A.TOPIC: (E.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
    A.GROUP: (E.GROUP_AUTHORIZATION_FAILED, "Group authorization failed."),
    A.CLUSTER: (E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."),
    A.TRANSACTIONAL_ID: (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed."),
    A.DELEGATION_TOKEN: (E.DELEGATION_TOKEN_AUTHORIZATION_FAILED, "Delegation Token authorization failed."),
}


class AuthorizationError(KafkaError):
    """A check refused: `code` is the resource type's *_AUTHORIZATION_FAILED."""

    def __init__(self, resource_type: int, message: str | None = None):
        self.code, default = _REFUSALS[resource_type]
        super().__init__(default if message is None else message)


def authorizer_from_config(config, data_dir: str) -> A.AclAuthorizer | None:
    """The broker's authorizer, or None when `authorizer.class.name` is empty.

    An unknown class stops the broker at startup, with Kafka's configuration error."""
    name = (config.get("authorizer.class.name") or "").strip()
    if not name:
        return None
    if name not in AUTHORIZER_CLASSES:
        raise ConfigError(f"Invalid value {name} for configuration authorizer.class.name: "
                          f"Class {name} could not be found.")
    supers = [s.strip() for s in (config.get("super.users") or "").split(";") if s.strip()]
    return A.AclAuthorizer(A.AclStore(data_dir), supers, config.get_bool("allow.everyone.if.no.acl.found"))


def _host(request) -> str:
    return request.client_host.lstrip("/")  # the server writes it as Kafka logs it: "/127.0.0.1"


class Guard:
    """The checks handlers make. Every method allows everything when no authorizer is configured."""

    def __init__(self, authorizer: A.AclAuthorizer | None):
        self.authorizer = authorizer

    @property
    def enabled(self) -> bool:
        return self.authorizer is not None

    def allows(self, request, operation: int, resource_type: int, name: str) -> bool:
        auth = self.authorizer
        if auth is None:
            return True
        ok = auth.authorize(request.principal, _host(request), operation, resource_type, name)
        if not ok:  # Kafka's audit line for a denied request
            kind = "".join(w.capitalize() for w in A.RESOURCE_NAMES[resource_type].split("_"))
            log.info("Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s "
                     "for request = %s", request.principal, A.OPERATION_NAMES[operation], _host(request), kind, name,
                     request.name)
        return ok

    def check(self, request, operation: int, resource_type: int, name: str) -> None:
        """Raise the resource type's AuthorizationError unless the caller may."""
        if self.authorizer is not None and not self.allows(request, operation, resource_type, name):
            raise AuthorizationError(resource_type)

    def allows_cluster(self, request, operation: int) -> bool:
        return self.allows(request, operation, A.CLUSTER, A.CLUSTER_NAME)

    def allows_any(self, request, operation: int, resource_type: int) -> bool:
        """May the caller do `operation` on some resource of the type (authorizeByResourceType)?"""
        auth = self.authorizer
        return auth is None or auth.authorize_any(request.principal, _host(request), operation, resource_type)

    def allowed_names(self, request, operation: int, resource_type: int, names) -> set:
        """The names among `names` the caller may `operation` (no log: a filter, as Kafka's)."""
        auth = self.authorizer
        if auth is None:
            return set(names)
        principal, host = request.principal, _host(request)
        return {n for n in names if auth.authorize(principal, host, operation, resource_type, n)}

    def topic_filter(self, request):
        """The caller's DESCRIBE filter on topic names, kept beyond the request (a KIP-848 member's
        regex is resolved again as topics come and go, as the caller it last heartbeated as);
        None without an authorizer."""
        auth = self.authorizer
        if auth is None:
            return None
        principal, host = request.principal, _host(request)
        return lambda names: {n for n in names if auth.authorize(principal, host, A.DESCRIBE, A.TOPIC, n)}

    def operations(self, request, resource_type: int, name: str) -> int:
        """The *_authorized_operations bit field of a resource."""
        auth = self.authorizer
        if auth is None:
            return sum(1 << op for op in A.SUPPORTED_OPERATIONS[resource_type])
        return auth.authorized_operations(request.principal, _host(request), resource_type, name)

    def refresh(self) -> None:
        if self.authorizer is not None:
            self.authorizer.store.refresh()


def not_authorized(request) -> str:
    """Kafka's ClusterAuthorizationException text for a request refused as a whole."""
    return (f"Request(session=Session({request.principal},{request.client_host}), "
            f"listenerName=ListenerName({request.listener_name}), "
            f"securityProtocol={request.security_protocol}) is not authorized.")


def _filter(body: dict) -> A.AclFilter:
    return A.AclFilter(body["resource_type_filter"], body["resource_name_filter"], body["pattern_type_filter"],
                       body["principal_filter"], body["host_filter"], body["operation"], body["permission_type"])


def _wire(acl: A.AclBinding) -> dict:
    return {"principal": acl.principal, "host": acl.host, "operation": acl.operation,
            "permission_type": acl.permission}


class AclHandlers:
    """CreateAcls, DescribeAcls, DeleteAcls: cluster ALTER (DESCRIBE to list) first, as Kafka checks."""

    def __init__(self, broker):
        self.broker = broker
        self.guard: Guard = broker.guard
        broker.register(ApiKey.DESCRIBE_ACLS, self.describe_acls)
        broker.register(ApiKey.CREATE_ACLS, self.create_acls)
        broker.register(ApiKey.DELETE_ACLS, self.delete_acls)

    async def tick(self) -> None:
        self.guard.refresh()  # ACLs pk-acls wrote beside the running broker

    def _refusal(self, request, operation: int) -> tuple[int, str] | None:
        if not self.guard.allows_cluster(request, operation):
            return E.CLUSTER_AUTHORIZATION_FAILED, not_authorized(request)
        if not self.guard.enabled:
            return E.SECURITY_DISABLED, "No Authorizer is configured."
        return None

    async def describe_acls(self, request) -> dict:
        refusal = self._refusal(request, A.DESCRIBE)
        if refusal is not None:
            code, message = refusal
            if code == E.SECURITY_DISABLED:
                message = "No Authorizer is configured on the broker"
            return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "resources": []}
        f = _filter(request.body)
        try:
            A.validate_filter(f)
        except A.InvalidAcl as exc:
            return {"throttle_time_ms": 0, "error_code": E.INVALID_REQUEST, "error_message": str(exc),
                    "resources": []}
        store = self.guard.authorizer.store
        store.refresh()
        resources: dict[tuple, list] = {}
        for acl in store.describe(f):
            resources.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(_wire(acl))
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": [
            {"resource_type": t, "resource_name": n, "pattern_type": p, "acls": entries}
            for (t, n, p), entries in resources.items()]}

    async def create_acls(self, request) -> dict:
        creations = request.body["creations"]
        refusal = self._refusal(request, A.ALTER)
        if refusal is not None:
            code, message = refusal
            return {"throttle_time_ms": 0, "results": [
                {"error_code": code, "error_message": message} for _ in creations]}
        results, valid = [], []
        for c in creations:
            acl = A.AclBinding(c["resource_type"], c["resource_name"], c["resource_pattern_type"],
                               c["principal"], c["host"], c["operation"], c["permission_type"])
            try:
                A.validate_binding(acl)
            except A.InvalidAcl as exc:
                results.append({"error_code": E.INVALID_REQUEST, "error_message": str(exc)})
                continue
            valid.append(acl)
            results.append({"error_code": 0, "error_message": None})
        if valid:
            self.guard.authorizer.store.create(valid)
        return {"throttle_time_ms": 0, "results": results}

    async def delete_acls(self, request) -> dict:
        filters = request.body["filters"]
        refusal = self._refusal(request, A.ALTER)
        if refusal is not None:
            code, message = refusal
            return {"throttle_time_ms": 0, "filter_results": [
                {"error_code": code, "error_message": message, "matching_acls": []} for _ in filters]}
        parsed, results = [], []
        for body in filters:
            f = _filter(body)
            try:
                A.validate_filter(f)
            except A.InvalidAcl as exc:
                results.append({"error_code": E.INVALID_REQUEST, "error_message": str(exc), "matching_acls": []})
                continue
            parsed.append(f)
            results.append(None)
        removed = iter(self.guard.authorizer.store.delete(parsed) if parsed else [])
        for i, result in enumerate(results):
            if result is None:
                results[i] = {"error_code": 0, "error_message": None, "matching_acls": [
                    {"error_code": 0, "error_message": None, "resource_type": a.resource_type,
                     "resource_name": a.name, "pattern_type": a.pattern_type, **_wire(a)}
                    for a in next(removed)]}
        return {"throttle_time_ms": 0, "filter_results": results}
