"""pk-run-class: `kafka-run-class.sh CLASS [args]` for the Kafka tools pk mirrors.

    pk-run-class org.apache.kafka.tools.GetOffsetShell --topic t
    pk-run-class kafka.tools.DumpLogSegments --files 00000000000000000000.log

CLASSES maps each Kafka main-class name pk accepts to the command implementing it, as
"module:attribute". The attribute is a Click command (run with the remaining arguments) or a
plain function taking the argument list. Adding a tool is one entry per class name, e.g.

    "kafka.admin.ConsumerGroupCommand": "pk.cli.consumer_groups:cli",

Names from several Kafka versions point at the same command where that is harmless (a class
that moved package between versions).

This module also holds JoptCommand, the Click command class for tools whose Kafka original
reports jopt-simple parse errors in its own words (GetOffsetShell: "Error occurred: ...",
DumpLogSegments: the JVM's "Exception in thread "main" joptsimple...").
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from .common import KafkaCommand, fail, run_tool, version_line

CLASSES: dict[str, str] = {
    # The classes bin/kafka-*.sh run, Kafka 2.8 to 4.4, for the tools pk has. Scala tools in
    # kafka.admin / kafka.tools moved to Java in org.apache.kafka.tools between 3.5 and 4.1.
    # kafka-topics.sh: kafka.admin (Scala) up to 3.6, org.apache.kafka.tools from 3.7.
    "kafka.admin.TopicCommand": "pk.cli.topics:cli",
    "org.apache.kafka.tools.TopicCommand": "pk.cli.topics:cli",
    # kafka-console-consumer.sh: kafka.tools up to 3.7, org.apache.kafka.tools.consumer from 3.8.
    "kafka.tools.ConsoleConsumer": "pk.cli.console_consumer:cli",
    "org.apache.kafka.tools.consumer.ConsoleConsumer": "pk.cli.console_consumer:cli",
    # kafka-console-producer.sh: kafka.tools up to 3.x, org.apache.kafka.tools in 4.x.
    "kafka.tools.ConsoleProducer": "pk.cli.console_producer:cli",
    "org.apache.kafka.tools.ConsoleProducer": "pk.cli.console_producer:cli",
    # kafka-configs.sh: kafka.admin (Scala) up to 4.0, org.apache.kafka.tools from 4.1.
    "kafka.admin.ConfigCommand": "pk.cli.configs:cli",
    "org.apache.kafka.tools.ConfigCommand": "pk.cli.configs:cli",
    # kafka-broker-api-versions.sh: kafka.admin up to 3.x, org.apache.kafka.tools in 4.x.
    "kafka.admin.BrokerApiVersionsCommand": "pk.cli.broker_api_versions:cli",
    "org.apache.kafka.tools.BrokerApiVersionsCommand": "pk.cli.broker_api_versions:cli",
    # kafka-delete-records.sh: kafka.admin up to 3.5, org.apache.kafka.tools from 3.6.
    "kafka.admin.DeleteRecordsCommand": "pk.cli.delete_records:cli",
    "org.apache.kafka.tools.DeleteRecordsCommand": "pk.cli.delete_records:cli",
    # kafka-delegation-tokens.sh: kafka.admin up to 3.4, org.apache.kafka.tools from 3.5.
    "kafka.admin.DelegationTokenCommand": "pk.cli.delegation_tokens:cli",
    "org.apache.kafka.tools.DelegationTokenCommand": "pk.cli.delegation_tokens:cli",
    # kafka-log-dirs.sh: kafka.admin up to 3.5, org.apache.kafka.tools from 3.6.
    "kafka.admin.LogDirsCommand": "pk.cli.log_dirs:cli",
    "org.apache.kafka.tools.LogDirsCommand": "pk.cli.log_dirs:cli",
    # kafka-cluster.sh: kafka.tools up to 3.4, org.apache.kafka.tools from 3.5.
    "kafka.tools.ClusterTool": "pk.cli.cluster:cli",
    "org.apache.kafka.tools.ClusterTool": "pk.cli.cluster:cli",
    # kafka-storage.sh: kafka.tools.StorageTool in every version.
    "kafka.tools.StorageTool": "pk.cli.storage:cli",
    # kafka-features.sh: kafka.admin up to 3.5, org.apache.kafka.tools from 3.6.
    "kafka.admin.FeatureCommand": "pk.cli.features:cli",
    "org.apache.kafka.tools.FeatureCommand": "pk.cli.features:cli",
    # kafka-leader-election.sh: kafka.admin (Scala) up to 3.6, org.apache.kafka.tools from 3.7.
    "kafka.admin.LeaderElectionCommand": "pk.cli.leader_election:cli",
    "org.apache.kafka.tools.LeaderElectionCommand": "pk.cli.leader_election:cli",
    # kafka-reassign-partitions.sh: kafka.admin (Scala) up to 3.6, org.apache.kafka.tools.reassign from 3.7.
    "kafka.admin.ReassignPartitionsCommand": "pk.cli.reassign_partitions:cli",
    "org.apache.kafka.tools.reassign.ReassignPartitionsCommand": "pk.cli.reassign_partitions:cli",
    # kafka-replica-verification.sh: kafka.tools (Scala) up to 3.4, org.apache.kafka.tools from 3.5.
    "kafka.tools.ReplicaVerificationTool": "pk.cli.replica_verification:cli",
    "org.apache.kafka.tools.ReplicaVerificationTool": "pk.cli.replica_verification:cli",
    # kafka-transactions.sh: org.apache.kafka.tools since it appeared in 3.0 (KIP-664).
    "org.apache.kafka.tools.TransactionsCommand": "pk.cli.transactions:cli",
    # kafka-metadata-quorum.sh: kafka.admin (Scala) in 3.3-3.4, org.apache.kafka.tools from 3.5.
    "kafka.admin.MetadataQuorumCommand": "pk.cli.metadata_quorum:cli",
    "org.apache.kafka.tools.MetadataQuorumCommand": "pk.cli.metadata_quorum:cli",
    # kafka-client-metrics.sh: org.apache.kafka.tools since it appeared in 3.7 (KIP-714).
    "org.apache.kafka.tools.ClientMetricsCommand": "pk.cli.client_metrics:cli",
    # kafka-server-start.sh, every version.
    "kafka.Kafka": "pk.cli.server_start:start",
    # GetOffsetShell: kafka.tools (Scala) up to 3.6, org.apache.kafka.tools (Java) from 3.7.
    "org.apache.kafka.tools.GetOffsetShell": "pk.cli.get_offsets:cli",
    "kafka.tools.GetOffsetShell": "pk.cli.get_offsets:cli",
    # DumpLogSegments: kafka.tools (Scala) up to 3.x, org.apache.kafka.tools (Java) in 4.x.
    "kafka.tools.DumpLogSegments": "pk.cli.dump_log:cli",
    "org.apache.kafka.tools.DumpLogSegments": "pk.cli.dump_log:cli",
    # ConsumerGroupCommand: kafka.admin (Scala) up to 3.7, org.apache.kafka.tools.consumer.group from 3.8.
    "kafka.admin.ConsumerGroupCommand": "pk.cli.consumer_groups:cli",
    "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand": "pk.cli.consumer_groups:cli",
    # ProducerPerformance: org.apache.kafka.tools since 0.9 (kafka.tools.ProducerPerformance, gone
    # in 2.0, was the old Scala tool with other options: not an alias).
    "org.apache.kafka.tools.ProducerPerformance": "pk.cli.producer_perf:cli",
    # ConsumerPerformance: kafka.tools (Scala) up to 3.4, org.apache.kafka.tools (Java) from 3.5.
    "org.apache.kafka.tools.ConsumerPerformance": "pk.cli.consumer_perf:cli",
    "kafka.tools.ConsumerPerformance": "pk.cli.consumer_perf:cli",
    # zookeeper-server-start.sh and zookeeper-shell.sh, 2.8 to 3.9 (gone with ZooKeeper in 4.0).
    "org.apache.zookeeper.server.quorum.QuorumPeerMain": "pk.cli.zookeeper_server:start",
    "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka": "pk.cli.zookeeper_shell:run_class",
    # VerifiableProducer, VerifiableConsumer: org.apache.kafka.tools from 2.8 to 4.4.
    "org.apache.kafka.tools.VerifiableProducer": "pk.cli.verifiable_producer:cli",
    "org.apache.kafka.tools.VerifiableConsumer": "pk.cli.verifiable_consumer:cli",
    # EndToEndLatency: kafka.tools (Scala) up to 3.6, org.apache.kafka.tools (Java) from 3.7.
    "kafka.tools.EndToEndLatency": "pk.cli.e2e_latency:cli",
    "org.apache.kafka.tools.EndToEndLatency": "pk.cli.e2e_latency:cli",
    # StreamsResetter: kafka.tools (Scala) up to 3.4, org.apache.kafka.tools (Java) from 3.5.
    "kafka.tools.StreamsResetter": "pk.cli.streams_resetter:cli",
    "org.apache.kafka.tools.StreamsResetter": "pk.cli.streams_resetter:cli",
    # kafka-groups.sh: org.apache.kafka.tools.GroupsCommand since it appeared in 4.0 (KIP-1043).
    "org.apache.kafka.tools.GroupsCommand": "pk.cli.groups:cli",
    # kafka-console-share-consumer.sh and kafka-share-groups.sh (KIP-932), both since 4.0.
    "org.apache.kafka.tools.consumer.ConsoleShareConsumer": "pk.cli.console_share_consumer:cli",
    "org.apache.kafka.tools.consumer.group.ShareGroupCommand": "pk.cli.share_groups:cli",
    # kafka-share-consumer-perf-test.sh and kafka-verifiable-share-consumer.sh (KIP-932), since 4.0.
    "org.apache.kafka.tools.ShareConsumerPerformance": "pk.cli.share_consumer_perf:cli",
    "org.apache.kafka.tools.VerifiableShareConsumer": "pk.cli.verifiable_share_consumer:cli",
    # kafka-streams-groups.sh (KIP-1071), since 4.1.
    "org.apache.kafka.tools.streams.StreamsGroupCommand": "pk.cli.streams_groups:cli",
}

# kafka-run-class.sh options before the class name: `-name <service>` and `-loggc` only
# affect the JVM's log files, so they are accepted and ignored. `-daemon` is not supported.
_SCRIPT_FLAGS = {"-loggc": 0, "-name": 1}


def usage_line() -> str:
    return "USAGE: pk-run-class [-name servicename] [-loggc] classname [opts]"


def supported_line() -> str:
    return "Supported classes: " + ", ".join(sorted(CLASSES))


def resolve(class_name: str):
    """The command object registered for a Kafka class name, or None."""
    target = CLASSES.get(class_name)
    if target is None:
        return None
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # a bug inside the tool, not a missing tool
        return None  # registered but not (yet) installed: the JVM would not find it either
    return getattr(module, attribute, None)


def run(argv: list[str]) -> None:
    args = list(argv)
    while args and args[0] in _SCRIPT_FLAGS:
        skip = _SCRIPT_FLAGS[args[0]]
        if len(args) <= skip:
            args = []
            break
        args = args[1 + skip:]
    if not args:
        fail(usage_line() + " (" + supported_line() + ")")
    class_name, rest = args[0], args[1:]
    if class_name in ("--help", "-help", "-h", "-?"):
        click.echo(usage_line())
        click.echo(supported_line())
        sys.exit(0)
    if class_name in ("--version", "-version"):
        click.echo(version_line())
        sys.exit(0)
    command = resolve(class_name)
    if command is None:
        # The JVM's words (followed, on the JVM, by "Caused by: java.lang.ClassNotFoundException: <name>").
        fail(f"Error: Could not find or load main class {class_name}")
    if isinstance(command, click.Command):
        command.main(args=rest, prog_name=f"pk-run-class {class_name}")
        sys.exit(0)
    command(rest)
    sys.exit(0)


def _complete_class(ctx, _param, incomplete: str):
    """Class names first; after one, what the tool it runs completes (its options, and the
    topic or group names it completes itself)."""
    from click.shell_completion import CompletionItem, ShellComplete

    words = list(ctx.params.get("args") or ())
    while words and words[0] in _SCRIPT_FLAGS:  # (-name <service> and -loggc come before the class)
        words = words[1 + _SCRIPT_FLAGS[words[0]]:]
    if not words:
        return [CompletionItem(name) for name in sorted(CLASSES) if name.startswith(incomplete)]
    command = resolve(words[0])
    if not isinstance(command, click.Command):
        return []  # an unknown class, or one run by a plain function: nothing to offer
    return ShellComplete(command, {}, f"pk-run-class {words[0]}", "").get_completions(words[1:], incomplete)


class _RunClassCommand(click.Command):
    """Hands every argument to run(); Click only answers shell-completion requests."""

    def shell_complete(self, ctx, incomplete: str):
        # Click offers a command's own options for a word starting with "-": after a class
        # name those are the tool's, so the argument's completion answers every word.
        return _complete_class(ctx, None, incomplete)

    def main(self, args=None, prog_name=None, **extra):
        if args is None:
            args = sys.argv[1:]
        complete_var = "_PK_RUN_CLASS_COMPLETE"
        if os.environ.get(complete_var):
            return super().main(args, prog_name or "pk-run-class", complete_var=complete_var, **extra)
        run(list(args))


@click.command(cls=_RunClassCommand, add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete_class)
def cli(args):
    """Run a Kafka tool by its main-class name, as kafka-run-class.sh does."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-run-class")


