"""pk-share-groups: Kafka 4.4's kafka-share-groups (ShareGroupCommand) on a cluster, or without
--bootstrap-server on the bundled engine's data directory (commands/backends/engine_share.py):
--list, --describe (--offsets, --members, --state, --verbose), --reset-offsets,
--delete-offsets, --delete. The work is commands/share_groups.py; here the options are checked
in Kafka's order and the printers' text written."""

from __future__ import annotations

import sys

import click

from .common import JAVA_LONG, KafkaCommand, data_dir_option, fail, run_tool, version_option
from .completion import complete_groups, complete_topics

HELP_LINE = "This tool helps to list, describe, delete and manage the offsets of share groups."
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")
SPECS = ("from_file", "to_current", "to_datetime", "to_earliest", "to_latest", "to_offset")


def _unavailable(names: list[str]) -> None:
    fail('Exception in thread "main" joptsimple.UnavailableOptionException: Option(s) '
         f"[{', '.join(names)}] are unavailable given other options on the command line")


def check_args(o: dict) -> None:
    """ShareGroupCommandOptions.checkArgs, as Kafka 4.4 words each refusal."""
    if sum(bool(o[a]) for a in ACTIONS) != 1:
        fail("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
             "--delete-offsets.")
    extra = [name for name, key in (("members", "members"), ("offsets", "offsets"), ("verbose", "verbose"))
             if o[key] and not o["describe"]]
    if extra:
        _unavailable(extra)
    if o["groups"] and o["all_groups"]:
        fail('Option "[group]" can\'t be used with option "[all-groups]"')
    if o["list"] and o["groups"]:
        fail('Option "[group]" can\'t be used with option "[list]"')
    if o["describe"]:
        if not o["groups"] and not o["all_groups"]:
            fail("Option [describe] takes one of these options: [all-groups], [group]")
        if sum(bool(o[k]) for k in ("members", "offsets")) + (o["state"] is not None) > 1:
            fail("Option [describe] takes at most one of these options: [members], [offsets], [state]")
    if o["delete"] and not o["groups"] and not o["all_groups"]:
        fail("Option [delete] takes the options [group] or [all-groups].")
    if o["delete_offsets"] and (len(o["groups"]) != 1 or not o["topics"]):
        fail("Option [delete-offsets] takes the following options: [group], [topic]")
    if o["reset_offsets"]:
        if not o["groups"]:
            fail("Option [reset-offsets] takes the option: [group]")
        if not o["dry_run"] and not o["execute"]:
            fail("Option [reset-offsets] takes the option: [execute] or [dry-run]")
        if sum(o[s] is not None and o[s] is not False for s in SPECS) != 1:
            fail("Option [reset-offsets] takes one of these options: [from-file], [to-current], [to-datetime], "
                 "[to-earliest], [to-latest], [to-offset]")
        if not o["topics"] and not o["all_topics"] and o["from_file"] is None:
            fail("Option [reset-offsets] takes one of these options: [all-topics], [from-file], [topic]")


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER",
              help="The server(s) to connect to. Without it pk works on the bundled engine's data directory.")
@click.option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@click.option("--list", "list", is_flag=True, help="List all share groups.")
@click.option("--describe", is_flag=True, help="Describe share group, members and offset information.")
@click.option("--delete", is_flag=True, help="Delete share group.")
@click.option("--reset-offsets", is_flag=True,
              help="Reset offsets of share group (one group, with no active members): --dry-run or --execute, "
                   "one of --to-datetime, --to-earliest, --to-latest, --from-file, --to-current, --to-offset, "
                   "and --all-topics or --topic unless --from-file.")
@click.option("--delete-offsets", is_flag=True,
              help="Delete offsets of share group. Supports one share group at a time, and multiple topics.")
@click.option("--group", "groups", metavar="GROUP", multiple=True, shell_complete=complete_groups,
              help="The share group id.")
@click.option("--all-groups", is_flag=True, help="Apply to all share groups.")
@click.option("--topic", "topics", metavar="TOPIC", multiple=True, shell_complete=complete_topics,
              help="The topic whose offset information should be deleted or reset (topic:0,1,2 for partitions).")
@click.option("--all-topics", is_flag=True, help="Apply to all topics. Supported operation: reset-offsets.")
@click.option("--members", is_flag=True, help="Describe members of the group (with --describe).")
@click.option("--offsets", is_flag=True, help="Describe the group's offsets: the default of --describe.")
@click.option("--state", metavar="[STATES]", is_flag=False, flag_value="", default=None,
              help="With --describe, the state of the group; with --list, the state of all groups, or only "
                   "the groups in these states (Empty, Stable, Dead).")
@click.option("--verbose", is_flag=True, help="Provide additional information when describing the group.")
@click.option("--timeout", metavar="MS", default="30000",
              help="The timeout for some use cases, in milliseconds.  [default: 30000]")
