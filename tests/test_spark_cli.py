"""pk-spark offsets and dump: the jobs run in-process on the shared local[2] session (checked
against pk-run-class GetOffsetShell and pk-console-consumer), then a few runs of the installed
tool: one in-process job, one through spark-submit, and errors that stop before Spark starts."""

from __future__ import annotations

import base64
import csv
import glob
import io
import json
import os
import re
import time
import zipfile

import pytest

from test_spark_datasource import broker_apis, produce, spark  # noqa: F401  (the shared session fixture)

pytest.importorskip("pyspark")

from pk.engine.engine import Engine  # noqa: E402
from pk.engine.offsets import OffsetStore  # noqa: E402
from pk.spark_ops import dump as dump_job  # noqa: E402
from pk.spark_ops import offsets as offsets_job  # noqa: E402
from pk.spark_ops.datasource import PkLogError  # noqa: E402
from pk.spark_ops.session import ProgressReporter  # noqa: E402


def get_offsets(pk, *args) -> dict[tuple[str, int], int]:
    proc = pk("pk-run-class", "kafka.tools.GetOffsetShell", *args)
    assert proc.returncode == 0, proc.err
    out = {}
    for line in proc.out.splitlines():
        topic, p, offset = line.rsplit(":", 2)
        out[(topic, int(p))] = int(offset)
    return out


def console_records(pk, topic: str) -> dict[tuple[int, int], tuple[str, str]]:
    """{(partition, offset): (key, value)} as pk-console-consumer prints them."""
    proc = pk("pk-console-consumer", "--topic", topic, "--from-beginning", "--timeout-ms", "3000",
              "--formatter-property", "print.key=true", "--formatter-property", "print.partition=true",
              "--formatter-property", "print.offset=true")
    out = {}
    for line in proc.out.splitlines():
        part, off, key, value = line.split("\t")
        out[(int(part.split(":")[1]), int(off.split(":")[1]))] = (key, value)
    return out


# --------------------------------------------------------------------------- offsets
def test_offsets_match_get_offset_shell_and_groups(spark, pk, data_dir):
    start_ms = int(time.time() * 1000) - 60_000
    produce(data_dir, "orders", partitions=3, count=25, start_ms=start_ms, configs={"segment.bytes": "1024"})
    produce(data_dir, "orders-eu", partitions=1, count=4, start_ms=start_ms)
    produce(data_dir, "audit", partitions=1, count=2, start_ms=start_ms)
    with Engine(data_dir) as engine:
        engine.create_topic("empty", 1)
        OffsetStore(engine).commit("billing", {("orders", 0): 20, ("orders", 2): 25})
        OffsetStore(engine).commit("other", {("audit", 0): 1})

    plan = offsets_job.prepare(offsets_job.OffsetsRequest(include="orders.*|empty", data_dir=data_dir))
    rows = offsets_job.run(spark, plan)
    earliest = get_offsets(pk, "--topic", "orders.*|empty", "--time", "-2")
    latest = get_offsets(pk, "--topic", "orders.*|empty", "--time", "-1")
    assert {(r["topic"], r["partition"]) for r in rows} == set(latest)
    for r in rows:
        tp = (r["topic"], r["partition"])
        assert (r["earliest_offset"], r["latest_offset"]) == (earliest[tp], latest[tp])
        assert r["records"] == latest[tp] - earliest[tp]  # no gaps in these logs
        if r["records"]:
            assert (r["first_timestamp"], r["last_timestamp"]) == (start_ms, start_ms + 10 * (r["records"] - 1))
        else:
            assert r["first_timestamp"] is None and r["last_timestamp"] is None
    groups = {(r["topic"], r["partition"]): (r["group"], r["committed_offset"], r["lag"]) for r in rows}
    assert groups[("orders", 0)] == ("billing", 20, 5)
    assert groups[("orders", 2)] == ("billing", 25, 0)
    assert groups[("orders", 1)] == (None, None, None)
    assert all(r["group"] != "other" for r in rows)

    text = offsets_job.render(rows, "table").decode()
    assert text.splitlines()[0].split() == ["TOPIC", "PARTITION", "EARLIEST-OFFSET", "LATEST-OFFSET", "RECORDS",
                                            "FIRST-TIMESTAMP", "LAST-TIMESTAMP", "GROUP", "COMMITTED-OFFSET", "LAG"]
    assert re.search(r"orders\s+0\s+0\s+25\s+25\s+\S+Z\s+\S+Z\s+billing\s+20\s+5", text)
    parsed = list(csv.DictReader(io.StringIO(offsets_job.render(rows, "csv").decode())))
    assert parsed[0]["topic"] == "empty" and parsed[0]["first_timestamp"] == ""
    assert json.loads(offsets_job.render(rows, "json")) == rows
    import pyarrow.parquet as pq

    assert pq.read_table(io.BytesIO(offsets_job.render(rows, "parquet"))).to_pylist() == rows


