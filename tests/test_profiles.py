"""pk-profile and --profile / PK_PROFILE / the current profile on every tool, with real parts:
the bundled engine, pk-server-start (PLAINTEXT, and SASL_SSL through secure_pk) and Kafka 4.4
(whose own kafka-topics also reads a profile file as its --command-config).

Every test points XDG_CONFIG_HOME at its own temporary directory: the real ~/.config is never
read or written."""

from __future__ import annotations

import os
import stat
import subprocess

import javaproperties
import pytest

import security_setup as S
from conftest import BrokerProcess, secure_pk_client, tool_path
from waits import wait_for

SECRET = "sup3r-s3cret-value"


class Shell:
    """Runs pk's tools as a user's shell would: XDG_CONFIG_HOME of its own, no PK_DATA_DIR."""

    def __init__(self, tmp_path):
        self.home = str(tmp_path / "config")
        self.env = {k: v for k, v in os.environ.items() if k not in ("PK_DATA_DIR", "PK_PROFILE")}
        self.env["XDG_CONFIG_HOME"] = self.home
        self.env["HOME"] = str(tmp_path / "home")  # ~/.config must not be the fallback either

    def __call__(self, tool: str, *args: str, input: str | None = None, env: dict | None = None,
                 timeout: float = 90) -> subprocess.CompletedProcess:
        return subprocess.run([tool_path(tool), *args], input=input, capture_output=True, text=True,
                              timeout=timeout, env={**self.env, **(env or {})})

    def ok(self, tool: str, *args: str, **kw) -> str:
        r = self(tool, *args, **kw)
        assert r.returncode == 0, (tool, args, r.stdout, r.stderr)
        return r.stdout

    def profile_path(self, name: str) -> str:
        return os.path.join(self.home, "pk", f"{name}.properties")


@pytest.fixture
def sh(tmp_path) -> Shell:
    return Shell(tmp_path)


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# --------------------------------------------------------------------------- pk-profile itself
def test_create_show_list_use_delete(sh, tmp_path):
    config = S.write_properties(str(tmp_path / "client.properties"), {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'org.apache.kafka.common.security.plain.PlainLoginModule required '
                            f'username="u" password="{SECRET}";',
        "bootstrap.servers": "ignored:1"})
    out = sh.ok("pk-profile", "create", "prod", "--bootstrap-server", "k1:9092,k2:9092", "--command-config", config,
                "-X", f"ssl.key.password={SECRET}", "--property", "client.id=me", "-X", "client.rack= r\\é:1=€")
    path = sh.profile_path("prod")
    assert out == f"Created profile prod ({path}).\n"
    assert _mode(path) == 0o600 and _mode(os.path.dirname(path)) == 0o700
    with open(path, "rb") as f:
        props = dict(javaproperties.load(f))  # Kafka's own format
    assert props == {"bootstrap.servers": "k1:9092,k2:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                     "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                         f'username="u" password="{SECRET}";',
                     "ssl.key.password": SECRET, "client.id": "me", "client.rack": " r\\é:1=€"}

    shown = sh.ok("pk-profile", "show", "prod")
    assert SECRET not in shown
    assert shown.splitlines() == [f"# profile prod: {path}", "bootstrap.servers=k1:9092,k2:9092",
                                  "security.protocol=SASL_SSL", "sasl.mechanism=PLAIN", "sasl.jaas.config=********",
                                  "ssl.key.password=********", "client.id=me", "client.rack= r\\é:1=€"]

    sh.ok("pk-profile", "create", "local", "--data-dir", str(tmp_path / "data"))
    assert sh.ok("pk-profile", "list") == (f"  local\tpk.data.dir={tmp_path / 'data'}\n"
                                          "  prod\tbootstrap.servers=k1:9092,k2:9092\n")
    assert sh.ok("pk-profile", "use", "prod") == "Using profile prod.\n"
    assert sh.ok("pk-profile", "list").splitlines()[1] == "* prod\tbootstrap.servers=k1:9092,k2:9092"
    assert sh.ok("pk-profile", "show").splitlines()[0] == f"# profile prod (current): {path}"
    # a second create of the same name is refused; the file is kept
    r = sh("pk-profile", "create", "prod", "--data-dir", str(tmp_path))
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "Profile 'prod' already exists (pk-profile edit prod "
                                                         "changes it)\n")
    assert sh.ok("pk-profile", "delete", "prod") == "Deleted profile prod.\n"
    assert not os.path.exists(path)
    assert sh.ok("pk-profile", "list") == f"  local\tpk.data.dir={tmp_path / 'data'}\n"  # no current any more
    r = sh("pk-profile", "show", "prod")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "Profile 'prod' does not exist (pk-profile list shows them)\n")


