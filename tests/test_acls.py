"""The ACL model, store and decision (engine/acls.py), and pk-acls on the bundled engine."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import tool_path
from pk.engine import acls as A

ALICE, BOB = "User:alice", "User:bob"


def binding(name, op, perm=A.ALLOW, principal=ALICE, host="*", rtype=A.TOPIC, pattern=A.LITERAL):
    return A.AclBinding(rtype, name, pattern, principal, host, op, perm)


@pytest.fixture
def store(tmp_path):
    return A.AclStore(str(tmp_path))


def decide(store, *bindings, super_users=(), allow_if_no_acl=False):
    store.create(bindings)
    return A.AclAuthorizer(store, super_users, allow_if_no_acl)


def test_deny_wins_over_allow(store):
    auth = decide(store, binding("t", A.READ), binding("t", A.READ, A.DENY, principal="User:*"))
    assert not auth.authorize(ALICE, "1.1.1.1", A.READ, A.TOPIC, "t")


def test_literal_wildcard_and_prefixed_patterns(store):
    auth = decide(store, binding("orders", A.WRITE), binding("*", A.READ),
                  binding("log-", A.DELETE, pattern=A.PREFIXED))
    assert auth.authorize(ALICE, "h", A.WRITE, A.TOPIC, "orders")
    assert not auth.authorize(ALICE, "h", A.WRITE, A.TOPIC, "orders2")  # literal: the exact name only
    assert auth.authorize(ALICE, "h", A.READ, A.TOPIC, "anything")      # "*": every topic
    assert auth.authorize(ALICE, "h", A.DELETE, A.TOPIC, "log-app")
    assert not auth.authorize(ALICE, "h", A.DELETE, A.TOPIC, "lo")
    assert not auth.authorize(ALICE, "h", A.READ, A.GROUP, "anything")  # other resource types untouched


def test_principal_wildcard_host_and_super_users(store):
    auth = decide(store, binding("t", A.READ, principal="User:*", host="10.0.0.1"), super_users=["User:root"])
    assert auth.authorize(BOB, "10.0.0.1", A.READ, A.TOPIC, "t")
    assert not auth.authorize(BOB, "10.0.0.2", A.READ, A.TOPIC, "t")
    assert auth.authorize("User:root", "any", A.ALTER, A.CLUSTER, A.CLUSTER_NAME)


def test_implied_operations_only_from_allow(store):
    auth = decide(store, binding("t", A.WRITE), binding("t", A.ALTER_CONFIGS), binding("u", A.READ, A.DENY),
                  binding("u", A.DESCRIBE, principal=BOB))
    assert auth.authorize(ALICE, "h", A.DESCRIBE, A.TOPIC, "t")           # WRITE implies DESCRIBE
    assert auth.authorize(ALICE, "h", A.DESCRIBE_CONFIGS, A.TOPIC, "t")   # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    assert not auth.authorize(ALICE, "h", A.READ, A.TOPIC, "t")
    # a DENY READ does not deny DESCRIBE, but the resource has ACLs: no default allow
    assert not auth.authorize(ALICE, "h", A.DESCRIBE, A.TOPIC, "u")
    assert A.AclAuthorizer(store, (), True).authorize(ALICE, "h", A.DESCRIBE, A.TOPIC, "no-acls-here")
    assert not A.AclAuthorizer(store, (), True).authorize(ALICE, "h", A.DESCRIBE, A.TOPIC, "u")


def test_all_and_authorized_operations(store):
    auth = decide(store, binding("t", A.ALL), binding("t", A.DELETE, A.DENY))
    bits = auth.authorized_operations(ALICE, "h", A.TOPIC, "t")
    assert bits == sum(1 << op for op in A.SUPPORTED_OPERATIONS[A.TOPIC] if op != A.DELETE)


def test_authorize_any_resource(store):
    auth = decide(store, binding("p-", A.WRITE, pattern=A.PREFIXED), binding("p-", A.WRITE, A.DENY, principal=BOB))
    assert auth.authorize_any(ALICE, "h", A.WRITE, A.TOPIC)
    assert not auth.authorize_any(BOB, "h", A.WRITE, A.TOPIC)
    assert not auth.authorize_any(ALICE, "h", A.READ, A.TOPIC)


def test_filters_any_and_match(store):
    acls = [binding("orders", A.READ), binding("ord", A.WRITE, pattern=A.PREFIXED), binding("*", A.DESCRIBE),
            binding("orders", A.READ, rtype=A.GROUP)]
    store.create(acls)
    any_exact = A.AclFilter(A.TOPIC, "orders", A.ANY)
    assert store.describe(any_exact) == [acls[0]]
    match = A.AclFilter(A.TOPIC, "orders", A.MATCH)
    assert store.describe(match) == acls[:3]
    assert store.describe(A.AclFilter(A.ANY, None, A.ANY, principal=ALICE, operation=A.READ)) == [acls[0], acls[3]]
    assert store.delete([A.AclFilter(A.TOPIC, None, A.PREFIXED)]) == [[acls[1]]]
    assert len(store.acls) == 3


def test_validation_texts():
    with pytest.raises(A.InvalidAcl, match="The only valid name for the CLUSTER resource is kafka-cluster"):
        A.validate_binding(binding("c", A.ALTER, rtype=A.CLUSTER))
    with pytest.raises(A.InvalidAcl, match="Invalid patternType MATCH"):
        A.validate_binding(binding("t", A.READ, pattern=A.MATCH))
    with pytest.raises(A.InvalidAcl, match="Unknown entryFilter."):
        A.validate_filter(A.AclFilter(operation=0))


def test_store_is_durable_and_shared(tmp_path):
    """Another process's store sees the change at refresh; concurrent writers lose nothing."""
    first, second = A.AclStore(str(tmp_path)), A.AclStore(str(tmp_path))
    first.create([binding("t", A.READ)])
    assert second.refresh() and second.acls == [binding("t", A.READ)]
    assert not second.refresh()  # unchanged: one stat, no read
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: A.AclStore(str(tmp_path)).create([binding(f"t{i}", A.READ)]), range(20)))
    doc = json.load(open(os.path.join(tmp_path, ".pk", "acls.json")))
    assert len(doc["acls"]) == 21
    assert doc["acls"][0] == {"resourceType": "TOPIC", "name": "t", "patternType": "LITERAL", "principal": ALICE,
                              "host": "*", "operation": "READ", "permissionType": "ALLOW"}


