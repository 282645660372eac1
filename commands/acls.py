"""pk-acls: Kafka 4.4's kafka-acls.sh (org.apache.kafka.tools.AclCommand) over the bundled
engine's ACL store or, with --bootstrap-server, any cluster's CreateAcls/DescribeAcls/DeleteAcls.

The option checks run in AclCommand's order with its texts (AclUsageError: printed as one
line). The output is AclCommand's, byte for byte:

    Adding ACLs for resource `ResourcePattern(...)`: \\n \\t(entry)\\n\\t(entry)\\n\\n
    Acl (pattern=ResourcePattern(...), entry=(...)) already exists.
    Current ACLs for resource `ResourcePattern(...)`:\\n\\t(entry)\\n\\n

Kafka builds its sets of entries and resources in Java hash sets of enum-bearing objects, whose
order varies from one JVM to the next; pk's is the order the options name them (principals, then
operations, then hosts; ALLOW before DENY) and, for listings, the order the store answers. The
--principal listing follows Java's HashSet order, which depends on the names alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from pk.engine import acls as A

WILDCARD_HOST = "*"
ERROR_PREFIX = "Error while executing ACL command: "
_INVALID_REQUEST = "org.apache.kafka.common.errors.InvalidRequestException"
# SecurityUtils: an operation is named in PascalCase ("DescribeConfigs") or, case-insensitively,
# the same without underscores ("describeconfigs", "READ").
_PASCAL = {"".join(w.capitalize() for w in name.split("_")): code for name, code in A.OPERATIONS.items()}
_UPPER = {name.upper(): code for name, code in _PASCAL.items()}
# What --help lists for --operation (AclEntry.ACL_OPERATIONS, in the order Kafka prints them).
HELP_OPERATIONS = ("Write", "Read", "DescribeConfigs", "DescribeTokens", "Alter", "ClusterAction",
                   "IdempotentWrite", "CreateTokens", "TwoPhaseCommit", "Delete", "All", "Create",
                   "Describe", "AlterConfigs")
# The order Kafka 4.4 printed each type's supported operations in "only supports operations".
_SUPPORTED_TEXT = {
    A.TOPIC: "DELETE, WRITE, READ, DESCRIBE_CONFIGS, ALL, CREATE, ALTER, DESCRIBE, ALTER_CONFIGS",
    A.GROUP: "DELETE, READ, DESCRIBE_CONFIGS, ALL, DESCRIBE, ALTER_CONFIGS",
    A.CLUSTER: "DESCRIBE_CONFIGS, ALL, CREATE, ALTER, CLUSTER_ACTION, DESCRIBE, ALTER_CONFIGS, IDEMPOTENT_WRITE",
    A.TRANSACTIONAL_ID: "ALL, WRITE, DESCRIBE, TWO_PHASE_COMMIT",
    A.DELEGATION_TOKEN: "ALL, DESCRIBE",
    A.USER: "ALL, CREATE_TOKENS, DESCRIBE_TOKENS",
}


class AclUsageError(Exception):
    """A usage error: Kafka prints the text and its option help, exit 1."""


class AclCommandError(Exception):
    """A failure while executing: `Error while executing ACL command: <text>`, exit 1."""


@dataclass
class AclOptions:
    add: bool = False
    remove: bool = False
    list: bool = False
    bootstrap_server: str | None = None
    bootstrap_controller: str | None = None
    command_config: str | None = None
    topic: list[str] = field(default_factory=list)
    group: list[str] = field(default_factory=list)
    transactional_id: list[str] = field(default_factory=list)
    delegation_token: list[str] = field(default_factory=list)
    user_principal: list[str] = field(default_factory=list)
    cluster: bool = False
    resource_pattern_type: str | None = None
    operation: list[str] = field(default_factory=list)
    allow_principal: list[str] = field(default_factory=list)
    deny_principal: list[str] = field(default_factory=list)
    allow_host: list[str] = field(default_factory=list)
    deny_host: list[str] = field(default_factory=list)
    principal: list[str] = field(default_factory=list)
    producer: bool = False
    consumer: bool = False
    idempotent: bool = False
    force: bool = False

    def has(self, name: str) -> bool:
        value = getattr(self, name)
        return bool(value) if not isinstance(value, str) else True


# --------------------------------------------------------------------------- checks
_OPTION_NAMES = {"list": "list", "producer": "producer", "consumer": "consumer", "allow_host": "allow-host",
                 "allow_principal": "allow-principal", "deny_host": "deny-host",
                 "deny_principal": "deny-principal", "operation": "operation"}


def _invalid_with(opts: AclOptions, used: str, *invalid: str) -> None:
    """CommandLineUtils.checkInvalidArgs."""
    if opts.has(used):
        for other in invalid:
            if opts.has(other):
                raise AclUsageError(f'Option "[{_OPTION_NAMES[used]}]" can\'t be used with option '
                                    f'"[{_OPTION_NAMES[other]}]"')


def check_args(opts: AclOptions) -> None:
    """AclCommandOptions.checkArgs, in its order. Without --bootstrap-server (or
    --bootstrap-controller) pk works on the bundled engine's data directory."""
    if opts.bootstrap_server is not None and opts.bootstrap_controller is not None:
        raise AclUsageError("Only one of --bootstrap-server or --bootstrap-controller must be specified")
    if sum((opts.add, opts.remove, opts.list)) != 1:
        raise AclUsageError("Command must include exactly one action: --list, --add, --remove. ")
    _invalid_with(opts, "list", "producer", "consumer", "allow_host", "allow_principal", "deny_host",
                  "deny_principal")
    _invalid_with(opts, "producer", "operation", "deny_principal", "deny_host")
    _invalid_with(opts, "consumer", "operation", "deny_principal", "deny_host")
    if opts.principal and not opts.list:
        raise AclUsageError("The --principal option is only available if --list is set")
    if opts.producer and not opts.topic:
        raise AclUsageError("With --producer you must specify a --topic")
    if opts.idempotent and not opts.producer:
        raise AclUsageError("The --idempotent option is only available if --producer is set")
    if opts.consumer and (not opts.topic or not opts.group or (
            not opts.producer and (opts.cluster or opts.transactional_id))):
        raise AclUsageError("With --consumer you must specify a --topic and a --group and no --cluster or "
                            "--transactional-id option should be specified.")


