"""Client configuration as Kafka users write it, for the confluent-kafka (librdkafka) clients.

Every tool that talks to a cluster (`--bootstrap-server`) takes its client settings the way
Kafka's tools do: Java `.properties` files (`--command-config`, `--producer.config`,
`--consumer.config`) and `key=value` options, with the Java client's keys. librdkafka names
some things differently and cannot read some Java-only formats, so:

- `to_librdkafka(java, extra)` translates a Java client configuration. For each key either
  * it means the same to librdkafka under the same name: it passes through (`acks`,
    `client.id`, `group.id`, `enable.idempotence`, ...; the list is LIBRDKAFKA_PROPERTIES);
  * it is renamed or converted (TRANSLATED below: `request.timeout.ms` -> `socket.timeout.ms`,
    `security.protocol` values, `sasl.mechanism`, `sasl.jaas.config` -> `sasl.username` and
    `sasl.password`, `ssl.truststore.*` -> `ssl.ca.location`, `ssl.endpoint.identification.algorithm`
    "" -> "none", `buffer.memory` -> `queue.buffering.max.kbytes`, ...);
  * it is a Java-only setting with no librdkafka meaning (serializers, metrics reporters, JVM
    security providers, ...) or one the tool itself reads (`default.api.timeout.ms`,
    `max.block.ms`): it is dropped;
  * anything else is refused: `Unknown client configuration: <key>`.
  Formats librdkafka cannot read fail with a clear one-line error (a JKS truststore names the
  PEM conversion). `extra` (the tool's own librdkafka settings, then kcat-style `-X key=value`
  properties) is applied last, untranslated: it wins.
- `validate_bootstrap(text)` is Kafka 3.7's ToolsUtils.validateBootstrapServer:
  `Please provide valid host:port like host1:9091,host2:9092`.
- `check_target(bootstrap, x_args, data_dir)` holds the CLIs' common checks before choosing the
  remote backend, and `check_resolvable(bootstrap)` fails fast, as the Java client does, when no
  bootstrap host resolves.
- `api_timeout_ms(java, default)` reads `default.api.timeout.ms`, the bound of every admin call.

Errors are commands/errors.py's `ClientConfigError` (a ValueError); str() is one line. Nothing
here imports confluent_kafka.
"""

from __future__ import annotations

import math
import re
import socket
from typing import Iterable, Mapping, Sequence

from pk.engine.javacompat import java_split

from .errors import BootstrapError, ClientConfigError


# --------------------------------------------------------------------------- bootstrap
# org.apache.kafka.common.utils.Utils.HOST_PORT_PATTERN, used by Utils.getPort.
_HOST_PORT = re.compile(r".*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)", re.S)
INVALID_HOST_PORT = "Please provide valid host:port like host1:9091,host2:9092"
INVALID_BOOTSTRAP = "Error while validating the bootstrap address"
NOT_RESOLVABLE = "No resolvable bootstrap urls given in bootstrap.servers"


def validate_bootstrap(text: str | None) -> None:
    """ToolsUtils.validateBootstrapServer (Kafka 3.7): every comma-separated entry must be
    `host:port` as Utils.getPort reads it. Raises BootstrapError with Kafka's message."""
    if text is None or not text.strip():
        raise BootstrapError(INVALID_BOOTSTRAP)
    entries = java_split(text, ",")
    valid = 0
    for entry in entries:
        m = _HOST_PORT.fullmatch(entry)
        if m is None:
            continue
        if int(m.group(2)) > 2**31 - 1:  # Integer.parseInt's NumberFormatException
            raise BootstrapError(f'For input string: "{m.group(2)}"')
        valid += 1
    if valid == 0 or valid != len(entries):
        raise BootstrapError(INVALID_HOST_PORT)


def bootstrap_hosts(text: str) -> list[tuple[str, int]]:
    """(host, port) of each entry, as ClientUtils.parseAndValidateAddresses reads them
    (Utils.getHost and Utils.getPort: the same pattern)."""
    out = []
    for entry in (e.strip() for e in text.split(",")):
        m = _HOST_PORT.fullmatch(entry) if entry else None
        if m:
            out.append((m.group(1), int(m.group(2))))
    return out


