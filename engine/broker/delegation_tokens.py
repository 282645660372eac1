"""Delegation tokens: CreateDelegationToken (38), RenewDelegationToken (39), ExpireDelegationToken
(40) and DescribeDelegationToken (41), over the data directory's token store
(engine/delegation_tokens.py), with Kafka's rules (KafkaApis, ControllerApis and
DelegationTokenControlManager):

- token requests are allowed only from an authenticated connection (not PLAINTEXT, not SSL
  without a client certificate) that was not itself authenticated with a token;
- tokens exist only when `delegation.token.secret.key` (or the deprecated
  `delegation.token.master.key`) is set: DELEGATION_TOKEN_AUTH_DISABLED otherwise;
- creating a token for another owner needs CREATE_TOKENS on that USER; renewers must be users;
  only the owner and the renewers may renew or expire a token; a token is described to its
  owner and renewers, and to whoever may DESCRIBE the DELEGATION_TOKEN or DESCRIBE_TOKENS the
  owner USER;
- `delegation.token.max.lifetime.ms` bounds a token's life, `delegation.token.expiry.time.ms` a
  renewal; expired tokens are removed every `delegation.token.expiry.check.interval.ms`.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid

from .. import acls as A
from ..delegation_tokens import DelegationTokens, TokenInfo
from ..protocol import ApiKey
from ..protocol import errors as E
from .config import ConfigError

log = logging.getLogger("kafka.server.DelegationTokenManager")

ERROR_TIMESTAMP = -1  # Kafka's DelegationTokenManager.ErrorTimestamp
LONG_MAX = (1 << 63) - 1


def secret_key(config) -> str | None:
    """The secret that signs tokens: delegation.token.secret.key, else the deprecated master key."""
    for key in ("delegation.token.secret.key", "delegation.token.master.key"):
        value = config.get(key)
        if value:
            return value
    return None


def _positive_long(config, key: str) -> int:
    value = config.get(key)
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise ConfigError(f"Invalid value {value} for configuration {key}: Not a number of type LONG") from None
    if number < 1:
        raise ConfigError(f"Invalid value {number} for configuration {key}: Value must be at least 1")
    return number


def new_token_id() -> str:
    """Kafka's Uuid.randomUuid().toString(): 16 random bytes in URL-safe base64, unpadded, never
    starting with '-'."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _principal(text: str) -> tuple[str, str]:
    kind, _, name = text.partition(":")
    return kind, name


def _sum(now: int, duration: int) -> int:
    return LONG_MAX if now > LONG_MAX - duration else now + duration


def _now_ms() -> int:
    return int(time.time() * 1000)


def allows_token_requests(request) -> bool:
    """KafkaApis.allowTokenRequests: an authenticated connection not authenticated by a token."""
    protocol = request.security_protocol
    return not (request.token_authenticated or protocol == "PLAINTEXT"
                or (protocol == "SSL" and request.principal == "User:ANONYMOUS"))


class DelegationTokenHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.guard = broker.guard
        config = broker.config
        self.tokens: DelegationTokens = broker.delegation_tokens
        self.max_lifetime_ms = _positive_long(config, "delegation.token.max.lifetime.ms")
        self.renew_lifetime_ms = _positive_long(config, "delegation.token.expiry.time.ms")
        self.check_interval_s = _positive_long(config, "delegation.token.expiry.check.interval.ms") / 1000
        self._next_sweep = time.monotonic() + self.check_interval_s
        broker.register(ApiKey.CREATE_DELEGATION_TOKEN, self.create)
        broker.register(ApiKey.RENEW_DELEGATION_TOKEN, self.renew)
        broker.register(ApiKey.EXPIRE_DELEGATION_TOKEN, self.expire)
        broker.register(ApiKey.DESCRIBE_DELEGATION_TOKEN, self.describe)

    async def tick(self) -> None:
        if time.monotonic() < self._next_sweep:
            return
        self._next_sweep = time.monotonic() + self.check_interval_s
        if self.tokens.enabled:
            self.sweep(_now_ms())

    def sweep(self, now_ms: int) -> None:
        expired = self.tokens.expired(now_ms)
        for token in expired:
            log.info("Delegation token expired for token: %s for owner: %s", token.token_id, token.owner)
        if expired:
            self.tokens.remove(t.token_id for t in expired)

    # ------------------------------------------------------------------ CreateDelegationToken
    async def create(self, request) -> dict:
        body = request.body
        requester = request.principal
        owner = requester
        if body.get("owner_principal_name"):
            owner = f"{body['owner_principal_type']}:{body['owner_principal_name']}"
        renewers = [f"{r['principal_type']}:{r['principal_name']}" for r in body["renewers"]]

        def answer(code: int, stamp: int = ERROR_TIMESTAMP, **fields) -> dict:
            (owner_type, owner_name), (req_type, req_name) = _principal(owner), _principal(requester)
            return {"error_code": code, "principal_type": owner_type, "principal_name": owner_name,
                    "token_requester_principal_type": req_type, "token_requester_principal_name": req_name,
                    "issue_timestamp_ms": stamp, "expiry_timestamp_ms": stamp, "max_timestamp_ms": stamp,
                    "token_id": "", "hmac": b"", "throttle_time_ms": 0, **fields}

        if not allows_token_requests(request):
            return answer(E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
        if owner != requester and not self.guard.allows(request, A.CREATE_TOKENS, A.USER, owner):
            return answer(E.DELEGATION_TOKEN_AUTHORIZATION_FAILED)
        if any(_principal(r)[0] != "User" for r in renewers):
            return answer(E.INVALID_PRINCIPAL_TYPE)
        # what the controller decides (its answer carries no timestamps on an error)
        if not self.tokens.enabled:
            return answer(E.DELEGATION_TOKEN_AUTH_DISABLED, 0)
        now = _now_ms()
        max_life = self.max_lifetime_ms
        if body["max_lifetime_ms"] > 0:
            max_life = min(max_life, body["max_lifetime_ms"])
        max_ts = _sum(now, max_life)
        expiry_ts = min(max_ts, _sum(now, self.renew_lifetime_ms))
        token = TokenInfo(new_token_id(), owner, requester, tuple(renewers), now, expiry_ts, max_ts)
        self.tokens.put(token)
        return answer(E.NONE, issue_timestamp_ms=now, expiry_timestamp_ms=expiry_ts, max_timestamp_ms=max_ts,
                      token_id=token.token_id, hmac=self.tokens.hmac(token.token_id))

    # ------------------------------------------------------------------ RenewDelegationToken
    def _token_for(self, request) -> tuple[int, TokenInfo | None]:
        """The checks renew and expire share: (error code or NONE, the token)."""
        if not allows_token_requests(request):
            return E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, None
        if not self.tokens.enabled:
            return E.DELEGATION_TOKEN_AUTH_DISABLED, None
        token = self.tokens.by_hmac(bytes(request.body["hmac"]))
        if token is None:
            return E.DELEGATION_TOKEN_NOT_FOUND, None
        return E.NONE, token

    async def renew(self, request) -> dict:
        code, token = self._token_for(request)
        now = _now_ms()
        if code == E.NONE and token.expired(now):
            code = E.DELEGATION_TOKEN_EXPIRED
        if code == E.NONE and not token.owner_or_renewer(request.principal):
            code = E.DELEGATION_TOKEN_OWNER_MISMATCH
        if code != E.NONE:
            stamp = ERROR_TIMESTAMP if code == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED else 0
            return {"error_code": code, "expiry_timestamp_ms": stamp, "throttle_time_ms": 0}
        period = self.renew_lifetime_ms
        if request.body["renew_period_ms"] > 0:
            period = min(period, request.body["renew_period_ms"])
        expiry = min(token.max_ms, now + period)
        self.tokens.put(_with_expiry(token, expiry))
        return {"error_code": E.NONE, "expiry_timestamp_ms": expiry, "throttle_time_ms": 0}

    # ------------------------------------------------------------------ ExpireDelegationToken
    async def expire(self, request) -> dict:
        code, token = self._token_for(request)
        if code == E.NONE and not token.owner_or_renewer(request.principal):
            code = E.DELEGATION_TOKEN_OWNER_MISMATCH
        if code != E.NONE:
            stamp = ERROR_TIMESTAMP if code == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED else 0
            return {"error_code": code, "expiry_timestamp_ms": stamp, "throttle_time_ms": 0}
        now = _now_ms()
        period = request.body["expiry_time_period_ms"]
        if period < 0:  # expire now: the token is gone
            self.tokens.remove([token.token_id])
            return {"error_code": E.NONE, "expiry_timestamp_ms": now, "throttle_time_ms": 0}
        if token.expired(now):
            return {"error_code": E.DELEGATION_TOKEN_EXPIRED, "expiry_timestamp_ms": 0, "throttle_time_ms": 0}
        expiry = min(token.max_ms, _sum(now, period))
        self.tokens.put(_with_expiry(token, expiry))
        return {"error_code": E.NONE, "expiry_timestamp_ms": expiry, "throttle_time_ms": 0}

    # ------------------------------------------------------------------ DescribeDelegationToken
    async def describe(self, request) -> dict:
        if not allows_token_requests(request):
            return {"error_code": E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "tokens": [], "throttle_time_ms": 0}
        if not self.tokens.enabled:
            return {"error_code": E.DELEGATION_TOKEN_AUTH_DISABLED, "tokens": [], "throttle_time_ms": 0}
        wanted = request.body["owners"]
        if wanted is not None and not wanted:
            return {"error_code": E.NONE, "tokens": [], "throttle_time_ms": 0}
        owners = None if wanted is None else [f"{o['principal_type']}:{o['principal_name']}" for o in wanted]
        tokens = [t for t in self.tokens.tokens().values() if self._describable(request, owners, t)]
        return {"error_code": E.NONE, "tokens": [self._described(t) for t in tokens], "throttle_time_ms": 0}

    def _describable(self, request, owners: list[str] | None, token: TokenInfo) -> bool:
        """DelegationTokenManager.filterToken."""
        if owners is not None and not any(token.owner_or_renewer(o) for o in owners):
            return False
        if token.owner_or_renewer(request.principal):
            return True
        return (self.guard.allows(request, A.DESCRIBE, A.DELEGATION_TOKEN, token.token_id)
                or self.guard.allows(request, A.DESCRIBE_TOKENS, A.USER, token.owner))

    def _described(self, token: TokenInfo) -> dict:
        (owner_type, owner_name), (req_type, req_name) = _principal(token.owner), _principal(token.requester)
        return {"principal_type": owner_type, "principal_name": owner_name,
                "token_requester_principal_type": req_type, "token_requester_principal_name": req_name,
                "issue_timestamp": token.issue_ms, "expiry_timestamp": token.expiry_ms,
                "max_timestamp": token.max_ms, "token_id": token.token_id, "hmac": self.tokens.hmac(token.token_id),
                "renewers": [dict(zip(("principal_type", "principal_name"), _principal(r))) for r in token.renewers]}


def _with_expiry(token: TokenInfo, expiry_ms: int) -> TokenInfo:
    return TokenInfo(token.token_id, token.owner, token.requester, token.renewers, token.issue_ms,
                     expiry_ms, token.max_ms)
