"""pk-server-start's listener security against real clients: TLS (PEM stores, client certificates),
SASL PLAIN and SCRAM-SHA-256/512 (credentials made with AlterUserScramCredentials), re-authentication,
per-listener endpoints, Kafka's refusals, and the startup refusals of what pk cannot serve."""

from __future__ import annotations

import json
import os
import socket
import ssl
import struct
import subprocess
import time
import uuid

import pytest
import scramp

import security_setup as S
from conftest import BrokerProcess, ProtocolClient, free_port, tool_path

METADATA_ALL = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
SCRAM_USER, SCRAM_PASSWORD = "bob", "bob-secret"
REAUTH_MS = 1500


@pytest.fixture(scope="module")
def secure(tmp_path_factory, tls_certs):
    """pk-server-start with listeners PLAINTEXT, SASL_SSL (SCRAM-SHA-256/512, PLAIN), SSL (client
    certificates required) and SASL_PLAINTEXT (PLAIN and SCRAM-SHA-256, sessions of REAUTH_MS)."""
    data_dir = str(tmp_path_factory.mktemp("secure-pk") / "data")
    os.makedirs(data_dir)
    ports = {name: free_port() for name in ("SASL_SSL", "SSL", "SASL_PLAINTEXT")}
    broker = BrokerProcess(data_dir)
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap}," + ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        **S.secure_listener_settings(tls_certs),
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.sasl.jaas.config": S.jaas_plain(S.PLAIN_USERS),
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.sasl_plaintext.connections.max.reauth.ms": str(REAUTH_MS),
    })
    broker.start()
    try:
        broker.ports = {"PLAINTEXT": broker.port, **ports}
        broker.certs = tls_certs
        _create_scram_user(broker.bootstrap, SCRAM_USER, SCRAM_PASSWORD)
        yield broker
    finally:
        broker.stop()


def _create_scram_user(bootstrap: str, user: str, password: str) -> None:
    from confluent_kafka.admin import (
        AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):  # one per request:
        upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 8192), password.encode())
        for future in admin.alter_user_scram_credentials([upsert]).values():  # a user once per request
            assert future.result(timeout=30) is None


def _connect(broker, listener: str, client_cert: bool = False) -> ProtocolClient:
    client = ProtocolClient(broker.ports[listener])
    if listener in ("SSL", "SASL_SSL"):
        S.wrap_tls(client, broker.certs, client_cert)
    return client


def _login_plain(client: ProtocolClient, user: str, password: str, version: int = 2) -> dict:
    assert client.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    return client.call(36, version, {"auth_bytes": f"\0{user}\0{password}".encode()})


def _login_scram(client: ProtocolClient, mechanism: str, user: str, password: str) -> dict:
    assert client.call(17, 1, {"mechanism": mechanism})["error_code"] == 0
    scram = scramp.ScramClient([mechanism], user, password)
    first = client.call(36, 2, {"auth_bytes": scram.get_client_first().encode()})
    if first["error_code"]:
        return first
    scram.set_server_first(first["auth_bytes"].decode())
    final = client.call(36, 2, {"auth_bytes": scram.get_client_final().encode()})
    if final["error_code"] == 0:
        scram.set_server_final(final["auth_bytes"].decode())  # the server proved it knows the key
    return final


def _confluent(broker, listener: str, **extra) -> dict:
    conf = {"bootstrap.servers": f"127.0.0.1:{broker.ports[listener]}", "security.protocol": listener}
    if listener in ("SSL", "SASL_SSL"):
        conf["ssl.ca.location"] = broker.certs.ca
    return {**conf, **extra}


