"""pk-spark: Spark jobs over Kafka topics, on a bundled-engine data dir or a remote cluster.

    pk-spark offsets --topic orders                          # table on stdout
    pk-spark offsets --include 'orders.*' --output offsets.parquet
    pk-spark dump --topic orders --output /data/orders --start-timestamp 2024-05-01T00:00:00Z
    pk-spark dump --topic orders --output /data/orders-2 --resume /data/orders/_pk_manifest.json
    pk-spark dump ... --master spark://host:7077 --submit    # as a spark-submit application
    pk-spark compact --topic users --force                   # log compaction, in place

Every subcommand takes spark-submit's launch options (--master, --deploy-mode, --conf,
--executor-memory, --driver-memory, --name). By default the job runs in this process on
`local[*]`; --submit runs it through the pyspark package's spark-submit with pk shipped as
--py-files, and --print-command shows that command instead of running it.

Only this tool imports pyspark, and only once a subcommand runs (inside the functions below).
Errors are one line on stderr, exit 1.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys

import click

from pk.cli import profile_args
from pk.cli.common import QuietPipe, data_dir_option, fail, profile_option, run_tool, version_option, with_profile
from pk.cli.completion import complete_groups, complete_topics

HELP = ("Spark jobs over Kafka topics (a bundled-engine data dir, or a cluster with --bootstrap-server): "
        "offsets and record counts per partition, and dumps to Parquet or JSON Lines.")

# spark-submit-style options: given to spark-submit with --submit, not to the application.
_LAUNCH_WITH_VALUE = ("--master", "--deploy-mode", "--conf", "--executor-memory", "--driver-memory", "--name")
_LAUNCH_FLAGS = ("--submit", "--print-command")

_raw_args: list[str] = []


class SparkGroup(QuietPipe, click.Group):
    """Click group with pk's error rule: one line on stderr, exit 1."""

    def add_command(self, cmd, name=None):
        # every job takes --profile (for help and completion; main() puts the profile in)
        if any(o in ("--bootstrap-server", "--data-dir") for p in cmd.params for o in getattr(p, "opts", ())):
            cmd.params.append(profile_option())
        super().add_command(cmd, name)

    def main(self, args=None, prog_name=None, **extra):
        if args is None:
            args = sys.argv[1:]
        prog_name = prog_name or "pk-spark"
        complete_var = "_PK_SPARK_COMPLETE"
        if os.environ.get(complete_var):
            return super().main(args, prog_name, complete_var=complete_var, **extra)
        if not args:
            with click.Context(self, info_name=prog_name) as ctx:
                sys.stderr.write(self.get_help(ctx) + "\n")
            sys.exit(1)
        args = with_profile(args, profile_args.SPARK)
        _raw_args[:] = list(args)
        try:
            return super().main(list(args), prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            sys.exit(130)
        except click.exceptions.NoArgsIsHelpError as exc:
            sys.stderr.write(exc.ctx.get_help() + "\n")
            sys.exit(1)
        except click.UsageError as exc:
            fail(f"Error: {exc.format_message()}")


def spark_options(func):
    options = [
        click.option("--master", metavar="URL",
                     help="Spark master: local[*] (the default), local[N], spark://host:7077, yarn, k8s://...."),
        click.option("--deploy-mode", metavar="MODE",
                     help="client (the default) or cluster (needs --submit and a cluster master)."),
        click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE",
                     help="A Spark configuration property (repeat for more)."),
        click.option("--executor-memory", metavar="MEM", help="Memory per executor, e.g. 2g."),
        click.option("--driver-memory", metavar="MEM", help="Memory for the driver, e.g. 2g (default 1g)."),
        click.option("--name", metavar="NAME", help="The application name (default pk-spark)."),
        click.option("--submit", is_flag=True,
                     help="Run the job through the pyspark package's spark-submit, with pk shipped as "
                          "--py-files (executors need pyarrow, confluent-kafka, crc32c and cramjam)."),
        click.option("--print-command", is_flag=True,
                     help="Print the spark-submit command --submit would run, and exit."),
        click.option("--no-progress", is_flag=True, help="No stage progress on stderr."),
        click.option("--verbose", is_flag=True, help="Let Spark's own WARN log through to stderr."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def source_options(func):
    options = [
        click.option("--bootstrap-server", metavar="HOST:PORT[,...]",
                     help="Read a Kafka cluster instead of the bundled engine's data dir."),
        click.option("--consumer-property", "consumer_properties", multiple=True, metavar="KEY=VALUE",
                     help="A consumer setting for --bootstrap-server (librdkafka names)."),
        data_dir_option,
        click.option("--topic", metavar="TOPIC", shell_complete=complete_topics, help="The topic."),
        click.option("--include", metavar="REGEX", help="The topics whose whole names match this regex."),
        click.option("--include-internal", is_flag=True, help="Include internal topics (__consumer_offsets).")]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(cls=SparkGroup, help=HELP, context_settings={"help_option_names": ["--help"]})
@version_option
def cli():
    pass


# --------------------------------------------------------------------------- helpers
def _pairs(items, option: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"Error: {option} expects KEY=VALUE, got '{item}'")
        out[key.strip()] = value
    return out


def parse_time(text: str | None, option: str) -> int | None:
    """Milliseconds since the epoch, or an ISO 8601 date/time (UTC unless it says otherwise)."""
    if text is None:
        return None
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    try:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"Error: {option} expects milliseconds since the epoch or an ISO 8601 time, not '{text}'")
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return int(stamp.timestamp() * 1000)


def _spark_opts(kw: dict):
    from pk.spark_ops.session import SparkOptions

    return SparkOptions(master=kw.pop("master"), deploy_mode=kw.pop("deploy_mode"), conf=list(kw.pop("conf")),
                        executor_memory=kw.pop("executor_memory"), driver_memory=kw.pop("driver_memory"),
                        name=kw.pop("name"), submit=kw.pop("submit"), print_command=kw.pop("print_command"),
                        progress=not kw.pop("no_progress"), verbose=kw.pop("verbose"))


def forwarded_args(raw: list[str], data_dir: str | None) -> list[str]:
    """The command line for the application spark-submit runs: the launch options removed,
    and the data dir made explicit (the application may run elsewhere)."""
    out = []
    i = 0
    while i < len(raw):
        arg = raw[i]
        name = arg.split("=", 1)[0]
        if name in _LAUNCH_WITH_VALUE:
            i += 1 if "=" in arg else 2
            continue
        if arg in _LAUNCH_FLAGS:
            i += 1
            continue
        out.append(arg)
        i += 1
    if data_dir is not None and not any(a == "--data-dir" or a.startswith("--data-dir=") for a in out):
        out[1:1] = ["--data-dir", data_dir]
    return out


def one_line(exc: BaseException) -> str:
    """One line for an error, digging the Python error out of Spark's wrapped exceptions
    (pk's own message when there is one, else the last Python error line of the traceback)."""
    text = str(exc)
    ours = re.findall(r"^pk\.[\w.]*?(\w+): (.+)$", text, re.M)
    if ours:
        return ours[-1][1].strip()
    python = re.findall(r"^((?!org\.|java\.|javax\.|scala\.|py4j\.)[\w.]*(?:Error|Exception)): (.+)$", text, re.M)
    if python:
        name, message = python[-1]
        return f"{name.rsplit('.', 1)[-1]}: {message.strip()}"
    for line in text.splitlines():
        line = line.strip()
        if line:
            return re.sub(r"\s*SQLSTATE: \w+\s*$", "", line)
    return type(exc).__name__


def run_job(spark_opts, job, source_data_dir: str | None):
    """Launch per the Spark options: print or run spark-submit, or run `job(spark)` here."""
    from pk.spark_ops import session as sess

    if spark_opts.submit or spark_opts.print_command:
        try:
            cmd, env = sess.submit_command(spark_opts, forwarded_args(_raw_args, source_data_dir))
            if spark_opts.print_command:
                click.echo(sess.format_command(cmd, env))
                sys.exit(0)
            sess.find_java()
            sys.exit(sess.run_submit(cmd, env))
        except sess.SessionError as exc:
            fail(f"Error: {exc}")
    try:
        if not sess.under_spark_submit():
            sess.find_java()
        spark = sess.build_session(spark_opts)
    except sess.SessionError as exc:
        fail(f"Error: {exc}")
    except Exception as exc:  # the JVM did not start
        fail(f"Error: cannot start Spark: {one_line(exc)}")
    try:
        with sess.ProgressReporter(spark, enabled=spark_opts.progress):
            return job(spark)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        fail(f"Error: {one_line(exc)}")
    finally:
        try:
            spark.stop()
        except Exception:
            pass


def _check_spark_options(spark_opts) -> None:
    from pk.spark_ops.session import SessionError

    try:
        spark_opts.check()
    except SessionError as exc:
        fail(f"Error: {exc}")


# --------------------------------------------------------------------------- offsets
@cli.command(help="Per partition: earliest and latest offsets, record count, first and last record "
                  "timestamps; per consumer group: committed offset and lag. Every topic unless "
                  "--topic or --include.", context_settings={"help_option_names": ["--help"]})
@source_options
@click.option("--group", "groups", multiple=True, metavar="GROUP", shell_complete=complete_groups,
              help="Only this consumer group's committed offsets (repeatable; default: all groups).")
@click.option("--output", metavar="FILE", help="Write to FILE instead of stdout.")
@click.option("--format", "fmt", metavar="FORMAT",
              help="table, csv, json or parquet (default: from the --output extension, else table).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --output file.")
@spark_options
@version_option
def offsets(**kw):
    from pk.spark_ops import offsets as job
    from pk.spark_ops.datasource import PkLogError

    spark_opts = _spark_opts(kw)
    _check_spark_options(spark_opts)
    request = job.OffsetsRequest(
        topic=kw["topic"], include=kw["include"], include_internal=kw["include_internal"],
        groups=list(kw["groups"]), data_dir=kw["data_dir"], bootstrap_server=kw["bootstrap_server"],
        consumer_properties=_pairs(kw["consumer_properties"], "--consumer-property"))
    if kw["topic"] and kw["include"]:
        fail("Error: give --topic or --include, not both")
    try:
        fmt = job.output_format(kw["fmt"], kw["output"])
        job.check_output(kw["output"], kw["overwrite"])
        plan = job.prepare(request)
    except PkLogError as exc:
        fail(f"Error: {exc}")
    data_dir = None if request.bootstrap_server else plan.source_options["path"]
    if plan.ranges:
        rows = run_job(spark_opts, lambda spark: job.run(spark, plan), data_dir)
    else:
        rows = []  # no topics at all: nothing for Spark to do
    try:
        job.write_output(job.render(rows, fmt), kw["output"], sys.stdout.buffer)
    except PkLogError as exc:
        fail(f"Error: {exc}")


# --------------------------------------------------------------------------- dump
@cli.command(help="Write the records of a topic within exact offset or time bounds to Parquet or JSON "
                  "Lines (a directory of part files), with a manifest of the offset ranges written.",
             context_settings={"help_option_names": ["--help"]})
@source_options
@click.option("--output", required=True, metavar="PATH", help="The output directory (any Spark/Hadoop path).")
@click.option("--format", "fmt", metavar="FORMAT",
              help="parquet or jsonl (default: jsonl for a .jsonl/.json path, else parquet).")
@click.option("--start-offsets", metavar="JSON|earliest",
              help='Where to start: earliest (default) or JSON per partition, e.g. {"t":{"0":42,"1":-2}} '
                   "(-2 earliest), naming every partition.")
@click.option("--end-offsets", metavar="JSON|latest",
              help='Where to stop (exclusive): latest (default) or JSON, e.g. {"t":{"0":100,"1":-1}} (-1 latest).')
@click.option("--start-timestamp", metavar="MS|ISO",
              help="Start at the first record with a timestamp >= this (ms since the epoch or ISO 8601).")
@click.option("--end-timestamp", metavar="MS|ISO",
              help="Stop before the first record with a timestamp >= this.")
@click.option("--resume", metavar="MANIFEST",
              help="Continue a previous dump: start each partition at that manifest's end offset.")
@click.option("--manifest", metavar="PATH", help="Where to write the manifest (default: OUTPUT/_pk_manifest.json).")
@click.option("--overwrite", is_flag=True, help="Replace an existing output.")
@click.option("--no-headers", is_flag=True, help="Leave record headers out.")
@click.option("--fail-on-data-loss/--no-fail-on-data-loss", default=True, show_default=True,
              help="Fail when a requested offset is no longer in the log (else start at the earliest).")
@spark_options
@version_option
def dump(**kw):
    from pk.spark_ops import dump as job
    from pk.spark_ops.datasource import PkLogError

    spark_opts = _spark_opts(kw)
    _check_spark_options(spark_opts)
    if not (kw["topic"] or kw["include"]):
        fail("Error: give the topic to dump with --topic (or --include REGEX)")
    if kw["topic"] and kw["include"]:
        fail("Error: give --topic or --include, not both")
    request = job.DumpRequest(
        output=kw["output"], topic=kw["topic"], include=kw["include"], include_internal=kw["include_internal"],
        data_dir=kw["data_dir"], bootstrap_server=kw["bootstrap_server"],
        consumer_properties=_pairs(kw["consumer_properties"], "--consumer-property"),
        start_offsets=kw["start_offsets"], end_offsets=kw["end_offsets"],
        start_timestamp=parse_time(kw["start_timestamp"], "--start-timestamp"),
        end_timestamp=parse_time(kw["end_timestamp"], "--end-timestamp"),
        resume=kw["resume"], format=kw["fmt"], overwrite=kw["overwrite"], manifest=kw["manifest"],
        headers=not kw["no_headers"], fail_on_data_loss=kw["fail_on_data_loss"])
    try:
        plan = job.prepare(request)
    except PkLogError as exc:
        fail(f"Error: {exc}")
    data_dir = None if request.bootstrap_server else plan.source_options["path"]
    manifest = run_job(spark_opts, lambda spark: job.run(spark, plan), data_dir)
    click.echo(job.summary(manifest, plan))


# --------------------------------------------------------------------------- compact
@cli.command(help="Log compaction as Kafka's log cleaner does it: keep the latest record per key "
                  "(offsets kept), drop tombstones past delete.retention.ms, leave the active segment and "
                  "records younger than min.compaction.lag.ms alone. On a data dir the closed segments of "
                  "each compacted partition are rewritten in place (swapped in atomically under the "
                  "partition lock); with --output-topic or --output (needed with --bootstrap-server) the "
                  "latest record per key is written as a snapshot instead (tombstones dropped unless "
                  "--keep-tombstones).", context_settings={"help_option_names": ["--help"]})
@source_options
@click.option("--force", is_flag=True, help="Clean even below min.cleanable.dirty.ratio.")
@click.option("--engine", "use_engine", is_flag=True,
              help="Run the engine's own log cleaner (no Spark), e.g. to compare.")
@click.option("--output-topic", metavar="TOPIC",
              help="Produce the compacted snapshot to this topic of the --bootstrap-server cluster.")
@click.option("--producer-property", "producer_properties", multiple=True, metavar="KEY=VALUE",
              help="A producer setting for --output-topic (librdkafka names).")
@click.option("--output", metavar="PATH", help="Write the compacted snapshot to files (a directory).")
@click.option("--format", "fmt", metavar="FORMAT",
              help="parquet or jsonl for --output (default: jsonl for a .jsonl/.json path, else parquet).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --output.")
@click.option("--keep-tombstones", is_flag=True,
              help="Snapshot: keep the keys whose latest record is a tombstone (null value).")
@click.option("--now-ms", type=int, hidden=True, help="The cleaner's clock (tests).")
@spark_options
@version_option
def compact(**kw):
    from pk.spark_ops import compact as job
    from pk.spark_ops.datasource import PkLogError

    spark_opts = _spark_opts(kw)
    _check_spark_options(spark_opts)
    request = job.CompactRequest(
        topic=kw["topic"], include=kw["include"], include_internal=kw["include_internal"],
        data_dir=kw["data_dir"], bootstrap_server=kw["bootstrap_server"],
        consumer_properties=_pairs(kw["consumer_properties"], "--consumer-property"),
        force=kw["force"], now_ms=kw["now_ms"], output_topic=kw["output_topic"],
        producer_properties=_pairs(kw["producer_properties"], "--producer-property"),
        output=kw["output"], format=kw["fmt"], overwrite=kw["overwrite"], keep_tombstones=kw["keep_tombstones"])
    if kw["use_engine"]:
        if request.bootstrap_server:
            fail("Error: --engine cleans a bundled-engine data dir: it takes no --bootstrap-server")
        try:
            results = job.run_engine(request)
        except PkLogError as exc:
            fail(f"Error: {exc}")
        click.echo(job.summary(results))
        return
    try:
        plan = job.prepare(request)
    except PkLogError as exc:
        fail(f"Error: {exc}")
    data_dir = None if request.bootstrap_server else (plan.data_dir or plan.source_options.get("path"))
    if plan.tasks or request.snapshot:
        results = run_job(spark_opts, lambda spark: job.run(spark, plan), data_dir)
    else:
        results = job.run(None, plan)  # nothing to rewrite: no need for Spark
    click.echo(job.summary(results))


def main() -> None:
    run_tool(cli, "pk-spark")
    sys.exit(0)


if __name__ == "__main__":
    main()
