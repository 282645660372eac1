"""SASL authentication on SASL_PLAINTEXT and SASL_SSL listeners: SaslHandshake (17) and
SaslAuthenticate (36), mechanisms PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, configured with Kafka's keys.

- `sasl.enabled.mechanisms` (per listener: listener.name.<l>.sasl.enabled.mechanisms); Kafka's
  default, GSSAPI, and OAUTHBEARER are refused at startup.
- Each mechanism needs a JAAS entry, `listener.name.<l>.<mechanism>.sasl.jaas.config` or
  `sasl.jaas.config`, as Kafka does; PLAIN's users are its `user_<name>="<password>"` options;
  SCRAM's credentials are in the data directory (engine/scram_credentials.py).
- `connections.max.reauth.ms`: the session lifetime told to clients (SaslAuthenticate v1+); a client
  re-authenticates on the same connection, and a connection whose session has expired is closed
  at its next request that is not part of an authentication.

A connection's SaslAuthenticator follows Kafka's SaslServerAuthenticator: before authentication
only ApiVersions, SaslHandshake and SaslAuthenticate are accepted (anything else closes the
connection); after a v0 handshake the tokens come as bare size-prefixed frames without Kafka
headers; a failed authentication is answered (SASL_AUTHENTICATION_FAILED and Kafka's message)
and the connection closed. SCRAM's exchange is the `scramp` library's.
"""

from __future__ import annotations

import hmac
import logging
import re
import time
from dataclasses import dataclass, field


from ..javacompat import hashmap_order
from ..protocol import ApiKey
from ..protocol import errors as E
from ..delegation_tokens import DelegationTokens
from ..scram_credentials import ScramCredentials
from .config import BrokerConfig, ConfigError, Listener

log = logging.getLogger("pk.sasl")

SUPPORTED = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
HANDSHAKE, AUTHENTICATE, API_VERSIONS = int(ApiKey.SASL_HANDSHAKE), int(ApiKey.SASL_AUTHENTICATE), int(ApiKey.API_VERSIONS)
AFTER_SUCCESS = "SaslAuthenticate request received after successful authentication"
_JAAS_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;]+)')
_JAAS_HEAD = re.compile(r"^\s*([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\b", re.I)


class AuthenticationFailed(Exception):
    """Authentication failed; the message is what the client is told."""


# ---------------------------------------------------------------------- configuration

@dataclass
class SaslSettings:
    """A SASL listener's settings, checked at startup."""
    listener: str
    mechanisms: list[str]  # in the order Kafka's handshake lists them
    plain_users: dict[str, str] = field(default_factory=dict)
    reauth_ms: int = 0


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """(login module class, options) of a one-entry JAAS config line, e.g.
    `...PlainLoginModule required user_alice="secret";`. ConfigError when malformed."""
    head = _JAAS_HEAD.match(text)
    if not head:
        raise ConfigError(f"Invalid JAAS config: expected '<LoginModule> required <options>;', got {text.strip()!r}")
    rest = text[head.end():].strip()
    if not rest.endswith(";"):
        raise ConfigError("Invalid JAAS config: the login module entry must end with ';'")
    rest = rest[:-1]
    options, pos = {}, 0
    while rest[pos:].strip():
        m = _JAAS_OPTION.match(rest, pos)
        if not m:
            raise ConfigError(f"Invalid JAAS config: cannot read options at {rest[pos:].strip()!r}")
        value = m.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        options[m.group(1)] = value
        pos = m.end()
    return head.group(1), options


