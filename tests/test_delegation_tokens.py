"""Delegation tokens on pk-server-start, driven by pk-delegation-tokens and pk's wire client:
Create/Renew/Expire/DescribeDelegationToken with Kafka's rules (authenticated connections only,
owners and renewers, ACLs on USER and DELEGATION_TOKEN resources, lifetimes, expiry sweeps),
tokens in the data directory without their HMACs, and SCRAM logins with a token
(tokenauth=true) whose principal is the token's owner."""

from __future__ import annotations

import base64
import hashlib
import hmac as hmac_lib
import json
import os
import re
import subprocess
import time

import pytest

import security_setup as S
from conftest import BrokerProcess, free_port, tool_path

SECRET = "pk-token-secret"
USERS = {"dave": "dave-secret", "erin": "erin-secret"}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
TABLE_ROW = re.compile(r"^(\S+) (\S+) (User:\S+)\s+(User:\S+)\s+(\[[^\]]*\])\s+(\S+) (\S+) (\S+)$")


def _secure_broker(data_dir: str, certs, **overrides) -> BrokerProcess:
    os.makedirs(data_dir)
    sasl_port = free_port()
    broker = BrokerProcess(data_dir)
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_SSL://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:ANONYMOUS;User:admin",
        **S.secure_listener_settings(certs),
        **overrides,
    })
    broker.sasl_ssl = f"127.0.0.1:{sasl_port}"
    broker.start()
    return broker


def _create_scram_users(bootstrap: str) -> None:
    from confluent_kafka.admin import (
        AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for user, password in USERS.items():
        for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
            upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 4096), password.encode())
            for future in admin.alter_user_scram_credentials([upsert]).values():
                assert future.result(timeout=30) is None


@pytest.fixture(scope="module")
def broker(tmp_path_factory, tls_certs):
    """pk-server-start with tokens enabled (expired ones swept every 200 ms), an authorizer, users
    dave and erin (SCRAM) and admin (PLAIN, a super user); `.configs` are client config files."""
    base = tmp_path_factory.mktemp("tokens-pk")
    b = _secure_broker(str(base / "data"), tls_certs, **{
        "delegation.token.secret.key": SECRET, "delegation.token.expiry.check.interval.ms": "200"})
    try:
        _create_scram_users(b.bootstrap)
        write = lambda name, config: S.write_properties(str(base / f"{name}.properties"), config)  # noqa: E731
        b.configs = {user: write(user, S.client_config(tls_certs, "SASL_SSL", "SCRAM-SHA-512", user, password))
                     for user, password in USERS.items()}
        b.configs["admin"] = write("admin", S.client_config(tls_certs, "SASL_SSL", "PLAIN", "admin", "admin-secret"))
        b.configs["plaintext"] = write("plaintext", {})
        b.base, b.certs = base, tls_certs
        yield b
    finally:
        b.stop()


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([tool_path("pk-delegation-tokens"), *args], capture_output=True, text=True, timeout=60)


def _as(broker, user: str, *args: str, bootstrap: str | None = None) -> subprocess.CompletedProcess:
    return _tool("--bootstrap-server", bootstrap or broker.sasl_ssl, "--command-config", broker.configs[user], *args)


def _rows(output: str) -> list[tuple]:
    return [m.groups() for m in map(TABLE_ROW.match, output.splitlines()) if m]


def _create(broker, user: str, *args: str) -> tuple[str, str]:
    """(token id, HMAC) of a token made by `user`."""
    created = _as(broker, user, "--create", *args, *(() if "--max-life-time-period" in args
                                                      else ("--max-life-time-period", "-1")))
    assert created.returncode == 0, created.stderr
    (row,) = _rows(created.stdout)
    return row[0], row[1]


def _token_config(broker, token_id: str, hmac: str, mechanism: str = "SCRAM-SHA-256") -> str:
    config = S.client_config(broker.certs, "SASL_SSL", mechanism, token_id, hmac)
    config["sasl.jaas.config"] = config["sasl.jaas.config"].replace(";", ' tokenauth="true";')
    return S.write_properties(str(broker.base / f"token-{token_id}.properties"), config)


