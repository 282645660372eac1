"""pk-cluster: Kafka 4.4's kafka-cluster (ClusterTool): `cluster-id` on the bundled engine (its
cluster id) or, with --bootstrap-server, a cluster's; `list-endpoints`, `api-versions`,
`unregister` and `unregister-controller` against a cluster (commands/cluster.py).

ClusterTool parses with argparse4j: errors are `kafka-cluster: error: <message>` (one line
here; Kafka prints its usage before it, wrapped), exit 1.
"""

from __future__ import annotations

import sys

import click

from .common import OwnParserCommand, fail, run_tool

PROG = "kafka-cluster"
COMMANDS = ("cluster-id", "unregister", "unregister-controller", "list-endpoints", "api-versions")
_WITH_VALUE = {"--bootstrap-server": "bootstrap_server", "-b": "bootstrap_server",
               "--bootstrap-controller": "bootstrap_controller", "-C": "bootstrap_controller",
               "--config": "config", "--command-config": "command_config", "-c": "command_config",
               "--data-dir": "data_dir", "--id": "id", "-i": "id"}
_ARG_NAMES = {"bootstrap_server": "--bootstrap-server/-b", "bootstrap_controller": "--bootstrap-controller/-C",
              "config": "--config", "command_config": "--command-config/-c", "data_dir": "--data-dir",
              "id": "--id/-i"}
USAGE = ("usage: kafka-cluster {cluster-id,unregister,unregister-controller,list-endpoints,api-versions} [-h] "
         "[--config CONFIG] [--command-config COMMAND_CONFIG] "
         "(--bootstrap-server BOOTSTRAP_SERVER | --bootstrap-controller BOOTSTRAP_CONTROLLER)\n\n"
         "The Kafka cluster tool.\n\n"
         "  cluster-id                Get information about the ID of a cluster.\n"
         "  unregister --id ID        Unregister a broker.\n"
         "  unregister-controller --id ID  Unregister a controller.\n"
         "  list-endpoints [--include-fenced-brokers]  List endpoints\n"
         "  api-versions              Get information about the api versions of the brokers or controllers.\n\n"
         "  --bootstrap-server, -b    host:port pairs of the Kafka cluster (without it: the bundled engine)\n"
         "  --bootstrap-controller, -C  host:port pairs of the KRaft controllers\n"
         "  --command-config, -c      Config properties file for the Admin client\n"
         "  --config                  (DEPRECATED) the same as --command-config\n"
         "  --data-dir                the bundled engine's data directory\n")


def _error(message: str) -> None:
    fail(f"{PROG}: error: {message}")


def parse(args: list[str]) -> tuple[str, dict]:
    if not args:
        _error("too few arguments")
    if args[0] in ("-h", "--help"):
        click.echo(USAGE)
        sys.exit(0)
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        _error(f"invalid choice: '{command}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
    options: dict = {}
    unknown = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg in ("-h", "--help"):
            click.echo(USAGE)
            sys.exit(0)
        if name == "--include-fenced-brokers" and command == "list-endpoints" and not eq:
            options["include_fenced"] = True
        elif name in _WITH_VALUE and (name not in ("--id", "-i") or command.startswith("unregister")) and (
                name != "--data-dir" or command == "cluster-id"):
            key = _WITH_VALUE[name]
            if not eq:
                if i + 1 >= len(rest) or (rest[i + 1].startswith("-") and len(rest[i + 1]) > 1):
                    _error(f"argument {_ARG_NAMES[key]}: expected one argument")
                value = rest[i + 1]
                i += 1
            options[key] = value
        else:
            unknown.append(arg)
        i += 1
    if unknown:
        _error("unrecognized arguments: " + " ".join(f"'{u}'" for u in unknown))
    if options.get("bootstrap_server") is not None and options.get("bootstrap_controller") is not None:
        _error("argument --bootstrap-controller/-C: not allowed with argument --bootstrap-server/-b")
    if command.startswith("unregister"):
        if options.get("id") is None:
            _error("argument --id/-i is required")
        try:
            options["id"] = int(options["id"])
        except ValueError:
            _error(f"argument --id/-i: could not convert '{options['id']}' to Integer "
                   f"(For input string: \"{options['id']}\")")
    if command != "cluster-id" and options.get("bootstrap_server") is None and options.get(
            "bootstrap_controller") is None:
        _error("one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required")
    return command, options


def run(args: list[str]) -> None:
    command, options = parse(list(args))
    if options.get("config") is not None:
        sys.stderr.write("Option --config has been deprecated and will be removed in a future version. "
                         "Use --command-config instead.\n")
    if command != "cluster-id":
        run_remote(command, options)
    config = options.get("command_config") or options.get("config")
    bootstrap = options.get("bootstrap_server") or options.get("bootstrap_controller")
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.engine.errors import KafkaError

    try:
        if bootstrap is None:
            from pk.commands.properties import load_properties
            from pk.engine.engine import Engine

            if config is not None:
                load_properties(config)
            with Engine(options.get("data_dir")) as engine:
                cluster_id = engine.cluster_id
        else:
            from pk.commands.backends.kafka_admin import open_admin

            admin = open_admin(bootstrap, config, None)
            try:
                cluster_id = _cluster_id(bootstrap, config, admin)
            finally:
                admin.close()
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "java_class", None)
        fail(f"{java}: {exc}" if java else str(exc))
    if cluster_id:
        click.echo(f"Cluster ID: {cluster_id}")
    else:
        click.echo("No cluster ID found. The Kafka version is probably too old.")
    sys.exit(0)


