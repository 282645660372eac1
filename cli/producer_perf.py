"""ProducerPerformance (kafka-producer-perf-test.sh, org.apache.kafka.tools.ProducerPerformance,
Kafka 3.7) on the bundled engine, or on a cluster through confluent-kafka when
`--producer-props bootstrap.servers=host:port` (Kafka's way) or pk's `--bootstrap-server` names one.

    pk-run-class org.apache.kafka.tools.ProducerPerformance --topic t --num-records 1000000 \\
        --record-size 100 --throughput -1 --producer-props acks=1

Kafka parses this tool's arguments with argparse4j 0.7.0, not jopt-simple, and pk reads them
the same way (`parse_args` below): `--name value` or `--name=value`, unambiguous prefixes of
option names accepted (`--num` is `--num-records`), `--producer-props` taking every following
word up to the next option, and argparse4j's messages, printed as its error line
`producer-performance: error: <message>` on stderr, exit 1 (Kafka prints the usage line
first, and wraps long messages at the terminal width; pk prints the one line). Exceptions that
escape Kafka's main() print the JVM's first line, `Exception in thread "main" <class>: <msg>`.
With no arguments at all the help goes to stdout, exit 0, as Kafka does; `--help` prints
Click's help (exit 0). `--bootstrap-server`, `-X prop=value`, `--data-dir` and `--version` are pk's own.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

import click

from .common import data_dir_option, fail, version_line, version_option

PROG = "producer-performance"


# --------------------------------------------------------------------------- argparse4j
class ParseError(Exception):
    """An ArgumentParserException: str() is the message after `producer-performance: error: `."""


class HelpRequested(Exception):
    pass


class VersionRequested(Exception):
    pass


@dataclass(frozen=True)
class Arg:
    flags: tuple[str, ...]
    dest: str
    action: str = "store"  # store | store_true | nargs+ | append | help | version
    type: str = "String"  # String | Integer | Long
    required: bool = False
    mutex: bool = False  # member of the required group: exactly one of --record-size / --payload-file
    default: object = None

    @property
    def name(self) -> str:
        """argparse4j's textualName(): the flags joined by '/'."""
        return "/".join(self.flags)


# In the order ProducerPerformance.argParser() adds them (argparse4j's optargs_ order, which
# decides which missing required argument is reported), then pk's own.
ARGS = (
    Arg(("-h", "--help"), "help", "help"),
    Arg(("--topic",), "topic", required=True),
    Arg(("--num-records",), "num_records", type="Long", required=True),
    Arg(("--record-size",), "record_size", type="Integer", mutex=True),
    Arg(("--payload-file",), "payload_file", mutex=True),
    Arg(("--payload-delimiter",), "payload_delimiter", default="\\n"),
    Arg(("--throughput",), "throughput", type="Integer", required=True),
    Arg(("--producer-props",), "producer_props", action="nargs+"),
    Arg(("--producer.config",), "producer_config"),
    Arg(("--print-metrics",), "print_metrics", action="store_true", default=False),
    Arg(("--transactional-id",), "transactional_id", default="performance-producer-default-transactional-id"),
    Arg(("--transaction-duration-ms",), "transaction_duration_ms", type="Long", default=0),
    Arg(("--bootstrap-server",), "bootstrap_server"),
    Arg(("-X",), "x", action="append", default=()),
    Arg(("--data-dir",), "data_dir"),
    Arg(("--version",), "version", "version"),
)
_INDEX = {flag: arg for arg in ARGS for flag in arg.flags}
_PREFIX = re.compile(r"-+")
_NEG_NUM = re.compile(r"-\d+")
_NUMBER = re.compile(r"[+-]?\d+")
_BITS = {"Integer": 32, "Long": 64}


def _convert(arg: Arg, text: str):
    """ReflectArgumentType: Integer.valueOf / Long.valueOf, or the string itself."""
    if arg.type == "String":
        return text
    bits = _BITS[arg.type]
    if _NUMBER.fullmatch(text):
        value = int(text)
        if -2**(bits - 1) <= value < 2**(bits - 1):
            return value
    raise ParseError(f'argument {arg.name}: could not convert \'{text}\' to {arg.type} (For input string: "{text}")')


