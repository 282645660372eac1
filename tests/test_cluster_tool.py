"""pk-cluster's list-endpoints, api-versions, unregister and unregister-controller against a
pk-server-start (one broker, never fenced; no unregistration APIs)."""

from __future__ import annotations

import subprocess

import pytest

from conftest import BrokerProcess, tool_path


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("cluster") / "data")).start()
    yield b
    b.stop()


def _pk(*args):
    proc = subprocess.run([tool_path("pk-cluster"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_list_endpoints(broker):
    header = "ID         HOST      PORT       RACK       STATE      ENDPOINT_TYPE  \n"
    row = f"0          127.0.0.1 {broker.port:<10} null       unfenced   broker         \n"
    for flags in ([], ["--include-fenced-brokers"]):
        assert _pk("list-endpoints", "-b", broker.bootstrap, *flags) == (0, header + row, "")
    assert _pk("list-endpoints", "-C", broker.bootstrap) == (
        1, "", "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.MismatchedEndpointTypeException: "
               "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER\n")


def test_api_versions_is_broker_api_versions(broker):
    rc, out, err = _pk("api-versions", "--bootstrap-server", broker.bootstrap)
    expected = subprocess.run([tool_path("pk-broker-api-versions"), "--bootstrap-server", broker.bootstrap],
                              capture_output=True, text=True, timeout=60).stdout
    assert (rc, out, err) == (0, expected, "")
    assert "\tElectLeaders(43): 0 to 2 [usable: 2],\n" in out


def test_unregister_not_offered(broker):
    assert _pk("unregister", "-b", broker.bootstrap, "--id", "3") == (
        0, "The target cluster does not support the broker unregistration API.\n", "")
    assert _pk("unregister-controller", "-b", broker.bootstrap, "-i", "3") == (
        0, "The target cluster does not support the controller unregistration API.\n", "")


@pytest.mark.parametrize("args, line", [
    (["unregister", "-b", "x:1"], "argument --id/-i is required"),
    (["unregister", "-b", "x:1", "--id", "x"], "argument --id/-i: could not convert 'x' to Integer (For input string: \"x\")"),
    (["list-endpoints"], "one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required"),
    (["api-versions", "--data-dir", "/tmp"], "unrecognized arguments: '--data-dir' '/tmp'"),
])
def test_refusals(args, line):
    assert _pk(*args) == (1, "", f"kafka-cluster: error: {line}\n")
