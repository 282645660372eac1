"""pk-verifiable-share-consumer: Kafka 4.4's kafka-verifiable-share-consumer
(org.apache.kafka.tools.VerifiableShareConsumer) on a cluster or pk-server-start:

    pk-verifiable-share-consumer --topic t --group-id g --bootstrap-server localhost:9092 --max-messages 100

Arguments as Kafka's argparse4j reads them (cli/argparse4j.py); the events are
commands/verifiable_share_consumer.py's. SIGTERM/SIGINT stop it as Kafka's shutdown hook does
(shutdown_requested, then the consumer closes: shutdown_complete; exit 143 / 130). A failure
while consuming is Kafka's log line on stderr; the run still ends with shutdown_complete, exit 0.
"""

from __future__ import annotations

import signal
import sys

import click

from .argparse4j import Arg, Argparse4jCommand, Parser
from .common import fail, run_tool, stdout_closed

PROG = "verifiable-share-consumer"
ACK_PATTERN_HELP = ("Comma-separated cycle of accept|release|reject|renew applied to each consumed record via "
                    "AcknowledgeType, selected by (record offset % pattern length). RENEW re-delivers the same "
                    "record, so its next delivery advances to the following pattern entry instead of renewing again "
                    "(a pattern of only 'renew' is rejected, since it could never resolve). When set, the share "
                    "consumer uses explicit acknowledgement and requires --acknowledgement-mode to be 'sync' or "
                    "'async'. (default: )")

# In the order Kafka 4.4's VerifiableShareConsumer.argParser() adds them.
PARSER = Parser((
    Arg(("-h", "--help"), "help", "help"),
    Arg(("--topic",), "topic", required=True),
    Arg(("--group-id",), "group_id", required=True),
    Arg(("--max-messages",), "max_messages", type="Integer", default=-1),
    Arg(("--verbose",), "verbose", action="store_true", default=False),
    Arg(("--acknowledgement-mode",), "acknowledgement_mode", default="auto"),
    Arg(("--ack-pattern",), "ack_pattern", default=""),
    Arg(("--offset-reset-strategy",), "offset_reset_strategy", default=""),
    Arg(("--command-config",), "command_config"),
    Arg(("--bootstrap-server",), "bootstrap_server", required=True, mutex=True),
))


@click.command(cls=Argparse4jCommand, parser=PARSER, prog=PROG,
               context_settings={"help_option_names": ["-h", "--help"]},
               help="This tool creates a share group and consumes messages from a specific topic and emits share "
                    "consumer events (e.g. share consumer startup, received messages, and offsets acknowledged) as "
                    "JSON objects to STDOUT.")
@click.option("--topic", metavar="TOPIC", help="Consumes messages from this topic.")
@click.option("--group-id", metavar="GROUP-ID", help="The group id of the share group")
@click.option("--max-messages", metavar="MAX-MESSAGES",
              help="Consume this many messages. If -1 (the default), the share consumers will consume until the "
                   "process is killed externally (default: -1)")
@click.option("--verbose", is_flag=True, help="Enable to log individual consumed records (default: false)")
@click.option("--acknowledgement-mode", metavar="ACKNOWLEDGEMENT-MODE",
              help="Acknowledgement mode for the share consumers (must be either 'auto', 'sync' or 'async') "
                   "(default: auto)")
@click.option("--ack-pattern", metavar="ACK-PATTERN",
              help=ACK_PATTERN_HELP)
@click.option("--offset-reset-strategy", metavar="OFFSET-RESET-STRATEGY",
              help="Share group offset reset strategy (must be either 'earliest' or 'latest') (default: )")
@click.option("--command-config", metavar="CONFIG-FILE",
              help="Config properties file (config options shared with command line parameters will be "
                   "overridden).")
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="The server(s) to connect to. Comma-separated list of Kafka brokers in the form "
                   "HOST1:PORT1,HOST2:PORT2,...")
def cli(**values):
    from pk.commands.backends.wire import connection_security
    from pk.commands.backends.wire_share import ShareConsumer
    from pk.commands.consumer import log4j_line
    from pk.commands.errors import ClientConfigError, JavaError, PropertiesError, java_class_of
    from pk.commands.java_json import event
    from pk.commands.properties import load_properties
    from pk.commands.verifiable_share_consumer import (LOGGER, ArgumentError, Options, VerifiableShareConsumer,
                                                       check)
    from pk.engine.errors import KafkaError

    options = Options(**values)
    try:
        mode, pattern = check(options)
    except JavaError as exc:
        fail(exc.line)
    except ArgumentError as exc:
        fail(f"{PROG}: error: {exc}")
    try:
        props = load_properties(options.command_config) if options.command_config else {}
    except PropertiesError as exc:  # Kafka: the IOException's message as an argparse4j error
        fail(f"{PROG}: error: {str(exc).split(': ', 1)[-1]}")
    props.update({"group.id": options.group_id, "bootstrap.servers": options.bootstrap_server})

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def log_error(message: str, exc: BaseException) -> None:
        """Kafka's log.error(message, exception): the log line, then the exception's first line."""
        sys.stderr.write(log4j_line("ERROR", message, LOGGER) + "\n")
        if isinstance(exc, JavaError):
            sys.stderr.write(f"{exc}\n")
        elif isinstance(exc, KafkaError):
            sys.stderr.write(f"{java_class_of(exc)}: {exc}\n")
        else:
            sys.stderr.write(f"pk: {type(exc).__name__}: {exc}\n")

    try:
        security = connection_security(props)
        consumer = ShareConsumer(options.bootstrap_server, options.group_id, options.topic, security=security,
                                 client_id=props.get("client.id", f"consumer-{options.group_id}-1"))
    except (KafkaError, ClientConfigError) as exc:
        fail(str(exc))
    tool = VerifiableShareConsumer(options, mode, consumer,
                                   lambda name, value: _set_group_config(options, security, name, value),
                                   out, log_error, pattern)
    status = {"code": 0}

    def stop(signum, _frame):
        if not tool.stop:
            out(event("shutdown_requested"))
        tool.stop = True
        status["code"] = 128 + signum

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        tool.run()
    except BrokenPipeError:
        stdout_closed()
    if status["code"] == 0:
        out(event("shutdown_requested"))  # Kafka's shutdown hook, as the JVM exits
    sys.exit(status["code"])


def _set_group_config(options, security, name: str, value: str) -> None:
    """Admin.incrementalAlterConfigs of the group's config (SET), as Kafka's tool does it."""
    from pk.commands.backends.kafka_admin import known_error
    from pk.commands.backends.wire import WireClient
    from pk.commands.verifiable_share_consumer import GROUP_RESOURCE
    from pk.engine import protocol as kp

    client = WireClient(options.bootstrap_server, 60.0, "admin", security=security)
    try:
        answer = client.call(kp.ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
            "resources": [{"resource_type": GROUP_RESOURCE, "resource_name": options.group_id,
                           "configs": [{"name": name, "config_operation": 0, "value": value}]}],
            "validate_only": False})
    finally:
        client.close()
    result = answer["responses"][0]
    if result["error_code"]:
        raise known_error(result["error_code"], result["error_message"])


def main() -> None:
    run_tool(cli, "pk-verifiable-share-consumer")


if __name__ == "__main__":
    main()
