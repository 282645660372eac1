"""ProducerPerformance (kafka-producer-perf-test.sh, org.apache.kafka.tools.ProducerPerformance,
Kafka 4.4) on the bundled engine, or on a cluster through confluent-kafka when `--bootstrap-server`
or a bootstrap.servers in `--command-property` / `--producer-props` / the config file names one.

    pk-run-class org.apache.kafka.tools.ProducerPerformance --topic t --num-records 1000000 \\
        --record-size 100 --throughput -1 --producer-props acks=1

Kafka parses this tool's arguments with argparse4j 0.7.0, not jopt-simple, and pk reads them
the same way (cli/argparse4j.py): `--name value` or `--name=value`, unambiguous prefixes of
option names accepted (`--num` is `--num-records`), `--producer-props` taking every following
word up to the next option, and argparse4j's messages, printed as its error line
`kafka-producer-perf-test: error: <message>` on stderr, exit 1 (Kafka prints its usage first,
and wraps and justifies long messages at 75 columns; pk prints the one line). Exceptions that
escape Kafka's main() print the JVM's first line, `Exception in thread "main" <class>: <msg>`.
With no arguments at all the help goes to stdout, exit 0, as Kafka does; `--help` prints
Click's help (exit 0). `-X prop=value` and `--data-dir` are pk's own; like Kafka 4.4's tool,
this one has no `--version`.
"""

from __future__ import annotations

import sys

import click

from .argparse4j import Arg, Argparse4jCommand, Parser
from .common import QuietPipe, data_dir_option, fail, run_tool, stdout_closed

PROG = "kafka-producer-perf-test"


# In the order Kafka 4.4's ProducerPerformance.argParser() adds them (argparse4j's optargs_
# order, which decides which missing required argument is reported), then pk's own. Kafka 4.4
# has no --version here (argparse4j reports it as an unrecognized argument), nor has pk.
PARSER = Parser((
    Arg(("-h", "--help"), "help", "help"),
    Arg(("--bootstrap-server",), "bootstrap_server"),
    Arg(("--topic",), "topic", required=True),
    Arg(("--num-records",), "num_records", type="Long", required=True),
    Arg(("--payload-delimiter",), "payload_delimiter", default="\\n"),
    Arg(("--throughput",), "throughput", type="Double", required=True),
    Arg(("--producer-props",), "producer_props", action="nargs+"),
    Arg(("--command-property",), "command_property", action="nargs+"),
    Arg(("--producer.config",), "producer_config"),
    Arg(("--command-config",), "command_config"),
    Arg(("--print-metrics",), "print_metrics", action="store_true", default=False),
    Arg(("--transactional-id",), "transactional_id"),
    Arg(("--transaction-duration-ms",), "transaction_duration_ms", type="Long"),
    Arg(("--warmup-records",), "warmup_records", type="Long", default=0),
    Arg(("--reporting-interval",), "reporting_interval", type="Long", default=5000),
    Arg(("--record-key-range",), "record_key_range", type="Integer"),
    Arg(("--key-distribution",), "key_distribution", default="none", choices=("none", "range", "random")),
    Arg(("--random-seed",), "random_seed", type="Long", default=0),
    Arg(("--record-size",), "record_size", type="Integer", mutex=True),
    Arg(("--payload-file",), "payload_file", mutex=True),
    Arg(("--payload-monotonic",), "payload_monotonic", action="store_true", mutex=True, default=False),
    Arg(("-X",), "x", action="append", default=(), attached=True),
    Arg(("--data-dir",), "data_dir"),
))


@click.command(cls=Argparse4jCommand, parser=PARSER, prog=PROG, context_settings={"help_option_names": ["-h", "--help"]},
               help="This tool is used to verify the producer performance. To enable transactions, you can specify "
                    "a transactional id or set a transaction duration using --transaction-duration-ms (pk: "
                    "transactions are refused).")
@click.option("--bootstrap-server", metavar="BOOTSTRAP-SERVER",
              help="The server(s) to connect to. This config takes precedence over bootstrap.servers specified via "
                   "--command-property or --command-config. Without any of them pk uses the bundled engine.")
@click.option("--topic", metavar="TOPIC", help="Produce records to this topic.")
@click.option("--num-records", metavar="NUM-RECORDS", help="Number of records to produce.")
@click.option("--payload-delimiter", metavar="PAYLOAD-DELIMITER",
              help="Provides the delimiter to be used when --payload-file is provided. Defaults to new line. Note "
                   "that this parameter will be ignored if --payload-file is not provided. (default: \\n)")
@click.option("--throughput", metavar="THROUGHPUT",
              help="Throttle maximum record throughput to *approximately* THROUGHPUT records/sec. Set this to -1 "
                   "to disable throttling.")
