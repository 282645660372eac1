"""pk-replica-verification: check that all replicas of a set of topics hold the same data
(kafka-replica-verification).

    pk-replica-verification --broker-list b:9092 --topics-include 'orders.*' --report-interval-ms 5000

It runs until interrupted and prints, every report interval, the largest lag of a partition
behind its high watermark. Like Kafka 4.4's tool it first logs that it is deprecated (stderr)."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option

HELP_LINE = "Validate that all replicas for a set of topics have the same data."


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--broker-list", metavar="HOST:PORT,...",
              help="REQUIRED: The list of hostname and port of the server to connect to.")
@click.option("--fetch-size", metavar="BYTES", default="1048576", show_default=True,
              help="The fetch size of each request.")
@click.option("--max-wait-ms", metavar="MS", default="1000", show_default=True,
              help="The max amount of time each fetch request waits.")
@click.option("--report-interval-ms", metavar="MS", default="30000", show_default=True,
              help="The reporting interval.")
@click.option("--time", "time_", metavar="TIMESTAMP", default="-1", show_default=True,
              help="Timestamp for getting the initial offsets: -1 (latest), -2 (earliest) or a timestamp in ms.")
@click.option("--topics-include", metavar="JAVA_REGEX", default=".*", show_default=True,
              help="List of topics to verify replica consistency.")
@version_option
def cli(broker_list, fetch_size, max_wait_ms, report_interval_ms, time_, topics_include):
    from pk.commands import replica_verification as cmd
    from pk.commands.backends.wire import WireClient
    from pk.commands.client_config import validate_bootstrap
    from pk.commands.consumer import log4j_line
    from pk.commands.errors import BootstrapError
    from pk.commands.perf_common import java_parse_number
    from pk.engine.errors import KafkaError

    err = _stderr
    err(log4j_line("WARN", "This tool is deprecated and may be removed in a future major release.", cmd.TOOL_CLASS))
    if broker_list is None:
        fail('Missing required argument "[broker-list]"')
    try:
        validate_bootstrap(broker_list)
    except BootstrapError as exc:
        fail(str(exc))

    def option(value: str, name: str, bits: int):
        def read() -> int:
            number = java_parse_number(value, bits)
            if number is None:
                raise cmd.ToolFailure(f"Cannot parse argument '{value}' of option {name}")
            return number
        return read

    client = None
    try:
        client = WireClient(broker_list, 60.0, "listTopics")
        status = cmd.run(lambda endpoint: WireClient(f"{endpoint[0]}:{endpoint[1]}", 30.0, "fetch"), client,
                         topics_include, option(time_, "time", 64), option(report_interval_ms, "report-interval-ms", 64),
                         option(fetch_size, "fetch-size", 32), option(max_wait_ms, "max-wait-ms", 32), _stdout, err)
    except cmd.ToolFailure as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "execution_message", None)
        fail(java() if java else str(exc))
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        if client is not None:
            client.close()
    sys.exit(status)


def _stdout(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()  # a report is seen when it is made, as Kafka's println shows it


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def main() -> None:
    run_tool(cli, "pk-replica-verification")


if __name__ == "__main__":
    main()
