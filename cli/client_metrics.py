"""pk-client-metrics: Kafka 4.4's kafka-client-metrics (ClientMetricsCommand) against a cluster:
`--list`, `--describe [--name N]`, `--alter --name N|--generate-name [--metrics M1,M2]
[--interval MS] [--match K1=V1,K2=V2]` (an empty value resets a config) and `--delete --name N`.

Like Kafka's tool it needs --bootstrap-server: the bundled engine has no brokers whose clients
would push metrics (pk-configs, too, serves client-metrics resources through a broker only).
A failed request prints `Error while executing client metrics command : <message>` on stdout,
as Kafka's tool does, and exits 1.
"""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option

HELP_LINE = "This tool helps to manipulate and describe client metrics configurations."
ACTIONS = ("alter", "delete", "describe", "list")
# options each action refuses, in the order Kafka checks them
INVALID_WITH = {"delete": ("generate_name", "interval", "match", "metrics"),
                "describe": ("generate_name", "interval", "match", "metrics"),
                "list": ("name", "generate_name", "interval", "match", "metrics")}
SELECTORS = ("client_id", "client_instance_id", "client_software_name", "client_software_version",
             "client_source_address", "client_source_port")


def _option_name(dest: str) -> str:
    return dest.replace("_", "-")


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--alter", is_flag=True, help="Alter the configuration for the client metrics resource.")
@click.option("--bootstrap-server", metavar="SERVER", help="REQUIRED: The Kafka server to connect to.")
@click.option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@click.option("--delete", is_flag=True, help="Delete the configuration for the client metrics resource.")
@click.option("--describe", is_flag=True, help="List configurations for the client metrics resource.")
@click.option("--generate-name", is_flag=True, help="Generate a UUID to use as the name.")
@click.option("--interval", metavar="MS", help="The metrics push interval in milliseconds. Leave empty to reset it.")
@click.option("--list", "list_", is_flag=True, help="List the client metrics resources.")
@click.option("--match", multiple=True, metavar="K1=V1,K2=V2",
              help="Matching selector 'k1=v1,k2=v2'. Valid selector names: " + ", ".join(SELECTORS) + ".")
@click.option("--metrics", multiple=True, metavar="M1,M2", help="Telemetry metric name prefixes 'm1,m2'.")
@click.option("--name", metavar="NAME", help="Name of client metrics configuration resource.")
@version_option
def cli(alter, bootstrap_server, command_config, delete, describe, generate_name, interval, list_, match, metrics,
        name):
    from pk.commands import client_metrics as cmd

    given = {"alter": alter, "delete": delete, "describe": describe, "list": list_, "name": name is not None,
             "generate_name": generate_name, "interval": interval is not None, "match": bool(match),
             "metrics": bool(metrics)}
    actions = [a for a in ACTIONS if given[a]]
    if len(actions) != 1:  # Kafka prints its option table after these usage errors; pk the line alone
        fail("Command must include exactly one action: --alter, --delete, --describe or --list.")
    action = actions[0]
    if bootstrap_server is None:
        fail("--bootstrap-server must be specified.")
    for other in INVALID_WITH.get(action, ()):
        if given[other]:
            fail(f'Option "[{action}]" can\'t be used with option "[{_option_name(other)}]"')
    if action == "alter" and (name is not None) == generate_name:
        fail("One of --name or --generate-name must be specified with --alter.")
    if action == "delete" and name is None:
        fail("A client metrics resource name must be specified with --delete.")
    try:
        cmd.check_interval(interval)
    except cmd.ClientMetricsCommandError as exc:
        fail(str(exc))
    _run(action, bootstrap_server, command_config, name, generate_name, interval, match, metrics)


def _run(action, bootstrap_server, command_config, name, generate_name, interval, match, metrics) -> None:
    from pk.commands import client_metrics as cmd
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    client = None
    try:
        props = load_properties(command_config) if command_config is not None else {}
        from pk.commands.backends.wire import WireClient, connection_security

        client = WireClient(bootstrap_server, 30.0, "listConfigResources", security=connection_security(props))
        if action == "alter":
            lines = [cmd.alter(client, cmd.generated_name() if generate_name else name,
                               list(metrics) if metrics else None, interval, list(match) if match else None)]
        elif action == "delete":
            lines = [cmd.delete(client, name)]
        elif action == "describe":
            lines = cmd.describe(client, name)
        else:
            lines = ["\n".join(cmd.list_names(client))]
    except PropertiesError as exc:
        fail(str(exc).partition(": ")[2] or str(exc))  # Kafka prints the exception's message
    except ClientConfigError as exc:
        fail(str(exc))
    except (KafkaError, ConnectionError) as exc:
        click.echo(f"Error while executing client metrics command : {exc}")
        sys.exit(1)
    finally:
        if client is not None:
            client.close()
    for line in lines:
        click.echo(line)


def main() -> None:
    run_tool(cli, "pk-client-metrics")


if __name__ == "__main__":
    main()
