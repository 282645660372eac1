"""DumpLogSegments (kafka-dump-log.sh, org.apache.kafka.tools.DumpLogSegments, Kafka 4.4;
kafka.tools.DumpLogSegments up to 3.x).

    pk-run-class kafka.tools.DumpLogSegments --files 00000000000000000000.log --print-data-log

Reads segment files by path, so it works on any Kafka-format log directory. Where Kafka's
tool dies with an uncaught exception (a missing file, a corrupt batch, a jopt parse error),
pk prints the JVM's first line, `Exception in thread "main" <class>: <message>`, on stderr
and exits 1; usage errors print Kafka's message alone.
"""

from __future__ import annotations

import sys

import click

from .common import fail, run_tool, stdout_closed, version_option
from .run_class import JoptCommand

HELP_LINE = ("This tool helps to parse a log file and dump its contents to the console, useful for "
             "debugging a seemingly corrupt log segment.")
DEFAULT_DECODER = "org.apache.kafka.tools.api.StringDecoder"


class DumpLogSegmentsCommand(JoptCommand):
    def error_line(self, exception_class: str, message: str) -> str:
        # DumpLogSegments does not catch jopt's exceptions: the JVM reports them.
        return f'Exception in thread "main" {exception_class}: {message}'


@click.command(cls=DumpLogSegmentsCommand, help=HELP_LINE, no_args_message=HELP_LINE,
               context_settings={"help_option_names": ["--help"]})
@click.option("--files", multiple=True, metavar="FILE1,FILE2,...",
              help="REQUIRED: The comma separated list of data and index log files to be dumped.")
@click.option("--print-data-log", is_flag=True,
              help="If set, printing the messages content when dumping data logs. Automatically set if any "
                   "decoder option is specified.")
@click.option("--verify-index-only", is_flag=True, help="If set, just verify the index log without printing its content.")
@click.option("--index-sanity-check", is_flag=True,
              help="If set, just checks the index sanity without printing its content. This is the same check "
                   "that is executed on broker startup to determine if an index needs rebuilding or not.")
@click.option("--deep-iteration", is_flag=True,
              help="If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.")
# Integers stay text until the tool reads them (after "Dumping <file>"), as jopt-simple converts them.
@click.option("--max-message-size", multiple=True, metavar="SIZE",
              help="Size of largest message. (default: 5242880)")
@click.option("--max-bytes", multiple=True, metavar="SIZE",
              help="Limit the amount of total batches read in bytes avoiding reading the whole .log file(s). "
                   "(default: 2147483647)")
@click.option("--value-decoder-class", is_flag=False, flag_value=DEFAULT_DECODER, default=None, metavar="[CLASS]",
              help="If set, used to deserialize the messages: org.apache.kafka.tools.api.StringDecoder (default), "
                   "LongDecoder, IntegerDecoder or DefaultDecoder of that package.")
@click.option("--key-decoder-class", is_flag=False, flag_value=DEFAULT_DECODER, default=None, metavar="[CLASS]",
              help="If set, used to deserialize the keys: org.apache.kafka.tools.api.StringDecoder (default), "
                   "LongDecoder, IntegerDecoder or DefaultDecoder of that package.")
@click.option("--offsets-decoder", is_flag=True,
              help="If set, log data will be parsed as offset data from the __consumer_offsets topic.")
@click.option("--transaction-log-decoder", is_flag=True,
              help="If set, log data will be parsed as transaction metadata from the __transaction_state topic.")
@click.option("--cluster-metadata-decoder", is_flag=True,
              help="Kafka: parse log data as cluster metadata records (not supported by pk).")
@click.option("--remote-log-metadata-decoder", is_flag=True,
              help="Kafka: parse log data as remote log metadata records (not supported by pk).")
@click.option("--share-group-state-decoder", is_flag=True,
              help="If set, log data will be parsed as share group state data from the __share_group_state topic.")
@click.option("--skip-record-metadata", is_flag=True,
              help="Skip metadata when printing records. This flag also skips control records.")
@version_option
@click.argument("ignored", nargs=-1, required=False, metavar="")
def cli(ignored, **opts):
    from pk.commands.dump_log import tool as cmd
    from pk.commands.errors import JavaError, Unsupported, UsageError

    options = cmd.DumpOptions(
        files=list(opts["files"]) or None,
        print_data_log=opts["print_data_log"],
        verify_index_only=opts["verify_index_only"],
        index_sanity_check=opts["index_sanity_check"],
        deep_iteration=opts["deep_iteration"],
        max_message_size=list(opts["max_message_size"]) or None,
        max_bytes=list(opts["max_bytes"]) or None,
        key_decoder_class=opts["key_decoder_class"],
        value_decoder_class=opts["value_decoder_class"],
        offsets_decoder=opts["offsets_decoder"],
        skip_record_metadata=opts["skip_record_metadata"],
        transaction_log_decoder=opts["transaction_log_decoder"],
        cluster_metadata_decoder=opts["cluster_metadata_decoder"],
        remote_log_metadata_decoder=opts["remote_log_metadata_decoder"],
        share_group_state_decoder=opts["share_group_state_decoder"],
    )
    stdout = sys.stdout.buffer
    stderr = sys.stderr

    def write_err(text: str) -> None:
        stderr.write(text)
        stderr.flush()

    out = cmd.Output(lambda text: stdout.write(text.encode("utf-8", "replace")), write_err)
    try:
        try:
            cmd.run(options, out)
        finally:
            out.flush()
            stdout.flush()
    except BrokenPipeError:
        stdout_closed()
    except UsageError as exc:
        fail(str(exc))
    except JavaError as exc:
        fail(exc.line)
    except Unsupported as exc:
        fail(str(exc))


def main() -> None:
    run_tool(cli, "pk-dump-log")


if __name__ == "__main__":
    main()
