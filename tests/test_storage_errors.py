"""A write the file system refuses (here: a file size limit, as a full disk would) ends a tool
with one line and a non-zero exit, never a traceback, and what was stored before stays
readable and intact."""

from __future__ import annotations

import os
import resource
import signal
import subprocess

from conftest import tool_path

LIMIT = 1 << 20  # bytes any file of the run may reach


def limited(cmd, data_dir, stdin=None):
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(cmd, input=stdin, capture_output=True, preexec_fn=limit_file_size,
                          env={**os.environ, "PK_DATA_DIR": data_dir})


def run(cmd, data_dir, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, env={**os.environ, "PK_DATA_DIR": data_dir})


def test_producer_stops_with_one_line_and_keeps_what_it_stored(tmp_path):
    data = str(tmp_path / "data")
    assert run([tool_path("pk-topics"), "--create", "--topic", "t"], data).returncode == 0
    lines = [b"%07d" % i + b"x" * 93 for i in range(30000)]  # 3 MB: more than the limit
    proc = limited([tool_path("pk-console-producer"), "--topic", "t"], data, b"\n".join(lines) + b"\n")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("Error when sending message to topic t with key: null, value: 100 bytes with error: "
                          "Disk error when trying to access log file on the disk: File too large (")
    assert err.rstrip().endswith("t-0/00000000000000000000.log)")
    # what was stored is readable, intact, and exactly what was sent up to the refused batch:
    # the partition's log takes nothing after a failed write (none of the batches buffered
    # after it, stored at close before)
    out = run([tool_path("pk-console-consumer"), "--topic", "t", "--from-beginning", "--timeout-ms", "1000"], data)
    stored = out.stdout.splitlines()
    assert 1000 < len(stored) < len(lines) and stored == lines[:len(stored)]
    assert os.path.getsize(os.path.join(data, "t-0", "00000000000000000000.log")) <= LIMIT
    # and the log takes appends again once there is room
    assert run([tool_path("pk-console-producer"), "--topic", "t"], data, b"after\n").returncode == 0
    out = run([tool_path("pk-console-consumer"), "--topic", "t", "--from-beginning", "--timeout-ms", "1000"], data)
    assert out.stdout.splitlines() == stored + [b"after"]