def check_resolvable(text: str) -> None:
    """The Java client refuses to start when no bootstrap host resolves (ConfigException
    "No resolvable bootstrap urls given in bootstrap.servers"); librdkafka would retry until
    the call's timeout. Raises ClientConfigError with Kafka's text."""
    for host, port in bootstrap_hosts(text):
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            return
        except (OSError, UnicodeError):
            continue
    raise ClientConfigError(NOT_RESOLVABLE)


def parse_x_args(items: Iterable[str]) -> dict[str, str]:
    """kcat's `-X key=value` librdkafka passthrough; later ones win."""
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ClientConfigError(f"Invalid -X argument '{item}': expected -X property=value")
        out[key] = value
    return out


def check_target(bootstrap: str | None, x_args: Sequence[str], data_dir: str | None) -> dict[str, str]:
    """The checks every CLI makes before using the remote backend: -X only with a cluster,
    --data-dir only without one, a valid host:port list. Returns the -X properties."""
    if bootstrap is None:
        raise BootstrapError("Option -X needs --bootstrap-server: librdkafka properties do not apply to the "
                             "bundled engine")
    if data_dir is not None:
        raise BootstrapError('Option "[data-dir]" can\'t be used with option "[bootstrap-server]"')
    validate_bootstrap(bootstrap)
    return parse_x_args(x_args)


# --------------------------------------------------------------------------- key tables
# Global and topic properties of librdkafka 2.x that a configuration may name directly
# (CONFIGURATION.md, less the callback/opaque entries that only the C API can set).
LIBRDKAFKA_PROPERTIES = frozenset("""
client.id metadata.broker.list bootstrap.servers message.max.bytes message.copy.max.bytes
receive.message.max.bytes max.in.flight.requests.per.connection max.in.flight metadata.recovery.strategy
metadata.recovery.rebootstrap.trigger.ms topic.metadata.refresh.interval.ms metadata.max.age.ms
topic.metadata.refresh.fast.interval.ms topic.metadata.refresh.fast.cnt topic.metadata.refresh.sparse
topic.metadata.propagation.max.ms topic.blacklist debug socket.timeout.ms socket.blocking.max.ms
socket.send.buffer.bytes socket.receive.buffer.bytes socket.keepalive.enable socket.nagle.disable
socket.max.fails broker.address.ttl broker.address.family socket.connection.setup.timeout.ms
connections.max.idle.ms reconnect.backoff.jitter.ms reconnect.backoff.ms reconnect.backoff.max.ms
statistics.interval.ms log_level log.queue log.thread.name enable.random.seed log.connection.close
internal.termination.signal api.version.request api.version.request.timeout.ms api.version.fallback.ms
broker.version.fallback allow.auto.create.topics security.protocol ssl.cipher.suites ssl.curves.list
ssl.sigalgs.list ssl.key.location ssl.key.password ssl.key.pem ssl.certificate.location ssl.certificate.pem
ssl.ca.location https.ca.location https.ca.pem ssl.ca.pem ssl.ca.certificate.stores ssl.crl.location
ssl.keystore.location ssl.keystore.password ssl.providers ssl.engine.location ssl.engine.id
enable.ssl.certificate.verification ssl.endpoint.identification.algorithm sasl.mechanisms sasl.mechanism
sasl.kerberos.service.name sasl.kerberos.principal sasl.kerberos.kinit.cmd sasl.kerberos.keytab
sasl.kerberos.min.time.before.relogin sasl.username sasl.password sasl.oauthbearer.config
enable.sasl.oauthbearer.unsecure.jwt sasl.oauthbearer.method sasl.oauthbearer.client.id
sasl.oauthbearer.client.secret sasl.oauthbearer.scope sasl.oauthbearer.extensions
sasl.oauthbearer.token.endpoint.url sasl.oauthbearer.sub.claim.name sasl.oauthbearer.grant.type
group.id group.instance.id partition.assignment.strategy session.timeout.ms heartbeat.interval.ms
group.protocol.type group.protocol group.remote.assignor coordinator.query.interval.ms max.poll.interval.ms
enable.auto.commit auto.commit.interval.ms enable.auto.offset.store queued.min.messages
queued.max.messages.kbytes fetch.wait.max.ms fetch.queue.backoff.ms fetch.message.max.bytes
max.partition.fetch.bytes fetch.max.bytes fetch.min.bytes fetch.error.backoff.ms isolation.level
enable.partition.eof check.crcs client.rack max.poll.records transactional.id transaction.timeout.ms
enable.idempotence enable.gapless.guarantee queue.buffering.max.messages queue.buffering.max.kbytes
queue.buffering.max.ms linger.ms message.send.max.retries retries retry.backoff.ms retry.backoff.max.ms
queue.buffering.backpressure.threshold compression.codec compression.type batch.num.messages batch.size
delivery.report.only.error sticky.partitioning.linger.ms client.dns.lookup enable.metrics.push
request.required.acks acks request.timeout.ms message.timeout.ms delivery.timeout.ms queuing.strategy
produce.offset.report partitioner compression.level auto.commit.enable auto.offset.reset
consume.callback.max.messages
""".split())