def _resolve(flag: str) -> Arg | None:
    """resolveNextFlag: the exact flag, else the one flag it is a prefix of."""
    arg = _INDEX.get(flag)
    if arg is not None:
        return arg
    candidates = sorted(f for f in _INDEX if f.startswith(flag))
    if not candidates:
        return None
    if re.fullmatch(r"-[^-].*", flag) and flag[:2] in _INDEX:
        candidates = sorted(candidates + [flag[:2]])  # concatenated short options: ambiguous
    elif len(candidates) == 1:
        return _INDEX[candidates[0]]
    raise ParseError(f"ambiguous option: {flag} could match {', '.join(candidates)}")


def parse_args(args: list[str]) -> dict:
    """ArgumentParserImpl.parseArgs for ProducerPerformance's parser (argparse4j 0.7.0)."""
    values = {arg.dest: arg.default for arg in ARGS if arg.action not in ("help", "version")}
    used: set[str] = set()
    mutex_used: Arg | None = None
    consumed_separator = False
    i = 0

    def is_flag(term: str) -> bool:
        if consumed_separator:
            return False
        if term == "--":
            return True
        m = _PREFIX.match(term)
        return m is not None and m.group(0) != term and not _NEG_NUM.fullmatch(term)

    while i < len(args):
        term = args[i]
        if is_flag(term) and term != "--":
            if term.startswith("-X") and len(term) > 2:
                flag, value = "-X", term[2:]  # -Xprop=value, as kcat takes it
            else:
                flag, eq, embedded = term.partition("=")
                value = embedded if eq else None
            arg = _resolve(flag)
            if arg is None:
                prefix = _PREFIX.match(term).group(0)
                if len(prefix) == 1 and term[:2] == "-h":
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
            if arg.action == "version":
                raise VersionRequested()
            if arg.action == "store_true":
                if value is not None:
                    raise ParseError(f"argument {arg.name}: ignore implicit argument '{value}'")
                values[arg.dest] = True
            elif arg.action == "nargs+":
                items = []
                if value is None:
                    while i < len(args) and not is_flag(args[i]):
                        items.append(_convert(arg, args[i]))
                        i += 1
                else:
                    items.append(_convert(arg, value))
                if not items:
                    raise ParseError(f"argument {arg.name}: expected 1 argument(s)")
                values[arg.dest] = items
            elif arg.action == "append":
                if value is None:
                    if i < len(args) and not is_flag(args[i]):
                        value = args[i]
                        i += 1
                    else:
                        raise ParseError(f"argument {arg.name}: expected one argument")
                values[arg.dest] = (*values[arg.dest], _convert(arg, value))
            else:
                if value is None:
                    if i < len(args) and not is_flag(args[i]):
                        value = args[i]
                        i += 1
                    else:
                        raise ParseError(f"argument {arg.name}: expected one argument")
                values[arg.dest] = _convert(arg, value)
            used.add(arg.dest)
        elif term == "--" and not consumed_separator:
            consumed_separator = True
            i += 1
        else:
            # no positional arguments: the rest of the line is reported
            raise ParseError(f"unrecognized arguments: '{' '.join(args[i:])}'")
    missing = [arg for arg in ARGS if arg.required and arg.dest not in used]
    if missing:
        raise ParseError(f"argument {missing[-1].name} is required")  # the last one wins
    if mutex_used is None:
        names = "".join(arg.name + " " for arg in ARGS if arg.mutex)
        raise ParseError(f"one of the arguments {names}is required")
    return values


# --------------------------------------------------------------------------- command
class ArgParse4jCommand(click.Command):
    """A Click command (for --help and completion) whose arguments are read by parse_args."""

    def _print_help(self, prog_name: str | None) -> None:
        with click.Context(self, info_name=prog_name or self.name) as ctx:
            click.echo(self.get_help(ctx))

    def main(self, args=None, prog_name=None, **extra):
        if args is None:
            args = sys.argv[1:]
        complete_var = f"_{(prog_name or self.name or '').replace('-', '_').upper()}_COMPLETE"
        if os.environ.get(complete_var):
            return super().main(args, prog_name, complete_var=complete_var, **extra)
        args = list(args)
        if not args:
            self._print_help(prog_name)  # Kafka: parser.printHelp() on stdout, exit 0
            sys.exit(0)
        try:
            values = parse_args(args)
        except HelpRequested:
            self._print_help(prog_name)
            sys.exit(0)
        except VersionRequested:
            click.echo(version_line())
            sys.exit(0)
        except ParseError as exc:
            fail(f"{PROG}: error: {exc}")
        self.callback(**values)
        sys.exit(0)


