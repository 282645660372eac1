"""The command-line tools on a data dir the file system refuses: a full disk (a small tmpfs),
a read-only mount, a data dir that is a regular file. Each failure is one line on stderr and a
non-zero exit; what was stored before stays readable; a topic whose creation fails half-way is
rolled back; a console consumer without --group still reads a read-only data dir (its
generated group then lives in memory). EACCES cannot be tested here: the suite runs as root,
and root is not refused."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from conftest import tool_path


def _tmpfs(mount, size: str):
    """A tmpfs of `size` at `mount`; remount_read_only() makes it read-only, grow(size) gives it
    room again. Unmounted at teardown."""
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")

    class Mount:
        path = str(mount)

        @staticmethod
        def remount_read_only() -> None:
            subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)

        @staticmethod
        def grow(new_size: str) -> None:
            subprocess.run(["mount", "-o", f"remount,size={new_size}", str(mount)], check=True)

    yield Mount
    subprocess.run(["umount", "--lazy", str(mount)], check=True)  # lazy: a failed test may hold files open


@pytest.fixture
def tmpfs(tmp_path):
    """A 1 MiB tmpfs."""
    yield from _tmpfs(tmp_path / "small", "1m")


@pytest.fixture
def tmpfs_2m(tmp_path):
    """A 2 MiB tmpfs: issue 23's full disk."""
    yield from _tmpfs(tmp_path / "small", "2m")


def run(tool, *args, data_dir, stdin=b""):
    return subprocess.run([tool_path(tool), *args], input=stdin, capture_output=True, timeout=60,
                          env={**os.environ, "PK_DATA_DIR": data_dir})


def one_line(proc) -> str:
    err = proc.stderr.decode()
    assert proc.returncode != 0, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


def last_line(proc) -> str:
    """The console consumer's failure: its closing lines as Kafka's (the KIP-848 note,
    "Processed a total of N messages"), then one error line."""
    err = proc.stderr.decode()
    assert proc.returncode != 0 and "Traceback" not in err, err
    return err.splitlines()[-1]


def consume(data_dir, *args):
    return run("pk-console-consumer", "--topic", "t", "--from-beginning", "--timeout-ms", "1000", *args,
               data_dir=data_dir)


def _fill(directory: str) -> None:
    """Take every byte the file system still has (outside the data dir)."""
    with open(os.path.join(directory, "filler"), "wb", buffering=0) as f:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass


def test_a_full_disk(tmpfs):
    data = os.path.join(tmpfs.path, "d")
    assert run("pk-topics", "--create", "--topic", "t", data_dir=data).returncode == 0
    lines = [b"%07d" % i + b"x" * 93 for i in range(12_000)]  # 1.2 MB: more than there is room for
    err = one_line(run("pk-console-producer", "--topic", "t", data_dir=data, stdin=b"\n".join(lines) + b"\n"))
    assert err.startswith("Error when sending message to topic t with key: null, value: 100 bytes with error: "
                          "Disk error when trying to access log file on the disk: No space left on device (")
    _fill(tmpfs.path)  # the producer's last refused batch may have left a few pages free
    stored = consume(data).stdout.splitlines()
    # intact, and exactly what was sent up to the first refused batch (nothing after a gap)
    _assert_prefix(stored, lines)
    # a topic that does not fit is not created at all
    err = one_line(run("pk-topics", "--create", "--topic", "big", "--partitions", "50", data_dir=data))
    assert err.startswith("Error while executing topic command : Disk error when trying to access log file "
                          "on the disk: No space left on device (")
    assert not [e for e in os.listdir(data) if e.startswith(("big-", ".tmp"))]
    assert not [e for e in os.listdir(os.path.join(data, ".pk", "topics")) if not e.endswith(".json")]
    assert run("pk-topics", "--list", data_dir=data).stdout.split() == [b"__consumer_offsets", b"t"]
    assert consume(data).stdout.splitlines() == stored