# Java client keys (CommonClientConfigs, AdminClientConfig, ProducerConfig, ConsumerConfig,
# SslConfigs, SaslConfigs) that mean nothing to librdkafka, or that the tools read
# themselves (DROPPED_TOOL_KEYS): accepted and left out.
DROPPED_TOOL_KEYS = frozenset({"default.api.timeout.ms", "max.block.ms", "exclude.internal.topics"})
DROPPED = frozenset("""
key.serializer value.serializer key.deserializer value.deserializer interceptor.classes
metric.reporters metrics.num.samples metrics.recording.level metrics.sample.window.ms auto.include.jmx.reporter
security.providers ssl.protocol ssl.provider ssl.enabled.protocols ssl.keymanager.algorithm
ssl.trustmanager.algorithm ssl.secure.random.implementation ssl.engine.factory.class ssl.truststore.password
sasl.client.callback.handler.class sasl.login.class sasl.login.connect.timeout.ms sasl.login.read.timeout.ms
sasl.login.retry.backoff.max.ms sasl.login.retry.backoff.ms sasl.login.refresh.window.factor
sasl.login.refresh.window.jitter sasl.login.refresh.min.period.seconds sasl.login.refresh.buffer.seconds
sasl.kerberos.ticket.renew.window.factor sasl.kerberos.ticket.renew.jitter sasl.oauthbearer.scope.claim.name
sasl.oauthbearer.jwks.endpoint.url sasl.oauthbearer.jwks.endpoint.refresh.ms
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms
sasl.oauthbearer.clock.skew.seconds sasl.oauthbearer.expected.audience sasl.oauthbearer.expected.issuer
sasl.oauthbearer.header.urlencode socket.connection.setup.timeout.max.ms metadata.max.idle.ms
partitioner.ignore.keys partitioner.adaptive.partitioning.enable partitioner.availability.timeout.ms
internal.leave.group.on.close internal.throw.on.fetch.stable.offset.unsupported rebalance.timeout.ms
default.list.key.serde.inner default.list.key.serde.type default.list.value.serde.inner
default.list.value.serde.type
""".split()) | DROPPED_TOOL_KEYS

# Java key -> librdkafka key, same value (a plain rename).
RENAMED = {
    "sasl.mechanism": "sasl.mechanisms",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "request.timeout.ms": "socket.timeout.ms",
    "max.request.size": "message.max.bytes",
    "buffer.memory": "queue.buffering.max.kbytes",
    "ssl.keystore.key": "ssl.key.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.truststore.certificates": "ssl.ca.pem",
}

