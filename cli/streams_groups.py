"""pk-streams-groups: Kafka 4.4's kafka-streams-groups (StreamsGroupCommand) on a cluster:
--list (with --state) and --describe (--offsets, --members, --state, --verbose) of streams
groups (KIP-1071), --delete and --delete-offsets. The work is commands/streams_groups.py;
here the options are checked in Kafka's order and the printers' text written. Kafka 4.4's
--reset-offsets, --topology and --delete-all-internal-topics are not done yet: they are
refused in one line."""

from __future__ import annotations

import sys

import click

from .common import JAVA_LONG, KafkaCommand, fail, run_tool, version_option
from .completion import complete_groups, complete_topics

HELP_LINE = "This tool helps to list, describe, delete and manage the offsets of streams groups."
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")
NOT_YET = ("reset_offsets", "topology", "delete_all_internal_topics")


def check_args(o: dict) -> None:
    """StreamsGroupCommandOptions.checkArgs and StreamsGroupCommand.main, as Kafka 4.4 words
    each refusal (the first line of what it prints)."""
    # (jopt-simple's availableIf(describe): refused while parsing, before any other check)
    extra = [name for name in ("members", "offsets", "topology", "verbose") if o[name] and not o["describe"]]
    if extra:
        fail(f"Option(s) [{', '.join(extra)}] are unavailable given other options on the command line")
    if o["bootstrap_server"] is None:
        fail('Missing required argument "[bootstrap-server]"')
    if o["describe"]:
        if not o["groups"] and not o["all_groups"]:
            fail("Option [describe] takes one of these options: [all-groups], [group]")
        if sum(bool(o[k]) for k in ("members", "offsets", "topology")) + (o["state"] is not None) > 1:
            fail("Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]")
        if o["state"]:
            fail("Option [describe] does not take a value for [state]")
    if o["groups"] and o["list"]:
        fail('Option "[group]" can\'t be used with option "[list]"')
    if sum(bool(o[a]) for a in ACTIONS) != 1:
        fail("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, or "
             "--delete-offsets.")
    if o["delete"] and not o["groups"] and not o["all_groups"]:
        fail("Option [delete] takes one of these options: [all-groups], [group]")
    if o["delete_offsets"] and (len(o["groups"]) != 1 or not (o["input_topics"] or o["all_input_topics"])):
        fail("Option [delete-offsets] takes the [group] and one of these options: [all-input-topics], [input-topic]")
    for name in NOT_YET:
        if o[name]:
            fail(f"pk-streams-groups: --{name.replace('_', '-')} is not supported yet")


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER", help="REQUIRED: The server(s) to connect to.")
@click.option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@click.option("--list", "list", is_flag=True, help="List all streams groups.")
@click.option("--describe", is_flag=True, help="Describe streams group and list offset lag related to given group.")
@click.option("--delete", is_flag=True, help="Delete topic partition offsets and ownership information for one or "
                                             "more streams groups.")
@click.option("--delete-all-internal-topics", is_flag=True,
              help="Delete all internal topics linked to the streams group (not supported yet).")
@click.option("--delete-offsets", is_flag=True,
              help="Delete offsets of streams group. Supports one streams group at a time, and multiple topics.")
@click.option("--reset-offsets", is_flag=True, help="Reset offsets of streams group (not supported yet).")
@click.option("--group", "groups", metavar="GROUP", multiple=True, shell_complete=complete_groups,
              help="The streams group id.")
@click.option("--all-groups", is_flag=True, help="Apply to all streams groups.")
@click.option("--input-topic", "input_topics", metavar="TOPIC", multiple=True, shell_complete=complete_topics,
              help="The input topic whose committed offset should be deleted or reset.")
@click.option("--all-input-topics", is_flag=True, help="Consider all input topics used in the topology of the group.")
@click.option("--members", is_flag=True, help="Describe members of the group (with --describe).")
@click.option("--offsets", is_flag=True, help="Describe the group's partitions with their offset information: "
                                              "the default of --describe.")
