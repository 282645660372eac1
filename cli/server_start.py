"""pk-server-start / pk-server-stop: run the bundled engine as a Kafka-protocol broker.

    pk-server-start [-daemon] config/server.properties [--override property=value]*
    pk-server-stop

As Kafka's scripts: the broker logs to stdout in log4j's layout; -daemon detaches it and
sends its output to a file; pk-server-stop sends SIGTERM to every running pk broker.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

USAGE = "USAGE: pk-server-start [-daemon] server.properties [--override property=value]*"
SAMPLE_CONFIG = os.path.join("config", "server.properties")


class _Log4jFormatter(logging.Formatter):
    """Kafka's `[%d] %p %m (%c)%n`, with log4j's ISO8601 date (comma before milliseconds)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
        text = f"[{stamp},{int(record.msecs):03d}] {record.levelname.replace('WARNING', 'WARN')} " \
               f"{record.getMessage()} ({record.name})"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _parse_args(argv: list[str]) -> tuple[bool, str, dict[str, str]]:
    daemon = False
    args = list(argv)
    if args and args[0] in ("-daemon", "--daemon"):
        daemon = True
        args = args[1:]
    if not args or args[0].startswith("-"):
        raise SystemExit(USAGE)
    config_path, rest = args[0], args[1:]
    overrides: dict[str, str] = {}
    while rest:
        if rest[0] != "--override" or len(rest) < 2 or "=" not in rest[1]:
            raise SystemExit(f"Invalid override: {' '.join(rest[:2])}. {USAGE}")
        key, value = rest[1].split("=", 1)
        overrides[key.strip()] = value.strip()
        rest = rest[2:]
    return daemon, config_path, overrides


def _load_config(path: str, overrides: dict[str, str]):
    from pk.commands.errors import PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.broker.config import BrokerConfig

    if not os.path.exists(path) and path == SAMPLE_CONFIG:
        # Kafka's scripts run from the distribution's root, where config/ lives; pk ships
        # the same sample inside the package.
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config",
                            "server.properties")
    try:
        props = load_properties(path)
    except PropertiesError as exc:
        raise SystemExit(str(exc)) from None
    return BrokerConfig.from_properties(props, overrides)


def _maybe_complete() -> None:
    """Answer a shell-completion request (see completions/) and exit."""
    prog = os.path.basename(sys.argv[0])
    var = f"_{prog.replace('-', '_').upper()}_COMPLETE"
    if os.environ.get(var):
        _completion_command().main(prog_name=prog, complete_var=var)


def start(argv: list[str] | None = None) -> None:
    if argv is None:
        _maybe_complete()
    argv = sys.argv[1:] if argv is None else argv
    try:
        daemon, config_path, overrides = _parse_args(argv)
    except SystemExit as exc:
        sys.stderr.write(f"{exc}\n")
        sys.exit(1)
    if daemon:
        _daemonize(argv[1:], config_path)
        return
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(_Log4jFormatter())
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    log = logging.getLogger("kafka.server.KafkaServer")
    try:
        config = _load_config(config_path, overrides)
    except SystemExit as exc:
        log.error("Exiting Kafka due to fatal exception: %s", exc)
        sys.exit(1)
    for key in config.unknown:
        logging.getLogger("kafka.server.KafkaConfig").warning(
            "The configuration '%s' was supplied but isn't a known config.", key)
    from pk.engine.broker.config import ConfigError

    try:
        code = _run(config, log)
    except ConfigError as exc:
        log.error("Exiting Kafka due to fatal exception: %s", exc)
        code = 1
    sys.exit(code)


