"""pk-server-start under real clients, beside the bundled engine, measured in one run.

    .venv/bin/python bench/server.py [--records N] [--latency-seconds S] [--fuzz-frames N]

- ingest: N records of 100 bytes from `kcat -P -l FILE` and from confluent-kafka Producer
  processes into pk-server (3 partitions), beside `pk-console-producer < FILE` on the bundled
  engine (no network) for the same file: the ratio is what the network path costs.
  Goal >= 1 M records/s.
- consume: `kcat -C -e` of those records through pk-server. Goal >= 1 M records/s.
- latency: confluent-kafka producer -> pk-server -> confluent-kafka consumer at 10 k
  messages/s; p50/p99/max of (consume time - produce time). Goal p99 <= 5 ms.
- fuzz: random and mutated frames at the server; it must stay up and answer afterwards.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)


def compile_pk() -> None:
    """Write pk's bytecode caches before timing, as an installed pk has them (pip compiles
    at install). Without them, a shell with PYTHONDONTWRITEBYTECODE=1 and an editable
    install compiles every changed module again at each start (~25 ms)."""
    import importlib.util

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    folders = [os.path.dirname(importlib.util.find_spec(f"pk.{name}").origin)
               for name in ("cli", "commands", "engine", "spark_ops")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: str, command: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """pk-server-start on a free port (`command`: another pk-server-start to run, e.g. an earlier
    tree's)."""
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    proc = subprocess.Popen(
        [*(command or [os.path.join(BIN, "pk-server-start")]), os.path.join(HERE, "..", "config", "server.properties"),
         "--override", f"log.dirs={data_dir}", "--override", f"listeners=PLAINTEXT://{bootstrap}",
         "--override", "group.initial.rebalance.delay.ms=0"],
        stdout=open(os.path.join(data_dir, "..", "server.log"), "ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, bootstrap
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("pk-server-start did not start")


def pk(*args, env=None, stdin=None) -> None:
    subprocess.run([os.path.join(BIN, args[0]), *args[1:]], env=env, stdin=stdin, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _produce_worker(bootstrap: str, topic: str, count: int, size: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 10000,
                  "queue.buffering.max.messages": 1000000, "acks": "all"})
    value = b"x" * size
    for i in range(count):
        while True:
            try:
                p.produce(topic, value)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10000 == 0:
            p.poll(0)
    p.flush(60)


def bench_ingest(bootstrap: str, data_dir: str, engine_dir: str, n: int, size: int, workdir: str) -> None:
    lines = os.path.join(workdir, "lines.txt")
    with open(lines, "wb") as f:
        f.write((b"x" * size + b"\n") * n)
    env = {**os.environ, "PK_DATA_DIR": engine_dir}
    pk("pk-topics", "--create", "--topic", "ingest", "--partitions", "3", env=env)
    with open(lines, "rb") as stdin:
        engine_s = timed(lambda: pk("pk-console-producer", "--topic", "ingest", env=env, stdin=stdin))
    srv_env = {**os.environ, "PK_DATA_DIR": data_dir}
    for topic in ("kcat-in", "ck-in"):
        pk("pk-topics", "--create", "--topic", topic, "--partitions", "3", env=srv_env)
    kcat_s = timed(lambda: subprocess.run(
        ["kcat", "-b", bootstrap, "-P", "-t", "kcat-in", "-l", lines, "-X", "linger.ms=5",
         "-X", "batch.num.messages=10000"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    workers = 2
    procs = [multiprocessing.Process(target=_produce_worker, args=(bootstrap, "ck-in", n // workers, size))
             for _ in range(workers)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    ck_s = time.perf_counter() - start
    print(f"ingest of {n} records of {size} bytes into 3 partitions:")
    print(f"  pk-console-producer < file, bundled engine   {n / engine_s / 1e6:6.2f} M records/s ({engine_s:.2f} s)")
    print(f"  kcat -P -l file -> pk-server                 {n / kcat_s / 1e6:6.2f} M records/s ({kcat_s:.2f} s)"
          f"  ratio to the engine: {engine_s / kcat_s:.2f}")
    print(f"  confluent-kafka x{workers} processes -> pk-server   {n / ck_s / 1e6:6.2f} M records/s ({ck_s:.2f} s)"
          f"  ratio to the engine: {engine_s / ck_s:.2f}  (goal >= 1 M records/s)")


def bench_consume(bootstrap: str, n: int) -> None:
    consume_s = timed(lambda: subprocess.run(
        ["kcat", "-b", bootstrap, "-C", "-t", "kcat-in", "-o", "beginning", "-e", "-q"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    print(f"consume: kcat -C -e of {n} records from pk-server   {n / consume_s / 1e6:6.2f} M records/s "
          f"({consume_s:.2f} s; goal >= 1 M records/s)")


def bench_latency(bootstrap: str, seconds: float, rate: int, topic: str = "latency", linger_ms: float = 1) -> None:
    from confluent_kafka import Consumer, Producer

    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the futures resolve
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "latency", "auto.offset.reset": "latest",
                         "fetch.wait.max.ms": 100, "fetch.min.bytes": 1, "enable.auto.commit": False})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 15
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.1)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": linger_ms, "acks": "all"})
    latencies: list[float] = []
    total = int(seconds * rate)
    start = time.perf_counter()
    sent = 0
    while sent < total or len(latencies) < sent:
        now = time.perf_counter()
        due = min(total, int((now - start) * rate))
        while sent < due:
            producer.produce(topic, struct.pack(">d", time.perf_counter()))
            sent += 1
        producer.poll(0)
        msg = consumer.poll(0.0005)
        while msg is not None:
            if not msg.error():
                latencies.append((time.perf_counter() - struct.unpack(">d", msg.value())[0]) * 1000)
            msg = consumer.poll(0)
        if now - start > seconds + 10:
            break
    producer.flush(10)
    consumer.close()
    latencies.sort()
    if not latencies:
        print("latency: no message came back")
        return
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    print(f"latency at {rate} msg/s, linger.ms={linger_ms}, for {seconds:.0f} s ({len(latencies)} messages): p50 {p(0.5):.2f} ms, "
          f"p99 {p(0.99):.2f} ms, max {latencies[-1]:.2f} ms (goal p99 <= 5 ms)")


def bench_fuzz(bootstrap: str, frames: int) -> None:
    from pk.engine import protocol as kp

    host, port = bootstrap.split(":")
    seeds = [kp.encode_request(18, 3, 1, {"client_software_name": "fuzz", "client_software_version": "1"},
                               client_id="fuzz"),
             kp.encode_request(3, 4, 2, {"topics": [{"name": "kcat-in"}], "allow_auto_topic_creation": False},
                               client_id="fuzz")]
    rng = random.Random(7)
    sock = None
    start = time.perf_counter()
    for i in range(frames):
        if sock is None:
            sock = socket.create_connection((host, int(port)))
            sock.settimeout(0.5)
        if rng.random() < 0.3:
            frame = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        else:
            frame = bytearray(rng.choice(seeds))
            for _ in range(rng.randrange(1, 6)):
                frame[rng.randrange(len(frame))] = rng.randrange(256)
            frame = bytes(frame)
        try:
            sock.sendall(frame)
            if i % 50 == 0:
                sock.close()
                sock = None
        except OSError:
            sock.close()
            sock = None
    if sock is not None:
        sock.close()
    elapsed = time.perf_counter() - start
    ok = subprocess.run(["kcat", "-b", bootstrap, "-L", "-t", "kcat-in"], capture_output=True, timeout=30)
    print(f"fuzz: {frames} random/mutated frames in {elapsed:.1f} s; server afterwards: "
          f"{'answers metadata' if ok.returncode == 0 else 'NOT ANSWERING'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--latency-seconds", type=float, default=10)
    parser.add_argument("--latency-rate", type=int, default=10_000)
    parser.add_argument("--fuzz-frames", type=int, default=100_000)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pk-bench-")
    data_dir = os.path.join(workdir, "server-data")
    engine_dir = os.path.join(workdir, "engine-data")
    os.makedirs(data_dir)
    server, bootstrap = start_server(data_dir)
    try:
        bench_ingest(bootstrap, data_dir, engine_dir, args.records, args.size, workdir)
        bench_consume(bootstrap, args.records)
        bench_latency(bootstrap, args.latency_seconds, args.latency_rate, "latency-l1", 1)
        bench_latency(bootstrap, args.latency_seconds, args.latency_rate, "latency-l0", 0)
        bench_fuzz(bootstrap, args.fuzz_frames)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
