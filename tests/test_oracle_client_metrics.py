"""pk-client-metrics against Kafka 4.4's kafka-client-metrics (the oracle): the same commands,
run by each tool on its own cluster (pk's on a pk-server-start, Kafka's on the session's
Kafka 4.4 broker), print the same; and Kafka's tool on a pk-server-start prints what it prints
on Kafka. Kafka's usage errors print its option table (and argument errors a stack trace)
after the message: compared is the first line, which pk prints alone. The client-metrics
checks of the broker itself (codes and texts, by raw frames) are compared as well."""

from __future__ import annotations

import subprocess
import uuid

from conftest import BrokerProcess, ProtocolClient, tool_path


def _pk(*args):
    proc = subprocess.run([tool_path("pk-client-metrics"), *args], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode().split("\n", 1)[0]


def _kafka(kafka_tools, *args):
    k = kafka_tools("kafka-client-metrics", *args)
    # a log4j ERROR record ("[date] ERROR <exception>", then " (<logger>)") is not the tool's own text
    first = next((line for line in k.err.splitlines() if not line.startswith(("[20", " ("))), "")
    return k.returncode, k.out, first


def _session(name: str) -> list[list[str]]:
    return [["--alter", "--name", name, "--metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.coordinator",
             "--interval", "5000", "--match", "client_id=abc,client_software_name=j.*"],
            ["--describe", "--name", name],
            ["--alter", "--name", name, "--metrics", "a, b", "--match", " client_id = x ", "--interval", ""],
            ["--describe", "--name", name],
            ["--alter", "--name", name, "--match", "", "--metrics", "a", "--metrics", "b", "--interval", "+700"],
            ["--describe", "--name", name],
            ["--alter", "--name", name, "--interval", "50"], ["--alter", "--name", name, "--interval", "3600001"],
            ["--alter", "--name", name, "--match", "foo=bar"], ["--alter", "--name", name, "--match", "client_id=["],
            ["--alter", "--name", name, "--match", "client_id"], ["--alter", "--name", name, "--metrics", "a,,b,"],
            ["--alter", "--name", name, "--metrics", ",", "--match", ",client_id=q,"], ["--describe", "--name", name],
            ["--alter", "--name", "", "--metrics", "a"], ["--describe", "--name", ""],
            ["--describe", "--name", name + "-none"],
            ["--delete", "--name", name], ["--describe", "--name", name], ["--delete", "--name", name]]


def test_commands_match(kafka, kafka_tools, pk_server):
    name = f"cm-{uuid.uuid4().hex[:8]}"
    for args in _session(name):
        kafka_answer = _kafka(kafka_tools, "--bootstrap-server", kafka.bootstrap, *args)
        assert _pk("--bootstrap-server", pk_server.bootstrap, *args) == kafka_answer, args
        # Kafka's own tool on pk-server-start
        assert _kafka(kafka_tools, "--bootstrap-server", pk_server.bootstrap, *args) == kafka_answer, args


def test_list_and_describe_all(kafka, kafka_tools, pk_server):
    """--list and --describe without --name on a cluster holding just these subscriptions
    (a second pk-server-start; Kafka's list order, its controller's HashMap, is pk's)."""
    names = ["r2", "to5n0NhAQXCthe6sF93zjw", "a/b c", "r1", "x" * 300]
    on_kafka = [n + "-ck" for n in names]
    for n in on_kafka:
        assert _kafka(kafka_tools, "--bootstrap-server", kafka.bootstrap, "--alter", "--name", n, "--metrics",
                      "m")[0] == 0
    rc, out, _ = _kafka(kafka_tools, "--bootstrap-server", kafka.bootstrap, "--list")
    listed = [line for line in out.splitlines() if line.endswith("-ck")]
    try:
        b = BrokerProcess(pk_server.data_dir + "-list").start()
        try:
            for n in on_kafka:
                assert _pk("--bootstrap-server", b.bootstrap, "--alter", "--name", n, "--metrics", "m")[0] == 0
            assert _pk("--bootstrap-server", b.bootstrap, "--list") == (0, "".join(f"{n}\n" for n in listed), "")
            described = _kafka(kafka_tools, "--bootstrap-server", kafka.bootstrap, "--describe")[1]
            ours = _pk("--bootstrap-server", b.bootstrap, "--describe")[1]
            blocks = [block for block in described.split("Client metrics configs for ") if "-ck are:" in block]
            assert ours == "".join("Client metrics configs for " + block for block in blocks)
        finally:
            b.stop()
    finally:
        for n in on_kafka:
            kafka_tools("kafka-client-metrics", "--bootstrap-server", kafka.bootstrap, "--delete", "--name", n)


def test_refusals_match(kafka_tools):
    for args in (["--list"], ["--bootstrap-server", "h:1"], ["--bootstrap-server", "h:1", "--list", "--describe"],
                 ["--bootstrap-server", "h:1", "--list", "--name", "x"],
                 ["--bootstrap-server", "h:1", "--describe", "--interval", "5"],
                 ["--bootstrap-server", "h:1", "--delete"], ["--bootstrap-server", "h:1", "--delete", "--metrics", "a",
                                                             "--name", "x"],
                 ["--bootstrap-server", "h:1", "--alter"], ["--bootstrap-server", "h:1", "--alter", "--name", "x",
                                                            "--generate-name"],
                 ["--bootstrap-server", "h:1", "--alter", "--name", "x", "--interval", "abc"],
                 ["--bootstrap-server", "h:1", "--alter", "--name", "x", "--interval", " 200"],
                 ["--bootstrap-server", "h:1", "--foo"], ["--bootstrap-server", "h:1", "--list", "--name"],
                 ["--bootstrap-server", "h:1", "--list", "--generate-name"], ["-h"], ["--version"],
                 ["--bootstrap-server", "h:1", "--alter", "--generate-name", "--delete"]):
        assert _pk(*args) == _kafka(kafka_tools, *args), args


def _alter(client, configs, name="s1", validate_only=False):
    answer = client.call(44, 1, {"resources": [{"resource_type": 16, "resource_name": name, "configs": [
        {"name": n, "config_operation": op, "value": v} for n, op, v in configs]}], "validate_only": validate_only})
    return [(r["error_code"], r["error_message"]) for r in answer["responses"]]


def _describe(client, name, keys=None, synonyms=True, documentation=True):
    return client.call(32, 4, {"resources": [{"resource_type": 16, "resource_name": name, "configuration_keys": keys}],
                               "include_synonyms": synonyms, "include_documentation": documentation})["results"]


def test_broker_checks_match(kafka, pk_server):
    """Each IncrementalAlterConfigs of a client-metrics resource answered with Kafka's code and
    text; DescribeConfigs of set and unset resources; ListConfigResources' refusals."""
    n = f"raw-{uuid.uuid4().hex[:8]}"
    cases = [[("metrics", 0, "a.b,c"), ("interval.ms", 0, "1000"), ("match", 0, "client_id=x")],
             [("foo", 0, "a")], [("foo", 1, None)], [("interval.ms", 0, "abc")], [("interval.ms", 0, "99")],
             [("interval.ms", 0, "-0")], [("interval.ms", 0, " 200 ")], [("interval.ms", 0, "")],
             [("interval.ms", 0, "99999999999")], [("match", 0, "client_idx=a")], [("match", 0, "client_id=")],
             [("match", 0, "client_software_name=*")], [("match", 0, "client_id=a,foo=b")], [("match", 0, "=a")],
             [("match", 0, "client_id=a=b")], [("match", 0, "client_id=a,,client_instance_id=b")],
             [("match", 0, " client_id=a , client_software_name = b ")], [("metrics", 0, " a , b ,,")],
             [("metrics", 0, ",")], [("metrics", 0, " ")], [("metrics", 2, "z")], [("metrics", 3, "a")],
             [("interval.ms", 2, "5")], [("metrics", 7, "q")], [("metrics", 0, None)],
             [("metrics", 0, "a"), ("metrics", 0, "b")],
             [("interval.ms", 0, "abc"), ("metrics", 0, "a,,b")], [("match", 0, "x=y"), ("metrics", 0, "a,,b")],
             [("interval.ms", 0, "5"), ("match", 0, "x=y")], [("foo", 0, "5"), ("interval.ms", 0, "5")],
             [("interval.ms", 1, None), ("match", 1, None)]]
    with ProtocolClient(kafka.bootstrap) as k, ProtocolClient(pk_server.bootstrap) as p:
        for step, configs in enumerate(cases):
            on_kafka = _alter(k, configs, n)
            if all(code == 0 for code, _ in on_kafka):
                _wait_applied(k, n + "-marker", step)
            assert _alter(p, configs, n) == on_kafka, configs
            assert _describe(p, n) == _describe(k, n), configs
        for configs in ([("metrics", 0, "a")],):
            assert _alter(p, configs, "") == _alter(k, configs, "")
            assert _alter(p, configs, n + "-v", True) == _alter(k, configs, n + "-v", True)
        for args in ((n, ["metrics", "zz"], False, False), ("", None, True, True), (n + "-v", None, True, True)):
            assert _describe(p, *args) == _describe(k, *args), args
        for version, body in ((1, {"resource_types": [99]}), (1, {"resource_types": [0]})):
            assert p.call(74, version, body) == k.call(74, version, body)
        listed = {v: [r["resource_name"] for r in k.call(74, v, {"resource_types": [16]} if v else {})[
            "config_resources"]] for v in (0, 1)}
        assert n in listed[0] and n in listed[1] and n + "-v" not in listed[1]
        for v in (0, 1):
            assert [r["resource_name"] for r in p.call(74, v, {"resource_types": [16]} if v else {})[
                "config_resources"]] == [n]
        _alter(k, [("metrics", 1, None)], n)
        _alter(k, [("metrics", 1, None)], n + "-marker")


def _wait_applied(kafka_client, marker: str, step: int, timeout: float = 15.0) -> None:
    """Until Kafka's broker has applied the alter just made: the controller commits it and the
    broker applies the metadata log in order, a moment later (a DescribeConfigs at once may
    still show the old value). A marker resource altered after it is waited for instead, whose
    value is known; pk-server-start applies an alter before answering it."""
    import time

    value = f"marker.{step}"
    assert _alter(kafka_client, [("metrics", 0, value)], marker) == [(0, None)]
    deadline = time.monotonic() + timeout
    while True:
        (result,) = _describe(kafka_client, marker, ["metrics"], False, False)
        if [c["value"] for c in result["configs"]] == [value]:
            return
        assert time.monotonic() < deadline, f"Kafka did not apply the alter of {marker} within {timeout:.0f} s"
        time.sleep(0.02)


def test_pk_configs_on_client_metrics_matches(kafka, kafka_tools, pk_server):
    """pk-configs --entity-type client-metrics against pk-server-start prints what Kafka's
    kafka-configs prints against Kafka (and against pk-server-start); a failure's exception
    line is compared (its first line names the bootstrap address)."""
    name = f"cf-{uuid.uuid4().hex[:8]}"
    seq = [["--alter", "--entity-type", "client-metrics", "--entity-name", name, "--add-config",
            "metrics=[a,b],interval.ms=1000"],
           ["--describe", "--entity-type", "client-metrics", "--entity-name", name],
           ["--describe", "--client-metrics", name, "--all"],
           ["--describe", "--client-metrics", name + "-none"],
           ["--alter", "--client-metrics", name, "--add-config", "interval.ms=5"],
           ["--alter", "--client-metrics", name, "--add-config", "foo=5"],
           ["--alter", "--client-metrics", name, "--delete-config", "interval.ms"],
           ["--describe", "--client-metrics", name],
           ["--alter", "--client-metrics", name, "--delete-config", "metrics"],
           ["--describe", "--client-metrics", name]]

    def exception_line(err: str) -> str:
        lines = err.splitlines()
        return lines[1] if len(lines) > 1 else ""

    for args in seq:
        k = kafka_tools("kafka-configs", "--bootstrap-server", kafka.bootstrap, *args)
        expected = (k.returncode, k.out, exception_line(k.err))
        proc = subprocess.run([tool_path("pk-configs"), "--bootstrap-server", pk_server.bootstrap, *args],
                              capture_output=True, timeout=120)
        assert (proc.returncode, proc.stdout.decode(), exception_line(proc.stderr.decode())) == expected, args
        on_pk = kafka_tools("kafka-configs", "--bootstrap-server", pk_server.bootstrap, *args)
        assert (on_pk.returncode, on_pk.out, exception_line(on_pk.err)) == expected, args
