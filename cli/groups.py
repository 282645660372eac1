"""pk-groups: Kafka 4.4's kafka-groups (GroupsCommand): `--list` the groups of every type with
their type and protocol type, filtered by --group-type, --protocol, --consumer, --share or
--streams; on the bundled engine (its classic consumer groups) or, with --bootstrap-server,
on a cluster."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, data_dir_option, fail, run_tool, version_option
from .output import output_option

HELP_LINE = "This tool helps to list groups of all types."


ERROR_PREFIX = "Error while executing groups command : "


def _single(values: tuple[str, ...], name: str, prefix: str = "") -> str | None:
    """OptionSet.valueOf: one value at most (GroupsCommand reads --group-type while checking
    the arguments, --protocol only while listing: its error then has the command's prefix)."""
    if len(values) > 1:
        fail(f"{prefix}Found multiple arguments for option {name}, but you asked for only one")
    return values[0] if values else None


def _check_exclusive(given: dict[str, bool]) -> None:
    """CommandLineUtils.checkInvalidArgs for --consumer, --share and --streams, in
    GroupsCommand's order: the first conflicting option of each is named."""
    rules = (("consumer", ("group-type", "protocol", "share", "streams")),
             ("share", ("consumer", "group-type", "protocol", "streams")),
             ("streams", ("consumer", "group-type", "protocol", "share")))
    for option, conflicts in rules:
        if given[option]:
            for other in conflicts:
                if given[other]:
                    fail(f'Option "[{option}]" can\'t be used with option "[{other}]"')


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER", help="The Kafka server to connect to; without it pk reads "
                                                             "the bundled engine.")
@click.option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@click.option("--consumer", is_flag=True,
              help="Filter the groups to show all kinds of consumer groups, including classic and simple consumer "
                   "groups. This matches group type 'consumer', and group type 'classic' where the protocol type "
                   "is 'consumer' or empty.")
@click.option("--group-type", "group_types", metavar="TYPE", multiple=True,
              help="Filter the groups based on group type. Valid types are: 'classic', 'consumer', 'share' and "
                   "'streams'.")
@click.option("--list", "list_", is_flag=True, help="List the groups.")
@click.option("--protocol", "protocols", metavar="PROTOCOL", multiple=True,
              help="Filter the groups based on protocol type.")
@click.option("--share", is_flag=True, help="Filter the groups to show share groups.")
@click.option("--streams", is_flag=True, help="Filter the groups to show streams groups.")
@click.argument("ignored", nargs=-1, type=click.UNPROCESSED)  # jopt-simple keeps non-option words
@output_option
@data_dir_option
@version_option
def cli(bootstrap_server, command_config, consumer, group_types, list_, protocols, share, streams, ignored,
        data_dir, output):
    from pk.commands import groups as cmd
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    if not list_:
        fail("Command must include exactly one action: --list.")
    try:
        group_type = _single(group_types, "group-type")
        if group_type is not None:
            group_type = cmd.parse_group_type(group_type)
        _check_exclusive({"consumer": consumer, "share": share, "streams": streams,
                          "group-type": bool(group_types), "protocol": bool(protocols)})
        from pk.commands.properties import load_properties

        props = load_properties(command_config) if command_config is not None else {}
        if bootstrap_server is None:
            listings = cmd.engine_listings(data_dir)
        else:
            from pk.commands.backends.wire import WireClient, connection_security

            client = WireClient(bootstrap_server, 30.0, "listGroups", security=connection_security(props))
            try:
                listings = cmd.cluster_listings(client)
            finally:
                client.close()
        protocol = _single(protocols, "protocol", ERROR_PREFIX)
    except UsageError as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(ERROR_PREFIX + cmd.error_message(exc))
    listings = [g for g in listings if cmd.matches(g, group_type, protocol, consumer, share, streams)]
    if output == "json":
        from pk.commands.groups_json import document

        click.echo(document(listings))
    else:
        for line in cmd.table_lines(listings):
            click.echo(line)
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-groups")


if __name__ == "__main__":
    main()
