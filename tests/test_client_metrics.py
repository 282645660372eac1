"""Client-metrics subscriptions (CLIENT_METRICS config resources) on pk-server-start: kept in the
data directory across restarts and between processes, checked as Kafka checks them, listed by
ListConfigResources, authorized on the cluster; pk-client-metrics and pk-configs
--entity-type client-metrics on top of them; and the tool's refusals before any request."""

from __future__ import annotations

import subprocess

import pytest

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("client-metrics") / "data")).start()
    yield b
    b.stop()


def _run(tool, *args):
    proc = subprocess.run([tool_path(tool), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _cm(b, *args):
    return _run("pk-client-metrics", "--bootstrap-server", b.bootstrap, *args)


def test_alter_describe_list_delete(broker):
    assert _cm(broker, "--alter", "--name", "s1", "--metrics", "org.apache.kafka.producer., org.apache.kafka.consumer.",
               "--interval", "5000", "--match", "client_id=app-.*,client_software_name=apache-kafka-java") == (
        0, "Altered client metrics config for s1.\n", "")
    assert _cm(broker, "--describe", "--name", "s1") == (0, (
        "Client metrics configs for s1 are:\n  interval.ms=5000\n"
        "  match=client_id=app-.*,client_software_name=apache-kafka-java\n"
        "  metrics=org.apache.kafka.producer.,org.apache.kafka.consumer.\n"), "")
    rc, out, err = _cm(broker, "--alter", "--generate-name", "--metrics", "m")
    generated = out.removeprefix("Altered client metrics config for ").removesuffix(".\n")
    assert (rc, err, len(generated)) == (0, "", 22)
    assert sorted(_cm(broker, "--list")[1].split()) == sorted(["s1", generated])
    assert _cm(broker, "--alter", "--name", "s1", "--interval", "", "--match", "") == (
        0, "Altered client metrics config for s1.\n", "")
    assert _cm(broker, "--describe", "--name", "s1")[1] == (
        "Client metrics configs for s1 are:\n  interval.ms=300000\n  match=\n"
        "  metrics=org.apache.kafka.producer.,org.apache.kafka.consumer.\n")
    assert _cm(broker, "--delete", "--name", "s1") == (0, "Deleted client metrics config for s1.\n", "")
    assert _cm(broker, "--describe", "--name", "s1") == (
        0, "The client metric resource s1 doesn't exist and doesn't have dynamic config.\n", "")
    assert _cm(broker, "--list") == (0, f"{generated}\n", "")
    assert _cm(broker, "--delete", "--name", generated)[0] == 0
    assert _cm(broker, "--list") == (0, "\n", "")


@pytest.mark.parametrize("args, line", [
    (["--interval", "50"], "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    (["--interval", "3600001"], "Invalid value 3600001 for interval.ms, interval must be between 100 and 3600000 "
                                "(1 hour)"),
    (["--match", "foo=bar"], "Illegal client matching pattern: foo=bar"),
    (["--match", "client_id=["], "Illegal client matching pattern: client_id=["),
    (["--metrics", ","], "Configuration 'metrics' values must not be empty."),
])
def test_invalid_subscriptions_are_refused(broker, args, line):
    assert _cm(broker, "--alter", "--name", "bad", *args) == (
        1, f"Error while executing client metrics command : {line}\n", "")
    assert "bad" not in _cm(broker, "--list")[1].split()


@pytest.mark.parametrize("args, line", [
    (["--list"], "--bootstrap-server must be specified."),
    (["--bootstrap-server", "h:1"],
     "Command must include exactly one action: --alter, --delete, --describe or --list."),
    (["--bootstrap-server", "h:1", "--list", "--name", "x"], 'Option "[list]" can\'t be used with option "[name]"'),
    (["--bootstrap-server", "h:1", "--describe", "--metrics", "a"],
     'Option "[describe]" can\'t be used with option "[metrics]"'),
    (["--bootstrap-server", "h:1", "--alter"], "One of --name or --generate-name must be specified with --alter."),
    (["--bootstrap-server", "h:1", "--delete"], "A client metrics resource name must be specified with --delete."),
    (["--bootstrap-server", "h:1", "--alter", "--name", "x", "--interval", "1.5"],
     "Invalid interval value. Enter an integer, or leave empty to reset."),
    (["--bootstrap-server", "h:1", "--list", "--command-config", "/nonexistent.properties"],
     "/nonexistent.properties"),
])
def test_refusals(args, line):
    assert _run("pk-client-metrics", *args) == (1, "", line + "\n")


def test_kept_across_restarts_and_shared_between_processes(tmp_path):
    """The file under .pk/ is read again when another process (here a Python process on the
    engine's store, as a tool beside the broker would) changed it."""
    import sys

    data = str(tmp_path / "data")
    first = BrokerProcess(data).start()
    try:
        assert _cm(first, "--alter", "--name", "kept", "--metrics", "a", "--interval", "1000")[0] == 0
        other = ("import sys; from pk.engine.client_metrics import ClientMetricsStore, normalise; "
                 "ClientMetricsStore(sys.argv[1]).alter('kept', lambda c: normalise({**c, 'interval.ms': '2000'}))")
        subprocess.run([sys.executable, "-c", other, data], check=True, timeout=60)
        assert _cm(first, "--describe", "--name", "kept")[1] == (
            "Client metrics configs for kept are:\n  interval.ms=2000\n  match=\n  metrics=a\n")
    finally:
        first.stop()
    restarted = BrokerProcess(data).start()
    try:
        assert _cm(restarted, "--list") == (0, "kept\n", "")
    finally:
        restarted.stop()


def test_pk_configs_on_client_metrics(broker):
    def configs(*args):
        return _run("pk-configs", "--bootstrap-server", broker.bootstrap, *args)

    assert configs("--alter", "--entity-type", "client-metrics", "--entity-name", "cf", "--add-config",
                   "metrics=[a,b],interval.ms=1000") == (0, "Completed updating config for client-metric cf.\n", "")
    assert configs("--describe", "--client-metrics", "cf") == (0, (
        "Dynamic configs for client-metric cf are:\n"
        "  interval.ms=1000 sensitive=false synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:interval.ms=1000}\n"
        "  metrics=a,b sensitive=false synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:metrics=a,b}\n"), "")
    assert configs("--describe", "--entity-type", "client-metrics")[1].startswith(
        "Dynamic configs for client-metric cf are:\n")
    assert configs("--describe", "--client-metrics", "none") == (
        0, "The client-metric 'none' doesn't exist and doesn't have dynamic config.\n", "")
    rc, _, err = configs("--alter", "--client-metrics", "cf", "--add-config", "foo=1")
    assert rc == 1 and err.splitlines()[1] == ("java.util.concurrent.ExecutionException: org.apache.kafka.common."
                                               "errors.InvalidRequestException: Unknown client metrics configuration: "
                                               "foo")
    assert configs("--alter", "--client-metrics", "cf", "--delete-config", "metrics,interval.ms")[0] == 0
    assert "cf" not in _cm(broker, "--list")[1].split()


def _alter(client, name, *configs, validate_only=False, version=1):
    answer = client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, {"resources": [
        {"resource_type": 16, "resource_name": name,
         "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in configs]}],
        "validate_only": validate_only})
    return [(r["error_code"], r["error_message"]) for r in answer["responses"]]


def test_raw_frames(broker):
    with ProtocolClient(broker.port) as c:
        assert _alter(c, "", ("metrics", 0, "a")) == [(E.INVALID_REQUEST, "Subscription name can't be empty")]
        assert _alter(c, "r", ("metrics", 2, "a")) == [
            (E.INVALID_CONFIG, "Can't APPEND to key metrics because its type is not LIST.")]
        assert _alter(c, "r", ("metrics", 0, None)) == [(E.INVALID_REQUEST, "Null value not supported for : metrics")]
        assert _alter(c, "r", ("interval.ms", 0, "x")) == [
            (E.INVALID_CONFIG, "Invalid value x for configuration interval.ms: Not a number of type INT")]
        assert _alter(c, "r", ("metrics", 0, "a"), validate_only=True) == [(E.NONE, None)]
        assert _alter(c, "r", ("metrics", 0, "a"), ("interval.ms", 0, " +150 "), version=0) == [(E.NONE, None)]
        answer = c.call(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 16, "resource_name": "r", "configuration_keys": ["interval.ms"]}],
            "include_synonyms": True, "include_documentation": True})
        assert answer["results"][0]["configs"] == [
            {"name": "interval.ms", "value": "150", "read_only": False, "config_source": 7, "is_sensitive": False,
             "synonyms": [{"name": "interval.ms", "value": "150", "source": 7}], "config_type": 3,
             "documentation": "Metrics push interval in milliseconds"}]
        legacy = c.call(ApiKey.ALTER_CONFIGS, 2, {"resources": [{"resource_type": 16, "resource_name": "r", "configs": [
            {"name": "match", "value": "client_id=x"}]}], "validate_only": False})
        assert legacy["responses"][0]["error_code"] == E.NONE
        assert [(e["name"], e["value"], e["config_source"]) for e in c.call(ApiKey.DESCRIBE_CONFIGS, 4, {
            "resources": [{"resource_type": 16, "resource_name": "r", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False})["results"][0]["configs"]] == [
            ("interval.ms", "300000", 5), ("match", "client_id=x", 7), ("metrics", "", 5)]
        v0 = c.call(ApiKey.LIST_CONFIG_RESOURCES, 0, {})
        assert "r" in [r["resource_name"] for r in v0["config_resources"]]
        every = c.call(ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": []})["config_resources"]
        assert [(r["resource_type"], r["resource_name"]) for r in every if r["resource_type"] != 16][:2] == [
            (8, "0"), (4, "0")]
        assert c.call(ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": [99]})["error_code"] == E.UNSUPPORTED_VERSION
        _alter(c, "r", ("match", 1, None))


def test_cluster_authorization(tmp_path):
    b = BrokerProcess(str(tmp_path / "d"), {"authorizer.class.name":
                                            "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}).start()
    try:
        with ProtocolClient(b.port) as c:
            assert c.call(ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": [16]})["error_code"] == (
                E.CLUSTER_AUTHORIZATION_FAILED)
            assert _alter(c, "r", ("metrics", 0, "a"))[0][0] == E.CLUSTER_AUTHORIZATION_FAILED
    finally:
        b.stop()
    assert not (tmp_path / "d" / ".pk" / "client-metrics.json").exists()


def test_store_checks():
    from pk.engine.client_metrics import ClientMetricsError, normalise

    assert normalise({"metrics": " a , b ", "interval.ms": "+500", "match": " client_id = x , client_id=y "}) == {
        "metrics": "a,b", "interval.ms": "500", "match": "client_id = x,client_id=y"}
    assert normalise({"metrics": " "}) == {"metrics": ""}
    for configs, code, message in [
        ({"foo": "1", "interval.ms": "5"}, E.INVALID_REQUEST, "Unknown client metrics configuration: foo"),
        ({"interval.ms": "abc", "metrics": "a,,b"}, E.INVALID_CONFIG, "Configuration 'metrics' values must not be "
                                                                      "empty."),
        ({"interval.ms": "5", "match": "x=y"}, E.INVALID_REQUEST, "Invalid value 5 for interval.ms, interval must be "
                                                                  "between 100 and 3600000 (1 hour)"),
        ({"match": "client_id=a=b"}, E.INVALID_CONFIG, "Illegal client matching pattern: client_id=a=b"),
    ]:
        with pytest.raises(ClientMetricsError) as info:
            normalise(configs)
        assert (info.value.code, str(info.value)) == (code, message)
