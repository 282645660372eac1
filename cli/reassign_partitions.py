"""pk-reassign-partitions: move partitions between brokers (kafka-reassign-partitions).

    pk-reassign-partitions --bootstrap-server b:9092 --generate --topics-to-move-json-file t.json --broker-list 0,1
    pk-reassign-partitions --bootstrap-server b:9092 --execute --reassignment-json-file plan.json [--throttle 1000000]
    pk-reassign-partitions --bootstrap-server b:9092 --verify --reassignment-json-file plan.json
    pk-reassign-partitions --bootstrap-server b:9092 --cancel --reassignment-json-file plan.json
    pk-reassign-partitions --bootstrap-server b:9092 --list

A cluster tool: --bootstrap-server (or, for --cancel and --list, --bootstrap-controller) is
required, as in Kafka 4.4. Usage errors are Kafka's line on stderr; a failure is Kafka's
"Error: <message>" line (or its own message) on stderr; both exit 1."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, fail, run_tool, version_option

HELP_LINE = "This tool helps to move topic partitions between replicas."
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
REQUIRED = {"verify": ["reassignment_json_file"], "generate": ["topics_to_move_json_file", "broker_list"],
            "execute": ["reassignment_json_file"], "cancel": ["reassignment_json_file"], "list": []}
PERMITTED = {"verify": {"bootstrap_server", "command_config", "preserve_throttles"},
             "generate": {"bootstrap_server", "broker_list", "command_config", "disable_rack_aware"},
             "execute": {"additional", "bootstrap_server", "command_config", "throttle",
                         "replica_alter_log_dirs_throttle", "timeout", "disallow_replication_factor_change"},
             "cancel": {"command_config", "preserve_throttles", "timeout"},
             "list": {"command_config"}}
_META = "pk.reassign.order"


def _given(ctx: click.Context, param: click.Parameter, value):
    """Remember the options the command line gave, in its order (Click processes them so)."""
    if ctx.get_parameter_source(param.name) == click.core.ParameterSource.COMMANDLINE:
        ctx.meta.setdefault(_META, []).append(param.name)
    return value


def _option(*names, **kwargs):
    return click.option(*names, callback=_given, **kwargs)


def _spec(name: str) -> str:
    return "[" + name.replace("_", "-") + "]"


class _Failed(Exception):
    """A failure Kafka's tool prints as "Error: <message>"."""


def _java_long(value: str, option: str) -> int:
    try:
        number = int(value) if value.strip() == value and "_" not in value else None
    except ValueError:
        number = None
    if number is None or not -2**63 <= number < 2**63:
        raise _Failed(f"Cannot parse argument '{value}' of option {option}")
    return number


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@_option("--additional", is_flag=True,
         help="Execute this reassignment in addition to any other ongoing ones. This option can also be used to "
              "change the throttle of an ongoing reassignment.")
@_option("--bootstrap-controller", metavar="CONTROLLER",
         help="The controller to use for reassignment. This option supports the actions --cancel and --list "
              "(pk connects to it as to a broker).")
@_option("--bootstrap-server", metavar="SERVER(S)", help="the server(s) to use for bootstrapping.")
@_option("--broker-list", metavar="BROKERLIST",
         help='The list of brokers to which the partitions need to be reassigned in the form "0,1,2". This is '
              "required if --topics-to-move-json-file is used to generate reassignment configuration")
@_option("--cancel", is_flag=True, help="Cancel an active reassignment.")
@_option("--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")
@_option("--disable-rack-aware", is_flag=True, help="Disable rack aware replica assignment")
@_option("--disallow-replication-factor-change", is_flag=True,
         help="Denies the ability to change a partition's replication factor as part of this reassignment "
              "through adding validation against it.")
@_option("--execute", is_flag=True, help="Kick off the reassignment as specified by the --reassignment-json-file option.")
@_option("--generate", is_flag=True,
         help="Generate a candidate partition reassignment configuration. Note that this only generates a "
              "candidate assignment, it does not execute it.")
@_option("--list", "list_", is_flag=True, help="List all active partition reassignments.")
@_option("--preserve-throttles", is_flag=True, help="Do not modify broker or topic throttles.")
@_option("--reassignment-json-file", metavar="FILE",
         help='The JSON file with the partition reassignment configuration: {"partitions": [{"topic": "foo", '
              '"partition": 1, "replicas": [1,2,3], "log_dirs": ["dir1","dir2","dir3"]}], "version":1}. '
              '"log_dirs" is optional; when given, its length must equal the length of the replicas list, each '
              'either "any" or the absolute path of a log directory on the broker to move the replica to.')
@_option("--replica-alter-log-dirs-throttle", metavar="BYTES_PER_SEC", default="-1", show_default=True,
         help="The movement of replicas between log directories on the same broker will be throttled to this "
              "value (bytes/sec). The throttle rate should be at least 1 KB/s.")
