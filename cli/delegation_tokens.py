"""pk-delegation-tokens: kafka-delegation-tokens.sh (org.apache.kafka.tools.DelegationTokenCommand,
Kafka 4.4).

    pk-delegation-tokens --bootstrap-server b:9093 --command-config admin.properties \\
        --create --max-life-time-period -1 --renewer-principal User:bob
    pk-delegation-tokens ... --renew --hmac <HMAC> --renew-time-period -1
    pk-delegation-tokens ... --expire --hmac <HMAC> --expiry-time-period -1
    pk-delegation-tokens ... --describe --owner-principal User:alice

Token requests need an authenticated connection (SASL or SSL with a client certificate, given in
--command-config). Usage errors and failures are Kafka's first line on stderr, exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option

HELP_LINE = "This tool helps to create, renew, expire, or describe delegation tokens."
_PRINCIPAL = "is a Kafka principal. They should be in principalType:name format."


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="String", help="REQUIRED: server(s) to use for bootstrapping.")
@click.option("--command-config", metavar="String",
              help="REQUIRED: A property file containing configs to be passed to Admin Client. Token management "
                   "operations are allowed in secure mode only. This config file is used to pass security related "
                   "configs.")
@click.option("--create", is_flag=True,
              help="Create a new delegation token. Use --renewer-principal option to pass renewer principals.")
@click.option("--renew", is_flag=True,
              help="Renew delegation token. Use --renew-time-period option to set renew time period.")
@click.option("--expire", is_flag=True,
              help="Expire delegation token. Use --expiry-time-period option to expire the token.")
@click.option("--describe", is_flag=True,
              help="Describe delegation tokens for the given principals. Use --owner-principal to pass owner/renewer "
                   "principals. If --owner-principal option is not supplied, all the user-owned tokens and tokens "
                   "where the user has Describe permissions will be returned.")
@click.option("--owner-principal", multiple=True, metavar="String", help="owner " + _PRINCIPAL)
@click.option("--renewer-principal", multiple=True, metavar="String", help="renewer " + _PRINCIPAL)
@click.option("--max-life-time-period", metavar="Long",
              help="Max life period for the token in milliseconds. If the value is -1, then token max life time "
                   "will default to the server side config value of (delegation.token.max.lifetime.ms).")
@click.option("--renew-time-period", metavar="Long",
              help="Renew time period in milliseconds. If the value is -1, then the renew time period will default "
                   "to the server side config value of (delegation.token.expiry.time.ms).")
@click.option("--expiry-time-period", metavar="Long",
              help="Expiry time period in milliseconds. If the value is -1, then the token will get invalidated "
                   "immediately.")
@click.option("--hmac", metavar="String", help="HMAC of the delegation token")
@version_option
def cli(**opts):
    from pk.commands import delegation_tokens as cmd
    from pk.commands.backends.kafka_admin import AdminError
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError

    options = cmd.Options(**{k: list(v) if isinstance(v, tuple) else v for k, v in opts.items()})
    client = None
    try:
        cmd.check_args(options)
        client = cmd.LazyClient(options)
        cmd.RUN[options.action](client, options, _out)
    except (UsageError, ClientConfigError, cmd.CommandFailure) as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except AdminError as exc:
        fail(exc.execution_message())
    finally:
        if client is not None:
            client.close()


def _out(text: str) -> None:
    sys.stdout.write(text)


def main() -> None:
    run_tool(cli, "pk-delegation-tokens")


if __name__ == "__main__":
    main()
