"""Kafka's argparse4j (0.7.0) tools' argument syntax, for any list of arguments: `--name value`
or `--name=value`, unambiguous prefixes of option names, argparse4j's error messages (printed
by the caller as `<prog>: error: <message>`), required options and one required mutually
exclusive group, `nargs("+")` and append options. pk's own `-X` takes its value attached too
(`-Xprop=value`, as kcat does); argparse4j has no such form."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Sequence

import click

from . import profile_args
from .common import QuietPipe, fail, profile_option, with_profile


class ParseError(Exception):
    """An ArgumentParserException: str() is the message after `<prog>: error: `."""


class HelpRequested(Exception):
    pass


@dataclass(frozen=True)
class Arg:
    flags: tuple[str, ...]
    dest: str
    action: str = "store"  # store | store_true | nargs+ | append | help
    type: str = "String"  # String | Integer | Long | Double
    required: bool = False
    mutex: bool = False  # a member of the parser's one required mutually exclusive group
    default: object = None
    choices: tuple[str, ...] | None = None
    attached: bool = False  # pk's -X: the value may follow the flag directly (-Xprop=value)

    @property
    def name(self) -> str:
        """argparse4j's textualName(): the flags joined by '/'."""
        return "/".join(self.flags)


_PREFIX = re.compile(r"-+")
_NEG_NUM = re.compile(r"-\d+")
_NUMBER = re.compile(r"[+-]?\d+")
_BITS = {"Integer": 32, "Long": 64}
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")


def _convert(arg: Arg, text: str):
    """ReflectArgumentType (Integer.valueOf / Long.valueOf / Double.valueOf), then the choices check."""
    value: object = text
    if arg.type == "Double":
        if not _DOUBLE.fullmatch(text.strip()):
            raise ParseError(f'argument {arg.name}: could not convert \'{text}\' to Double (For input string: "{text}")')
        value = float(text.strip().rstrip("fFdD").replace("Infinity", "inf"))
    elif arg.type in _BITS:
        bits = _BITS[arg.type]
        if not _NUMBER.fullmatch(text) or not -2**(bits - 1) <= int(text) < 2**(bits - 1):
            raise ParseError(f'argument {arg.name}: could not convert \'{text}\' to {arg.type} '
                             f'(For input string: "{text}")')
        value = int(text)
    if arg.choices is not None and str(value) not in arg.choices:
        raise ParseError(f"argument {arg.name}: invalid choice: '{text}' (choose from {{{','.join(arg.choices)}}})")
    return value