# Handled together by _security(): the Java formats librdkafka cannot read as they are.
_SECURITY_KEYS = frozenset({
    "sasl.jaas.config", "sasl.login.callback.handler.class",
    "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.certificates",
    "ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.key", "ssl.keystore.certificate.chain",
})

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_ASSIGNORS = {  # Java assignor class -> librdkafka assignor name (and its protocol type)
    "org.apache.kafka.clients.consumer.RangeAssignor": ("range", "eager"),
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": ("roundrobin", "eager"),
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": ("cooperative-sticky", "cooperative"),
    "range": ("range", "eager"), "roundrobin": ("roundrobin", "eager"),
    "cooperative-sticky": ("cooperative-sticky", "cooperative"),
}
_DEFAULT_PARTITIONERS = {"org.apache.kafka.clients.producer.internals.DefaultPartitioner", ""}
_CODEC_LEVELS = {"compression.gzip.level": "gzip", "compression.lz4.level": "lz4",
                 "compression.zstd.level": "zstd"}


def known_java_key(key: str) -> bool:
    """Whether to_librdkafka accepts `key` (it passes, translates or drops it)."""
    return (key in LIBRDKAFKA_PROPERTIES or key in DROPPED or key in RENAMED or key in _SECURITY_KEYS
            or key in _CODEC_LEVELS or key in ("partitioner.class", "bootstrap.controllers"))


# --------------------------------------------------------------------------- values
def _java_number(key: str, value: str, kind: str = "INT") -> int:
    text = value.strip()
    limit = 2**31 if kind == "INT" else 2**63
    if re.fullmatch(r"[+-]?[0-9]+", text) and -limit <= int(text) < limit:
        return int(text)
    raise ClientConfigError(f"Invalid value {value} for configuration {key}: Not a number of type {kind}")


def api_timeout_ms(java: Mapping[str, str], default: int = 60000) -> int:
    """default.api.timeout.ms of a Java client configuration (Kafka's admin and consumer bound
    for a blocking call), validated as Java does."""
    if "default.api.timeout.ms" not in java:
        return default
    value = _java_number("default.api.timeout.ms", java["default.api.timeout.ms"])
    if value < 0:
        raise ClientConfigError(f"Invalid value {value} for configuration default.api.timeout.ms: "
                                "Value must be at least 0")
    return value


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


# --------------------------------------------------------------------------- JAAS
_JAAS_WORD = re.compile(r"[A-Za-z0-9_$.\-\u00a0-\u00ff]+")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _jaas_tokens(text: str) -> list[tuple[str, str | None]]:
    """java.io.StreamTokenizer as JaasConfig sets it up: ("word", text), ("number", None),
    ("quote", text) or (char, None) for a single character such as '=' and ';'."""
    tokens: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] not in "\r\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "/":  # StreamTokenizer's default comment character
            while i < n and text[i] not in "\r\n":
                i += 1
        elif c in "\"'":
            i += 1
            out = []
            while i < n and text[i] != c and text[i] not in "\r\n":
                ch = text[i]
                if ch == "\\" and i + 1 < n:
                    i += 1
                    esc = text[i]
                    if esc in "01234567":
                        digits = re.match(r"[0-7]{1,3}", text[i:]).group(0)
                        if len(digits) == 3 and digits[0] > "3":
                            digits = digits[:2]
                        out.append(chr(int(digits, 8)))
                        i += len(digits)
                        continue
                    out.append(_ESCAPES.get(esc, esc))
                else:
                    out.append(ch)
                i += 1
            i += 1  # the closing quote (or the line end)
            tokens.append(("quote", "".join(out)))
        else:
            m = _JAAS_WORD.match(text, i)
            if m is None:
                tokens.append((c, None))
                i += 1
                continue
            word = m.group(0)
            i = m.end()
            # parseNumbers(): a token starting with a digit, '.' or '-' is a number (no sval)
            tokens.append(("number", None) if word[0] in "0123456789.-" else ("word", word))
    return tokens