@pytest.mark.parametrize("name", ["../escape", "a/b", ".hidden", "", "x" * 65, "sp ace"])
def test_names_never_leave_the_directory(sh, tmp_path, name):
    r = sh("pk-profile", "create", name, "--data-dir", str(tmp_path / "d"))
    assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"Invalid profile name '{name}'")
    assert not os.path.exists(tmp_path / "config" / "escape.properties")
    assert not os.path.exists(os.path.join(sh.home, "pk")) or os.listdir(os.path.join(sh.home, "pk")) == []


def test_create_needs_exactly_one_place(sh, tmp_path):
    for args in ([], ["--bootstrap-server", "h:1", "--data-dir", str(tmp_path)]):
        r = sh("pk-profile", "create", "p", *args)
        assert (r.returncode, r.stderr) == (1, "pk-profile create needs exactly one of --bootstrap-server and "
                                               "--data-dir\n")
    r = sh("pk-profile", "create", "p", "--data-dir", str(tmp_path), "-X", "a=b")
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    r = sh("pk-profile", "nosuch")
    assert r.returncode == 1 and r.stderr.count("\n") == 1


def test_edit_validates_before_saving(sh, tmp_path):
    sh.ok("pk-profile", "create", "p", "--bootstrap-server", "h:1")
    path = sh.profile_path("p")
    os.chmod(path, 0o400)  # narrower than pk writes: an edit must not widen it
    good = tmp_path / "good-editor"
    good.write_text("#!/bin/sh\nprintf 'client.id=edited\\n' >> \"$1\"\n")
    bad = tmp_path / "bad-editor"
    bad.write_text("#!/bin/sh\nprintf 'pk.data.dir=/tmp\\n' >> \"$1\"\n")
    for script in (good, bad):
        script.chmod(0o755)
    assert sh.ok("pk-profile", "edit", "p", env={"VISUAL": "", "EDITOR": str(good)}) == "Saved profile p.\n"
    with open(path, "rb") as f:
        assert dict(javaproperties.load(f)) == {"bootstrap.servers": "h:1", "client.id": "edited"}
    assert _mode(path) == 0o400
    r = sh("pk-profile", "edit", "p", env={"VISUAL": str(bad)})
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("A profile has either bootstrap.servers or pk.data.dir, not both; profile p unchanged\n")
    with open(path, "rb") as f:
        assert dict(javaproperties.load(f)) == {"bootstrap.servers": "h:1", "client.id": "edited"}
    assert os.listdir(os.path.dirname(path)) == ["p.properties"]  # no draft left behind


