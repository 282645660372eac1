"""pk-metadata-quorum: Kafka 4.4's kafka-metadata-quorum (MetadataQuorumCommand) against a
cluster: `describe --status`, `describe --replication [--human-readable]`, `add-controller
[--dry-run]` (the controller's own configuration is the --command-config file) and
`remove-controller --controller-id ID --controller-directory-id DIR [--dry-run] [--unregister]`.

The tool parses with argparse4j: a parse error is `kafka-metadata-quorum: error: <message>`
(one line here; Kafka prints its usage before it), exit 1. There is no bundled-engine mode:
pk keeps no metadata quorum, and Kafka's tool requires --bootstrap-server or
--bootstrap-controller.
"""

from __future__ import annotations

import os
import sys

import click

from .argparse4j import Arg, HelpRequested, ParseError, Parser
from .common import OwnParserCommand, fail, run_tool

PROG = "kafka-metadata-quorum"
COMMANDS = ("describe", "add-controller", "remove-controller")
MAIN = Parser([Arg(("-h", "--help"), "help", action="help"),
               Arg(("--bootstrap-server",), "bootstrap_server", mutex=True),
               Arg(("--bootstrap-controller",), "bootstrap_controller", mutex=True),
               Arg(("--command-config",), "command_config")])
SUBCOMMANDS = {
    "describe": Parser([Arg(("-h", "--help"), "help", action="help"),
                        Arg(("--status",), "status", action="store_true", default=False),
                        Arg(("--replication",), "replication", action="store_true", default=False),
                        Arg(("--human-readable",), "human_readable", action="store_true", default=False)]),
    "add-controller": Parser([Arg(("-h", "--help"), "help", action="help"),
                              Arg(("--dry-run",), "dry_run", action="store_true", default=False)]),
    "remove-controller": Parser([Arg(("-h", "--help"), "help", action="help"),
                                 Arg(("--controller-id", "-i"), "controller_id", type="Integer", required=True),
                                 Arg(("--controller-directory-id", "-d"), "controller_directory_id", required=True),
                                 Arg(("--dry-run",), "dry_run", action="store_true", default=False),
                                 Arg(("--unregister",), "unregister", action="store_true", default=False)]),
}
USAGE = ("usage: kafka-metadata-quorum [-h] [--command-config COMMAND_CONFIG] (--bootstrap-server BOOTSTRAP_SERVER | "
         "--bootstrap-controller BOOTSTRAP_CONTROLLER) {describe,add-controller,remove-controller} ...\n\n"
         "Describes and changes a KRaft cluster's metadata quorum.\n\n"
         "  describe --status                 the quorum's leader, epoch, high watermark, voters and observers\n"
         "  describe --replication [--human-readable]\n"
         "                                    each replica's log end offset, lag and fetch times\n"
         "  add-controller [--dry-run]        add the controller whose configuration is --command-config\n"
         "  remove-controller -i ID -d DIR [--dry-run] [--unregister]\n"
         "                                    remove a controller from the voters (and unregister it)\n\n"
         "  --bootstrap-server                host:port pairs of the cluster's brokers\n"
         "  --bootstrap-controller            host:port pairs of the cluster's controllers\n"
         "  --command-config                  the admin client's properties (for add-controller: the\n"
         "                                    controller's own configuration too)\n")
SUB_USAGE = {
    "describe": "usage: kafka-metadata-quorum (--bootstrap-server B | --bootstrap-controller C) describe [-h] "
                "[--status] [--replication] [--human-readable]\n",
    "add-controller": "usage: kafka-metadata-quorum (--bootstrap-server B | --bootstrap-controller C) "
                      "add-controller [-h] [--dry-run]\n",
    "remove-controller": "usage: kafka-metadata-quorum (--bootstrap-server B | --bootstrap-controller C) "
                         "remove-controller [-h] --controller-id CONTROLLER_ID --controller-directory-id "
                         "CONTROLLER_DIRECTORY_ID [--dry-run] [--unregister]\n",
}


def _error(message: str) -> None:
    fail(f"{PROG}: error: {message}")


def _split(args: list[str]) -> int:
    """Where the subcommand is: the first argument that is not an option or an option's value."""
    i = 0
    while i < len(args):
        term = args[i]
        if term == "--" or not term.startswith("-") or term == "-":
            return i
        flag, eq, _ = term.partition("=")
        try:
            arg = MAIN._resolve(flag)
        except ParseError:
            arg = None
        i += 1 if (arg is None or arg.action != "store" or eq) else 2
    return len(args)


