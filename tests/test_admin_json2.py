"""pk-only --output json of pk-configs, pk-acls, pk-broker-api-versions and pk-transactions, and
pk-consumer-groups --describe --watch, on the bundled engine (where the tool works there), a
pk-server-start and a real Kafka 4.4 broker.

Every JSON check renders the documents back into the facts the same tool's text shows (the
text being Kafka's, checked byte for byte by the oracle tests) and compares them, so the two
outputs cannot drift apart. The watch runs against a real producer and a real consumer
committing offsets between its intervals; its checks wait for states, never for time."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import Backend, BrokerProcess, Runner, tool_path

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS"}


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    """One pk-server-start for the module, with an authorizer (ANONYMOUS is a super user) so
    that pk-acls works on it too."""
    b = BrokerProcess(str(tmp_path_factory.mktemp("adminjson2") / "data"), dict(AUTHORIZER)).start()
    try:
        yield b
    finally:
        b.stop()


def _target(request, tmp_path, name: str) -> Backend:
    if name == "engine":
        return Backend("engine", [], str(tmp_path / "data"))
    if name == "pk":
        server = request.getfixturevalue("pk_server")
        return Backend("pk", ["--bootstrap-server", server.bootstrap], server.data_dir, server.bootstrap)
    broker = request.getfixturevalue("kafka_secure" if name == "kafka_secure" else "kafka")
    return Backend(name, ["--bootstrap-server", broker.bootstrap], None, broker.bootstrap)


@pytest.fixture(params=["engine", "pk", "kafka"])
def anywhere(request, tmp_path):
    b = _target(request, tmp_path, request.param)
    yield b
    b.close()


@pytest.fixture(params=["pk", "kafka"])
def cluster(request, tmp_path):
    b = _target(request, tmp_path, request.param)
    yield b
    b.close()


def run(target: Backend, tool: str, *args: str, timeout: float = 60):
    proc = Runner(target.data_dir or "/nonexistent")(tool, *target, *args, timeout=timeout)
    assert proc.returncode == 0, (proc.out, proc.err)
    assert proc.err == "" or "Traceback" not in proc.err, proc.err
    return proc


def documents(out: str) -> list[dict]:
    lines = out.splitlines()
    assert all(line.startswith("{") for line in lines), out
    return [json.loads(line) for line in lines]


def java_null(value) -> str:
    return "null" if value is None else str(value)


# --------------------------------------------------------------------------- pk-configs
def configs_text(docs: list[dict]) -> list[str]:
    """What Kafka's text says, rebuilt from the JSON documents."""
    out = []
    for d in docs:
        if d["kind"] == "configs":
            singular = d["entityType"][:-1]
            if not d["exists"]:
                out.append(f"The {singular} '{d['entityName']}' doesn't exist and doesn't have dynamic config.")
                continue
            if d["default"]:
                out.append(f"Default configs for {d['entityType']} in the cluster are:")
            else:
                out.append(f"{'All' if d['all'] else 'Dynamic'} configs for {singular} {d['entityName']} are:")
            for c in d["configs"]:
                synonyms = ", ".join(f"{s['source']}:{s['name']}={java_null(s['value'])}" for s in c["synonyms"])
                out.append(f"  {c['name']}={java_null(c['value'])} sensitive={str(c['sensitive']).lower()} "
                           f"synonyms={{{synonyms}}}")
        elif d["kind"] == "quotas":
            words = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
            who = ", ".join(f"{words[t]} '{n}'" if n is not None else f"the default {words[t]}"
                            for t, n in d["entity"].items())
            out.append(f"Quota configs for {who} are " + ", ".join(f"{k}={v!r}" for k, v in d["quotas"].items()))
        else:
            creds = ", ".join(f"{c['mechanism']}=iterations={c['iterations']}" for c in d["credentials"])
            out.append(f"SCRAM credential configs for user-principal '{d['user']}' are {creds}")
    return out