def test_create_describe_renew_expire(broker):
    created = _as(broker, "dave", "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:erin")
    assert created.returncode == 0, created.stderr
    lines = created.stdout.split("\n")
    assert lines[0] == "Calling create token operation with renewers :[User:erin] , max-life-time-period :-1"
    assert re.fullmatch(r"Created delegation token with tokenId : [A-Za-z0-9_][A-Za-z0-9_-]{21}", lines[1])
    assert lines[2:4] == ["", "TOKENID         HMAC                           OWNER           REQUESTER       "
                              "RENEWERS                  ISSUEDATE       EXPIRYDATE      MAXDATE        "]
    (token_id, hmac, owner, requester, renewers, issued, expires, max_date), = _rows(created.stdout)
    assert (owner, requester, renewers) == ("User:dave", "User:dave", "[User:erin]")
    assert base64.b64decode(hmac) == hmac_lib.new(SECRET.encode(), token_id.encode(), hashlib.sha512).digest()
    # the default lifetimes: a day to expiry, a week at most
    day = lambda text: time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M")) // 86400  # noqa: E731
    assert (day(expires) - day(issued), day(max_date) - day(issued)) == (1, 7)

    # Kafka's tool asks for no owner when none is given: no tokens
    mine = _as(broker, "dave", "--describe")
    assert mine.stdout.startswith("Calling describe token operation for current user.\nTotal number of tokens : 0\n")
    for user, owners in (("dave", ["User:dave"]), ("erin", ["User:dave"]), ("erin", ["User:nobody", "User:erin"])):
        described = _as(broker, user, "--describe", *(a for o in owners for a in ("--owner-principal", o)))
        assert described.stdout.startswith(f"Calling describe token operation for owners: [{', '.join(owners)}]\n"
                                           f"Total number of tokens : 1\nTOKENID"), described.stdout
        assert [r[:2] for r in _rows(described.stdout)] == [(token_id, hmac)]
    # neither owner nor renewer: a super user (admin) is allowed every token
    assert "Total number of tokens : 1" in _as(broker, "admin", "--describe", "--owner-principal", "User:dave").stdout

    renewed = _as(broker, "erin", "--renew", "--hmac", hmac, "--renew-time-period", "3600000")
    assert renewed.returncode == 0, renewed.stderr
    assert re.fullmatch(r"Calling renew token operation with hmac :\S+ , renew-time-period :3600000\n"
                        r"Completed renew operation\. New expiry date : \d{4}-\d\d-\d\dT\d\d:\d\d", renewed.stdout)
    mismatch = _as(broker, "admin", "--renew", "--hmac", hmac, "--renew-time-period", "-1")
    assert (mismatch.returncode, mismatch.stderr) == (1, "org.apache.kafka.common.errors."
                                                         "DelegationTokenOwnerMismatchException: Specified Principal "
                                                         "is not valid Owner/Renewer.\n")

    expired = _as(broker, "dave", "--expire", "--hmac", hmac, "--expiry-time-period", "-1")
    assert expired.returncode == 0, expired.stderr
    assert expired.stdout.split("\n")[1].startswith("Completed expire operation. New expiry date : ")
    assert _rows(_as(broker, "dave", "--describe", "--owner-principal", "User:dave").stdout) == []
    gone = _as(broker, "dave", "--renew", "--hmac", hmac, "--renew-time-period", "-1")
    assert gone.stderr == ("org.apache.kafka.common.errors.DelegationTokenNotFoundException: Delegation Token is not "
                           "found on server.\n")


def test_tokens_are_kept_without_their_hmacs(broker):
    token_id, hmac = _create(broker, "erin")
    with open(os.path.join(broker.data_dir, ".pk", "delegation-tokens.json")) as f:
        text = f.read()
    stored = json.loads(text)["tokens"][token_id]
    assert (stored["owner"], stored["requester"], stored["renewers"]) == ("User:erin", "User:erin", [])
    assert hmac not in text and base64.b64decode(hmac).hex() not in text and SECRET not in text