def test_offsets_bad_input(data_dir):
    produce(data_dir, "t", partitions=1, count=1)
    for request, message in (
            (offsets_job.OffsetsRequest(topic="nope", data_dir=data_dir), "Topic 'nope' does not exist"),
            (offsets_job.OffsetsRequest(include="x.*", data_dir=data_dir), "No topic matches 'x.*'"),
            (offsets_job.OffsetsRequest(include="(", data_dir=data_dir), "not a valid regular expression")):
        with pytest.raises(PkLogError, match=re.escape(message)):
            offsets_job.prepare(request)
    with pytest.raises(PkLogError, match="Parquet output needs --output"):
        offsets_job.output_format("parquet", None)
    assert offsets_job.output_format(None, "x.parquet") == "parquet"


# --------------------------------------------------------------------------- dump
def test_dump_parquet_matches_console_consumer(spark, pk, data_dir, tmp_path):
    produce(data_dir, "orders", partitions=2, count=120, batch=9, configs={"segment.bytes": "2048"})
    out = str(tmp_path / "orders")
    plan = dump_job.prepare(dump_job.DumpRequest(output=out, topic="orders", data_dir=data_dir))
    manifest = dump_job.run(spark, plan)
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert table.column_names == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType",
                                  "headers"]
    assert str(table.schema.field("timestamp").type) == "timestamp[us, tz=UTC]"
    dumped = {(r["partition"], r["offset"]): (r["key"].decode(), r["value"].decode()) for r in table.to_pylist()}
    assert dumped == console_records(pk, "orders")
    assert len(dumped) == table.num_rows == 240
    assert json.load(open(os.path.join(out, "_pk_manifest.json"))) == manifest
    assert manifest["records"] == 240
    assert [(p["partition"], p["start_offset"], p["end_offset"], p["records"], p["first_offset"], p["last_offset"])
            for p in manifest["partitions"]] == [(0, 0, 120, 120, 0, 119), (1, 0, 120, 120, 0, 119)]

    with pytest.raises(PkLogError, match="already exists"):
        dump_job.prepare(dump_job.DumpRequest(output=out, topic="orders", data_dir=data_dir))


