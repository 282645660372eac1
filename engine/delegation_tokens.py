"""Delegation tokens: what a Kafka controller keeps per token (DelegationTokenRecord), stored in
the data directory so that they survive restarts and every process sees them.

One file, `.pk/delegation-tokens.json`:

    {"version": 1, "tokens": {"<token id>": {"owner": "User:alice", "requester": "User:alice",
        "renewers": ["User:bob"], "issue_ms": 1, "expiry_ms": 2, "max_ms": 3}}}

As in Kafka's metadata log, no HMAC is stored: a token's HMAC is HMAC-SHA512 of its id keyed with
the broker's `delegation.token.secret.key` and is recomputed from it when needed (a client
authenticates with it, renews or expires a token by it). Changes are read-modify-write under an
flock on `.pk/delegation-tokens.lock` and replace the file atomically; readers re-read the file
when its modification stamp changes (as engine/scram_credentials.py does).
"""

from __future__ import annotations

import base64
import hashlib
import hmac as _hmac
import json
import os
from dataclasses import dataclass

from . import paths
from .fileutil import atomic_write, file_stamp, locked
from .scram_credentials import MIN_ITERATIONS, Credential

FILE_NAME = "delegation-tokens.json"
LOCK_NAME = "delegation-tokens.lock"


@dataclass(frozen=True)
class TokenInfo:
    """One token (Kafka's TokenInformation); principals as Kafka writes them ("User:alice")."""
    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    expiry_ms: int
    max_ms: int

    def owner_or_renewer(self, principal: str) -> bool:
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms

    def to_json(self) -> dict:
        return {"owner": self.owner, "requester": self.requester, "renewers": list(self.renewers),
                "issue_ms": self.issue_ms, "expiry_ms": self.expiry_ms, "max_ms": self.max_ms}

    @classmethod
    def from_json(cls, token_id: str, data: dict) -> "TokenInfo":
        return cls(token_id, str(data["owner"]), str(data["requester"]), tuple(map(str, data["renewers"])),
                   int(data["issue_ms"]), int(data["expiry_ms"]), int(data["max_ms"]))


def token_hmac(token_id: str, secret: str) -> bytes:
    """Kafka's HMAC of a token: HMAC-SHA512 of the id's UTF-8 bytes keyed with the secret's."""
    return _hmac.new(secret.encode(), token_id.encode(), hashlib.sha512).digest()


class DelegationTokens:
    """The tokens of one data directory, and the broker's secret that makes their HMACs."""

    def __init__(self, data_dir: str, secret: str | None):
        self.dir = os.path.join(data_dir, paths.PK_DIR)
        self.path = os.path.join(self.dir, FILE_NAME)
        self.secret = secret or None
        self._stamp: tuple | None = None
        self._tokens: dict[str, TokenInfo] = {}

    @property
    def enabled(self) -> bool:
        return self.secret is not None

    # ------------------------------------------------------------------ reading
    def tokens(self) -> dict[str, TokenInfo]:
        """Every token, as on disk now (re-read only when the file changed)."""
        stamp = file_stamp(self.path)
        if stamp != self._stamp:
            self._tokens = self._read() if stamp is not None else {}
            self._stamp = stamp
        return self._tokens

    def _read(self) -> dict[str, TokenInfo]:
        try:
            with open(self.path, "rb") as f:
                data = json.load(f)
            return {tid: TokenInfo.from_json(tid, t) for tid, t in data["tokens"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"Malformed delegation tokens file {self.path}: {exc}") from None

    def hmac(self, token_id: str) -> bytes:
        return token_hmac(token_id, self.secret)

    def by_hmac(self, hmac: bytes) -> TokenInfo | None:
        """The token whose HMAC this is (Kafka's cache is keyed by it; a few tokens: a scan)."""
        if not self.enabled:
            return None
        for token in self.tokens().values():
            if _hmac.compare_digest(self.hmac(token.token_id), hmac):
                return token
        return None

    def credential(self, token_id: str, mechanism: str) -> Credential | None:
        """The SCRAM credential a client authenticating with the token must match: its password
        is the HMAC in base64, at the mechanism's minimum iterations (as Kafka's token cache)."""
        if not self.enabled or token_id not in self.tokens():
            return None
        password = base64.b64encode(self.hmac(token_id)).decode()
        return Credential.from_password(mechanism, password, MIN_ITERATIONS)

    # ------------------------------------------------------------------ writing
    def _change(self, change) -> None:
        os.makedirs(self.dir, exist_ok=True)
        with locked(os.path.join(self.dir, LOCK_NAME)):
            tokens = self._read()
            change(tokens)
            data = {"version": 1, "tokens": {tid: t.to_json() for tid, t in sorted(tokens.items())}}
            atomic_write(self.path, json.dumps(data, indent=1).encode() + b"\n")
        self._stamp = None  # re-read on next use

    def put(self, token: TokenInfo) -> None:
        """Add a token or replace it (a renewal or expiry changes its expiry)."""
        self._change(lambda tokens: tokens.__setitem__(token.token_id, token))

    def remove(self, token_ids) -> None:
        ids = set(token_ids)
        self._change(lambda tokens: [tokens.pop(tid, None) for tid in ids])

    def expired(self, now_ms: int) -> list[TokenInfo]:
        return [t for t in self.tokens().values() if t.expired(now_ms)]