def test_profile_completion(sh):
    sh.ok("pk-profile", "create", "alpha", "--bootstrap-server", "h:1")
    sh.ok("pk-profile", "create", "beta", "--bootstrap-server", "h:1")

    def complete(tool, line):
        words = line.split(" ")
        var = "_" + tool.replace("-", "_").upper() + "_COMPLETE"
        out = sh.ok(tool, env={"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1), var: "bash_complete"})
        return [item.split(",", 1)[1] for item in out.split()]

    assert complete("pk-topics", "pk-topics --profile ") == ["alpha", "beta"]
    assert complete("pk-console-consumer", "pk-console-consumer --profile b") == ["beta"]
    assert complete("pk-profile", "pk-profile ") == ["create", "delete", "edit", "list", "show", "use"]
    assert complete("pk-profile", "pk-profile use a") == ["alpha"]
    # the tools that parse their own arguments, and the argparse4j ones
    assert complete("pk-features", "pk-features --profile ") == ["alpha", "beta"]
    assert complete("pk-cluster", "pk-cluster cluster-id --pro") == ["--profile"]
    assert complete("pk-producer-perf-test", "pk-producer-perf-test --profile a") == ["alpha"]
    assert complete("pk-spark", "pk-spark offsets --profile b") == ["beta"]


def test_topic_completion_follows_a_data_dir_profile(sh, tmp_path):
    sh.ok("pk-profile", "create", "local", "--data-dir", str(tmp_path / "data"))
    sh.ok("pk-topics", "--profile", "local", "--create", "--topic", "orders")
    os.chmod(sh.profile_path("local"), 0o644)  # completion still prints no warning

    def complete(line, env=None):
        words = line.split(" ")
        r = sh("pk-topics", env={"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1),
                                 "_PK_TOPICS_COMPLETE": "bash_complete", **(env or {})})
        assert (r.returncode, r.stderr) == (0, "")
        return [item.split(",", 1)[1] for item in r.stdout.split()]

    assert complete("pk-topics --profile local --describe --topic or") == ["orders"]
    assert complete("pk-topics --describe --topic or", {"PK_PROFILE": "local"}) == ["orders"]
    assert complete("pk-topics --describe --topic or") == []  # no profile: the default data dir


# --------------------------------------------------------------------------- tools on the bundled engine
def test_data_dir_profile_on_every_kind_of_tool(sh, tmp_path):
    data = str(tmp_path / "data")
    sh.ok("pk-profile", "create", "local", "--data-dir", data)
    sh.ok("pk-profile", "use", "local")
    assert sh.ok("pk-topics", "--create", "--topic", "t", "--partitions", "2") == "Created topic t.\n"
    assert os.path.isdir(os.path.join(data, "t-0"))
    sh.ok("pk-console-producer", "--topic", "t", "--property", "parse.key=true", input="k\ta\nk\tb\n")
    out = sh.ok("pk-console-consumer", "--topic", "t", "--from-beginning", "--max-messages", "2", "--group", "g")
    assert out == "a\nb\n"
    assert sh.ok("pk-consumer-groups", "--list") == "g\n"
    assert sh.ok("pk-configs", "--describe", "--entity-type", "topics", "--entity-name", "t").startswith(
        "Dynamic configs for topic t are:")
    out = sh.ok("pk-producer-perf-test", "--topic", "t", "--num-records", "10", "--record-size", "10",
                "--throughput", "-1", "--producer-props", "acks=1")
    assert "10 records sent" in out
    assert "Feature: metadata.version" in sh.ok("pk-features", "describe")  # argparse4j-style, own parser
    assert sh.ok("pk-cluster", "cluster-id").startswith("Cluster ID: ")
    assert "t\n" in sh.ok("pk-run-class", "kafka.admin.TopicCommand", "--list")
    # pk-spark's jobs (the command spark-submit would run names the profile's data directory)
    assert sh.ok("pk-spark", "offsets", "--topic", "t", "--submit", "--print-command").rstrip().endswith(
        f"offsets --data-dir {data} --topic t")
    # explicit --data-dir wins; so does PK_DATA_DIR over the *current* profile (a shell or a
    # test that sets it keeps it), but not over --profile or PK_PROFILE
    other = str(tmp_path / "other")
    assert "t\n" not in sh.ok("pk-topics", "--data-dir", other, "--list")
    assert "t\n" not in sh.ok("pk-topics", "--list", env={"PK_DATA_DIR": other})
    assert "t\n" in sh.ok("pk-topics", "--list", env={"PK_DATA_DIR": other, "PK_PROFILE": "local"})
    assert "t\n" in sh.ok("pk-topics", "--profile", "local", "--list", env={"PK_DATA_DIR": other})
    assert "t\n" in sh.ok("pk-topics", "-profile=local", "--list", env={"PK_DATA_DIR": other})


def test_unknown_profile_and_open_permissions(sh, tmp_path):
    for args, env in ((["--profile", "nope"], {}), ([], {"PK_PROFILE": "nope"})):
        r = sh("pk-topics", *args, "--list", env=env)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", "Profile 'nope' does not exist (pk-profile list "
                                                             "shows them)\n")
    r = sh("pk-features", "--profile", "nope", "describe")
    assert (r.returncode, r.stderr) == (1, "Profile 'nope' does not exist (pk-profile list shows them)\n")
    r = sh("pk-topics", "--list", "--profile")
    assert (r.returncode, r.stderr) == (1, "Option profile requires an argument\n")
    sh.ok("pk-profile", "create", "local", "--data-dir", str(tmp_path / "data"))
    path = sh.profile_path("local")
    os.chmod(path, 0o644)
    r = sh("pk-topics", "--profile", "local", "--list")
    assert r.returncode == 0
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"WARNING: profile file {path} is accessible by others")
    os.chmod(path, 0o600)
    assert sh("pk-topics", "--profile", "local", "--list").stderr == ""


# --------------------------------------------------------------------------- pk-server-start
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("profiles-server") / "data")).start()
    try:
        yield b
    finally:
        b.stop()


