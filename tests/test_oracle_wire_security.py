"""The wire-protocol admin tools over TLS and SASL against Kafka 4.4's own tools (the oracle), on
the session's secured Kafka 4.4 broker (`kafka_secure`): the same --command-config file (Java
client settings, PEM stores) for both; the super user `admin` over SASL_SSL with PLAIN, and a
client certificate over SSL (its principal is no super user: refusals must match too)."""

from __future__ import annotations

import re
import subprocess

import security_setup as S
from conftest import tool_path


def _pk(tool, *args):
    proc = subprocess.run([tool_path(tool), *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _no_epoch(text: str) -> str:
    return re.sub(r"Epoch: \d+", "Epoch: <epoch>", text)


def test_secured_wire_tools_match(kafka_secure, kafka_tools, tmp_path):
    certs = kafka_secure.certs
    for name, bootstrap, config in (
            ("admin", kafka_secure.sasl_ssl, S.client_config(certs, "SASL_SSL", "PLAIN", "admin", "admin-secret")),
            ("mtls", kafka_secure.ssl, S.client_config(certs, "SSL", client_cert=True))):
        path = S.write_properties(str(tmp_path / f"{name}.properties"), config)
        base = ["--bootstrap-server", bootstrap, "--command-config", path]
        for tool, args, normalise in (("broker-api-versions", [], str), ("features", ["describe"], _no_epoch),
                                      ("transactions", ["list"], str)):
            k = kafka_tools(f"kafka-{tool}", *base, *args)
            rc, out, err = _pk(f"pk-{tool}", *base, *args)
            assert (rc, normalise(out)) == (k.returncode, normalise(k.out)), (name, tool, err, k.err)
        k = kafka_tools("kafka-cluster", "list-endpoints", *base)
        assert _pk("pk-cluster", "list-endpoints", *base)[:2] == (k.returncode, k.out), name
