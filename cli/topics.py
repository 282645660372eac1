"""pk-topics: create, delete, describe, or change a topic (kafka-topics)."""

from __future__ import annotations

import sys

import click

from .completion import complete_topics
from .common import KafkaCommand, data_dir_option, fail, run_tool, stdout_closed, version_option
from .output import output_option

HELP_LINE = "This tool helps to create, delete, describe, or change a topic."


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message="Create, delete, describe, or change a topic.",
               context_settings={"help_option_names": ["--help"]})
@click.option("--create", is_flag=True, help="Create a new topic.")
@click.option("--list", "list_", is_flag=True, help="List all available topics.")
@click.option("--describe", is_flag=True, help="List details for the given topics.")
@click.option("--alter", is_flag=True,
              help="Alter the number of partitions and the replica assignment (and, on the bundled "
                   "engine, topic configs).")
@click.option("--delete", is_flag=True, help="Delete a topic.")
@click.option("--topic", metavar="TOPIC", shell_complete=complete_topics,
              help="The topic to create, alter, describe or delete. A regular expression except with "
                   "--create; quote it and escape regex symbols with '\\', e.g. \"test\\.topic\".")
@click.option("--topic-id", metavar="TOPIC-ID", help="The topic id to describe.")
@click.option("--partitions", metavar="N",
              help="Partitions of the topic being created or altered (increasing them changes which "
                   "partition a key maps to). Default for create: the broker's num.partitions.")
@click.option("--replication-factor", metavar="N",
              help="Replication factor of each partition of the new topic. Default: the broker's "
                   "default.replication.factor.")
@click.option("--replica-assignment", metavar="B1:B2,B1:B2,...",
              help="Manual partition-to-broker assignment for the topic being created or altered.")
@click.option("--config", multiple=True, metavar="NAME=VALUE",
              help="A topic config override for the topic being created (or, on the bundled engine, altered).")
@click.option("--delete-config", multiple=True, metavar="NAME",
              help="A topic config override to remove (bundled engine, with --alter; elsewhere ignored "
                   "with Kafka 4.4's deprecation warning).")
@click.option("--partition-size-limit-per-response", metavar="N",
              help="With --describe: the most partitions in one DescribeTopicPartitions response (Kafka "
                   "pages with it; pk checks the number and needs no paging).")
@click.option("--if-exists", is_flag=True,
              help="With --alter, --delete or --describe: act only if the topic exists.")
@click.option("--if-not-exists", is_flag=True, help="With --create: act only if the topic does not exist.")
@click.option("--exclude-internal", is_flag=True, help="Leave internal topics out of --list and --describe.")
@click.option("--under-replicated-partitions", is_flag=True, help="With --describe: only under-replicated partitions.")
@click.option("--under-min-isr-partitions", is_flag=True,
              help="With --describe: only partitions whose ISR is smaller than min.insync.replicas.")
@click.option("--at-min-isr-partitions", is_flag=True,
              help="With --describe: only partitions whose ISR equals min.insync.replicas.")
@click.option("--unavailable-partitions", is_flag=True,
              help="With --describe: only partitions whose leader is not available.")
@click.option("--topics-with-overrides", is_flag=True, help="With --describe: only topics with config overrides.")
@click.option("--zookeeper", metavar="HOSTS",
              help="DEPRECATED: administer a ZooKeeper-mode Kafka cluster directly, as Kafka 2.8's tool did "
                   "(host:port[,host:port...][/chroot]).")
@click.option("--disable-rack-aware", is_flag=True, help="With --zookeeper: rack-unaware replica assignment.")
@click.option("--force", is_flag=True, help="With --zookeeper: accepted and ignored, as Kafka 2.8 did.")
@click.option("--bootstrap-server", metavar="HOST:PORT[,...]",
              help="The Kafka cluster to administer (through its Admin API); without it pk-topics works on "
                   "the bundled engine's data directory.")
