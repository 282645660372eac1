"""pk-zookeeper-server-start / pk-zookeeper-server-stop: Kafka's zookeeper-server-start.sh and
zookeeper-server-stop.sh, running the system's ZooKeeper (see pk.commands.zookeeper_server).

    pk-zookeeper-server-start [-daemon] config/zookeeper.properties
    pk-zookeeper-server-stop

In the foreground the ZooKeeper JVM replaces this process (as the script's `exec`) and logs
to stdout; -daemon detaches it, its output in $LOG_DIR/zookeeper.out (LOG_DIR defaults to
./logs). Stop sends $SIGNAL (default TERM) to every running ZooKeeper server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from .common import fail

USAGE = "USAGE: pk-zookeeper-server-start [-daemon] zookeeper.properties"
HELP = """Starts the system's ZooKeeper (Debian's zookeeper package, or $ZOOKEEPER_HOME) on a
zookeeper.properties; config/zookeeper.properties is the sample pk ships.
  -daemon   run detached, output in $LOG_DIR/zookeeper.out (LOG_DIR defaults to ./logs)
Environment: KAFKA_HEAP_OPTS (default -Xmx512M -Xms512M), KAFKA_LOG4J_OPTS, KAFKA_OPTS, JAVA_HOME.
"""
SAMPLE_CONFIG = os.path.join("config", "zookeeper.properties")
_PACKAGED_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config")


def _config_path(path: str) -> str:
    if not os.path.exists(path) and os.path.normpath(path) == SAMPLE_CONFIG:
        # Kafka's scripts run from the distribution's root, where config/ lives; pk ships
        # the same sample inside the package.
        return os.path.join(_PACKAGED_CONFIG, "zookeeper.properties")
    return os.path.abspath(path)


def _maybe_complete() -> None:
    """Answer a shell-completion request (see completions/) and exit."""
    prog = os.path.basename(sys.argv[0])
    var = f"_{prog.replace('-', '_').upper()}_COMPLETE"
    if os.environ.get(var):
        _completion_command().main(prog_name=prog, complete_var=var)


def start(argv: list[str] | None = None) -> None:
    if argv is None:
        _maybe_complete()
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] in (["--help"], ["-help"], ["-h"]):
        sys.stdout.write(f"{USAGE}\n{HELP}")
        sys.exit(0)
    daemon = bool(args) and args[0] == "-daemon"
    if daemon:
        args = args[1:]
    if len(args) < 1:
        # zookeeper-server-start.sh prints its usage on stdout.
        sys.stdout.write(USAGE + "\n")
        sys.exit(1)
    from pk.commands.zookeeper_server import ZooKeeperMissing, command_line

    config = _config_path(args[0])
    try:
        argv_java = command_line(config, os.path.join(_PACKAGED_CONFIG, "log4j.properties"))
    except ZooKeeperMissing as exc:
        fail(str(exc))
    argv_java += args[1:]  # QuorumPeerMain's own further arguments, passed on as the script does
    if daemon:
        log_dir = os.environ.get("LOG_DIR") or os.path.join(os.getcwd(), "logs")
        os.makedirs(log_dir, exist_ok=True)
        with open(os.path.join(log_dir, "zookeeper.out"), "ab") as out:
            subprocess.Popen(argv_java, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        sys.exit(0)
    sys.stdout.flush()
    os.execv(argv_java[0], argv_java)


def stop(argv: list[str] | None = None) -> None:
    """Signal every running ZooKeeper server, as zookeeper-server-stop.sh (arguments ignored)."""
    if argv is None:
        _maybe_complete()
    if (sys.argv[1:] if argv is None else argv)[:1] in (["--help"], ["-help"], ["-h"]):
        sys.stdout.write("USAGE: pk-zookeeper-server-stop\nStops every ZooKeeper server running on this machine "
                         "(signal $SIGNAL, default TERM).\n")
        sys.exit(0)
    from pk.commands.zookeeper_server import server_pids

    name = os.environ.get("SIGNAL") or "TERM"
    try:
        signum = signal.Signals["SIG" + name.upper().removeprefix("SIG")] if not name.isdigit() else int(name)
    except KeyError:
        fail(f"pk-zookeeper-server-stop: {name}: invalid signal specification")
    pids = server_pids()
    if not pids:
        sys.stdout.write("No zookeeper server to stop\n")
        sys.exit(1)
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    sys.exit(0)


def _completion_command():
    """A Click description of the arguments, for shell completion only (the scripts parse
    `[-daemon] zookeeper.properties` themselves, as Kafka's)."""
    import click

    return click.Command("pk-zookeeper-server-start", params=[
        click.Option(["-daemon"], is_flag=True),
        click.Argument(["config"], type=click.Path(exists=True, dir_okay=False), required=False),
    ])


def __getattr__(name):
    if name == "cli":
        return _completion_command()
    raise AttributeError(name)