def both_configs(target: Backend, *args: str) -> tuple[list[str], list[dict]]:
    text = run(target, "pk-configs", "--describe", *args).out.splitlines()
    docs = documents(run(target, "pk-configs", "--describe", *args, "--output", "json").out)
    assert configs_text(docs) == text
    return text, docs


def test_configs_topic_json_is_the_texts_facts(anywhere):
    t = anywhere.topic("cfgjson")
    anywhere.create(t, 1, "retention.ms=86400000", "max.message.bytes=2000")
    _, docs = both_configs(anywhere, "--topic", t)
    [doc] = docs
    assert list(doc) == ["kind", "entityType", "entityName", "default", "exists", "all", "configs"]
    assert {c["name"]: c["value"] for c in doc["configs"]} == {"max.message.bytes": "2000",
                                                              "retention.ms": "86400000"}
    assert {c["source"] for c in doc["configs"]} == {"DYNAMIC_TOPIC_CONFIG"}
    _, docs = both_configs(anywhere, "--topic", t, "--all")
    [doc] = docs
    assert doc["all"] is True and len(doc["configs"]) > 20
    sources = {c["name"]: c["source"] for c in doc["configs"]}
    assert sources["retention.ms"] == "DYNAMIC_TOPIC_CONFIG" and sources["cleanup.policy"] != "DYNAMIC_TOPIC_CONFIG"
    _, docs = both_configs(anywhere, "--entity-type", "topics", "--entity-name", anywhere.topic("cfg-none"))
    assert [d["exists"] for d in docs] == [False]


def test_configs_brokers_json_is_the_texts_facts(anywhere):
    _, docs = both_configs(anywhere, "--entity-type", "brokers")
    assert docs[-1]["default"] is True and docs[-1]["entityName"] is None
    assert all(d["entityName"].isdigit() for d in docs[:-1]) and docs[:-1]


def wait_lines(target: Backend, args: list[str], count: int) -> None:
    """Until --describe's text has `count` lines (an altered user's configs landed)."""
    deadline = time.monotonic() + 30
    while len(run(target, "pk-configs", "--describe", *args).out.splitlines()) < count:
        assert time.monotonic() < deadline, "the altered configs were never described"
        time.sleep(0.2)


def test_configs_scram_json(tmp_path, request):
    """SCRAM credentials: Kafka 4.4 only (pk-server-start keeps them, but describing users there
    fails first on DescribeClientQuotas, which it does not serve)."""
    cluster = _target(request, tmp_path, "kafka")
    user = cluster.topic("suser")
    for credential in ("SCRAM-SHA-256=[iterations=8192,password=pw]", "SCRAM-SHA-512=[password=pw]"):
        run(cluster, "pk-configs", "--alter", "--entity-type", "users", "--entity-name", user,
            "--add-config", credential)
    args = ["--entity-type", "users", "--entity-name", user]
    deadline = time.monotonic() + 30
    while "SCRAM-SHA-512" not in run(cluster, "pk-configs", "--describe", *args).out:
        assert time.monotonic() < deadline, "the credentials were never described"
        time.sleep(0.2)
    _, docs = both_configs(cluster, *args)
    [doc] = [d for d in docs if d["kind"] == "scram"]
    assert list(doc) == ["kind", "user", "credentials"] and doc["user"] == user
    assert sorted((c["mechanism"], c["iterations"]) for c in doc["credentials"]) == [
        ("SCRAM-SHA-256", 8192), ("SCRAM-SHA-512", 4096)]