def pattern_type(opts: AclOptions) -> int:
    """--resource-pattern-type (default LITERAL), any case, as jopt's enum converter reads it."""
    text = opts.resource_pattern_type
    if text is None:
        return A.LITERAL
    code = A.PATTERN_TYPES.get(text.strip().upper())
    if code is None or code == 0:
        raise AclCommandError(f"Cannot parse argument '{text}' of option resource-pattern-type")
    return code


def parse_principal(text: str) -> str:
    """SecurityUtils.parseKafkaPrincipal: `Type:name`, printed back as given."""
    if not text or len(text.split(":", 1)) != 2:
        raise AclCommandError(f"expected a string in format principalType:principalName but got {text}")
    return text


def parse_operation(text: str) -> int:
    name = text.strip()
    code = _PASCAL.get(name)
    if code is None:
        code = _UPPER.get(name.upper(), 0)
    return code


# --------------------------------------------------------------------------- resources and entries
Pattern = tuple  # (resource type, name, pattern type), as a ResourcePattern(Filter)
Entry = tuple  # (principal, host, operation, permission), as an AccessControlEntry


def pattern_text(p: Pattern) -> str:
    return (f"ResourcePattern(resourceType={A.RESOURCE_NAMES[p[0]]}, name={p[1]}, "
            f"patternType={A.PATTERN_NAMES[p[2]]})")


def entry_text(e: Entry) -> str:
    return (f"(principal={e[0]}, host={e[1]}, operation={A.OPERATION_NAMES[e[2]]}, "
            f"permissionType={A.PERMISSION_NAMES[e[3]]})")


def binding_text(p: Pattern, e: Entry) -> str:
    return f"(pattern={pattern_text(p)}, entry={entry_text(e)})"


def resource_filters(opts: AclOptions, die_if_none: bool = True) -> list[Pattern]:
    """getResourceFilter: one filter per named resource (--cluster only with a literal pattern)."""
    ptype = pattern_type(opts)
    filters: list[Pattern] = []

    def add(p: Pattern) -> None:
        if p not in filters:
            filters.append(p)

    for t in opts.topic:
        add((A.TOPIC, t.strip(), ptype))
    if ptype == A.LITERAL and (opts.cluster or opts.idempotent):
        add((A.CLUSTER, A.CLUSTER_NAME, A.LITERAL))
    for g in opts.group:
        add((A.GROUP, g.strip(), ptype))
    for t in opts.transactional_id:
        add((A.TRANSACTIONAL_ID, t, ptype))
    for t in opts.delegation_token:
        add((A.DELEGATION_TOKEN, t.strip(), ptype))
    for u in opts.user_principal:
        add((A.USER, u.strip(), ptype))
    if not filters and die_if_none:
        raise AclUsageError("You must provide at least one resource: --topic <topic> or --cluster or --group "
                            "<group> or --delegation-token <Delegation Token ID>")
    return filters


