"""Running a real ZooKeeper server, as Kafka's bin/zookeeper-server-start.sh and
zookeeper-server-stop.sh do, from the system's ZooKeeper installation.

pk has no ZooKeeper of its own: it starts the one Debian's `zookeeper` package installs. Its
classpath and java come from the package's zkEnv.sh, sourced exactly as the package's own
zkServer.sh sources it. The server runs as `java ... QuorumPeerMain <config>`, so that
stopping finds it the way Kafka's stop script does (a java process naming QuorumPeerMain).
"""

from __future__ import annotations

import os
import shutil
import subprocess

MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# Where Debian's zookeeper package puts zkEnv.sh (zkServer.sh sources it from its own folder).
ZK_ENV_SCRIPTS = ("/usr/share/zookeeper/bin/zkEnv.sh", "/usr/libexec/zkEnv.sh")
# The slf4j binding and log4j that make ZooKeeper log through config/log4j.properties; without
# them (they are optional) ZooKeeper runs silently, as its package's own classpath leaves it.
LOG_JARS = ("/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar")
PACKAGE_HINT = "install Debian's zookeeper package (apt-get install zookeeper)"
# Kafka's zookeeper-server-start.sh: KAFKA_HEAP_OPTS defaults to a 512 MB heap.
DEFAULT_HEAP = "-Xmx512M -Xms512M"


class ZooKeeperMissing(Exception):
    """No usable ZooKeeper installation: str() is the one line to print."""


def _env_scripts() -> tuple[str, ...]:
    """Where to look for zkEnv.sh: $ZOOKEEPER_HOME/bin (an Apache ZooKeeper release unpacked
    anywhere) when set, else Debian's package."""
    home = os.environ.get("ZOOKEEPER_HOME")
    return (os.path.join(home, "bin", "zkEnv.sh"),) if home else ZK_ENV_SCRIPTS


def _sourced(script: str) -> dict[str, str]:
    """CLASSPATH and JAVA after sourcing a zkEnv.sh in bash, as zkServer.sh does (ZOOBINDIR,
    which Apache's zkEnv.sh finds the release's jars from, is the script's folder)."""
    probe = f'. "{script}" >/dev/null 2>&1; printf "%s\\0%s" "$CLASSPATH" "$JAVA"'
    env = {k: v for k, v in os.environ.items() if k not in ("CLASSPATH", "JAVA")}
    env["ZOOBINDIR"] = os.path.dirname(script)
    out = subprocess.run(["bash", "-c", probe], capture_output=True, env=env, timeout=30).stdout
    classpath, _, java = out.decode().partition("\0")
    return {"CLASSPATH": classpath, "JAVA": java}


def find_installation() -> tuple[str, str]:
    """(java, classpath) of the system's ZooKeeper; ZooKeeperMissing says what is missing."""
    script = next((s for s in _env_scripts() if os.path.exists(s)), None)
    if script is None or shutil.which("bash") is None:
        raise ZooKeeperMissing(f"No ZooKeeper installation found: {PACKAGE_HINT}")
    found = _sourced(script)
    entries = [e for e in found["CLASSPATH"].split(":") if e]
    if not any(e.endswith(".jar") and os.path.exists(e) for e in entries):
        raise ZooKeeperMissing(f"No ZooKeeper jars found through {script}: {PACKAGE_HINT}")
    # kafka-run-class.sh: $JAVA_HOME/bin/java when JAVA_HOME is set, else java on the PATH;
    # the package's own JAVA setting comes next.
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java") or found["JAVA"]
    if not java or not os.access(java, os.X_OK):
        raise ZooKeeperMissing(f"No java found to run ZooKeeper: {PACKAGE_HINT} (it brings a Java runtime)")
    if all(os.path.exists(j) for j in LOG_JARS):
        entries += LOG_JARS
    return java, ":".join(entries)


def command_line(config_path: str, log4j_config: str) -> list[str]:
    """The java command line that runs ZooKeeper on a config file, with Kafka's script
    environment honoured (KAFKA_HEAP_OPTS, KAFKA_LOG4J_OPTS, KAFKA_OPTS)."""
    java, classpath = find_installation()
    heap = os.environ.get("KAFKA_HEAP_OPTS") or DEFAULT_HEAP
    log4j = os.environ.get("KAFKA_LOG4J_OPTS") or f"-Dlog4j.configuration=file:{log4j_config}"
    opts = os.environ.get("KAFKA_OPTS", "")
    return [java, *heap.split(), "-Djava.awt.headless=true", *log4j.split(), "-cp", classpath,
            *opts.split(), MAIN_CLASS, config_path]


def server_pids() -> list[int]:
    """Running ZooKeeper servers, found as zookeeper-server-stop.sh finds them: processes whose
    command line names java and (in any case) QuorumPeerMain."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "java" in line and "quorumpeermain" in line.lower():
            pids.append(int(entry))
    return sorted(pids)
