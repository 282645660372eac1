"""The wire-protocol admin tools (pk-configs, pk-broker-api-versions, pk-log-dirs, pk-features,
pk-cluster, pk-transactions) against a secured pk-server-start: SASL_SSL with SCRAM-SHA-512 and
PLAIN, SSL with a client certificate, SASL_PLAINTEXT; the Java client settings come from a
--command-config file, as for Kafka's tools."""

from __future__ import annotations

import subprocess

import pytest

import security_setup as S
from conftest import SECURE_PK_SCRAM, secure_pk_client, tool_path

SCRAM_USER, SCRAM_PASSWORD = SECURE_PK_SCRAM


@pytest.fixture(scope="module")
def secure(secure_pk):
    return secure_pk


def _run(tool, *args):
    proc = subprocess.run([tool_path(tool), *args], capture_output=True, text=True, timeout=90)
    return proc.returncode, proc.stdout, proc.stderr



@pytest.mark.parametrize("name", ["scram", "plain", "mtls", "sasl_plaintext"])
def test_wire_tools_over_secured_listeners(secure, tls_certs, tmp_path, name):
    listener, config = secure_pk_client(tls_certs, name)
    path = S.write_properties(str(tmp_path / "client.properties"), config)
    b = ["--bootstrap-server", f"127.0.0.1:{secure.ports[listener]}", "--command-config", path]
    rc, out, err = _run("pk-broker-api-versions", *b)
    assert (rc, err) == (0, "") and "ApiVersions(18)" in out
    rc, out, err = _run("pk-configs", *b, "--describe", "--entity-type", "brokers", "--entity-name", "0")
    assert (rc, err) == (0, "") and out.startswith("Dynamic configs for broker 0 are:")
    rc, out, err = _run("pk-log-dirs", *b, "--describe")
    assert (rc, err) == (0, "") and '"brokers"' in out
    rc, out, err = _run("pk-features", *b, "describe")
    assert (rc, err) == (0, "") and "Feature: metadata.version" in out
    rc, out, err = _run("pk-cluster", "list-endpoints", *b)
    assert (rc, err) == (0, "") and out.splitlines()[1].split()[:3] == ["0", "127.0.0.1", str(secure.ports[listener])]
    rc, out, err = _run("pk-transactions", *b, "list")
    assert (rc, out, err) == (0, "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n", "")


def test_wrong_password_and_untrusted_broker(secure, tls_certs, tmp_path):
    wrong = S.write_properties(str(tmp_path / "wrong.properties"),
                               S.client_config(tls_certs, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, "nope"))
    rc, out, err = _run("pk-features", "--bootstrap-server", f"127.0.0.1:{secure.ports['SASL_SSL']}",
                        "--command-config", wrong, "describe")
    assert (rc, out) == (1, "") and err.count("\n") == 1
    assert "Authentication failed during authentication due to invalid credentials with SASL mechanism " \
           "SCRAM-SHA-512" in err
    # no truststore: the broker's certificate is not trusted
    untrusted = S.write_properties(str(tmp_path / "untrusted.properties"), {"security.protocol": "SSL"})
    rc, out, err = _run("pk-cluster", "list-endpoints", "--bootstrap-server", f"127.0.0.1:{secure.ports['SSL']}",
                        "--command-config", untrusted)
    assert (rc, out) == (1, "") and err.count("\n") == 1 and "SslAuthenticationException" in err
    gssapi = S.write_properties(str(tmp_path / "gssapi.properties"), {"security.protocol": "SASL_PLAINTEXT"})
    rc, out, err = _run("pk-log-dirs", "--bootstrap-server", f"127.0.0.1:{secure.ports['SASL_PLAINTEXT']}",
                        "--command-config", gssapi, "--describe")
    assert (rc, out) == (1, "") and "sasl.mechanism=GSSAPI" in err and "Traceback" not in err