@_option("--throttle", metavar="BYTES_PER_SEC", default="-1", show_default=True,
         help="The movement of partitions between brokers will be throttled to this value (bytes/sec). It can "
              "be altered by resubmitting the current reassignment along with --additional. The throttle rate "
              "should be at least 1 KB/s.")
@_option("--timeout", metavar="MS", default="10000", show_default=True,
         help="The maximum time in ms to wait for log directory replica assignment to begin.")
@_option("--topics-to-move-json-file", metavar="FILE",
         help="Generate a reassignment configuration to move the partitions of the specified topics to the list "
              'of brokers specified by the --broker-list option: {"topics": [{"topic": "foo"},{"topic": "foo1"}], '
              '"version":1}')
@_option("--verify", is_flag=True,
         help="Verify if the reassignment completed as specified by the --reassignment-json-file option. If there "
              "is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle "
              "will be removed")
@version_option
def cli(**o):
    ctx = click.get_current_context()
    given = ctx.meta.get(_META, [])
    o["list"] = o.pop("list_")
    action = _validate(o, [("list" if name == "list_" else name) for name in given])
    try:
        _run(action, o)
    except _Failed as exc:
        fail(f"Error: {exc}")
    sys.stdout.flush()


def _validate(o: dict, given: list[str]) -> str:
    """validateAndParseArgs, in its order: one action, one bootstrap option, the action's
    required options, then no option the action does not take."""
    actions = [a for a in ACTIONS if o[a]]
    if len(actions) != 1:
        fail("Command must include exactly one action: " + ", ".join("--" + a for a in ACTIONS))
    action = actions[0]
    if o["bootstrap_server"] is not None and o["bootstrap_controller"] is not None:
        fail("Please don't specify both --bootstrap-server and --bootstrap-controller")
    if o["bootstrap_server"] is None and o["bootstrap_controller"] is None:
        fail("Please specify either --bootstrap-server or --bootstrap-controller")
    for name in REQUIRED[action]:
        if o[name] is None:
            fail(f'Missing required argument "{_spec(name)}"')
    permitted = set(PERMITTED[action]) | set(REQUIRED[action]) | {action}
    if action in ("cancel", "list"):
        permitted.add("bootstrap_server" if o["bootstrap_server"] is not None else "bootstrap_controller")
    for name in given:
        if name not in permitted:
            fail(f'Option "{_spec(name)}" can\'t be used with action "{_spec(action)}"')
    return action


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        raise _Failed(f"Unable to read file {path}") from None


def _run(action: str, o: dict) -> None:
    from pk.commands import reassign_partitions as cmd
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine.errors import KafkaError

    cluster = None
    out = _write
    try:
        props = load_properties(o["command_config"]) if o["command_config"] is not None else {}
        security = connection_security(props)
        cluster = cmd.Cluster(lambda: WireClient(o["bootstrap_server"] or o["bootstrap_controller"], 30.0,
                                                 "listPartitionReassignments", security=security),
                              via_brokers=o["bootstrap_server"] is not None)
        if action == "verify":
            cmd.verify(cluster, _read(o["reassignment_json_file"]), o["preserve_throttles"], out)
        elif action == "generate":
            cmd.generate(cluster, _read(o["topics_to_move_json_file"]), o["broker_list"],
                         not o["disable_rack_aware"], out)
        elif action == "execute":
            text = _read(o["reassignment_json_file"])
            throttle = _java_long(o["throttle"], "throttle")
            log_dir_throttle = _java_long(o["replica_alter_log_dirs_throttle"], "replica-alter-log-dirs-throttle")
            timeout = _java_long(o["timeout"], "timeout")
            cmd.execute(cluster, text, o["additional"], throttle, log_dir_throttle, timeout,
                        not o["disallow_replication_factor_change"], out)
        elif action == "cancel":
            text = _read(o["reassignment_json_file"])
            cmd.cancel(cluster, text, o["preserve_throttles"], _java_long(o["timeout"], "timeout"), out)
        else:
            cmd.list_reassignments(cluster, out)
    except cmd.Failed as exc:
        raise _Failed(str(exc)) from None
    except cmd.Terse as exc:
        fail(str(exc))
    except PropertiesError as exc:
        raise _Failed(java_message(str(exc))) from None
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "execution_message", None)
        raise _Failed(java() if java else str(exc)) from None
    except (ConnectionError, OSError) as exc:  # a broker of the cluster went away meanwhile
        raise _Failed(f"org.apache.kafka.common.errors.DisconnectException: {exc}") from None
    finally:
        if cluster is not None:
            cluster.close()


def _write(text: str) -> None:
    sys.stdout.write(text)


def main() -> None:
    run_tool(cli, "pk-reassign-partitions")


if __name__ == "__main__":
    main()
