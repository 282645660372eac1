"""Access control lists: Kafka's ACL model, their durable store, and the authorization decision.

An ACL binding says: principal P from host H is ALLOWed (or DENYed) operation O on the
resources a pattern names (a TOPIC/GROUP/... name, LITERAL or PREFIXED; the literal name "*"
means every resource of the type). The decision follows Kafka's StandardAuthorizer:

- a super user may do anything;
- the ACLs that apply are those whose pattern covers the resource, whose principal is the
  caller's or ``User:*`` and whose host is the caller's address or ``*``;
- any applying DENY wins; else any applying ALLOW allows;
- ALLOW READ/WRITE/DELETE/ALTER imply DESCRIBE, ALLOW ALTER_CONFIGS implies DESCRIBE_CONFIGS,
  ALL is every operation (a DENY implies nothing but for ALL);
- when no ACL at all names the resource, ``allow.everyone.if.no.acl.found`` decides (default: deny).

The ACLs live in ``<data dir>/.pk/acls.json``, rewritten whole and atomically under a file
lock, so the broker and pk-acls working on the same directory never lose each other's changes.
"""

from __future__ import annotations

import json
import os
from typing import Iterable, NamedTuple

from .fileutil import atomic_write, file_stamp, locked
from .paths import PK_DIR

# Kafka's codes (org.apache.kafka.common.resource / acl enums), as the wire carries them.
RESOURCE_TYPES = {"UNKNOWN": 0, "ANY": 1, "TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5,
                  "DELEGATION_TOKEN": 6, "USER": 7}
PATTERN_TYPES = {"UNKNOWN": 0, "ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {"UNKNOWN": 0, "ANY": 1, "ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7,
              "DESCRIBE": 8, "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11,
              "IDEMPOTENT_WRITE": 12, "CREATE_TOKENS": 13, "DESCRIBE_TOKENS": 14, "TWO_PHASE_COMMIT": 15}
PERMISSIONS = {"UNKNOWN": 0, "ANY": 1, "DENY": 2, "ALLOW": 3}
RESOURCE_NAMES = {v: k for k, v in RESOURCE_TYPES.items()}
PATTERN_NAMES = {v: k for k, v in PATTERN_TYPES.items()}
OPERATION_NAMES = {v: k for k, v in OPERATIONS.items()}
PERMISSION_NAMES = {v: k for k, v in PERMISSIONS.items()}

TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 2, 3, 4, 5, 6, 7
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
(ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
 IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT) = range(2, 16)
DENY, ALLOW = 2, 3

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"