def test_a_read_only_data_dir(tmpfs):
    data = os.path.join(tmpfs.path, "d")
    assert run("pk-topics", "--create", "--topic", "t", data_dir=data).returncode == 0
    assert run("pk-console-producer", "--topic", "t", data_dir=data, stdin=b"a\nb\nc\n").returncode == 0
    tmpfs.remount_read_only()
    # without --group: its generated group is kept in memory, the records are printed
    proc = consume(data)
    assert proc.stdout.splitlines() == [b"a", b"b", b"c"]
    assert b"Processed a total of 3 messages" in proc.stderr and b"Traceback" not in proc.stderr
    pattern = run("pk-console-consumer", "--include", "t.*", "--from-beginning", "--timeout-ms", "1000", data_dir=data)
    assert pattern.stdout.splitlines() == [b"a", b"b", b"c"]
    # a named group must be stored: that fails in one line
    assert last_line(consume(data, "--group", "g")) == f"Error: Read-only file system: {data}/.pk/groups"
    assert one_line(run("pk-console-producer", "--topic", "t", data_dir=data, stdin=b"d\n")) == (
        "Error when sending message to topic t with key: null, value: 1 bytes with error: "
        f"Disk error when trying to access log file on the disk: Read-only file system ({data}/t-0/.pk-lock)")
    assert one_line(run("pk-topics", "--create", "--topic", "u", data_dir=data)) == (
        f"Error while executing topic command : Read-only file system: {data}/.pk/admin.lock")
    assert run("pk-topics", "--list", data_dir=data).stdout.split() == [b"__consumer_offsets", b"t"]


def test_a_data_dir_that_is_a_file(tmp_path):
    data = tmp_path / "file"
    data.write_text("not a directory")
    line = f"Data directory {data} is not a directory"
    assert one_line(run("pk-topics", "--list", data_dir=str(data))) == f"Error while executing topic command : {line}"
    assert one_line(run("pk-console-producer", "--topic", "t", data_dir=str(data), stdin=b"x\n")) == line
    assert last_line(consume(str(data))) == line


# --------------------------------------------------------------------------- a failed append stops the log
# Issue 23: about 4 MB of 1 KB records into a 2 MB tmpfs. Once an append fails, later (smaller)
# batches must not be stored behind the gap: what is stored is exactly a prefix of what was sent.
LINES = [b"r%06d-" % i + b"x" * 1000 for i in range(4000)]


def _now() -> int:
    return int(time.time() * 1000)


def _stored(data: str) -> list[bytes]:
    return consume(data).stdout.splitlines()


def _assert_prefix(stored: list[bytes], sent: list[bytes]) -> None:
    assert 0 < len(stored) < len(sent), len(stored)
    assert stored == sent[:len(stored)], next(i for i, (a, b) in enumerate(zip(stored, sent)) if a != b)


@pytest.mark.parametrize("mode", ["file", "pipe", "sync"])
def test_the_console_producer_stores_a_prefix_on_a_full_disk(tmpfs_2m, tmp_path, mode):
    data = os.path.join(tmpfs_2m.path, "d")
    assert run("pk-topics", "--create", "--topic", "t", data_dir=data).returncode == 0
    text = b"\n".join(LINES) + b"\n"
    args = [tool_path("pk-console-producer"), "--topic", "t"] + (["--sync"] if mode == "sync" else [])
    env = {**os.environ, "PK_DATA_DIR": data}
    if mode == "pipe":
        proc = subprocess.run(args, input=text, capture_output=True, timeout=120, env=env)
    else:
        source = tmp_path / "in.txt"
        source.write_bytes(text)
        with open(source, "rb") as f:
            proc = subprocess.run(args, stdin=f, capture_output=True, timeout=120, env=env)
    # asynchronous sends name a record of the refused request, as Kafka's ErrorLoggingCallback
    callback = "" if mode == "sync" else "Error when sending message to topic t with key: null, value: 1008 bytes with error: "
    assert one_line(proc).startswith(callback + "Disk error when trying to access log file on the disk: "
                                     "No space left on device (")
    stored = _stored(data)
    _assert_prefix(stored, LINES)
    # Recovery: with room again, the next producer recovers the log and carries on after the prefix.
    tmpfs_2m.grow("16m")
    rest = b"\n".join(LINES[len(stored):]) + b"\n"
    assert run("pk-console-producer", "--topic", "t", data_dir=data, stdin=rest).returncode == 0
    assert not os.path.exists(os.path.join(data, "t-0", ".pk-storage-error"))
    assert _stored(data) == LINES


