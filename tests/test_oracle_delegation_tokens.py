"""Delegation tokens against the real Kafka 4.4 (`kafka_secure`, with delegation.token.secret.key
set): Kafka's kafka-delegation-tokens and pk-delegation-tokens, each against Kafka and against
pk-server-start with the same settings, print the same (token ids, HMACs and dates normalised);
Kafka's Java clients log in to pk with a pk-made token, pk's wire client to Kafka with a
Kafka-made one."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

import security_setup as S
from conftest import BrokerProcess, free_port, tool_path

TOOL = "org.apache.kafka.tools.DelegationTokenCommand"
USERS = {"tina": "tina-secret", "ray": "ray-secret"}


@pytest.fixture(scope="module")
def token_pk(tmp_path_factory, tls_certs):
    """pk-server-start with kafka_secure's listeners, authorizer and token secret."""
    data_dir = str(tmp_path_factory.mktemp("oracle-tokens-pk") / "data")
    os.makedirs(data_dir)
    broker = S.secured_like_kafka_secure(BrokerProcess(data_dir), free_port(), tls_certs)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def configs(tmp_path_factory, tls_certs):
    base = tmp_path_factory.mktemp("oracle-token-configs")
    write = lambda name, config: S.write_properties(str(base / f"{name}.properties"), config)  # noqa: E731
    found = {u: write(u, S.client_config(tls_certs, "SASL_SSL", "SCRAM-SHA-512", u, p)) for u, p in USERS.items()}
    found["admin"] = write("admin", S.client_config(tls_certs, "SASL_SSL", "PLAIN", "admin", "admin-secret"))
    found["plaintext"] = write("plaintext", {})
    found["dir"] = str(base)
    return found


def _add_users(kafka_tools, bootstrap: str) -> None:
    for user, password in USERS.items():
        for config in (f"SCRAM-SHA-512=[iterations=4096,password={password}]", f"SCRAM-SHA-256=[password={password}]"):
            done = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users",
                               "--entity-name", user, "--add-config", config)
            assert done.returncode == 0, done.err


