"""pk-transactions: Kafka 4.4's kafka-transactions (TransactionsCommand) against a cluster:
list, describe, describe-producers, abort, find-hanging, forceTerminateTransaction.

TransactionsCommand parses with argparse4j: a parse error is `kafka-transactions.sh: error:
<message>` (one line here; Kafka prints its usage before it, wrapped), exit 1. It is a cluster
tool: --bootstrap-server is required, as in Kafka (the bundled engine's transactions are the
ones pk-server-start coordinates: run the tool against it).
"""

from __future__ import annotations

import sys

import click

from .common import OwnParserCommand, fail, run_tool, version_line

PROG = "kafka-transactions.sh"
COMMANDS = ("list", "describe", "describe-producers", "abort", "find-hanging", "forceTerminateTransaction")
_GLOBAL = {"--bootstrap-server": "bootstrap_server", "--command-config": "command_config"}
# pk only (Kafka's tool has no such option): taken before or after the command
OUTPUT = "--output"
OUTPUT_CHOICES = ("text", "json")
# per command: option -> (dest, Java type, required)
_OPTIONS = {
    "list": {"--duration-filter": ("duration_filter", "Long", False),
             "--transactional-id-pattern": ("transactional_id_pattern", "String", False)},
    "describe": {"--transactional-id": ("transactional_id", "String", True)},
    "describe-producers": {"--broker-id": ("broker_id", "Integer", False), "--topic": ("topic", "String", True),
                           "--partition": ("partition", "Integer", True)},
    "abort": {"--topic": ("topic", "String", True), "--partition": ("partition", "Integer", True),
              "--start-offset": ("start_offset", "Long", False), "--producer-id": ("producer_id", "Long", False),
              "--producer-epoch": ("producer_epoch", "Short", False),
              "--coordinator-epoch": ("coordinator_epoch", "Integer", False)},
    "find-hanging": {"--broker-id": ("broker_id", "Integer", False),
                     "--max-transaction-timeout": ("max_transaction_timeout", "Integer", False),
                     "--topic": ("topic", "String", False), "--partition": ("partition", "Integer", False)},
    "forceTerminateTransaction": {"--transactionalId": ("transactional_id", "String", True)},
}
_BITS = {"Short": 16, "Integer": 32, "Long": 64}
USAGE = ("usage: kafka-transactions.sh [-h] [-v] [--command-config FILE] --bootstrap-server host:port COMMAND ...\n\n"
         "This tool is used to analyze the transactional state of producers in the cluster. It can be used to "
         "detect and recover from hanging transactions.\n\n"
         "  --command-config FILE        property file containing configs to be passed to admin client\n"
         "  --bootstrap-server host:port the broker(s) to connect to (REQUIRED)\n"
         "  --output {text,json}         pk only: json prints one JSON document per row (README: \"Beyond\n"
         "                               Kafka's tools\") instead of Kafka's table (default: text)\n\n"
         "commands:\n"
         "  list                 list transactions (--duration-filter MS, --transactional-id-pattern REGEX)\n"
         "  describe             describe the state of an active transactional-id (--transactional-id)\n"
         "  describe-producers   describe the states of active producers for a topic partition\n"
         "                       (--topic, --partition, --broker-id)\n"
         "  abort                abort a hanging transaction (--topic, --partition, and --start-offset, or\n"
         "                       --producer-id, --producer-epoch and --coordinator-epoch)\n"
         "  find-hanging         find hanging transactions (--broker-id or --topic [--partition],\n"
         "                       --max-transaction-timeout MINUTES, 15 by default)\n"
         "  forceTerminateTransaction\n"
         "                       Force abort an ongoing transaction on transactionalId (--transactionalId;\n"
         "                       requires administrative privileges)\n")


def _error(message: str) -> None:
    fail(f"{PROG}: error: {message}")


def _convert(option: str, java_type: str, value: str):
    if java_type == "String":
        return value
    try:
        n = int(value)
        if value.strip() != value or "_" in value:
            raise ValueError
    except ValueError:
        _error(f"argument {option}: could not convert '{value}' to {java_type} (For input string: \"{value}\")")
    bits = _BITS[java_type]
    if not -(1 << (bits - 1)) <= n < 1 << (bits - 1):
        _error(f"argument {option}: could not convert '{value}' to {java_type} "
               f"(Value out of range. Value:\"{value}\" Radix:10)" if java_type == "Short" else
               f"argument {option}: could not convert '{value}' to {java_type} (For input string: \"{value}\")")
    return n