def test_configs_quotas_json(tmp_path, request):
    """Client quotas: Kafka 4.4 only (pk-server-start does not serve DescribeClientQuotas)."""
    kafka = _target(request, tmp_path, "kafka")
    user, client = kafka.topic("quser"), kafka.topic("qclient")
    run(kafka, "pk-configs", "--alter", "--entity-type", "users", "--entity-name", user,
        "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
    run(kafka, "pk-configs", "--alter", "--entity-type", "users", "--entity-name", user, "--entity-type",
        "clients", "--entity-default", "--add-config", "request_percentage=50")
    wait_lines(kafka, ["--entity-type", "users", "--entity-name", user], 1)
    _, docs = both_configs(kafka, "--entity-type", "users", "--entity-name", user)
    [doc] = docs
    assert doc == {"kind": "quotas", "entity": {"user": user},
                   "quotas": doc["quotas"]} and doc["quotas"] == {"consumer_byte_rate": 2048.0,
                                                                  "producer_byte_rate": 1024.0}
    args = ["--entity-type", "users", "--entity-name", user, "--entity-type", "clients", "--entity-default"]
    wait_lines(kafka, args, 1)
    _, docs = both_configs(kafka, *args)
    assert [(d["entity"], d["quotas"]) for d in docs] == [({"user": user, "client-id": None},
                                                           {"request_percentage": 50.0})]


def test_configs_json_refusals(pk):
    proc = pk("pk-configs", "--alter", "--topic", "t", "--add-config", "a=b", "--output", "json")
    assert (proc.returncode, proc.out, proc.err) == (1, "", "--output json applies to --describe only\n")
    proc = pk("pk-configs", "--describe", "--topic", "t", "--output", "yaml")
    assert proc.returncode != 0 and "Traceback" not in proc.err and proc.out == ""


# --------------------------------------------------------------------------- pk-acls
_RESOURCE = re.compile(r"^Current ACLs for resource `ResourcePattern\(resourceType=(\w+), name=(.*), "
                       r"patternType=(\w+)\)`:$")
_ENTRY = re.compile(r"^\t\(principal=(.*), host=(.*), operation=(\w+), permissionType=(\w+)\)$")


def acl_text_bindings(text: str) -> list[tuple]:
    out, resource = [], None
    for line in text.splitlines():
        if (m := _RESOURCE.match(line)) is not None:
            resource = m.groups()
        elif (m := _ENTRY.match(line)) is not None:
            out.append(resource + m.groups())
    return out


def acl_json_bindings(docs: list[dict]) -> list[tuple]:
    return [(d["resourceType"], d["resourceName"], d["patternType"], d["principal"], d["host"], d["operation"],
             d["permissionType"]) for d in docs]


@pytest.fixture(params=["engine", "pk", "kafka_secure"])
def acl_target(request, tmp_path):
    b = _target(request, tmp_path, request.param)
    yield b
    b.close()


def test_acls_list_json_is_the_texts_facts(acl_target):
    t, g = acl_target.topic("acltopic"), acl_target.topic("aclgroup")
    run(acl_target, "pk-acls", "--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob",
        "--operation", "Read", "--operation", "Describe", "--topic", t)
    run(acl_target, "pk-acls", "--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9",
        "--operation", "Read", "--group", g)
    run(acl_target, "pk-acls", "--add", "--allow-principal", "User:alice", "--operation", "Write",
        "--resource-pattern-type", "prefixed", "--topic", t)
    expected = {("TOPIC", t, "LITERAL", f"User:{who}", "*", op, "ALLOW")
                for who in ("alice", "bob") for op in ("READ", "DESCRIBE")}
    expected |= {("GROUP", g, "LITERAL", "User:mallory", "10.0.0.9", "READ", "DENY"),
                 ("TOPIC", t, "PREFIXED", "User:alice", "*", "WRITE", "ALLOW")}
    scope = ["--topic", t, "--group", g, "--resource-pattern-type", "any"]

    def both(*more):
        text = acl_text_bindings(run(acl_target, "pk-acls", "--list", *scope, *more).out)
        docs = documents(run(acl_target, "pk-acls", "--list", *scope, *more, "--output", "json").out)
        assert sorted(acl_json_bindings(docs)) == sorted(text)
        return docs

    deadline = time.monotonic() + 30  # a cluster's authorizer applies new ACLs shortly after
    while set(acl_json_bindings(both())) != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    docs = both()
    assert set(acl_json_bindings(docs)) == expected
    assert list(docs[0]) == ["resourceType", "resourceName", "patternType", "principal", "host", "operation",
                             "permissionType"]
    docs = both("--principal", "User:alice")
    assert {d["principal"] for d in docs} == {"User:alice"} and len(docs) == 3


def test_acls_json_only_lists(pk):
    proc = pk("pk-acls", "--add", "--allow-principal", "User:a", "--topic", "t", "--output", "json")
    assert (proc.returncode, proc.out, proc.err) == (1, "", "--output json applies to --list only\n")


# --------------------------------------------------------------------------- pk-broker-api-versions
def api_versions_text(docs: list[dict]) -> str:
    out = ""
    for d in docs:
        b = d["broker"]
        head = (f"{b['host']}:{b['port']} (id: {b['id']} rack: {java_null(b['rack'])} "
                f"isFenced: {str(b['isFenced']).lower()}) -> ")
        if d["error"] is not None:
            out += head + f"ERROR: {d['error']}\n"
            continue
        lines = []
        for a in d["apis"]:
            name = a["name"] or "UNKNOWN"
            if a["status"] == "unsupported":
                lines.append(f"{name}({a['key']}): UNSUPPORTED")
                continue
            span = str(a["minVersion"]) if a["minVersion"] == a["maxVersion"] else \
                f"{a['minVersion']} to {a['maxVersion']}"
            tail = {"usable": f" [usable: {a['usableVersion']}]", "node_too_new": " [unusable: node too new]",
                    "node_too_old": " [unusable: node too old]", "unknown": ""}[a["status"]]
            lines.append(f"{name}({a['key']}): {span}{tail}")
        out += head + "(\n\t" + ",\n\t".join(lines) + "\n)\n"
    return out


def test_broker_api_versions_json_is_the_texts_facts(cluster):
    text = run(cluster, "pk-broker-api-versions").out
    docs = documents(run(cluster, "pk-broker-api-versions", "--output", "json").out)
    assert api_versions_text(docs) == text
    [doc] = docs
    produce = next(a for a in doc["apis"] if a["key"] == 0)
    assert produce["name"] == "Produce" and isinstance(produce["usableVersion"], int)
    assert [a["key"] for a in doc["apis"]] == sorted(a["key"] for a in doc["apis"])


# --------------------------------------------------------------------------- pk-transactions
def txn_rows(out: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("\t")[:-1]] for line in out.splitlines()][1:]


