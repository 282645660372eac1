"""Class-data-sharing (AppCDS) archives for the suite's Kafka JVMs.

A Kafka JVM spends most of its start loading, parsing and verifying some 9,000 classes from
Kafka's jars; the suite starts about a hundred of them (brokers, the tool server, the Java
clients a test leaves running). An archive of those classes, already parsed and verified,
halves that: a Kafka 4.4 broker starts on 1.4 CPU-s instead of 3.0, a kafka-topics call on
0.55 instead of 1.1 (this machine, Java 17).

The class lists are in tests/kafka/cds/ (which classes a broker and Kafka's tools load: a
list for each Kafka release); `python tests/jvm_archive.py` (scripts/test runs it after
scripts/kafka-jars) dumps one archive per fetched release into .kafka/<version>/cds/, named
after what it depends on (the java binary, the classpath, the jars' sizes and times), so a
new JDK or new jars get a new archive and the old one is deleted. `--lists` records the class
lists again, by running a broker and the tools (for a new Kafka release).

The JVM checks an archive before using it and runs without one when it does not match;
`-Xlog:cds=off` keeps its warning about that out of the tools' stdout, which the oracle
tests compare byte for byte. Nothing Kafka prints depends on where its classes came from.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LISTS = os.path.join(HERE, "kafka", "cds")


def _key(dist) -> str:
    """What an archive depends on, hashed: the JVM, the class list, the classpath and its jars."""
    java = shutil.which("java")
    if java is None:
        return ""
    java = os.path.realpath(java)
    parts = [java, str(os.stat(java).st_mtime_ns), dist.classpath]
    if os.path.exists(list_path(dist)):
        with open(list_path(dist), "rb") as f:
            parts.append(hashlib.sha256(f.read()).hexdigest())
    for jar in dist.classpath.split(":"):
        st = os.stat(jar)
        parts.append(f"{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def archive_path(dist) -> str:
    return os.path.join(os.path.dirname(dist.libs), "cds", f"kafka-{_key(dist)}.jsa")


def list_path(dist) -> str:
    return os.path.join(LISTS, f"classes-{dist.version}.txt")


def options(dist) -> tuple[str, ...]:
    """The JVM options that use the release's archive, when it has been dumped."""
    path = archive_path(dist)
    return (f"-XX:SharedArchiveFile={path}", "-Xlog:cds=off") if os.path.exists(path) else ()


def dump(dist) -> str | None:
    """Dump the archive of one release from its class list (nothing when it is there already);
    the archive's path, or None when there is no list for the release."""
    if not os.path.exists(list_path(dist)):
        return None
    path = archive_path(dist)
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    os.close(fd)
    # The same GC as the suite's JVMs (kafka_oracle's SerialGC), so the archived heap objects serve too.
    proc = subprocess.run(["java", "-Xshare:dump", "-XX:+UseSerialGC", f"-XX:SharedClassListFile={list_path(dist)}",
                           f"-XX:SharedArchiveFile={tmp}", "-Xlog:cds=off", "-cp", dist.classpath],
                          capture_output=True, timeout=600)
    if proc.returncode != 0:
        os.unlink(tmp)
        raise RuntimeError(f"java -Xshare:dump failed for Kafka {dist.version}: "
                           f"{(proc.stdout + proc.stderr).decode(errors='replace')[-2000:]}")
    os.replace(tmp, path)
    for old in glob.glob(os.path.join(os.path.dirname(path), "*")):
        if old != path:
            os.unlink(old)
    return path


# --------------------------------------------------------------------------- recording the lists
def record_list(dist) -> str:
    """Run a broker of the release and a round of its tools with -XX:DumpLoadedClassList, and
    write the classes they loaded to the release's list."""
    import dataclasses

    import kafka_oracle
    import zookeeper_process

    root = tempfile.mkdtemp(prefix="pk-cds-")
    lists = []
    zk = None
    try:
        def recording(name):
            lists.append(os.path.join(root, name))
            return dataclasses.replace(dist, options=(*dist.options, f"-XX:DumpLoadedClassList={lists[-1]}"))

        if dist.major < 4:
            os.makedirs(os.path.join(root, "zk"))
            zk = zookeeper_process.ZooKeeperProcess(os.path.join(root, "zk")).start()
        broker = kafka_oracle.KafkaBroker(recording("server.txt"), os.path.join(root, "broker"),
                                          zookeeper=zk.connect if zk else None)
        broker.heap = "512m"
        broker.start()
        try:
            tools = kafka_oracle.KafkaTools(recording("tools.txt"))
            b = ("--bootstrap-server", broker.bootstrap)
            tools("kafka-topics", *b, "--create", "--topic", "t", "--partitions", "2", "--replication-factor", "1")
            tools("kafka-topics", *b, "--describe", "--topic", "t")
            tools("kafka-console-producer", *(("--bootstrap-server",) if dist.major >= 4 else ("--broker-list",)),
                  broker.bootstrap, "--topic", "t", "--property", "parse.key=true", input="k\tv\nk2\tv2\n")
            tools("kafka-console-consumer", *b, "--topic", "t", "--from-beginning", "--max-messages", "2",
                  "--group", "g", "--property", "print.key=true")
            tools("kafka-consumer-groups", *b, "--describe", "--group", "g")
            tools("kafka-configs", *b, "--describe", "--entity-type", "topics", "--entity-name", "t")
            tools("kafka-get-offsets" if dist.major >= 4 else "kafka-topics", *b, "--topic", "t")
            tools.close()
        finally:
            broker.stop()
    finally:
        if zk is not None:
            zk.stop()
    classes = set()
    for path in lists:
        if os.path.exists(path):
            with open(path) as f:
                classes.update(line.strip() for line in f if line.strip() and not line.startswith("#"))
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(LISTS, exist_ok=True)
    with open(list_path(dist), "w") as f:
        f.writelines(f"{c}\n" for c in sorted(classes))
    return list_path(dist)


def _dists():
    import kafka_oracle

    found = []
    for line in ("4", "2.8"):
        try:
            found.append(kafka_oracle.find_dist(line))
        except kafka_oracle.KafkaMissing:
            pass
    return found


def main(argv: list[str]) -> int:
    sys.path.insert(0, HERE)
    for dist in _dists():
        try:
            if "--lists" in argv:
                import dataclasses

                import conftest
                print(f"jvm_archive: recorded {record_list(dataclasses.replace(dist, options=conftest.TEST_JVM_OPTIONS))}")
            path = dump(dist)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:  # the suite runs without it, slower
            print(f"jvm_archive: no archive for Kafka {dist.version}: {e}", file=sys.stderr)
            continue
        if path:
            print(f"jvm_archive: Kafka {dist.version}: {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
