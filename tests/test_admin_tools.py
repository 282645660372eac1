"""pk-delete-records on the bundled engine and against pk-server-start, and
pk-broker-api-versions against pk-server-start: output, Kafka's errors, and the client API
table checked against Kafka 4.4's own message schemas."""

from __future__ import annotations

import glob
import json
import os
import re
import zipfile

import pytest

from conftest import BrokerProcess


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir


def _offsets_file(tmp_path, partitions, version=1):
    path = tmp_path / "offsets.json"
    body = {"partitions": [{"topic": t, "partition": p, "offset": o} for t, p, o in partitions]}
    if version is not None:
        body["version"] = version
    path.write_text(json.dumps(body))
    return str(path)


def test_delete_records(pk, backend, tmp_path):
    t = backend.topic("dr")
    backend.create(t, 2)
    pk("pk-console-producer", *backend, "--topic", t, "--property", "parse.key=true",
       input="".join(f"k{i}\tv{i}\n" for i in range(20)))
    counts = {p: len(backend.records(t, p)) for p in (0, 1)}
    assert counts[0] >= 2 and counts[1] >= 1, counts
    f = _offsets_file(tmp_path, [(t, 0, 2), (t, 1, -1)])
    r = pk("pk-delete-records", *backend, "--offset-json-file", f)
    assert (r.returncode, r.err) == (0, "")
    assert r.out == ("Executing records delete operation\nRecords delete operation completed:\n"
                     f"partition: {t}-0\tlow_watermark: 2\npartition: {t}-1\tlow_watermark: {counts[1]}\n")
    r = pk("pk-get-offsets", *backend, "--topic", t, "--time", "-2")
    assert r.out == f"{t}:0:2\n{t}:1:{counts[1]}\n"
    f = _offsets_file(tmp_path, [(t, 0, 10_000)])
    r = pk("pk-delete-records", *backend, "--offset-json-file", f)
    assert r.returncode == 0 and r.out.splitlines()[-1] == (
        f"partition: {t}-0\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset "
        "is not within the range of offsets maintained by the server.")


def test_delete_records_bad_input(pk, backend, tmp_path):
    bad = tmp_path / "bad.json"
    cases = [
        ("garbage", "The input string is not a valid JSON"),
        ('{"partitions":[{"topic":"a","partition":0}],"version":1}', "No such field exists: `offset`"),
        ('{"partitions":[{"topic":"a","partition":0,"offset":1}],"version":2}', "Not supported version field value 2"),
        ('{"version":1}', "Missing partitions field"),
        ('{"partitions":[{"topic":"a","partition":0,"offset":1},{"topic":"a","partition":0,"offset":2}]}',
         "Offset json file contains duplicate topic partitions: a-0"),
    ]
    for text, line in cases:
        bad.write_text(text)
        r = pk("pk-delete-records", *backend, "--offset-json-file", str(bad))
        assert (r.returncode, r.out, r.err) == (1, "", line + "\n"), text
    r = pk("pk-delete-records", *backend, "--offset-json-file", str(tmp_path / "nope.json"))
    assert (r.returncode, r.err) == (1, f"Unable to read file {tmp_path / 'nope.json'}\n")
    r = pk("pk-delete-records", *backend, "--command-config", "client.properties")
    assert (r.returncode, r.err) == (1, 'Missing required argument "[offset-json-file]"\n')
    r = pk("pk-delete-records")
    assert r.returncode == 1 and r.err.startswith(
        "This tool helps to delete records of the given partitions down to the specified offset.\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("bav") / "data")).start()
    yield b
    b.stop()


def test_broker_api_versions_on_pk_server(pk, server):
    from pk.commands.broker_api_versions import CLIENT_APIS
    from pk.engine.protocol.messages import SUPPORTED_VERSIONS, advertised

    r = pk("pk-broker-api-versions", "--bootstrap-server", server.bootstrap)
    assert (r.returncode, r.err) == (0, "")
    lines = r.out.splitlines()
    assert lines[0] == f"{server.bootstrap} (id: 0 rack: null isFenced: false) -> ("
    assert lines[-1] == ")"
    served = advertised(SUPPORTED_VERSIONS)
    expected = []
    for key in sorted(set(served) | {k for k, v in CLIENT_APIS.items() if v[3]}):
        name, _, latest, _ = CLIENT_APIS[key]
        if key in served:
            lo, hi = served[key]
            span = str(lo) if lo == hi else f"{lo} to {hi}"
            expected.append(f"\t{name}({key}): {span} [usable: {min(hi, latest)}]")
        else:
            expected.append(f"\t{name}({key}): UNSUPPORTED")
    assert lines[1:-1] == [e + "," for e in expected[:-1]] + expected[-1:]
    assert "\tProduce(0): 0 to 13 [usable: 13]," in lines


def test_broker_api_versions_errors(pk, tmp_path):
    cases = [
        ([], None),
        (["--command-config", "/x"], 'Missing required argument "[bootstrap-server]"'),
        (["--bootstrap-server"], "Option bootstrap-server requires an argument"),
        (["--bogus"], "bogus is not a recognized option"),
        (["--bootstrap-server", "bad"], "Invalid url in bootstrap.servers: bad"),
        (["--bootstrap-server", "127.0.0.1:1", "--command-config", str(tmp_path / "none")], str(tmp_path / "none")),
    ]
    for args, line in cases:
        r = pk("pk-broker-api-versions", *args)
        assert r.returncode == 1 and "Traceback" not in r.err, args
        if line is None:
            assert r.err.startswith("This tool helps to retrieve broker version information.\n")
        else:
            assert r.err == line + "\n", args
    from conftest import free_port

    port = free_port()
    r = pk("pk-broker-api-versions", "--bootstrap-server", f"127.0.0.1:{port}")
    assert (r.returncode, r.err) == (1, f"Request METADATA failed on brokers [127.0.0.1:{port} (id: -1 rack: null "
                                        "isFenced: false)]\n")


def test_client_api_table_is_kafkas():
    """CLIENT_APIS against the request schemas in Kafka 4.4's kafka-clients jar."""
    from pk.commands.broker_api_versions import CLIENT_APIS

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".kafka")
    jars = glob.glob(os.path.join(root, "4.*", "libs", "kafka-clients-4.*.jar"))
    if not jars:
        pytest.skip("Kafka 4.x's kafka-clients jar is not in .kafka/ (run scripts/kafka-jars)")
    table = {}
    with zipfile.ZipFile(sorted(jars)[-1]) as jar:
        for name in jar.namelist():
            if not re.fullmatch(r"common/message/\w+Request\.json", name):
                continue
            schema = json.loads(re.sub(r"^\s*//.*$", "", jar.read(name).decode(), flags=re.M))
            if schema.get("type") != "request" or schema["validVersions"] == "none":
                continue
            lo, _, hi = schema["validVersions"].partition("-")
            latest = int(hi or lo) - (1 if schema.get("latestVersionUnstable") else 0)
            client = any(listener in ("broker", "zkBroker") for listener in schema.get("listeners") or [])
            table[schema["apiKey"]] = (schema["name"][:-len("Request")], int(lo), latest, client)
    assert CLIENT_APIS == table


