"""pk-zookeeper-shell: Kafka's zookeeper-shell.sh, ZooKeeper's command-line shell.

    pk-zookeeper-shell host:port[/chroot] [command [args]]

With a command, runs it and exits with its status; without one, reads commands from stdin
(one per line, `quit` to end). See pk.commands.zookeeper_shell for the commands.
"""

from __future__ import annotations

import sys

import click

from .common import run_tool

USAGE = "USAGE: pk-zookeeper-shell zookeeper_host:port[/path] [args...]"


def _prompted_lines(server: str):
    """Lines typed at a terminal, after ZooKeeper's prompt (readline gives editing and history)."""
    import readline  # noqa: F401  (input() uses it once imported)

    number = 0
    while True:
        try:
            yield input(f"[zk: {server}(CONNECTED) {number}] ")
        except EOFError:
            sys.stdout.write("\n")
            return
        number += 1


def shell(argv: list[str]) -> int:
    from pk.commands import zookeeper_shell as zk

    if argv and argv[0] in ("--help", "-help", "-h"):
        sys.stdout.write(USAGE + "\n\nCommands (one on the command line, or one a line on stdin):\n"
                         + "".join(f"\t{spec.usage}\n" for _, spec in sorted(zk.SPECS.items())))
        return 0
    if not argv or argv[0].startswith("-"):
        # zookeeper-shell.sh prints its usage on stdout.
        sys.stdout.write(USAGE + "\n")
        return 1
    server, words = argv[0], argv[1:]
    if words:
        return zk.run_once(server, words)
    if sys.stdin.isatty():
        return zk.run_interactive(server, _prompted_lines(server), terminal=True)
    return zk.run_interactive(server, sys.stdin)


def run_class(argv: list[str]) -> None:
    """`kafka-run-class ZooKeeperMainWithTlsSupportForKafka -server host:port [command]` (what
    zookeeper-shell.sh runs); without -server ZooKeeper's shell connects to localhost:2181."""
    args = list(argv)
    if args[:1] == ["-server"]:
        args = args[1:]
    else:
        args = ["localhost:2181", *args]
    sys.exit(shell(args))


@click.command("pk-zookeeper-shell", context_settings={"ignore_unknown_options": True,
                                                      "allow_interspersed_args": False,
                                                      "help_option_names": []})
@click.argument("server", required=False)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def cli(server, command):
    """ZooKeeper's shell on SERVER (host:port[/chroot]): one COMMAND, or commands from stdin."""
    sys.exit(shell(([server] if server else []) + list(command)))


def main() -> None:
    run_tool(cli, "pk-zookeeper-shell")
