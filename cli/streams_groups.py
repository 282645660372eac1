"""pk-streams-groups: Kafka 4.4's kafka-streams-groups (StreamsGroupCommand) on a cluster:
--list (with --state) and --describe (--offsets, --members, --state, --topology, --verbose) of
streams groups (KIP-1071), --delete (with --delete-all-internal-topics), --delete-offsets and
--reset-offsets (its scenarios planned by commands/group_offsets_resetter.py, as
pk-consumer-groups plans them; --execute also deletes the internal topics named by
--delete-internal-topic or --delete-all-internal-topics). The work is commands/streams_groups.py;
here the options are checked in Kafka's order and the printers' text written."""

from __future__ import annotations

import sys

import click

from .common import JAVA_LONG, KafkaCommand, fail, run_tool, version_option
from .completion import complete_groups, complete_topics

HELP_LINE = "This tool helps to list, describe, delete and manage the offsets of streams groups."
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")
# StreamsGroupCommandOptions.checkOffsetResetArgs' order of checks, and each option's name
SCENARIOS = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest", "to_current", "shift_by",
             "from_file")


def _spec(name: str) -> str:
    name = {"groups": "group", "input_topics": "input-topic"}.get(name, name)
    return f"[{name.replace('_', '-')}]"


def _invalid(o: dict, used: str, *others: str) -> None:
    """CommandLineUtils.checkInvalidArgs: `used` with any of `others`."""
    if o[used]:
        for other in others:
            if o[other]:
                fail(f'Option "{_spec(used)}" can\'t be used with option "{_spec(other)}"')