def txn_cells(doc: dict, keys: list[str]) -> list[str]:
    def cell(v):
        if v is None:
            return "None"
        if isinstance(v, list):
            return ",".join(f"{p['topic']}-{p['partition']}" for p in v)
        return str(v)
    return [cell(doc[k]) for k in keys]


def test_transactions_json_is_the_texts_facts(cluster):
    from confluent_kafka import Producer

    t = cluster.topic("txjson")
    cluster.create(t, 2)
    tid = cluster.topic("txjson-id")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid, "log_level": 0})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(t, b"v", partition=1)
    assert producer.flush(30) == 0
    try:
        def both(*args):
            text = txn_rows(run(cluster, "pk-transactions", *args).out)
            docs = documents(run(cluster, "pk-transactions", *args, "--output", "json").out)
            return text, docs

        text, docs = both("list", "--transactional-id-pattern", re.escape(tid))
        assert [txn_cells(d, ["transactionalId", "coordinator", "producerId", "transactionState"])
                for d in docs] == text
        assert [d["transactionState"] for d in docs] == ["Ongoing"] and isinstance(docs[0]["producerId"], int)
        text, docs = both("describe", "--transactional-id", tid)
        keys = ["coordinatorId", "transactionalId", "producerId", "producerEpoch", "transactionState",
                "transactionTimeoutMs", "currentTransactionStartTimeMs", "transactionDurationMs", "topicPartitions"]
        [row], [doc] = text, docs
        cells = txn_cells(doc, keys)
        assert cells[:7] + cells[8:] == row[:7] + row[8:]  # the duration moves between the two calls
        assert doc["transactionDurationMs"] >= 0 and doc["topicPartitions"] == [{"topic": t, "partition": 1}]
        text, docs = both("describe-producers", "--topic", t, "--partition", "1")
        keys = ["producerId", "producerEpoch", "latestCoordinatorEpoch", "lastSequence", "lastTimestamp",
                "currentTransactionStartOffset"]
        assert [txn_cells(d, keys) for d in docs] == text and docs[0]["currentTransactionStartOffset"] == 0
        # an open transaction its coordinator knows is not hanging, however old
        text, docs = both("find-hanging", "--topic", t, "--max-transaction-timeout", "0")
        assert (text, docs) == ([], [])
        # --output before the command works too
        rc = run(cluster, "pk-transactions", "--output", "json", "list", "--transactional-id-pattern", re.escape(tid))
        assert [d["transactionalId"] for d in documents(rc.out)] == [tid]
    finally:
        producer.abort_transaction(30)