def _cluster_id(bootstrap: str, config: str | None, admin):
    """The cluster id in Metadata from the bootstrap broker, on pk's wire client: librdkafka sends
    DescribeCluster to the controller, which a crashed ZooKeeper-mode controller leaves
    unanswered until its session expires (Kafka's Admin asks a least-loaded node). librdkafka
    only where the wire client cannot make the connection (a security setting it does not speak)."""
    from pk.commands.backends.kafka_admin import timeout_error
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.errors import ClientConfigError
    from pk.commands.properties import load_properties
    from pk.engine import protocol as kp

    try:
        security = connection_security(load_properties(config) if config is not None else {})
    except ClientConfigError:
        return admin.result(admin.client.describe_cluster(request_timeout=admin.timeout_s), "listNodes").cluster_id
    client = WireClient(bootstrap, admin.timeout_s, "listNodes", security=security)
    try:
        return client.call(kp.ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False,
                                                    "include_topic_authorized_operations": False})["cluster_id"]
    except (TimeoutError, ConnectionError) as exc:  # the broker stopped answering
        raise timeout_error("listNodes") from exc
    finally:
        client.close()


def run_remote(command: str, options: dict) -> None:
    """list-endpoints, api-versions, unregister, unregister-controller on pk's wire client."""
    from pk.commands import cluster as cmd
    from pk.commands.backends.wire import WireClient, connection_security
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError
    from pk.commands.properties import load_properties
    from pk.engine import protocol as kp
    from pk.engine.errors import KafkaError

    config = options.get("command_config") or options.get("config")
    controllers = options.get("bootstrap_server") is None
    client = None
    try:
        security = connection_security(load_properties(config) if config is not None else {})
        client = WireClient(options.get("bootstrap_server") or options["bootstrap_controller"], 30.0,
                            "describeCluster", security=security)
        if command == "list-endpoints":
            nodes = cmd.describe_cluster(client, cmd.CONTROLLERS if controllers else cmd.BROKERS,
                                         bool(options.get("include_fenced")))
            text = "".join(line + "\n" for line in cmd.endpoint_lines(nodes, controllers))
        elif command == "api-versions":
            text = cmd.api_versions_text(client)
        elif command == "unregister":
            done = cmd.unregister(client, kp.ApiKey.UNREGISTER_BROKER, options["id"])
            text = (f"Broker {options['id']} is no longer registered.\n" if done
                    else "The target cluster does not support the broker unregistration API.\n")
        else:
            done = cmd.unregister(client, kp.ApiKey.UNREGISTER_CONTROLLER, options["id"])
            text = (f"Controller {options['id']} is no longer registered.\n" if done
                    else "The target cluster does not support the controller unregistration API.\n")
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        java = getattr(exc, "execution_message", None)
        fail(f"java.util.concurrent.ExecutionException: {java()}" if java else str(exc))
    except ConnectionError as exc:
        fail(str(exc))
    finally:
        if client is not None:
            client.close()
    sys.stdout.write(text)
    sys.stdout.flush()
    sys.exit(0)


def _complete(ctx, _param, incomplete: str):
    from click.shell_completion import CompletionItem

    if ctx.params.get("args"):
        return [CompletionItem(o) for o in ("--bootstrap-server", "--bootstrap-controller", "--command-config",
                                            "--data-dir", "--id", "--include-fenced-brokers")
                if o.startswith(incomplete)]
    return [CompletionItem(c) for c in COMMANDS if c.startswith(incomplete)]


@click.command(cls=OwnParserCommand, prog="pk-cluster", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete)
def cli(args):
    """The Kafka cluster tool (kafka-cluster)."""
    run(list(args))


def main() -> None:
    run_tool(cli, "pk-cluster")


if __name__ == "__main__":
    main()