def sasl_settings(config: BrokerConfig, listener: Listener) -> SaslSettings:
    """The SASL settings of a SASL listener; ConfigError (one line, for the startup log) when
    they cannot be served."""
    text = config.listener_get(listener.name, "sasl.enabled.mechanisms") or ""
    mechanisms = [m.strip() for m in text.split(",") if m.strip()]
    if not mechanisms:
        raise ConfigError(f"sasl.enabled.mechanisms of listener {listener.name} is empty")
    unsupported = [m for m in mechanisms if m not in SUPPORTED]
    if unsupported:
        raise ConfigError(f"SASL mechanism {unsupported[0]} of listener {listener.name} is not supported by "
                          f"pk-server-start (sasl.enabled.mechanisms={text}; Kafka's default is GSSAPI): "
                          f"use {', '.join(SUPPORTED)}")
    settings = SaslSettings(listener.name, hashmap_order(mechanisms),
                            reauth_ms=_reauth_ms(config, listener))
    for mechanism in mechanisms:
        jaas = (config.values.get(f"listener.name.{listener.name.lower()}.{mechanism.lower()}.sasl.jaas.config")
                or config.listener_get(listener.name, "sasl.jaas.config"))
        if not jaas:
            raise ConfigError(f"Could not find a 'KafkaServer' or '{listener.name.lower()}.KafkaServer' entry in "
                              f"the JAAS configuration (set listener.name.{listener.name.lower()}."
                              f"{mechanism.lower()}.sasl.jaas.config or sasl.jaas.config)")
        module, options = parse_jaas(jaas)
        if mechanism == "PLAIN":
            if not module.endswith("PlainLoginModule"):
                raise ConfigError(f"The JAAS config of PLAIN on listener {listener.name} must use "
                                  f"org.apache.kafka.common.security.plain.PlainLoginModule, not {module}")
            settings.plain_users = {k[5:]: v for k, v in options.items() if k.startswith("user_")}
        elif not module.endswith("ScramLoginModule"):
            raise ConfigError(f"The JAAS config of {mechanism} on listener {listener.name} must use "
                              f"org.apache.kafka.common.security.scram.ScramLoginModule, not {module}")
    return settings


def _reauth_ms(config: BrokerConfig, listener: Listener) -> int:
    value = config.listener_get(listener.name, "connections.max.reauth.ms") or "0"
    try:
        return max(0, int(value))
    except ValueError:
        raise ConfigError(f"Invalid value {value} for configuration connections.max.reauth.ms: "
                          f"Not a number of type LONG") from None


# ---------------------------------------------------------------------- mechanisms

class _Plain:
    """RFC 4616: one token `authzid NUL authcid NUL password`, checked as Kafka's PlainSaslServer."""

    def __init__(self, users: dict[str, str]):
        self.users = users
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\0", 3)
        if len(parts) != 3:
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}")
        authzid, user, password = parts
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        expected = self.users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise AuthenticationFailed("Authentication failed: Client requested an authorization id "
                                       "that is different from username")
        self.authorization_id = user
        self.complete = True
        return b""


class _InvalidCredentials(Exception):
    """A SCRAM exchange failed: Kafka tells the client only that the credentials were invalid."""


class _Scram:
    """RFC 5802 over scramp's ScramServer: client-first -> server-first, client-final -> server-final.

    Kafka's client may add SCRAM extensions to its first message (`tokenauth=true`: the user
    name is a delegation token id and the password the token's HMAC, KIP-48); scramp knows no
    extensions, so they are taken out before it reads the message and put back into the
    message it signs."""

    def __init__(self, mechanism: str, credentials: ScramCredentials, tokens: DelegationTokens | None = None):
        self.mechanism = mechanism
        self.credentials = credentials
        self.tokens = tokens
        import scramp  # here, not at the top: its import costs every broker start 60 ms
        self.server = scramp.ScramMechanism(mechanism).make_server(self._lookup)
        self.complete = False
        self.authorization_id: str | None = None
        self.token_authenticated = False
        self.token_expiry_ms: int | None = None
        self._user: str | None = None

    def _lookup(self, user: str):
        if self.token_authenticated:
            token = self.tokens.tokens().get(user) if self.tokens is not None else None
            credential = self.tokens.credential(user, self.mechanism) if token is not None else None
            if credential is None:
                return None
            self._user = _principal_name(token.owner)
            self.token_expiry_ms = token.expiry_ms
        else:
            credential = self.credentials.get(user, self.mechanism)
            if credential is None:
                return None  # scramp: unknown user
            self._user = user
        return credential.salt, credential.stored_key, credential.server_key, credential.iterations

    def evaluate(self, token: bytes) -> bytes:
        try:
            text = token.decode("utf-8")
            if self.server.stage is None:
                bare_start = text.index(",", text.index(",") + 1) + 1
                attributes = text[bare_start:].split(",")
                extensions = dict(a.split("=", 1) for a in attributes if len(a.split("=", 1)[0]) > 1)
                self.token_authenticated = extensions.get("tokenauth", "").lower() == "true"
                standard = [a for a in attributes if len(a.split("=", 1)[0]) <= 1]
                self.server.set_client_first(text[:bare_start] + ",".join(standard))
                self.server.client_first_bare = text[bare_start:]  # the proof covers the extensions
                return self.server.get_server_first().encode()
            self.server.set_client_final(text)
            final = self.server.get_server_final().encode()
        except Exception as exc:  # scramp's refusals, and whatever a garbled message makes it raise
            raise _InvalidCredentials(str(exc)) from None
        self.authorization_id = self._user
        self.complete = True
        return final


