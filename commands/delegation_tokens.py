"""pk-delegation-tokens: Kafka 4.4's kafka-delegation-tokens (DelegationTokenCommand): create,
renew, expire and describe delegation tokens over the Admin API.

librdkafka has no delegation token calls, so the requests go over pk's own protocol client
(commands/backends/wire.py), with the security settings of --command-config (token requests
are refused on PLAINTEXT connections, as Kafka refuses them). Output and error texts are
Kafka's; a failure is Kafka's first line (the exception's message), exit 1.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

from pk.engine import protocol as kp

from .errors import UsageError

ACTIONS = ("create", "renew", "expire", "describe")
ONE_ACTION = "Command must include exactly one action: --create, --renew, --expire or --describe"
# Options each action refuses (DelegationTokenCommandOptions.checkArgs), in the order checked.
INVALID_WITH = {
    "create": ("hmac", "renew_time_period", "expiry_time_period"),
    "renew": ("renewer_principal", "max_life_time_period", "expiry_time_period", "owner_principal"),
    "expire": ("renew", "max_life_time_period", "renew_time_period", "owner_principal"),
    "describe": ("renew_time_period", "max_life_time_period", "hmac", "expiry_time_period"),
}
REQUIRED = {"create": ("max_life_time_period",), "renew": ("hmac", "renew_time_period"),
            "expire": ("hmac", "expiry_time_period")}
# What Java says when a Long option's value is missing (jopt leaves an unparseable optional
# argument aside, and the tool unboxes the null).
NULL_LONG = ('Cannot invoke "java.lang.Long.longValue()" because the return value of '
             '"joptsimple.OptionSet.valueOf(joptsimple.OptionSpec)" is null')
HEADER = ("TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE")
WIDTHS = (15, 30, 15, 15, 25, 15, 15, 15)


class CommandFailure(Exception):
    """The tool fails: str() is the one line printed (Java's exception message)."""


@dataclass
class Options:
    create: bool = False
    renew: bool = False
    expire: bool = False
    describe: bool = False
    bootstrap_server: str | None = None
    command_config: str | None = None
    owner_principal: list[str] = field(default_factory=list)
    renewer_principal: list[str] = field(default_factory=list)
    max_life_time_period: str | None = None
    renew_time_period: str | None = None
    expiry_time_period: str | None = None
    hmac: str | None = None

    @property
    def action(self) -> str:
        return next(a for a in ACTIONS if getattr(self, a))

    def given(self, name: str) -> bool:
        value = getattr(self, name)
        return bool(value) if isinstance(value, (bool, list)) else value is not None


def option_name(name: str) -> str:
    return name.replace("_", "-")


def check_args(opts: Options) -> None:
    """Kafka's argument checks, in its order; UsageError with its message."""
    if sum(getattr(opts, a) for a in ACTIONS) != 1:
        raise UsageError(ONE_ACTION)
    for required in ("bootstrap_server", "command_config", *REQUIRED.get(opts.action, ())):
        if not opts.given(required):
            raise UsageError(f'Missing required argument "[{option_name(required)}]"')
    for invalid in INVALID_WITH[opts.action]:
        if opts.given(invalid):
            raise UsageError(f'Option "[{opts.action}]" can\'t be used with option "[{option_name(invalid)}]"')


def java_long(text: str) -> int:
    """A Long option's value; a value jopt could not parse is a null Long to Kafka's tool."""
    try:
        if text.strip() != text or "_" in text:
            raise ValueError
        value = int(text)
    except ValueError:
        raise CommandFailure(NULL_LONG) from None
    if not -(1 << 63) <= value < (1 << 63):
        raise CommandFailure(NULL_LONG)
    return value


def parse_principal(text: str) -> tuple[str, str]:
    """SecurityUtils.parseKafkaPrincipal: `type:name`."""
    kind, sep, name = text.strip().partition(":")
    if not text.strip() or not sep:
        raise CommandFailure(f"expected a string in format principalType:principalName but got {text.strip()}")
    return kind, name


_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def java_base64(text: str) -> bytes:
    """Base64.getDecoder().decode: padding optional; anything else refused with Java's text."""
    data = text.encode("latin-1", "replace")
    out, bits, count = bytearray(), 0, 0
    for i, byte in enumerate(data):
        if byte == 0x3D:  # '=': only "xx==" or "xxx=" may end the input
            if (count == 2 and data[i:] == b"==") or (count == 3 and data[i:] == b"="):
                break
            raise CommandFailure("Input byte array has wrong 4-byte ending unit")
        index = _BASE64.find(chr(byte))
        if index < 0:
            raise CommandFailure(f"Illegal base64 character {byte:x}")
        bits, count = (bits << 6) | index, count + 1
        if count == 4:
            out += bits.to_bytes(3, "big")
            bits, count = 0, 0
    if count == 1:
        raise CommandFailure("Last unit does not have enough valid bits")
    if count:  # a last unit of 2 or 3 characters: 1 or 2 bytes
        out += (bits >> (2 if count == 3 else 4)).to_bytes(count - 1, "big")
    return bytes(out)


def date(ms: int) -> str:
    """SimpleDateFormat("yyyy-MM-dd'T'HH:mm") in the local time zone."""
    return time.strftime("%Y-%m-%dT%H:%M", time.localtime(ms / 1000))


def java_list(items) -> str:
    return "[" + ", ".join(items) + "]"


def _row(values) -> str:
    return "\n" + " ".join(str(v).ljust(w) for v, w in zip(values, WIDTHS)) + "\n"


def token_table(tokens: list[dict]) -> str:
    """printToken: a blank line, the header, and per token a blank line and its row."""
    import base64

    text = _row(HEADER)
    for t in tokens:
        text += _row((t["token_id"], base64.b64encode(bytes(t["hmac"])).decode(),
                      f"{t['principal_type']}:{t['principal_name']}",
                      f"{t['requester_type']}:{t['requester_name']}",
                      java_list(f"{r['principal_type']}:{r['principal_name']}" for r in t["renewers"]),
                      date(t["issue"]), date(t["expiry"]), date(t["max"])))
    return text


# ---------------------------------------------------------------------- the actions

def _check(answer: dict) -> None:
    from .backends.kafka_admin import known_error

    if answer["error_code"]:
        raise CommandFailure(known_error(answer["error_code"]).execution_message())


def create(client, opts: Options, out: Callable[[str], None]) -> None:
    renewers = [parse_principal(p) for p in opts.renewer_principal]
    max_life = java_long(opts.max_life_time_period)
    out(f"Calling create token operation with renewers :{java_list(f'{k}:{n}' for k, n in renewers)} , "
        f"max-life-time-period :{max_life}\n")
    owners = [parse_principal(p) for p in opts.owner_principal]
    owner = owners[0] if owners else (None, None)
    answer = client.call(kp.ApiKey.CREATE_DELEGATION_TOKEN, 3, {
        "owner_principal_type": owner[0], "owner_principal_name": owner[1],
        "renewers": [{"principal_type": k, "principal_name": n} for k, n in renewers],
        "max_lifetime_ms": max_life})
    _check(answer)
    out(f"Created delegation token with tokenId : {answer['token_id']}\n")
    out(token_table([{"token_id": answer["token_id"], "hmac": answer["hmac"],
                      "principal_type": answer["principal_type"], "principal_name": answer["principal_name"],
                      "requester_type": answer.get("token_requester_principal_type") or answer["principal_type"],
                      "requester_name": answer.get("token_requester_principal_name") or answer["principal_name"],
                      "renewers": [{"principal_type": k, "principal_name": n} for k, n in renewers],
                      "issue": answer["issue_timestamp_ms"], "expiry": answer["expiry_timestamp_ms"],
                      "max": answer["max_timestamp_ms"]}]))


def renew(client, opts: Options, out: Callable[[str], None]) -> None:
    period = java_long(opts.renew_time_period)
    out(f"Calling renew token operation with hmac :{opts.hmac} , renew-time-period :{period}\n")
    answer = client.call(kp.ApiKey.RENEW_DELEGATION_TOKEN, 2,
                         {"hmac": java_base64(opts.hmac), "renew_period_ms": period})
    _check(answer)
    out(f"Completed renew operation. New expiry date : {date(answer['expiry_timestamp_ms'])}")


def expire(client, opts: Options, out: Callable[[str], None]) -> None:
    period = java_long(opts.expiry_time_period)
    out(f"Calling expire token operation with hmac :{opts.hmac} , expire-time-period :{period}\n")
    answer = client.call(kp.ApiKey.EXPIRE_DELEGATION_TOKEN, 2,
                         {"hmac": java_base64(opts.hmac), "expiry_time_period_ms": period})
    _check(answer)
    out(f"Completed expire operation. New expiry date : {date(answer['expiry_timestamp_ms'])}")


def describe(client, opts: Options, out: Callable[[str], None]) -> None:
    owners = [parse_principal(p) for p in opts.owner_principal]
    if owners:
        out(f"Calling describe token operation for owners: {java_list(f'{k}:{n}' for k, n in owners)}\n")
    else:
        out("Calling describe token operation for current user.\n")
    # Kafka's tool always sends a list of owners; an empty one is answered with no tokens
    answer = client.call(kp.ApiKey.DESCRIBE_DELEGATION_TOKEN, 3,
                         {"owners": [{"principal_type": k, "principal_name": n} for k, n in owners]})
    _check(answer)
    tokens = [{"token_id": t["token_id"], "hmac": t["hmac"], "principal_type": t["principal_type"],
               "principal_name": t["principal_name"],
               "requester_type": t.get("token_requester_principal_type") or t["principal_type"],
               "requester_name": t.get("token_requester_principal_name") or t["principal_name"],
               "renewers": t["renewers"], "issue": t["issue_timestamp"], "expiry": t["expiry_timestamp"],
               "max": t["max_timestamp"]} for t in answer["tokens"]]
    out(f"Total number of tokens : {len(tokens)}")
    out(token_table(tokens))


RUN = {"create": create, "renew": renew, "expire": expire, "describe": describe}
CALL_NAMES = {"create": "createDelegationToken", "renew": "renewDelegationToken",
              "expire": "expireDelegationToken", "describe": "describeDelegationToken"}


class LazyClient:
    """The wire client of --bootstrap-server with --command-config's security settings, opened
    at the first call (as Kafka's admin client connects: after the tool printed what it does)."""

    def __init__(self, opts: Options):
        from .backends.wire import connection_security
        from .client_config import api_timeout_ms, check_resolvable
        from .errors import ClientConfigError
        from .properties import load_properties

        config = load_properties(opts.command_config)
        for entry in opts.bootstrap_server.split(","):  # ClientUtils.parseAndValidateAddresses
            if entry.strip() and not re.fullmatch(r"\[?[^\s\[\]]*\]?:\d+", entry.strip()):
                raise ClientConfigError(f"Invalid url in bootstrap.servers: {entry.strip()}")
        check_resolvable(opts.bootstrap_server)
        self.security = connection_security(config)
        self.timeout_s = api_timeout_ms(config) / 1000
        self.bootstrap = opts.bootstrap_server
        self.call_name = CALL_NAMES[opts.action]
        self._client = None

    def call(self, api_key: int, version: int, body: dict) -> dict:
        if self._client is None:
            from .backends.wire import WireClient

            self._client = WireClient(self.bootstrap, self.timeout_s, self.call_name, self.security)
        return self._client.call(api_key, version, body)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