def _normalise(text: str) -> str:
    text = re.sub(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{86}==", "HMAC", text)  # (an HMAC may start with + or /)
    text = re.sub(r"(?<![\w-])[A-Za-z0-9_][A-Za-z0-9_-]{21}(?![\w-])", "TOKENID", text)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d", "DATE", text)


class Runner:
    """Runs one tool (Kafka's or pk's) against one broker as one user: (status, stdout, first
    stderr line), normalised."""

    def __init__(self, kafka_tools, tool: str, broker, configs):
        self.kafka_tools, self.tool, self.broker, self.configs = kafka_tools, tool, broker, configs
        self.created = ""  # what the last successful --create printed

    def raw(self, user: str, *args: str, bootstrap: str | None = None) -> tuple[int, str, str]:
        full = ["--bootstrap-server", bootstrap or self.broker.sasl_ssl, "--command-config", self.configs[user], *args]
        if self.tool == "kafka":
            done = self.kafka_tools.run_class(TOOL, *full)
            return done.returncode, done.out, done.err
        done = subprocess.run([tool_path("pk-delegation-tokens"), *full], capture_output=True, text=True,
                              timeout=120)
        return done.returncode, done.stdout, done.stderr

    def __call__(self, user: str, *args: str, **kw) -> tuple[int, str, str]:
        status, out, err = self.raw(user, *args, **kw)
        if "--create" in args and status == 0:
            self.created = out
        return status, _normalise(out), _normalise(err.split("\n", 1)[0])


def _token_of(output: str) -> tuple[str, str]:
    row = [line.split() for line in output.splitlines() if len(line.split()) >= 8][-1]
    return row[0], row[1]


def _eventually(check, timeout: float = 15.0):
    """Kafka's brokers learn a token change from the metadata log, a moment after the answer."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def _scenario(run: Runner) -> list:
    """Every action and refusal, in one order; what each printed."""
    seen = [run("tina", "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:ray")]
    _, hmac = _token_of(run.created)
    seen.append(run("tina", "--describe"))
    owners = ("--describe", "--owner-principal", "User:tina")
    seen.append(_eventually(lambda: (lambda r: r if "tokens : 1" in r[1] else None)(run("tina", *owners))))
    seen.append(run("ray", "--describe", "--owner-principal", "User:ray", "--owner-principal", "User:nobody"))
    seen.append(run("ray", "--renew", "--hmac", hmac, "--renew-time-period", "-1"))
    seen.append(run("admin", "--renew", "--hmac", hmac, "--renew-time-period", "-1"))
    seen.append(run("ray", "--expire", "--hmac", hmac, "--expiry-time-period", "100000"))
    seen.append(run("tina", "--expire", "--hmac", hmac, "--expiry-time-period", "-1"))
    seen.append(_eventually(lambda: (lambda r: r if r[0] else None)(
        run("tina", "--renew", "--hmac", hmac, "--renew-time-period", "-1"))))
    seen.append(run("plaintext", "--describe", bootstrap=run.broker.bootstrap))
    seen.append(run("tina", "--create", "--max-life-time-period", "5", "--renewer-principal", "Group:g"))
    seen.append(run("tina", "--create", "--max-life-time-period", "5", "--owner-principal", "User:ray"))
    seen.append(run("tina", "--describe", "--owner-principal", "nobody"))
    seen.append(run("tina", "--renew", "--hmac", "a-b", "--renew-time-period", "1"))
    return seen


def test_tool_outputs_same_on_kafka_and_pk(kafka_tools, kafka_secure, token_pk, configs):
    for broker in (kafka_secure, token_pk):
        _add_users(kafka_tools, broker.bootstrap)
    results = {(tool, name): _scenario(Runner(kafka_tools, tool, broker, configs))
               for tool in ("kafka", "pk") for name, broker in (("kafka", kafka_secure), ("pk", token_pk))}
    reference = results["kafka", "kafka"]
    assert [r[0] for r in reference] == [0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1]
    for key, seen in results.items():
        assert seen == reference, key


def test_token_logins_across_implementations(kafka_tools, kafka_secure, token_pk, configs):
    """A token made by each broker logs Kafka's Java tools and pk's wire client in to that broker
    (the login works; token requests are then refused as from any token login); a wrong HMAC
    fails the login on both with the same text."""
    for broker in (kafka_secure, token_pk):
        _add_users(kafka_tools, broker.bootstrap)
    seen = []
    for broker in (kafka_secure, token_pk):
        run = Runner(kafka_tools, "pk", broker, configs)
        status, out, err = run.raw("tina", "--create", "--max-life-time-period", "-1")
        assert status == 0, err
        token_id, hmac = _token_of(out)
        for name, secret in (("good", hmac), ("bad", hmac[:-4] + "AAA=")):
            config = S.client_config(broker.certs, "SASL_SSL", "SCRAM-SHA-256", token_id, secret)
            config["sasl.jaas.config"] = config["sasl.jaas.config"].replace(";", ' tokenauth="true";')
            configs[f"token-{name}"] = S.write_properties(os.path.join(configs["dir"], f"token-{name}.properties"),
                                                          config)

        def logged_in():
            java = kafka_tools("kafka-topics", "--bootstrap-server", broker.sasl_ssl, "--command-config",
                               configs["token-good"], "--list")
            return java if java.returncode == 0 else None
        java = _eventually(logged_in)  # Kafka's brokers learn the token from the metadata log
        assert java is not None
        for tool in ("kafka", "pk"):
            seen.append((tool, Runner(kafka_tools, tool, broker, configs)("token-good", "--describe")))
        seen.append(("pk-bad", Runner(kafka_tools, "pk", broker, configs)("token-bad", "--describe")))
    half = len(seen) // 2
    assert seen[:half] == seen[half:]
    assert seen[0][1][2] == ("org.apache.kafka.common.errors.UnsupportedByAuthenticationException: Delegation Token "
                             "requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token "
                             "authenticated channels.")
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in seen[2][1][2]