def test_transactions_output_refusal(pk):
    proc = pk("pk-transactions", "--bootstrap-server", "x:1", "--output", "xml", "list")
    assert (proc.returncode, proc.out, proc.err) == (
        1, "", "kafka-transactions.sh: error: argument --output: invalid choice: 'xml' (choose from 'text', "
               "'json')\n")


# --------------------------------------------------------------------------- --watch
class Watch:
    """pk-consumer-groups --describe --watch running; its output read as it comes."""

    def __init__(self, target: Backend, group: str, seconds: str, terminal: bool):
        args = [tool_path("pk-consumer-groups"), *target, "--describe", "--group", group, "--watch", seconds]
        env = {**os.environ, "PK_DATA_DIR": target.data_dir or "/nonexistent"}
        self.master = None
        if terminal:
            self.master, slave = os.openpty()
            self.proc = subprocess.Popen(args, stdout=slave, stderr=subprocess.PIPE, env=env)
            os.close(slave)
        else:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.data = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        fd = self.master if self.master is not None else self.proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty's other end closed
                return
            if not chunk:
                return
            with self._lock:
                self.data += chunk

    def text(self) -> str:
        with self._lock:
            return self.data.decode("utf-8", errors="replace")

    def wait_for(self, predicate, timeout: float = 90.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, (self.proc.returncode, self.text(), self.proc.stderr.read())
            value = predicate(self.text())
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"not seen in time: {self.text()[-3000:]}")

    def interrupt(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(30)
        self._reader.join(10)
        if self.master is not None:
            os.close(self.master)
        return code, self.proc.stderr.read().decode()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def plain_intervals(text: str) -> list[list[list[str]]]:
    """The plain output's rows (whitespace-split) grouped by interval (their TIME), whole
    intervals only (each ends with its TOTAL row)."""
    lines = text.splitlines()
    if "\n" not in text:
        return []  # not even the header yet
    assert lines[0].split() == ["TIME", "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET",
                                          "LAG", "LAG-CHANGE", "CONSUME-RATE", "PRODUCE-RATE", "ETA", "TREND"]
    intervals, current = [], []
    for line in lines[1:] if text.endswith("\n") else lines[1:-1]:
        row = line.split()
        current.append(row)
        if row[2] == "TOTAL":
            intervals.append(current)
            current = []
    return intervals


def produce_lines(target: Backend, topic: str, count: int, start: int) -> None:
    lines = "".join(f"v{i}\n" for i in range(start, start + count))
    proc = Runner(target.data_dir or "/nonexistent")("pk-console-producer", *target, "--topic", topic,
                                                     input=lines)
    assert proc.returncode == 0, proc.err


def consume_some(target: Backend, topic: str, group: str, count: int) -> None:
    """A real consumer of the group reads `count` records and commits them as it leaves."""
    proc = Runner(target.data_dir or "/nonexistent")(
        "pk-console-consumer", *target, "--topic", topic, "--group", group, "--from-beginning",
        "--max-messages", str(count), "--timeout-ms", "30000", timeout=120)
    assert proc.returncode == 0, proc.err
    assert len(proc.out.splitlines()) == count, proc.out


def committed_lag(target: Backend, group: str, topic: str) -> dict[int, tuple[str, str, str]]:
    """(CURRENT-OFFSET, LOG-END-OFFSET, LAG) per partition, as --describe's text shows them."""
    proc = run(target, "pk-consumer-groups", "--describe", "--group", group)
    rows = [line.split() for line in proc.out.splitlines() if line.strip()][1:]
    return {int(r[2]): (r[3], r[4], r[5]) for r in rows if r[1] == topic}


def test_watch_plain_lines_follow_producer_and_consumer(anywhere):
    t, g = anywhere.topic("watch"), anywhere.topic("watchgroup")
    anywhere.create(t, 1)
    produce_lines(anywhere, t, 10, 0)
    consume_some(anywhere, t, g, 4)  # committed 4 of 10: lag 6
    watch = Watch(anywhere, g, "0.3", terminal=False)
    try:
        def total_lag(n):
            return lambda text: any(i[-1][6] == str(n) for i in plain_intervals(text))

        watch.wait_for(total_lag(6))
        produce_lines(anywhere, t, 10, 10)  # the log grows to 20: lag 16
        watch.wait_for(total_lag(16))
        consume_some(anywhere, t, g, 12)  # from 4 to 16: lag 4
        watch.wait_for(total_lag(4))
        # the next interval after the commit: rows whose facts --describe's text shows too
        seen = len(plain_intervals(watch.text()))
        watch.wait_for(lambda text: len(plain_intervals(text)) > seen + 1)
        code, err = watch.interrupt()
        assert (code, err) == (0, "")
    finally:
        watch.stop()
    text = watch.text()
    assert "\x1b" not in text
    intervals = plain_intervals(text)
    last = intervals[-1]
    assert {int(r[3]): (r[4], r[5], r[6]) for r in last if r[2] == t} == committed_lag(anywhere, g, t) == {
        0: ("16", "20", "4")}
    previous = None
    consumed = False
    for rows in intervals:
        [row, total] = rows
        assert total[2:4] == ["TOTAL", "-"] and total[6] == row[6]
        if previous is not None:  # each LAG-CHANGE is the lag's change since the interval before
            assert int(row[7]) == int(row[6]) - int(previous[6])
            rate = float(row[8].removesuffix("/s"))
            assert (rate > 0) == (int(row[4]) > int(previous[4]))
            if rate > 0:
                consumed = True
            gain = rate - float(row[9].removesuffix("/s"))
            if row[6] == "0":
                assert row[10] == "0s"
            elif gain <= 0:
                assert row[10] == "∞"
            else:
                assert re.fullmatch(r"\d+s|\d+m\d\ds|\d+h\d\dm|\d+d\d\dh", row[10]), row
        else:
            assert row[7:11] == ["-", "-", "-", "-"]
        assert set(total[11]) <= set("▁▂▃▄▅▆▇█")
        previous = row
    assert consumed


def test_watch_all_groups(tmp_path):
    """--all-groups: every group's partitions and TOTAL row, each interval (the bundled engine)."""
    engine = Backend("engine", [], str(tmp_path / "data"))
    engine.create("allg", 1)
    produce_lines(engine, "allg", 5, 0)
    consume_some(engine, "allg", "g-one", 1)
    consume_some(engine, "allg", "g-two", 3)
    proc = subprocess.Popen([tool_path("pk-consumer-groups"), "--describe", "--all-groups", "--watch", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PK_DATA_DIR": engine.data_dir})
    try:
        header = proc.stdout.readline().decode().split()
        assert header[:3] == ["TIME", "GROUP", "TOPIC"]
        rows = [proc.stdout.readline().decode().split() for _ in range(8)]  # two whole intervals
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0 and proc.stderr.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for interval in (rows[:4], rows[4:]):
        assert [(r[1], r[2], r[6]) for r in interval] == [("g-one", "allg", "4"), ("g-one", "TOTAL", "4"),
                                                          ("g-two", "allg", "2"), ("g-two", "TOTAL", "2")]


def test_watch_redraws_a_terminal(cluster):
    t, g = cluster.topic("watchtty"), cluster.topic("watchttygroup")
    cluster.create(t, 2)
    produce_lines(cluster, t, 6, 0)
    consume_some(cluster, t, g, 2)
    watch = Watch(cluster, g, "0.3", terminal=True)
    try:
        watch.wait_for(lambda text: text.count("\x1b[H\x1b[2J") >= 3 and text.rstrip().endswith(
            tuple("▁▂▃▄▅▆▇█")))
        code, err = watch.interrupt()
        assert (code, err) == (0, "")
    finally:
        watch.stop()
    screens = watch.text().split("\x1b[H\x1b[2J")[1:]
    last = [line.split() for line in screens[-2].splitlines() if line.strip()]
    assert last[0][:2] == ["Every", "0.3s:"] and last[1][0] == "GROUP"
    facts = committed_lag(cluster, g, t)
    assert {int(r[2]): (r[3], r[4], r[5]) for r in last[2:] if r[1] == t} == facts
    total = next(r for r in last if r[1] == "TOTAL")
    assert int(total[5]) == sum(int(lag) for _, _, lag in facts.values() if lag != "-")


@pytest.mark.parametrize("args, err", [
    (["--describe", "--group", "g", "--watch", "0"], "--watch takes a number of seconds > 0, not '0'"),
    (["--describe", "--group", "g", "--watch", "-1"], "--watch takes a number of seconds > 0, not '-1'"),
    (["--describe", "--group", "g", "--watch", "soon"], "--watch takes a number of seconds > 0, not 'soon'"),
    (["--list", "--watch", "1"], "--watch goes with --describe (the offsets view) only"),
    (["--describe", "--members", "--group", "g", "--watch", "1"],
     "--watch goes with --describe (the offsets view) only"),
    (["--describe", "--group", "g", "--watch", "1", "--output", "json"],
     "--watch draws a table: it cannot be used with --output json"),
])
def test_watch_refusals(pk, args, err):
    proc = pk("pk-consumer-groups", *args)
    assert (proc.returncode, proc.out, proc.err) == (1, "", err + "\n")


def test_watch_arithmetic():
    from pk.commands.lag_watch import Tracker, duration_text, eta, sparkline

    assert sparkline([0, 4, 8]) == "▁▅█" and sparkline([0, 0]) == "▁▁"
    assert eta(0, None, None) == 0.0 and eta(10, 2.0, 2.0) == float("inf") and eta(10, 3.0, 1.0) == 5.0
    assert eta(None, 1.0, 0.0) is None and eta(5, None, 0.0) is None
    assert [duration_text(s) for s in (None, float("inf"), 5, 65, 3700, 90000)] == [
        "-", "∞", "5s", "1m05s", "1h01m", "1d01h"]
    tracker = Tracker()
    first = tracker.update(0.0, [("g", [("g", "t", 0, 4, 10, 6, "-", "-", "-")])])
    assert [(r.topic, r.lag, r.lag_change, r.eta_s) for r in first] == [("t", 6, None, None), ("TOTAL", 6, None, None)]
    second = tracker.update(2.0, [("g", [("g", "t", 0, 8, 12, 4, "-", "-", "-")])])
    row, total = second
    assert (row.lag_change, row.consume_rate, row.produce_rate, row.eta_s) == (-2, 2.0, 1.0, 4.0)
    assert (total.lag, total.lag_change, total.trend) == (4, -2, "█▆")
