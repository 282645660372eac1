"""Issue 15's kill test: three pk-server-start brokers on a real ZooKeeper, an idempotent
acks=all producer and a consumer group of each client family (Kafka 4.4's own system-test
clients kafka-verifiable-producer / kafka-verifiable-consumer, and confluent-kafka), while the
broker leading a partition (or the group coordinator's) is SIGKILLed and restarted, 20 times.

One run of the loop (the module fixture `run`) feeds three tests:
- every record a producer saw acknowledged is read back exactly once (nothing lost, no
  duplicates: the producers are idempotent);
- each consumer group consumed every acknowledged record, whenever a partition's consumption went
  back (a re-delivery) it went back no further than the group's last successful commit, and at
  the end Kafka 4.4's kafka-consumer-groups --describe shows the consumers' last commits, at
  each log end;
- at the end, Kafka 4.4's kafka-topics --describe shows each partition's leader and ISR (the two
  topics and __consumer_offsets) as the state znodes say, every ISR full.

ZooKeeper is a dedicated one with 500 ms ticks, so that a killed broker's session ends after
1.5 s instead of the shared fixture's 6 s. `pytest -s` prints the summary table (kills, acked,
lost, duplicated, re-delivered per client family; kill -> new leader and kill -> first ack)."""

from __future__ import annotations

import contextlib
import json
import statistics
import threading
import time

import pytest

from conftest import ProtocolClient, zookeeper_server
from replication_cluster import ReplicationCluster, wait_for

pytest.importorskip("kazoo.client")
ck = pytest.importorskip("confluent_kafka")

KILLS = 20
PARTITIONS = 3
RATE = 150  # records per second from each producer
JAVA, CK = "kill-java", "kill-ck"  # one topic per client family, named after it
GROUPS = {JAVA: "kill-java-group", CK: "kill-ck-group"}
SETTINGS = {"zookeeper.session.timeout.ms": "1500", "replica.lag.time.max.ms": "4000",
            "offsets.topic.replication.factor": "3", "min.insync.replicas": "2",
            "auto.leader.rebalance.enable": "false"}
PRODUCER = {"enable.idempotence": "true", "acks": "all", "linger.ms": "5", "retry.backoff.ms": "100",
            "delivery.timeout.ms": "120000", "max.in.flight.requests.per.connection": "5"}


# --------------------------------------------------------------------------- the clients