def test_refusals(broker, tmp_path, tls_certs):
    plaintext = _as(broker, "plaintext", "--create", "--max-life-time-period", "-1", bootstrap=broker.bootstrap)
    assert (plaintext.returncode, plaintext.stderr) == (
        1, "org.apache.kafka.common.errors.UnsupportedByAuthenticationException: Delegation Token requests are not "
           "allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.\n")
    assert plaintext.stdout == "Calling create token operation with renewers :[] , max-life-time-period :-1\n"
    group = _as(broker, "dave", "--create", "--max-life-time-period", "5000", "--renewer-principal", "Group:g")
    assert group.stderr == ("org.apache.kafka.common.errors.InvalidPrincipalTypeException: Supplied principalType "
                            "is not supported.\n")

    # a token for another owner needs CREATE_TOKENS on that user
    for_erin = ("--create", "--max-life-time-period", "-1", "--owner-principal", "User:erin")
    refused = _as(broker, "dave", *for_erin)
    assert refused.stderr == ("org.apache.kafka.common.errors.DelegationTokenAuthorizationException: Delegation "
                              "Token authorization failed.\n")
    _allow(broker, "User:dave", "CreateTokens", "USER", "User:erin")
    allowed = _eventually(lambda: (lambda r: r if r.returncode == 0 else None)(_as(broker, "dave", *for_erin)))
    assert allowed is not None
    ((token_id, _, owner, requester, *_),) = _rows(allowed.stdout)
    assert (owner, requester) == ("User:erin", "User:dave")
    # the requester is neither owner nor renewer: DESCRIBE on the token, or DESCRIBE_TOKENS on its owner
    wanted = ("--describe", "--owner-principal", "User:erin")
    assert token_id not in _as(broker, "dave", *wanted).stdout
    _allow(broker, "User:dave", "Describe", "DELEGATION_TOKEN", token_id)
    assert _eventually(lambda: [r[0] for r in _rows(_as(broker, "dave", *wanted).stdout)] == [token_id])

    disabled = _secure_broker(str(tmp_path / "data"), tls_certs)
    try:
        _create_scram_users(disabled.bootstrap)
        answer = _as(broker, "dave", "--describe", bootstrap=disabled.sasl_ssl)
        assert (answer.returncode, answer.stderr) == (1, "org.apache.kafka.common.errors."
                                                         "DelegationTokenDisabledException: Delegation Token feature "
                                                         "is not enabled.\n")
    finally:
        disabled.stop()


