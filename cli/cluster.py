"""pk-cluster: Kafka 4.4's kafka-cluster (ClusterTool), its `cluster-id` command: on the
bundled engine (its cluster id) or, with --bootstrap-server, a cluster's.

ClusterTool parses with argparse4j: errors are `kafka-cluster: error: <message>` (one line
here; Kafka prints its usage before it, wrapped), exit 1. Its other commands (unregister,
unregister-controller, list-endpoints, api-versions) are not implemented yet: pk says so in
one line.
"""

from __future__ import annotations

import os
import sys

import click

from .common import QuietPipe, fail, run_tool

PROG = "kafka-cluster"
COMMANDS = ("cluster-id", "unregister", "unregister-controller", "list-endpoints", "api-versions")
_WITH_VALUE = {"--bootstrap-server": "bootstrap_server", "-b": "bootstrap_server",
               "--bootstrap-controller": "bootstrap_controller", "-C": "bootstrap_controller",
               "--config": "config", "--command-config": "command_config", "-c": "command_config",
               "--data-dir": "data_dir"}
_ARG_NAMES = {"bootstrap_server": "--bootstrap-server/-b", "bootstrap_controller": "--bootstrap-controller/-C",
              "config": "--config", "command_config": "--command-config/-c", "data_dir": "--data-dir"}
USAGE = ("usage: kafka-cluster cluster-id [-h] [--config CONFIG] [--command-config COMMAND_CONFIG] "
         "(--bootstrap-server BOOTSTRAP_SERVER | --bootstrap-controller BOOTSTRAP_CONTROLLER)\n\n"
         "Get information about the ID of a cluster.\n\n"
         "  --bootstrap-server, -b    host:port pairs of the Kafka cluster (without it: the bundled engine)\n"
         "  --bootstrap-controller, -C  host:port pairs of the KRaft controllers\n"
         "  --command-config, -c      Config properties file for the Admin client\n"
         "  --config                  (DEPRECATED) the same as --command-config\n"
         "  --data-dir                the bundled engine's data directory\n")


def _error(message: str) -> None:
    fail(f"{PROG}: error: {message}")


def parse(args: list[str]) -> tuple[str, dict]:
    if not args:
        _error("too few arguments")
    if args[0] in ("-h", "--help"):
        click.echo(USAGE)
        sys.exit(0)
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        _error(f"invalid choice: '{command}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
    options: dict = {}
    unknown = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg in ("-h", "--help"):
            click.echo(USAGE)
            sys.exit(0)
        if name in _WITH_VALUE:
            key = _WITH_VALUE[name]
            if not eq:
                if i + 1 >= len(rest) or (rest[i + 1].startswith("-") and len(rest[i + 1]) > 1):
                    _error(f"argument {_ARG_NAMES[key]}: expected one argument")
                value = rest[i + 1]
                i += 1
            options[key] = value
        else:
            unknown.append(arg)
        i += 1
    if unknown:
        _error("unrecognized arguments: " + " ".join(f"'{u}'" for u in unknown))
    if options.get("bootstrap_server") is not None and options.get("bootstrap_controller") is not None:
        _error("argument --bootstrap-controller/-C: not allowed with argument --bootstrap-server/-b")
    return command, options


def run(args: list[str]) -> None:
    command, options = parse(list(args))
    if command != "cluster-id":
        fail(f"pk: pk-cluster does not implement kafka-cluster {command} yet")
    if options.get("config") is not None:
        sys.stderr.write("Option --config has been deprecated and will be removed in a future version. "
                         "Use --command-config instead.\n")
    config = options.get("command_config") or options.get("config")
    bootstrap = options.get("bootstrap_server") or options.get("bootstrap_controller")
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.engine.errors import KafkaError

    try:
        if bootstrap is None:
            from pk.commands.properties import load_properties
            from pk.engine.engine import Engine

            if config is not None:
                load_properties(config)
            with Engine(options.get("data_dir")) as engine:
                cluster_id = engine.cluster_id
        else:
            from pk.commands.backends.kafka_admin import open_admin

            admin = open_admin(bootstrap, config, None)
            try:
                cluster_id = admin.result(admin.client.describe_cluster(request_timeout=admin.timeout_s),
                                          "listNodes").cluster_id
            finally:
                admin.close()
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "java_class", None)
        fail(f"{java}: {exc}" if java else str(exc))
    if cluster_id:
        click.echo(f"Cluster ID: {cluster_id}")
    else:
        click.echo("No cluster ID found. The Kafka version is probably too old.")
    sys.exit(0)


def _complete(ctx, _param, incomplete: str):
    from click.shell_completion import CompletionItem

    if ctx.params.get("args"):
        return [CompletionItem(o) for o in ("--bootstrap-server", "--bootstrap-controller", "--command-config",
                                            "--data-dir") if o.startswith(incomplete)]
    return [CompletionItem(c) for c in COMMANDS if c.startswith(incomplete)]


class _ClusterCommand(QuietPipe, click.Command):
    """Hands every argument to run(); Click only answers shell-completion requests."""

    def main(self, args=None, prog_name=None, **extra):
        if args is None:
            args = sys.argv[1:]
        complete_var = "_PK_CLUSTER_COMPLETE"
        if os.environ.get(complete_var):
            return super().main(args, prog_name or "pk-cluster", complete_var=complete_var, **extra)
        try:
            run(list(args))
        except BrokenPipeError:
            from .common import stdout_closed

            stdout_closed()


@click.command(cls=_ClusterCommand, add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete)
def cli(args):
    """The Kafka cluster tool (kafka-cluster cluster-id)."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-cluster")


if __name__ == "__main__":
    main()
