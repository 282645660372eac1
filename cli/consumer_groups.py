"""ConsumerGroupCommand (kafka-consumer-groups.sh, org.apache.kafka.tools.consumer.group.ConsumerGroupCommand,
Kafka 4.4; kafka.admin.ConsumerGroupCommand before 3.8).

    pk-run-class kafka.admin.ConsumerGroupCommand --describe --group my-group
    pk-run-class kafka.admin.ConsumerGroupCommand --reset-offsets --group g --topic t --to-earliest --execute

Works on the bundled engine, or with --bootstrap-server on a cluster through confluent-kafka's
AdminClient (commands/backends/kafka_admin.py). Output follows Kafka 4.4 byte for byte; where Kafka
prints `Error: ...` on stdout and exits 0, pk prints that line on stderr and exits 1.
Option-parse failures, which 3.7 leaves to the JVM, print the JVM's first line:
`Exception in thread "main" joptsimple.<Exception>: <message>`.
"""

from __future__ import annotations

import sys

import click

from .completion import complete_groups, complete_topics
from .common import data_dir_option, fail, run_tool, stdout_closed, version_option
from .output import output_option
from .run_class import JoptCommand

HELP_LINE = "This tool helps to list, describe, delete and manage the offsets of consumer groups."


class ConsumerGroupCommandCli(JoptCommand):
    def error_line(self, exception_class: str, message: str) -> str:
        # 3.7 parses its options outside main's try: the JVM reports jopt's exception.
        return f'Exception in thread "main" {exception_class}: {message}'


@click.command(cls=ConsumerGroupCommandCli, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", multiple=True, metavar="SERVER",
              help="The server(s) to connect to, host:port[,host:port]. Without it pk works on the bundled "
                   "engine's data directory.")
