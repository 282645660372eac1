"""TLS for SSL and SASL_SSL listeners, configured with Kafka's ssl.* keys (PEM stores only).

- key store: `ssl.keystore.type=PEM` with `ssl.keystore.location` (one PEM file: the private key
  and the certificate chain) or inline `ssl.keystore.key` + `ssl.keystore.certificate.chain`;
  `ssl.key.password` decrypts an encrypted key;
- trust store: `ssl.truststore.type=PEM` with `ssl.truststore.location` or inline
  `ssl.truststore.certificates` (the system's CAs when neither is set);
- `ssl.client.auth`: none, requested (a certificate is asked for and checked if sent) or required;
- `ssl.enabled.protocols`, `ssl.cipher.suites`.

Each key may be set per listener as `listener.name.<listener>.ssl.*`. JKS and PKCS12 stores are
refused at startup with the command that converts them to PEM.

The principal of a TLS connection is Kafka's DefaultKafkaPrincipalBuilder's: "User:" and the
client certificate's subject as Java's X500Principal.getName() writes it (RFC 2253), or
User:ANONYMOUS without a client certificate.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from .config import BrokerConfig, ConfigError, Listener

ANONYMOUS = "User:ANONYMOUS"
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
# How to turn a Java key store into the PEM file pk reads, named in the startup refusal.
_CONVERSION = ("convert it to PEM (keytool -importkeystore -srckeystore {path} -destkeystore store.p12 "
               "-deststoretype PKCS12; openssl pkcs12 -in store.p12 -out store.pem) and set {key}.type=PEM")


def server_context(config: BrokerConfig, listener: Listener) -> ssl.SSLContext:
    """The server-side SSLContext of a TLS listener; ConfigError (one line) for what cannot be used."""
    get = lambda key: config.listener_get(listener.name, key)  # noqa: E731
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _set_protocols(context, get("ssl.enabled.protocols"), listener)
    if get("ssl.cipher.suites"):
        try:
            context.set_ciphers(":".join(c.strip() for c in get("ssl.cipher.suites").split(",") if c.strip()))
        except ssl.SSLError:
            raise ConfigError(f"Invalid value {get('ssl.cipher.suites')} for configuration ssl.cipher.suites "
                              f"of listener {listener.name}: no cipher suite can be used") from None
    _load_key_store(context, get, listener)
    _load_trust_store(context, get, listener)
    auth = (get("ssl.client.auth") or "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"Invalid value {auth} for configuration ssl.client.auth: "
                          f"String must be one of: required, requested, none")
    context.verify_mode = _CLIENT_AUTH[auth]
    rules = (get("ssl.principal.mapping.rules") or "DEFAULT").strip()
    if rules != "DEFAULT":
        # Ignoring them would give certificates other principals than Kafka gives them.
        raise ConfigError(f"ssl.principal.mapping.rules={rules} of listener {listener.name} is not supported "
                          f"by pk-server-start: only DEFAULT (the certificate's distinguished name)")
    return context


def _set_protocols(context: ssl.SSLContext, text: str | None, listener: Listener) -> None:
    names = [p.strip() for p in (text or "TLSv1.2,TLSv1.3").split(",") if p.strip()]
    versions = [_PROTOCOLS[n] for n in names if n in _PROTOCOLS]
    if not versions:
        raise ConfigError(f"Invalid value {text} for configuration ssl.enabled.protocols of listener "
                          f"{listener.name}: pk supports TLSv1.2 and TLSv1.3")
    context.minimum_version, context.maximum_version = min(versions), max(versions)


def _store_type(get, key: str) -> str:
    return (get(f"{key}.type") or "JKS").strip().upper()


def _load_key_store(context: ssl.SSLContext, get, listener: Listener) -> None:
    location, inline_key = get("ssl.keystore.location"), get("ssl.keystore.key")
    kind = _store_type(get, "ssl.keystore")
    if location is None and inline_key is None:
        raise ConfigError(f"Listener {listener.name} ({listener.security_protocol}) needs a key store: set "
                          f"ssl.keystore.type=PEM and ssl.keystore.location (or ssl.keystore.key and "
                          f"ssl.keystore.certificate.chain)")
    if kind != "PEM":
        raise ConfigError(f"Key store type {kind} of listener {listener.name} is not supported: "
                          + _CONVERSION.format(path=location or "<store>", key="ssl.keystore"))
    password = get("ssl.key.password")
    try:
        if inline_key is not None:
            chain = get("ssl.keystore.certificate.chain")
            if not chain:
                raise ConfigError("ssl.keystore.key is set without ssl.keystore.certificate.chain")
            _load_inline_chain(context, _pem_lines(inline_key) + "\n" + _pem_lines(chain), password)
        else:
            context.load_cert_chain(location, password=password)
    except FileNotFoundError:
        raise ConfigError(f"Failed to load SSL keystore {location} of type PEM: no such file") from None
    except (ssl.SSLError, OSError) as exc:
        where = location or "ssl.keystore.key"
        raise ConfigError(f"Failed to load SSL keystore {where} of type PEM: {exc.strerror or exc} "
                          f"(a private key and its certificate chain; ssl.key.password if the key is "
                          f"encrypted)") from None


def _load_inline_chain(context: ssl.SSLContext, pem: str, password: str | None) -> None:
    """load_cert_chain reads files only: the inline PEM goes through a private temporary file."""
    fd, path = tempfile.mkstemp(prefix="pk-keystore-", suffix=".pem")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(pem)
        context.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def _load_trust_store(context: ssl.SSLContext, get, listener: Listener) -> None:
    location, inline = get("ssl.truststore.location"), get("ssl.truststore.certificates")
    if location is None and inline is None:
        context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        return
    kind = _store_type(get, "ssl.truststore")
    if kind != "PEM":
        raise ConfigError(f"Trust store type {kind} of listener {listener.name} is not supported: "
                          + _CONVERSION.format(path=location or "<store>", key="ssl.truststore"))
    try:
        if inline is not None:
            context.load_verify_locations(cadata=_pem_lines(inline))
        else:
            context.load_verify_locations(cafile=location)
    except FileNotFoundError:
        raise ConfigError(f"Failed to load SSL truststore {location} of type PEM: no such file") from None
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"Failed to load SSL truststore {location or 'ssl.truststore.certificates'} "
                          f"of type PEM: {exc}") from None


def _pem_lines(text: str) -> str:
    """An inline PEM value as properties files hold it: on one line, or with escaped newlines
    (Kafka accepts both); put back on lines of their own."""
    import re

    text = text.replace("\\n", "\n")
    return re.sub(r"\s*(-----(?:BEGIN|END) [A-Z ]+-----)\s*", r"\n\1\n", text).strip() + "\n"


# ---------------------------------------------------------------------- principals

# X500Principal.getName()'s keywords for RFC 2253; every other attribute is written as its OID
# and the value's DER encoding in hex.
_KEYWORDS = {"commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
             "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
             "domainComponent": "DC", "userId": "UID"}
_OIDS = {"emailAddress": ("1.2.840.113549.1.9.1", 0x16), "serialNumber": ("2.5.4.5", 0x13),
         "surname": ("2.5.4.4", 0x0C), "givenName": ("2.5.4.42", 0x0C), "title": ("2.5.4.12", 0x0C),
         "initials": ("2.5.4.43", 0x0C), "generationQualifier": ("2.5.4.44", 0x0C),
         "pseudonym": ("2.5.4.65", 0x0C), "dnQualifier": ("2.5.4.46", 0x13),
         "postalCode": ("2.5.4.17", 0x0C), "businessCategory": ("2.5.4.15", 0x0C)}


def tls_principal(ssl_object) -> str:
    """The principal of a TLS connection: User:<subject DN> of a verified client certificate."""
    if ssl_object is None:
        return ANONYMOUS
    try:
        cert = ssl_object.getpeercert()
    except ValueError:
        cert = None
    if not cert or not cert.get("subject"):
        return ANONYMOUS
    return "User:" + rfc2253(cert["subject"])


def rfc2253(subject) -> str:
    """A subject as ssl's getpeercert() gives it (RDNs of (attribute, value) pairs, most general
    first) in RFC 2253 form: most specific RDN first, keywords or OIDs, special characters escaped."""
    rdns = []
    for rdn in reversed(subject):
        rdns.append("+".join(_attribute(name, value) for name, value in rdn))
    return ",".join(rdns)


def _attribute(name: str, value: str) -> str:
    if name in _KEYWORDS:
        return f"{_KEYWORDS[name]}={_escape(value)}"
    oid, tag = _OIDS.get(name, (name, 0x0C))
    data = value.encode()
    return f"{oid}=#{_der(tag, data).hex()}"


def _der(tag: int, data: bytes) -> bytes:
    n = len(data)
    if n < 0x80:
        return bytes([tag, n]) + data
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + data


def _escape(value: str) -> str:
    out = []
    for i, ch in enumerate(value):
        if ch in ',+"\\<>;' or (ch == "#" and i == 0) or (ch == " " and i in (0, len(value) - 1)):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)
