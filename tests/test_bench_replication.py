"""bench/replication.py's own code paths on the pk side, with tiny counts: the figures are the
bench's to print (beside Kafka 2.8's), the test only keeps the measuring code working: topic
creation waited on through ZooKeeper and every broker's Metadata, a confluent-kafka produce run,
the end-to-end latency loop, and one failover (leader SIGKILLed, first acknowledgement after it,
the broker back in the ISR)."""

from __future__ import annotations

import importlib.util
import os

import pytest

pytest.importorskip("kazoo.client")

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "replication.py")


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_replication", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_replication_on_pk(zookeeper, tmp_path):
    bench = _bench_module()
    # ZooKeeper's shortest session (2 ticks of 2 s): the failover below waits it out.
    settings = {**bench.SETTINGS, "zookeeper.session.timeout.ms": "4000"}
    cluster = bench.PkCluster(zookeeper, str(tmp_path), settings)
    try:
        cluster.start()
        cluster.create_topic("throughput", 3, 3)
        assert {b: cluster.leaders(b, "throughput") for b in cluster.addresses()} == {
            b: {p: cluster.state("throughput", p)["leader"] for p in range(3)} for b in cluster.addresses()}
        rate, mbs = bench.python_throughput(cluster, "throughput", 2000, 100, "all")
        assert rate > 0 and mbs == pytest.approx(rate * 100 / 1e6)

        cluster.create_topic("latency", 1, 3)
        latencies = bench.python_latency(cluster, "latency", 0.5, 200)
        assert len(latencies) == 100 and latencies == sorted(latencies) and latencies[0] > 0

        # A topic of its own: until producer ids come from ZooKeeper, another broker may hand the
        # failover producer the id the latency producer had.
        cluster.create_topic("failover", 1, 3)
        ((seconds, _was_controller),) = bench.failover(cluster, "failover", 1)
        # Noticing the SIGKILLed leader takes about ZooKeeper's session timeout (expired by ticks).
        session = int(settings["zookeeper.session.timeout.ms"]) / 1000
        assert session * 0.5 < seconds < session + 30
        assert len(cluster.state("failover", 0)["isr"]) == 3
    finally:
        cluster.stop()
