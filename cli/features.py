"""pk-features: Kafka 4.4's kafka-features (FeatureCommand): `describe`, `upgrade`,
`downgrade` and `disable` on the bundled engine (the finalized levels its data directory holds,
which pk-server-start serves) or, with --bootstrap-server, a cluster (UpdateFeatures);
`version-mapping` and `feature-dependencies` (Kafka 4.4's own tables, no cluster needed).

FeatureCommand parses with argparse4j and reports a parse error as `Command line error:
<message>. Type --help for help.`, exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import OwnParserCommand, fail, run_tool

COMMANDS = ("describe", "upgrade", "downgrade", "disable", "version-mapping", "feature-dependencies")
# each command's own options (an option without a value is a flag: FLAGS)
_UPDATE = {"--feature": "features", "--dry-run": "dry_run"}
_COMMAND_OPTIONS = {"describe": {"--node-id": "node_id"}, "version-mapping": {"--release-version": "release"},
                    "feature-dependencies": {"--feature": "features"},
                    "upgrade": {**_UPDATE, "--metadata": "metadata", "--release-version": "release"},
                    "downgrade": {**_UPDATE, "--metadata": "metadata", "--release-version": "release",
                                  "--unsafe": "unsafe"},
                    "disable": {**_UPDATE, "--unsafe": "unsafe"}}
FLAGS = ("dry_run", "unsafe")
_GLOBAL = {"--bootstrap-server": "bootstrap_server", "--bootstrap-controller": "bootstrap_controller",
           "--command-config": "command_config", "--data-dir": "data_dir"}
USAGE = ("usage: kafka-features [-h] [--command-config COMMAND_CONFIG] [--bootstrap-server BOOTSTRAP_SERVER | "
         "--bootstrap-controller BOOTSTRAP_CONTROLLER] [--data-dir DIR] "
         "{describe,upgrade,downgrade,disable,version-mapping,feature-dependencies} ...\n\n"
         "This tool manages feature flags in Kafka. describe [--node-id NODE_ID]: the supported and finalized "
         "levels (without --bootstrap-server: the bundled engine's); upgrade [--metadata M] [--feature F=LEVEL ...] "
         "[--release-version V] [--dry-run], downgrade (the same, and --unsafe), disable --feature F ... "
         "[--dry-run] [--unsafe]: change finalized levels; version-mapping [--release-version V]: the "
         "feature levels of a release; feature-dependencies --feature F=LEVEL ...: what a feature level "
         "requires.\n")


def _error(message: str) -> None:
    fail(f"Command line error: {message}. Type --help for help.")


def parse(args: list[str]) -> tuple[str | None, dict]:
    options: dict = {}
    command = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg in ("-h", "--help"):
            click.echo(USAGE)
            sys.exit(0)
        own = _COMMAND_OPTIONS.get(command, {})
        if name in own and own[name] in FLAGS:
            options[own[name]] = True
        elif name in _GLOBAL or name in own:
            key = _GLOBAL.get(name) or own[name]
            if not eq:
                if i + 1 >= len(args):
                    _error(f"argument {name}: expected one argument")
                value = args[i + 1]
                i += 1
            if key == "features":
                options.setdefault(key, []).append(value)
            else:
                options[key] = value
        elif command is None and not arg.startswith("-"):
            if arg not in COMMANDS:
                _error(f"invalid choice: '{arg}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
            command = arg
        else:
            _error(f"unrecognized arguments: '{arg}'")
        i += 1
    if options.get("bootstrap_server") is not None and options.get("bootstrap_controller") is not None:
        _error("argument --bootstrap-controller: not allowed with argument --bootstrap-server")
    if command is None:
        _error("too few arguments")
    if command == "feature-dependencies" and not options.get("features"):
        _error("argument --feature is required")
    return command, options


def run(args: list[str]) -> None:
    command, options = parse(list(args))
    from pk.commands import features as cmd

    if command in ("upgrade", "downgrade", "disable"):
        _update(command, options)
    if command != "describe":
        try:
            lines = (cmd.version_mapping_lines(options.get("release")) if command == "version-mapping"
                     else cmd.dependency_lines(options["features"]))
        except cmd.FeatureError as exc:
            fail(str(exc))
        for line in lines:
            click.echo(line)
        sys.exit(0)
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    bootstrap = options.get("bootstrap_server") or options.get("bootstrap_controller")
    node = options.get("node_id")
    try:
        props = load_properties(options["command_config"]) if options.get("command_config") else {}
        if bootstrap is None:
            answer = cmd.engine_answer(options.get("data_dir"))
        else:
            from pk.commands.backends.wire import WireClient, connection_security

            client = WireClient(bootstrap, 30.0, "describeFeatures", security=connection_security(props))
            try:
                answer = client.api_versions_answer(int(node) if node is not None else None)
            finally:
                client.close()
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except ValueError:
        _error(f"argument --node-id: could not convert '{node}' to Integer")
    except (KafkaError, ConnectionError) as exc:
        fail(str(exc))
    for line in cmd.describe_lines(answer):
        click.echo(line)
    sys.exit(0)


def _update(command: str, options: dict) -> None:
    """upgrade, downgrade, disable: kafka-features' line per feature (by name) on stdout; when
    some failed, `N out of M operation(s) failed.` on stderr, exit 1."""
    from pk.commands import features as cmd
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    if options.get("metadata") is not None:
        click.echo(cmd.METADATA_DEPRECATED)
    dry_run = bool(options.get("dry_run"))
    try:
        updates = cmd.planned_updates(command, options.get("features") or [], options.get("metadata"),
                                      options.get("release"))
    except cmd.FeatureError as exc:
        fail(str(exc))
    kind = cmd.upgrade_type(command, bool(options.get("unsafe")))
    bootstrap = options.get("bootstrap_server") or options.get("bootstrap_controller")
    try:
        props = load_properties(options["command_config"]) if options.get("command_config") else {}
        if bootstrap is None:
            errors = cmd.update_engine(options.get("data_dir"), updates, kind, dry_run)
        else:
            from pk.commands.backends.wire import WireClient, connection_security

            client = WireClient(bootstrap, 30.0, "updateFeatures", security=connection_security(props))
            try:
                errors = cmd.update_cluster(client, updates, kind, dry_run)
            finally:
                client.close()
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except (KafkaError, ConnectionError) as exc:
        fail(str(exc))
    except OSError as exc:
        from .common import os_error_line

        fail(os_error_line(exc))
    lines, failed = cmd.result_lines(command, updates, errors, dry_run)
    for line in lines:
        click.echo(line)
    if failed:
        fail(f"{failed} out of {len(updates)} operation(s) failed.")
    sys.exit(0)


def _complete(ctx, _param, incomplete: str):
    from click.shell_completion import CompletionItem

    words = [*COMMANDS, *_GLOBAL, "--node-id", "--release-version", "--feature", "--metadata", "--dry-run",
             "--unsafe"]
    return [CompletionItem(w) for w in words if w.startswith(incomplete)]


@click.command(cls=OwnParserCommand, prog="pk-features", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete)
def cli(args):
    """Kafka's feature flags (kafka-features)."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-features")


if __name__ == "__main__":
    main()
