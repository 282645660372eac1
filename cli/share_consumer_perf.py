"""pk-share-consumer-perf-test: Kafka 4.4's kafka-share-consumer-perf-test
(org.apache.kafka.tools.ShareConsumerPerformance) on a cluster or pk-server-start: --threads
members of one share group (KIP-932) read a topic and report the rate.

    pk-share-consumer-perf-test --bootstrap-server localhost:9092 --topic t --num-records 100000

Option errors are jopt-simple's messages (Kafka prints the help table after them, pk does
not), one line on stderr, exit 1; an exception Kafka's run() catches is printed as its
getMessage() line (Kafka adds the stack trace), exit 1. The figures come from
commands/share_consumer_perf.py.
"""

from __future__ import annotations

import sys

import click

from .common import fail, run_tool, stdout_closed, version_option
from .consumer_perf import _TIMEOUT_DEFAULT, ConsumerPerfCommand, single

HELP_LINE = "This tool is used to verify the share consumer performance."


@click.command(cls=ConsumerPerfCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@single("--bootstrap-server", metavar="server to connect to", help="REQUIRED. The server(s) to connect to.")
@single("--command-config", metavar="config file", help="Config properties file.")
@click.option("--command-property", multiple=True, metavar="prop1=val1",
              help="Kafka share consumer related configuration properties like client.id. These configs take "
                   "precedence over those passed via --command-config or --consumer.config.")
@single("--consumer.config", "consumer_config", metavar="config file",
        help="(DEPRECATED) Share consumer config properties file. This option will be removed in a future "
             "version. Use --command-config instead.")
@single("--date-format", metavar="date format",
        help="The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. "
             "(default: yyyy-MM-dd HH:mm:ss:SSS)")
# Numbers stay text until the tool reads them, as jopt-simple converts them.
@single("--fetch-size", metavar="size",
        help="The amount of data to fetch in a single request. (default: 1048576)")
@single("--group", metavar="gid", help="The group id to consume on. (default: perf-share-consumer)")
@click.option("--hide-header", is_flag=True, help="If set, skips printing the header for the stats.")
@single("--messages", metavar="count",
        help="(DEPRECATED) The number of records to consume. This option will be removed in a future version. "
             "Use --num-records instead.")
@single("--num-records", metavar="count", help="REQUIRED: The number of records to consume.")
@click.option("--print-metrics", is_flag=True,
              help="Print out the metrics (pk: the few client metrics it can state).")
@single("--reporting-interval", metavar="interval_ms",
        help="Interval in milliseconds at which to print progress info. (default: 5000)")
@click.option("--show-consumer-stats", is_flag=True,
              help="If set, stats are reported for each share consumer depending on the no. of threads.")
@click.option("--show-detailed-stats", is_flag=True,
              help="If set, stats are reported for each reporting interval as configured by reporting-interval.")
@single("--socket-buffer-size", metavar="size", help="The size of the tcp RECV size. (default: 2097152)")
@single("--threads", metavar="count",
        help="The number of share consumers to use for sharing the load. (default: 1)")
@single("--timeout", metavar="[milliseconds]",
        help="The maximum allowed time in milliseconds between returned records. (default: 10000)")
@single("--topic", metavar="topic", help="REQUIRED: The topic to consume from.")
@version_option
@click.argument("ignored", nargs=-1, required=False, metavar="")  # jopt ignores non-option words
def cli(ignored, command_property, timeout, **opts):
    from pk.commands import share_consumer_perf as perf
    from pk.commands.errors import ClientConfigError, JavaError, ToolError, UsageError
    from pk.engine.errors import KafkaError

    options = perf.SharePerfOptions(**{k: v for k, v in opts.items() if v is not None},
                                    command_property=list(command_property),
                                    timeout=None if timeout in (None, _TIMEOUT_DEFAULT) else timeout)
    stdout = sys.stdout

    def out(line: str) -> None:
        stdout.write(line + "\n")
        stdout.flush()

    try:
        perf.check_options(options, out)
        multiple = click.get_current_context().meta.get("pk_multiple")
        if multiple is not None:
            if not options.hide_header:
                out(perf.HEADER)
            fail(multiple)
        perf.run_share_consumer_perf(options, perf.PerfShareConsumer, out)
        if options.print_metrics:
            sys.stderr.write("pk: the share consumer keeps no other client metrics than these\n")
    except UsageError as exc:
        fail(str(exc))
    except JavaError as exc:
        fail(exc.message if exc.message is not None else "null")  # run() prints getMessage()
    except (ToolError, KafkaError, ClientConfigError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        stdout_closed()


def main() -> None:
    run_tool(cli, "pk-share-consumer-perf-test")


if __name__ == "__main__":
    main()
