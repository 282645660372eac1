"""Test material for TLS and SASL: certificates made with openssl, the listener settings a
secured broker (pk's or Kafka's) runs with, and client config files in Java's property form.

Both brokers take the same server-side keys (Kafka's names), so a test can point the same
client config at either one.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

# The PLAIN users every secured broker in the tests knows (from its JAAS config).
PLAIN_USERS = {"alice": "alice-secret", "admin": "admin-secret"}
# The delegation token secret of the secured brokers (delegation.token.secret.key).
TOKEN_SECRET = "pk-tests-token-secret"
# The client certificate's subject, as openssl takes it.
CLIENT_SUBJECT = "/C=DE/O=pk, Inc./OU=tests/CN=alice"
# ... and the principal Kafka's DefaultKafkaPrincipalBuilder makes of it (RFC 2253 order:
# most specific first; "," inside a value escaped).
CLIENT_PRINCIPAL = "User:CN=alice,OU=tests,O=pk\\, Inc.,C=DE"


@dataclass(frozen=True)
class Certs:
    dir: str

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    @property
    def ca(self) -> str:
        return self.path("ca.pem")

    @property
    def server_keystore(self) -> str:
        """PEM: the server's private key, its certificate and the CA's."""
        return self.path("server-keystore.pem")

    @property
    def client_keystore(self) -> str:
        return self.path("client-keystore.pem")

    @property
    def client_cert(self) -> str:
        return self.path("client.crt")

    @property
    def client_key(self) -> str:
        return self.path("client.key")

    @property
    def other_ca(self) -> str:
        """A CA that signed nothing the brokers trust."""
        return self.path("other-ca.pem")


def _openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(directory: str) -> Certs:
    """A CA; a server certificate for 127.0.0.1/localhost; a client certificate (CLIENT_SUBJECT);
    all signed by the CA, keys unencrypted PKCS#8."""
    os.makedirs(directory, exist_ok=True)
    run = lambda *a: _openssl(*a, cwd=directory)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "30", "-subj", "/CN=pk-test-ca")
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.pem",
        "-days", "30", "-subj", "/CN=pk-other-ca")
    with open(os.path.join(directory, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, subject, ext in (("server", "/CN=localhost/O=pk", ["-extfile", "san.ext"]),
                               ("client", CLIENT_SUBJECT, [])):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", subject)
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "30", *ext)
    certs = Certs(directory)
    for name, parts in (("server-keystore.pem", ("server.key", "server.crt", "ca.pem")),
                        ("client-keystore.pem", ("client.key", "client.crt"))):
        with open(certs.path(name), "w") as out:
            for part in parts:
                with open(certs.path(part)) as f:
                    out.write(f.read())
    return certs


def jaas_plain(users: dict[str, str], login: tuple[str, str] | None = None) -> str:
    """A PlainLoginModule JAAS line: the broker's users (user_<name>="<password>"), or a
    client's login (username/password)."""
    fields = "".join(f' user_{u}="{p}"' for u, p in users.items())
    if login:
        fields = f' username="{login[0]}" password="{login[1]}"' + fields
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required{fields};"


def jaas_scram(user: str, password: str) -> str:
    return f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{password}";'


def secure_listener_settings(certs: Certs) -> dict[str, str]:
    """The server-side keys of a listener SASL_SSL (SCRAM-SHA-256/512 and PLAIN) and a listener
    SSL requiring client certificates, PEM stores."""
    return {
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas_plain(PLAIN_USERS),
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": certs.server_keystore,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": certs.ca,
        "listener.name.ssl.ssl.client.auth": "required",
    }


def client_config(certs: Certs, protocol: str, mechanism: str | None = None, user: str | None = None,
                  password: str | None = None, client_cert: bool = False) -> dict[str, str]:
    """A Java client's security settings (PEM trust store), as --command-config files hold them."""
    config = {"security.protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        config |= {"ssl.truststore.type": "PEM", "ssl.truststore.location": certs.ca}
    if client_cert:
        config |= {"ssl.keystore.type": "PEM", "ssl.keystore.location": certs.client_keystore}
    if mechanism:
        config["sasl.mechanism"] = mechanism
        config["sasl.jaas.config"] = (jaas_plain({}, (user, password)) if mechanism == "PLAIN"
                                      else jaas_scram(user, password))
    return config


def write_properties(path: str, config: dict[str, str]) -> str:
    with open(path, "w") as f:
        f.writelines(f"{k}={v}\n" for k, v in config.items())
    return path


def tls_client_context(certs: Certs, client_cert: bool = False):
    """An ssl.SSLContext trusting the test CA (optionally presenting the client certificate)."""
    import ssl

    context = ssl.create_default_context(cafile=certs.ca)
    if client_cert:
        context.load_cert_chain(certs.client_cert, certs.client_key)
    return context


def wrap_tls(client, certs: Certs, client_cert: bool = False):
    """Turn a conftest.ProtocolClient's socket into a TLS one (before its first request)."""
    client.sock = tls_client_context(certs, client_cert).wrap_socket(client.sock, server_hostname="127.0.0.1")
    return client


def secured_like_kafka_secure(broker, sasl_port: int, certs):
    """A pk-server-start (conftest.BrokerProcess, not started) set up as the kafka_secure
    fixture's Kafka: a PLAINTEXT listener whose ANONYMOUS is a super user, a SASL_SSL one on
    `sasl_port`, Kafka's StandardAuthorizer and the delegation token secret."""
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_SSL://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS;User:admin",
        "delegation.token.secret.key": TOKEN_SECRET,
        **secure_listener_settings(certs),
    })
    broker.sasl_ssl, broker.certs = f"127.0.0.1:{sasl_port}", certs
    return broker
