"""pk-acls: kafka-acls.sh (org.apache.kafka.tools.AclCommand, Kafka 4.4).

    pk-acls --add --allow-principal User:alice --operation Read --topic orders
    pk-acls --list --topic orders
    pk-acls --bootstrap-server broker:9092 --remove --force --topic orders

Without --bootstrap-server (or --bootstrap-controller) it works on the bundled engine's data
directory, whose ACLs pk-server-start's authorizer enforces. Usage errors are Kafka's text on
one line; failures "Error while executing ACL command: <message>"; both exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, data_dir_option, fail, version_option
from .output import output_option

HELP_LINE = "This tool helps to manage acls on kafka."
_PRINCIPAL_HELP = ("principal is in principalType:name format. Note that principalType must be supported by the "
                   "Authorizer being used. For example, User:'*' is the wild card indicating all users.")


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--add", is_flag=True, help="Indicates you are trying to add ACLs.")
@click.option("--remove", is_flag=True, help="Indicates you are trying to remove ACLs.")
@click.option("--list", "list_", is_flag=True,
              help="List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to "
                   "specify a resource.")
@click.option("--bootstrap-server", metavar="SERVER",
              help="A list of host/port pairs to use for establishing the connection to the Kafka cluster. "
                   "Without it (and --bootstrap-controller), pk uses the bundled engine's data directory.")
@click.option("--bootstrap-controller", metavar="CONTROLLER",
              help="A list of host/port pairs of the cluster's controllers (pk connects to them as to brokers).")
@click.option("--command-config", metavar="FILE", help="A property file containing configs to be passed to Admin Client.")
@click.option("--topic", multiple=True, metavar="TOPIC",
              help="topic to which ACLs should be added or removed. A value of '*' indicates ACL should apply to "
                   "all topics.")
@click.option("--cluster", is_flag=True, help="Add/Remove cluster ACLs.")
@click.option("--group", multiple=True, metavar="GROUP",
              help="Consumer Group to which the ACLs should be added or removed. A value of '*' indicates the ACLs "
                   "should apply to all groups.")
@click.option("--transactional-id", multiple=True, metavar="TRANSACTIONAL-ID",
              help="The transactionalId to which ACLs should be added or removed. A value of '*' indicates the "
                   "ACLs should apply to all transactionalIds.")
@click.option("--delegation-token", multiple=True, metavar="TOKEN",
              help="Delegation token to which ACLs should be added or removed. A value of '*' indicates ACL "
                   "should apply to all tokens.")
@click.option("--user-principal", multiple=True, metavar="PRINCIPAL",
              help="Specifies a user principal as a resource in relation with the operation.")
@click.option("--resource-pattern-type", metavar="ANY|MATCH|LITERAL|PREFIXED",
              help="The type of the resource pattern or pattern filter (default: LITERAL).")
@click.option("--operation", multiple=True, metavar="OPERATION",
              help="Operation that is being allowed or denied: Write, Read, DescribeConfigs, DescribeTokens, "
                   "Alter, ClusterAction, IdempotentWrite, CreateTokens, TwoPhaseCommit, Delete, All, Create, "
                   "Describe, AlterConfigs (default: All).")
@click.option("--allow-principal", multiple=True, metavar="PRINCIPAL", help=_PRINCIPAL_HELP)
@click.option("--deny-principal", multiple=True, metavar="PRINCIPAL",
              help="principal is in principalType:name format. DENY rules take precedence over ALLOW rules.")
@click.option("--allow-host", multiple=True, metavar="HOST",
              help="Host from which principals listed in --allow-principal will have access (default: *).")
@click.option("--deny-host", multiple=True, metavar="HOST",
              help="Host from which principals listed in --deny-principal will be denied access (default: *).")
@click.option("--principal", multiple=True, metavar="PRINCIPAL",
              help="List ACLs for the specified principal. Multiple --principal option can be passed.")
@click.option("--producer", is_flag=True,
              help="Convenience option to add/remove ACLs for producer role: WRITE, DESCRIBE and CREATE on topic.")
@click.option("--consumer", is_flag=True,
              help="Convenience option to add/remove ACLs for consumer role: READ, DESCRIBE on topic and READ on "
                   "group.")
@click.option("--idempotent", is_flag=True, help="Enable idempotence for the producer (with --producer).")
@click.option("--force", is_flag=True, help="Assume Yes to all queries and do not prompt.")
@output_option
@data_dir_option
@version_option
def cli(data_dir, output, list_, **opts):
    from pk.commands import acls as cmd

    options = cmd.AclOptions(list=list_, **{k: list(v) if isinstance(v, tuple) else v for k, v in opts.items()})
    backend = None
    try:
        cmd.check_args(options)
        if output == "json" and not options.list:
            fail("--output json applies to --list only")
        backend = _backend(data_dir, options)
        out = _writer()
        if options.add:
            cmd.add_acls(backend, options, out)
        elif options.remove:
            cmd.remove_acls(backend, options, out, _confirm)
        elif output == "json":
            from pk.commands import acls_json

            acls_json.list_acls(backend, options, out)
        else:
            cmd.list_acls(backend, options, out)
    except cmd.AclUsageError as exc:
        fail(str(exc))
    except cmd.AclCommandError as exc:
        fail(cmd.ERROR_PREFIX + str(exc))
    finally:
        if backend is not None:
            backend.close()


def _writer():
    def out(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()  # a prompt is seen before the answer is read
    return out


def _confirm() -> bool:
    line = sys.stdin.readline()
    return line.strip().lower() == "y"


def _backend(data_dir, options):
    """The bundled engine's ACLs, or the cluster's through the Admin API."""
    from pk.commands import acls as cmd

    bootstrap = options.bootstrap_server or options.bootstrap_controller
    if bootstrap is None:
        return cmd.EngineAcls(data_dir)
    from pk.commands.backends.kafka_acls import KafkaAcls
    from pk.commands.backends.kafka_admin import AdminError, open_admin
    from pk.commands.client_config import check_target
    from pk.commands.errors import ClientConfigError, PropertiesError

    try:
        check_target(bootstrap, (), data_dir)
        return KafkaAcls(open_admin(bootstrap, options.command_config, None, client_id="AclCommand"))
    except ClientConfigError as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(cmd.ERROR_PREFIX + str(exc))
    except AdminError as exc:
        fail(cmd.ERROR_PREFIX + exc.execution_message())


def main() -> None:
    cli.main(prog_name="pk-acls")


if __name__ == "__main__":
    main()