@click.option("--state", metavar="[STATES]", is_flag=False, flag_value="", default=None,
              help="With --describe, the state of the group; with --list, the state of all groups, or only "
                   "the groups in these states (Empty, NotReady, Stable, Assigning, Reconciling, Dead).")
@click.option("--topology", is_flag=True, help="Describe the topology of the streams group (not supported yet).")
@click.option("--verbose", is_flag=True, help="With --describe: epochs, target assignments, leader epochs.")
@click.option("--timeout", metavar="MS", default="30000",
              help="The timeout for some use cases, in milliseconds.  [default: 30000]")
@version_option
def cli(**o):
    check_args(o)
    from pk.commands import streams_groups as cmd
    from pk.commands.backends.kafka_admin import AdminError
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    try:
        timeout_ms = JAVA_LONG.convert(o["timeout"], None, None)
    except click.BadParameter:
        fail(f"Cannot parse argument '{o['timeout']}' of option timeout")
    try:
        states = cmd.parse_states(o["state"]) if o["list"] and o["state"] else None
        props = load_properties(o["command_config"]) if o["command_config"] is not None else {}
        client = WireClient(o["bootstrap_server"], timeout_ms / 1000, "listGroups", security=connection_security(props))
    except (UsageError, PropertiesError, ClientConfigError) as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(f"Error: Executing streams group command failed due to {exc}")
    service = cmd.StreamsGroupService(client, timeout_ms)
    code = 0
    try:
        if o["list"]:
            _out(cmd.list_text(service.listings(states), o["state"] is not None))
        elif o["delete_offsets"]:
            group = o["groups"][0]
            if o["input_topics"]:
                topics = list(dict.fromkeys(o["input_topics"]))
                partitions, failed = service.partitions(topics)
            else:  # the committed offsets of the group's input topics
                try:
                    inputs = set(_input_topics(service.describe(group)))
                except AdminError as exc:  # (Kafka's tool wraps this one once more)
                    _out(f"\nError: Executing streams group command failed due to java.util.concurrent."
                         f"ExecutionException: {exc.execution_message()}\n")
                    sys.exit(1)
                partitions, failed = sorted(tp for tp in service.committed(group) if tp[0] in inputs), {}
                topics = list(dict.fromkeys(t for t, _ in partitions))
            _out(cmd.delete_offsets_text(group, *service.delete_offsets(group, partitions), topics, failed))
        elif o["delete"]:
            groups = list(o["groups"]) if o["groups"] else [g for g, _ in service.listings()]
            _out(cmd.delete_text(*service.delete_groups(groups)))
        else:
            groups = list(o["groups"]) if o["groups"] else [g for g, _ in service.listings()]
            for group in groups:
                d = service.describe(group)
                if o["members"]:
                    _out(cmd.members_text(d, o["verbose"]))
                elif o["state"] is not None:
                    _out(cmd.state_text(d, o["verbose"]))
                else:
                    rows = cmd.offset_rows(service, d) if d.state not in ("Empty", "Dead") else []
                    _out(cmd.offsets_text(d, rows, o["verbose"]))
    except AdminError as exc:
        _out(f"\nError: Executing streams group command failed due to {exc.execution_message()}\n")
        code = 1
    except (KafkaError, OSError) as exc:
        _out(f"\nError: Executing streams group command failed due to {exc}\n")
        code = 1
    finally:
        client.close()
    sys.exit(code)


def _input_topics(d) -> list[str]:
    """--all-input-topics: the topics the group's subtopologies read that are not its own
    repartition topics (the application's input)."""
    internal = {t for ts in d.sources.values() for t in ts if t.startswith(d.group + "-")}
    return list(dict.fromkeys(t for ts in d.sources.values() for t in ts if t not in internal))


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-streams-groups")


if __name__ == "__main__":
    main()
