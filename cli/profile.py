"""pk-profile: saved clusters (commands/profiles.py), used by every tool through --profile,
$PK_PROFILE or `pk-profile use`. pk's own tool: Kafka has none like it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import click

from .common import QuietPipe, fail, run_tool, version_option
from .completion import complete_profiles


class ProfileGroup(QuietPipe, click.Group):
    def main(self, args=None, prog_name=None, **extra):
        if os.environ.get("_PK_PROFILE_COMPLETE"):
            return super().main(args, prog_name, **extra)
        if not (sys.argv[1:] if args is None else args):  # no command: the help, as --help
            with click.Context(self, info_name=prog_name or "pk-profile") as ctx:
                click.echo(self.get_help(ctx))
            return None
        try:
            return super().main(args, prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            raise SystemExit(exc.exit_code)
        except click.exceptions.Abort:
            raise SystemExit(130)
        except click.UsageError as exc:  # one line, as every pk tool
            fail(f"pk-profile: {exc.format_message()}")

    def invoke(self, ctx):
        from pk.commands.errors import PropertiesError
        from pk.commands.profiles import ProfileError

        try:
            return super().invoke(ctx)
        except (ProfileError, PropertiesError) as exc:
            fail(str(exc))
        except OSError as exc:
            from .common import os_error_line

            fail(os_error_line(exc))


@click.group(cls=ProfileGroup, context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def cli():
    """Saved cluster profiles: a cluster's bootstrap servers and client configuration (or a
    bundled-engine data directory) under a name, in $XDG_CONFIG_HOME/pk/NAME.properties
    (Kafka's properties format, mode 0600). Every pk tool takes --profile NAME or $PK_PROFILE,
    else the profile `use` chose, when neither --bootstrap-server nor --data-dir is given."""


name_argument = click.argument("name", shell_complete=complete_profiles)


@cli.command()
@click.argument("name")
@click.option("--bootstrap-server", metavar="HOST:PORT", help="The cluster's bootstrap servers.")
@click.option("--command-config", metavar="FILE",
              help="A client config file (security.protocol, sasl.*, ssl.* …) to copy into the profile.")
@click.option("-X", "--property", "properties", multiple=True, metavar="KEY=VALUE",
              help="A client property for the profile (wins over --command-config's).")
@click.option("--data-dir", metavar="DIR", help="A bundled-engine data directory instead of a cluster.")
def create(name, bootstrap_server, command_config, properties, data_dir):
    """Save a profile: a cluster (--bootstrap-server) or a data directory (--data-dir)."""
    from pk.commands import profiles
    from pk.commands.properties import load_properties, parse_key_value_args

    profiles.check_name(name)
    if (bootstrap_server is None) == (data_dir is None):
        fail("pk-profile create needs exactly one of --bootstrap-server and --data-dir")
    if data_dir is not None and (command_config or properties):
        fail("A --data-dir profile takes no client configuration (--command-config, -X)")
    if os.path.exists(profiles.path_of(name)):
        fail(f"Profile '{name}' already exists (pk-profile edit {name} changes it)")
    if data_dir is not None:
        props = {profiles.DATA_DIR_KEY: os.path.abspath(data_dir)}
    else:
        props = {profiles.BOOTSTRAP_KEY: bootstrap_server}
        if command_config:
            file_props = load_properties(command_config)
            file_props.pop(profiles.BOOTSTRAP_KEY, None)  # the profile's own servers are the ones given
            props.update(file_props)
        props.update(parse_key_value_args(properties))
    path = profiles.save(name, props)
    click.echo(f"Created profile {name} ({path}).")


@cli.command()
@click.argument("name", required=False, shell_complete=complete_profiles)
@click.option("--none", "clear", is_flag=True, help="Forget the current profile.")
def use(name, clear):
    """Make NAME the current profile (the one tools use by default)."""
    from pk.commands import profiles

    if clear == (name is not None):
        fail("pk-profile use needs a NAME or --none")
    if clear:
        profiles.set_current(None)
        click.echo("No current profile.")
        return
    profiles.load(name)  # it exists and reads
    profiles.set_current(name)
    click.echo(f"Using profile {name}.")


@cli.command("list")
def list_():
    """The profiles, the current one marked with '*', each with its cluster or data directory."""
    from pk.commands import profiles

    current = profiles.current()
    for name in profiles.names():
        try:
            profile = profiles.load(name)
            where = (profile.bootstrap and f"bootstrap.servers={profile.bootstrap}") or \
                (profile.data_dir and f"pk.data.dir={profile.data_dir}") or "(incomplete)"
        except profiles.ProfileError:
            where = "(unreadable)"
        click.echo(f"{'*' if name == current else ' '} {name}\t{where}")


@cli.command()
@click.argument("name", required=False, shell_complete=complete_profiles)
def show(name):
    """Print a profile (default: the current one), its secrets masked."""
    from pk.commands import profiles

    if name is None:
        name = profiles.current()
        if name is None:
            fail("No current profile (pk-profile use NAME chooses one)")
    profile = profiles.load(name)
    mark = " (current)" if profiles.current() == name else ""
    click.echo(f"# profile {name}{mark}: {profile.path}")
    for key, value in profiles.masked(profile.props).items():
        click.echo(f"{key}={value}")


@cli.command()
@name_argument
def edit(name):
    """Edit a profile in $VISUAL or $EDITOR; it replaces the saved one only if it is valid."""
    from pk.commands import profiles
    from pk.commands.errors import PropertiesError
    from pk.commands.properties import load_properties

    path = profiles.load(name).path
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    draft = os.path.join(os.path.dirname(path), f".{name}.{os.getpid()}.edit.properties")
    with open(path, "rb") as f:
        text = f.read()
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        try:
            status = subprocess.call([*shlex.split(editor), draft])
        except OSError as exc:
            fail(f"Cannot run the editor '{editor}': {exc.strerror}; profile {name} unchanged")
        if status != 0:
            fail(f"The editor exited with status {status}; profile {name} unchanged")
        try:
            profiles.validate(load_properties(draft))
        except (profiles.ProfileError, PropertiesError) as exc:
            fail(f"{exc}; profile {name} unchanged")
        with open(draft, "rb") as f:
            profiles.write_file(path, f.read().decode("latin-1"))
    finally:
        try:
            os.unlink(draft)
        except OSError:
            pass
    click.echo(f"Saved profile {name}.")


@cli.command()
@name_argument
def delete(name):
    """Delete a profile (and forget it as the current one)."""
    from pk.commands import profiles

    profiles.delete(name)
    click.echo(f"Deleted profile {name}.")


def main() -> None:
    run_tool(cli, "pk-profile")


if __name__ == "__main__":
    main()
