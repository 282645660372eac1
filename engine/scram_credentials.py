"""SCRAM credentials: what a Kafka controller keeps per user and mechanism (UserScramCredentialRecord),
stored in the data directory so that they survive restarts and every process sees them.

One file, `.pk/scram-credentials.json`:

    {"version": 1, "users": {"alice": {"SCRAM-SHA-512": {"salt": "<base64>", "stored_key": "<base64>",
                                                        "server_key": "<base64>", "iterations": 8192}}}}

No password is kept: only RFC 5802's salt, StoredKey, ServerKey and iteration count, which are
what a SCRAM server needs and what Kafka keeps. Changes are read-modify-write under an flock on
`.pk/scram-credentials.lock` and replace the file atomically; readers re-read the file when its
modification stamp changes, so a credential added by another process (a tool, `add_credential`)
is used by the broker's next authentication.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from dataclasses import dataclass


from . import paths
from .fileutil import atomic_write, file_stamp, locked

FILE_NAME = "scram-credentials.json"
LOCK_NAME = "scram-credentials.lock"

# Kafka's ScramMechanism types (the `mechanism` int8 of Describe/AlterUserScramCredentials) and
# the hash each uses.
MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
MECHANISM_TYPES = {name: code for code, name in MECHANISMS.items()}
_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
# Kafka's bounds on iterations (ScramMechanism.minIterations, ScramControlManager.MAX_ITERATIONS).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class Credential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_json(self) -> dict:
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        return {"salt": b64(self.salt), "stored_key": b64(self.stored_key),
                "server_key": b64(self.server_key), "iterations": self.iterations}

    @classmethod
    def from_json(cls, data: dict) -> "Credential":
        return cls(base64.b64decode(data["salt"]), base64.b64decode(data["stored_key"]),
                   base64.b64decode(data["server_key"]), int(data["iterations"]))

    @classmethod
    def from_salted_password(cls, mechanism: str, salt: bytes, salted_password: bytes,
                             iterations: int) -> "Credential":
        """What AlterUserScramCredentials sends (the client salts and hashes the password) as
        stored: StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword,
        "Server Key") (RFC 5802 section 3). ValueError for an empty salted password, which
        Kafka cannot key an HMAC with either."""
        if not salted_password:
            raise ValueError("Empty key")
        digest = _HASHES[mechanism]
        client_key = hmac.new(salted_password, b"Client Key", digest).digest()
        return cls(salt, digest(client_key).digest(),
                   hmac.new(salted_password, b"Server Key", digest).digest(), iterations)

    @classmethod
    def from_password(cls, mechanism: str, password: str, iterations: int = MIN_ITERATIONS,
                      salt: bytes | None = None) -> "Credential":
        import scramp  # here, not at the top: its import costs every broker start 60 ms
        salt, stored_key, server_key, iterations = scramp.ScramMechanism(mechanism).make_auth_info(
            password, iteration_count=iterations, salt=salt)
        return cls(salt, stored_key, server_key, iterations)


class ScramCredentials:
    """The credentials of one data directory: user -> mechanism name -> Credential."""

    def __init__(self, data_dir: str):
        self.dir = os.path.join(data_dir, paths.PK_DIR)
        self.path = os.path.join(self.dir, FILE_NAME)
        self._stamp: tuple | None = None
        self._users: dict[str, dict[str, Credential]] = {}

    # ------------------------------------------------------------------ reading
    def users(self) -> dict[str, dict[str, Credential]]:
        """Every user's credentials, as on disk now (re-read only when the file changed)."""
        stamp = file_stamp(self.path)
        if stamp != self._stamp:
            self._users = self._read() if stamp is not None else {}
            self._stamp = stamp
        return self._users

    def get(self, user: str, mechanism: str) -> Credential | None:
        return self.users().get(user, {}).get(mechanism)

    def _read(self) -> dict[str, dict[str, Credential]]:
        try:
            with open(self.path, "rb") as f:
                data = json.load(f)
            return {user: {mech: Credential.from_json(c) for mech, c in mechs.items()}
                    for user, mechs in data["users"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"Malformed SCRAM credentials file {self.path}: {exc}") from None

    # ------------------------------------------------------------------ writing
    def alter(self, deletions: list[tuple[str, str]], upsertions: list[tuple[str, str, Credential]]) -> None:
        """Apply (user, mechanism) deletions and (user, mechanism, credential) upsertions as one
        atomic change; a deletion of a missing credential is ignored (callers check first)."""
        os.makedirs(self.dir, exist_ok=True)
        with locked(os.path.join(self.dir, LOCK_NAME)):
            users = {u: dict(m) for u, m in self._read().items()}
            for user, mechanism in deletions:
                users.get(user, {}).pop(mechanism, None)
                if user in users and not users[user]:
                    del users[user]
            for user, mechanism, credential in upsertions:
                users.setdefault(user, {})[mechanism] = credential
            data = {"version": 1, "users": {u: {m: c.to_json() for m, c in sorted(mechs.items())}
                                            for u, mechs in sorted(users.items())}}
            atomic_write(self.path, json.dumps(data, indent=1).encode() + b"\n")
        self._stamp = None  # re-read on next use


def add_credential(data_dir: str, user: str, mechanism: str, password: str,
                   iterations: int = MIN_ITERATIONS, salt: bytes | None = None) -> Credential:
    """Add (or replace) one user's credential offline, as `kafka-storage format --add-scram` does
    before the broker first starts. ValueError for an unknown mechanism or iterations out of
    Kafka's bounds."""
    if mechanism not in MECHANISM_TYPES:
        raise ValueError(f"Unknown SCRAM mechanism {mechanism}")
    if not user:
        raise ValueError("Username must not be empty")
    if iterations < MIN_ITERATIONS:
        raise ValueError("Too few iterations")
    if iterations > MAX_ITERATIONS:
        raise ValueError("Too many iterations")
    credential = Credential.from_password(mechanism, password, iterations, salt)
    ScramCredentials(data_dir).alter([], [(user, mechanism, credential)])
    return credential