def _produce_consume(conf: dict, topic: str, values: list[bytes]) -> list[bytes]:
    from confluent_kafka import Consumer, Producer

    producer = Producer(conf)
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    consumer = Consumer({**conf, "group.id": f"g-{uuid.uuid4().hex[:8]}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got, deadline = [], time.monotonic() + 30
    while len(got) < len(values) and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got.append(message.value())
    consumer.close()
    return got


# ---------------------------------------------------------------------- real clients

def test_confluent_kafka_over_sasl_ssl_with_scram_and_plain(secure):
    values = [b"one", b"two", b"three"]
    scram = _confluent(secure, "SASL_SSL", **{"sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": SCRAM_USER,
                                             "sasl.password": SCRAM_PASSWORD})
    assert _produce_consume(scram, "sec-scram", values) == values
    plain = _confluent(secure, "SASL_SSL", **{"sasl.mechanisms": "PLAIN", "sasl.username": "alice",
                                             "sasl.password": S.PLAIN_USERS["alice"]})
    assert _produce_consume(plain, "sec-plain", values) == values


def test_confluent_kafka_over_ssl_with_a_client_certificate(secure):
    conf = _confluent(secure, "SSL", **{"ssl.certificate.location": secure.certs.client_cert,
                                       "ssl.key.location": secure.certs.client_key})
    assert _produce_consume(conf, "sec-ssl", [b"a", b"b"]) == [b"a", b"b"]


def test_kafka_python_over_sasl_ssl_scram_and_ssl(secure):
    from kafka import KafkaConsumer, KafkaProducer

    certs = secure.certs
    configs = [
        {"bootstrap_servers": f"127.0.0.1:{secure.ports['SASL_SSL']}", "security_protocol": "SASL_SSL",
         "sasl_mechanism": mechanism, "sasl_plain_username": SCRAM_USER,
         "sasl_plain_password": SCRAM_PASSWORD, "ssl_cafile": certs.ca}
        for mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256")
    ] + [
        {"bootstrap_servers": f"127.0.0.1:{secure.ports['SSL']}", "security_protocol": "SSL",
         "ssl_cafile": certs.ca, "ssl_certfile": certs.client_cert, "ssl_keyfile": certs.client_key},
        {"bootstrap_servers": f"127.0.0.1:{secure.ports['SASL_PLAINTEXT']}", "security_protocol": "SASL_PLAINTEXT",
         "sasl_mechanism": "PLAIN", "sasl_plain_username": "alice", "sasl_plain_password": S.PLAIN_USERS["alice"]},
    ]
    for i, conf in enumerate(configs):
        topic = f"sec-kp-{i}"
        producer = KafkaProducer(**conf)
        producer.send(topic, b"hello-%d" % i).get(timeout=30)
        producer.close()
        consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=15000, **conf)
        first = next(consumer, None)  # the first record, not a wait until consumer_timeout_ms runs out
        assert first is not None and first.value == b"hello-%d" % i
        consumer.close()


def test_scram_credentials_are_described_and_kept_without_passwords(secure):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": secure.bootstrap})
    desc = admin.describe_user_scram_credentials([SCRAM_USER])[SCRAM_USER].result(timeout=30)
    assert sorted((str(i.mechanism), i.iterations) for i in desc.scram_credential_infos) == [
        ("ScramMechanism.SCRAM_SHA_256", 8192), ("ScramMechanism.SCRAM_SHA_512", 8192)]
    with open(os.path.join(secure.data_dir, ".pk", "scram-credentials.json")) as f:
        stored = json.load(f)
    assert set(stored["users"][SCRAM_USER]) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    assert SCRAM_PASSWORD not in json.dumps(stored)


def test_a_credential_added_offline_logs_in_at_once(secure):
    from pk.engine.scram_credentials import add_credential

    add_credential(secure.data_dir, "carol", "SCRAM-SHA-512", "carol-secret", iterations=4096)
    with _connect(secure, "SASL_SSL") as client:
        assert _login_scram(client, "SCRAM-SHA-512", "carol", "carol-secret")["error_code"] == 0
        assert client.call(3, 12, METADATA_ALL)["brokers"][0]["port"] == secure.ports["SASL_SSL"]
    with pytest.raises(ValueError, match="Too few iterations"):
        add_credential(secure.data_dir, "carol", "SCRAM-SHA-512", "x", iterations=100)
    secure.stop()  # credentials are durable: after a restart both users still log in
    secure.start()
    for user, password in (("carol", "carol-secret"), (SCRAM_USER, SCRAM_PASSWORD)):
        with _connect(secure, "SASL_SSL") as client:
            assert _login_scram(client, "SCRAM-SHA-512", user, password)["error_code"] == 0


# ---------------------------------------------------------------------- Kafka's refusals

def test_wrong_credentials_are_refused_with_kafkas_errors_then_closed(secure):
    cases = [
        (lambda c: _login_scram(c, "SCRAM-SHA-512", SCRAM_USER, "wrong"),
         "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"),
        (lambda c: _login_scram(c, "SCRAM-SHA-256", "nobody", "x"),
         "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"),
        (lambda c: _login_plain(c, "alice", "wrong"), "Authentication failed: Invalid username or password"),
        (lambda c: _login_plain(c, "", "x"), "Authentication failed: username not specified"),
    ]
    for login, message in cases:
        with _connect(secure, "SASL_SSL") as client:
            answer = login(client)
            assert (answer["error_code"], answer["error_message"]) == (58, message)
            assert client.closed_by_peer()


def test_unsupported_mechanism_lists_the_enabled_ones(secure):
    with _connect(secure, "SASL_SSL") as client:
        answer = client.call(17, 1, {"mechanism": "GSSAPI"})
        # Kafka lists them in its hash map's order
        assert answer == {"error_code": 33, "mechanisms": ["SCRAM-SHA-512", "PLAIN", "SCRAM-SHA-256"]}
        assert client.closed_by_peer()


def test_no_request_skips_authentication(secure):
    for listener in ("SASL_SSL", "SASL_PLAINTEXT"):
        with _connect(secure, listener) as client:  # ApiVersions is allowed first ...
            assert client.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})["error_code"] == 0
            client.send(3, 12, METADATA_ALL)  # ... anything else closes the connection
            assert client.closed_by_peer()
        with _connect(secure, listener) as client:
            assert client.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
            client.send(0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": []})
            assert client.closed_by_peer()


def test_ssl_listener_requires_a_trusted_client_certificate(secure):
    with pytest.raises((ssl.SSLError, ConnectionError)):
        with _connect(secure, "SSL") as client:  # TLS 1.3: the refusal shows at the first read
            client.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    with _connect(secure, "SSL", client_cert=True) as client:
        assert client.call(3, 12, METADATA_ALL)["brokers"][0]["port"] == secure.ports["SSL"]
    with socket.create_connection(("127.0.0.1", secure.ports["SSL"]), timeout=10) as raw:  # plaintext on TLS
        raw.sendall(struct.pack(">i", 10) + b"\0\x12\0\0\0\0\0\x01\0\0")
        data = raw.recv(100)
        assert data == b"" or data[0] == 0x15  # closed, or a TLS alert record: never a Kafka answer
    with ProtocolClient(secure.port) as client:  # the broker carries on
        assert client.call(3, 12, METADATA_ALL)["brokers"][0]["port"] == secure.port


def test_sasl_apis_on_a_plaintext_listener_and_after_login(secure):
    with ProtocolClient(secure.port) as client:
        assert client.call(17, 1, {"mechanism": "PLAIN"}) == {"error_code": 34, "mechanisms": []}
        answer = client.call(36, 2, {"auth_bytes": b"\0a\0b"})
        assert (answer["error_code"], answer["error_message"]) == (
            34, "SaslAuthenticate request received after successful authentication")
    with _connect(secure, "SASL_SSL") as client:  # no re-authentication on this listener
        assert _login_plain(client, "alice", "alice-secret") == {
            "error_code": 0, "error_message": "", "auth_bytes": b"", "session_lifetime_ms": 0}
        assert client.call(17, 1, {"mechanism": "PLAIN"}) == {"error_code": 34, "mechanisms": []}
        assert client.call(3, 12, METADATA_ALL)["brokers"]


# ---------------------------------------------------------------------- sessions

def test_reauthentication_and_expired_sessions(secure):
    with _connect(secure, "SASL_PLAINTEXT") as client:
        answer = _login_plain(client, "alice", "alice-secret")
        assert (answer["error_code"], answer["session_lifetime_ms"]) == (0, REAUTH_MS)
        # re-authenticate on the same connection (KIP-368), same principal
        assert _login_plain(client, "alice", "alice-secret")["session_lifetime_ms"] == REAUTH_MS
        assert client.call(3, 12, METADATA_ALL)["brokers"]
        # another principal may not take the connection over
        answer = _login_plain(client, "admin", "admin-secret")
        assert (answer["error_code"], answer["error_message"]) == (
            58, "Cannot change principals during re-authentication from User.alice: User.admin")
    with _connect(secure, "SASL_PLAINTEXT") as client:
        assert _login_scram(client, "SCRAM-SHA-256", SCRAM_USER, SCRAM_PASSWORD)["session_lifetime_ms"] == REAUTH_MS
        time.sleep(REAUTH_MS / 1000 + 0.3)  # the session runs out: its next request closes it
        client.send(3, 12, METADATA_ALL)
        assert client.closed_by_peer()


def _bare_token(client: ProtocolClient, token: bytes) -> bytes:
    """Send a SASL token without a Kafka header (after a v0 handshake); the bare answer."""
    client.sock.sendall(struct.pack(">i", len(token)) + token)
    return client.recv_exactly(struct.unpack(">i", client.recv_exactly(4))[0])


def test_handshake_v0_then_bare_tokens(secure):
    with _connect(secure, "SASL_PLAINTEXT") as client:
        assert client.call(17, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        assert _bare_token(client, b"\0alice\0alice-secret") == b""  # PLAIN's empty answer, bare
        assert client.call(3, 12, METADATA_ALL)["brokers"][0]["port"] == secure.ports["SASL_PLAINTEXT"]
    with _connect(secure, "SASL_PLAINTEXT") as client:  # SCRAM, bare: two round trips
        assert client.call(17, 0, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
        scram = scramp.ScramClient(["SCRAM-SHA-256"], SCRAM_USER, SCRAM_PASSWORD)
        scram.set_server_first(_bare_token(client, scram.get_client_first().encode()).decode())
        scram.set_server_final(_bare_token(client, scram.get_client_final().encode()).decode())
        assert client.call(3, 12, METADATA_ALL)["brokers"]
    with _connect(secure, "SASL_PLAINTEXT") as client:
        assert client.call(17, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        token = b"\0a\0b"  # 4 bytes: wrong, and shorter than any Kafka header
        client.sock.sendall(struct.pack(">i", len(token)) + token)
        assert client.closed_by_peer()  # no headers, so no error answer: Kafka closes


# ---------------------------------------------------------------------- listeners and principals

def test_each_listener_advertises_itself(secure):
    for listener, port in secure.ports.items():
        with _connect(secure, listener, client_cert=True) as client:
            if listener == "SASL_SSL" or listener == "SASL_PLAINTEXT":
                assert _login_plain(client, "alice", "alice-secret")["error_code"] == 0
            assert client.call(3, 12, METADATA_ALL)["brokers"][0]["port"] == port
            answer = client.call(10, 3, {"key": "g", "key_type": 0})
            assert (answer["host"], answer["port"]) == ("127.0.0.1", port)
            answer = client.call(60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 1})
            assert answer["brokers"][0]["port"] == port


def test_client_certificate_principal_is_kafkas_rfc2253_name(tls_certs):
    from pk.engine.broker.tls import rfc2253

    subject = ssl._ssl._test_decode_cert(tls_certs.client_cert)["subject"]  # what getpeercert() gives
    assert "User:" + rfc2253(subject) == S.CLIENT_PRINCIPAL
    assert rfc2253(((("commonName", " #a;b"),), (("emailAddress", "a@b.c"),))) == \
        "1.2.840.113549.1.9.1=#16056140622e63,CN=\\ #a\\;b"


# ---------------------------------------------------------------------- configuration

def _start_refused(tmp_path, overrides: dict[str, str]) -> str:
    args = [tool_path("pk-server-start"), os.path.join(os.path.dirname(__file__), "..", "config", "server.properties"),
            "--override", f"log.dirs={tmp_path / 'data'}"]
    for key, value in overrides.items():
        args += ["--override", f"{key}={value}"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stdout
    lines = [line for line in run.stdout.splitlines() if "ERROR" in line]
    assert len(lines) == 1 and "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    return lines[0]


def test_startup_refusals(tmp_path, tls_certs):
    port = free_port()
    ssl_listener = {"listeners": f"SSL://127.0.0.1:{port}"}
    pem = {**ssl_listener, "ssl.keystore.type": "PEM", "ssl.keystore.location": tls_certs.server_keystore}
    sasl = {"listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}"}
    cases = [
        ({**ssl_listener, "ssl.keystore.location": "/x/server.jks"}, "keytool -importkeystore"),
        ({**ssl_listener, "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/x/s.p12"}, "openssl pkcs12"),
        (ssl_listener, "needs a key store"),
        ({**pem, "ssl.truststore.location": "/x/t.jks"}, "Trust store type JKS of listener SSL is not supported"),
        ({**pem, "ssl.keystore.location": tls_certs.ca}, "Failed to load SSL keystore"),
        (sasl, "SASL mechanism GSSAPI of listener SASL_PLAINTEXT is not supported"),
        ({**sasl, "sasl.enabled.mechanisms": "OAUTHBEARER"}, "SASL mechanism OAUTHBEARER"),
        ({**sasl, "sasl.enabled.mechanisms": "PLAIN"},
         "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration"),
        ({"listeners": f"SECURE://127.0.0.1:{port}"}, "No security protocol defined for listener SECURE"),
        ({**pem, "ssl.principal.mapping.rules": "RULE:^CN=(.*?),.*$/$1/"}, "ssl.principal.mapping.rules"),
    ]
    for overrides, expected in cases:
        assert expected in _start_refused(tmp_path, overrides)


def test_inline_pem_stores_and_requested_client_auth(tmp_path, tls_certs):
    def read(name):
        with open(tls_certs.path(name)) as f:
            return f.read().replace("\n", "\\n")  # as one properties line

    port = free_port()
    broker = BrokerProcess(str(tmp_path / "data"), {
        "listeners": f"SSL://127.0.0.1:{port}", "ssl.keystore.type": "PEM", "ssl.truststore.type": "PEM",
        "ssl.keystore.key": read("server.key"), "ssl.keystore.certificate.chain": read("server.crt"),
        "ssl.truststore.certificates": read("ca.pem"), "ssl.client.auth": "requested"}, port=port).start()
    try:
        for client_cert in (False, True):  # requested: with or without a certificate
            client = S.wrap_tls(ProtocolClient(port), tls_certs, client_cert)
            with client:
                assert client.call(3, 12, METADATA_ALL)["brokers"][0]["port"] == port
    finally:
        broker.stop()


# ---------------------------------------------------------------------- pk's own tools, remote

def test_pk_tools_with_java_client_configs(secure, tmp_path):
    certs = secure.certs
    configs = {
        "scram": (secure.ports["SASL_SSL"], S.client_config(certs, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, SCRAM_PASSWORD)),
        "plain": (secure.ports["SASL_SSL"], S.client_config(certs, "SASL_SSL", "PLAIN", "alice", "alice-secret")),
        "mtls": (secure.ports["SSL"], S.client_config(certs, "SSL", client_cert=True)),
    }
    for name, (port, config) in configs.items():
        path = S.write_properties(str(tmp_path / f"{name}.properties"), config)
        bootstrap = f"127.0.0.1:{port}"
        topic = f"sec-tools-{name}"
        run = lambda *args, **kw: subprocess.run([tool_path(args[0]), *args[1:]], capture_output=True,  # noqa: E731
                                                 text=True, timeout=90, **kw)
        created = run("pk-topics", "--bootstrap-server", bootstrap, "--command-config", path, "--create",
                      "--topic", topic, "--partitions", "1")
        assert created.returncode == 0, created.stderr
        listed = run("pk-topics", "--bootstrap-server", bootstrap, "--command-config", path, "--list")
        assert topic in listed.stdout.split(), listed.stderr
        described = run("pk-topics", "--bootstrap-server", bootstrap, "--command-config", path, "--describe",
                        "--topic", topic)  # (on pk's wire client, with the same security)
        assert described.stdout.startswith(f"Topic: {topic}\t"), described.stderr
        assert f"\tTopic: {topic}\tPartition: 0\tLeader: " in described.stdout, described.stdout
        produced = run("pk-console-producer", "--bootstrap-server", bootstrap, "--producer.config", path,
                       "--topic", topic, input="x1\nx2\n")
        assert produced.returncode == 0, produced.stderr
        consumed = run("pk-console-consumer", "--bootstrap-server", bootstrap, "--command-config", path,
                       "--topic", topic, "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000")
        assert consumed.stdout.split() == ["x1", "x2"], consumed.stdout + consumed.stderr
    wrong = S.write_properties(str(tmp_path / "wrong.properties"),
                               S.client_config(certs, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, "nope"))
    listed = subprocess.run([tool_path("pk-topics"), "--bootstrap-server", f"127.0.0.1:{secure.ports['SASL_SSL']}",
                             "--command-config", wrong, "--list"], capture_output=True, text=True, timeout=90)
    assert listed.returncode != 0 and "Traceback" not in listed.stderr
    assert "Authentication failed during authentication due to invalid credentials with SASL mechanism " \
           "SCRAM-SHA-512" in listed.stderr


def test_password_configs_are_described_without_their_values(tmp_path):
    """DescribeConfigs of the broker never returns a PASSWORD-typed config's value (Kafka marks
    them sensitive): the JAAS config holds PLAIN users' passwords, the PEM entries private keys."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    secrets = {"sasl.jaas.config": S.jaas_plain({"alice": "alice-secret"}), "ssl.key.password": "key-secret",
               "ssl.keystore.password": "store-secret", "ssl.truststore.password": "trust-secret"}
    data_dir = str(tmp_path / "data")
    os.makedirs(data_dir)
    broker = BrokerProcess(data_dir)
    broker.overrides.update(secrets)
    broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        resource = ConfigResource(ResourceType.BROKER, "0")
        entries = admin.describe_configs([resource])[resource].result(timeout=30)
    finally:
        broker.stop()
    for key in (*secrets, "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates"):
        assert (entries[key].value, entries[key].is_sensitive) == (None, True), key
    described = " ".join(str(e.value) for e in entries.values())
    assert not any(word in described for word in ("alice-secret", "key-secret", "store-secret", "trust-secret"))