def test_dump_jsonl_time_bounds_and_base64(spark, pk, data_dir, tmp_path):
    start_ms = int(time.time() * 1000) - 60_000
    produce(data_dir, "bin", partitions=2, count=50, start_ms=start_ms,
            key=lambda p, i: None if i == 21 else f"k{i}".encode(),
            value=lambda p, i: bytes([0xff, i]) if i % 2 else f"é{i}".encode())
    out = str(tmp_path / "bin.jsonl")
    t0, t1 = start_ms + 205, start_ms + 300
    plan = dump_job.prepare(dump_job.DumpRequest(output=out, topic="bin", data_dir=data_dir,
                                                 start_timestamp=t0, end_timestamp=t1))
    manifest = dump_job.run(spark, plan)
    starts = get_offsets(pk, "--topic", "bin", "--time", str(t0))
    ends = get_offsets(pk, "--topic", "bin", "--time", str(t1))
    assert [(p["start_offset"], p["end_offset"]) for p in manifest["partitions"]] == \
        [(starts[("bin", 0)], ends[("bin", 0)]), (starts[("bin", 1)], ends[("bin", 1)])] == [(21, 30), (21, 30)]
    lines = [json.loads(line) for f in sorted(glob.glob(os.path.join(out, "part-*.json"))) for line in open(f)]
    assert len(lines) == manifest["records"] == 18
    for rec in lines:
        i = rec["offset"]
        assert rec["timestamp"] == start_ms + 10 * i and rec["timestampType"] == 0
        if i == 21:
            assert rec["key"] is None and rec["keyEncoding"] is None
        else:
            assert (rec["key"], rec["keyEncoding"]) == (f"k{i}", "utf8")
        if i % 2:
            assert rec["valueEncoding"] == "base64" and base64.b64decode(rec["value"]) == bytes([0xff, i])
        else:
            assert (rec["value"], rec["valueEncoding"]) == (f"é{i}", "utf8")
        assert rec["headers"] == ([{"key": "h", "value": str(i), "valueEncoding": "utf8"},
                                   {"key": "n", "value": None, "valueEncoding": None}] if i % 3 == 0 else None)


def test_dump_resume_chains_without_gaps(spark, data_dir, tmp_path, monkeypatch):
    produce(data_dir, "t", partitions=2, count=30)
    first = str(tmp_path / "one")
    plan = dump_job.prepare(dump_job.DumpRequest(output=first, topic="t", data_dir=data_dir,
                                                 end_offsets='{"t":{"0":10,"1":-1}}'))
    m1 = dump_job.run(spark, plan)
    produce(data_dir, "t", partitions=2, count=5)
    second = str(tmp_path / "two")
    monkeypatch.setattr(dump_job, "OBSERVE_LIMIT", 0)  # the manifest read back from the output instead
    plan = dump_job.prepare(dump_job.DumpRequest(output=second, topic="t", data_dir=data_dir,
                                                 resume=os.path.join(first, "_pk_manifest.json")))
    m2 = dump_job.run(spark, plan)
    assert [(p["start_offset"], p["end_offset"], p["records"]) for p in m1["partitions"]] == [(0, 10, 10), (0, 30, 30)]
    assert [(p["start_offset"], p["end_offset"], p["records"], p["first_offset"], p["last_offset"])
            for p in m2["partitions"]] == [(10, 35, 25, 10, 34), (30, 35, 5, 30, 34)]
    import pyarrow.parquet as pq

    offsets = sorted((r["partition"], r["offset"]) for d in (first, second)
                     for r in pq.read_table(d, columns=["partition", "offset"]).to_pylist())
    assert offsets == [(p, o) for p in range(2) for o in range(35)]


def test_dump_bad_input(data_dir, tmp_path):
    produce(data_dir, "t", partitions=1, count=3)
    base = {"output": str(tmp_path / "o"), "data_dir": data_dir}
    for extra, message in (
            ({"topic": "nope"}, "Topic 'nope' does not exist"),
            ({"topic": "t", "start_offsets": "{bad json"}, "Option startingOffsets: expected e.g."),
            ({"topic": "t", "end_offsets": '{"t":{"0":7}}'}, "the latest offset is 3"),
            ({"topic": "t", "start_offsets": "earliest", "start_timestamp": 1}, "not both"),
            ({"topic": "t", "format": "csv"}, "--format must be parquet or jsonl"),
            ({"topic": "t", "resume": str(tmp_path / "none.json")}, "does not exist")):
        with pytest.raises(PkLogError, match=re.escape(message)):
            dump_job.prepare(dump_job.DumpRequest(**{**base, **extra}))


