"""pk-reassign-partitions against Kafka 4.4's kafka-reassign-partitions (the oracle), on the
session's Kafka 4.4 broker and on a pk-server-start, and Kafka's tool against pk-server-start.

Kafka's tool prints everything on stdout and ends a failure with "Error: <message>" and a stack
trace (or a message of its own); pk prints the same lines, its failure line on stderr and no
trace. So Kafka's stdout up to its "Error:" line is compared with pk's stdout + stderr. Log
directory paths are the brokers' own and are replaced by DIR. The reassignment APIs are also
compared frame by frame."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import ProtocolClient, tool_path
from pk.engine.protocol import ApiKey

TOPIC, OTHER = "ora-t", "ora-u"


def _kafka_lines(result) -> tuple[int, str]:
    """Kafka's stdout up to and including its "Error:" line (the stack trace after it dropped);
    a usage error's first stderr line."""
    lines = []
    for line in result.out.split("\n"):
        lines.append(line)
        if line.startswith("Error: "):
            break
    text = "\n".join(lines).rstrip("\n")
    if result.err.strip() and not result.err.startswith("["):  # (a "[date] WARN" log line is no output)
        text += "\n[ERR]" + result.err_first
    return result.returncode, text


def _pk_lines(args) -> tuple[int, str]:
    proc = subprocess.run([tool_path("pk-reassign-partitions"), *args], capture_output=True, timeout=120)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    if err and not out:
        return proc.returncode, ("" if err.startswith("Error: ") else "\n[ERR]") + err.split("\n")[0]
    return proc.returncode, (out + err).rstrip("\n")


def _files(tmp_path, log_dir: str, tag: str) -> dict[str, str]:
    t, u = TOPIC, OTHER
    contents = {
        "plan": {"version": 1, "partitions": [{"topic": t, "partition": 2, "replicas": [0]},
                                              {"topic": t, "partition": 0, "replicas": [0], "log_dirs": ["any"]},
                                              {"topic": t, "partition": 1, "replicas": [0]}]},
        "dirs": {"version": 1, "partitions": [{"topic": u, "partition": 1, "replicas": [0], "log_dirs": [log_dir]},
                                              {"topic": u, "partition": 0, "replicas": [0], "log_dirs": ["/elsewhere"]}]},
        "dir1": {"version": 1, "partitions": [{"topic": u, "partition": 1, "replicas": [0], "log_dirs": [log_dir]}]},
        "topics": {"topics": [{"topic": t}, {"topic": u}], "version": 1},
        "tdup": {"topics": [{"topic": t}, {"topic": t}]},
        "tnone": {"topics": [{"topic": "ora-none"}]},
        "tempty": {"version": 1},
        "tv3": {"topics": [], "version": 3},
        "obj": {},
        "arr": [],
        "noparts": {"version": 1, "partitions": []},
        "norepl": {"partitions": [{"topic": t, "partition": 0, "replicas": []}]},
        "dupparts": {"partitions": [{"topic": t, "partition": 0, "replicas": [0]},
                                    {"topic": t, "partition": 0, "replicas": [0]}]},
        "duprepl": {"partitions": [{"topic": t, "partition": 0, "replicas": [0, 0]},
                                   {"topic": t, "partition": 1, "replicas": [0, 0, 1, 1]}]},
        "broker5": {"partitions": [{"topic": t, "partition": 0, "replicas": [5]}]},
        "unktopic": {"partitions": [{"topic": "ora-none", "partition": 0, "replicas": [0]}]},
        "unkpart": {"partitions": [{"topic": t, "partition": 7, "replicas": [0]}, {"topic": t, "partition": 8, "replicas": [0]}]},
        "p3": {"partitions": [{"topic": t, "partition": 3, "replicas": [0]}]},
        "v2": {"version": 2, "partitions": [{"topic": t, "partition": 0, "replicas": [0]}]},
        "sizes": {"partitions": [{"topic": t, "partition": 0, "replicas": [0], "log_dirs": ["any", "any"]}]},
        "notopic": {"partitions": [{"partition": 0, "replicas": [0]}]},
        "badpart": {"partitions": [{"topic": t, "partition": "x", "replicas": [0]}]},
        "strrepl": {"partitions": [{"topic": t, "partition": 0, "replicas": "0"}]},
        "objparts": {"partitions": {"a": 1}},
        "bigint": {"partitions": [{"topic": t, "partition": 0, "replicas": [0, 2147483648]}]},
        "strversion": {"version": "1", "partitions": []},
        "empty": "",
        "blank": "\n",
        "bad": "nojson",
        "trunc": '{"version":1,"partitions":[{"topic":"x","partition":1,"replicas":[0]}',
    }
    paths = {}
    for name, content in contents.items():
        path = tmp_path / f"{tag}-{name}.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        paths[name] = str(path)
    return paths