# --------------------------------------------------------------------------- jopt tools
class JoptCommand(KafkaCommand):
    """KafkaCommand whose parse errors go through `error_line(exception_class, message)`.

    `exception_class` is the jopt-simple exception Kafka's parser would throw
    (e.g. "joptsimple.UnrecognizedOptionException") and `message` its text; the default
    prints the message alone, like KafkaCommand. Tools override error_line to add the
    prefix their Kafka original prints.
    """

    def error_line(self, exception_class: str, message: str) -> str:
        return message

    def main(self, args=None, prog_name=None, **extra):
        if args is None:
            args = sys.argv[1:]
        complete_var = f"_{(prog_name or self.name or '').replace('-', '_').upper()}_COMPLETE"
        if os.environ.get(complete_var) or (not args and self.no_args_message):
            # shell completion and the no-argument usage: exactly as every KafkaCommand
            return super().main(args, prog_name, **extra)
        try:
            return click.Command.main(self, self.normalise(list(args)), prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            sys.exit(130)
        except click.exceptions.NoSuchOption as exc:
            fail(self.error_line("joptsimple.UnrecognizedOptionException",
                                 f"{exc.option_name.lstrip('-')} is not a recognized option"))
        except click.exceptions.BadOptionUsage as exc:
            name = (exc.option_name or "").lstrip("-")
            if "requires an argument" in exc.message:
                fail(self.error_line("joptsimple.OptionMissingRequiredArgumentException",
                                     f"Option {name} requires an argument"))
            fail(self.error_line("joptsimple.OptionException", exc.message))
        except click.exceptions.BadParameter as exc:
            fail(self.error_line("joptsimple.OptionArgumentConversionException", exc.message))
        except click.UsageError as exc:
            fail(self.error_line("joptsimple.OptionException", exc.message))


if __name__ == "__main__":
    main()