def _hosts(hosts: list[str], principals: list[str]) -> list[str]:
    if hosts:
        return list(dict.fromkeys(h.strip() for h in hosts))
    return [WILDCARD_HOST] if principals else []


def entries(opts: AclOptions, operations: list[int]) -> list[Entry]:
    """getAcl: every principal x operation x host, ALLOW then DENY."""
    allowed = list(dict.fromkeys(parse_principal(p.strip()) for p in opts.allow_principal))
    denied = list(dict.fromkeys(parse_principal(p.strip()) for p in opts.deny_principal))
    out: list[Entry] = []
    for principals, hosts, permission in ((allowed, _hosts(opts.allow_host, allowed), A.ALLOW),
                                          (denied, _hosts(opts.deny_host, denied), A.DENY)):
        for principal in principals:
            for op in operations:
                if op == A.ANY:
                    raise AclCommandError("operation must not be ANY")
                for host in hosts:
                    e = (principal, host, op, permission)
                    if e not in out:
                        out.append(e)
    return out


def filter_to_entries(opts: AclOptions) -> dict[Pattern, list[Entry]]:
    """getResourceFilterToAcls: the entries each resource filter gets (--producer and
    --consumer imply theirs), checked against what each resource type supports."""
    result: dict[Pattern, list[Entry]] = {}
    if not opts.producer and not opts.consumer:
        ops = list(dict.fromkeys(parse_operation(o) for o in (opts.operation or ["All"])))
        acl = entries(opts, ops)
        for f in resource_filters(opts):
            result[f] = acl
    if opts.producer:
        filters = resource_filters(opts)
        topic_acl = entries(opts, [A.WRITE, A.DESCRIBE, A.CREATE])
        txn_acl = entries(opts, [A.WRITE, A.DESCRIBE])
        for f in filters:
            if f[0] == A.TOPIC:
                result[f] = topic_acl
            elif f[0] == A.TRANSACTIONAL_ID:
                result[f] = txn_acl
        if opts.idempotent:
            result[(A.CLUSTER, A.CLUSTER_NAME, A.LITERAL)] = entries(opts, [A.IDEMPOTENT_WRITE])
    if opts.consumer:  # READ, DESCRIBE on topics and READ on groups, beside --producer's
        for f in resource_filters(opts):
            if f[0] in (A.TOPIC, A.GROUP):
                acl = entries(opts, [A.READ, A.DESCRIBE] if f[0] == A.TOPIC else [A.READ])
                result[f] = acl + [e for e in result.get(f, []) if e not in acl]
    for f, acl in result.items():
        valid = set(A.SUPPORTED_OPERATIONS[f[0]]) | {A.ALL}
        if any(e[2] not in valid for e in acl):
            raise AclUsageError(f"ResourceType {A.RESOURCE_NAMES[f[0]]} only supports operations "
                                f"[{_SUPPORTED_TEXT[f[0]]}]")
    return result