def _scenario(bootstrap: str, f: dict[str, str]) -> list[list[str]]:
    """Every call, in order: the state the later ones see is what the earlier ones left."""
    base = ["--bootstrap-server", bootstrap]
    plan = ["--reassignment-json-file", f["plan"]]
    calls = [["--generate", "--topics-to-move-json-file", f["topics"], "--broker-list", b]
             for b in ("0", "0,5", "0,", "+0", "5", "0,0", "x", "", " 0")]
    calls += [["--generate", "--topics-to-move-json-file", f["topics"], "--broker-list", "0", "--disable-rack-aware"]]
    calls += [["--generate", "--topics-to-move-json-file", f[n], "--broker-list", "0"]
              for n in ("tdup", "tnone", "tempty", "tv3", "empty", "blank", "bad")]
    calls += [["--execute", *plan], ["--list"], ["--verify", *plan], ["--verify", "--preserve-throttles", *plan],
              ["--cancel", *plan], ["--cancel", "--preserve-throttles", *plan],
              ["--execute", *plan, "--additional", "--timeout", "5", "--disallow-replication-factor-change"],
              ["--execute", *plan, "--throttle", "x"], ["--execute", *plan, "--timeout", "1x"],
              ["--execute", "--reassignment-json-file", f["dir1"]], ["--verify", "--reassignment-json-file", f["dir1"]],
              ["--verify", "--reassignment-json-file", f["dirs"]], ["--cancel", "--reassignment-json-file", f["dirs"]],
              ["--execute", "--reassignment-json-file", f["dirs"], "--timeout", "300"]]
    calls += [["--execute", "--reassignment-json-file", f[n]]
              for n in ("obj", "arr", "noparts", "norepl", "dupparts", "duprepl", "broker5", "unktopic", "unkpart",
                        "v2", "sizes", "notopic", "badpart", "strrepl", "objparts", "bigint", "strversion", "empty",
                        "blank", "bad", "trunc")]
    calls += [["--verify", "--reassignment-json-file", f[n]] for n in ("obj", "unktopic", "unkpart", "p3", "v2")]
    calls += [["--cancel", "--reassignment-json-file", f[n]] for n in ("obj", "unktopic", "unkpart", "empty", "blank")]
    calls += [["--execute", "--reassignment-json-file", f["plan"] + ".missing"], ["--list", "--verify"],
              ["--generate"], ["--list", "--throttle", "5"], ["--execute"], ["--verify", *plan, "--throttle", "5"]]
    return [base + c for c in calls] + [["--list"], base + ["--list", "--bootstrap-controller", bootstrap]]


def _log_dir_of(kafka_tools, bootstrap: str) -> str:
    r = kafka_tools("kafka-log-dirs", "--bootstrap-server", bootstrap, "--describe", "--topic-list", "none")
    return json.loads(r.out.strip().splitlines()[-1])["brokers"][0]["logDirs"][0]["logDir"]


def test_reassign_partitions_matches(kafka, kafka_tools, pk_server, tmp_path):
    runs = {}
    for tag, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
        for topic, count in ((TOPIC, "3"), (OTHER, "2")):
            r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists",
                            "--topic", topic, "--partitions", count)
            assert r.returncode == 0, r.err
        log_dir = _log_dir_of(kafka_tools, bootstrap)
        f = _files(tmp_path, log_dir, tag)
        calls = _scenario(bootstrap, f)
        kafka_side = [_kafka_lines(kafka_tools("kafka-reassign-partitions", *args)) for args in calls] \
            if tag == "kafka" else None
        pk_side = [_pk_lines(args) for args in calls]
        runs[tag] = (calls, kafka_side, pk_side, log_dir, bootstrap, tmp_path / tag)

    def norm(text, run):
        calls, _k, _p, log_dir, bootstrap, _ = run
        return text.replace(log_dir, "DIR").replace(bootstrap, "B").replace("/pk-", "/").replace("/kafka-", "/")

    k_calls, kafka_side, pk_on_kafka, *_ = runs["kafka"]
    pk_on_pk = runs["pk"][2]
    for i, args in enumerate(k_calls):
        expected = (kafka_side[i][0], norm(kafka_side[i][1], runs["kafka"]))
        # pk's tool on Kafka's broker, and on pk-server-start, prints what Kafka's tool prints on Kafka's
        assert (pk_on_kafka[i][0], norm(pk_on_kafka[i][1], runs["kafka"])) == expected, args
        assert (pk_on_pk[i][0], norm(pk_on_pk[i][1], runs["pk"])) == expected, args


