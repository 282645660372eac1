"""`--profile NAME` / $PK_PROFILE / the current profile on every tool, in one place: before a
tool parses its arguments, the profile's cluster is written into them as if typed.

- the profile applies only when the command line names no cluster itself (--bootstrap-server,
  --data-dir, --zookeeper, --bootstrap-controller, --broker-list …): explicit flags win;
- a cluster profile adds `--bootstrap-server SERVERS`, and its client properties go *under* the
  tool's own: with no config file on the command line the profile file itself is passed as
  `--command-config` (it is a Kafka properties file); a config file given on the command line
  (--command-config, --consumer.config, --producer.config, --admin.config, --config-file, …) is
  replaced by an in-memory copy of the profile's properties overlaid with that file's, so the
  file's keys win; the tool's -X / --*-property options win over both, as before;
- a data-dir profile adds `--data-dir DIR`.

KafkaCommand and Argparse4jCommand derive what a tool takes from its options; the argparse4j-
style tools that parse their own arguments (OwnParserCommand) are described in OWN_PARSER.
"""

from __future__ import annotations

import os
from typing import Callable

from pk.commands import profiles

# Options that name the cluster (or the engine): when one is given, no profile applies.
CLUSTER_FLAGS = ("--bootstrap-server", "--data-dir", "--zookeeper", "--bootstrap-controller", "--broker-list")
# Options that name a client config file; the profile's properties go under each one given.
CONFIG_FILE_FLAGS = ("--command-config", "--consumer.config", "--producer.config", "--admin.config",
                     "--config-file")


class ToolFlags:
    """Where a tool takes what a profile holds (None: it does not). A plain class: the tools
    build one at start-up, and a dataclass's generated code costs more than the rest here."""

    __slots__ = ("server", "data_dir", "config", "config_files", "explicit", "after_command", "data_dir_commands")

    def __init__(self, server: str | None = "--bootstrap-server", data_dir: str | None = "--data-dir",
                 config: str | None = "--command-config", config_files: tuple[str, ...] = ("--command-config",),
                 explicit: tuple[str, ...] = CLUSTER_FLAGS, after_command: bool = False,
                 data_dir_commands: tuple[str, ...] | None = None):
        self.server, self.data_dir, self.config = server, data_dir, config
        self.config_files, self.explicit = config_files, explicit
        self.after_command = after_command  # options follow a subcommand word (kafka-cluster)
        self.data_dir_commands = data_dir_commands  # only these subcommands take --data-dir

    @property
    def usable(self) -> bool:
        return self.server is not None or self.data_dir is not None


def from_option_names(names: set[str]) -> ToolFlags:
    """A tool's flags from its long option names (`--x`)."""
    files = tuple(f for f in CONFIG_FILE_FLAGS if f in names)
    return ToolFlags(
        # a tool with only Kafka's older --broker-list (kafka-replica-verification) takes it there
        server=next((f for f in ("--bootstrap-server", "--broker-list") if f in names), None),
        data_dir="--data-dir" if "--data-dir" in names else None,
        config="--command-config" if "--command-config" in names else (files[0] if files else None),
        config_files=files,
        explicit=tuple(f for f in CLUSTER_FLAGS if f in names))


_GLOBAL = dict(config_files=("--command-config",),
               explicit=("--bootstrap-server", "--bootstrap-controller", "--data-dir"))
OWN_PARSER = {
    "pk-features": ToolFlags(**_GLOBAL),
    "pk-transactions": ToolFlags(data_dir=None, **_GLOBAL),
    "pk-metadata-quorum": ToolFlags(data_dir=None, **_GLOBAL),
    "pk-cluster": ToolFlags(config_files=("--command-config", "-c", "--config"),
                            explicit=("--bootstrap-server", "-b", "--bootstrap-controller", "-C", "--data-dir"),
                            after_command=True, data_dir_commands=("cluster-id",)),
}

# pk-spark's jobs: a subcommand, then its options; its client settings are librdkafka's own
# (--consumer-property), so a profile gives it the cluster or the data directory only.
SPARK = ToolFlags(config=None, config_files=(), explicit=("--bootstrap-server", "--data-dir"), after_command=True)


class ProfileUsageError(Exception):
    """A bad --profile: str() is the one line to print."""


def _flag_of(arg: str, resolve: Callable[[str], str | None] | None) -> str | None:
    """The option an argument names (`--x=v` is `--x`), through the tool's prefix rules."""
    if not arg.startswith("-"):
        return None
    name = arg.partition("=")[0] if arg.startswith("--") else arg
    return resolve(name) if resolve is not None else name


