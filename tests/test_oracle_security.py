"""Listener security against the real Kafka 4.4: Kafka's own Java clients and tools against
pk-server-start over SASL_SSL (SCRAM, PLAIN) and SSL (client certificates); pk's tools, with the
same Java client configs, against a secured Kafka broker (`kafka_secure`) and pk alike; the
same SCRAM administration answered the same way by both."""

from __future__ import annotations

import os
import re
import subprocess
import uuid

import pytest

import security_setup as S
from conftest import BrokerProcess, free_port, tool_path

SCRAM_USER, SCRAM_PASSWORD = "dave", "dave-secret"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"  # bin/kafka-acls.sh


@pytest.fixture(scope="module")
def secure_pk(tmp_path_factory, tls_certs):
    """pk-server-start with the listeners and security settings of `kafka_secure`."""
    data_dir = str(tmp_path_factory.mktemp("oracle-secure-pk") / "data")
    os.makedirs(data_dir)
    sasl_port, ssl_port = free_port(), free_port()
    broker = BrokerProcess(data_dir)
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_SSL://127.0.0.1:{sasl_port},SSL://127.0.0.1:{ssl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL",
        **S.secure_listener_settings(tls_certs),
    })
    broker.sasl_ssl, broker.ssl, broker.certs = f"127.0.0.1:{sasl_port}", f"127.0.0.1:{ssl_port}", tls_certs
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _add_scram_user(kafka_tools, bootstrap: str, user: str, password: str) -> list:
    """Both SCRAM mechanisms, one call each (a user may be altered once per request)."""
    return [kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users",
                        "--entity-name", user, "--add-config", config)
            for config in (f"SCRAM-SHA-512=[iterations=8192,password={password}]", f"SCRAM-SHA-256=[password={password}]")]


def _described(bootstrap: str, user: str) -> list[tuple[str, int]]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    desc = admin.describe_user_scram_credentials([user])[user].result(timeout=30)
    return sorted((i.mechanism.name, i.iterations) for i in desc.scram_credential_infos)


def _configs(tmp_path, certs) -> dict[str, tuple[str, str]]:
    """name -> (listener attribute, Java client config file)."""
    write = lambda name, config: S.write_properties(str(tmp_path / f"{name}.properties"), config)  # noqa: E731
    return {
        "scram": ("sasl_ssl", write("scram", S.client_config(certs, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER,
                                                             SCRAM_PASSWORD))),
        "plain": ("sasl_ssl", write("plain", S.client_config(certs, "SASL_SSL", "PLAIN", "alice", "alice-secret"))),
        "mtls": ("ssl", write("mtls", S.client_config(certs, "SSL", client_cert=True))),
    }


def test_kafkas_scram_administration_against_pk_and_kafka(kafka_tools, kafka_secure, secure_pk):
    user = f"u{uuid.uuid4().hex[:6]}"
    outputs = []
    for broker in (kafka_secure, secure_pk):
        twice = kafka_tools("kafka-configs", "--bootstrap-server", broker.bootstrap, "--alter", "--entity-type",
                            "users", "--entity-name", user, "--add-config",
                            "SCRAM-SHA-512=[iterations=8192,password=pw],SCRAM-SHA-256=[password=pw]")
        added, added_256 = _add_scram_user(kafka_tools, broker.bootstrap, user, "pw-1")
        too_few = kafka_tools("kafka-configs", "--bootstrap-server", broker.bootstrap, "--alter",
                              "--entity-type", "users", "--entity-name", user, "--add-config",
                              "SCRAM-SHA-512=[iterations=100,password=x]")
        deleted = kafka_tools("kafka-configs", "--bootstrap-server", broker.bootstrap, "--alter",
                              "--entity-type", "users", "--entity-name", user, "--delete-config", "SCRAM-SHA-256")
        missing = kafka_tools("kafka-configs", "--bootstrap-server", broker.bootstrap, "--alter",
                              "--entity-type", "users", "--entity-name", user, "--delete-config", "SCRAM-SHA-256")
        outputs.append([(r.returncode, r.out, r.err.replace(broker.bootstrap, "BOOTSTRAP"))
                        for r in (twice, added, added_256, too_few, deleted, missing)])
        outputs.append(_described(broker.bootstrap, user))
    assert outputs[0] == outputs[2] and outputs[1] == outputs[3] == [("SCRAM_SHA_512", 8192)]
    assert [r[0] for r in outputs[0]] == [1, 0, 0, 1, 0, 1]


