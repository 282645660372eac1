"""pk-delete-records: delete records of the given partitions down to an offset
(kafka-delete-records), on the bundled engine or, with --bootstrap-server, on a cluster."""

from __future__ import annotations

import sys

import click

from .common import KafkaCommand, data_dir_option, fail, run_tool, version_option

HELP_LINE = "This tool helps to delete records of the given partitions down to the specified offset."


@click.command(cls=KafkaCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--bootstrap-server", metavar="SERVER(S)",
              help="The server to connect to; without it pk works on the bundled engine.")
@click.option("--offset-json-file", metavar="FILE",
              help='REQUIRED: The JSON file with offset per partition. The format to use is: '
                   '{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version":1}')
@click.option("--command-config", metavar="FILE", help="A property file containing configs to be passed to Admin Client.")
@data_dir_option
@version_option
def cli(bootstrap_server, offset_json_file, command_config, data_dir):
    from pk.commands import delete_records as cmd
    from pk.commands.client_config import java_message
    from pk.commands.errors import ClientConfigError, PropertiesError, UsageError
    from pk.engine.errors import KafkaError

    if offset_json_file is None:
        fail('Missing required argument "[offset-json-file]"')
    backend = None
    try:
        try:
            with open(offset_json_file, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            raise UsageError(f"Unable to read file {offset_json_file}") from None
        if command_config is not None:
            from pk.commands.properties import load_properties

            load_properties(command_config)
        if bootstrap_server is None:
            from pk.engine.engine import Engine

            backend = Engine(data_dir)
            deleter = cmd.engine_deleter(backend)
        else:
            from pk.commands.backends.kafka_admin import open_admin

            backend = open_admin(bootstrap_server, command_config, None)
            deleter = cmd.remote_deleter(backend)
        cmd.run(deleter, cmd.parse_offsets(text), click.echo)
    except UsageError as exc:
        fail(str(exc))
    except PropertiesError as exc:
        fail(java_message(str(exc)))
    except ClientConfigError as exc:
        fail(str(exc))
    except KafkaError as exc:
        fail(str(exc))
    finally:
        if backend is not None:
            backend.close()
    sys.stdout.flush()


def main() -> None:
    run_tool(cli, "pk-delete-records")


if __name__ == "__main__":
    main()
