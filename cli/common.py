"""What every pk tool shares: Kafka's option syntax on top of Click, Kafka's error texts,
--version, and the --data-dir option that picks the bundled engine's directory."""

from __future__ import annotations

import os
import sys

import click

from pk.engine.version import KAFKA_VERSION

from . import profile_args


class JavaInt(click.ParamType):
    """An Integer option as jopt-simple parses it, with its error text."""

    name = "integer"
    bits = 32

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value)
        try:
            number = int(text)
        except ValueError:
            number = None
        limit = 2 ** (self.bits - 1)
        if number is None or not -limit <= number < limit or text.strip() != text or "_" in text:
            opt = param.opts[0].lstrip("-") if param is not None else "value"
            self.fail(f"Cannot parse argument '{text}' of option {opt}", param, ctx)
        return number


JAVA_INT = JavaInt()


class JavaLong(JavaInt):
    """A Long option as jopt-simple parses it (64-bit), with its error text."""

    name = "long"
    bits = 64


JAVA_LONG = JavaLong()


def version_line() -> str:
    """What `--version` prints: the Kafka release pk mirrors, exactly as Kafka's tools print
    their own (scripts that check the version keep working); pk's own is in `pip show pk`."""
    return KAFKA_VERSION


def print_version(ctx: click.Context, _param, value) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_line())
        ctx.exit(0)


def fail(message: str, code: int = 1) -> None:
    """Print one line on stderr and exit non-zero: pk's rule for every error."""
    sys.stdout.flush()
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
    sys.exit(code)