def _principal_name(principal: str) -> str:
    return principal.partition(":")[2]


def _mechanism_server(name: str, settings: SaslSettings, credentials: ScramCredentials,
                      tokens: DelegationTokens | None):
    return _Plain(settings.plain_users) if name == "PLAIN" else _Scram(name, credentials, tokens)


# ---------------------------------------------------------------------- per connection

PASS = object()  # SaslAuthenticator.handle: "not mine, let the broker answer it"


class SaslAuthenticator:
    """One SASL connection's authentication state. The server hands it every request while the
    connection is not authenticated, every SaslHandshake/SaslAuthenticate, and every request
    after the session expired; `handle` answers (body, close_after)."""

    def __init__(self, settings: SaslSettings, credentials: ScramCredentials, peer: str = "",
                 tokens: DelegationTokens | None = None):
        self.settings = settings
        self.credentials = credentials
        self.tokens = tokens
        self.token_authenticated = False  # the principal is a delegation token's owner
        self.peer = peer
        self.principal: str | None = None  # "User:<name>" once authenticated
        self.mechanism: str | None = None  # of the current (re-)authentication
        self.raw_tokens = False  # after a v0 handshake: bare tokens, no Kafka headers
        self._server = None
        self._handshaken = False
        self._reauthenticating = False
        self._bad_reauth_mechanism = False
        self._previous_mechanism: str | None = None
        self._expires_at: float | None = None  # monotonic seconds
        self._credential_expiry_ms: int | None = None  # a token's expiry (wall-clock ms)

    @property
    def complete(self) -> bool:
        return self.principal is not None

    def needs(self, api_key: int) -> bool:
        """Whether a request must go through `handle` rather than straight to the broker:
        one cheap check per request."""
        return (self.principal is None or api_key == HANDSHAKE or api_key == AUTHENTICATE
                or (self._expires_at is not None and time.monotonic() > self._expires_at))

    def handle(self, request):
        key = request.api_key
        if key == HANDSHAKE:
            return self._handshake(request)
        if key == AUTHENTICATE:
            return self._authenticate(request)
        if self.principal is not None and not self._reauthenticating:  # an expired session
            log.info("Closing connection from %s (%s): its SASL session expired %s ago", self.peer,
                     self.principal, _ms(time.monotonic() - self._expires_at))
            return None, True
        if key == API_VERSIONS and not self._handshaken:
            return PASS, False
        state = "authentication" if self._handshaken else "handshake"
        log.info("Closing connection from %s: unexpected Kafka request of type %s during SASL %s",
                 self.peer, request.name, state)
        return None, True

    def _handshake(self, request):
        mechanism = request.body["mechanism"]
        if self.principal is not None and not self.settings.reauth_ms:
            # Kafka's KafkaApis answer: re-authentication is off on this listener.
            return {"error_code": E.ILLEGAL_SASL_STATE, "mechanisms": []}, False
        if self._handshaken and not (self.principal is not None and not self._reauthenticating):
            log.info("Closing connection from %s: a second SaslHandshake during authentication", self.peer)
            return None, True
        if mechanism not in self.settings.mechanisms:
            log.info("Closing connection from %s: SASL mechanism '%s' requested by client is not enabled",
                     self.peer, mechanism)
            return {"error_code": E.UNSUPPORTED_SASL_MECHANISM, "mechanisms": self.settings.mechanisms}, True
        self._handshaken = True
        self._reauthenticating = self.principal is not None
        self._bad_reauth_mechanism = self._reauthenticating and mechanism != self.mechanism
        self._previous_mechanism = self.mechanism
        self.mechanism = mechanism
        self._server = _mechanism_server(mechanism, self.settings, self.credentials, self.tokens)
        self.raw_tokens = request.api_version == 0
        return {"error_code": E.NONE, "mechanisms": self.settings.mechanisms}, False

    def _authenticate(self, request):
        if self._server is None:
            if self.principal is not None:
                return _failed(E.ILLEGAL_SASL_STATE, AFTER_SUCCESS), False
            log.info("Closing connection from %s: SaslAuthenticate before SaslHandshake", self.peer)
            return None, True
        try:
            token = self.evaluate(bytes(request.body["auth_bytes"]))
        except AuthenticationFailed as exc:
            log.info("Failed authentication with %s (%s)", self.peer, exc)
            return _failed(E.SASL_AUTHENTICATION_FAILED, str(exc)), True
        lifetime = self._session_lifetime_ms() if self._server is None else 0
        return {"error_code": E.NONE, "error_message": "", "auth_bytes": token,
                "session_lifetime_ms": lifetime}, False

    def raw_token(self, token: bytes) -> bytes:
        """A token after a v0 handshake; AuthenticationFailed closes the connection unanswered."""
        reply = self.evaluate(token)
        if self._server is None:
            self.raw_tokens = False
            self._session_lifetime_ms()
        return reply

    def evaluate(self, token: bytes) -> bytes:
        """Feed one client token to the mechanism; on completion the connection is authenticated
        (`principal`), and the mechanism dropped. AuthenticationFailed with Kafka's message."""
        what = "re-authentication" if self._reauthenticating else "authentication"
        if self._reauthenticating and self._bad_reauth_mechanism:
            raise AuthenticationFailed(f"SASL mechanism '{self.mechanism}' requested by client is not supported "
                                       f"for re-authentication of mechanism '{self._previous_mechanism}'")
        try:
            reply = self._server.evaluate(token)
        except _InvalidCredentials:
            raise AuthenticationFailed(f"Authentication failed during {what} due to invalid credentials "
                                       f"with SASL mechanism {self.mechanism}") from None
        if self._server.complete:
            principal = "User:" + self._server.authorization_id
            if self._reauthenticating and principal != self.principal:
                old, new = self.principal.split(":", 1), principal.split(":", 1)
                raise AuthenticationFailed(f"Cannot change principals during re-authentication from "
                                           f"{old[0]}.{old[1]}: {new[0]}.{new[1]}")
            self.principal = principal
            self.token_authenticated = getattr(self._server, "token_authenticated", False)
            self._credential_expiry_ms = getattr(self._server, "token_expiry_ms", None)
            self._server = None
            self._handshaken = False
            self._reauthenticating = False
        return reply

    def _session_lifetime_ms(self) -> int:
        """connections.max.reauth.ms, cut short by the expiry of the token logged in with (as
        Kafka's SaslServerAuthenticator bounds a session by its credential's lifetime)."""
        lifetime = self.settings.reauth_ms
        bounded = bool(lifetime)
        if self._credential_expiry_ms is not None:
            left = max(0, self._credential_expiry_ms - int(time.time() * 1000))
            lifetime, bounded = (min(lifetime, left) if lifetime else left), True
        self._expires_at = time.monotonic() + lifetime / 1000 if bounded else None
        return lifetime


def _failed(code: int, message: str) -> dict:
    return {"error_code": code, "error_message": message, "auth_bytes": b"", "session_lifetime_ms": 0}


def _ms(seconds: float) -> str:
    return f"{int(seconds * 1000)} ms"


# ---------------------------------------------------------------------- broker handlers

class SaslHandlers:
    """What the broker answers to SaslHandshake/SaslAuthenticate outside an authentication (a
    listener without SASL, or a session that does not re-authenticate): Kafka's KafkaApis answers."""

    def __init__(self, broker):
        broker.register(ApiKey.SASL_HANDSHAKE, self.handshake)
        broker.register(ApiKey.SASL_AUTHENTICATE, self.authenticate)

    async def handshake(self, request) -> dict:
        return {"error_code": E.ILLEGAL_SASL_STATE, "mechanisms": []}

    async def authenticate(self, request) -> dict:
        return _failed(E.ILLEGAL_SASL_STATE, AFTER_SUCCESS)