def take_profile(args: list[str]) -> tuple[str | None, list[str]]:
    """(the --profile value, the arguments without it); arguments after `--` are left alone."""
    out: list[str] = []
    name = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i:])
            break
        if arg in ("--profile", "-profile"):
            if i + 1 >= len(args):
                raise ProfileUsageError("Option profile requires an argument")
            name = args[i + 1]
            i += 2
            continue
        if arg.startswith(("--profile=", "-profile=")):
            name = arg.partition("=")[2]
        else:
            out.append(arg)
        i += 1
    return name, out


def apply(args: list[str], flags: ToolFlags, resolve: Callable[[str], str | None] | None = None) -> list[str]:
    """The arguments with --profile taken out and the applying profile's cluster put in."""
    explicit_name, args = take_profile(list(args))
    if not flags.usable:
        return args
    name = profiles.chosen(explicit_name)
    if name is None:
        return args
    before = args[:args.index("--")] if "--" in args else args
    given = {_flag_of(a, resolve) for a in before}
    if given & set(flags.explicit) or _names_bootstrap(before, flags, resolve):
        if explicit_name is not None:
            profiles.load(name)  # a mistyped --profile is still an error
        return args
    profile = profiles.load(name)
    at = 1 if flags.after_command and before and not before[0].startswith("-") else 0
    added: list[str] = []
    if profile.bootstrap:
        if flags.server is None:
            return args  # a cluster profile on an engine-only tool: the tool says what it lacks
        added += [flags.server, profile.bootstrap]
        if flags.config is not None:
            args, merged = _under_config_files(args, flags, profile, resolve)
            if not merged:
                added += [flags.config, profile.path]
    elif profile.data_dir:
        command = before[0] if before and not before[0].startswith("-") else None
        if flags.data_dir is None or (flags.data_dir_commands is not None and command not in flags.data_dir_commands):
            return args
        added += [flags.data_dir, profile.data_dir]
    return args[:at] + added + args[at:]


def _names_bootstrap(args: list[str], flags: ToolFlags, resolve) -> bool:
    """Whether a property on the command line (`-X bootstrap.servers=…`, `--producer-props
    bootstrap.servers=…`) or a config file given there names the cluster: the tools that read
    bootstrap.servers from them (the perf tools) are then told where to go already."""
    from pk.commands.properties import load_properties

    for i, arg in enumerate(args):
        # `bootstrap.servers=…` as an option's value, `-Xbootstrap.servers=…`, `--x-property=bootstrap.servers=…`
        value = arg[2:] if arg.startswith("-X") else arg.partition("=")[2] if arg.startswith("--") else arg
        if value.startswith(f"{profiles.BOOTSTRAP_KEY}="):
            return True
        flag = _flag_of(arg, resolve)
        if flag in flags.config_files:
            path = arg.partition("=")[2] if arg.startswith("--") and "=" in arg else \
                (args[i + 1] if i + 1 < len(args) else None)
            try:
                if path is not None and load_properties(path).get(profiles.BOOTSTRAP_KEY):
                    return True
            except Exception:
                pass  # the tool reports an unreadable file itself
    return False


def _under_config_files(args: list[str], flags: ToolFlags, profile: profiles.Profile,
                        resolve) -> tuple[list[str], bool]:
    """Each config file on the command line replaced by the profile's properties overlaid with
    the file's; whether there was one."""
    out = list(args)
    found = False
    i = 0
    while i < len(out) and out[i] != "--":
        flag = _flag_of(out[i], resolve)
        if flag in flags.config_files:
            found = True
            if "=" in out[i] and out[i].startswith("--"):
                merged = _merged_copy(profile, out[i].partition("=")[2])
                if merged is not None:
                    out[i] = f"{out[i].partition('=')[0]}={merged}"
            elif i + 1 < len(out):
                merged = _merged_copy(profile, out[i + 1])
                if merged is not None:
                    out[i + 1] = merged
                i += 1
        i += 1
    return out, found


_kept_fds: list[int] = []


def _merged_copy(profile: profiles.Profile, path: str) -> str | None:
    """A path to the profile's client properties overlaid with the file at `path`, held in
    memory (a memfd: it holds secrets and vanishes with the process). None when the file
    cannot be read: the tool then reports it as it always does."""
    from pk.commands.properties import load_properties

    try:
        own = load_properties(path)
    except Exception:
        return None
    text = profiles.render({**profile.props, **own}).encode("latin-1")
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("pk-profile-config")  # close-on-exec: this process only
        os.write(fd, text)
        _kept_fds.append(fd)  # open until exit: /dev/fd/N reopens it from the start
        return f"/dev/fd/{fd}"
    import tempfile

    fd, temp = tempfile.mkstemp(prefix="pk-profile-", suffix=".properties")  # 0600
    with os.fdopen(fd, "wb") as f:
        f.write(text)
    import atexit

    atexit.register(lambda: os.path.exists(temp) and os.unlink(temp))
    return temp