def check_args(o: dict) -> None:
    """StreamsGroupCommandOptions.checkArgs and StreamsGroupCommand.main, as Kafka 4.4 words
    each refusal (the first line of what it prints)."""
    # (jopt-simple's availableIf: refused while parsing, before any other check)
    extra = [name for name in ("members", "offsets", "topology", "verbose") if o[name] and not o["describe"]]
    if o["state"] is not None and not o["describe"] and not o["list"]:
        extra.append("state")
    if extra:
        fail(f"Option(s) [{', '.join(sorted(extra))}] are unavailable given other options on the command line")
    if o["bootstrap_server"] is None:
        fail('Missing required argument "[bootstrap-server]"')
    scope = "[all-groups], [group]"
    if o["describe"]:
        if not o["groups"] and not o["all_groups"]:
            fail(f"Option [describe] takes one of these options: {scope}")
        if sum(bool(o[k]) for k in ("members", "offsets", "topology")) + (o["state"] is not None) > 1:
            fail("Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]")
        if o["state"]:
            fail("Option [describe] does not take a value for [state]")
    if o["delete"]:
        if not o["groups"] and not o["all_groups"]:
            fail(f"Option [delete] takes one of these options: {scope}")
        if o["input_topics"] or o["all_input_topics"]:
            fail("Kafka Streams does not support topic-specific offset deletion from a streams group.")
    if o["delete_offsets"]:
        if not (o["input_topics"] or o["all_input_topics"]) or not o["groups"]:
            fail("Option [delete-offsets] takes the [group] and one of these options: [all-input-topics], "
                 "[input-topic]")
        if len(o["groups"]) > 1:
            fail(f"Option [delete-offsets] supports only one [group] at a time, but found: "
                 f"[{', '.join(o['groups'])}]")
    if o["reset_offsets"]:
        if o["dry_run"] and o["execute"]:
            fail("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
        if not o["dry_run"] and not o["execute"]:
            fail("Option [reset-offsets] takes the option: [execute] or [dry-run]")
        if not o["groups"] and not o["all_groups"]:
            fail(f"Option [reset-offsets] takes one of these options: {scope}")
        for used in SCENARIOS:
            _invalid(o, used, *(s for s in SCENARIOS if s != used))
    if o["delete_all_internal_topics"]:
        if not o["reset_offsets"] and not o["delete"]:
            fail("Option [delete-all-internal-topics] takes one of these options: [delete], [reset-offsets]")
        if o["reset_offsets"] and not o["execute"]:
            fail("Option [delete-all-internal-topics] takes [execute] when [reset-offsets] is used.")
    elif o["delete_internal_topic"] and (not o["reset_offsets"] or not o["execute"]):
        fail("Option [delete-internal-topic] takes [reset-offsets] when [execute] is used.")
    if (o["dry_run"] or o["execute"]) and not o["reset_offsets"]:
        fail("Only Option [reset-offsets] accepts [execute] or [dry-run]")
    _invalid(o, "groups", "all_groups")
    _invalid(o, "groups", "list")
    _invalid(o, "input_topics", "list", "describe", "delete")
    if sum(bool(o[a]) for a in ACTIONS) != 1:
        fail("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, or "
             "--delete-offsets.")


def _values(o: dict) -> None:
    """The values StreamsGroupService reads as it starts (jopt converts them then), in its order."""
    from pk.commands.consumer_groups import java_long, single
    from pk.commands.errors import CommandFailure

    try:
        for value in o["to_offset"]:
            java_long([value], "to-offset")
        single(list(o["by_duration"]), "by-duration")
        java_long(list(o["shift_by"]), "shift-by")
    except CommandFailure as exc:
        fail(str(exc))


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER", help="REQUIRED: The server(s) to connect to.")
@click.option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@click.option("--list", "list", is_flag=True, help="List all streams groups.")
@click.option("--describe", is_flag=True, help="Describe streams group and list offset lag related to given group.")
@click.option("--delete", is_flag=True, help="Delete topic partition offsets and ownership information for one or "
                                             "more streams groups.")
@click.option("--delete-offsets", is_flag=True,
              help="Delete offsets of streams group. Supports one streams group at a time, and multiple topics.")
@click.option("--reset-offsets", is_flag=True,
              help="Reset offsets of streams group. The instances should be inactive. --dry-run plans, --execute "
                   "updates the offsets; one reset scenario, and a scope (--all-input-topics or --input-topic) "
                   "unless --from-file.")
@click.option("--group", "groups", metavar="GROUP", multiple=True, shell_complete=complete_groups,
              help="The streams group id.")
@click.option("--all-groups", is_flag=True, help="Apply to all streams groups.")
@click.option("--input-topic", "input_topics", metavar="TOPIC", multiple=True, shell_complete=complete_topics,
              help="The input topic whose committed offset should be deleted or reset; with --reset-offsets "
                   "`topic:0,1,2` names partitions.")
@click.option("--all-input-topics", is_flag=True, help="Consider all input topics used in the topology of the group.")
@click.option("--to-offset", multiple=True, metavar="OFFSET", help="Reset offsets to a specific offset.")
@click.option("--from-file", multiple=True, metavar="PATH", help="Reset offsets to values defined in CSV file.")
@click.option("--to-datetime", multiple=True, metavar="DATETIME",
              help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDThh:mm:ss.sss'")
@click.option("--by-duration", multiple=True, metavar="DURATION",
              help="Reset offsets by duration from current timestamp. Format: 'PnDTnHnMnS'")
@click.option("--to-earliest", is_flag=True, help="Reset offsets to earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset offsets to latest offset.")
@click.option("--to-current", is_flag=True, help="Reset offsets to current offset.")
@click.option("--shift-by", multiple=True, metavar="N",
              help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
@click.option("--delete-internal-topic", multiple=True, metavar="TOPIC",
              help="Delete specified internal topic of the streams group (with --reset-offsets --execute).")
@click.option("--delete-all-internal-topics", is_flag=True,
              help="Delete all internal topics linked to the streams group (with --delete, or --reset-offsets "
                   "--execute).")
@click.option("--dry-run", is_flag=True, help="Only show results without executing changes on streams group.")
@click.option("--execute", is_flag=True, help="Execute the offset reset operation.")
@click.option("--export", is_flag=True, help="Generate offset reset information in CSV format.")
@click.option("--members", is_flag=True, help="Describe members of the group (with --describe).")
@click.option("--offsets", is_flag=True, help="Describe the group's partitions with their offset information: "
                                              "the default of --describe.")
@click.option("--state", metavar="[STATES]", is_flag=False, flag_value="", default=None,
              help="With --describe, the state of the group; with --list, the state of all groups, or only "
                   "the groups in these states (Empty, NotReady, Stable, Assigning, Reconciling, Dead).")
@click.option("--topology", is_flag=True, help="Describe the topology of the streams group, as recorded by the "
                                               "broker's topology description plugin (with --describe).")
@click.option("--verbose", is_flag=True, help="With --describe: epochs, target assignments, leader epochs.")
@click.option("--timeout", metavar="MS", default="30000",
              help="The timeout for some use cases, in milliseconds.  [default: 30000]")
@version_option
def cli(**o):
    check_args(o)
    _values(o)
    from pk.commands import streams_groups as cmd
    from pk.commands.backends.kafka_admin import AdminError
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.errors import ClientConfigError, CommandFailure, PropertiesError, UsageError
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
        elif o["reset_offsets"]:
            code = _reset_offsets(service, o)
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
            reset = cmd.StreamsReset(service, _out)
            internal = reset.internal_topics if o["delete_all_internal_topics"] else None
            deleted, failed, topics = service.delete_groups(groups, internal)
            before, after = reset.delete_internal_after_groups(deleted, topics)
            _out(before + cmd.delete_text(deleted, failed) + after)
        else:
            groups = list(o["groups"]) if o["groups"] else [g for g, _ in service.listings()]
            for group in groups:
                d = service.describe(group, with_topology=o["topology"])
                if o["topology"]:
                    text, problem = cmd.topology_text(d)
                    _out(text)
                    if problem:
                        fail(problem)
                    code = 1
                elif o["members"]:
                    _out(cmd.members_text(d, o["verbose"]))
                elif o["state"] is not None:
                    _out(cmd.state_text(d, o["verbose"]))
                else:
                    rows = cmd.offset_rows(service, d) if d.state not in ("Empty", "Dead") else []
                    _out(cmd.offsets_text(d, rows, o["verbose"]))
    except UsageError as exc:
        fail(str(exc))
    except (cmd.ResetFailure, CommandFailure) as exc:
        _out(f"\nError: Executing streams group command failed due to {exc}\n")
        code = 1
    except AdminError as exc:
        _out(f"\nError: Executing streams group command failed due to {exc.execution_message()}\n")
        code = 1
    except (KafkaError, OSError) as exc:
        _out(f"\nError: Executing streams group command failed due to {exc}\n")
        code = 1
    finally:
        client.close()
    sys.exit(code)


def _reset_offsets(service, o: dict) -> int:
    """--reset-offsets: the plan of each inactive group (executed with --execute), printed as
    Kafka's table or exported as its CSV."""
    from pk.commands import streams_groups as cmd
    from pk.commands.consumer_groups import GroupOptions

    options = GroupOptions(reset_offsets=True, group=list(o["groups"]), all_groups=o["all_groups"], topic=[],
                           validate_regex=[],
                           dry_run=o["dry_run"], execute=o["execute"], export=o["export"],
                           to_offset=list(o["to_offset"]), shift_by=list(o["shift_by"]),
                           to_datetime=list(o["to_datetime"]), by_duration=list(o["by_duration"]),
                           from_file=list(o["from_file"]), to_earliest=o["to_earliest"], to_latest=o["to_latest"],
                           to_current=o["to_current"], timeout=[o["timeout"]])
    reset = cmd.StreamsReset(service, _out, options, _StdoutConsole())
    groups = list(o["groups"]) if o["groups"] else [g for g, _ in service.listings()]
    internal = None
    if o["delete_all_internal_topics"]:
        internal = []
    elif o["delete_internal_topic"]:
        internal = list(o["delete_internal_topic"])
    result = reset.reset(groups, list(o["input_topics"]), o["all_input_topics"], internal)
    if o["export"]:
        _out(reset.resetter.export_offsets_to_csv(result) + "\n")
    else:
        _out(cmd.reset_text(result))
    return 0  # (Kafka's printError lines do not change its exit status)


class _StdoutConsole:
    """consumer_groups.Console for the resetter, printing as StreamsGroupCommand does: its
    printError lines ("\nError: ...") and notes on stdout, the resetter's WARN log on stderr."""

    def __init__(self):
        from pk.commands.consumer_groups import Console

        self._console = Console(_out, sys.stderr.write)

    def out(self, text: str) -> None:
        _out(text)

    def println(self, text: str = "") -> None:
        _out(text + "\n")

    def info(self, text: str) -> None:
        self._console.info(text)

    def error(self, message: str) -> None:
        _out(f"\nError: {message}\n")

    def warn_log(self, message: str) -> None:
        self._console.warn_log(message)


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