def test_log_dirs(pk, backend):
    t = backend.topic("ld")
    backend.create(t, 2)
    pk("pk-console-producer", *backend, "--topic", t, input="hello\n")
    r = pk("pk-log-dirs", *backend, "--describe", "--topic-list", t)
    assert r.returncode == 0, r.err
    lines = r.out.splitlines()
    assert lines[:2] == ["Querying brokers for log directories information",
                         "Received log directory information from brokers 0"]
    report = json.loads(lines[2])
    assert list(report) == ["brokers", "version"] and report["version"] == 1
    (broker,) = report["brokers"]
    (log_dir,) = broker["logDirs"]
    assert broker["broker"] == 0 and log_dir["error"] is None
    assert log_dir["logDir"] == os.path.abspath(backend.data_dir or log_dir["logDir"])
    sizes = {p["partition"]: p["size"] for p in log_dir["partitions"]}
    assert set(sizes) == {f"{t}-0", f"{t}-1"} and sum(sizes.values()) > 0
    assert all(list(p) == ["partition", "size", "offsetLag", "isFuture"] for p in log_dir["partitions"])
    r = pk("pk-log-dirs", *backend, "--describe", "--broker-list", "1,2")
    assert (r.returncode, r.out, r.err) == (
        1, "", "ERROR: The given brokers do not exist from --broker-list: 1,2. Current existent brokers: 0\n")
    r = pk("pk-log-dirs", *backend, "--topic-list", t)
    assert (r.returncode, r.err) == (1, 'Missing required argument "[describe]"\n')


def test_cluster_id(pk, backend):
    r = pk("pk-cluster", "cluster-id", *backend)
    assert r.returncode == 0 and r.err == ""
    assert r.out.startswith("Cluster ID: ") and len(r.out.strip().split(": ")[1]) == 22
    if backend.data_dir is not None:  # the server serves the engine's own cluster id
        assert pk("pk-cluster", "cluster-id", "--data-dir", backend.data_dir).out == r.out
    for args, line in [([], "kafka-cluster: error: too few arguments"),
                       (["cluster-id", "--bogus"], "kafka-cluster: error: unrecognized arguments: '--bogus'"),
                       (["cluster-id", "-b"], "kafka-cluster: error: argument --bootstrap-server/-b: expected one argument")]:
        r = pk("pk-cluster", *args)
        assert (r.returncode, r.out, r.err) == (1, "", line + "\n"), args


def test_features_describe(pk, backend):
    r = pk("pk-features", *backend, "describe")
    assert (r.returncode, r.err) == (0, "")
    lines = r.out.splitlines()
    assert [line.split()[1] for line in lines] == sorted(line.split()[1] for line in lines)
    assert ("Feature: metadata.version                          SupportedMinVersion: 3.3-IV3          "
            "SupportedMaxVersion: 4.4-IV2          FinalizedVersionLevel: 4.4-IV2          Epoch: 1") in lines
    for args, line in [([], "Command line error: too few arguments. Type --help for help."),
                       (["bogus"], "Command line error: invalid choice: 'bogus' (choose from 'describe', "
                                   "'upgrade', 'downgrade', 'disable', 'version-mapping', 'feature-dependencies'). "
                                   "Type --help for help.")]:
        r = pk("pk-features", *backend, *args)
        assert (r.returncode, r.out, r.err) == (1, "", line + "\n"), args
