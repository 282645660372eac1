"""VerifiableConsumer (kafka-verifiable-consumer.sh, org.apache.kafka.tools.VerifiableConsumer,
Kafka 4.4) on a cluster through confluent-kafka:

    pk-verifiable-consumer --topic t --group-id g --bootstrap-server localhost:9092 --max-messages 100

Arguments as Kafka's argparse4j reads them (cli/argparse4j.py). It consumes until
--max-messages records (forever if -1) or SIGTERM/SIGINT, which stop it as Kafka's shutdown
hook does (shutdown_requested, then the consumer closes: partitions_revoked, shutdown_complete;
exit 143 / 130). A failure while consuming is one line on stderr after shutdown_complete, exit 1.
"""

from __future__ import annotations

import signal
import sys

import click

from .argparse4j import Arg, Argparse4jCommand, Parser
from .common import fail, run_tool, stdout_closed

PROG = "verifiable-consumer"
RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"

# In the order Kafka 4.4's VerifiableConsumer.argParser() adds them.
PARSER = Parser((
    Arg(("-h", "--help"), "help", "help"),
    Arg(("--topic",), "topic", required=True),
    Arg(("--group-protocol",), "group_protocol", default="classic"),
    Arg(("--group-remote-assignor",), "group_remote_assignor"),
    Arg(("--group-id",), "group_id", required=True),
    Arg(("--group-instance-id",), "group_instance_id"),
    Arg(("--max-messages",), "max_messages", type="Integer", default=-1),
    Arg(("--session-timeout",), "session_timeout", type="Integer"),
    Arg(("--verbose",), "verbose", action="store_true", default=False),
    Arg(("--enable-autocommit",), "use_auto_commit", action="store_true", default=False),
    Arg(("--close-timeout",), "close_timeout", type="Integer", default=30000),
    Arg(("--reset-policy",), "reset_policy", default="earliest"),
    Arg(("--assignment-strategy",), "assignment_strategy", default=RANGE),
    Arg(("--consumer.config",), "consumer_config"),
    Arg(("--command-config",), "command_config"),
    # the required "Connection Group"; unlike the producer's, its one option is itself required
    Arg(("--bootstrap-server",), "bootstrap_server", required=True, mutex=True),
))


@click.command(cls=Argparse4jCommand, parser=PARSER, prog=PROG,
               context_settings={"help_option_names": ["-h", "--help"]},
               help="This tool consumes messages from a specific topic and emits consumer events (e.g. group "
                    "rebalances, received messages, and offsets committed) as JSON objects to STDOUT.")
@click.option("--topic", metavar="TOPIC", help="Consumes messages from this topic.")
@click.option("--group-protocol", metavar="GROUP-PROTOCOL",
              help="Group protocol (must be one of CLASSIC, CONSUMER) (default: classic)")
@click.option("--group-remote-assignor", metavar="GROUP-REMOTE-ASSIGNOR",
              help="Group remote assignor; only used if the group protocol is CONSUMER")
@click.option("--group-id", metavar="GROUP-ID", help="The group id of the consumer group")
@click.option("--group-instance-id", metavar="GROUP-INSTANCE-ID",
              help="A unique identifier of the consumer instance")
@click.option("--max-messages", metavar="MAX-MESSAGES",
              help="Consume this many messages. If -1 (the default), the consumer will consume until the process "
                   "is killed externally (default: -1)")
@click.option("--session-timeout", metavar="TIMEOUT-MS",
              help="Set the consumer's session timeout, note that this configuration is not supported when group "
                   "protocol is consumer")
@click.option("--verbose", is_flag=True, help="Enable to log individual consumed records (default: false)")
@click.option("--enable-autocommit", "use_auto_commit", is_flag=True,
              help="Enable offset auto-commit on consumer (default: false)")
@click.option("--close-timeout", metavar="CLOSE-TIMEOUT-MS",
              help="Timeout in milliseconds for closing the consumer (default: 30000)")
@click.option("--reset-policy", metavar="RESET-POLICY",
              help="Set reset policy (must be either 'earliest', 'latest', or 'none') (default: earliest)")
@click.option("--assignment-strategy", metavar="ASSIGNMENT-STRATEGY",
              help=f"Set assignment strategy (e.g. org.apache.kafka.clients.consumer.RoundRobinAssignor); only "
                   f"used if the group protocol is CLASSIC (default: {RANGE})")
@click.option("--consumer.config", "consumer_config", metavar="CONFIG-FILE",
              help="(DEPRECATED) Consumer config properties file. Use --command-config instead")
@click.option("--command-config", metavar="CONFIG-FILE",
              help="Config properties file (config options shared with command line parameters will be "
                   "overridden).")
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="The server(s) to connect to. Comma-separated list of Kafka brokers in the form "
                   "HOST1:PORT1,HOST2:PORT2,...")
def cli(**values):
    from pk.commands.backends.kafka_clients import ConfigRefused
    from pk.commands.backends.kafka_verifiable import ClusterConsumer
    from pk.commands.errors import ClientConfigError, JavaError, PropertiesError, java_class_of
    from pk.commands.properties import load_properties
    from pk.commands.verifiable_consumer import Options, VerifiableConsumer, check, consumer_properties
    from pk.commands.java_json import event
    from pk.engine.errors import KafkaError

    options = Options(**values)
    try:
        check(options)
    except JavaError as exc:
        fail(exc.line)
    try:
        files = [load_properties(path) for path in (options.consumer_config, options.command_config) if path]
    except PropertiesError as exc:  # Kafka: the IOException's message as an argparse4j error
        fail(f"{PROG}: error: {str(exc).split(': ', 1)[-1]}")
    status = {"code": 0}
    tool: VerifiableConsumer | None = None

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    try:
        consumer = ClusterConsumer(consumer_properties(options, files), lambda: tool is not None and tool.stop)
    except (ConfigRefused, ClientConfigError) as exc:
        fail(str(exc))
    tool = VerifiableConsumer(options, consumer, out)

    def stop(signum, _frame):
        if not tool.stop:
            out(event("shutdown_requested"))
        tool.stop = True
        status["code"] = 128 + signum

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        tool.run()
    except KafkaError as exc:  # Kafka logs it and ends the run: the consumer closed, shutdown_complete
        fail(f"{java_class_of(exc)}: {exc}")
    except BrokenPipeError:
        stdout_closed()
    if status["code"] == 0:
        out(event("shutdown_requested"))  # Kafka's shutdown hook, as the JVM exits
    sys.exit(status["code"])


def main() -> None:
    run_tool(cli, "pk-verifiable-consumer")


if __name__ == "__main__":
    main()