class JavaClient:
    """A Kafka verifiable tool left running in its own JVM, its JSON events read as they come."""

    def __init__(self, kafka_tools, path, script: str, *args: str):
        self.path = path
        self.out = open(path, "wb")
        self.err = open(str(path) + ".err", "wb")  # Kafka's WARN logs, for a failure's post-mortem
        self.proc = kafka_tools.spawn(script, *args, stdout=self.out, stderr=self.err)
        self._offset = 0
        self._partial = b""
        self.events: list[dict] = []
        self._last_ack: dict[int, float] = {}

    def poll(self) -> list[dict]:
        """The events printed since the last call (whole lines only)."""
        if self.proc.returncode is None and self.proc.poll() is not None:
            raise AssertionError(f"{self.path.name}: the JVM exited with {self.proc.returncode}: "
                                 + open(self.err.name, errors="replace").read()[-2000:])
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        new = []
        for line in lines:
            try:
                new.append(json.loads(line))
            except ValueError:  # a warning on stdout: not an event
                pass
        self.events += new
        for e in new:
            if e.get("name") == "producer_send_success":
                self._last_ack[e["partition"]] = e["timestamp"] / 1000
        return new

    def last_ack(self, partition: int) -> float:
        """When the producer last printed an ack from the partition (0: never)."""
        self.poll()
        return self._last_ack.get(partition, 0.0)

    def acks(self) -> list[tuple[int, int, str, float]]:
        """The producer's acks: (partition, offset, value, when)."""
        return [(e["partition"], e["offset"], e["value"], e["timestamp"] / 1000)
                for e in self.events if e.get("name") == "producer_send_success"]

    def send_errors(self) -> list[dict]:
        return [e for e in self.events if e.get("name") == "producer_send_error"]

    def stop(self) -> None:
        """SIGTERM: Kafka's shutdown hook closes the client (the producer flushes) and prints
        its last events."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(120)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        self.err.close()
        self.poll()


class CkProducer(threading.Thread):
    """confluent-kafka's idempotent acks=all producer, round robin over the partitions at RATE."""

    def __init__(self, bootstrap: str):
        super().__init__(daemon=True)
        self.producer = ck.Producer({"bootstrap.servers": bootstrap, **PRODUCER, "message.timeout.ms": 120000,
                                     "topic.metadata.refresh.interval.ms": 1000})
        self.acks: list[tuple[int, int, str, float]] = []  # (partition, offset, value, when)
        self._last_ack: dict[int, float] = {}
        self.errors: list[str] = []
        self.stopping = threading.Event()

    def _done(self, err, msg):
        if err:
            self.errors.append(str(err))
        else:
            now = time.time()
            self.acks.append((msg.partition(), msg.offset(), msg.value().decode(), now))
            self._last_ack[msg.partition()] = now

    def last_ack(self, partition: int) -> float:
        return self._last_ack.get(partition, 0.0)

    def run(self) -> None:
        i, start = 0, time.monotonic()
        while not self.stopping.is_set():
            due = (time.monotonic() - start) * RATE
            try:
                while i < due:
                    self.producer.produce(CK, b"%d" % i, partition=i % PARTITIONS, on_delivery=self._done)
                    i += 1
            except BufferError:  # the queue is full while a partition has no leader: later
                pass
            self.producer.poll(0.01)
        self.producer.flush(120)

    def stop(self) -> None:
        self.stopping.set()
        self.join(150)


class CkGroupMember(threading.Thread):
    """A confluent-kafka consumer of the group: consumes a batch, records it, commits it
    synchronously (at least once), records what the commit answered."""

    def __init__(self, bootstrap: str, events: list, name: str):
        super().__init__(daemon=True, name=name)
        self.consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUPS[CK],
                                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                     "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000,
                                     "partition.assignment.strategy": "range",
                                     "topic.metadata.refresh.interval.ms": 1000})
        self.events = events
        self.stopping = threading.Event()

    def run(self) -> None:
        self.consumer.subscribe([CK])
        while not self.stopping.is_set():
            batch = [m for m in self.consumer.consume(500, 0.2) if not m.error()]
            if not batch:
                continue
            ends: dict[int, int] = {}
            for m in batch:
                self.events.append(("record", m.partition(), m.offset(), m.value().decode()))
                ends[m.partition()] = m.offset() + 1
            try:
                answer = self.consumer.commit(offsets=[ck.TopicPartition(CK, p, o) for p, o in ends.items()],
                                              asynchronous=False)
                for tp in answer:
                    self.events.append(("commit", tp.partition, tp.offset, tp.error is None))
            except ck.KafkaException:
                for p, o in ends.items():
                    self.events.append(("commit", p, o, False))
        self.consumer.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)


# --------------------------------------------------------------------------- the cluster


def create_topics(cluster) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for f in admin.create_topics([NewTopic(t, PARTITIONS, 3) for t in (JAVA, CK)]).values():
        f.result(15)
    for t in (JAVA, CK):
        for p in range(PARTITIONS):
            cluster.wait_state(t, p, lambda s: len(s["isr"]) == 3)
        cluster.wait_applied(t, PARTITIONS)


def replicated_partitions(cluster) -> list[tuple[str, int]]:
    """Every partition with a state znode: the two topics, and __consumer_offsets once the group
    coordinator writes it to ZooKeeper."""
    out = []
    for topic in (JAVA, CK, "__consumer_offsets"):
        if cluster.zk.exists(f"/brokers/topics/{topic}/partitions"):
            for p in sorted(int(x) for x in cluster.zk.get_children(f"/brokers/topics/{topic}/partitions")):
                if cluster.state(topic, p) is not None:
                    out.append((topic, p))
    return out