def test_java_clients_against_pk(kafka_tools, secure_pk, tmp_path):
    assert [r.returncode for r in _add_scram_user(kafka_tools, secure_pk.bootstrap, SCRAM_USER, SCRAM_PASSWORD)] == [0, 0]
    for name, (listener, config) in _configs(tmp_path, secure_pk.certs).items():
        bootstrap = getattr(secure_pk, listener)
        topic = f"java-{name}"
        produced = kafka_tools("kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                               "--command-config", config, input=f"{name}-1\n{name}-2\n")
        assert produced.returncode == 0, produced.err
        consumed = kafka_tools("kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                               "--from-beginning", "--max-messages", "2", "--timeout-ms", "30000",
                               "--command-config", config)
        assert consumed.out.split() == [f"{name}-1", f"{name}-2"], consumed.err


def test_pk_tools_against_secured_kafka_and_pk(kafka_tools, kafka_secure, secure_pk, tmp_path):
    """The same Java client configs and pk tools, against Kafka (ACLs granted to the non-super
    users, among them the client certificate's DN as pk computes it) and against pk."""
    for broker in (kafka_secure, secure_pk):
        _add_scram_user(kafka_tools, broker.bootstrap, SCRAM_USER, SCRAM_PASSWORD)  # (maybe there already)
    for principal in (f"User:{SCRAM_USER}", "User:alice", S.CLIENT_PRINCIPAL):
        for resource in (("--topic", "*"), ("--group", "*")):
            granted = kafka_tools.run_class(ACL_COMMAND, "--bootstrap-server", kafka_secure.bootstrap, "--add",
                                            "--allow-principal", principal, "--operation", "All", *resource)
            assert granted.returncode == 0, granted.err
    run = lambda tool, *args, **kw: subprocess.run([tool_path(tool), *args], capture_output=True,  # noqa: E731
                                                   text=True, timeout=120, **kw)
    for broker in (kafka_secure, secure_pk):
        for name, (listener, config) in _configs(tmp_path, broker.certs).items():
            bootstrap = getattr(broker, listener)
            topic = f"pk-tools-{name}"
            created = run("pk-topics", "--bootstrap-server", bootstrap, "--command-config", config, "--create",
                          "--topic", topic, "--partitions", "1")
            assert (created.returncode, created.stdout) == (0, f"Created topic {topic}.\n"), created.stderr
            produced = run("pk-console-producer", "--bootstrap-server", bootstrap, "--producer.config", config,
                           "--topic", topic, input="p1\np2\n")
            assert produced.returncode == 0, produced.stderr
            consumed = run("pk-console-consumer", "--bootstrap-server", bootstrap, "--command-config", config,
                           "--topic", topic, "--from-beginning", "--max-messages", "2", "--timeout-ms", "30000")
            assert consumed.stdout.split() == ["p1", "p2"], (broker, name, consumed.stderr)
    # a wrong password: the same one line from pk-topics, whichever broker refuses it
    wrong = S.write_properties(str(tmp_path / "wrong.properties"),
                               S.client_config(kafka_secure.certs, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, "nope"))
    errors = [run("pk-topics", "--bootstrap-server", b.sasl_ssl, "--command-config", wrong, "--list")
              for b in (kafka_secure, secure_pk)]
    assert [e.returncode != 0 for e in errors] == [True, True]
    texts = [re.sub(r"after \d+ms", "after Nms", e.stderr.replace(b.sasl_ssl, "B"))
             for e, b in zip(errors, (kafka_secure, secure_pk))]
    assert texts[0] == texts[1]
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in errors[0].stderr


# ---------------------------------------------------------------------- authentication + ACLs

@pytest.fixture(scope="module")
def secure_pk_acl(tmp_path_factory, tls_certs):
    """pk-server-start configured as `kafka_secure` is: the same listeners, and the authorizer
    with ANONYMOUS (the PLAINTEXT admin listener) and User:admin as super users."""
    data_dir = str(tmp_path_factory.mktemp("oracle-secure-acl-pk") / "data")
    os.makedirs(data_dir)
    sasl_port = free_port()
    broker = BrokerProcess(data_dir)
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_SSL://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS;User:admin",
        **S.secure_listener_settings(tls_certs),
    })
    broker.sasl_ssl, broker.certs = f"127.0.0.1:{sasl_port}", tls_certs
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def test_sasl_principals_meet_acls_as_on_kafka(kafka_tools, kafka_secure, secure_pk_acl, tmp_path):
    """A SCRAM user over SASL_SSL, allowed to write one topic and nothing else: Kafka's own
    console producer and consumer and kafka-configs, run as that user, get the same answers
    from pk as from Kafka (allowed writes land; denied topic, group and cluster are refused)."""
    tag = uuid.uuid4().hex[:6]
    user, allowed, denied, group = f"acl{tag}", f"acl-ok-{tag}", f"acl-no-{tag}", f"acl-g-{tag}"
    config = S.write_properties(str(tmp_path / "user.properties"),
                                S.client_config(kafka_secure.certs, "SASL_SSL", "SCRAM-SHA-512", user, "pw-" + tag))
    results = []
    for broker in (kafka_secure, secure_pk_acl):
        assert [r.returncode for r in _add_scram_user(kafka_tools, broker.bootstrap, user, "pw-" + tag)] == [0, 0]
        for topic in (allowed, denied):
            made = kafka_tools("kafka-topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
            assert made.returncode == 0, made.err
        granted = kafka_tools.run_class(ACL_COMMAND, "--bootstrap-server", broker.bootstrap, "--add",
                                        "--allow-principal", f"User:{user}", "--producer", "--topic", allowed)
        assert granted.returncode == 0, granted.err
        ok = kafka_tools("kafka-console-producer", "--bootstrap-server", broker.sasl_ssl, "--topic", allowed,
                         "--command-config", config, input="one\ntwo\n")
        refused = kafka_tools("kafka-console-producer", "--bootstrap-server", broker.sasl_ssl, "--topic", denied,
                              "--command-config", config, input="three\n")
        no_group = kafka_tools("kafka-console-consumer", "--bootstrap-server", broker.sasl_ssl, "--topic", allowed,
                               "--group", group, "--from-beginning", "--max-messages", "1", "--timeout-ms", "20000",
                               "--command-config", config)
        no_cluster = kafka_tools("kafka-configs", "--bootstrap-server", broker.sasl_ssl, "--command-config", config,
                                 "--alter", "--entity-type", "users", "--entity-name", user, "--add-config",
                                 "SCRAM-SHA-256=[password=x]")
        stored = kafka_tools("kafka-get-offsets", "--bootstrap-server", broker.bootstrap, "--topic-partitions",
                             f"{allowed}:0,{denied}:0")
        results.append([(r.returncode, _authz_lines(r.out + r.err, broker.sasl_ssl))
                        for r in (ok, refused, no_group, no_cluster)] + [stored.out])
    assert results[0] == results[1]
    ok, refused, no_group, no_cluster, stored = results[0]
    assert ok[0] == 0 and stored == f"{denied}:0:0\n{allowed}:0:2\n"
    assert any("TopicAuthorizationException" in line for line in refused[1])
    assert any("GroupAuthorizationException" in line for line in no_group[1])
    assert no_cluster[0] != 0


def _authz_lines(text: str, bootstrap: str) -> list[str]:
    """The lines naming an authorization error, without the parts that differ between runs."""
    lines = [re.sub(r"^\[[^\]]*\] ", "", line.replace(bootstrap, "B")) for line in text.splitlines()
             if "Authorization" in line or "authorization" in line or "Not authorized" in line]
    # Kafka forwards AlterUserScramCredentials to its controller, whose refusal names the
    # forwarded request's internals ("Request Request(processor=2, connectionId=…"): keep the class
    lines = [re.sub(r"(ClusterAuthorizationException):.*", r"\1", line) for line in lines]
    return sorted({re.sub(r"\(.*?\)$", "", line).strip() for line in lines})