@click.option("--command-config", multiple=True, metavar="FILE",
              help="Property file containing configs to be passed to Admin Client and Consumer (Java client "
                   "keys), for --bootstrap-server.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="A librdkafka property for the --bootstrap-server client (as kcat's -X); wins over "
                   "--command-config.")
@click.option("--list", "list_", is_flag=True, help="List all consumer groups.")
@click.option("--describe", is_flag=True,
              help="Describe consumer group and list offset lag (number of messages not yet processed) "
                   "related to given group.")
@click.option("--delete", is_flag=True,
              help="Pass in groups to delete topic partition offsets and ownership information over the "
                   "entire consumer group. For instance --group g1 --group g2")
@click.option("--reset-offsets", is_flag=True,
              help="Reset offsets of consumer group. Supports one consumer group at the time, and instances "
                   "should be inactive. Has 2 execution options: --dry-run (the default) to plan which offsets "
                   "to reset, and --execute to update the offsets. Additionally, the --export option is used "
                   "to export the results to a CSV format. You must choose one of the following reset "
                   "specifications: --to-datetime, --by-duration, --to-earliest, --to-latest, --shift-by, "
                   "--from-file, --to-current, --to-offset. To define the scope use --all-topics or --topic. "
                   "One scope must be specified unless you use '--from-file'.")
@click.option("--delete-offsets", is_flag=True,
              help="Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.")
@click.option("--group", multiple=True, metavar="GROUP", shell_complete=complete_groups,
              help="The consumer group we wish to act on (repeatable).")
@click.option("--all-groups", is_flag=True, help="Apply to all consumer groups.")
@click.option("--topic", multiple=True, metavar="TOPIC", shell_complete=complete_topics,
              help="The topic whose consumer group information should be deleted or topic whose should be "
                   "included in the reset offset process. In `reset-offsets` case, partitions can be specified "
                   "using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the "
                   "process. Reset-offsets also supports multiple topic inputs.")
@click.option("--all-topics", is_flag=True,
              help="Consider all topics assigned to a group in the `reset-offsets` process.")
@click.option("--members", is_flag=True, help="Describe members of the group (with --describe).")
@click.option("--offsets", is_flag=True,
              help="Describe the group and list all topic partitions in the group along with their offset lag "
                   "(the default sub-action of --describe).")
@click.option("--state", multiple=True, is_flag=False, flag_value="", metavar="[STATES]",
              help="With --describe: the state of the group. With --list: the state of all groups, or only "
                   "groups in the given comma-separated states, e.g. --list --state Stable,Empty.")
@click.option("--type", multiple=True, is_flag=False, flag_value="", metavar="[TYPES]",
              help="When specified with --list, it displays the types of the groups. It can also be used to "
                   "list groups with specific types, e.g. --list --type classic,consumer.")
@click.option("--validate-regex", multiple=True, metavar="REGEX",
              help="Validate the syntax of the regular expression according to the RE2 format.")
@click.option("--verbose", is_flag=True,
              help="Provide additional information, if any, when describing the group (with --members: "
                   "the assignment).")
@click.option("--dry-run", is_flag=True,
              help="Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets.")
@click.option("--execute", is_flag=True, help="Execute operation. Supported operations: reset-offsets.")
@click.option("--export", is_flag=True,
              help="Export operation execution to a CSV file. Supported operations: reset-offsets.")
@click.option("--to-offset", multiple=True, metavar="OFFSET", help="Reset offsets to a specific offset.")
@click.option("--shift-by", multiple=True, metavar="N",
              help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
@click.option("--to-datetime", multiple=True, metavar="DATETIME",
              help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
@click.option("--by-duration", multiple=True, metavar="DURATION",
              help="Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'")
@click.option("--from-file", multiple=True, metavar="PATH", help="Reset offsets to values defined in CSV file.")
@click.option("--to-earliest", is_flag=True, help="Reset offsets to earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset offsets to latest offset.")
@click.option("--to-current", is_flag=True, help="Reset offsets to current offset.")
@click.option("--timeout", multiple=True, metavar="MS",
              help="Admin call timeout in milliseconds (default: 5000); the bundled engine does not wait.")
@click.option("--watch", metavar="SECONDS",
              help="pk only: with --describe, redraw the groups' lag every SECONDS with its change, the "
                   "consume and produce rates, the time to catch up and a lag trend (README: \"Lag at a "
                   "glance\"); Ctrl-C stops.")
@output_option
@data_dir_option
@version_option
@click.argument("ignored", nargs=-1, required=False, metavar="")  # jopt ignores non-option words
def cli(data_dir, ignored, list_, state, type, bootstrap_server, command_config, x, watch, output, **opts):
    from pk.commands import consumer_groups as cmd
    from pk.commands.errors import CommandFailure, JavaError, UsageError
    from pk.engine.errors import DataDirError, KafkaError

    options = cmd.GroupOptions(
        list=list_, state=[s for s in state if s != ""] if state else None,
        type=[t for t in type if t != ""] if type else None,
        **{k: list(v) if isinstance(v, tuple) else v for k, v in opts.items()})

    def out(text: str) -> None:
        sys.stdout.write(text)

    def err(text: str) -> None:
        sys.stdout.flush()
        sys.stderr.write(text)
        sys.stderr.flush()

    console = cmd.Console(out, err)
    run = cmd.run
    if output == "json":  # the document alone on stdout: Kafka's other stdout lines go to stderr
        from functools import partial

        from pk.commands import consumer_groups_json

        console = cmd.Console(err, err)
        run = partial(consumer_groups_json.run, emit=lambda line: out(line + "\n"))
    try:
        cmd.check_args(options, console)
        if output == "json":
            consumer_groups_json.check(options)
    except JavaError as exc:
        fail(exc.line)
    except UsageError as exc:
        fail(str(exc))

    if watch is not None and output == "json":
        fail("--watch draws a table: it cannot be used with --output json")
    seconds = _watch_seconds(watch, options) if watch is not None else None
    backend = closing = None
    try:
        if seconds is not None:
            from pk.commands import lag_watch

            lag_watch.watch(lambda: _open_backend(data_dir, bootstrap_server, command_config, x, options),
                            options, seconds, sys.stdout)
        if options.validate_regex:  # needs no cluster
            cmd.run(None, options, console)
            sys.stdout.flush()
            sys.exit(0)
        backend = _open_backend(data_dir, bootstrap_server, command_config, x, options)
        run(backend, options, console)
    except UsageError as exc:
        fail(str(exc))
    except CommandFailure as exc:
        fail("Error: " + cmd.FAILED_PREFIX + str(exc))
    except DataDirError as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail("Error: " + cmd.FAILED_PREFIX + str(exc))
    except BrokenPipeError:
        stdout_closed()
    except OSError as exc:
        fail("Error: " + cmd.FAILED_PREFIX + (f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc)))
    finally:
        if backend is not None:
            try:
                backend.close()
            except (KafkaError, OSError) as exc:  # after an earlier failure: that one was printed
                closing = exc
    if closing is not None:
        fail(f"Error: {cmd.CLOSE_FAILED}{closing}")
    sys.stdout.flush()
    sys.exit(1 if console.failed else 0)


def _watch_seconds(text: str, options) -> float:
    """--watch SECONDS: a number > 0, with --describe's offsets view only."""
    from pk.commands.lag_watch import parse_seconds

    if not options.describe or options.members or options.state is not None:
        fail("--watch goes with --describe (the offsets view) only")
    try:
        return parse_seconds(text)
    except ValueError as exc:
        fail(str(exc))


def _open_backend(data_dir, bootstrap_server, command_config, x, options):
    """The bundled engine, or with --bootstrap-server the cluster (commands/backends/kafka_admin.py),
    bounded by --timeout per Admin call as in Kafka. Kafka 3.7 creates its Admin client when
    the command starts, inside its error handling: what stops it (an unreadable
    --command-config, a configuration librdkafka cannot take) is
    `Error: Executing consumer group command failed due to <message>`."""
    from pk.commands import consumer_groups as cmd
    from pk.commands.client_config import check_target, java_message
    from pk.commands.errors import ClientConfigError, CommandFailure, UsageError
    from pk.commands.errors import PropertiesError
    from pk.commands.properties import load_properties

    bootstrap = cmd.single(list(bootstrap_server), "bootstrap-server")
    config = cmd.single(list(command_config), "command-config")
    if bootstrap is None and not x:
        from pk.commands.backends.engine_groups import EngineGroupsBackend

        if config is not None:
            try:
                load_properties(config)  # read, as Kafka reads it; the engine needs none of it
            except PropertiesError as exc:
                raise CommandFailure(java_message(str(exc))) from None
        return EngineGroupsBackend(data_dir)
    from pk.commands.backends.kafka_admin import KafkaGroupsBackend, open_admin

    try:
        extra = check_target(bootstrap, x, data_dir)
    except ClientConfigError as exc:  # a bad address or -X argument: a usage error
        raise UsageError(str(exc)) from None
    try:
        timeout = cmd.java_long(options.timeout, "timeout", 5000)
    except CommandFailure:
        timeout = 5000  # reported by the command at its first Admin call, as Kafka does
    try:
        return KafkaGroupsBackend(open_admin(bootstrap, config, extra, timeout_ms=max(timeout, 1)))
    except (ClientConfigError, PropertiesError) as exc:
        raise CommandFailure(java_message(str(exc))) from None


def main() -> None:
    run_tool(cli, "pk-consumer-groups")


if __name__ == "__main__":
    main()
