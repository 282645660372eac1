"""A bare Kafka protocol client over pk's own codec, for the admin requests librdkafka does
not expose: per-broker ApiVersions (kafka-broker-api-versions), DescribeConfigs with every
synonym (librdkafka keeps one per name), BROKER_LOGGER and CLIENT_METRICS resources, and
the client-quota APIs (kafka-configs).

One connection per broker, one request at a time. `WireClient(bootstrap, timeout_s,
security=...)` connects to the first bootstrap address that answers; `call(api_key, version,
body, node=None)` sends to that broker or to a node of the cluster's metadata.

`connection_security(props)` reads the Java client's security settings of a --command-config
(as commands/client_config.py reads them for librdkafka): security.protocol PLAINTEXT, SSL,
SASL_PLAINTEXT or SASL_SSL; TLS from PEM stores (ssl.truststore.location/.certificates,
ssl.keystore.location/.key/.certificate.chain, ssl.key.password,
ssl.endpoint.identification.algorithm); SASL PLAIN and SCRAM-SHA-256/512 from sasl.jaas.config.
Anything else (GSSAPI, OAUTHBEARER, JKS/PKCS12 stores) is refused with one line.
"""

from __future__ import annotations

import os
import socket
import ssl
import struct
import time
from dataclasses import dataclass

from pk.engine import protocol as kp

from ..client_config import PLAIN_MODULE, SCRAM_MODULE, bootstrap_hosts, parse_jaas
from ..errors import ClientConfigError
from pk.engine.version import PK_VERSION

# kafka_admin (and concurrent.futures with it) only when an error is reported: the console
# producer and consumer start without it.

CLIENT_ID = "pk-admin"
METADATA_VERSION = 12
UNSUPPORTED_VERSION = 35


class Broker:
    """One node of the cluster: `host:port (id: 0 rack: null isFenced: false)` as Kafka's
    Node.toString() prints it."""

    def __init__(self, node_id: int, host: str, port: int, rack: str | None, fenced: bool = False):
        self.node_id, self.host, self.port, self.rack, self.fenced = node_id, host, port, rack, fenced

    def __str__(self) -> str:
        return (f"{self.host}:{self.port} (id: {self.node_id} rack: {self.rack if self.rack is not None else 'null'}"
                f" isFenced: {'true' if self.fenced else 'false'})")