def test_offsets_and_dump_from_a_broker(spark, broker, tmp_path):
    apis = broker_apis(broker.bootstrap)
    needed = {1: "Fetch", 2: "ListOffsets", 9: "OffsetFetch", 16: "ListGroups"}
    missing = [name for key, name in needed.items() if key not in apis]
    if missing:
        pytest.skip(f"pk-server-start does not serve {', '.join(missing)} yet")
    start_ms = int(time.time() * 1000) - 60_000
    produce(broker.data_dir, "orders", partitions=2, count=30, start_ms=start_ms)
    with Engine(broker.data_dir) as engine:
        OffsetStore(engine).commit("billing", {("orders", 1): 12})
    plan = offsets_job.prepare(offsets_job.OffsetsRequest(topic="orders", bootstrap_server=broker.bootstrap))
    rows = offsets_job.run(spark, plan)
    assert [(r["partition"], r["earliest_offset"], r["latest_offset"], r["records"], r["first_timestamp"],
             r["last_timestamp"], r["group"], r["lag"]) for r in rows] == \
        [(0, 0, 30, 30, start_ms, start_ms + 290, None, None), (1, 0, 30, 30, start_ms, start_ms + 290, "billing", 18)]
    out = str(tmp_path / "remote")
    plan = dump_job.prepare(dump_job.DumpRequest(output=out, topic="orders", bootstrap_server=broker.bootstrap,
                                                 start_offsets='{"orders":{"0":5,"1":-2}}'))
    manifest = dump_job.run(spark, plan)
    assert manifest["source"] == {"bootstrap_servers": broker.bootstrap}
    assert [(p["start_offset"], p["end_offset"], p["records"])
            for p in manifest["partitions"]] == [(5, 30, 25), (0, 30, 30)]


def test_errors_inside_spark_tasks_come_back_as_one_line(spark, data_dir, tmp_path):
    from pk.cli.spark import one_line

    produce(data_dir, "t", partitions=1, count=10, batch=5)
    plan = dump_job.prepare(dump_job.DumpRequest(output=str(tmp_path / "o"), topic="t", data_dir=data_dir))
    segment = os.path.join(data_dir, "t-0", "00000000000000000000.log")
    with open(segment, "r+b") as f:  # damage the first batch's records: only the read task notices
        f.seek(70)
        byte = f.read(1)
        f.seek(70)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(Exception) as info:
        dump_job.run(spark, plan)
    assert one_line(info.value).startswith("Corrupt batch at offset 0 of t-0 (00000000000000000000.log)")
    assert one_line(ValueError("Traceback (most recent call last):\n  File x\nModuleNotFoundError: No module "
                               "named 'pyarrow'\n\tat org.apache.spark.Foo: bar")) == \
        "ModuleNotFoundError: No module named 'pyarrow'"


def test_progress_lines_while_a_job_runs(spark, data_dir):
    produce(data_dir, "t", partitions=2, count=20)
    stream = io.StringIO()
    with ProgressReporter(spark, stream=stream, interval=0.02) as progress:
        spark.read.format("pklog").option("subscribe", "t").load(data_dir).groupBy("partition").count().collect()
    assert progress.seen, "no progress line while the job ran"
    assert all(re.fullmatch(r"\[pk-spark\] (job \d+: stages \d+/\d+ done, tasks \d+/\d+( \(\w+\))?(; )?)+", line)
               for line in progress.seen), progress.seen
    assert re.search(r"stages (\d+)/\1 done", stream.getvalue())


# --------------------------------------------------------------------------- the installed tool
def test_cli_offsets_in_process(pk, data_dir, tmp_path):
    produce(data_dir, "orders", partitions=2, count=30)
    out = str(tmp_path / "offsets.csv")
    proc = pk("pk-spark", "offsets", "--topic", "orders", "--output", out, "--master", "local[2]",
              "--conf", "spark.sql.shuffle.partitions=2", timeout=300)
    assert proc.returncode == 0, proc.err
    assert proc.out == ""
    assert re.search(r"\[pk-spark\] job \d+: stages \d+/\d+ done", proc.err)
    # stderr: progress lines, and at most the JVM's own note about its incubator module
    assert all(line.startswith("[pk-spark] ") or line.startswith("WARNING: Using incubator modules")
               for line in proc.err.splitlines()), proc.err
    rows = list(csv.DictReader(open(out)))
    latest = get_offsets(pk, "--topic", "orders")
    assert {(r["topic"], int(r["partition"])): int(r["latest_offset"]) for r in rows} == latest
    assert [int(r["records"]) for r in rows] == [30, 30]
    again = pk("pk-spark", "offsets", "--topic", "orders", "--output", out)
    assert again.returncode == 1
    assert again.err == f"Error: Output {out} already exists (use --overwrite to replace it)\n"


