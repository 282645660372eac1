"""pk-console-consumer: read topics and write their records to standard output, from the
bundled engine or, with --bootstrap-server, from a cluster through confluent-kafka."""

from __future__ import annotations

import signal
import sys

import click

from .completion import complete_groups, complete_topics
from .common import JAVA_INT, JAVA_LONG, KafkaCommand, data_dir_option, fail, run_tool, version_option
from .output import output_option

HELP_LINE = "This tool helps to read data from Kafka topics and outputs it to standard output."


class _Uncaught:
    """An Integer/Long option Kafka 4.4's console consumer converts outside its option
    parsing: a bad value escapes as an uncaught exception, whose first line pk prints."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            raise click.BadParameter(f'Exception in thread "main" joptsimple.OptionArgumentConversionException: '
                                     f"{exc.message}", ctx, param) from None


class UncaughtInt(_Uncaught, type(JAVA_INT)):
    pass


class UncaughtLong(_Uncaught, type(JAVA_LONG)):
    pass


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER",
              help="The server(s) to connect to, host:port[,host:port]; without it pk reads the bundled engine.")
@click.option("--topic", metavar="TOPIC", shell_complete=complete_topics, help="The topic to consume on.")
@click.option("--include", metavar="REGEX", help="Regular expression of the topics to consume (whole names).")
@click.option("--whitelist", metavar="REGEX",
              help="Deprecated alias of --include (removed in Kafka 4.0; pk keeps it for older scripts); ignored if "
                   "--include is given.")
@click.option("--partition", type=UncaughtInt(), metavar="N",
              help="The partition to consume from; starts at the end unless --offset or --from-beginning.")
@click.option("--offset", metavar="OFFSET",
              help="earliest, latest, or a non-negative offset (needs --partition).  [default: latest]")
@click.option("--from-beginning", is_flag=True,
              help="Start with the earliest record when the group has no committed offset.")
@click.option("--group", metavar="GROUP", shell_complete=complete_groups, help="The consumer group id.")
@click.option("--max-messages", type=JAVA_INT, metavar="N", help="Exit after N records.")
@click.option("--timeout-ms", type=UncaughtLong(), metavar="MS", help="Exit when no record arrives for this long.")
@click.option("--skip-message-on-error", is_flag=True, help="Skip a record that cannot be printed instead of stopping.")
@click.option("--formatter", metavar="CLASS",
              help="The message formatter class.  [default: org.apache.kafka.tools.consumer.DefaultMessageFormatter]")
@click.option("--formatter-property", "formatter_properties", multiple=True, metavar="KEY=VALUE",
              help="Formatter property: print.timestamp, print.key, print.value, print.partition, print.offset, "
                   "print.epoch, print.delivery, print.headers, key.separator, line.separator, headers.separator, "
                   "null.literal, key.deserializer, value.deserializer, headers.deserializer.")
@click.option("--property", "properties", multiple=True, metavar="KEY=VALUE",
              help="(DEPRECATED) The same as --formatter-property.")
@click.option("--formatter-config", metavar="FILE",
              help="Properties file for the formatter (--formatter-property wins).")
@click.option("--key-deserializer", metavar="CLASS", help="Deserializer class for keys.")
@click.option("--value-deserializer", metavar="CLASS", help="Deserializer class for values.")
@click.option("--command-property", "command_properties", multiple=True, metavar="KEY=VALUE",
              help="A consumer config (wins over --command-config).")
@click.option("--consumer-property", "consumer_properties", multiple=True, metavar="KEY=VALUE",
              help="(DEPRECATED) The same as --command-property.")
@click.option("--command-config", metavar="FILE", help="Consumer config properties file.")
@click.option("--consumer.config", "consumer_config", metavar="FILE",
              help="(DEPRECATED) The same as --command-config.")
@click.option("--isolation-level", metavar="LEVEL",
              help="read_committed or read_uncommitted.  [default: read_uncommitted]")
@click.option("--enable-systest-events", is_flag=True, help="Print lifecycle events (shutdown_complete).")
@click.option("--from-time", metavar="TIME",
              help="pk only: start each partition at its first record with a timestamp at or after TIME "
                   "(ISO-8601, naive = local time; epoch ms; or relative: -15m, -2h, -1d).")
@click.option("--to-time", metavar="TIME",
              help="pk only: stop each partition before its first record with a timestamp after TIME "
                   "(looked up once; same forms as --from-time).")
@click.option("--to-offset", metavar="OFFSET",
              help="pk only: stop each partition before OFFSET (exclusive).")
@click.option("--until-end", is_flag=True,
              help="pk only: stop each partition at its end offset as it was at start (the last stable offset "
                   "under read_committed), and exit when all are done.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="A librdkafka property for the --bootstrap-server client (as kcat's -X); wins over the "
                   "consumer configuration.")
@output_option
@click.option("--format", "kcat_format", metavar="FMT",
              help="pk only: print each record as kcat's -f format string says (%t %p %o %k %s %K %S %T %h %R, "
                   "\\n \\t escapes) instead of a formatter's text.")
@data_dir_option
@version_option
def cli(data_dir, bootstrap_server, x, output, kcat_format, **opts):
    from pk.commands import consumer as cmd
    from pk.commands.errors import ConsumerFailure, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    lists = {name: list(opts.pop(name)) for name in ("properties", "formatter_properties", "consumer_properties",
                                                     "command_properties")}
    options = cmd.ConsumerOptions(**lists, **opts)
    try:
        own_formatter = _pk_formatter(output, kcat_format, options)
        plan = cmd.plan(options, warn=lambda line: print(line, flush=True),
                        log=lambda line: sys.stderr.write(line + "\n"))
    except (UsageError, ConsumerFailure, PropertiesError, OSError, ValueError) as exc:
        fail(str(exc))
    if own_formatter is not None:
        plan.formatter = own_formatter

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    consumer = backend = None
    auth_error: tuple = ()  # what Kafka reports as "Authentication failed"
    try:
        if bootstrap_server is None and not x:
            from pk.commands.backends.engine import EngineBackend

            backend = EngineBackend(data_dir)
        else:
            from pk.commands.backends import kafka_clients

            extra = kafka_clients.remote_target(bootstrap_server, x, data_dir)
            backend = kafka_clients.ConsumerBackend(bootstrap_server, extra)
            auth_error = (kafka_clients.AuthenticationError,)
        # A consumer that cannot even start (unreachable cluster, refused configuration) is
        # one line, exit 1.
        consumer = backend.consumer(plan.config, track_ends=plan.ranges.active())
        if not plan.group_passed and hasattr(consumer, "private_group_if_unwritable"):
            consumer.private_group_if_unwritable = True  # its generated group: memory will do
        note = cmd.protocol_note(options, plan)
        if note is not None:
            sys.stderr.write(note + "\n")
            sys.stderr.flush()
        failure = cmd.pattern_failure(options)
        if failure is not None:
            consumer.close()
            backend.close()
            sys.stderr.write(failure + "\n")
            sys.exit(1)
    except KafkaError as exc:
        if backend is not None:
            backend.close()
        fail(str(exc))
    except KeyboardInterrupt:
        sys.exit(130)

    tally = cmd.Tally()
    code = 0
    error = None  # Kafka reports the count first, then the error that ended the run
    stdout = sys.stdout.buffer
    try:
        cmd.position(consumer, options, plan)
        cmd.consume(consumer, options, plan, stdout, lambda line: sys.stderr.write(line + "\n"), tally)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        sys.stderr.write("Unable to write to standard out, closing consumer.\n")
        sys.stdout = None  # do not flush into the closed pipe again at exit
    except (KafkaError, ConsumerFailure) as exc:
        if isinstance(exc, auth_error):
            error = "Authentication failed: terminating consumer process"
        else:
            error = f"Unknown error when running consumer: {exc}"
        code = 1
    finally:
        try:
            if consumer is not None:
                consumer.close()
            if backend is not None:
                backend.close()
        except KafkaError as exc:
            error = error or f"Unknown error when running consumer: {exc}"
            code = 1
        sys.stderr.write(f"Processed a total of {tally.count} messages\n")
        if error is not None:
            sys.stderr.write(error + "\n")
        if options.enable_systest_events:
            print("shutdown_complete")
    sys.exit(code)


def _pk_formatter(output: str, kcat_format: str | None, options):
    """The formatter of pk's --output json or --format, or None for Kafka's formatters. Either
    replaces the formatter as a whole, so the options that configure Kafka's are refused."""
    from pk.commands.errors import UsageError

    if output != "json" and kcat_format is None:
        return None
    mine = "--output json" if output == "json" else "--format"
    if output == "json" and kcat_format is not None:
        raise UsageError("--output json and --format cannot be used together.")
    for given, name in ((options.formatter, "--formatter"), (options.formatter_properties, "--formatter-property"),
                        (options.properties, "--property"), (options.formatter_config, "--formatter-config"),
                        (options.key_deserializer, "--key-deserializer"),
                        (options.value_deserializer, "--value-deserializer")):
        if given:
            raise UsageError(f"{mine} and {name} cannot be used together: {mine} replaces the formatter.")
    if output == "json":
        from pk.commands.record_json import JsonRecordFormatter

        return JsonRecordFormatter()
    from pk.commands.kcat_format import KcatFormatter

    try:
        return KcatFormatter(kcat_format)
    except ValueError as exc:
        raise UsageError(f"--format: {exc}") from None


def main() -> None:
    run_tool(cli, "pk-console-consumer")