class _Connection:
    """One broker connection; `versions` is what its ApiVersions answer advertised."""

    def __init__(self, host: str, port: int, timeout_s: float, security: "Security | None" = None,
                 client_id: str = CLIENT_ID):
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.corr = 0
        self.client_id = client_id  # what a group's member list shows as CLIENT-ID
        try:
            if security is not None and security.tls is not None:
                self.sock = security.tls.wrap_socket(self.sock, server_hostname=host)
            if security is not None and security.mechanism is not None:
                self._authenticate(security)
            # v4+: v3 leaves out features whose lowest supported level is 0 (KAFKA-17011)
            answer = self._api_versions(4)
            if answer["error_code"] == UNSUPPORTED_VERSION:  # an older broker (Kafka 2.8: v3)
                # it answers in v0's layout, listing the ApiVersions versions it does take
                mine = {a["api_key"]: a["max_version"] for a in answer["api_keys"]}
                answer = self._api_versions(min(mine.get(int(kp.ApiKey.API_VERSIONS), 0), 4))
        except Exception:
            self.sock.close()
            raise
        self.versions = {a["api_key"]: (a["min_version"], a["max_version"]) for a in answer["api_keys"]}
        self.api_versions_answer = answer  # features (KIP-584) too

    def _api_versions(self, version: int) -> dict:
        return self.call(kp.ApiKey.API_VERSIONS, version, {"client_software_name": "pk",
                                                           "client_software_version": PK_VERSION})

    def _authenticate(self, security: "Security") -> None:
        """SaslHandshake, then SaslAuthenticate rounds: PLAIN's one token or SCRAM's two."""
        answer = self.call(kp.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": security.mechanism})
        if answer["error_code"]:
            from .kafka_admin import ERRORS_PACKAGE, AdminError

            raise AdminError("UNSUPPORTED_SASL_MECHANISM", ERRORS_PACKAGE + "UnsupportedSaslMechanismException",
                             f"Client SASL mechanism '{security.mechanism}' not enabled in the server, enabled "
                             f"mechanisms are {answer['mechanisms']}", 33)
        if security.mechanism == "PLAIN":
            self._sasl_round(f"\0{security.username}\0{security.password}".encode(), security)
            return
        import scramp

        scram = scramp.ScramClient([security.mechanism], security.username, security.password)
        client_first = scram.get_client_first()
        if security.token_auth:  # Kafka's SCRAM extension: the login is a delegation token
            client_first += ",tokenauth=true"
            scram.client_first_bare += ",tokenauth=true"  # scramp signs the bare message it keeps
        first = self._sasl_round(client_first.encode(), security)
        scram.set_server_first(first.decode())
        final = self._sasl_round(scram.get_client_final().encode(), security)
        try:
            scram.set_server_final(final.decode())
        except scramp.ScramException:
            raise _authentication_failed(security.mechanism) from None

    def _sasl_round(self, token: bytes, security: "Security") -> bytes:
        answer = self.call(kp.ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": token})
        if answer["error_code"]:
            from .kafka_admin import ERRORS_PACKAGE, AdminError

            raise AdminError("SASL_AUTHENTICATION_FAILED", ERRORS_PACKAGE + "SaslAuthenticationException",
                             answer["error_message"] or _authentication_failed(security.mechanism).message, 58)
        return answer["auth_bytes"]

    def call(self, api_key: int, version: int, body: dict) -> dict:
        self.corr += 1
        self.sock.sendall(kp.encode_request(api_key, version, self.corr, body, client_id=self.client_id))
        size = struct.unpack(">i", self._read(4))[0]
        corr, answer = kp.parse_response(self._read(size), api_key, version)
        if corr != self.corr:
            raise ConnectionError(f"correlation id {corr} for request {self.corr}")
        return answer

    def _read(self, n: int) -> bytes:
        """Exactly n bytes, received into one buffer (answers of a fetch run to megabytes)."""
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = self.sock.recv_into(view[got:])
            if not k:
                raise ConnectionError("the broker closed the connection")
            got += k
        return bytes(buf)

    def close(self) -> None:
        """Close the socket; a connection already broken has nothing left to report."""
        try:
            self.sock.close()
        except OSError:
            pass


def _authentication_failed(mechanism: str) -> AdminError:
    from .kafka_admin import ERRORS_PACKAGE, AdminError

    return AdminError("SASL_AUTHENTICATION_FAILED", ERRORS_PACKAGE + "SaslAuthenticationException",
                      f"Authentication failed during authentication due to invalid credentials with SASL "
                      f"mechanism {mechanism}", 58)


@dataclass
class Security:
    """How to open a connection: a TLS context (SSL, SASL_SSL) and a SASL login (SASL_*)."""
    tls: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str = ""
    password: str = ""
    token_auth: bool = False  # SCRAM with a delegation token (the JAAS option tokenauth="true")


PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def connection_security(config: dict[str, str]) -> Security | None:
    """The Security of a Java client configuration (None: PLAINTEXT)."""
    protocol = config.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ClientConfigError(f"Invalid value {protocol} for configuration security.protocol: String must be "
                                "one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
    if protocol == "PLAINTEXT":
        return None
    security = Security()
    if protocol.endswith("SSL"):
        security.tls = _tls_context(config)
    if protocol.startswith("SASL"):
        security.mechanism = config.get("sasl.mechanism", "GSSAPI").strip()
        if security.mechanism not in MECHANISMS:
            raise ClientConfigError(f"pk: sasl.mechanism={security.mechanism} is not supported by this tool "
                                    f"(it speaks {', '.join(MECHANISMS)})")
        if "sasl.jaas.config" not in config:
            raise ClientConfigError("Could not find a 'KafkaClient' entry in the JAAS configuration. System "
                                    "property 'java.security.auth.login.config' is not set")
        entries = parse_jaas(config["sasl.jaas.config"])
        module, _, options = entries[0]
        wanted = PLAIN_MODULE if security.mechanism == "PLAIN" else SCRAM_MODULE
        if len(entries) != 1 or module != wanted or "username" not in options or "password" not in options:
            raise ClientConfigError(f"pk: sasl.jaas.config must be one {wanted} entry with username and password "
                                    f"for sasl.mechanism={security.mechanism}")
        security.username, security.password = options["username"], options["password"]
        security.token_auth = wanted == SCRAM_MODULE and options.get("tokenauth", "").strip().lower() == "true"
    return security


def usable_security(java: dict[str, str], extra: dict[str, str]) -> Security | None | bool:
    """The Security of a Java client configuration for pk's wire clients, or False when it asks
    for what only librdkafka serves (-X passthrough `extra`, a SASL mechanism or store type
    this module does not speak)."""
    if extra:
        return False
    try:
        return connection_security(java)
    except (ClientConfigError, OSError):
        return False


def _pem_file(config: dict[str, str], key: str) -> str | None:
    location = config.get(key, "").strip()
    if not location:
        return None
    declared = config.get(key.replace("location", "type"), "JKS").strip().upper()
    try:
        with open(location, "rb") as f:
            pem = b"-----BEGIN " in f.read(4096)
    except OSError as exc:
        raise ClientConfigError(f"Failed to load SSL store {location} ({key}): {exc.strerror or exc}") from None
    if not pem:
        raise ClientConfigError(f"pk: {key} {location} is a {declared} store; this tool reads PEM stores only "
                                f"(set {key.replace('location', 'type')}=PEM and a PEM file)")
    return location


def _tls_context(config: dict[str, str]) -> ssl.SSLContext:
    """A client TLS context from the Java client's PEM settings."""
    context = ssl.create_default_context()
    context.check_hostname = config.get("ssl.endpoint.identification.algorithm", "https").strip().lower() == "https"
    try:
        truststore = _pem_file(config, "ssl.truststore.location")
        if truststore is not None:
            context.load_verify_locations(cafile=truststore)
        if "ssl.truststore.certificates" in config:
            context.load_verify_locations(cadata=config["ssl.truststore.certificates"].strip())
        password = config.get("ssl.key.password") or config.get("ssl.keystore.password") or None
        keystore = _pem_file(config, "ssl.keystore.location")
        if keystore is not None:
            context.load_cert_chain(keystore, password=password)
        elif "ssl.keystore.certificate.chain" in config and "ssl.keystore.key" in config:
            # Python loads a client certificate from files only: a private file, removed at once
            import tempfile

            fd, path = tempfile.mkstemp(suffix=".pem")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(config["ssl.keystore.key"].strip() + "\n" +
                            config["ssl.keystore.certificate.chain"].strip() + "\n")
                context.load_cert_chain(path, password=password)
            finally:
                os.unlink(path)
    except ssl.SSLError as exc:
        raise ClientConfigError(f"Failed to load SSL keystore or truststore: {exc}") from None
    return context


class WireClient:
    def __init__(self, bootstrap: str, timeout_s: float = 30.0, call_name: str = "describeCluster",
                 security: Security | None = None):
        self.timeout_s = timeout_s
        self.security = security
        self._connections: dict[int | None, _Connection] = {}
        deadline = time.monotonic() + timeout_s
        while True:
            for host, port in bootstrap_hosts(bootstrap):
                try:
                    self._connections[None] = _Connection(host, port, max(deadline - time.monotonic(), 0.5),
                                                          security)
                    break
                except ssl.SSLError as exc:  # the broker's certificate is not trusted, or ours not accepted
                    from .kafka_admin import ERRORS_PACKAGE, AdminError

                    raise AdminError("SSL_AUTHENTICATION_FAILED", ERRORS_PACKAGE + "SslAuthenticationException",
                                     "SSL handshake failed", -1) from exc
                except OSError:
                    continue
            if None in self._connections:
                break
            if time.monotonic() >= deadline:
                from .kafka_admin import timeout_error

                raise timeout_error(call_name)
            time.sleep(0.2)
        self._brokers: list[Broker] | None = None

    def brokers(self) -> list[Broker]:
        """The cluster's brokers, from a Metadata request to the bootstrap broker."""
        if self._brokers is None:
            md = self.call(kp.ApiKey.METADATA, METADATA_VERSION,
                           {"topics": [], "allow_auto_topic_creation": False,
                            "include_topic_authorized_operations": False})
            self._brokers = [Broker(b["node_id"], b["host"], b["port"], b["rack"]) for b in md["brokers"]]
        return self._brokers

    def call(self, api_key: int, version: int, body: dict, node: int | None = None) -> dict:
        """Send at `version`, or at the broker's highest below it; an API the broker does not
        advertise fails as Kafka's admin client fails it."""
        conn = self._connection(node)
        lo, hi = conn.versions.get(int(api_key), (None, None))
        if lo is None or lo > version:
            from .kafka_admin import known_error

            raise known_error(35, f"The node does not support {kp.ApiKey(int(api_key)).name}")
        return conn.call(int(api_key), min(version, hi), body)

    def api_versions(self, node: int) -> dict[int, tuple[int, int]]:
        return self._connection(node).versions

    def api_versions_answer(self, node: int | None = None) -> dict:
        """The whole ApiVersions answer of a broker (the bootstrap broker when node is None)."""
        return self._connection(node).api_versions_answer

    def _connection(self, node: int | None) -> _Connection:
        if node not in self._connections:
            broker = next((b for b in self.brokers() if b.node_id == node), None)
            if broker is None:
                raise ConnectionError(f"no broker with id {node}")
            self._connections[node] = _Connection(broker.host, broker.port, self.timeout_s, self.security)
        return self._connections[node]

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
