"""pk-leader-election: elect the preferred (or an unclean) leader of partitions of a cluster
(kafka-leader-election). A cluster tool: --bootstrap-server is required, as in Kafka."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option

HELP_LINE = ("This tool attempts to elect a new leader for a set of topic partitions. The type of elections "
             "supported are preferred replicas and unclean replicas.")


def _java_int(value: str, option: str) -> int:
    try:
        n = int(value.strip() if value.strip() == value else "x")
    except ValueError:
        n = None
    if n is None or not -2**31 <= n < 2**31:
        fail(f"Cannot parse argument '{value}' of option {option}")
    return n


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--admin.config", "admin_config", metavar="FILE",
              help="(DEPRECATED) Configuration properties files to pass to the admin client. "
                   "Use --command-config instead.")
@click.option("--all-topic-partitions", is_flag=True,
              help="Perform election on all of the eligible topic partitions based on the type of election "
                   "(see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.")
@click.option("--bootstrap-server", metavar="HOST:PORT",
              help="A hostname and port for the broker to connect to, in the form host:port. Multiple comma "
                   "separated URLs can be given. REQUIRED.")
@click.option("--command-config", metavar="FILE",
              help="Configuration properties files to pass to the admin client.")
@click.option("--election-type", metavar="ELECTION_TYPE",
              help='Type of election to attempt: "preferred" or "unclean". REQUIRED.')
@click.option("--partition", metavar="PARTITION_ID",
              help="Partition id for which to perform an election. REQUIRED if --topic is specified.")
@click.option("--path-to-json-file", metavar="FILE",
              help='The JSON file with the list of partitions for which leader elections should be performed: '
                   '{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}. '
                   'Not allowed if --all-topic-partitions or --topic flags are specified.')
@click.option("--topic", metavar="TOPIC",
              help="Name of topic for which to perform an election. Not allowed if --path-to-json-file or "
                   "--all-topic-partitions is specified.")
@version_option
def cli(admin_config, all_topic_partitions, bootstrap_server, command_config, election_type, partition,
        path_to_json_file, topic):
    from pk.commands import leader_election as cmd
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    # LeaderElectionCommandOptions.validate(), in its order
    missing = [name for name, value in (("bootstrap-server", bootstrap_server), ("election-type", election_type))
               if value is None]
    if missing:
        fail("Missing required option(s): " + ", ".join(missing))
    if sum(x is not None and x is not False for x in (topic, all_topic_partitions, path_to_json_file)) != 1:
        fail("One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file")
    if topic is not None and partition is None:
        fail("Missing required option(s): partition")
    if topic is None and partition is not None:
        fail("Option partition is only allowed if topic is used")
    if election_type.upper() not in cmd.ELECTION_TYPES:
        fail(f"Cannot parse argument '{election_type}' of option election-type")
    election_type = election_type.upper()
    admin = None
    try:
        partitions = None
        if path_to_json_file is not None:
            try:
                with open(path_to_json_file, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                raise UsageError(f"java.io.IOException: Unable to read file {path_to_json_file}") from None
            partitions = cmd.parse_election_file(text)
        elif topic is not None:
            partitions = [(topic, _java_int(partition, "partition"))]
        from pk.commands.backends.kafka_admin import open_admin

        admin = open_admin(bootstrap_server, command_config or admin_config, None, default_timeout_ms=30000)
        failed = cmd.run(admin, election_type, partitions, click.echo)
    except UsageError as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        if getattr(exc, "name", None) == "REQUEST_TIMED_OUT":
            click.echo("Timeout waiting for election results")
            fail("Timeout waiting for election results")
        if getattr(exc, "name", None) == "CLUSTER_AUTHORIZATION_FAILED":
            click.echo("Not authorized to perform leader election")
            fail("Not authorized to perform leader election")
        java = getattr(exc, "execution_message", None)
        fail(java() if java else str(exc))
    finally:
        if admin is not None:
            admin.close()
    if failed:
        fail(f"{len(failed)} replica(s) could not be elected")
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-leader-election")


if __name__ == "__main__":
    main()