# What each resource type supports (AclEntry.supportedOperations), ALL aside.
SUPPORTED_OPERATIONS = {
    TOPIC: (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    GROUP: (READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    CLUSTER: (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE),
    TRANSACTIONAL_ID: (DESCRIBE, WRITE, TWO_PHASE_COMMIT),
    DELEGATION_TOKEN: (DESCRIBE,),
    USER: (CREATE_TOKENS, DESCRIBE_TOKENS),
}
_IMPLIES_DESCRIBE = frozenset((DESCRIBE, READ, WRITE, DELETE, ALTER))
_IMPLIES_DESCRIBE_CONFIGS = frozenset((DESCRIBE_CONFIGS, ALTER_CONFIGS))


class AclBinding(NamedTuple):
    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def pattern_text(self) -> str:
        """Kafka's ResourcePattern.toString()."""
        return (f"ResourcePattern(resourceType={RESOURCE_NAMES[self.resource_type]}, name={self.name}, "
                f"patternType={PATTERN_NAMES[self.pattern_type]})")

    def entry_text(self) -> str:
        """Kafka's AccessControlEntry.toString()."""
        return (f"(principal={self.principal}, host={self.host}, operation={OPERATION_NAMES[self.operation]}, "
                f"permissionType={PERMISSION_NAMES[self.permission]})")

    def to_json(self) -> dict:
        return {"resourceType": RESOURCE_NAMES[self.resource_type], "name": self.name,
                "patternType": PATTERN_NAMES[self.pattern_type], "principal": self.principal,
                "host": self.host, "operation": OPERATION_NAMES[self.operation],
                "permissionType": PERMISSION_NAMES[self.permission]}

    @classmethod
    def from_json(cls, d: dict) -> "AclBinding":
        return cls(RESOURCE_TYPES[d["resourceType"]], d["name"], PATTERN_TYPES[d["patternType"]],
                   d["principal"], d["host"], OPERATIONS[d["operation"]], PERMISSIONS[d["permissionType"]])


class AclFilter(NamedTuple):
    """A DescribeAcls/DeleteAcls filter: None strings and ANY codes match everything."""
    resource_type: int = 1
    name: str | None = None
    pattern_type: int = 1
    principal: str | None = None
    host: str | None = None
    operation: int = 1
    permission: int = 1

    def matches(self, acl: AclBinding) -> bool:
        return self.matches_pattern(acl) and self.matches_entry(acl)

    def matches_pattern(self, acl: AclBinding) -> bool:
        """ResourcePatternFilter.matches: ANY takes the name exactly, whatever the pattern type;
        MATCH takes every pattern that covers the name (literal equal or "*", or a prefix)."""
        if self.resource_type != ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (ANY, MATCH) and self.pattern_type != acl.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type != MATCH:
            return self.name == acl.name
        if acl.pattern_type == LITERAL:
            return self.name == acl.name or acl.name == WILDCARD
        return self.name.startswith(acl.name)

    def matches_entry(self, acl: AclBinding) -> bool:
        return ((self.principal is None or self.principal == acl.principal)
                and (self.host is None or self.host == acl.host)
                and (self.operation == ANY or self.operation == acl.operation)
                and (self.permission == ANY or self.permission == acl.permission))


class InvalidAcl(ValueError):
    """A binding or filter Kafka refuses (INVALID_REQUEST); the message is Kafka's."""


def validate_binding(acl: AclBinding) -> None:
    """What Kafka's broker and controller refuse in CreateAcls, in the order they check."""
    if acl.resource_type == CLUSTER and acl.name != CLUSTER_NAME:
        raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if acl.name == "":
        raise InvalidAcl("Invalid empty resource name")
    if acl.resource_type not in SUPPORTED_OPERATIONS:
        raise InvalidAcl(f"Invalid resourceType {RESOURCE_NAMES.get(acl.resource_type, 'UNKNOWN')}")
    if acl.pattern_type not in (LITERAL, PREFIXED):
        raise InvalidAcl(f"Invalid patternType {PATTERN_NAMES.get(acl.pattern_type, 'UNKNOWN')}")
    if acl.operation not in OPERATION_NAMES or acl.operation in (0, ANY):
        raise InvalidAcl(f"Invalid operation {OPERATION_NAMES.get(acl.operation, 'UNKNOWN')}")
    if acl.permission not in (ALLOW, DENY):
        raise InvalidAcl(f"Invalid permissionType {PERMISSION_NAMES.get(acl.permission, 'UNKNOWN')}")
    if ":" not in acl.principal:
        raise InvalidAcl(f"expected a string in format principalType:principalName but got {acl.principal}")


def validate_filter(f: AclFilter) -> None:
    if (f.resource_type not in RESOURCE_NAMES or f.resource_type == 0
            or f.pattern_type not in PATTERN_NAMES or f.pattern_type == 0):
        raise InvalidAcl("Unknown patternFilter.")
    if (f.operation not in OPERATION_NAMES or f.operation == 0
            or f.permission not in PERMISSION_NAMES or f.permission == 0):
        raise InvalidAcl("Unknown entryFilter.")


def acls_path(data_dir: str) -> str:
    return os.path.join(data_dir, PK_DIR, "acls.json")


class AclStore:
    """The ACLs of one data directory. Reads are served from memory; `refresh` picks up
    changes another process wrote (cheap: one stat); changes are read-modify-write under
    the store's lock, so concurrent writers compose."""

    def __init__(self, data_dir: str):
        self.path = acls_path(data_dir)
        self._lock_path = self.path + ".lock"
        self._stamp = None
        self.acls: list[AclBinding] = []
        self.refresh()

    def _stat(self):
        return file_stamp(self.path)

    def refresh(self) -> bool:
        """Reload if the file changed since last read; True if it did."""
        stamp = self._stat()
        if stamp == self._stamp:
            return False
        self.acls = self._read()
        self._stamp = stamp
        return True

    def _read(self) -> list[AclBinding]:
        try:
            with open(self.path, encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            return []
        return [AclBinding.from_json(d) for d in doc.get("acls", [])]

    def _write(self, acls: list[AclBinding]) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        data = json.dumps({"version": 1, "acls": [a.to_json() for a in acls]}, indent=1).encode()
        atomic_write(self.path, data)
        self.acls = acls
        self._stamp = self._stat()

    def describe(self, f: AclFilter) -> list[AclBinding]:
        return [a for a in self.acls if f.matches(a)]

    def create(self, bindings: Iterable[AclBinding]) -> None:
        """Add the bindings (already validated); those present already are kept once."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with locked(self._lock_path):
            current = self._read()
            present = set(current)
            for b in bindings:
                if b not in present:
                    present.add(b)
                    current.append(b)
            self._write(current)

    def delete(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """Remove what each filter matches; per filter, the bindings it removed."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with locked(self._lock_path):
            current = self._read()
            removed = [[a for a in current if f.matches(a)] for f in filters]
            gone = {a for group in removed for a in group}
            if gone:
                self._write([a for a in current if a not in gone])
            else:
                self.acls, self._stamp = current, self._stat()
        return removed


def _entry_result(acl: AclBinding, principals: tuple, host: str, operation: int) -> int | None:
    """ALLOW/DENY if `acl` applies to the caller and operation, else None (resource already matched)."""
    if acl.principal not in principals:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    if acl.operation != ALL:
        if acl.permission == ALLOW:
            if operation == DESCRIBE:
                if acl.operation not in _IMPLIES_DESCRIBE:
                    return None
            elif operation == DESCRIBE_CONFIGS:
                if acl.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif acl.operation != operation:
                return None
        elif acl.operation != operation:
            return None
    return acl.permission


def _covers(acl: AclBinding, name: str) -> bool:
    if acl.pattern_type == LITERAL:
        return acl.name == name or acl.name == WILDCARD
    return name.startswith(acl.name)


class AclAuthorizer:
    """The decision over a store, with the broker's super.users and no-ACL default."""

    def __init__(self, store: AclStore, super_users: Iterable[str] = (), allow_if_no_acl: bool = False):
        self.store = store
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._by_type: dict[int, list[AclBinding]] = {}
        self._indexed = None

    def _acls_of(self, resource_type: int) -> list[AclBinding]:
        if self._indexed is not self.store.acls:  # re-index after a reload or a change
            by_type: dict[int, list[AclBinding]] = {}
            for a in self.store.acls:
                by_type.setdefault(a.resource_type, []).append(a)
            self._by_type, self._indexed = by_type, self.store.acls
        return self._by_type.get(resource_type, [])

    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        if principal in self.super_users:
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        has_resource_acls = allowed = False
        for acl in self._acls_of(resource_type):
            if not _covers(acl, name):
                continue
            has_resource_acls = True
            result = _entry_result(acl, principals, host, operation)
            if result == DENY:
                return False
            if result == ALLOW:
                allowed = True
        if allowed:
            return True
        return self.allow_if_no_acl and not has_resource_acls

    def authorize_any(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """Kafka's authorizeByResourceType: may the caller do `operation` on at least one
        resource of the type (some ALLOW not cancelled by a DENY on the same or a wider pattern)?"""
        if principal in self.super_users:
            return True
        if self.authorize(principal, host, operation, resource_type, "\0pk-any-resource\0"):
            return True  # a wildcard ALLOW, or no ACL of the type and allow.everyone.if.no.acl.found
        principals = (principal, WILDCARD_PRINCIPAL)
        acls = self._acls_of(resource_type)
        denies = [a for a in acls if _entry_result(a, principals, host, operation) == DENY]
        for acl in acls:
            if _entry_result(acl, principals, host, operation) != ALLOW:
                continue
            if not any(_deny_covers(d, acl) for d in denies):
                return True
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: int, name: str) -> int:
        """The bit field of the operations allowed on a resource (the *_authorized_operations fields)."""
        bits = 0
        for op in SUPPORTED_OPERATIONS.get(resource_type, ()):
            if self.authorize(principal, host, op, resource_type, name):
                bits |= 1 << op
        return bits


def _deny_covers(deny: AclBinding, allow: AclBinding) -> bool:
    """Does `deny`'s pattern cover every resource `allow`'s pattern names?"""
    if deny.pattern_type == LITERAL:
        return deny.name == WILDCARD or (allow.pattern_type == LITERAL and deny.name == allow.name)
    return allow.name.startswith(deny.name)