# --------------------------------------------------------------------------- the actions
class AclBackend:
    """Where ACLs live: describe(filter) -> [(pattern, entry)] in the store's order;
    create([(pattern, entry)]) and delete([filter]), raising AclCommandError."""

    def describe(self, f: A.AclFilter) -> list[tuple[Pattern, Entry]]:
        raise NotImplementedError

    def create(self, bindings: list[tuple[Pattern, Entry]]) -> None:
        raise NotImplementedError

    def delete(self, filters: list[A.AclFilter]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


def _pattern_filter(p: Pattern, entry: Entry | None = None) -> A.AclFilter:
    if entry is None:
        return A.AclFilter(p[0], p[1], p[2])
    return A.AclFilter(p[0], p[1], p[2], entry[0], entry[1], entry[2], entry[3])


def add_acls(backend: AclBackend, opts: AclOptions, out: Callable[[str], None]) -> None:
    """Kafka 4.4's addAcls: entries a resource has already are reported, the others added."""
    if pattern_type(opts) not in (A.LITERAL, A.PREFIXED):
        raise AclUsageError(f"A '--resource-pattern-type' value of '{A.PATTERN_NAMES[pattern_type(opts)]}' "
                            f"is not valid when adding acls.")
    to_add = filter_to_entries(opts)
    if any(not acl for acl in to_add.values()):
        raise AclUsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    for pattern, acl in to_add.items():
        present = {e for _, e in backend.describe(_pattern_filter(pattern))}
        new = []
        for e in acl:
            if e in present:
                out(f"Acl {binding_text(pattern, e)} already exists.\n")
            else:
                new.append(e)
        if new:
            out(f"Adding ACLs for resource `{pattern_text(pattern)}`: \n "
                + "\n".join("\t" + entry_text(e) for e in new) + "\n\n")
            backend.create([(pattern, e) for e in new])


def remove_acls(backend: AclBackend, opts: AclOptions, out: Callable[[str], None],
                confirm: Callable[[], bool]) -> None:
    for pattern, acl in filter_to_entries(opts).items():
        if not acl:
            question = f"Are you sure you want to delete all ACLs for resource filter `{pattern_text(pattern)}`? (y/n)"
            filters = [_pattern_filter(pattern)]
        else:
            question = ("Are you sure you want to remove ACLs: \n " + "\n".join("\t" + entry_text(e) for e in acl)
                        + f"\n from resource filter `{pattern_text(pattern)}`? (y/n)")
            filters = [_pattern_filter(pattern, e) for e in acl]
        if not opts.force:  # (--force asks nothing)
            out(question + "\n")
            if not confirm():
                continue
        backend.delete(filters)


def listed_acls(backend: AclBackend, opts: AclOptions) -> list[tuple[str | None, dict[Pattern, list[Entry]]]]:
    """What --list reports: (None, entries by resource) or, with --principal, one
    (principal, its entries by resource) per principal in Kafka's order."""
    filters = resource_filters(opts, die_if_none=False)
    principals = [parse_principal(p.strip()) for p in opts.principal]
    found: list[tuple[Pattern, Entry]] = []
    for f in [_pattern_filter(p) for p in filters] or [A.AclFilter()]:
        found += backend.describe(f)
    by_resource: dict[Pattern, list[Entry]] = {}
    for pattern, e in found:
        entries_of = by_resource.setdefault(pattern, [])
        if e not in entries_of:
            entries_of.append(e)
    if not principals:
        return [(None, by_resource)]
    return [(principal, {p: [e for e in es if e[0] == principal] for p, es in by_resource.items()})
            for principal in _java_set_order(principals)]


def list_acls(backend: AclBackend, opts: AclOptions, out: Callable[[str], None]) -> None:
    for principal, by_resource in listed_acls(backend, opts):
        if principal is not None:
            out(f"ACLs for principal `{principal}`\n")
        _print_resources(by_resource, out)


def _java_set_order(principals: list[str]) -> list[str]:
    """The order Kafka iterates its HashSet of KafkaPrincipals in (their hash is their strings')."""
    from pk.engine.javacompat import hashmap_order, string_hash

    def principal_hash(text: str) -> int:
        kind, name = text.split(":", 1)
        return (31 * string_hash(kind) + string_hash(name)) & 0xFFFFFFFF

    return hashmap_order(principals, hash_of=principal_hash)


def _print_resources(by_resource: dict[Pattern, list[Entry]], out: Callable[[str], None]) -> None:
    for pattern, es in by_resource.items():
        if es:
            out(f"Current ACLs for resource `{pattern_text(pattern)}`:\n"
                + "\n".join("\t" + entry_text(e) for e in es) + "\n\n")


# --------------------------------------------------------------------------- the bundled engine
class EngineAcls(AclBackend):
    """The ACLs of a data directory (what pk-server-start's authorizer reads), validated as
    the broker validates CreateAcls."""

    def __init__(self, data_dir: str | None):
        from pk.engine.paths import default_data_dir

        self.store = A.AclStore(os.path.abspath(data_dir or default_data_dir()))

    def describe(self, f: A.AclFilter) -> list[tuple[Pattern, Entry]]:
        self.store.refresh()
        return [((a.resource_type, a.name, a.pattern_type), (a.principal, a.host, a.operation, a.permission))
                for a in self.store.describe(f)]

    def create(self, bindings: list[tuple[Pattern, Entry]]) -> None:
        acls = [A.AclBinding(*p, *e) for p, e in bindings]
        for acl in acls:
            try:
                A.validate_binding(acl)
            except A.InvalidAcl as exc:
                raise AclCommandError(f"{_INVALID_REQUEST}: {exc}") from None
        self.store.create(acls)

    def delete(self, filters: list[A.AclFilter]) -> None:
        self.store.delete(filters)