def coordinator(cluster, group: str) -> int:
    """The group's coordinator as FindCoordinator v4 names it, asked to the running brokers."""
    def ask():
        for b in cluster.running():
            try:
                with ProtocolClient(cluster.brokers[b].port, timeout=5) as client:
                    (c,) = client.call(10, 4, {"key_type": 0, "coordinator_keys": [group]})["coordinators"]
            except OSError:
                continue
            if c["error_code"] == 0:
                return (c["node_id"],)
        return None
    return wait_for(ask, 30, what=f"the coordinator of {group}")[0]


def describe(kafka_tools, cluster, topic: str) -> dict[int, tuple[int, list[int]]]:
    """Kafka 4.4's kafka-topics --describe of one topic: partition -> (leader, ISR)."""
    r = kafka_tools("kafka-topics", "--bootstrap-server", cluster.bootstrap, "--describe", "--topic", topic)
    assert r.returncode == 0, r.err
    out = {}
    for line in r.out.splitlines():
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
        if "Partition" in fields:
            out[int(fields["Partition"])] = (int(fields["Leader"]),
                                             [int(x) for x in fields["Isr"].split(",") if x])
    return out


def group_offsets(kafka_tools, cluster, group: str) -> dict[int, tuple[int, int]]:
    """Kafka 4.4's kafka-consumer-groups --describe of a group: partition -> (current offset,
    log end offset)."""
    r = kafka_tools("kafka-consumer-groups", "--bootstrap-server", cluster.bootstrap, "--describe", "--group", group)
    assert r.returncode == 0, r.err
    lines = [line.split() for line in r.out.splitlines() if line.strip()]
    header = next(line for line in lines if line[0] == "GROUP")
    rows = [dict(zip(header, line)) for line in lines if line[0] == group]
    return {int(row["PARTITION"]): (int(row["CURRENT-OFFSET"]), int(row["LOG-END-OFFSET"])) for row in rows}


