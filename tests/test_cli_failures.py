"""The command-line tools on a data dir the file system refuses: a full disk (a small tmpfs),
a read-only mount, a data dir that is a regular file. Each failure is one line on stderr and a
non-zero exit; what was stored before stays readable; a topic whose creation fails half-way is
rolled back; a console consumer without --group still reads a read-only data dir (its
generated group then lives in memory). EACCES cannot be tested here: the suite runs as root,
and root is not refused."""

from __future__ import annotations

import os
import subprocess

import pytest

from conftest import tool_path


@pytest.fixture
def tmpfs(tmp_path):
    """A 1 MiB tmpfs; remount(ro=True) makes it read-only. Unmounted at teardown."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")

    class Mount:
        path = str(mount)

        @staticmethod
        def remount_read_only() -> None:
            subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)

    yield Mount
    subprocess.run(["umount", str(mount)], check=True)


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
    assert err.startswith("Disk error when trying to access log file on the disk: No space left on device (")
    _fill(tmpfs.path)  # the producer's last refused batch may have left a few pages free
    stored = consume(data).stdout.splitlines()
    # intact and in order (batches refused are missing, as a producer's failed sends are)
    assert 0 < len(stored) < len(lines) and set(stored) <= set(lines) and stored == sorted(stored)
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