class Parser:
    """One tool's arguments, in the order its argParser() adds them (the order decides which
    missing required argument argparse4j reports: the last one)."""

    def __init__(self, args: Sequence[Arg]):
        self.args = tuple(args)
        self.index = {flag: arg for arg in self.args for flag in arg.flags}

    def _resolve(self, flag: str) -> Arg | None:
        """resolveNextFlag: the exact flag, else the one flag it is a prefix of."""
        arg = self.index.get(flag)
        if arg is not None:
            return arg
        candidates = sorted(f for f in self.index if f.startswith(flag))
        if not candidates:
            return None
        if re.fullmatch(r"-[^-].*", flag) and flag[:2] in self.index:
            candidates = sorted(candidates + [flag[:2]])  # concatenated short options: ambiguous
        elif len(candidates) == 1:
            return self.index[candidates[0]]
        raise ParseError(f"ambiguous option: {flag} could match {', '.join(candidates)}")

    def parse(self, args: Sequence[str]) -> dict:
        """ArgumentParserImpl.parseArgs: the values by dest (defaults for those not given)."""
        values = {arg.dest: arg.default for arg in self.args if arg.action != "help"}
        used: set[str] = set()
        mutex_used: Arg | None = None
        separator = False
        i = 0

        def is_flag(term: str) -> bool:
            if separator:
                return False
            m = _PREFIX.match(term)
            return term == "--" or (m is not None and m.group(0) != term and not _NEG_NUM.fullmatch(term))

        while i < len(args):
            term = args[i]
            if term == "--" and not separator:
                separator = True
                i += 1
                continue
            if not is_flag(term):
                raise ParseError(f"unrecognized arguments: '{' '.join(args[i:])}'")  # no positionals
            short = self.index.get(term[:2])
            if short is not None and short.attached and len(term) > 2:
                flag, value = term[:2], term[2:]
            else:
                flag, eq, embedded = term.partition("=")
                value = embedded if eq else None
            arg = self._resolve(flag)
            if arg is None:
                if term[:2] == "-h" and not term.startswith("--"):
                    raise HelpRequested()  # -h... is -h followed by other short options
                raise ParseError(f"unrecognized arguments: '{term}'")
            i += 1
            if arg.mutex:
                if mutex_used is None:
                    mutex_used = arg
                elif mutex_used is not arg:
                    raise ParseError(f"argument {arg.name}: not allowed with argument {mutex_used.name}")
            if arg.action == "help":
                raise HelpRequested()
            if arg.action == "store_true":
                if value is not None:
                    raise ParseError(f"argument {arg.name}: ignore implicit argument '{value}'")
                values[arg.dest] = True
            elif arg.action == "nargs+":
                items = [value] if value is not None else []
                while value is None and i < len(args) and not is_flag(args[i]):
                    items.append(args[i])
                    i += 1
                if not items:
                    raise ParseError(f"argument {arg.name}: expected 1 argument(s)")
                values[arg.dest] = [_convert(arg, item) for item in items]
            else:
                if value is None:
                    if i < len(args) and not is_flag(args[i]):
                        value = args[i]
                        i += 1
                    else:
                        raise ParseError(f"argument {arg.name}: expected one argument")
                value = _convert(arg, value)
                values[arg.dest] = (*values[arg.dest], value) if arg.action == "append" else value
            used.add(arg.dest)
        missing = [arg for arg in self.args if arg.required and arg.dest not in used]
        if missing:
            raise ParseError(f"argument {missing[-1].name} is required")
        group = [arg for arg in self.args if arg.mutex]
        if group and mutex_used is None:
            raise ParseError(f"one of the arguments {''.join(arg.name + ' ' for arg in group)}is required")
        return values


class Argparse4jCommand(QuietPipe, click.Command):
    """A Click command (for --help and completion) whose arguments `parser` reads, as Kafka's
    tool does: no arguments or -h prints the help on stdout (exit 0), a parse error is
    `<prog>: error: <message>` on stderr (exit 1). The callback gets the values by dest."""

    def __init__(self, *args, parser: Parser, prog: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.parser = parser
        self.prog = prog
        self.profile_flags = profile_args.from_option_names({f for f in parser.index if f.startswith("--")})
        if self.profile_flags.usable:
            self.params.append(profile_option())

    def _flag(self, name: str) -> str | None:
        """An option as this parser reads it (a unique prefix names the option)."""
        try:
            arg = self.parser._resolve(name)
        except ParseError:
            return None
        return arg.flags[-1] if arg is not None else name

    def _print_help(self, prog_name: str | None) -> None:
        with click.Context(self, info_name=prog_name or self.name) as ctx:
            click.echo(self.get_help(ctx))

    def main(self, args=None, prog_name=None, **extra):
        args = list(sys.argv[1:] if args is None else args)
        complete_var = f"_{(prog_name or self.name or '').replace('-', '_').upper()}_COMPLETE"
        if os.environ.get(complete_var):
            return super().main(args, prog_name, complete_var=complete_var, **extra)
        try:
            if not args:
                raise HelpRequested()
            if self.profile_flags.usable:
                args = with_profile(args, self.profile_flags, self._flag)
            values = self.parser.parse(args)
        except HelpRequested:
            self._print_help(prog_name)
            sys.exit(0)
        except ParseError as exc:
            fail(f"{self.prog}: error: {exc}")
        self.callback(**values)
