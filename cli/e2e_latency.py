"""EndToEndLatency (kafka-e2e-latency.sh, org.apache.kafka.tools.EndToEndLatency, Kafka 4.4) on a
cluster through confluent-kafka:

    pk-e2e-latency --bootstrap-server localhost:9092 --topic t --num-records 1000 \\
        --producer-acks 1 --record-size 100
    pk-e2e-latency localhost:9092 t 1000 1 100 [client.properties]   # Kafka's deprecated form

jopt-simple options as Kafka reads them (cli/common.KafkaCommand); the positional form prints
Kafka's deprecation warning on stdout first. Errors are Kafka's first stderr line, exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import JAVA_INT, KafkaCommand, fail, run_tool, version_option

HELP_LINE = "This tool measures end-to-end latency in Kafka by sending messages and timing their reception."
REQUIRED = ("bootstrap_server", "topic", "num_records", "producer_acks", "record_size")


class LatencyCommand(KafkaCommand):
    """KafkaCommand after Kafka's conversion of the deprecated positional arguments."""

    def main(self, args=None, prog_name=None, **extra):
        from pk.commands.e2e_latency import LEGACY_WARNING, UsageError, convert_legacy

        args = list(sys.argv[1:] if args is None else args)
        try:
            args, legacy = convert_legacy(args)
        except UsageError as exc:
            fail(str(exc))
        if legacy:
            click.echo(LEGACY_WARNING)
        return super().main(args, prog_name, **extra)


@click.command(cls=LatencyCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="<String: bootstrap-server>",
              help="REQUIRED: The Kafka broker list string in the form HOST1:PORT1,HOST2:PORT2.")
@click.option("--topic", metavar="<String: topic-name>", help="REQUIRED: The topic to use for the test.")
@click.option("--num-records", type=JAVA_INT, metavar="<Integer: count>",
              help="REQUIRED: The number of messages to send.")
@click.option("--producer-acks", metavar="<String: producer-acks>",
              help="REQUIRED: Producer acknowledgements. Must be '1' or 'all'.")
@click.option("--record-size", type=JAVA_INT, metavar="<Integer: bytes>",
              help="REQUIRED: The size of each message payload in bytes.")
@click.option("--record-key-size", type=JAVA_INT, default=0, metavar="[Integer: bytes]",
              help="Optional: The size of the message key in bytes. If not set, messages are sent without a key. "
                   "(default: 0)")
@click.option("--record-header-key-size", type=JAVA_INT, default=0, metavar="[Integer: bytes]",
              help="Optional: The size of the message header key in bytes. Used together with record-header-size. "
                   "(default: 0)")
@click.option("--record-header-size", type=JAVA_INT, default=0, metavar="[Integer: bytes]",
              help="Optional: The size of message header value in bytes. Use -1 for null header value. (default: 0)")
@click.option("--num-headers", type=JAVA_INT, default=0, metavar="[Integer: count]",
              help="Optional: The number of headers to include in each message. (default: 0)")
@click.option("--command-config", metavar="[String: config-file]",
              help="Optional: A property file for Kafka producer/consumer/admin client configuration.")
@version_option
def cli(**values):
    from pk.commands import e2e_latency as cmd
    from pk.commands.backends.kafka_clients import ConfigRefused
    from pk.commands.backends.kafka_verifiable import LatencyClient
    from pk.commands.errors import ClientConfigError, PropertiesError, java_class_of
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    for name in REQUIRED:  # checkRequiredArgs: the first one missing
        if values[name] is None:
            fail(f'Missing required argument "[{name.replace("_", "-")}]"')
    options = cmd.Options(**values)
    client = None
    try:
        cmd.check(options)
        props = load_properties(options.command_config) if options.command_config else {}
        client = LatencyClient(options.bootstrap_server, options.topic, options.producer_acks, props, click.echo)
        cmd.run(options, client, click.echo)
    except cmd.UsageError as exc:
        fail(str(exc))
    except PropertiesError as exc:  # Kafka prints the IOException's message
        fail(str(exc).split(": ", 1)[-1])
    except (ConfigRefused, ClientConfigError, cmd.ValidationError) as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(f"{java_class_of(exc)}: {exc}")
    finally:
        if client is not None:
            client.close()


def main() -> None:
    run_tool(cli, "pk-e2e-latency")


if __name__ == "__main__":
    main()
