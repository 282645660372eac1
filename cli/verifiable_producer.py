"""VerifiableProducer (kafka-verifiable-producer.sh, org.apache.kafka.tools.VerifiableProducer,
Kafka 4.4) on a cluster through confluent-kafka:

    pk-verifiable-producer --topic t --bootstrap-server localhost:9092 --max-messages 1000

Kafka reads these arguments with argparse4j (cli/argparse4j.py): a usage error is
`verifiable-producer: error: <message>` on stderr, exit 1 (Kafka prints its usage first and
wraps the message; pk prints the one line). With no arguments the help goes to stdout, exit 0.
--bootstrap-server is required, as in Kafka: the tool verifies a cluster's acknowledgements.
SIGTERM or SIGINT stops it as Kafka's shutdown hook does: the records sent are flushed, then
shutdown_complete and tool_data are printed (exit 143 / 130, the JVM's statuses).
"""

from __future__ import annotations

import signal
import sys
import time

import click

from .argparse4j import Arg, Argparse4jCommand, Parser
from .common import fail, run_tool, stdout_closed

PROG = "verifiable-producer"

# In the order Kafka 4.4's VerifiableProducer.argParser() adds them.
PARSER = Parser((
    Arg(("-h", "--help"), "help", "help"),
    Arg(("--topic",), "topic", required=True),
    Arg(("--max-messages",), "max_messages", type="Integer", default=-1),
    Arg(("--throughput",), "throughput", type="Integer", default=-1),
    Arg(("--acks",), "acks", type="Integer", default=-1, choices=("0", "1", "-1")),
    Arg(("--producer.config",), "producer_config"),
    Arg(("--message-create-time",), "create_time", type="Long", default=-1),
    Arg(("--value-prefix",), "value_prefix", type="Integer"),
    Arg(("--repeating-keys",), "repeating_keys", type="Integer"),
    Arg(("--command-config",), "command_config"),
    Arg(("--bootstrap-server",), "bootstrap_server", mutex=True),  # the required "Connection Group"
))


@click.command(cls=Argparse4jCommand, parser=PARSER, prog=PROG, context_settings={"help_option_names": ["-h", "--help"]},
               help='This tool produces increasing integers to the specified topic and prints JSON metadata to '
                    'stdout on each "send" request, making externally visible which messages have been acked and '
                    'which have not.')
@click.option("--topic", metavar="TOPIC", help="Produce messages to this topic.")
@click.option("--max-messages", metavar="MAX-MESSAGES",
              help="Produce this many messages. If -1, produce messages until the process is killed externally. "
                   "(default: -1)")
@click.option("--throughput", metavar="THROUGHPUT",
              help="If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. "
                   "(default: -1)")
@click.option("--acks", metavar="ACKS",
              help="Acks required on each produced message: 0, 1 or -1. (default: -1)")
@click.option("--producer.config", "producer_config", metavar="CONFIG-FILE",
              help="(DEPRECATED) Producer config properties file. Use --command-config instead.")
@click.option("--message-create-time", "create_time", metavar="CREATE-TIME",
              help="Send messages with creation time starting at the arguments value, in milliseconds since epoch "
                   "(default: -1)")
@click.option("--value-prefix", metavar="VALUE-PREFIX",
              help="If specified, each produced value will have this prefix with a dot separator")
@click.option("--repeating-keys", metavar="REPEATING-KEYS",
              help="If specified, each produced record will have a key starting at 0 increment by 1 up to the "
                   "number specified (exclusive), then the key is set to 0 again")
@click.option("--command-config", metavar="CONFIG-FILE",
              help="Config properties file (config options shared with command line parameters will be "
                   "overridden).")
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="REQUIRED: The server(s) to connect to. Comma-separated list of Kafka brokers in the form "
                   "HOST1:PORT1,HOST2:PORT2,...")
def cli(**values):
    from pk.commands.backends.kafka_clients import ConfigRefused
    from pk.commands.backends.kafka_verifiable import ClusterProducer, producer_properties
    from pk.commands.errors import PropertiesError, java_class_of
    from pk.commands.properties import load_properties
    from pk.commands.verifiable_producer import Options, VerifiableProducer

    options = Options(**values)
    try:
        files = [load_properties(path) for path in (options.producer_config, options.command_config) if path]
    except PropertiesError as exc:  # Kafka: the IOException's message as an argparse4j error
        fail(f"{PROG}: error: {str(exc).split(': ', 1)[-1]}")
    java = producer_properties(options.bootstrap_server, options.acks, files)
    try:
        producer = ClusterProducer(java, options.topic)
    except ConfigRefused as exc:
        fail(str(exc))

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    tool = VerifiableProducer(options, producer, out, java_class_of)
    status = {"code": 0}

    def stop(signum, _frame):
        tool.stop = True
        status["code"] = 128 + signum

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    started = time.time()
    try:
        tool.run()
        tool.shutdown(started)
    except BrokenPipeError:
        stdout_closed()
    sys.exit(status["code"])


def main() -> None:
    run_tool(cli, "pk-verifiable-producer")


if __name__ == "__main__":
    main()