@click.option("--producer-props", metavar="PROP-NAME=PROP-VALUE [PROP-NAME=PROP-VALUE ...]",
              help="(DEPRECATED) Kafka producer related configuration properties like client.id. Use "
                   "--command-property instead.")
@click.option("--command-property", metavar="PROP-NAME=PROP-VALUE [PROP-NAME=PROP-VALUE ...]",
              help="Kafka producer related configuration properties like client.id. These configs take precedence "
                   "over those passed via --command-config or --producer.config.")
@click.option("--producer.config", "producer_config", metavar="CONFIG-FILE",
              help="(DEPRECATED) Producer config properties file. Use --command-config instead.")
@click.option("--command-config", metavar="CONFIG-FILE", help="Producer config properties file.")
@click.option("--print-metrics", is_flag=True,
              help="Print out metrics at the end of the test (pk: the few client metrics it can state).")
@click.option("--transactional-id", metavar="TRANSACTIONAL-ID",
              help="The transactional id to use (pk refuses transactions).")
@click.option("--transaction-duration-ms", metavar="TRANSACTION-DURATION",
              help="The maximum duration of each transaction (pk refuses transactions).")
@click.option("--warmup-records", metavar="WARMUP-RECORDS",
              help="The number of records to treat as warmup. These initial records will not be included in "
                   "steady-state statistics. An additional summary line will be printed describing the "
                   "steady-state statistics. (default: 0)")
@click.option("--reporting-interval", metavar="INTERVAL-MS",
              help="Interval in milliseconds at which to print progress info. (default: 5000)")
@click.option("--record-key-range", metavar="KEY-RANGE",
              help="The range of keys to use when --key-distribution is 'range' or 'random'.")
@click.option("--key-distribution", metavar="KEY-DISTRIBUTION",
              help="The key distribution to use: 'none' for null keys (pk: the only one supported), 'range' or "
                   "'random'. (default: none)")
@click.option("--random-seed", metavar="RANDOM-SEED",
              help="Seed for the pseudo-random number generator of the random payloads. (default: 0)")
@click.option("--record-size", metavar="RECORD-SIZE",
              help="Record size in bytes. Note that you must provide exactly one of --record-size, "
                   "--payload-file or --payload-monotonic.")
@click.option("--payload-file", metavar="PAYLOAD-FILE",
              help="File to read the record payloads from. This works only for UTF-8 encoded text files. "
                   "Payloads will be read from this file and a payload will be randomly selected when sending "
                   "records.")
@click.option("--payload-monotonic", is_flag=True, help="Payload is a monotonically increasing integer.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="pk: a librdkafka property for the cluster's client (as kcat's -X); wins over the producer "
                   "properties.")
@data_dir_option
def cli(data_dir=None, x=(), **opts):
    from pk.commands import producer_perf
    from pk.commands.backends.engine_perf import engine_producer_opener
    from pk.commands.errors import ArgumentError, JavaError, ToolError, java_class_of
    from pk.engine.errors import DataDirError, KafkaError

    options = producer_perf.ProducerPerfOptions(**opts)
    stdout = sys.stdout

    def out(line: str) -> None:
        stdout.write(line + "\n")
        stdout.flush()

    def err(line: str) -> None:
        sys.stderr.write(line + "\n")

    def open_producer(topic: str, props: dict[str, str]):
        """The engine's producer, or a cluster's when --bootstrap-server or the properties'
        bootstrap.servers name one (Kafka's way of saying where to produce)."""
        bootstrap = props.get("bootstrap.servers")
        if bootstrap is None and not x:
            return engine_producer_opener(data_dir)(topic, props)
        from pk.commands.backends import kafka_clients, kafka_perf

        try:
            extra = kafka_clients.remote_target(bootstrap, x, data_dir)
        except kafka_clients.BackendUsageError as exc:
            raise ToolError(str(exc)) from None
        return kafka_perf.perf_producer_opener(bootstrap, extra)(topic, props)

    try:
        code = producer_perf.run_producer_perf(options, open_producer, out, err)
    except ArgumentError as exc:
        fail(f"{PROG}: error: {exc}")
    except JavaError as exc:
        fail(exc.line)
    except ToolError as exc:
        fail(str(exc))
    except DataDirError as exc:
        fail(str(exc))
    except KafkaError as exc:  # the topic cannot be produced to at all
        fail(f"{java_class_of(exc)}: {exc}")
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        stdout_closed()
    sys.exit(code)


def main() -> None:
    run_tool(cli, "pk-producer-perf-test")


if __name__ == "__main__":
    main()