class QuietPipe:
    """A Click command mixin: a closed stdout while the command runs (or prints its help)
    ends it quietly with status 0. Click's own main() would exit 1 on EPIPE."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except BrokenPipeError:
            stdout_closed()

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            stdout_closed()


class OwnParserCommand(QuietPipe, click.Command):
    """A tool that reads its own arguments as Kafka's argparse4j tools do (kafka-cluster,
    kafka-features, kafka-storage, kafka-transactions): main() hands every argument to the
    callback untouched; Click only answers shell-completion requests, as `prog`."""

    def __init__(self, *args, prog: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.prog = prog
        if prog in profile_args.OWN_PARSER:
            for param in self.params:
                param._custom_shell_complete = _with_profile_completion(param._custom_shell_complete)

    def shell_complete(self, ctx, incomplete: str):
        # Click would offer the command's own options (it has none) for a word starting with
        # "-": the arguments' completion knows the tool's options, so it answers every word.
        return [item for param in self.params for item in param.shell_complete(ctx, incomplete)]

    def main(self, args=None, prog_name=None, **extra):
        args = list(sys.argv[1:] if args is None else args)
        complete_var = "_" + self.prog.replace("-", "_").upper() + "_COMPLETE"
        if os.environ.get(complete_var):
            return super().main(args, prog_name or self.prog, complete_var=complete_var, **extra)
        flags = profile_args.OWN_PARSER.get(self.prog)
        if flags is not None and args:
            args = with_profile(args, flags)
        try:
            self.callback(args=tuple(args))
        except BrokenPipeError:
            stdout_closed()


def _with_profile_completion(inner):
    """The arguments' completion of an own-parser tool, knowing pk's --profile (which the
    tool's parser never sees): the option itself, and profile names after it."""
    from .completion import complete_profiles

    def complete(ctx, param, incomplete: str):
        from click.shell_completion import CompletionItem

        words = ctx.params.get("args") or ()
        if words and words[-1] == "--profile":
            return complete_profiles(ctx, param, incomplete)
        items = list(inner(ctx, param, incomplete)) if inner is not None else []
        if incomplete.startswith("--p") and "--profile".startswith(incomplete):
            items.append(CompletionItem("--profile"))
        return items
    return complete


class KafkaCommand(QuietPipe, click.Command):
    """A Click command that reads arguments the way Kafka's jopt-simple tools do.

    - a single dash works for long options (`-topic t`, seen in the seeds' transcripts);
    - with no arguments at all the tool prints its description and help on stderr, exit 1;
    - a parse error is one line on stderr in jopt-simple's words, exit 1.
    """

    def __init__(self, *args, no_args_message: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.no_args_message = no_args_message
        self.profile_flags = profile_args.from_option_names({f"--{name}" for name in self._long_names()})
        if self.profile_flags.usable:
            self.params.append(profile_option())

    def make_context(self, info_name, args, parent=None, **extra):
        # Before any parse_args (a subclass may keep the arguments as given): the profile's
        # cluster goes in as if typed. Shell completion parses the line as it stands.
        if not extra.get("resilient_parsing") and self.profile_flags.usable:
            args = with_profile(args, self.profile_flags)
        return super().make_context(info_name, args, parent=parent, **extra)

    def _long_names(self) -> set[str]:
        names = set()
        for param in self.params:
            for opt in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
                if opt.startswith("--"):
                    names.add(opt[2:])
        return names

    def normalise(self, args: list[str]) -> list[str]:
        longs = self._long_names()
        out = []
        for i, arg in enumerate(args):
            if arg == "--":
                out.extend(args[i:])
                break
            if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
                name = arg[1:].split("=", 1)[0]
                if name in longs:
                    arg = "-" + arg
            out.append(arg)
        return out

    def main(self, args=None, prog_name=None, **extra):
        if args is None:
            args = sys.argv[1:]
        complete_var = f"_{(prog_name or self.name or '').replace('-', '_').upper()}_COMPLETE"
        if os.environ.get(complete_var):  # shell completion: Click answers and exits
            return super().main(args, prog_name, complete_var=complete_var, **extra)
        if not args and self.no_args_message:
            with click.Context(self, info_name=prog_name) as ctx:
                sys.stderr.write(self.no_args_message + "\n" + self.get_help(ctx) + "\n")
            sys.exit(1)
        try:
            return super().main(self.normalise(list(args)), prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            sys.exit(130)
        except click.exceptions.NoSuchOption as exc:
            fail(f"{exc.option_name.lstrip('-')} is not a recognized option")
        except click.exceptions.BadOptionUsage as exc:
            name = (exc.option_name or "").lstrip("-")
            if "requires an argument" in exc.message:
                fail(f"Option {name} requires an argument")
            fail(exc.message)
        except click.exceptions.BadParameter as exc:
            fail(exc.message)
        except click.UsageError as exc:
            fail(exc.message)
        except BrokenPipeError:
            stdout_closed()
        except OSError as exc:  # a full disk, a read-only data dir: one line, never a traceback
            fail(os_error_line(exc))


def stdout_closed() -> None:
    """The reader of stdout went away (`pk-topics --describe | head -1`): stop quietly with
    status 0, as Kafka's tools do (the JVM's System.out swallows write errors). stdout is
    pointed at /dev/null first so that the interpreter's own flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a file descriptor: nothing is left to flush into it
    sys.exit(0)


def run_tool(command: click.Command, prog_name: str) -> None:
    """Every tool's entry point: run the command, then flush stdout while a closed pipe can
    still be reported quietly (output buffered until exit would otherwise fail in the
    interpreter's shutdown, with a message and status 120)."""
    try:
        command.main(prog_name=prog_name)
    except BrokenPipeError:
        stdout_closed()
    except SystemExit:
        _flush_stdout()
        raise
    _flush_stdout()


def _flush_stdout() -> None:
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        stdout_closed()


def os_error_line(exc: OSError) -> str:
    """`Error: No space left on device: /data/.pk/groups/g.json` for a failed file operation."""
    if exc.strerror and exc.filename:
        return f"Error: {exc.strerror}: {exc.filename}"
    return f"Error: {exc.strerror or exc}"


def with_profile(args, flags: "profile_args.ToolFlags", resolve=None) -> list[str]:
    """The arguments with the applying profile put in (cli/profile_args.py); a bad profile is
    one line on stderr, exit 1."""
    from pk.commands.profiles import ProfileError

    try:
        return profile_args.apply(list(args), flags, resolve)
    except (ProfileError, profile_args.ProfileUsageError) as exc:
        fail(str(exc))


def profile_option() -> click.Option:
    """pk's --profile, added by the command classes to every tool that reaches a cluster or the
    bundled engine; its value is taken out of the arguments before the tool parses them."""
    from .completion import complete_profiles

    def remember(ctx, _param, value):  # seen only by shell completion: main() takes it out first
        if value is not None:
            ctx.meta["pk.profile"] = value

    return click.Option(["--profile"], metavar="NAME", expose_value=False, shell_complete=complete_profiles,
                        callback=remember,
                        help="pk only: use the saved profile NAME (default: $PK_PROFILE, else "
                             "`pk-profile use`'s) when neither --bootstrap-server nor --data-dir is given.")


def data_dir_option(func):
    return click.option(
        "--data-dir", metavar="DIR", default=None,
        help="The bundled engine's data directory (default: $PK_DATA_DIR, else "
             "$XDG_DATA_HOME/pk or ~/.local/share/pk).")(func)


def version_option(func):
    return click.option("--version", is_flag=True, expose_value=False, is_eager=True,
                        callback=print_version, help="Display pk's version and the Kafka version it mirrors.")(func)
