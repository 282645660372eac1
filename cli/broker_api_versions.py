"""pk-broker-api-versions: the API versions each broker of a cluster supports
(kafka-broker-api-versions). It needs a broker: the bundled engine has no protocol."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option
from .output import output_option

HELP_LINE = "This tool helps to retrieve broker version information."
CONNECT_TIMEOUT_S = 5.0  # the legacy admin client's request.timeout.ms default


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER(S)", help="REQUIRED: The server to connect to.")
@click.option("--command-config", metavar="FILE", help="A property file containing configs to be passed to Admin Client.")
@output_option
@version_option
def cli(bootstrap_server, command_config, output):
    from pk.commands import broker_api_versions as cmd
    from pk.commands.backends.wire import Broker, WireClient, connection_security
    from pk.commands.client_config import bootstrap_hosts
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    if bootstrap_server is None:
        fail('Missing required argument "[bootstrap-server]"')
    try:
        props = load_properties(command_config) if command_config is not None else {}
    except PropertiesError as exc:
        from pk.commands.client_config import java_message

        fail(java_message(str(exc)))
    hosts = bootstrap_hosts(bootstrap_server)
    bad = [e.strip() for e in bootstrap_server.split(",") if e.strip() and not bootstrap_hosts(e)]
    if bad or not hosts:
        fail(f"Invalid url in bootstrap.servers: {bad[0] if bad else bootstrap_server}")
    try:
        security = connection_security(props)
        client = WireClient(bootstrap_server, CONNECT_TIMEOUT_S, "metadata", security=security)
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError:
        tried = ", ".join(str(Broker(-1, host, port, None)) for host, port in hosts)
        fail(f"Request METADATA failed on brokers [{tried}]")
    try:
        if output == "json":
            from pk.commands import broker_api_versions_json

            broker_api_versions_json.run(client, lambda text: sys.stdout.write(text))
        else:
            cmd.run(client, lambda text: sys.stdout.write(text))
    finally:
        client.close()
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-broker-api-versions")


if __name__ == "__main__":
    main()