@click.option("--command-config", metavar="FILE",
              help="A Java properties file with Admin client configs (security.protocol, sasl.jaas.config, "
                   "ssl.truststore.location, ...), for --bootstrap-server.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="A librdkafka property for the --bootstrap-server client (as kcat's -X); wins over "
                   "--command-config.")
@output_option
@data_dir_option
@version_option
def cli(data_dir, list_, bootstrap_server, command_config, x, output, **opts):
    from pk.commands import topics as cmd
    from pk.commands import topics_json
    from pk.commands.errors import UsageError
    from pk.engine.errors import KafkaError

    zookeeper = opts.get("zookeeper") is not None
    remote = bootstrap_server is not None and not zookeeper
    # With --zookeeper, --bootstrap-server is only parsed for 2.8's "Only one of" check.
    options = cmd.TopicOptions(list=list_, config=list(opts.pop("config")),
                               delete_config=list(opts.pop("delete_config")),
                               bootstrap_server=bootstrap_server if zookeeper else None,
                               configs_alterable=not remote, **opts)
    try:
        cmd.check_args(options)
        if output == "json":
            topics_json.check(options)
    except UsageError as exc:
        fail(str(exc))
    if zookeeper:
        _run_zookeeper(options)
        return
    backend = _open_backend(data_dir, bootstrap_server if remote else None, command_config, x)
    try:
        (topics_json.run if output == "json" else cmd.run)(backend, options, click.echo)
    except KafkaError as exc:
        fail(cmd.ERROR_PREFIX + str(exc))
    except BrokenPipeError:
        stdout_closed()
    except OSError as exc:
        fail(cmd.ERROR_PREFIX + (f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror or str(exc)))
    finally:
        backend.close()


def _open_backend(data_dir, bootstrap, command_config, x):
    """The bundled engine, or with --bootstrap-server the cluster (commands/backends/kafka_admin.py).
    Kafka creates its Admin client outside the command's error handling, so what stops
    it (a bad address, an unreadable --command-config, a configuration librdkafka cannot
    take) is printed as the bare message."""
    from pk.commands import topics as cmd
    from pk.commands.client_config import check_target
    from pk.commands.errors import ClientConfigError
    from pk.commands.errors import PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    try:
        if bootstrap is None and not x:
            from pk.commands.backends.engine import EngineBackend

            if command_config is not None:
                load_properties(command_config)  # read, as Kafka reads it; the engine needs none of it
            return EngineBackend(data_dir)
        from pk.commands.backends.kafka_admin import KafkaTopicsBackend, open_admin

        extra = check_target(bootstrap, x, data_dir)
        admin = open_admin(bootstrap, command_config, extra)
        return KafkaTopicsBackend(admin, _wire_factory(bootstrap, command_config, extra, admin.timeout_s))
    except (ClientConfigError, PropertiesError) as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(cmd.ERROR_PREFIX + str(exc))
    except OSError as exc:
        fail(cmd.ERROR_PREFIX + (f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror or str(exc)))


def _wire_factory(bootstrap, command_config, extra, timeout_s):
    """What opens pk's wire client for the describe requests (KafkaTopicsBackend), or None where
    only librdkafka can make the connection: -X properties, or a security setting pk's wire
    client does not speak."""
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.errors import ClientConfigError
    from pk.commands.properties import load_properties

    if extra:
        return None
    try:
        security = connection_security(load_properties(command_config) if command_config is not None else {})
    except ClientConfigError:
        return None
    return lambda: WireClient(bootstrap, timeout_s, "describeTopics", security=security)


def _run_zookeeper(options) -> None:
    """Kafka 2.8's `kafka-topics --zookeeper` (commands/topics_zk.py over kazoo)."""
    from pk.commands import topics as cmd
    from pk.commands import topics_zk
    from pk.commands.backends.zookeeper import ZkBackend, ZkFatalError
    from pk.engine.errors import KafkaError

    backend = None
    try:
        backend = ZkBackend(options.zookeeper)
        topics_zk.run(backend, options, click.echo)
    except ZkFatalError as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(cmd.ERROR_PREFIX + str(exc))
    finally:
        if backend is not None:
            backend.close()


def main() -> None:
    run_tool(cli, "pk-topics")


if __name__ == "__main__":
    main()
    sys.exit(0)
