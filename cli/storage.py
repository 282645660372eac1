"""pk-storage: Kafka 4.4's kafka-storage (StorageTool) for pk's data directories: `format`,
`info` and `random-uuid` (see commands/storage.py), and `version-mapping` and
`feature-dependencies` (Kafka 4.4's feature tables, shared with pk-features).

StorageTool parses with argparse4j: errors are `kafka-storage: error: <message>` (one line
here; Kafka prints its usage before it), exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import OwnParserCommand, fail, run_tool

PROG = "kafka-storage"
COMMANDS = ("info", "format", "version-mapping", "feature-dependencies", "random-uuid")
# option -> (destination, takes a value); per command, in argparse4j's order of required checks.
_OPTIONS = {
    "info": {"--config": ("config", True), "-c": ("config", True)},
    "format": {"--config": ("config", True), "-c": ("config", True),
               "--cluster-id": ("cluster_id", True), "-t": ("cluster_id", True),
               "--add-scram": ("add_scram", True), "-S": ("add_scram", True),
               "--ignore-formatted": ("ignore_formatted", False), "-g": ("ignore_formatted", False),
               "--standalone": ("standalone", False), "-s": ("standalone", False)},
    "version-mapping": {"--release-version": ("release", True), "-r": ("release", True)},
    "feature-dependencies": {"--feature": ("features", True), "-f": ("features", True)},
    "random-uuid": {},
}
_ARG_NAMES = {"config": "--config/-c", "cluster_id": "--cluster-id/-t", "add_scram": "--add-scram/-S",
              "release": "--release-version/-r", "features": "--feature/-f"}
_REQUIRED = {"info": ("config",), "format": ("cluster_id", "config"), "version-mapping": (),
             "feature-dependencies": ("features",), "random-uuid": ()}
_REPEATED = ("add_scram", "features")  # (argparse4j's append action; others keep the last value)
USAGE = """usage: kafka-storage [-h] {info,format,version-mapping,feature-dependencies,random-uuid} ...

The Kafka storage tool, for pk's data directories (log.dirs of a pk-server-start config).

  info -c CONFIG                  Get information about the log directories on this node.
  format -c CONFIG -t CLUSTER_ID  Format the log directories on this node: meta.properties with the
         [--add-scram MECHANISM=[name=USER,password=PASSWORD(,iterations=N,salt=B64)]]...
         [--ignore-formatted] [--standalone]
  version-mapping [-r RELEASE_VERSION]
                                  The feature levels of a metadata version (default: the latest
                                  stable one).
  feature-dependencies -f FEATURE=LEVEL ...
                                  What each feature level requires.
  random-uuid                     Print a random UUID (a new cluster id).
"""


def _error(message: str) -> None:
    fail(f"{PROG}: error: {message}")


def parse(args: list[str]) -> tuple[str, dict]:
    """argparse4j's answer to the arguments: the command and its options."""
    if not args:
        _error("too few arguments")
    if args[0] in ("-h", "--help"):
        click.echo(USAGE, nl=False)
        sys.exit(0)
    command, rest = args[0], args[1:]
    matches = [c for c in COMMANDS if c.startswith(command)] if command not in COMMANDS else [command]
    if len(matches) != 1:  # argparse4j takes an unambiguous prefix of a command
        _error(f"invalid choice: '{command}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
    command = matches[0]
    known = _OPTIONS[command]
    options: dict = {"add_scram": [], "features": []}
    unknown = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg in ("-h", "--help"):
            click.echo(USAGE, nl=False)
            sys.exit(0)
        if name not in known:
            unknown.append(arg)
        else:
            dest, takes_value = known[name]
            if not takes_value:
                options[dest] = True
            else:
                if not eq:
                    if i + 1 >= len(rest) or (rest[i + 1].startswith("-") and len(rest[i + 1]) > 1):
                        _error(f"argument {_ARG_NAMES[dest]}: expected one argument")
                    value = rest[i + 1]
                    i += 1
                if dest in _REPEATED:
                    options[dest].append(value)
                else:
                    options[dest] = value
        i += 1
    for dest in _REQUIRED[command]:
        if not options.get(dest):
            _error(f"argument {_ARG_NAMES[dest]} is required")
    if unknown:
        _error("unrecognized arguments: " + " ".join(f"'{u}'" for u in unknown))
    return command, options


def run(args: list[str]) -> None:
    command, options = parse(list(args))
    from pk.commands import storage

    if command in ("version-mapping", "feature-dependencies"):
        _features(command, options)
    code = 0
    try:
        if command == "random-uuid":
            click.echo(storage.random_uuid())
        elif command == "info":
            code = storage.info(options["config"], click.echo)
        else:
            storage.format_storage(options["config"], options["cluster_id"], options["add_scram"],
                                   bool(options.get("ignore_formatted")), bool(options.get("standalone")),
                                   click.echo)
    except storage.StorageError as exc:
        fail(str(exc))
    except ValueError as exc:  # a refused SCRAM credential (engine/scram_credentials)
        fail(str(exc))
    sys.exit(code)


def _features(command: str, options: dict) -> None:
    from pk.commands import features

    try:
        if command == "version-mapping":
            lines = features.version_mapping_lines(options.get("release"))
        else:
            lines = features.storage_dependency_lines(options["features"])
        for line in lines:
            click.echo(line)
    except features.FeatureError as exc:
        fail(str(exc))
    sys.exit(0)


def _complete(ctx, _param, incomplete: str):
    from click.shell_completion import CompletionItem

    args = ctx.params.get("args") or ()
    if args and args[0] in _OPTIONS:
        return [CompletionItem(o) for o in _OPTIONS[args[0]] if o.startswith("--") and o.startswith(incomplete)]
    return [CompletionItem(c) for c in COMMANDS if c.startswith(incomplete)]


@click.command(cls=OwnParserCommand, prog="pk-storage", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete)
def cli(args):
    """The Kafka storage tool (kafka-storage format, info, random-uuid, version-mapping, feature-dependencies)."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-storage")


if __name__ == "__main__":
    main()