def parse(args: list[str]) -> tuple[str, dict]:
    options: dict = {}
    command = None
    specs: dict = {}
    unknown = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg in ("-h", "--help"):
            click.echo(USAGE)
            sys.exit(0)
        if command is None and arg in ("-v", "--version"):
            click.echo(version_line())
            sys.exit(0)
        known = specs if command is not None else _GLOBAL
        if name == OUTPUT:
            if not eq:
                if i + 1 >= len(args) or (args[i + 1].startswith("-") and len(args[i + 1]) > 1):
                    _error(f"argument {name}: expected one argument")
                value = args[i + 1]
                i += 1
            if value not in OUTPUT_CHOICES:
                _error(f"argument {name}: invalid choice: '{value}' (choose from "
                       f"{', '.join(repr(c) for c in OUTPUT_CHOICES)})")
            options["output"] = value
        elif name in known:
            dest, java_type, _ = specs[name] if command is not None else (_GLOBAL[name], "String", True)
            if not eq:
                if i + 1 >= len(args) or (args[i + 1].startswith("-") and len(args[i + 1]) > 1):
                    _error(f"argument {name}: expected one argument")
                value = args[i + 1]
                i += 1
            options[dest] = _convert(name, java_type, value)
        elif command is None and not arg.startswith("-"):
            if arg not in COMMANDS:
                _error(f"invalid choice: '{arg}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
            command, specs = arg, _OPTIONS[arg]
        else:
            unknown.append(arg)
        i += 1
    if command is None:
        _error("too few arguments")
    missing = [o for o, (dest, _, required) in specs.items() if required and dest not in options]
    if missing:
        _error(f"argument {missing[0]} is required")
    if unknown:
        _error("unrecognized arguments: " + " ".join(f"'{u}'" for u in unknown))
    if options.get("bootstrap_server") is None:
        _error("argument --bootstrap-server is required")
    return command, options


def run(args: list[str]) -> None:
    command, o = parse(list(args))
    from pk.commands import transactions as cmd
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    client = None
    try:
        props = load_properties(o["command_config"]) if o.get("command_config") else {}
        from pk.commands.backends.wire import WireClient, connection_security

        security = connection_security(props)
        if command == "abort":
            cmd.check_abort(o.get("start_offset"), o.get("producer_id"), o.get("producer_epoch"),
                            o.get("coordinator_epoch"))
        elif command == "find-hanging":
            cmd.check_hanging(o.get("broker_id"), o.get("topic"), o.get("partition"))
        client = WireClient(o["bootstrap_server"], 30.0, "listTransactions", security=security)
        txns = cmd.Transactions(client)
        lines: list[str] = []
        if o.get("output") == "json" and command in ("list", "describe", "describe-producers", "find-hanging"):
            lines = _json_lines(txns, command, o)
        elif command == "list":
            lines = cmd.list_lines(txns, o.get("duration_filter"), o.get("transactional_id_pattern"))
        elif command == "describe":
            lines = cmd.describe_lines(txns, o["transactional_id"])
        elif command == "describe-producers":
            lines = cmd.producer_lines(txns, o["topic"], o["partition"], o.get("broker_id"))
        elif command == "forceTerminateTransaction":
            cmd.force_terminate(txns, o["transactional_id"])
        elif command == "abort":
            cmd.abort(txns, o["topic"], o["partition"], o.get("start_offset"), o.get("producer_id"),
                      o.get("producer_epoch"), o.get("coordinator_epoch"))
        else:
            lines = cmd.hanging_lines(txns, o.get("broker_id"), o.get("topic"), o.get("partition"),
                                      o.get("max_transaction_timeout", 15))
    except cmd.CommandFailed as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(f"Failed to load admin client properties: {java_message(str(exc))}.{cmd.DEBUG_HINT}")
    except ClientConfigError as exc:
        fail(str(exc))
    except (KafkaError, ConnectionError) as exc:
        fail(str(exc))
    finally:
        if client is not None:
            client.close()
    for line in lines:
        click.echo(line)
    sys.exit(0)


def _json_lines(txns, command: str, o: dict) -> list[str]:
    from pk.commands import transactions_json as js

    if command == "list":
        return js.list_documents(txns, o.get("duration_filter"), o.get("transactional_id_pattern"))
    if command == "describe":
        return js.describe_documents(txns, o["transactional_id"])
    if command == "describe-producers":
        return js.producer_documents(txns, o["topic"], o["partition"], o.get("broker_id"))
    return js.hanging_documents(txns, o.get("broker_id"), o.get("topic"), o.get("partition"),
                                o.get("max_transaction_timeout", 15))


def _complete(ctx, _param, incomplete: str):
    from click.shell_completion import CompletionItem

    words = list(ctx.params.get("args") or ())
    command = next((w for w in words if w in COMMANDS), None)
    choices = [*_OPTIONS[command], OUTPUT] if command else [*COMMANDS, *_GLOBAL, OUTPUT]
    if words and words[-1] == OUTPUT:
        choices = list(OUTPUT_CHOICES)
    return [CompletionItem(w) for w in choices if w.startswith(incomplete)]


@click.command(cls=OwnParserCommand, prog="pk-transactions", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete)
def cli(args):
    """Transactional state of producers (kafka-transactions)."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-transactions")


if __name__ == "__main__":
    main()
