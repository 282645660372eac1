"""pk-console-consumer --format prints what kcat's -f prints (README: "Records as JSON, and
kcat's format strings"): the real kcat binary and pk's tool read the same partition, on
pk-server-start (and its data directory through the bundled engine) and on Kafka 4.4, and
their outputs must be the same bytes."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest

from conftest import Runner, tool_path
from test_json_records import RECORDS, Site, _topic

# kcat -e ends a partition at the first empty fetch there, which the broker holds for
# librdkafka's fetch.wait.max.ms (500 ms) first: half a second per call, to no purpose here.
KCAT_QUICK_END = ("-X", "fetch.wait.max.ms=10")

pytestmark = pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")

FORMATS = [
    "%t %p %o %k %s\n",
    "K=%K S=%S T=%T\n",
    "%h|%k|%s\n",
    "%R%s",
    "[%k]\t[%s]\\n",
    "%%o is %o\\t\\x41\\065\\0101\\q\\\\\\r\\n",
    "no tokens at all\n",
    "%s",
]


@pytest.fixture(scope="module")
def topics(pk_server, kafka):
    """A seeded two-partition topic on pk-server-start and on Kafka: {site name: (Site, topic)}."""
    out = {}
    for name, bootstrap in (("server", pk_server.bootstrap), ("kafka", kafka.bootstrap)):
        site = Site(name, bootstrap=bootstrap)
        t = _topic("fmt")
        site.create(t, 2)
        site.seed(t)
        out[name] = (site, t)
    return out


@functools.cache  # the engine's and the server's runs compare with the same kcat output
def kcat(bootstrap: str, topic: str, partition: int, fmt: str) -> bytes:
    proc = subprocess.run(["kcat", "-C", *KCAT_QUICK_END, "-b", bootstrap, "-t", topic, "-p", str(partition), "-o", "beginning",
                           "-e", "-f", fmt], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout, proc.stderr
    return proc.stdout


def pk_format(args: list[str], topic: str, partition: int, fmt: str, count: int) -> bytes:
    proc = subprocess.run([tool_path("pk-console-consumer"), *args, "--topic", topic, "--partition", str(partition),
                           "--offset", "earliest", "--max-messages", str(count), "--timeout-ms", "60000",
                           "--format", fmt], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("where", ["server", "engine", "kafka"])
def test_format_prints_what_kcat_prints(topics, pk_server, fmt, where):
    site, topic = topics["kafka" if where == "kafka" else "server"]
    # "engine": pk reads pk-server-start's data directory through the bundled engine.
    args = ["--data-dir", pk_server.data_dir] if where == "engine" else site.args
    for partition in (0, 1):
        count = sum(1 for r in RECORDS if r[0] == partition)
        want = kcat(site.bootstrap, topic, partition, fmt)
        assert want, "kcat printed nothing"
        assert pk_format(args, topic, partition, fmt, count) == want


@pytest.mark.parametrize("fmt,error", [
    ("%z", "--format: Unsupported formatter: %z"),
    ("value %", "--format: Empty formatter"),
])
def test_bad_format_is_one_line(tmp_path, fmt, error):
    proc = Runner(str(tmp_path / "data"))("pk-console-consumer", "--topic", "t", "--format", fmt)
    assert proc.returncode == 1
    assert proc.err.splitlines() == [error]


@pytest.mark.parametrize("args,error", [
    (["--formatter", "kafka.tools.DefaultMessageFormatter"],
     "--format and --formatter cannot be used together: --format replaces the formatter."),
    (["--key-deserializer", "org.apache.kafka.common.serialization.StringDeserializer"],
     "--format and --key-deserializer cannot be used together: --format replaces the formatter."),
])
def test_format_refuses_kafkas_formatter_options(tmp_path, args, error):
    proc = Runner(str(tmp_path / "data"))("pk-console-consumer", "--topic", "t", "--format", "%s", *args)
    assert proc.returncode == 1
    assert proc.err.splitlines() == [error]


def test_escapes_as_kcat_converts_them():
    """The corners of kcat's fmt_add, checked against the converted bytes directly (kcat's
    own output for them is compared above)."""
    from pk.commands.kcat_format import parse

    assert parse("\\x41\\x4a") == [b"A\x4a"]  # hex digits after a decimal digit: strtoul base 16
    assert parse("\\xff") == [b"ff"]  # no decimal digit after \x: the next character as is
    assert parse("\\0101\\65\\0x41") == [b"AAA"]  # octal, decimal, hex (strtoul base 0)
    assert parse("a\\0b%s") == [b"a", "s"]  # a NUL ends kcat's C string
    assert parse("\\\\%%\\") == [b"\\", b"%", b"\\"]
    assert parse("\\300\\0300") == [bytes([300 & 0xFF, 0o300])]  # base 0: 300 is decimal
    assert parse("\\999") == [bytes([999 & 0xFF])]