def test_cluster_profile_on_pk_server_start(sh, server, tmp_path):
    sh.ok("pk-profile", "create", "srv", "--bootstrap-server", server.bootstrap, "-X", "group.id=from-profile")
    env = {"PK_PROFILE": "srv"}
    assert sh.ok("pk-topics", "--create", "--topic", "st", "--partitions", "2", env=env) == "Created topic st.\n"
    assert "st\n" in sh.ok("pk-topics", "--list", env=env)
    sh.ok("pk-console-producer", "--topic", "st", env=env, input="one\ntwo\n")
    out = sh.ok("pk-console-consumer", "--topic", "st", "--from-beginning", "--max-messages", "2", env=env)
    assert sorted(out.split()) == ["one", "two"]
    # the profile's group.id reached the consumer; a config file on the command line goes over it
    mine = S.write_properties(str(tmp_path / "mine.properties"), {"group.id": "from-file"})
    sh.ok("pk-console-consumer", "--topic", "st", "--from-beginning", "--max-messages", "2",
          "--command-config", mine, env=env)
    def both_listed() -> bool:
        return {"from-profile", "from-file"} <= set(sh.ok("pk-consumer-groups", "--list", env=env).split())

    wait_for(both_listed, what="both groups listed")
    assert "from-profile" in sh.ok("pk-consumer-groups", "--describe", "--group", "from-profile", env=env)
    assert sh.ok("pk-configs", "--describe", "--entity-type", "topics", "--entity-name", "st", env=env).startswith(
        "Dynamic configs for topic st are:")
    out = sh.ok("pk-producer-perf-test", "--topic", "st", "--num-records", "5", "--record-size", "8",
                "--throughput", "-1", env=env)
    assert "5 records sent" in out
    # bootstrap.servers among a tool's properties names the cluster too: a data-dir profile stays out
    sh.ok("pk-profile", "create", "eng", "--data-dir", str(tmp_path / "eng"))
    out = sh.ok("pk-producer-perf-test", "--topic", "st", "--num-records", "5", "--record-size", "8",
                "--throughput", "-1", "--producer-props", f"bootstrap.servers={server.bootstrap}",
                env={"PK_PROFILE": "eng"})
    assert "5 records sent" in out and not os.path.exists(tmp_path / "eng")
    assert sh.ok("pk-transactions", "list", env=env) == "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n"
    assert "Feature: metadata.version" in sh.ok("pk-features", "describe", env=env)
    # explicit flags win: --data-dir on the command line is the bundled engine, not the server
    assert "st\n" not in sh.ok("pk-topics", "--data-dir", str(tmp_path / "empty"), "--list", env=env)
    r = sh("pk-topics", "--bootstrap-server", "127.0.0.1:1", "--list", "--profile", "nope")
    assert (r.returncode, r.stderr) == (1, "Profile 'nope' does not exist (pk-profile list shows them)\n")


def test_sasl_ssl_profile_on_secure_pk(sh, secure_pk, tls_certs, tmp_path):
    listener, config = secure_pk_client(tls_certs, "scram")
    props = S.write_properties(str(tmp_path / "scram.properties"), config)
    sh.ok("pk-profile", "create", "secure", "--bootstrap-server", f"127.0.0.1:{secure_pk.ports[listener]}",
          "--command-config", props)
    shown = sh.ok("pk-profile", "show", "secure")
    assert "carol-secret" not in shown and "sasl.jaas.config=********" in shown
    sh.ok("pk-profile", "use", "secure")
    assert sh.ok("pk-topics", "--create", "--topic", "sec") == "Created topic sec.\n"
    sh.ok("pk-console-producer", "--topic", "sec", input="hidden\n")
    assert sh.ok("pk-console-consumer", "--topic", "sec", "--from-beginning", "--max-messages", "1") == "hidden\n"
    # a command-line config file without credentials: the profile's still authenticate under it
    extra = S.write_properties(str(tmp_path / "extra.properties"), {"client.id": "extra"})
    assert "sec\n" in sh.ok("pk-topics", "--list", "--command-config", extra)
    # its own credentials win over the profile's: a wrong password fails
    wrong = S.write_properties(str(tmp_path / "wrong.properties"),
                               {"sasl.jaas.config": S.jaas_scram("carol", "wrong")})
    r = sh("pk-features", "--command-config", wrong, "describe")
    assert r.returncode == 1 and "Authentication failed" in r.stderr


# --------------------------------------------------------------------------- Kafka 4.4
def test_profile_on_kafka_and_as_kafkas_command_config(sh, kafka, kafka_tools, tmp_path):
    sh.ok("pk-profile", "create", "k44", "--bootstrap-server", kafka.bootstrap, "-X", "client.id=pk-profile-test",
          "-X", "request.timeout.ms=30000")
    env = {"PK_PROFILE": "k44"}
    topic = f"profiled-{os.getpid()}"
    assert sh.ok("pk-topics", "--create", "--topic", topic, env=env) == f"Created topic {topic}.\n"
    sh.ok("pk-console-producer", "--topic", topic, env=env, input="x\n")
    assert sh.ok("pk-console-consumer", "--topic", topic, "--from-beginning", "--max-messages", "1",
                 env=env) == "x\n"
    assert "Feature: metadata.version" in sh.ok("pk-features", "describe", env=env)
    # the profile file is Kafka's own properties: Kafka's kafka-topics takes it as --command-config
    r = kafka_tools("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--command-config",
                    sh.profile_path("k44"), "--list")
    assert r.returncode == 0, r.err
    assert topic in r.out.split()