def test_throttles_are_set_and_cleared_as_kafka_does(kafka, kafka_tools, tmp_path):
    """On Kafka's broker (pk's keeps the rates but does not throttle): --throttle sets the rates and
    the throttled replicas, --verify clears them, as Kafka's tool does."""
    b = kafka.bootstrap
    r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--if-not-exists", "--topic", TOPIC,
                    "--partitions", "3")
    assert r.returncode == 0, r.err
    f = _files(tmp_path, "-", "thr")
    execute = ["--bootstrap-server", b, "--execute", "--reassignment-json-file", f["plan"], "--throttle", "1000",
               "--replica-alter-log-dirs-throttle", "2000"]
    verify = ["--bootstrap-server", b, "--verify", "--reassignment-json-file", f["plan"]]

    def configs():
        return [kafka_tools("kafka-configs", "--bootstrap-server", b, "--describe", "--entity-type", kind,
                            "--entity-name", name).out for kind, name in (("brokers", "0"), ("topics", TOPIC))]

    for run in ("kafka", "pk"):
        if run == "kafka":
            results = [_kafka_lines(kafka_tools("kafka-reassign-partitions", *execute))]
            set_configs = configs()
            results.append(_kafka_lines(kafka_tools("kafka-reassign-partitions", *verify)))
        else:
            results = [_pk_lines(execute)]
            set_configs = configs()
            results.append(_pk_lines(verify))
        if run == "kafka":
            expected = (results, set_configs, configs())
            assert "leader.replication.throttled.rate=1000" in set_configs[0]
            assert "leader.replication.throttled.replicas=0:0,1:0,2:0" in set_configs[1]
        else:
            assert (results, set_configs, configs()) == expected


def test_kafka_tool_against_pk_server(kafka_tools, pk_server, tmp_path):
    """Kafka's own tool is a client of pk-server-start's reassignment APIs."""
    b = pk_server.bootstrap
    r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--if-not-exists", "--topic", TOPIC,
                    "--partitions", "3")
    assert r.returncode == 0, r.err
    d = os.path.abspath(pk_server.data_dir)
    f = _files(tmp_path, d, "java")
    for args in (["--execute", "--reassignment-json-file", f["plan"]], ["--list"],
                 ["--verify", "--reassignment-json-file", f["plan"]],
                 ["--cancel", "--reassignment-json-file", f["plan"]],
                 ["--execute", "--reassignment-json-file", f["broker5"]],
                 ["--generate", "--topics-to-move-json-file", f["topics"], "--broker-list", "0"]):
        k = kafka_tools("kafka-reassign-partitions", "--bootstrap-server", b, *args)
        assert _kafka_lines(k) == _pk_lines(["--bootstrap-server", b, *args]), args


def _alter(c, version, parts, allow=True):
    return c.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, version, {
        "timeout_ms": 30000, "allow_replication_factor_change": allow,
        "topics": [{"name": t, "partitions": [{"partition_index": p, "replicas": r}]} for t, p, r in parts]})


def test_reassignment_frames_match(kafka, kafka_tools, pk_server):
    answers = {}
    for name, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists", "--topic",
                        TOPIC, "--partitions", "3")
        assert r.returncode == 0, r.err
        c = ProtocolClient(bootstrap)
        got = []
        for version in (0, 1):
            for parts in ([(TOPIC, 0, [0])], [(TOPIC, 1, [5])], [(TOPIC, 1, [0, 5])], [(TOPIC, 1, [0, 0])],
                          [(TOPIC, 1, [])], [(TOPIC, 9, [0])], [("ora-none", 0, [0])], [(TOPIC, 2, None)],
                          [("ora-none", 0, None)], [(TOPIC, 9, None)], [(TOPIC, -1, [0])], [("bad name!", 0, [0])],
                          [(TOPIC, 0, [-1]), (TOPIC, 1, [0])]):
                got.append(_alter(c, version, parts, allow=version == 0))
        for topics in (None, [], [{"name": TOPIC, "partition_indexes": [0, 9]}],
                       [{"name": "ora-none", "partition_indexes": [0]}]):
            got.append(c.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 30000, "topics": topics}))
        log_dir = _log_dir_of(kafka_tools, bootstrap)
        for version in (1, 2):
            for path, topic, partitions in ((log_dir, TOPIC, [0, 1]), (log_dir + "/", TOPIC, [0]),
                                            ("/nonexistent", TOPIC, [0]), (log_dir, "ora-none", [0]),
                                            (log_dir, TOPIC, [9]), ("relative", TOPIC, [0]), (log_dir, TOPIC, [-1])):
                got.append(c.call(ApiKey.ALTER_REPLICA_LOG_DIRS, version, {"dirs": [
                    {"path": path, "topics": [{"name": topic, "partitions": partitions}]}]}))
        answers[name] = got
    assert answers["pk"] == answers["kafka"]