def test_cli_dump_through_spark_submit(pk, data_dir, tmp_path):
    expected = produce(data_dir, "orders", partitions=2, count=40)
    out = str(tmp_path / "dump.jsonl")
    proc = pk("pk-spark", "dump", "--topic", "orders", "--output", out, "--submit", "--master", "local[2]",
              "--name", "pk-dump-test", "--no-progress", timeout=300)
    assert proc.returncode == 0, proc.err
    assert proc.out.startswith(f"Dumped 80 records from 2 partition(s) of orders to {out} (jsonl)")
    lines = [json.loads(line) for f in glob.glob(os.path.join(out, "part-*.json")) for line in open(f)]
    assert sorted((r["partition"], r["offset"], r["value"]) for r in lines) == \
        sorted((p, o, rec[1].decode()) for (p, o), rec in expected.items())


def test_cli_print_command(pk, data_dir, tmp_path):
    produce(data_dir, "orders", partitions=1, count=1)
    proc = pk("pk-spark", "dump", "--topic", "orders", "--output", str(tmp_path / "o"), "--master=local[3]",
              "--conf", "spark.executor.cores=2", "--driver-memory", "2g", "--print-command")
    assert proc.returncode == 0, proc.err
    import shlex

    words = shlex.split(proc.out)
    submit = next(i for i, w in enumerate(words) if w.endswith("/bin/spark-submit"))
    env = dict(w.split("=", 1) for w in words[:submit])
    assert os.path.isfile(env["PYSPARK_PYTHON"]) and env["SPARK_LOCAL_IP"] == "127.0.0.1"
    args = words[submit + 1:]
    assert args[:2] == ["--master", "local[3]"]
    assert args[args.index("--driver-memory") + 1] == "2g"
    assert "spark.executor.cores=2" in args
    zip_path, launcher = args[args.index("--py-files") + 1: args.index("--py-files") + 3]
    assert "pk/spark_ops/datasource.py" in zipfile.ZipFile(zip_path).namelist()
    assert os.path.isfile(launcher)
    assert args[args.index("--py-files") + 3:] == ["dump", "--data-dir", os.path.abspath(data_dir), "--topic",
                                                   "orders", "--output", str(tmp_path / "o")]


@pytest.mark.parametrize("args, env, message", [
    (["offsets", "--topic", "nope"], {}, "Error: Topic 'nope' does not exist"),
    (["dump", "--topic", "t", "--output", "{out}", "--start-offsets", "{{x"], {},
     "Error: Option startingOffsets: expected e.g."),
    (["dump", "--topic", "t", "--output", "{existing}"], {}, "Error: Output {existing} already exists"),
    (["offsets", "--topic", "t"], {"PATH": "/nonexistent", "JAVA_HOME": ""},
     "Error: pk-spark needs Java to run Spark, and there is no java on PATH"),
    (["offsets", "--topic", "t", "--conf", "spark.x"], {}, "Error: --conf expects KEY=VALUE, got 'spark.x'"),
    (["offsets", "--topic", "t", "--deploy-mode", "cluster"], {}, "Error: Cluster deploy mode is not compatible"),
    (["dump", "--output", "{out}"], {}, "Error: give the topic to dump with --topic"),
    (["offsets", "--bogus"], {}, "Error: No such option '--bogus'"),
])
def test_cli_errors_are_one_line(pk, data_dir, tmp_path, args, env, message):
    produce(data_dir, "t", partitions=1, count=1)
    existing = tmp_path / "existing"
    existing.mkdir()
    fill = {"out": str(tmp_path / "out"), "existing": str(existing)}
    proc = pk("pk-spark", *[a.format(**fill) for a in args], env=env)
    assert proc.returncode == 1
    assert proc.err.startswith(message.format(**fill)), proc.err
    assert proc.err.count("\n") == 1, proc.err
