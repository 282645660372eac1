"""pk-console-producer: read lines from standard input and append them to a topic
(kafka-console-producer, Kafka 4.4): on the bundled engine, or with --bootstrap-server (or the
deprecated --broker-list) on a cluster through confluent-kafka."""

from __future__ import annotations

import sys

import click

from .common import JAVA_INT, JAVA_LONG, KafkaCommand, data_dir_option, fail, run_tool, stdout_closed, version_option

HELP_LINE = "This tool helps to read data from standard input and publish it to Kafka."


def _single(ctx, param, values):
    """jopt-simple's valueOf(): a single-valued option given twice is an error."""
    if not values:
        return None
    if len(values) > 1:
        raise click.UsageError(
            f"Found multiple arguments for option {param.opts[0].lstrip('-')}, but you asked for only one")
    return values[0]


def single(*decls, **kwargs):
    return click.option(*decls, multiple=True, callback=_single, **kwargs)


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@single("--bootstrap-server", metavar="SERVER",
        help="The server(s) to connect to, host:port[,host:port]; without it (and --broker-list) pk uses the "
             "bundled engine.")
@single("--broker-list", metavar="HOSTS",
        help="DEPRECATED (removed in Kafka 4.0; pk keeps it for older scripts), use --bootstrap-server instead; "
             "ignored if --bootstrap-server is specified.")
@single("--topic", metavar="TOPIC", help="REQUIRED: The topic id to produce messages to.")
@click.option("--sync", is_flag=True,
              help="If set message send requests to the brokers are synchronously, one at a time as they arrive.")
@click.option("--compression-codec", metavar="[CODEC]", is_flag=False, flag_value="", default=None,
              help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'. If specified "
                   "without value, then it defaults to 'gzip'.")
@single("--batch-size", type=JAVA_INT, metavar="SIZE",
        help="Number of messages to send in a single batch if they are not being sent synchronously. Please "
             "note that this option will be replaced if max-partition-memory-bytes is also set. (default: 16384)")
@single("--max-partition-memory-bytes", type=JAVA_INT, metavar="BYTES",
        help="The buffer size allocated for a partition: the producer's batch.size. (default: 16384)")
@single("--message-send-max-retries", type=JAVA_INT, metavar="N",
        help="The producer's retries. (default: 3)")
@single("--retry-backoff-ms", type=JAVA_LONG, metavar="MS", help="The producer's retry.backoff.ms. (default: 100)")
@single("--timeout", type=JAVA_LONG, metavar="TIMEOUT_MS",
        help="The maximum time a message will queue awaiting sufficient batch size: the producer's linger.ms. "
             "(default: 1000)")
@single("--request-required-acks", metavar="ACKS", help="The required `acks` of the producer requests. (default: -1)")
@single("--request-timeout-ms", type=JAVA_INT, metavar="MS",
        help="The ack timeout of the producer requests. (default: 1500)")
@single("--metadata-expiry-ms", type=JAVA_LONG, metavar="MS",
        help="The producer's metadata.max.age.ms. (default: 300000)")
@single("--max-block-ms", type=JAVA_LONG, metavar="MS",
        help="The max time that the producer will block for during a send request. (default: 60000)")
@single("--max-memory-bytes", type=JAVA_LONG, metavar="BYTES",
        help="The producer's buffer.memory. (default: 33554432)")
@single("--socket-buffer-size", type=JAVA_INT, metavar="SIZE",
        help="The producer's send.buffer.bytes. (default: 102400)")
@single("--line-reader", metavar="READER_CLASS",
        help="The class reading lines from standard input; pk has only the default, "
             "kafka.tools.ConsoleProducer$LineMessageReader.")
@click.option("--reader-property", multiple=True, metavar="PROP",
              help="A line reader property, key=value: parse.key, key.separator (default TAB), parse.headers, "
                   "headers.delimiter (TAB), headers.separator (,), headers.key.separator (:), ignore.error, "
                   "null.marker, and pk's file=PATH (read PATH instead of standard input).")
@click.option("--property", multiple=True, metavar="PROP",
              help="(DEPRECATED) The same as --reader-property.")
@single("--reader-config", metavar="CONFIG_FILE",
        help="Config properties file for the message reader. Note that --reader-property takes precedence over "
             "this config.")
@click.option("--command-property", multiple=True, metavar="PRODUCER_PROP",
              help="Producer config properties in the form key=value.")
@click.option("--producer-property", multiple=True, metavar="PRODUCER_PROP",
              help="(DEPRECATED) The same as --command-property.")
@single("--command-config", metavar="CONFIG_FILE",
        help="Producer config properties file. Note that --command-property takes precedence over this config.")
@single("--producer.config", "producer_config", metavar="CONFIG_FILE",
        help="(DEPRECATED) The same as --command-config.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="A librdkafka property for the --bootstrap-server client (as kcat's -X); wins over the "
                   "producer configuration.")
@click.option("--input", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="pk only: 'json' reads one record a line as pk-console-consumer --output json writes it "
                   "(key, value, headers, partition, timestamp; schema in the README) instead of the line "
                   "reader's text.")
@data_dir_option
@version_option
def cli(data_dir, bootstrap_server, broker_list, x, **opts):
    from pk.commands import producer as cmd
    from pk.commands.errors import ProducerFailure, UsageError
    from pk.engine.errors import KafkaError

    lists = {name: list(opts.pop(name)) for name in ("property", "reader_property", "producer_property",
                                                     "command_property")}
    options = cmd.ProducerOptions(**lists, **opts)
    try:
        # Kafka checks --topic and the deprecated options (printing its warnings on stdout)
        # before the bootstrap address.
        for warning in cmd.check_args(options):
            print(warning, flush=True)
        # 3.7: --bootstrap-server wins; --broker-list is used only without it.
        bootstrap = bootstrap_server if bootstrap_server is not None else broker_list
        if bootstrap is None and not x:
            opener = cmd.engine_producer_opener(data_dir)
        else:
            from pk.commands.backends import kafka_clients

            extra = kafka_clients.remote_target(bootstrap, x, data_dir)
            opener = kafka_clients.producer_opener(bootstrap, extra)
        cmd.run(options, opener)
    except (UsageError, ProducerFailure, KafkaError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        stdout_closed()


def main() -> None:
    run_tool(cli, "pk-console-producer")


if __name__ == "__main__":
    main()