def parse(args: list[str]) -> tuple[str, dict]:
    """argparse4j's order: the main options as they come, the subcommand and its options, then
    the main parser's required group."""
    at = _split(args)
    deferred = None
    try:
        options = MAIN.parse(args[:at])
    except HelpRequested:
        click.echo(USAGE)
        sys.exit(0)
    except ParseError as exc:
        if not str(exc).startswith("one of the arguments"):
            _error(str(exc))
        deferred, options = str(exc), {}
    if at >= len(args) or args[at] == "--":
        _error("too few arguments")
    command = args[at]
    if command not in COMMANDS:
        _error(f"invalid choice: '{command}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
    try:
        options.update(SUBCOMMANDS[command].parse(args[at + 1:]))
    except HelpRequested:
        click.echo(SUB_USAGE[command])
        sys.exit(0)
    except ParseError as exc:
        _error(str(exc))
    if deferred:
        _error(deferred)
    return command, options


def run(args: list[str]) -> None:
    command, options = parse(list(args))
    from pk.commands import metadata_quorum as cmd
    from pk.commands.backends.kafka_admin import AdminError
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    config = options.get("command_config")
    try:
        if config is not None and not os.path.exists(config):
            raise cmd.QuorumCommandError(f"Properties file {config} does not exist.")
        props = load_properties(config) if config is not None else {}
        lines = _execute(command, options, props, cmd)
    except cmd.QuorumCommandError as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except AdminError as exc:
        fail(exc.execution_message())
    except (KafkaError, ConnectionError) as exc:
        fail(str(exc))
    for line in lines:
        click.echo(line)
    sys.exit(0)


def _execute(command: str, options: dict, props: dict, cmd) -> list[str]:
    """The checks Kafka's tool makes before it connects, then the command on a connection."""
    if command == "describe":
        if options["status"] and options["replication"]:
            raise cmd.QuorumCommandError("Only one of --status or --replication should be specified with describe "
                                         "sub-command")
        if options["status"] and options["human_readable"]:
            raise cmd.QuorumCommandError("The option --human-readable is only supported along with --replication")
        if not options["status"] and not options["replication"]:
            raise cmd.QuorumCommandError("One of --status or --replication must be specified with describe "
                                         "sub-command")
    if command == "add-controller" and options.get("command_config") is None:
        raise cmd.QuorumCommandError("You must supply the configuration file of the controller you are adding when "
                                     "using add-controller.")
    if command == "add-controller" and options["dry_run"]:
        return [cmd.add_controller(None, props, True)]
    if command == "remove-controller" and options["dry_run"]:
        return cmd.remove_controller(None, options["controller_id"], options["controller_directory_id"], True,
                                     options["unregister"])
    if command == "remove-controller":  # its own checks come before any request
        if options["controller_id"] < 0:
            raise cmd.QuorumCommandError(f"Invalid negative --controller-id: {options['controller_id']}")
        cmd.parse_directory_id(options["controller_directory_id"])
    if command == "add-controller":
        cmd.controller_id(props), cmd.directory_id(cmd.metadata_directory(props)), cmd.controller_endpoints(props)
    from pk.commands.backends.wire import WireClient, connection_security

    security = connection_security(props)
    client = WireClient(options.get("bootstrap_server") or options["bootstrap_controller"], 30.0,
                        "describeMetadataQuorum", security=security)
    try:
        controllers = options.get("bootstrap_server") is None
        if controllers:
            cmd.check_controller_endpoint(client)
        if command == "describe" and options["status"]:
            return cmd.status_lines(cmd.cluster_id(client, controllers), cmd.describe_quorum(client))
        if command == "describe":
            return cmd.replication_lines(cmd.describe_quorum(client), options["human_readable"])
        if command == "add-controller":
            return [cmd.add_controller(client, props, False)]
        return cmd.remove_controller(client, options["controller_id"], options["controller_directory_id"], False,
                                     options["unregister"])
    finally:
        client.close()


def _complete(ctx, _param, incomplete: str):
    from click.shell_completion import CompletionItem

    words = [*COMMANDS, "--bootstrap-server", "--bootstrap-controller", "--command-config", "--status",
             "--replication", "--human-readable", "--dry-run", "--controller-id", "--controller-directory-id",
             "--unregister"]
    return [CompletionItem(w) for w in words if w.startswith(incomplete)]


@click.command(cls=OwnParserCommand, prog="pk-metadata-quorum", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete)
def cli(args):
    """A KRaft cluster's metadata quorum (kafka-metadata-quorum)."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-metadata-quorum")


if __name__ == "__main__":
    main()