@click.command(cls=ArgParse4jCommand, context_settings={"help_option_names": ["-h", "--help"]},
               help="This tool is used to verify the producer performance.")
@click.option("--topic", metavar="TOPIC", help="produce messages to this topic")
@click.option("--num-records", metavar="NUM-RECORDS", help="number of messages to produce")
@click.option("--record-size", metavar="RECORD-SIZE",
              help="message size in bytes. Note that you must provide exactly one of --record-size or "
                   "--payload-file.")
@click.option("--payload-file", metavar="PAYLOAD-FILE",
              help="file to read the message payloads from. This works only for UTF-8 encoded text files. "
                   "Payloads will be read from this file and a payload will be randomly selected when sending "
                   "messages. Note that you must provide exactly one of --record-size or --payload-file.")
@click.option("--payload-delimiter", metavar="PAYLOAD-DELIMITER",
              help="provides delimiter to be used when --payload-file is provided. Defaults to new line. Note "
                   "that this parameter will be ignored if --payload-file is not provided. (default: \\n)")
@click.option("--throughput", metavar="THROUGHPUT",
              help="throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this "
                   "to -1 to disable throttling.")
@click.option("--producer-props", metavar="PROP-NAME=PROP-VALUE [PROP-NAME=PROP-VALUE ...]",
              help="kafka producer related configuration properties like bootstrap.servers,client.id etc. These "
                   "configs take precedence over those passed via --producer.config.")
@click.option("--producer.config", "producer_config", metavar="CONFIG-FILE", help="producer config properties file.")
@click.option("--print-metrics", is_flag=True,
              help="print out metrics at the end of the test (pk: the few client metrics the bundled engine "
                   "can state).")
@click.option("--transactional-id", metavar="TRANSACTIONAL-ID",
              help="The transactionalId to use if transaction-duration-ms is > 0. (default: "
                   "performance-producer-default-transactional-id)")
@click.option("--transaction-duration-ms", metavar="TRANSACTION-DURATION",
              help="The max age of each transaction; transactions are only enabled if this value is positive. "
                   "pk refuses a positive value: the bundled engine has no transactions. (default: 0)")
@click.option("--bootstrap-server", metavar="BOOTSTRAP-SERVER",
              help="pk: the cluster to produce to, host:port[,host:port] (as bootstrap.servers in --producer-props "
                   "or --producer.config); without either pk uses the bundled engine.")
@click.option("-X", "x", multiple=True, metavar="PROP=VALUE",
              help="pk: a librdkafka property for the cluster's client (as kcat's -X); wins over the producer "
                   "properties.")
@data_dir_option
@version_option
def cli(data_dir=None, bootstrap_server=None, x=(), **opts):
    from pk.commands import perf
    from pk.engine.errors import DataDirError, KafkaError

    options = perf.ProducerPerfOptions(**opts)
    stdout = sys.stdout

    def out(line: str) -> None:
        stdout.write(line + "\n")
        stdout.flush()

    def err(line: str) -> None:
        sys.stderr.write(line + "\n")

    def open_producer(topic: str, props: dict[str, str]):
        """The engine's producer, or a cluster's when --bootstrap-server or the properties'
        bootstrap.servers name one (Kafka's way of saying where to produce)."""
        bootstrap = bootstrap_server if bootstrap_server is not None else props.get("bootstrap.servers")
        if bootstrap is None and not x:
            return perf.engine_producer_opener(data_dir)(topic, props)
        from pk.commands import kafka_clients

        try:
            extra = kafka_clients.remote_target(bootstrap, x, data_dir)
        except kafka_clients.BackendUsageError as exc:
            raise perf.ToolError(str(exc)) from None
        return kafka_clients.perf_producer_opener(bootstrap, extra)(topic, props)

    try:
        code = perf.run_producer_perf(options, open_producer, out, err)
    except perf.ArgumentError as exc:
        fail(f"{PROG}: error: {exc}")
    except perf.JavaError as exc:
        fail(exc.uncaught_line())
    except perf.ToolError as exc:
        fail(str(exc))
    except DataDirError as exc:
        fail(str(exc))
    except KafkaError as exc:  # the topic cannot be produced to at all
        fail(f"{perf.java_class_of(exc)}: {exc}")
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    sys.exit(code)


def main() -> None:
    cli.main(prog_name="pk-run-class org.apache.kafka.tools.ProducerPerformance")


if __name__ == "__main__":
    main()
