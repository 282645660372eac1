"""pk-configs: describe and alter entity configs (kafka-configs, Kafka 4.4's ConfigCommand),
on the bundled engine or, with --bootstrap-server, on a cluster."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, data_dir_option, fail, run_tool, stdout_closed, version_option
from .completion import complete_groups, complete_topics
from .console_producer import single
from .output import output_option

HELP_LINE = ("This tool helps to manipulate and describe entity config for a topic, client, user, broker, ip, "
             "client-metrics or group")


class ConfigCommandCli(KafkaCommand):
    """Keeps what Kafka's parser keeps and Click does not: the arguments as given (Kafka
    echoes them in its error line) and the order of --entity-name / --entity-default."""

    def parse_args(self, ctx, args):
        ctx.meta["configs.args"] = list(args)
        order = []
        for arg in args:
            if arg == "--entity-default":
                order.append(True)
            elif arg == "--entity-name" or arg.startswith("--entity-name="):
                order.append(False)
        ctx.meta["configs.order"] = tuple(order)
        return super().parse_args(ctx, args)


@click.command(cls=ConfigCommandCli, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@single("--add-config", metavar="K=V,...",
        help="Key Value pairs of configs to add. Square brackets can be used to group values which contain "
             "commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.")
@single("--add-config-file", metavar="FILE", help="Path to a properties file with configs to add.")
@click.option("--all", "all_", is_flag=True,
              help="List all configs for the given entity, including static configs if available.")
@click.option("--alter", is_flag=True, help="Alter the configuration for the entity.")
@single("--bootstrap-controller", metavar="SERVER", help="The Kafka controllers to connect to.")
@single("--bootstrap-server", metavar="SERVER",
        help="The Kafka servers to connect to; without it pk works on the bundled engine.")
@single("--broker", metavar="ID", help="The broker's ID.")
@click.option("--broker-defaults", is_flag=True, default=None, help="The config defaults for all brokers.")
@single("--broker-logger", metavar="ID", help="The broker's ID for its logger config.")
@single("--client", metavar="ID", help="The client's ID.")
@click.option("--client-defaults", is_flag=True, default=None, help="The config defaults for all clients.")
@single("--client-metrics", metavar="NAME", help="The client metrics config resource name.")
@single("--command-config", metavar="FILE",
        help="Property file containing configs to be passed to Admin Client.")
@click.option("--delete-config", multiple=True, metavar="K1,K2", help="config keys to remove 'k1,k2'")
@click.option("--describe", is_flag=True, help="List configs for the given entity.")
@click.option("--entity-default", is_flag=True,
              help="Default entity name for clients/users/brokers/ips (applies to corresponding entity type)")
@click.option("--entity-name", multiple=True, metavar="NAME",
              help="Name of entity (topic name/client id/user principal name/broker id/ip/client metrics/group id)")
@click.option("--entity-type", multiple=True, metavar="TYPE",
              help="Type of entity (topics/clients/users/brokers/broker-loggers/ips/client-metrics/groups)")
@single("--group", metavar="ID", shell_complete=complete_groups, help="The group's ID.")
@single("--ip", metavar="IP", help="The IP address.")
@click.option("--ip-defaults", is_flag=True, default=None, help="The config defaults for all IPs.")
@single("--topic", metavar="TOPIC", shell_complete=complete_topics, help="The topic's name.")
@single("--user", metavar="PRINCIPAL", help="The user's principal name.")
@click.option("--user-defaults", is_flag=True, default=None, help="The config defaults for all users.")
@output_option
@data_dir_option
@version_option
def cli(data_dir, output, all_, describe, alter, bootstrap_server, bootstrap_controller, command_config, entity_type,
        entity_name, entity_default, add_config, add_config_file, delete_config, **flags):
    from pk.commands import configs as cmd
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    ctx = click.get_current_context()
    args = ctx.meta["configs.args"]
    options = cmd.Options(
        describe=describe, alter=alter, all=all_, bootstrap_server=bootstrap_server,
        bootstrap_controller=bootstrap_controller, command_config=command_config, entity_type=entity_type,
        entity_name=entity_name, entity_default=entity_default, name_or_default_order=ctx.meta["configs.order"],
        add_config=add_config, add_config_file=add_config_file, delete_config=delete_config,
        flags={k: (v if v is not True else "") for k, v in flags.items() if v not in (None, False)})
    bootstrap = bootstrap_server or bootstrap_controller

    def out(line: str) -> None:
        try:
            click.echo(line)
        except BrokenPipeError:
            stdout_closed()

    def execution_failed(java_line: str) -> None:
        fail(f"Error while executing config command with args '{' '.join(args)}'\n{java_line}")

    backend = None
    try:
        cmd.check_args(options)
        if output == "json" and alter:
            fail("--output json applies to --describe only")
        if bootstrap is None:
            from pk.commands.backends.configs_engine import EngineConfigs

            if command_config is not None:
                from pk.commands.properties import load_properties

                load_properties(command_config)  # read, as Kafka reads it; the engine needs none of it
            backend = EngineConfigs(data_dir)
        else:
            from pk.commands.backends.configs_remote import RemoteConfigs

            backend = RemoteConfigs(bootstrap, command_config)
        if alter:
            cmd.alter(backend, options, out)
        elif output == "json":
            from pk.commands import configs_json

            configs_json.describe(backend, options, out)
        else:
            cmd.describe(backend, options, out)
    except UsageError as exc:
        fail(str(exc))
    except cmd.ConfigCommandError as exc:
        execution_failed(exc.java_line)
    except PropertiesError as exc:
        execution_failed(str(exc))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "execution_message", None)
        execution_failed("java.util.concurrent.ExecutionException: " + java() if java else str(exc))
    except (ConnectionError, TimeoutError) as exc:
        execution_failed(f"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
                         f"DisconnectException: {exc}")
    finally:
        if backend is not None:
            backend.close()
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-configs")


if __name__ == "__main__":
    main()
