"""ConsumerPerformance (kafka-consumer-perf-test.sh, org.apache.kafka.tools.ConsumerPerformance,
Kafka 4.4; kafka.tools.ConsumerPerformance up to 3.4) on the bundled engine, or with
--bootstrap-server on a cluster through confluent-kafka.

    pk-run-class org.apache.kafka.tools.ConsumerPerformance --topic t --messages 1000000

Prints 4.4's header and result line byte for byte in format. Option errors are jopt-simple's
messages (Kafka prints them with the help table, pk alone), one line on stderr, exit 1; an
exception Kafka's main() catches is printed as its getMessage() line, exit 1. When the
timeout passes before --messages records arrived, Kafka's WARNING line goes to stdout and the
result line follows, exit 0, exactly as 4.4 does. Without --bootstrap-server (which Kafka
requires) pk reads the bundled engine.
"""

from __future__ import annotations

import sys

import click

from .common import JAVA_LONG, KafkaCommand, data_dir_option, fail, run_tool, stdout_closed, version_option

HELP_LINE = "This tool is used to verify the consumer performance."
_TIMEOUT_DEFAULT = "\0default"  # `--timeout` given without a value


def _single(ctx, param, values):
    """jopt-simple's valueOf(): a single-valued option given twice is an error, raised when the
    tool reads the value (after the header: cli() reports it there)."""
    if not values:
        return None
    if len(values) > 1:
        ctx.meta.setdefault("pk_multiple", f"Found multiple arguments for option {param.opts[0].lstrip('-')}, "
                                           "but you asked for only one")
    return values[0]


def single(*decls, **kwargs):
    return click.option(*decls, multiple=True, callback=_single, **kwargs)


def _java_long(text: str) -> bool:
    from pk.commands.perf_common import java_parse_number

    return java_parse_number(text, 64) is not None


class ConsumerPerfCommand(KafkaCommand):
    """KafkaCommand plus jopt-simple's optional argument of --timeout: the next word is its
    value only if it converts to a Long (`--timeout abc` is --timeout alone, then an ignored
    word); `--timeout=abc` keeps the text and fails when the value is read."""

    def normalise(self, args: list[str]) -> list[str]:
        args = super().normalise(args)
        out = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                out.extend(args[i:])
                break
            if arg == "--timeout":
                if i + 1 < len(args) and _java_long(args[i + 1]):
                    out.append("--timeout=" + args[i + 1])
                    i += 2
                    continue
                out.append("--timeout=" + _TIMEOUT_DEFAULT)
                i += 1
                continue
            out.append(arg)
            i += 1
        return out


@click.command(cls=ConsumerPerfCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@single("--bootstrap-server", metavar="server to connect to",
        help="The server(s) to connect to (Kafka: REQUIRED; without it pk reads the bundled engine).")
@single("--command-config", metavar="config file", help="Config properties file.")
@click.option("--command-property", multiple=True, metavar="prop1=val1",
              help="Kafka consumer related configuration properties like client.id. These configs take precedence "
                   "over those passed via --command-config or --consumer.config.")
@single("--consumer.config", "consumer_config", metavar="config file",
        help="(DEPRECATED) Consumer config properties file. Use --command-config instead.")
@single("--date-format", metavar="date format",
        help="The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. "
             "(default: yyyy-MM-dd HH:mm:ss:SSS)")
# Integers stay text until the tool reads them (after the header), as jopt-simple converts them.
@single("--fetch-size", metavar="size",
        help="The maximum amount of data to fetch from a single partition per request. (default: 1048576)")
@click.option("--from-latest", is_flag=True,
              help="If the consumer does not already have an established offset to consume from, start with the "
                   "latest record present in the log rather than the earliest record.")
@single("--group", metavar="gid", help="The group id to consume on. (default: perf-consumer-<random 0..99999>)")
@click.option("--hide-header", is_flag=True, help="If set, skips printing the header for the stats.")
@single("--include", metavar="Java regex (String)",
        help="Regular expression specifying list of topics to include for consumption.")
@single("--messages", metavar="count",
        help="(DEPRECATED) The number of records to consume. Use --num-records instead.")
@single("--num-records", metavar="count", help="REQUIRED: The number of records to consume.")
@click.option("--print-metrics", is_flag=True,
              help="Print out the metrics (pk: the few client metrics it can state).")
@single("--reporting-interval", type=JAVA_LONG, metavar="interval_ms",
        help="Interval in milliseconds at which to print progress info. (default: 5000)")
@click.option("--show-detailed-stats", is_flag=True,
              help="If set, stats are reported for each reporting interval as configured by reporting-interval.")
@single("--socket-buffer-size", metavar="size", help="The size of the tcp RECV size. (default: 2097152)")
@single("--timeout", metavar="[milliseconds]",
        help="The maximum allowed time in milliseconds between returned records. (default: 10000)")
@single("--topic", metavar="topic", help="The topic to consume from.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="A librdkafka property for the --bootstrap-server client (as kcat's -X); wins over the "
                   "consumer configuration.")
@data_dir_option
@version_option
@click.argument("ignored", nargs=-1, required=False, metavar="")  # jopt ignores non-option words
def cli(data_dir, ignored, bootstrap_server, x, command_property, **opts):
    from pk.commands import consumer_perf
    from pk.commands.backends.engine_perf import engine_consumer_opener
    from pk.commands.errors import JavaError, ToolError, UsageError
    from pk.commands.errors import ProducerFailure
    from pk.engine.errors import KafkaError

    timeout = opts.pop("timeout")
    options = consumer_perf.ConsumerPerfOptions(
        **{k: v for k, v in opts.items() if v is not None},
        command_property=list(command_property) or None,
        timeout=None if timeout in (None, _TIMEOUT_DEFAULT) else timeout)
    stdout = sys.stdout

    def out(line: str) -> None:
        stdout.write(line + "\n")
        stdout.flush()

    bootstrap = bootstrap_server
    try:
        consumer_perf.check_consumer_options(options, out)
        multiple = click.get_current_context().meta.get("pk_multiple")
        if multiple is not None:
            if not options.hide_header:
                out(consumer_perf.header_line(options.show_detailed_stats))
            fail(multiple)
        if bootstrap is None and not x:
            opener = engine_consumer_opener(data_dir)
        else:
            from pk.commands.backends import kafka_clients, kafka_perf

            opener = kafka_perf.perf_consumer_opener(bootstrap, kafka_clients.remote_target(bootstrap, x, data_dir))
        consumer_perf.run_consumer_perf(options, opener, out)
        if options.print_metrics:
            sys.stderr.write("pk: the consumer keeps no other client metrics than these\n")
    except UsageError as exc:
        fail(str(exc))
    except JavaError as exc:
        fail(exc.message)  # main() catches Throwable and prints getMessage()
    except (ToolError, KafkaError, ProducerFailure) as exc:  # ProducerFailure: ConsumerConfig's ConfigException
        fail(str(exc))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        stdout_closed()


def main() -> None:
    run_tool(cli, "pk-consumer-perf-test")


if __name__ == "__main__":
    main()
