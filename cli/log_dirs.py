"""pk-log-dirs: log directory usage of the brokers (kafka-log-dirs), on the bundled engine or,
with --bootstrap-server, on a cluster."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, data_dir_option, fail, run_tool, version_option

HELP_LINE = "This tool helps to query log directory usage on the specified brokers."


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER(S)",
              help="The server(s) to use for bootstrapping; without it pk reads the bundled engine.")
@click.option("--broker-list", metavar="0,1,2", default="",
              help="The list of brokers to be queried. All brokers in the cluster will be queried if no broker "
                   "list is specified.")
@click.option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@click.option("--describe", is_flag=True, help="Describe the specified log directories on the specified brokers.")
@click.option("--topic-list", metavar="T1,T2", default="",
              help="The list of topics to be queried. All topics will be queried if no topic list is specified.")
@data_dir_option
@version_option
def cli(bootstrap_server, broker_list, command_config, describe, topic_list, data_dir):
    from pk.commands import log_dirs as cmd
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    if not describe:
        fail('Missing required argument "[describe]"')
    source = None
    try:
        from pk.commands.properties import load_properties

        props = load_properties(command_config) if command_config is not None else {}
        if bootstrap_server is None:
            source = cmd.EngineLogDirs(data_dir)
        else:
            from pk.commands.backends.wire import WireClient, connection_security

            source = cmd.RemoteLogDirs(WireClient(bootstrap_server, 30.0, "describeCluster",
                                                  security=connection_security(props)))
        cmd.run(source, broker_list, topic_list, click.echo)
    except UsageError as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "execution_message", None)
        fail(java() if java else str(exc))
    finally:
        if source is not None:
            source.close()
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-log-dirs")


if __name__ == "__main__":
    main()