def _run(config, log) -> int:
    import asyncio
    import fcntl

    from pk.engine.broker import Broker
    from pk.engine.engine import Engine
    from pk.engine.errors import KafkaError
    from pk.engine.server import Server

    endpoints = _endpoints(config)  # a ConfigError (start reports it) before anything starts
    data_dir = os.path.abspath(config.data_dir)
    zk = None
    if config.get("zookeeper.connect"):
        from pk.engine.broker.zookeeper import ZooKeeperStartupError, ZooKeeperSync

        try:  # before the engine: the cluster id comes from ZooKeeper
            zk = ZooKeeperSync.connect(config, data_dir)
        except ZooKeeperStartupError as exc:
            exc.report(log)
            return 1
    try:
        engine = Engine(data_dir, config.engine_settings(), config.log_dirs[1:])
    except KafkaError as exc:
        log.error("Exiting Kafka due to fatal exception: %s", exc)
        return 1
    # One broker per log dir (the tools may share the data dir; two brokers may not).
    lock_fds = []
    for directory in engine.log_dirs:
        lock_fds.append(os.open(os.path.join(directory, ".lock"), os.O_RDWR | os.O_CREAT, 0o644))
        try:
            fcntl.flock(lock_fds[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.error("Exiting Kafka due to fatal exception: Failed to acquire lock on file .lock in %s. "
                      "A Kafka instance in another process or thread is using this directory.", directory)
            return 1
    host, port = config.listener

    async def main() -> None:
        broker = Broker(engine, config, zk.broker_configs if zk is not None else None)
        server = Server(broker, endpoints, config.get_int("socket.request.max.bytes"))
        await server.start()
        if zk is not None:
            broker.zookeeper = zk
            for sig in (signal.SIGTERM, signal.SIGINT):  # a stop during registration closes the session
                asyncio.get_running_loop().add_signal_handler(sig, server.request_stop)
            try:
                await zk.start(broker)
            except ZooKeeperStartupError as exc:
                exc.report(log)
                await server.stop()
                raise SystemExit(1)
        _write_pid(data_dir)
        for endpoint in endpoints:
            listener = endpoint.listener
            log.info("[KafkaServer id=%d] listener %s (%s) on %s:%d, advertising %s:%d", config.node_id,
                     listener.name, listener.security_protocol, listener.host, endpoint.port,
                     listener.advertised_host, listener.advertised_port)
        log.info("[KafkaServer id=%d] started, listening on %s:%d, advertising %s:%d, data in %s",
                 config.node_id, host, server.port, broker.host, broker.port, data_dir)
        try:
            await server.run()
        finally:
            log.info("[KafkaServer id=%d] shut down completed", config.node_id)

    try:
        asyncio.run(main())
    except OSError as exc:
        log.error("Exiting Kafka due to fatal exception: Socket server failed to bind to %s:%d: %s.",
                  host, port, exc.strerror)
        return 1
    finally:
        _remove_pid(data_dir)
        for fd in lock_fds:
            os.close(fd)
    return 0


def _endpoints(config) -> list:
    """The server's endpoints: each listener with its TLS context and SASL settings, checked
    now so that a listener that cannot be served stops the broker with one line."""
    from pk.engine.broker.sasl import sasl_settings
    from pk.engine.broker.tls import server_context
    from pk.engine.server import Endpoint

    return [Endpoint(listener, server_context(config, listener) if listener.tls else None,
                     sasl_settings(config, listener) if listener.sasl else None)
            for listener in config.listeners]


def _pid_path(data_dir: str) -> str:
    return os.path.join(data_dir, ".pk", "server.pid")


def _write_pid(data_dir: str) -> None:
    with open(_pid_path(data_dir), "w") as f:
        f.write(f"{os.getpid()}\n")


def _remove_pid(data_dir: str) -> None:
    try:
        os.unlink(_pid_path(data_dir))
    except FileNotFoundError:
        pass


def _daemonize(argv: list[str], config_path: str) -> None:
    """Start the broker detached, its output in $LOG_DIR/pkServer.out (Kafka: kafkaServer.out)."""
    log_dir = os.environ.get("LOG_DIR") or os.path.join(os.getcwd(), "logs")
    os.makedirs(log_dir, exist_ok=True)
    out = open(os.path.join(log_dir, "pkServer.out"), "ab")
    subprocess.Popen([sys.executable, "-m", "pk.cli.server_start", *argv], stdin=subprocess.DEVNULL,
                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _node_id_of(words: list[str]) -> str | None:
    """The node id a pk-server-start command line runs with (override, else its config file)."""
    args = words[words.index("pk.cli.server_start") + 1:] if "pk.cli.server_start" in words else words[2:]
    overrides = {}
    for i, word in enumerate(args):
        if word == "--override" and i + 1 < len(args) and "=" in args[i + 1]:
            key, value = args[i + 1].split("=", 1)
            overrides[key.strip()] = value.strip()
    for key in ("node.id", "broker.id"):
        if key in overrides:
            return overrides[key]
    config = next((a for a in args if not a.startswith("-") and "=" not in a), None)
    if config:
        try:
            from pk.commands.properties import load_properties

            props = load_properties(config)
            return props.get("node.id") or props.get("broker.id")
        except Exception:
            return None
    return None


def _broker_pids(node_id: str | None = None) -> list[int]:
    """Processes running pk-server-start (what kafka-server-stop.sh finds with ps),
    optionally only those with that node id (kafka-server-stop.sh --node-id)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in cmdline if w]
        if any(w.endswith("pk-server-start") for w in words[:2]) or "pk.cli.server_start" in words:
            if node_id is None or _node_id_of(words) == node_id:
                pids.append(int(entry))
    return pids


def stop(argv: list[str] | None = None) -> None:
    """pk-server-stop [--process-role=value] [--node-id=value], as kafka-server-stop.sh."""
    _maybe_complete()
    argv = sys.argv[1:] if argv is None else argv
    node_id = None
    for arg in argv:
        if arg.startswith("--node-id="):
            node_id = arg.split("=", 1)[1]
        elif not arg.startswith("--process-role="):  # every pk process is a broker
            sys.stderr.write("Usage: pk-server-stop [--process-role=value] [--node-id=value]\n")
            sys.exit(1)
    pids = _broker_pids(node_id)
    if not pids:
        sys.stdout.write("No kafka server to stop\n")
        sys.exit(1)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    sys.exit(0)


def _completion_command():
    """A Click description of the arguments, for shell completion only (the scripts parse
    Kafka's `[-daemon] config [--override k=v]*` themselves)."""
    import click

    return click.Command("pk-server-start", params=[
        click.Option(["-daemon", "--daemon"], is_flag=True),
        click.Option(["--override"], multiple=True, metavar="PROPERTY=VALUE"),
        click.Argument(["config"], type=click.Path(exists=True, dir_okay=False), required=False),
    ])


def __getattr__(name):
    if name == "cli":  # built on demand: the broker's start-up never imports click
        return _completion_command()
    raise AttributeError(name)


def main() -> None:
    start()


if __name__ == "__main__":
    start()