def parse_jaas(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """org.apache.kafka.common.security.JaasConfig: (login module, control flag, options) per
    entry, with Kafka's IllegalArgumentException messages."""
    tokens = _jaas_tokens(text)
    entries = []
    i = 0

    def sval(k: int) -> str | None:
        return tokens[k][1] if k < len(tokens) and tokens[k][0] in ("word", "quote") else None

    while i < len(tokens):
        module = sval(i)
        i += 1
        if i >= len(tokens):
            raise ClientConfigError("Login module control flag not specified in JAAS config")
        flag = sval(i)
        if flag is None:
            raise ClientConfigError("Login module control flag is not available in the JAAS config")
        if flag.upper() not in ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL"):
            raise ClientConfigError(f"Invalid login module control flag '{flag}' in JAAS config")
        i += 1
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i][0] != ";":
            key = sval(i) or "null"  # Java prints a missing sval as null
            if (i + 1 >= len(tokens) or tokens[i + 1][0] != "=" or i + 2 >= len(tokens)
                    or sval(i + 2) is None):
                raise ClientConfigError(f"Value not specified for key '{key}' in JAAS config")
            options[key] = sval(i + 2)
            i += 3
        if i >= len(tokens):
            raise ClientConfigError("JAAS config entry not terminated by semi-colon")
        i += 1  # the ';'
        entries.append((module or "null", flag, options))
    if not entries:
        raise ClientConfigError("Login module not specified in JAAS config")
    return entries


PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"


