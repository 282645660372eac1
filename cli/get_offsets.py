"""GetOffsetShell (kafka-get-offsets.sh, org.apache.kafka.tools.GetOffsetShell, Kafka 4.4; kafka.tools before 3.7).

    pk-run-class org.apache.kafka.tools.GetOffsetShell --topic 'orders.*' --time -1
    pk-run-class kafka.tools.GetOffsetShell --bootstrap-server broker:9092 --time earliest

Prints `<topic>:<partition>:<offset>` per matching partition that has an offset, from the
bundled engine or, with --bootstrap-server, from a cluster
through confluent-kafka's AdminClient (commands/backends/kafka_admin.py). Errors are Kafka's
"Error occurred: <message>" line on stderr, exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import data_dir_option, fail, run_tool, stdout_closed, version_option
from .output import output_option
from .run_class import JoptCommand

USAGE_TEXT = "An interactive shell for getting topic-partition offsets."
ERROR_PREFIX = "Error occurred: "


class GetOffsetShellCommand(JoptCommand):
    def error_line(self, exception_class: str, message: str) -> str:
        return ERROR_PREFIX + message  # 3.7 wraps jopt errors in a TerseException


@click.command(cls=GetOffsetShellCommand, help=USAGE_TEXT, no_args_message=USAGE_TEXT,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", multiple=True, metavar="HOST1:PORT1,...,HOST3:PORT3",
              help="The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2. Without it "
                   "pk reads the bundled engine's data directory.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="A librdkafka property for the --bootstrap-server client (as kcat's -X); wins over "
                   "--command-config.")
@click.option("--topic", multiple=True, metavar="TOPIC",
              help="The topic to get the offsets for. It also accepts a regular expression. If not "
                   "present, all authorized topics are queried. Cannot be used if --topic-partitions is present.")
@click.option("--partitions", multiple=True, metavar="PARTITION-IDS",
              help="Comma separated list of partition ids to get the offsets for. If not present, all "
                   "partitions of the authorized topics are queried. Cannot be used if --topic-partitions is present.")
@click.option("--topic-partitions", multiple=True, metavar="PATTERNS",
              help="Comma separated list of topic-partition patterns to get the offsets for, with the format "
                   "of '([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?'. The first group is an optional "
                   "regex for the topic name, if omitted, it matches any topic name. The section after ':' "
                   "describes a 'partition' pattern, which can be: a number, a range in the format of "
                   "'NUMBER-NUMBER' (lower inclusive, upper exclusive), an inclusive lower bound in the format "
                   "of 'NUMBER-', an exclusive upper bound in the format of '-NUMBER' or may be omitted to "
                   "accept all partitions. Example: topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3")
@click.option("--time", multiple=True, metavar="TIME",
              help="timestamp of the offsets before that. [Note: No offset is returned, if the timestamp "
                   "greater than recently committed record timestamp is given.] "
                   "<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / "
                   "-5 or latest-tiered / -6 or earliest-pending-upload (default: latest)")
@click.option("--command-config", multiple=True, metavar="CONFIG-FILE",
              help="Property file containing configs to be passed to Admin Client.")
@click.option("--exclude-internal-topics", is_flag=True,
              help="By default, internal topics are included. If specified, internal topics are excluded.")
@output_option
@data_dir_option
@version_option
@click.argument("ignored", nargs=-1, required=False, metavar="")  # jopt ignores non-option words
def cli(data_dir, ignored, bootstrap_server, x, output, **opts):
    from pk.commands import get_offsets as cmd
    from pk.commands.errors import ClientConfigError, OffsetShellError, PropertiesError
    from pk.engine.errors import KafkaError

    options = cmd.GetOffsetsOptions(
        topic=list(opts["topic"]), partitions=list(opts["partitions"]),
        topic_partitions=list(opts["topic_partitions"]), time=list(opts["time"]),
        command_config=list(opts["command_config"]), exclude_internal_topics=opts["exclude_internal_topics"])
    source = None
    try:
        source = _source(data_dir, bootstrap_server, x, options)
        lines = cmd.fetch_offsets(source, options, warn=lambda line: click.echo(line, err=True))
        out = sys.stdout
        if output == "json":
            from pk.commands.get_offsets_json import document

            out.write(document(lines) + "\n")
        else:
            for topic, partition, offset in lines:
                out.write(cmd.format_line(topic, partition, offset) + "\n")
        out.flush()
    except OffsetShellError as exc:
        fail(ERROR_PREFIX + str(exc))
    except (ClientConfigError, PropertiesError) as exc:
        from pk.commands.client_config import java_message

        fail(ERROR_PREFIX + java_message(str(exc)))
    except KafkaError as exc:
        if hasattr(exc, "execution_message"):  # an Admin call's failure (kafka_admin.AdminError)
            fail(ERROR_PREFIX + exc.execution_message())
        fail(ERROR_PREFIX + str(exc))
    except BrokenPipeError:
        stdout_closed()
    except OSError as exc:
        fail(ERROR_PREFIX + (f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc)))
    finally:
        if source is not None:
            source.close()


def _source(data_dir, bootstrap_server, x, options):
    """The bundled engine, or the cluster given by --bootstrap-server (Kafka 4.4 has no
    --broker-list any more). Kafka validates the address as a usage error, before its own
    checks; the Admin client is created after them."""
    from pk.commands import get_offsets as cmd

    bootstrap = cmd.value_of("bootstrap-server", list(bootstrap_server) or None)
    if bootstrap is None and not x:
        return cmd.EngineOffsets(data_dir)
    from pk.commands.client_config import check_target
    from pk.commands.errors import ClientConfigError
    from pk.commands.backends.kafka_admin import KafkaOffsets, open_admin

    try:
        extra = check_target(bootstrap, x, data_dir)
    except ClientConfigError as exc:  # a bad address or -X argument: a usage error
        fail(str(exc))
    return KafkaOffsets(lambda: open_admin(bootstrap, cmd.value_of("command-config", options.command_config),
                                           extra, client_id="GetOffsetShell"))


def main() -> None:
    run_tool(cli, "pk-get-offsets")


if __name__ == "__main__":
    main()
