"""A cluster of N pk-server-start brokers coordinated by a real ZooKeeper (the conftest
`zookeeper` fixture), on loopback, for the replication tests: each in its own chroot of the
shared ZooKeeper, broker i on its own data directory, started, killed and restarted by pid.

    with ReplicationCluster(zookeeper, tmp_path, 3) as cluster:
        cluster.start_all()
        cluster.create_topic("t", partitions=1, replication_factor=3)
        state = cluster.wait_state("t", 0, lambda s: len(s["isr"]) == 3)
        cluster.kill(state["leader"])
"""

from __future__ import annotations

import itertools
import json
import os
import time
import warnings

from conftest import BrokerProcess, ProtocolClient, free_port
from waits import wait_for  # noqa: F401  (the replication tests import it from here)

_chroots = itertools.count()

# Fast failure detection for tests: ZooKeeper's minimum session is 2 ticks (4 s here).
FAST = {"zookeeper.session.timeout.ms": "6000", "replica.lag.time.max.ms": "4000",
        "offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3"}


class ReplicationCluster:
    def __init__(self, zookeeper: str, tmp_path, size: int = 3, overrides: dict[str, str] | None = None):
        from kazoo.client import KazooClient

        self.connect = f"{zookeeper}/pk_repl_{os.getpid()}_{next(_chroots)}"
        self.tmp_path = tmp_path
        self.zk = KazooClient(hosts=self.connect)
        with warnings.catch_warnings():  # the chroot does not exist yet: the brokers create it
            warnings.simplefilter("ignore")
            self.zk.start(timeout=10)
        self.brokers: dict[int, BrokerProcess] = {}
        for i in range(size):
            data_dir = str(tmp_path / f"broker{i}" / "data")
            os.makedirs(os.path.dirname(data_dir), exist_ok=True)
            self.brokers[i] = BrokerProcess(data_dir, {
                "zookeeper.connect": self.connect, "broker.id": str(i), "node.id": str(i),
                **FAST, **(overrides or {})}, port=free_port())

    # ------------------------------------------------------------------ processes
    def start(self, broker_id: int) -> BrokerProcess:
        b = self.brokers[broker_id].start()
        wait_for(lambda: self.zk.exists(f"/brokers/ids/{broker_id}"), what=f"broker {broker_id} to register")
        return b

    def start_all(self) -> None:
        for i in self.brokers:
            self.start(i)
        self.wait_converged()
        dead = [i for i in self.brokers if i not in self.running()]
        if dead:  # registered, then died: say so rather than let a test see a smaller cluster
            raise RuntimeError(f"broker(s) {dead} exited while starting:\n"
                               + "\n".join(self.brokers[i].log()[-3000:] for i in dead))

    def wait_converged(self) -> None:
        """Until every running broker's Metadata lists every running broker."""
        def converged():
            running = self.running()
            return all(sorted(b["node_id"] for b in self.metadata(i, "")["brokers"]) == running for i in running)
        wait_for(converged, what="every broker to see every broker")

    def kill(self, broker_id: int) -> None:
        """SIGKILL: the session ends only when ZooKeeper times it out, as for a crash."""
        self.brokers[broker_id].kill()

    def stop(self, broker_id: int) -> None:
        self.brokers[broker_id].stop()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values())

    def running(self) -> list[int]:
        return [i for i, b in self.brokers.items() if b.proc is not None and b.proc.poll() is None]

    # ------------------------------------------------------------------ ZooKeeper views
    def get(self, path: str):
        from kazoo.exceptions import NoNodeError

        try:
            return self.zk.get(path)[0]
        except NoNodeError:
            return None

    def state(self, topic: str, partition: int) -> dict | None:
        data = self.get(f"/brokers/topics/{topic}/partitions/{partition}/state")
        return None if data is None else json.loads(data)

    def wait_state(self, topic: str, partition: int, predicate, timeout: float = 30.0) -> dict:
        seen = []

        def check():
            state = self.state(topic, partition)
            seen[:] = [state]
            return state if state is not None and predicate(state) else None
        try:
            return wait_for(check, timeout, what=f"state of {topic}-{partition}")
        except AssertionError as exc:  # name what was there instead, for the failure's reader
            raise AssertionError(f"{exc}; last state {seen[0] if seen else None}") from None

    def wait_applied(self, topic: str, partitions: int, timeout: float = 30.0) -> None:
        """Until every running broker's Metadata agrees with the state znodes."""
        def agreed():
            states = [self.state(topic, p) for p in range(partitions)]
            if any(s is None for s in states):
                return False
            for b in self.running():
                (t,) = self.metadata(b, topic)["topics"]
                got = {p["partition_index"]: (p["leader_id"], p["leader_epoch"], p["isr_nodes"]) for p in t["partitions"]}
                if any(got.get(p) != (s["leader"], s["leader_epoch"], s["isr"]) for p, s in enumerate(states)):
                    return False
            return True
        wait_for(agreed, timeout, what=f"every broker to apply the states of {topic}")

    # ------------------------------------------------------------------ the wire
    def metadata(self, broker_id: int, topic: str) -> dict:
        """Metadata v12 from one broker, for one topic."""
        with ProtocolClient(self.brokers[broker_id].port, timeout=10) as client:
            return client.call(3, 12, {"topics": [{"name": topic, "topic_id": None}] if topic else [],
                                       "allow_auto_topic_creation": False,
                                       "include_cluster_authorized_operations": False,
                                       "include_topic_authorized_operations": False})

    def close(self) -> None:
        # SIGKILL: a throwaway cluster needs no controlled shutdown, which would wait for the
        # controller to move each broker's leaderships (up to 15 s with a dead controller)
        for b in self.brokers.values():
            b.kill()
        try:
            self.zk.delete("/", recursive=True)
        except Exception:
            pass
        self.zk.stop()
        self.zk.close()

    def __enter__(self) -> "ReplicationCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