def read_back(cluster, topic: str) -> list[tuple[int, int, str]]:
    """Every record of the topic, from the start, by a fresh plain consumer: (partition, offset, value)."""
    c = ck.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"readback-{topic}",
                     "enable.auto.commit": False, "isolation.level": "read_committed"})
    ends = {p: c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=15)[1] for p in range(PARTITIONS)}
    c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(PARTITIONS)])
    out, position = [], {p: 0 for p in range(PARTITIONS)}
    deadline = time.monotonic() + 60
    try:
        while any(position[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            for m in c.consume(1000, 0.5):
                if not m.error():
                    out.append((m.partition(), m.offset(), m.value().decode()))
                    position[m.partition()] = m.offset() + 1
    finally:
        c.close()
    return out


# --------------------------------------------------------------------------- the run


@pytest.fixture(scope="module")
def fast_zookeeper(tmp_path_factory):
    with zookeeper_server(tmp_path_factory.mktemp("zookeeper-fast"), tick_ms=500) as connect:
        yield connect


@pytest.fixture(scope="module")
def run(fast_zookeeper, kafka_tools, tmp_path_factory):
    """The 20 kills with both families' producers and groups running; returns what each saw."""
    root = tmp_path_factory.mktemp("kill")
    started = time.monotonic()
    with ReplicationCluster(fast_zookeeper, root, 3, overrides=SETTINGS) as cluster, \
            contextlib.ExitStack() as clients:
        cluster.start_all()
        create_topics(cluster)
        b = cluster.bootstrap
        # kafka-verifiable-producer sets retries=0 unless told (an idempotent producer refuses
        # it); round robin: Kafka's default sticky partitioner would stay on one partition for seconds
        (root / "producer.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in PRODUCER.items() if k != "acks") + "retries=2147483647\n"
            "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner\n")
        java_consumer = JavaClient(kafka_tools, root / "java-consumer.out", "kafka-verifiable-consumer",
                                   "--topic", JAVA, "--group-id", GROUPS[JAVA], "--bootstrap-server", b,
                                   "--verbose", "--reset-policy", "earliest", "--session-timeout", "10000")
        clients.callback(java_consumer.stop)
        ck_events: list = []
        for i in range(2):
            member = CkGroupMember(b, ck_events, f"ck-member-{i}")
            member.start()
            clients.callback(member.stop)
        java_producer = JavaClient(kafka_tools, root / "java-producer.out", "kafka-verifiable-producer",
                                   "--topic", JAVA, "--bootstrap-server", b, "--acks", "-1",
                                   "--throughput", str(RATE), "--command-config", str(root / "producer.properties"))
        clients.callback(java_producer.stop)
        ck_producer = CkProducer(b)
        ck_producer.start()
        clients.callback(ck_producer.stop)
        producers = {JAVA: java_producer, CK: ck_producer}

        for family in (JAVA, CK):  # both producers are writing before the first kill
            for p in range(PARTITIONS):
                wait_for(lambda: producers[family].last_ack(p) > 0, 60, what=f"a first ack from {family}-{p}")
        first_kill = time.monotonic()
        kills = [kill_and_restart(cluster, i, producers) for i in range(KILLS)]
        last_kill = time.monotonic()
        java_producer.stop()
        ck_producer.stop()
        acked = {JAVA: java_producer.acks(), CK: ck_producer.acks}

        def caught_up() -> bool:  # the groups consumed everything acknowledged
            java_consumer.poll()
            return all({(p, o) for p, o, _, _ in acked[f]} <= {(e[1], e[2]) for e in events if e[0] == "record"}
                       for f, events in ((JAVA, java_group_events(java_consumer.events)), (CK, list(ck_events))))
        try:
            wait_for(caught_up, 30, what="the groups to consume every acknowledged record", interval=0.5)
        except AssertionError:
            pass  # test_groups_resume_from_committed_offsets says what is missing
        clients.close()
        result = {
            "kills": kills, "setup": first_kill - started, "loop": last_kill - first_kill, "acks": acked,
            "send_errors": {JAVA: java_producer.send_errors(), CK: ck_producer.errors},
            "read": {t: read_back(cluster, t) for t in (JAVA, CK)},
            "group": {JAVA: java_group_events(java_consumer.events), CK: list(ck_events)},
            "committed": {f: group_offsets(kafka_tools, cluster, GROUPS[f]) for f in (JAVA, CK)},
            "describe": {t: describe(kafka_tools, cluster, t) for t in (JAVA, CK, "__consumer_offsets")},
            "states": {t: {p: cluster.state(t, p) for tt, p in replicated_partitions(cluster) if tt == t}
                       for t in (JAVA, CK, "__consumer_offsets")},
        }
    result["wall"] = time.monotonic() - started
    print_summary(result)
    return result


def kill_and_restart(cluster, i: int, producers: dict) -> dict:
    """Kill i: SIGKILL the broker leading a partition of one family's topic (every fifth time,
    the broker of a group's coordinator), wait for the controller to elect new leaders, restart
    it, wait for both producers to get acks from the partition's new leader and for the broker
    to be back in every ISR. Returns the moments of each step."""
    family, partition = (JAVA, CK)[i % 2], (i // 2) % PARTITIONS
    if i % 5 == 4:
        victim, why = coordinator(cluster, GROUPS[family]), f"coordinator of {GROUPS[family]}"
    else:
        victim, why = cluster.state(family, partition)["leader"], f"leader of {family}-{partition}"
    led = [(t, p) for t, p in replicated_partitions(cluster) if cluster.state(t, p)["leader"] == victim]
    if (family, partition) not in led:  # the coordinator's broker may not lead this one
        partition = next((p for t, p in led if t == family), partition)
    moments = {"victim": victim, "why": why, "partition": partition, "leads": (family, partition) in led,
               "killed": time.time()}
    cluster.kill(victim)
    # its session must end before it can register again (a broker whose id is still registered
    # refuses to start, as Kafka's does)
    wait_for(lambda: not cluster.zk.exists(f"/brokers/ids/{victim}"), 30, what=f"the session of broker {victim} to end")
    for t, p in led:
        cluster.wait_state(t, p, lambda s: s["leader"] not in (victim, -1), timeout=30)
    moments["elected"] = time.time()
    cluster.start(victim)
    moments["restarted"] = time.time()
    for f, producer in producers.items():
        wait_for(lambda: producer.last_ack(partition) > moments["elected"], 60,
                 what=f"an ack on {f}-{partition} after kill {i + 1}")
    moments["acked"] = time.time()
    for t, p in replicated_partitions(cluster):
        cluster.wait_state(t, p, lambda s: len(s["isr"]) == 3, timeout=60)
    moments["rejoined"] = time.time()
    return moments


def java_group_events(events: list[dict]) -> list[tuple]:
    """kafka-verifiable-consumer's events in the ck members' form: ("record", p, offset, value)
    and ("commit", p, next offset, success)."""
    out = []
    for e in events:
        if e.get("name") == "record_data":
            out.append(("record", e["partition"], e["offset"], e["value"]))
        elif e.get("name") == "offsets_committed":
            out += [("commit", o["partition"], o["offset"], e["success"]) for o in e["offsets"]]
    return out


# --------------------------------------------------------------------------- what the run shows


def first_ack_after(acks, partition: int, since: float) -> float | None:
    return min((t for p, _, _, t in acks if p == partition and t > since), default=None)


def counts(result, family: str) -> dict:
    acked = [v for _, _, v, _ in result["acks"][family]]
    read = [v for _, _, v in result["read"][family]]
    read_set = set(read)
    consumed = [e for e in result["group"][family] if e[0] == "record"]
    return {"acked": len(acked), "lost": sum(1 for v in acked if v not in read_set),
            "duplicated": len(read) - len(read_set), "send errors": len(result["send_errors"][family]),
            "group consumed": len(consumed),
            "re-delivered": len(consumed) - len({(e[1], e[2]) for e in consumed}),
            "rewinds": len(rewinds(result["group"][family]))}


def rewinds(events) -> list[tuple[int, int, int, int]]:
    """Each time a partition's consumption went back: (partition, offset resumed at, offset
    consumed just before, last successfully committed offset before)."""
    last: dict[int, int] = {}
    committed: dict[int, int] = {}
    out = []
    for e in events:
        if e[0] == "record":
            _, p, offset, _ = e
            if offset <= last.get(p, -1):
                out.append((p, offset, last[p], committed.get(p, 0)))
            last[p] = offset
        elif e[3]:
            committed[e[1]] = max(committed.get(e[1], 0), e[2])
    return out


def before_rewind(events, partition: int, offset: int, keep: int = 12) -> list:
    """The partition's last events (records and commits) before it went back to `offset`:
    what a failure report needs to tell a stale committed offset from events out of order."""
    mine = [e for e in events if e[1] == partition]
    at, last = len(mine) - 1, -1
    for i, e in enumerate(mine):
        if e[0] == "record":
            if e[2] == offset and last >= offset:
                at = i
                break
            last = e[2]
    return [e[:3] + (e[3] if e[0] == "commit" else "",) for e in mine[max(0, at - keep):at + 1]]


def print_summary(result) -> None:
    kills = result["kills"]
    print(f"\n{len(kills)} SIGKILLs of a leader's (or coordinator's) broker, each restarted; "
          f"whole run {result['wall']:.0f} s: {result['setup']:.0f} s to start the cluster and the clients, "
          f"{result['loop']:.0f} s of kills, the rest to check")
    columns = ["acked", "lost", "duplicated", "send errors", "group consumed", "re-delivered", "rewinds"]
    print(f"{'client family':<40}" + "".join(f"{c:>15}" for c in columns))
    for family, name in ((JAVA, "Kafka 4.4 verifiable producer/consumer"), (CK, "confluent-kafka")):
        row = counts(result, family)
        print(f"{name:<40}" + "".join(f"{row[c]:>15}" for c in columns))
    timed = [k for k in kills if k["leads"]]
    elections = [k["elected"] - k["killed"] for k in timed]
    failovers = {f: [t - k["killed"] for k in timed
                     if (t := first_ack_after(result["acks"][f], k["partition"], k["elected"])) is not None]
                 for f in (JAVA, CK)}
    def spread(xs):
        return f"min {min(xs):.2f} / median {statistics.median(xs):.2f} / max {max(xs):.2f} s" if xs else "-"
    print(f"kill -> new leader in ZooKeeper: {spread(elections)}")
    for f, xs in failovers.items():
        print(f"kill -> first ack from the new leader ({f}): {spread(xs)}")
    print("kill -> broker restarted (listening, registered): " + spread([k["restarted"] - k["killed"] for k in kills]))
    print("kill -> both producers acked through the new leader: " + spread([k["acked"] - k["killed"] for k in kills]))
    print("kill -> broker back in every ISR: " + spread([k["rejoined"] - k["killed"] for k in kills]))
    print("victims: " + ", ".join(f"{k['victim']} ({k['why']})" for k in kills))


def test_no_acknowledged_record_is_lost_or_duplicated(run):
    assert len(run["kills"]) == KILLS
    for family in (JAVA, CK):
        acked = run["acks"][family]
        read = run["read"][family]
        assert len(acked) > 20 * KILLS, family
        assert not run["send_errors"][family], (family, run["send_errors"][family][:3])
        # nothing lost: every acknowledged record is where its ack said, with its value
        stored = {(p, o): v for p, o, v in read}
        assert [a for a in acked if stored.get((a[0], a[1])) != a[2]] == [], family
        # no duplicates: each value (a producer's sequence number) is in the log once
        values = [v for _, _, v in read]
        assert len(values) == len(set(values)), family


def test_groups_resume_from_committed_offsets(run):
    for family in (JAVA, CK):
        events = run["group"][family]
        consumed = {(e[1], e[2]) for e in events if e[0] == "record"}
        missing = {(p, o) for p, o, _, _ in run["acks"][family]} - consumed
        assert not missing, (family, len(missing), sorted(missing)[:5])
        # a re-delivery starts at the last successful commit or later, never before it
        bad = [r for r in rewinds(events) if r[1] < r[3]]
        assert not bad, (family, bad[:5], before_rewind(events, *bad[0][:2]) if bad else None)
        # and only kills cause them: at most one per partition per kill
        assert len(rewinds(events)) <= KILLS * PARTITIONS, family
        # the group's committed offsets, as Kafka's kafka-consumer-groups shows them after the
        # kills, are the last ones the consumers saw committed: each partition's log end
        last_commits: dict[int, int] = {}
        for e in events:
            if e[0] == "commit" and e[3]:
                last_commits[e[1]] = max(last_commits.get(e[1], 0), e[2])
        committed = run["committed"][family]
        assert {p: current for p, (current, _) in committed.items()} == last_commits, family
        assert all(current == end for current, end in committed.values()), (family, committed)


def test_leaders_and_isr_as_kafka_describes_them(run):
    assert len(run["states"]["__consumer_offsets"]) == 3  # replicated since a group asked for it
    for topic in (JAVA, CK, "__consumer_offsets"):
        states = run["states"][topic]
        assert run["describe"][topic] == {p: (s["leader"], s["isr"]) for p, s in states.items()}, topic
        assert all(sorted(s["isr"]) == [0, 1, 2] for s in states.values()), topic