def _allow(broker, principal: str, operation: str, resource_type: str, name: str) -> None:
    """An ALLOW ACL, added with pk-acls to the broker's data directory (librdkafka's admin API
    names no USER or DELEGATION_TOKEN resources); the broker reads it within a second."""
    flag = {"USER": "--user-principal", "DELEGATION_TOKEN": "--delegation-token", "TOPIC": "--topic"}[resource_type]
    done = subprocess.run([tool_path("pk-acls"), "--data-dir", broker.data_dir, "--add", "--allow-principal",
                           principal, "--operation", operation, flag, name], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def _eventually(check, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.1)


def test_login_with_a_token(broker):
    """SCRAM with tokenauth=true: the principal is the owner (its ACLs apply), and token requests
    from such a connection are refused; a wrong HMAC or an unknown id fails the login."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from pk.commands.backends.kafka_admin import AdminError
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.properties import load_properties
    from pk.engine.protocol import ApiKey

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(t, 1) for t in ("dave-only", "nobodys")]).values():
        future.result(timeout=30)
    _allow(broker, "User:dave", "Describe", "TOPIC", "dave-only")
    token_id, hmac = _create(broker, "dave")
    # the ACL counts once the broker has read it (at its next tick): seen by dave's own login
    _eventually(lambda: "dave-only" in subprocess.run(
        [tool_path("pk-topics"), "--bootstrap-server", broker.sasl_ssl, "--command-config", broker.configs["dave"],
         "--list"], capture_output=True, text=True, timeout=60).stdout)
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        config = _token_config(broker, token_id, hmac, mechanism)
        client = WireClient(broker.sasl_ssl, 20, security=connection_security(load_properties(config)))
        try:
            metadata = client.call(ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                         "include_topic_authorized_operations": False})
            assert [t["name"] for t in metadata["topics"]] == ["dave-only"]
            for key, version, body in ((ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": None}),
                                       (ApiKey.RENEW_DELEGATION_TOKEN, 2,
                                        {"hmac": base64.b64decode(hmac), "renew_period_ms": -1})):
                assert client.call(key, version, body)["error_code"] == 64  # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
        finally:
            client.close()
    own_login = _as(broker, "dave", "--describe", "--owner-principal", "User:dave")  # dave's password login still may
    assert own_login.returncode == 0
    broker.configs["token"] = _token_config(broker, token_id, hmac)
    assert _as(broker, "token", "--describe").stderr.startswith(
        "org.apache.kafka.common.errors.UnsupportedByAuthenticationException: ")
    wrong = base64.b64encode(b"x" * 64).decode()
    for bad_id, bad_hmac in ((token_id, wrong), ("no-such-token", hmac)):
        config = _token_config(broker, bad_id, bad_hmac)
        with pytest.raises(AdminError, match="Authentication failed during authentication due to invalid "
                                             "credentials with SASL mechanism SCRAM-SHA-256"):
            WireClient(broker.sasl_ssl, 20, security=connection_security(load_properties(config)))
    # the token id and HMAC are no user's password
    user_login = S.write_properties(str(broker.base / "as-user.properties"),
                                    S.client_config(broker.certs, "SASL_SSL", "SCRAM-SHA-256", token_id, hmac))
    with pytest.raises(AdminError):
        WireClient(broker.sasl_ssl, 20, security=connection_security(load_properties(user_login)))


def test_lifetimes_and_expiry_sweep(broker):
    token_id, hmac = _create(broker, "dave", "--max-life-time-period", "600000")
    described = _as(broker, "dave", "--describe", "--owner-principal", "User:dave").stdout
    (row,) = [r for r in _rows(described) if r[0] == token_id]
    assert row[6] == row[7]  # expiry capped by the ten-minute maximum
    short_id, short_hmac = _create(broker, "dave", "--max-life-time-period", "300")
    path = os.path.join(broker.data_dir, ".pk", "delegation-tokens.json")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with open(path) as f:
            if short_id not in json.load(f)["tokens"]:
                break
        time.sleep(0.1)
    else:
        pytest.fail("the expired token was not removed")
    assert "Delegation token expired for token: " + short_id in broker.log()
    again = _as(broker, "dave", "--renew", "--hmac", short_hmac, "--renew-time-period", "-1")
    assert "DelegationTokenNotFoundException" in again.stderr
    # expire in the future: the new expiry is capped by the token's maximum too
    later = _as(broker, "dave", "--expire", "--hmac", hmac, "--expiry-time-period", "60000")
    assert later.returncode == 0, later.stderr


def test_raw_versions(broker):
    """v1 and v2 carry no owner or requester: the token is the caller's own."""
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.properties import load_properties
    from pk.engine.protocol import ApiKey

    client = WireClient(broker.sasl_ssl, 20, security=connection_security(load_properties(broker.configs["erin"])))
    try:
        created = client.call(ApiKey.CREATE_DELEGATION_TOKEN, 1, {"renewers": [], "max_lifetime_ms": -1})
        assert (created["error_code"], created["principal_name"]) == (0, "erin")
        assert created["token_requester_principal_name"] == ""  # not in v1: the decoder's default
        described = client.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2,
                                {"owners": [{"principal_type": "User", "principal_name": "erin"}]})
        assert created["token_id"] in [t["token_id"] for t in described["tokens"]]
        assert {t["token_requester_principal_name"] for t in described["tokens"]} == {""}
        assert client.call(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": []})["tokens"] == []
        renewed = client.call(ApiKey.RENEW_DELEGATION_TOKEN, 1, {"hmac": created["hmac"], "renew_period_ms": 1000})
        assert renewed["error_code"] == 0 and renewed["expiry_timestamp_ms"] <= int(time.time() * 1000) + 1000
        expired = client.call(ApiKey.EXPIRE_DELEGATION_TOKEN, 1, {"hmac": created["hmac"], "expiry_time_period_ms": -1})
        assert expired["error_code"] == 0
        assert client.call(ApiKey.EXPIRE_DELEGATION_TOKEN, 1,
                           {"hmac": created["hmac"], "expiry_time_period_ms": -1})["error_code"] == 62
    finally:
        client.close()


@pytest.mark.parametrize("args, message", [
    ((), None),
    (("--describe",), 'Missing required argument "[bootstrap-server]"'),
    (("--describe", "--bootstrap-server", "h:1"), 'Missing required argument "[command-config]"'),
    (("--create", "--describe", "--bootstrap-server", "h:1", "--command-config", "c"),
     "Command must include exactly one action: --create, --renew, --expire or --describe"),
    (("--create", "--bootstrap-server", "h:1", "--command-config", "c"),
     'Missing required argument "[max-life-time-period]"'),
    (("--renew", "--bootstrap-server", "h:1", "--command-config", "c", "--hmac", "x"),
     'Missing required argument "[renew-time-period]"'),
    (("--expire", "--bootstrap-server", "h:1", "--command-config", "c", "--hmac", "x"),
     'Missing required argument "[expiry-time-period]"'),
    (("--create", "--bootstrap-server", "h:1", "--command-config", "c", "--max-life-time-period", "5", "--hmac", "x"),
     'Option "[create]" can\'t be used with option "[hmac]"'),
    (("--renew", "--bootstrap-server", "h:1", "--command-config", "c", "--hmac", "x", "--renew-time-period", "1",
      "--owner-principal", "User:a"), 'Option "[renew]" can\'t be used with option "[owner-principal]"'),
    (("--describe", "--bootstrap-server", "h:1", "--command-config", "c", "--hmac", "x"),
     'Option "[describe]" can\'t be used with option "[hmac]"'),
    (("--create", "--bootstrap-server", "h:1", "--command-config", "no-such.properties", "--max-life-time-period",
      "5"), "no-such.properties"),
    (("--foo",), "foo is not a recognized option"),
])
def test_usage_errors(args, message, tmp_path):
    done = subprocess.run([tool_path("pk-delegation-tokens"), *args], capture_output=True, text=True, timeout=30,
                          cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    if message is None:  # no arguments: the description and the options, as Kafka's tool
        assert done.stderr.startswith("This tool helps to create, renew, expire, or describe delegation tokens.\n")
    else:
        assert done.stderr == message + "\n"


def test_bad_values_fail_as_kafkas_tool(broker):
    """Kafka's texts for a principal it cannot parse, a number jopt leaves aside, bad base64."""
    bad_principal = _as(broker, "dave", "--describe", "--owner-principal", "bad")
    assert (bad_principal.returncode, bad_principal.stdout, bad_principal.stderr) == (
        1, "", "expected a string in format principalType:principalName but got bad\n")
    not_a_number = _as(broker, "dave", "--create", "--max-life-time-period", "abc")
    assert not_a_number.stderr == ('Cannot invoke "java.lang.Long.longValue()" because the return value of '
                                   '"joptsimple.OptionSet.valueOf(joptsimple.OptionSpec)" is null\n')
    for hmac, message in (("a-b", "Illegal base64 character 2d"), ("abcde", "Last unit does not have enough valid bits"),
                          ("ab=c", "Input byte array has wrong 4-byte ending unit")):
        answer = _as(broker, "dave", "--renew", "--hmac", hmac, "--renew-time-period", "1")
        assert (answer.returncode, answer.stderr) == (1, message + "\n")


def test_a_token_session_ends_with_the_token(broker):
    """The session of a token login lasts until the token's expiry (told to the client as its
    session lifetime); the next request after it closes the connection."""
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.properties import load_properties
    from pk.engine.protocol import ApiKey

    token_id, hmac = _create(broker, "dave", "--max-life-time-period", "1500")
    config = load_properties(_token_config(broker, token_id, hmac))
    client = WireClient(broker.sasl_ssl, 20, security=connection_security(config))
    try:
        describe_cluster = (ApiKey.DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": False})
        assert client.call(*describe_cluster)["error_code"] == 0
        time.sleep(1.6)  # the token's lifetime: nothing to wait for but the clock
        with pytest.raises(ConnectionError):
            client.call(*describe_cluster)
    finally:
        client.close()


def test_the_secret_is_never_described(broker):
    """DescribeConfigs of the broker: the token secret is a PASSWORD config, as in Kafka."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ResourceType.BROKER, "0")
    entries = admin.describe_configs([resource])[resource].result(timeout=30)
    secret = entries["delegation.token.secret.key"]
    assert (secret.value, secret.is_sensitive) == (None, True)
    assert entries["delegation.token.max.lifetime.ms"].value == "604800000"
    assert entries["delegation.token.expiry.check.interval.ms"].value == "200"
