"""pk-console-share-consumer: Kafka 4.4's kafka-console-share-consumer, a member of a share
group (KIP-932) that writes the records it is given to standard output and acknowledges each
(accept, or --reject / --release). On a cluster (--bootstrap-server) over pk's own share
consumer (commands/backends/wire_share.py); without it, on the bundled engine's data directory
(commands/backends/engine_share.py: several processes share the group through its files)."""

from __future__ import annotations

import signal
import sys

import click

from .completion import complete_groups, complete_topics
from .common import JAVA_INT, KafkaCommand, data_dir_option, fail, run_tool, version_option

HELP_LINE = "This tool helps to read data from Kafka topics using share groups and outputs it to standard output."


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER",
              help="The server(s) to connect to. Without it pk works on the bundled engine's data directory.")
@click.option("--topic", metavar="TOPIC", shell_complete=complete_topics, help="The topic to consume from.")
@click.option("--group", metavar="GROUP", shell_complete=complete_groups,
              help="The share group id of the consumer.  [default: console-share-consumer]")
@click.option("--max-messages", metavar="N",
              help="The maximum number of messages to consume before exiting. If not set, consumption is continual.")
@click.option("--timeout-ms", metavar="MS",
              help="If specified, exit if no message is available for consumption for the specified interval.")
@click.option("--reject", is_flag=True, help="If specified, messages are rejected as they are consumed.")
@click.option("--release", is_flag=True, help="If specified, messages are released as they are consumed.")
@click.option("--reject-message-on-error", is_flag=True,
              help="If there is an error when processing a message, reject it instead of halting.")
@click.option("--formatter", metavar="CLASS",
              help="The name of a class to use for formatting Kafka messages for display.  "
                   "[default: org.apache.kafka.tools.consumer.DefaultMessageFormatter]")
@click.option("--formatter-property", "formatter_properties", multiple=True, metavar="KEY=VALUE",
              help="Formatter property: print.timestamp, print.key, print.offset, print.delivery, print.epoch, "
                   "print.partition, print.headers, print.value, key.separator, line.separator, "
                   "headers.separator, null.literal, key.deserializer, value.deserializer, header.deserializer.")
@click.option("--property", "properties", multiple=True, metavar="KEY=VALUE",
              help="(DEPRECATED) The same as --formatter-property.")
@click.option("--formatter-config", metavar="FILE",
              help="Config properties file to initialize the message formatter (--formatter-property wins).")
@click.option("--key-deserializer", metavar="CLASS", help="The name of the class to use for deserializing keys.")
@click.option("--value-deserializer", metavar="CLASS",
              help="The name of the class to use for deserializing values.")
@click.option("--command-property", "command_properties", multiple=True, metavar="KEY=VALUE",
              help="Consumer config properties in the form key=value.")
@click.option("--consumer-property", "consumer_properties", multiple=True, metavar="KEY=VALUE",
              help="(DEPRECATED) The same as --command-property.")
@click.option("--command-config", metavar="FILE",
              help="Consumer config properties file (--command-property wins).")
@click.option("--consumer-config", metavar="FILE", help="(DEPRECATED) The same as --command-config.")
@click.option("--enable-systest-events", is_flag=True,
              help="Log lifecycle events of the share consumer (shutdown_complete).")
@data_dir_option
@version_option
def cli(bootstrap_server, data_dir, **opts):
    from pk.commands import share_consumer as cmd
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    # Kafka 4.4 converts these two outside its option parsing, inside the run's catch-all:
    # a bad value is logged as the run's error (--max-messages once the consumer exists).
    timeout_ms, timeout_bad = _java_int(opts.pop("timeout_ms"), "timeout-ms")
    max_messages, max_bad = _java_int(opts.pop("max_messages"), "max-messages")
    opts.update(timeout_ms=timeout_ms, max_messages=max_messages)
    lists = {name: list(opts.pop(name)) for name in ("properties", "formatter_properties", "consumer_properties",
                                                     "command_properties")}
    options = cmd.ShareConsumerOptions(**lists, **opts)
    try:
        plan = cmd.plan(options, bootstrap_server, warn=lambda line: print(line, flush=True),
                        log=lambda line: sys.stderr.write(line + "\n"))
    except (UsageError, PropertiesError, OSError, ValueError) as exc:
        fail(str(exc))

    if timeout_bad is not None:
        _run_failed(timeout_bad)
        sys.exit(1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        if bootstrap_server is None:
            from pk.commands.backends.engine_share import EngineShareConsumer

            from pk.engine.consumer import _int

            consumer = EngineShareConsumer(data_dir, plan.group, options.topic, client_id=plan.config["client.id"],
                                           max_records=_int(plan.config, "max.poll.records", 500))
        else:
            from pk.commands.backends.wire import connection_security
            from pk.commands.backends.wire_share import ShareConsumer

            consumer = ShareConsumer(bootstrap_server, plan.group, options.topic,
                                     security=connection_security(plan.config), client_id=plan.config["client.id"])
    except (KafkaError, ClientConfigError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        sys.exit(130)

    if max_bad is not None:
        consumer.close()
        sys.stderr.write("Processed a total of 0 messages\n")
        _run_failed(max_bad)
        sys.exit(1)
    tally = cmd.Tally()
    code = 0
    error = None  # Kafka reports the count first, then the error that ended the run
    try:
        cmd.consume(consumer, options, plan, sys.stdout.buffer, lambda line: sys.stderr.write(line + "\n"), tally)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        sys.stderr.write("Unable to write to standard out, closing consumer.\n")
        sys.stdout = None  # do not flush into the closed pipe again at exit
    except KafkaError as exc:
        error = f"Unknown error when running consumer: {exc}"
        code = 1
    finally:
        try:
            consumer.close()
        except (KafkaError, OSError):
            pass  # the broker releases what this member held when its session ends
        sys.stderr.write(f"Processed a total of {tally.count} messages\n")
        if error is not None:
            sys.stderr.write(error + "\n")
        if options.enable_systest_events:
            print("shutdown_complete")
    sys.exit(code)


def _java_int(text: str | None, name: str) -> tuple[int | None, str | None]:
    """(value, None), or (None, jopt-simple's conversion error) for a value Integer refuses."""
    if text is None:
        return None, None
    try:
        return JAVA_INT.convert(text, None, None), None
    except click.BadParameter:
        return None, f"Cannot parse argument '{text}' of option {name}"


def _run_failed(message: str) -> None:
    from pk.commands.consumer import log4j_line
    from pk.commands.share_consumer import CONSOLE_SHARE_CONSUMER

    sys.stderr.write(log4j_line("ERROR", "Unknown error when running consumer: ", CONSOLE_SHARE_CONSUMER) + "\n")
    sys.stderr.write(f"joptsimple.OptionArgumentConversionException: {message}\n")


def main() -> None:
    run_tool(cli, "pk-console-share-consumer")


if __name__ == "__main__":
    main()