@click.option("--dry-run", is_flag=True, help="Output offset reset information without executing the operation.")
@click.option("--execute", is_flag=True, help="Execute the offset reset operation.")
@click.option("--export", is_flag=True, help="Generate offset reset information in CSV format.")
@click.option("--from-file", metavar="FILE", help="Reset offsets to values defined in CSV file.")
@click.option("--to-current", is_flag=True, help="Reset offsets to current offset.")
@click.option("--to-datetime", metavar="DATETIME",
              help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDThh:mm:ss.sss'")
@click.option("--to-earliest", is_flag=True, help="Reset offsets to earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset offsets to latest offset.")
@click.option("--to-offset", metavar="OFFSET", help="Reset offsets to a specific offset.")
@data_dir_option
@version_option
def cli(**o):
    check_args(o)
    from pk.commands import share_groups as cmd
    from pk.commands.backends.kafka_admin import AdminError
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    # --timeout and --to-offset are converted while the command runs: a bad value is the
    # command's error, printed as ShareGroupCommand.printError prints it (exit 0)
    for name in ("timeout", "to_offset"):
        if o[name] is not None:
            try:
                o[name] = JAVA_LONG.convert(o[name], None, None)
            except click.BadParameter:
                message = f"Cannot parse argument '{o[name]}' of option {name.replace('_', '-')}"
                _out(f"\nError: Executing share group command failed due to {message}\n",
                     f"joptsimple.OptionArgumentConversionException: {message}\n")
                sys.exit(0)
    timeout_ms = o["timeout"]
    try:
        states = cmd.parse_states(o["state"]) if o["list"] and o["state"] else None
        props = load_properties(o["command_config"]) if o["command_config"] is not None else {}
        if o["bootstrap_server"] is None:
            from pk.commands.backends.engine_share import EngineShareGroupService

            client = service = EngineShareGroupService(o["data_dir"])
        else:
            client = WireClient(o["bootstrap_server"], timeout_ms / 1000, "listGroups",
                                security=connection_security(props))
            service = cmd.ShareGroupService(client, timeout_ms)
    except (UsageError, PropertiesError, ClientConfigError) as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(f"Error: Executing share group command failed due to {exc}")
    try:
        code = _run(cmd, service, o, states)
    except AdminError as exc:
        _out(f"\nError: Executing share group command failed due to {exc.execution_message()}\n")
        code = 1
    except (KafkaError, OSError) as exc:
        _out(f"\nError: Executing share group command failed due to {exc}\n")
        code = 1
    finally:
        client.close()
    sys.exit(code)


def _out(text: str, err: str = "") -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()


def _run(cmd, service, o: dict, states) -> int:
    from pk.commands.backends.kafka_admin import AdminError

    if o["list"]:
        _out(cmd.list_text(service.listings(states), o["state"] is not None))
        return 0
    if o["describe"]:
        groups = list(o["groups"]) if o["groups"] else [g for g, _ in service.listings()]
        for group in groups:
            try:
                if o["members"]:
                    _out(*cmd.members_text(service.describe(group), o["verbose"]))
                elif o["state"] is not None:
                    _out(*cmd.state_text(service.describe(group), o["verbose"]))
                else:
                    service.describe(group)  # an unknown group fails here, as Kafka's tool does
                    _out(cmd.offsets_text(group, service.start_offsets(group), o["verbose"]))
            except AdminError as exc:
                _out(*cmd.describe_error(exc))
        return 0
    if o["delete"]:
        listed = dict(service.listings())
        groups = list(o["groups"]) if o["groups"] else list(listed)
        deleted, failed = [], {}
        for group in groups:
            if group not in listed:
                failed[group] = cmd.not_share_group(group)
                continue
            error = service.delete_group(group)
            if error is None:
                deleted.append(group)
            else:
                failed[group] = cmd.non_empty(group) if error.code == 68 else error
        _out(cmd.delete_text(deleted, failed))
        return 0
    if o["delete_offsets"]:
        group, topics = o["groups"][0], list(o["topics"])
        top, results = service.delete_offsets(group, topics)
        _out(cmd.delete_offsets_text(top, results, topics))
        return 0
    return _reset(cmd, service, o)


def _reset(cmd, service, o: dict) -> int:
    from pk.commands.backends.kafka_admin import AdminError

    group = o["groups"][0]
    try:
        if service.describe(group).state != "Empty":
            sys.stderr.write(f"Share group '{group}' is not empty.\n")
            return 1
    except AdminError as exc:
        if exc.code != 69:  # a group not known yet gets its offsets planned all the same
            raise
    spec = next(s for s in SPECS if o[s] is not None and o[s] is not False)
    value = o[spec]
    if spec == "to_datetime":
        value = _datetime_ms(value)
    plan = cmd.reset_plan(service, group, spec.replace("_", "-"), value,
                          None if o["all_topics"] else list(o["topics"]) or None, warn=lambda line: _out(line + "\n"))
    if o["execute"]:
        service.alter_offsets(group, plan)
    _out(cmd.reset_text(group, plan, o["export"]))
    return 0


def _datetime_ms(text: str) -> int:
    """Utils.getDateTime, as pk-consumer-groups reads it."""
    from pk.commands.consumer_groups import get_date_time

    return get_date_time(text)


def main() -> None:
    run_tool(cli, "pk-share-groups")


if __name__ == "__main__":
    main()