def _jaas_to_librdkafka(text: str, conf: dict[str, str]) -> None:
    entries = parse_jaas(text)
    if len(entries) != 1:
        raise ClientConfigError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    module, _flag, options = entries[0]
    if module in (PLAIN_MODULE, SCRAM_MODULE):
        for java_key, key in (("username", "sasl.username"), ("password", "sasl.password")):
            if java_key in options:
                conf[key] = options[java_key]
        if options.get("tokenauth", "").lower() == "true":
            raise ClientConfigError("sasl.jaas.config: ScramLoginModule tokenauth=true (delegation tokens) "
                                    "cannot be used with librdkafka")
    elif module == KRB5_MODULE:
        if "keyTab" in options:
            conf["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            conf["sasl.kerberos.principal"] = options["principal"]
    elif module == OAUTH_MODULE or module.endswith(".OAuthBearerLoginModule"):
        sub = options.get("unsecuredLoginStringClaim_sub")
        if sub is not None:
            conf["enable.sasl.oauthbearer.unsecure.jwt"] = "true"
            conf["sasl.oauthbearer.config"] = f"principal={sub}"
        for java_key, key in (("clientId", "sasl.oauthbearer.client.id"),
                              ("clientSecret", "sasl.oauthbearer.client.secret"),
                              ("scope", "sasl.oauthbearer.scope")):
            if java_key in options:
                conf[key] = options[java_key]
        if "clientId" in options:
            conf["sasl.oauthbearer.method"] = "oidc"
        extensions = [f"{k[len('extension_'):]}={v}" for k, v in options.items() if k.startswith("extension_")]
        if extensions:
            conf["sasl.oauthbearer.extensions"] = ",".join(extensions)
    else:
        raise ClientConfigError(f"sasl.jaas.config: login module {module} cannot be translated for librdkafka "
                                "(PlainLoginModule, ScramLoginModule, OAuthBearerLoginModule and Krb5LoginModule can)")


# --------------------------------------------------------------------------- key stores
def _store_format(path: str, key: str) -> str:
    """"PEM", "JKS" or "PKCS12", from the file's first bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise ClientConfigError(f"Failed to load SSL store {path} ({key}): {exc.strerror or exc}") from None
    if head[:4] in (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce"):  # JKS, JCEKS
        return "JKS"
    if b"-----BEGIN " in head:
        return "PEM"
    return "PKCS12" if head[:1] == b"\x30" else "unknown"


def _truststore(java: Mapping[str, str], conf: dict[str, str]) -> None:
    location = java.get("ssl.truststore.location", "").strip()
    declared = java.get("ssl.truststore.type", "JKS").strip().upper() or "JKS"
    if "ssl.truststore.certificates" in java:
        conf["ssl.ca.pem"] = java["ssl.truststore.certificates"].strip()
    if not location:
        return
    found = _store_format(location, "ssl.truststore.location")
    if found == "PEM":
        conf["ssl.ca.location"] = location
        return
    kind = found if found in ("JKS", "PKCS12") else declared
    raise ClientConfigError(
        f"ssl.truststore.location {location} is a {kind} truststore, which librdkafka cannot read: export its "
        f"certificates as PEM (keytool -exportcert -rfc -keystore {location} -alias <alias> -file ca.pem), then "
        "set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM")


def _keystore(java: Mapping[str, str], conf: dict[str, str]) -> None:
    if "ssl.keystore.key" in java:
        conf["ssl.key.pem"] = java["ssl.keystore.key"].strip()
    if "ssl.keystore.certificate.chain" in java:
        conf["ssl.certificate.pem"] = java["ssl.keystore.certificate.chain"].strip()
    location = java.get("ssl.keystore.location", "").strip()
    if location:
        found = _store_format(location, "ssl.keystore.location")
        if found == "PEM":  # key and certificate chain in one PEM file
            conf["ssl.certificate.location"] = location
            conf["ssl.key.location"] = location
        elif found == "JKS":
            raise ClientConfigError(
                f"ssl.keystore.location {location} is a JKS keystore, which librdkafka cannot read: convert it "
                f"to PKCS12 (keytool -importkeystore -srckeystore {location} -destkeystore keystore.p12 "
                "-deststoretype PKCS12) and set ssl.keystore.type=PKCS12")
        else:
            conf["ssl.keystore.location"] = location
            if "ssl.keystore.password" in java:
                conf["ssl.keystore.password"] = java["ssl.keystore.password"].strip()
            return
    if "ssl.key.password" in java:
        conf["ssl.key.password"] = java["ssl.key.password"].strip()


def _security(java: Mapping[str, str], conf: dict[str, str]) -> None:
    if "sasl.jaas.config" in java:
        _jaas_to_librdkafka(java["sasl.jaas.config"], conf)
    handler = java.get("sasl.login.callback.handler.class", "").strip()
    if handler.endswith("OAuthBearerLoginCallbackHandler"):  # Java's OIDC client-credentials login
        conf["sasl.oauthbearer.method"] = "oidc"
    _truststore(java, conf)
    _keystore(java, conf)


# --------------------------------------------------------------------------- translation
def to_librdkafka(java: Mapping[str, str], extra: Mapping[str, object] | None = None, *,
                  role: str | None = None) -> dict[str, str]:
    """A Java client configuration as librdkafka properties, then `extra` (librdkafka keys,
    untouched: the tool's own settings and -X) on top. `role` ("producer", "consumer",
    "admin" or None) only matters where Java's meaning depends on the client: a producer's
    request.timeout.ms is also librdkafka's produce request timeout."""
    conf: dict[str, str] = {}
    unknown = [k for k in java if not known_java_key(k)]
    if unknown:
        raise ClientConfigError(f"Unknown client configuration: {unknown[0]}")
    codec = (str((extra or {}).get("compression.type") or java.get("compression.type", "none"))).strip().lower()
    for key, raw in java.items():
        value = raw.strip()
        if key in DROPPED or key in _SECURITY_KEYS:
            continue
        if key == "bootstrap.controllers":
            raise ClientConfigError("bootstrap.controllers cannot be used with librdkafka, which talks to brokers: "
                                    "use bootstrap.servers")
        if key == "security.protocol":
            if value.upper() not in SECURITY_PROTOCOLS:
                raise ClientConfigError(f"Invalid value {raw} for configuration security.protocol: String must be "
                                        f"one of: {', '.join(SECURITY_PROTOCOLS)}")
            conf[key] = value.lower()
        elif key == "ssl.endpoint.identification.algorithm":
            conf[key] = value.lower() if value else "none"
        elif key == "ssl.cipher.suites":
            if value:
                raise ClientConfigError("ssl.cipher.suites: Java's cipher suite names are not OpenSSL's; set "
                                        "librdkafka's list with -X ssl.cipher.suites=<OpenSSL cipher list>")
        elif key == "request.timeout.ms":
            ms = _java_number(key, raw)
            conf["socket.timeout.ms"] = str(_clamp(ms, 10, 300000))
            if role == "producer":
                conf["request.timeout.ms"] = str(_clamp(ms, 1, 900000))
        elif key in ("send.buffer.bytes", "receive.buffer.bytes"):
            size = _java_number(key, raw)
            conf[RENAMED[key]] = str(0 if size < 0 else min(size, 100000000))  # -1: the OS default
        elif key == "buffer.memory":
            conf[RENAMED[key]] = str(_clamp(math.ceil(_java_number(key, raw, "LONG") / 1024), 1, 2147483647))
        elif key == "max.request.size":
            conf[RENAMED[key]] = str(_clamp(_java_number(key, raw), 1000, 1000000000))
        elif key == "batch.size":
            size = _java_number(key, raw)
            if size <= 0:  # Java: batching disabled
                conf["batch.num.messages"] = "1"
            else:
                conf[key] = str(size)
        elif key == "connections.max.idle.ms":
            conf[key] = str(max(_java_number(key, raw, "LONG"), 0))
        elif key == "auto.offset.reset":
            conf[key] = "error" if value.lower() == "none" else value.lower()
        elif key == "partition.assignment.strategy":
            conf[key] = _assignors(raw)
        elif key == "partitioner.class":
            if value not in _DEFAULT_PARTITIONERS:
                raise ClientConfigError(f"partitioner.class {value} cannot be used with librdkafka (its "
                                        "murmur2_random partitioner is Kafka's default one)")
        elif key in _CODEC_LEVELS:
            if _CODEC_LEVELS[key] == codec:
                conf["compression.level"] = value
        elif key in RENAMED:
            conf[RENAMED[key]] = value
        else:
            conf[key] = value.lower() if value.lower() in ("true", "false") else value
    _security(java, conf)
    for key, value in (extra or {}).items():
        conf[key] = value if isinstance(value, str) else str(value)
    return conf


def _assignors(text: str) -> str:
    """partition.assignment.strategy: Java classes to librdkafka names. librdkafka cannot mix
    eager and cooperative assignors (Java's default lists both, for upgrades): the protocol of
    the first one wins, as it is the one a Java group settles on."""
    names, kind = [], None
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if item not in _ASSIGNORS:
            raise ClientConfigError(f"partition.assignment.strategy {item} cannot be used with librdkafka "
                                    "(RangeAssignor, RoundRobinAssignor and CooperativeStickyAssignor can)")
        name, protocol = _ASSIGNORS[item]
        kind = kind or protocol
        if protocol == kind and name not in names:
            names.append(name)
    return ",".join(names)


# --------------------------------------------------------------------------- clients
def librdkafka_error(text: str, java: Mapping[str, str] | None = None) -> ClientConfigError:
    """A configuration error librdkafka raised when a client was created, in pk's words."""
    m = re.match(r'No such configuration property: "(.*)"', text)
    if m:
        return ClientConfigError(f"Unknown client configuration: {m.group(1)}")
    m = re.search(r'configuration property "(.*?)"', text)
    if m and java:
        back = {v: k for k, v in RENAMED.items()}
        if m.group(1) in back and back[m.group(1)] in java:
            text += f" (from {back[m.group(1)]})"
    return ClientConfigError(text)


def admin_config(bootstrap: str, command_config: str | None, x_args: Mapping[str, str] | None,
                 client_id: str | None = None, default_timeout_ms: int = 60000) -> tuple[dict[str, str], int]:
    """(librdkafka config, api timeout in ms) for an admin tool: the --command-config file
    (Java properties), then bootstrap.servers and the tool's client.id as Kafka's tools set
    them, then -X. Raises PropertiesError for an unreadable file, ClientConfigError otherwise."""
    from .properties import load_properties

    java = load_properties(command_config) if command_config is not None else {}
    java["bootstrap.servers"] = bootstrap
    if client_id is not None:
        java["client.id"] = client_id
    timeout = api_timeout_ms(java, default_timeout_ms)
    conf = to_librdkafka(java, dict(x_args or {}), role="admin")
    if "log_level" not in conf and "debug" not in conf:
        conf["log_level"] = "0"  # librdkafka's log lines would break pk's one-line errors
    return conf, timeout


def java_message(first_line: str) -> str:
    """getMessage() from a Java exception's toString() (`java.nio.file.NoSuchFileException: /x`
    -> `/x`), for the tools that print the message alone."""
    head, sep, rest = first_line.partition(": ")
    return rest if sep and re.fullmatch(r"[a-z][\w.]*\.[A-Z]\w*", head) else first_line