def test_the_batched_engine_producer_stops_at_the_first_failed_append(tmpfs_2m):
    """Batches keep being completed and drained after the first failure (an application that
    ignores the error); none of them may land. Another writer of the partition that saw the
    failure stops too; a writer that opens the partition later recovers it."""
    from pk.engine.engine import Engine
    from pk.engine.errors import KafkaStorageError
    from pk.engine.producer import EngineProducer

    data = os.path.join(tmpfs_2m.path, "d")
    other = Engine(data)
    other.create_topic("t", 1)
    other.partition("t", 0).append_records([(None, b"first", (), _now())])  # a writer before the failure
    bystander = Engine(data)  # another, which only closes after it
    bystander.partition("t", 0).append_records([(None, b"second", (), _now())])
    engine = Engine(data)
    producer = EngineProducer(engine, "t", batch_size=64 * 1024, linger_ms=60_000)
    outcomes = []  # per flush: None, or the error it raised
    for start in range(0, len(LINES), 100):
        producer.send_values(LINES[start:start + 100])
        try:
            producer.flush()
            outcomes.append(None)
        except KafkaStorageError as exc:
            outcomes.append(str(exc))
    first = next(i for i, o in enumerate(outcomes) if o is not None)
    assert outcomes[first].startswith("Disk error when trying to access log file on the disk: "
                                      "No space left on device (")
    assert None not in outcomes[first:]
    stored = _stored(data)
    _assert_prefix(stored, [b"first", b"second"] + LINES)
    bystander.close()  # its records all went in: closing is no error
    # the writer that saw nothing of the failure learns of it from the partition's mark
    with pytest.raises(KafkaStorageError, match="failed in another process"):
        other.partition("t", 0).append_records([(None, b"late", (), _now())])
    tmpfs_2m.grow("16m")
    with pytest.raises(KafkaStorageError):  # and both stay stopped, room or not
        other.partition("t", 0).append_records([(None, b"late", (), _now())])
    with pytest.raises(KafkaStorageError):
        producer.send_values([b"late"])
        producer.flush()
    for e in (engine, other):
        e.close()
    with Engine(data) as fresh:  # a new writer: recovery, and the mark is cleared
        fresh.partition("t", 0).append_records([(None, b"after", (), _now())])
    assert _stored(data) == stored + [b"after"]


def test_reset_offsets_on_a_full_disk_says_what_happened(tmpfs):
    data = os.path.join(tmpfs.path, "d")
    assert run("pk-topics", "--create", "--topic", "t", data_dir=data).returncode == 0
    assert run("pk-console-producer", "--topic", "t", data_dir=data, stdin=b"a\nb\nc\n").returncode == 0
    assert consume(data, "--group", "g").stdout.splitlines() == [b"a", b"b", b"c"]
    _fill(tmpfs.path)
    proc = run("pk-consumer-groups", "--group", "g", "--topic", "t", "--reset-offsets", "--to-earliest",
               "--execute", data_dir=data)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert proc.stdout.split() == [b"GROUP", b"TOPIC", b"PARTITION", b"NEW-OFFSET", b"g", b"t", b"0", b"0"]
    described = run("pk-consumer-groups", "--group", "g", "--describe", data_dir=data).stdout.splitlines()
    assert described[2].split()[:4] == [b"g", b"t", b"0", b"0"], described


def test_a_new_writer_cuts_what_a_failed_write_left(tmp_path):
    """A failed write whose torn bytes could not be cut at once (the ftruncate failed too)
    leaves them behind its mark: the next writer's recovery truncates them, clears the mark
    and appends after the last complete batch."""
    from pk.engine import records
    from pk.engine.engine import Engine

    data = str(tmp_path / "d")
    with Engine(data) as engine:
        engine.create_topic("t", 1)
        engine.partition("t", 0).append_records([(None, b"a", (), _now())])
    segment = os.path.join(data, "t-0", "00000000000000000000.log")
    kept = os.path.getsize(segment)
    torn = records.encode_batch([(None, b"lost" * 100, (), _now())])
    with open(segment, "ab") as f:
        f.write(torn[:len(torn) // 2])
    open(os.path.join(data, "t-0", ".pk-storage-error"), "wb").close()
    with Engine(data) as engine:
        engine.partition("t", 0).append_records([(None, b"b", (), _now())])
    assert not os.path.exists(os.path.join(data, "t-0", ".pk-storage-error"))
    assert _stored(data) == [b"a", b"b"]
    assert os.path.getsize(segment) == 2 * kept
