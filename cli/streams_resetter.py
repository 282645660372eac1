"""StreamsResetter (kafka-streams-application-reset.sh, org.apache.kafka.tools.StreamsResetter,
Kafka 4.4) on a cluster through confluent-kafka:

    pk-streams-application-reset --bootstrap-server localhost:9092 --application-id app \\
        --input-topics in --to-earliest --dry-run

jopt-simple options as Kafka reads them (cli/common.KafkaCommand); a failure is Kafka's first
stderr line (`ERROR: <exception>`), exit 1; input or intermediate topics not found make the
status 1 after the rest is done. An application still running is refused, unless --force
removes the group's members first (as Kafka's tool does, with --dry-run too).
"""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option

MISSING = "Missing required option(s) [application-id]"


def _list(value: str | None) -> list[str]:
    """jopt's withValuesSeparatedBy(',')."""
    return [] if value is None else value.split(",")


@click.command(cls=KafkaCommand, no_args_message=MISSING, context_settings={"help_option_names": ["--help"]},
               help="The Streams Reset Tool resets the processing of a Kafka Streams application (group id = "
                    "application id) to the beginning of its input topics (or another position), skips to the "
                    "end of its intermediate topics and deletes its internal topics. Stop every instance of the "
                    "application first, and run once with --dry-run to preview the changes.")
@click.option("--application-id", metavar="<String: id>",
              help="REQUIRED: The Kafka Streams application ID (application.id).")
@click.option("--bootstrap-server", metavar="<String: server to connect to>",
              help="The server(s) to connect to. The broker list string in the form HOST1:PORT1,HOST2:PORT2. "
                   "(default: localhost:9092)")
@click.option("--by-duration", metavar="<String>",
              help="Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'")
@click.option("--command-config", metavar="<String: file name>",
              help="Config properties file to be passed to admin clients and embedded consumer.")
@click.option("--config-file", metavar="<String: file name>",
              help="(DEPRECATED) Property file containing configs to be passed to admin clients and embedded "
                   "consumer. Use --command-config instead.")
@click.option("--dry-run", is_flag=True,
              help="Display the actions that would be performed without executing the reset commands.")
@click.option("--force", is_flag=True,
              help="Force the removal of members of the consumer group (intended to remove stopped members if a "
                   "long session timeout was used). Make sure to shut down all stream applications when this "
                   "option is specified to avoid unexpected rebalances.")
@click.option("--from-file", metavar="<String>", help="Reset offsets to values defined in CSV file.")
@click.option("--input-topics", metavar="<String: list>",
              help="Comma-separated list of user input topics. For these topics, the tool by default will reset "
                   "the offset to the earliest available offset. Reset to other offset position by appending "
                   "other reset offset option, ex: --input-topics foo --shift-by 5")
@click.option("--intermediate-topics", metavar="<String: list>",
              help="[deprecated] Comma-separated list of intermediate user topics (topics that are input and "
                   "output topics). For these topics, the tool will skip to the end.")
@click.option("--internal-topics", metavar="<String: list>",
              help="Comma-separated list of internal topics to delete. Must be a subset of the internal topics "
                   "marked for deletion by the default behaviour (do a dry-run without this option to view these "
                   "topics).")
@click.option("--shift-by", metavar="<Long: number-of-offsets>",
              help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative")
@click.option("--to-datetime", metavar="<String>",
              help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
@click.option("--to-earliest", is_flag=True, help="Reset offsets to earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset offsets to latest offset.")
@click.option("--to-offset", metavar="<Long>", help="Reset offsets to a specific offset.")
@version_option
def cli(application_id, bootstrap_server, command_config, config_file, input_topics, intermediate_topics,
        internal_topics, **rest):
    from pk.commands import streams_resetter as cmd
    from pk.commands.backends.kafka_clients import ConfigRefused
    from pk.commands.errors import ClientConfigError, PropertiesError, java_class_of
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    if application_id is None:
        fail(MISSING)
    options = cmd.Options(application_id=application_id, bootstrap_server=bootstrap_server or "localhost:9092",
                          input_topics=_list(input_topics), intermediate_topics=_list(intermediate_topics),
                          internal_topics=_list(internal_topics), config_file=command_config or config_file, **rest)
    try:
        cmd.check_args(options)
    except cmd.UsageError as exc:
        fail(str(exc))
    cluster = None
    try:
        java = load_properties(options.config_file) if options.config_file else {}
        java["bootstrap.servers"] = options.bootstrap_server
        from pk.commands.backends.kafka_streams_reset import KafkaStreamsCluster

        cluster = KafkaStreamsCluster(java, application_id)
        code = cmd.Resetter(options, cluster, click.echo, cmd.now_ns).run()
    except cmd.ResetFailed as exc:
        fail(f"ERROR: {exc}")
    except cmd.Failure as exc:
        fail(f"ERROR: {exc}")
    except PropertiesError as exc:
        fail(f"ERROR: {exc}")
    except (ConfigRefused, ClientConfigError) as exc:
        fail(f"ERROR: {exc}")
    except KafkaError as exc:
        fail(f"ERROR: {java_class_of(exc)}: {exc}")
    finally:
        if cluster is not None:
            cluster.close()
    sys.exit(code)


def main() -> None:
    run_tool(cli, "pk-streams-application-reset")


if __name__ == "__main__":
    main()