# --------------------------------------------------------------------------- pk-acls on the engine
def pk_acls(data_dir, *args, input=None):
    return subprocess.run([tool_path("pk-acls"), "--data-dir", data_dir, *args], capture_output=True, text=True,
                          input=input, timeout=60)


def test_pk_acls_remove_asks_first(tmp_path):
    d = str(tmp_path)
    assert pk_acls(d, "--add", "--allow-principal", ALICE, "--topic", "t").returncode == 0
    no = pk_acls(d, "--remove", "--topic", "t", input="n\n")
    assert no.stdout == ("Are you sure you want to delete all ACLs for resource filter "
                         "`ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`? (y/n)\n")
    assert "Current ACLs" in pk_acls(d, "--list").stdout
    yes = pk_acls(d, "--remove", "--allow-principal", ALICE, "--topic", "t", input="y\n")
    assert yes.stdout == ("Are you sure you want to remove ACLs: \n"
                          " \t(principal=User:alice, host=*, operation=ALL, permissionType=ALLOW)\n"
                          " from resource filter `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`? "
                          "(y/n)\n")
    assert pk_acls(d, "--list").stdout == ""


def test_pk_acls_errors_are_one_line(tmp_path):
    r = pk_acls(str(tmp_path), "--add", "--allow-principal", ALICE, "--user-principal", "User:x",
                "--operation", "Read")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "ResourceType USER only supports operations [ALL, CREATE_TOKENS, DESCRIBE_TOKENS]\n"
    r = subprocess.run([tool_path("pk-acls"), "--bootstrap-server", "nohost.invalid:9092", "--list"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
