"""pk-topics run as an installed tool, output compared byte for byte with Kafka 4.4's texts (as
test_oracle_topics.py sees Kafka's own tool print them), on both backends (conftest.py): the
bundled engine on a temporary data directory, and pk-server-start (or PK_TEST_BOOTSTRAP, a
single-broker cluster) through --bootstrap-server and confluent-kafka's AdminClient.

Where Kafka 4.4's --bootstrap-server mode differs from pk's bundled engine the expectation
comes from the backend: `Configs:` lists the cluster's static broker settings too (a topic's
DescribeConfigs entries not at their default; a fresh 4.4 cluster, like the engine, has
min.insync.replicas=1 as a cluster-wide default), `TopicId:` appears and the Elr columns are
lists where the cluster has topic ids (pk-server-start's Metadata v4 has none: `Elr: N/A`),
and `--alter --config` is refused."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from conftest import Runner, free_port

WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
           "could collide. To avoid issues it is best to use either, but not both.\n")
ERR = "Error while executing topic command : "
DELETE_CONFIG_WARNING = ("delete-config option is no longer supported and deprecated since version 4.0. The config "
                         "will be fully removed in future releases.")
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir  # pk's engine-side tools see what the server half stored


@pytest.fixture
def plain(tmp_path):
    """pk's tools for tests that involve no backend (argument checks, unreachable clusters)."""
    return Runner(str(tmp_path / "data"))


# --------------------------------------------------------------------------- helpers
def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert proc.err == ""
    return proc.out


def fails(proc, message):
    """One line on stderr, exit 1, never a traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n"
    assert "Traceback" not in proc.out
    return proc


def topic_id(pk, backend, name):
    """The TopicId: of the topic line, None where the cluster has no topic ids."""
    line = ok(pk("pk-topics", *backend, "--describe", "--topic", name)).splitlines()[0]
    m = re.search(r"\tTopicId: (\S+)", line)
    return m.group(1) if m else None


def tid_field(tid):
    return f"\tTopicId: {tid}" if tid else ""


_CLUSTER: dict[str, tuple[int, dict[str, str], list[str], bool]] = {}


def _cluster(backend) -> tuple[int, dict[str, str], list[str], bool]:
    """(broker id, the configs a new topic reports as not default, the names of all its config
    entries in the response's order, whether the cluster has topic ids) of the backend: on a
    cluster, DescribeCluster, the DescribeConfigs and Metadata of a probe topic, asked once.
    The engine is a fresh Kafka 4.4 cluster: min.insync.replicas is a cluster-wide default."""
    from pk.engine import topic_config

    if not backend.remote:
        return 0, topic_config.cluster_defaults(), list(topic_config.DESCRIBE_ORDER), True
    if backend.bootstrap not in _CLUSTER:
        from confluent_kafka import TopicCollection
        from confluent_kafka.admin import ConfigResource, ConfigSource, NewTopic, ResourceType

        admin = backend.admin()
        broker = min(n.id for n in admin.describe_cluster().result(30).nodes)
        probe = backend.topic("probe")
        for f in admin.create_topics([NewTopic(probe, 1, -1)]).values():
            f.result(30)
        res = ConfigResource(ResourceType.TOPIC, probe)
        entries = admin.describe_configs([res])[res].result(30)
        static = {k: e.value for k, e in entries.items() if e.source != ConfigSource.DEFAULT_CONFIG.value}
        description = admin.describe_topics(TopicCollection([probe]))[probe].result(30)
        ids = description.topic_id is not None and str(description.topic_id) != "AAAAAAAAAAAAAAAAAAAAAA"
        for f in admin.delete_topics([probe]).values():
            f.result(30)
        _CLUSTER[backend.bootstrap] = (broker, static, list(entries), ids)
    return _CLUSTER[backend.bootstrap]


def broker_id(backend) -> int:
    return _cluster(backend)[0]


def configs(backend, overrides: dict[str, str] | None = None) -> str:
    """The `Configs:` value expected for a topic with these overrides on this backend, in
    Kafka's order (a default-sized java.util.HashMap of all the topic's entries): the cluster's
    static and cluster-wide settings, then the overrides."""
    from pk.engine.topic_config import java_hashmap_order

    _, static, names, _ = _cluster(backend)
    merged = {**static, **(overrides or {})}
    order = java_hashmap_order(names + sorted(set(merged) - set(names)), default_capacity=True)
    return ",".join(f"{k}={merged[k]}" for k in order if k in merged)


def elr(backend) -> str:
    return "\tElr: \tLastKnownElr: " if _cluster(backend)[3] else "\tElr: N/A\tLastKnownElr: N/A"


def partition_line(topic, p, b, backend=None):
    return f"\tTopic: {topic}\tPartition: {p}\tLeader: {b}\tReplicas: {b}\tIsr: {b}" + (
        elr(backend) if backend is not None else "\tElr: \tLastKnownElr: ")


def listed(pk, backend, *names, extra=()):
    """`--list` restricted to `names` (a cluster may hold other tests' topics)."""
    return ok(pk("pk-topics", *backend, "--list", *extra, "--topic", "|".join(map(re.escape, names))))


# --------------------------------------------------------------------------- both backends
def test_seed_transcript(pk, backend):
    first, second = backend.topic("first_topic"), backend.topic("second_topic")
    b = broker_id(backend)
    # The seeds use a single dash (-topic): jopt-simple accepts that, so pk does too.
    out = ok(pk("pk-topics", *backend, "-topic", first, "--create", "--partitions", "3", "--replication-factor", "1"))
    assert out == WARNING + f"Created topic {first}.\n"
    assert listed(pk, backend, "__consumer_offsets", first, second) == f"__consumer_offsets\n{first}\n"
    tid = topic_id(pk, backend, first)
    if not backend.remote:  # the bundled engine has topic ids; pk-server-start's Metadata v4 does not
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", tid) and not tid.startswith("-")
    assert ok(pk("pk-topics", *backend, "--topic", first, "--describe")) == (
        f"Topic: {first}{tid_field(tid)}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: {configs(backend)}\n"
        + "".join(partition_line(first, p, b, backend) + "\n" for p in range(3)))
    assert ok(pk("pk-topics", *backend, "--create", "--topic", second)) == WARNING + f"Created topic {second}.\n"
    assert ok(pk("pk-topics", *backend, "--topic", second, "--delete")) == ""  # 3.7: delete prints nothing
    assert listed(pk, backend, "__consumer_offsets", first, second) == f"__consumer_offsets\n{first}\n"


def test_list_and_exclude_internal(pk, backend):
    a, b = backend.topic("a"), backend.topic("b")
    # Kafka joins the names with "\n" and println()s them: no topics is one empty line.
    assert listed(pk, backend, a, b) == "\n"
    assert listed(pk, backend, "__consumer_offsets", a, extra=["--exclude-internal"]) == "\n"
    ok(pk("pk-topics", *backend, "--create", "--topic", b))
    ok(pk("pk-topics", *backend, "--create", "--topic", a))
    assert listed(pk, backend, "__consumer_offsets", a, b, extra=["--exclude-internal"]) == f"{a}\n{b}\n"
    assert ok(pk("pk-topics", *backend, "--list", "--topic", f"{a},{b}")) == f"{a}\n{b}\n"
    assert ok(pk("pk-topics", *backend, "--list", "--topic", "__.*")).splitlines()[0] == "__consumer_offsets"
    assert ok(pk("pk-topics", *backend, "--list", "--topic", "__consumer.*", "--exclude-internal")) == "\n"
    out = ok(pk("pk-topics", *backend, "--list")).splitlines()
    assert out == sorted(out) and {"__consumer_offsets", a, b} <= set(out)


@pytest.mark.engine_only("a fresh data directory: nothing but the offsets topic")
def test_list_of_a_new_data_directory(pk, backend):
    assert ok(pk("pk-topics", "--list")) == "__consumer_offsets\n"
    assert ok(pk("pk-topics", "--list", "--exclude-internal")) == "\n"


def test_internal_offsets_topic(pk, backend):
    out = ok(pk("pk-topics", *backend, "--describe", "--topic", "__consumer_offsets")).splitlines()
    tid = r"\tTopicId: \S{22}" if not backend.remote else r"(\tTopicId: \S{22})?"
    assert re.fullmatch(rf"Topic: __consumer_offsets{tid}\tPartitionCount: 50\tReplicationFactor: 1\t"
                        rf"Configs: {re.escape(configs(backend, OFFSETS_TOPIC_CONFIGS))}", out[0])
    assert len(out) == 51
    assert out[50] == partition_line("__consumer_offsets", 49, broker_id(backend), backend)
    fails(pk("pk-topics", *backend, "--delete", "--topic", "__consumer_offsets"),
          ERR + "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion.")


def test_describe_selection(pk, backend):
    names = [backend.topic(n) for n in ("orders", "payments", "users")]
    orders, payments, users = names
    for name in names:
        ok(pk("pk-topics", *backend, "--create", "--topic", name))
    out = ok(pk("pk-topics", *backend, "--describe", "--exclude-internal", "--topic", "|".join(names)))
    # In the iteration order of a java.util.HashMap sized for the names, filled in name order.
    from pk.engine.topic_config import java_hashmap_order

    assert [l.split("\t")[0] for l in out.splitlines() if l.startswith("Topic:")] == [
        f"Topic: {n}" for n in java_hashmap_order(names)]
    out = ok(pk("pk-topics", *backend, "--describe", "--topic", f"'{orders},{users}'"))
    assert [l.split("\t")[0] for l in out.splitlines() if l.startswith("Topic:")] == [
        f"Topic: {n}" for n in java_hashmap_order([orders, users])]
    tid = topic_id(pk, backend, payments)
    if tid is not None:  # describing by id needs a cluster with topic ids
        assert ok(pk("pk-topics", *backend, "--describe", "--topic-id", tid)).startswith(f"Topic: {payments}\t")
    fails(pk("pk-topics", *backend, "--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ"),
          ERR + "TopicId 'AAAAAAAAAAAAAAAAAAAAAQ' does not exist as expected")


def test_not_found_and_if_exists(pk, backend):
    nope = backend.topic("nope")
    for action in ("--describe", "--delete"):
        fails(pk("pk-topics", *backend, action, "--topic", nope), ERR + f"Topic '{nope}' does not exist as expected")
        assert ok(pk("pk-topics", *backend, action, "--topic", nope, "--if-exists")) == ""
    fails(pk("pk-topics", *backend, "--alter", "--topic", nope, "--partitions", "2"),
          ERR + f"Topic '{nope}' does not exist as expected")
    assert ok(pk("pk-topics", *backend, "--alter", "--topic", nope, "--partitions", "2", "--if-exists")) == ""
    # An invalid regex is Kafka's error too.
    fails(pk("pk-topics", *backend, "--describe", "--topic", "a("), ERR + "a( is an invalid regex.")


def test_create_errors_leave_topics_intact(pk, backend):
    keep, x = backend.topic("keep"), backend.topic("x")
    ok(pk("pk-topics", *backend, "--create", "--topic", keep, "--partitions", "2", "--config", "retention.ms=1000"))
    before = ok(pk("pk-topics", *backend, "--describe", "--topic", keep))
    cases = [
        (["--topic", keep], ERR + f"Topic '{keep}' already exists."),
        (["--topic", x, "--replication-factor", "3"],
         ERR + "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be "
               "reached because only 1 broker(s) are registered or some brokers have all their log directories "
               "cordoned."),
        (["--topic", x, "--replication-factor", "0"],
         ERR + "The replication factor must be between 1 and 32767 inclusive"),
        (["--topic", x, "--partitions", "0"], ERR + "The partitions must be greater than 0"),
        (["--topic", x, "--partitions", "three"], ERR + "Cannot parse argument 'three' of option partitions"),
        (["--topic", x, "--partitions", "-3"], ERR + "The partitions must be greater than 0"),
        (["--topic", x, "--config", "nope=1"], ERR + "Unknown topic config name: nope"),
        (["--topic", x, "--config", "retention.ms=soon"],
         ERR + "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        (["--topic", x, "--config", "retention.ms"],
         ERR + 'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'),
        (["--topic", x, "--replica-assignment", "1"],
         ERR + "The manual partition assignment includes broker 1, but no such broker is registered."),
        (["--topic", x, "--replica-assignment", "0:0"],
         ERR + "Partition replica lists may not contain duplicate entries: 0"),
        (["--topic", x, "--replica-assignment", "0,y"], ERR + 'For input string: "y"'),
        (["--topic", ""], ERR + "Topic name is invalid: the empty string is not allowed"),
        (["--topic", "."], ERR + "Topic name is invalid: '.' is not allowed"),
        (["--topic", ".."], ERR + "Topic name is invalid: '..' is not allowed"),
        (["--topic", "a b"],
         ERR + "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, "
               "'.', '_' and '-'"),
        (["--topic", "x" * 250],
         ERR + f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max allowed length 249"),
    ]
    for args, message in cases:
        fails(pk("pk-topics", *backend, "--create", *args), message)
    assert ok(pk("pk-topics", *backend, "--describe", "--topic", keep)) == before
    assert listed(pk, backend, keep, x) == f"{keep}\n"


def test_name_rules(pk, backend):
    base = backend.topic("n")
    longest = base + "x" * (249 - len(base))
    assert ok(pk("pk-topics", *backend, "--create", "--topic", longest)) == f"Created topic {longest}.\n"
    suffix = backend.topic("a")
    underscore, dot = f"metrics_{suffix}", f"metrics.{suffix}"
    assert ok(pk("pk-topics", *backend, "--create", "--topic", underscore)) == WARNING + f"Created topic {underscore}.\n"
    proc = pk("pk-topics", *backend, "--create", "--topic", dot)
    assert proc.out == WARNING
    fails(proc, ERR + f"Topic '{dot}' collides with existing topic: {underscore}")
    assert ok(pk("pk-topics", *backend, "--create", "--topic", underscore, "--if-not-exists")) == WARNING


def test_replica_assignment(pk, backend):
    ra, b = backend.topic("ra"), broker_id(backend)
    ok(pk("pk-topics", *backend, "--create", "--topic", ra, "--replica-assignment", f"{b}, {b} ,{b}"))
    assert "PartitionCount: 3\tReplicationFactor: 1" in ok(pk("pk-topics", *backend, "--describe", "--topic", ra))
    ok(pk("pk-topics", *backend, "--alter", "--topic", ra, "--partitions", "4", "--replica-assignment",
          ",".join([str(b)] * 4)))
    assert "PartitionCount: 4" in ok(pk("pk-topics", *backend, "--describe", "--topic", ra))
    fails(pk("pk-topics", *backend, "--alter", "--topic", ra, "--partitions", "6", "--replica-assignment",
             ",".join([str(b)] * 5)),
          ERR + "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")


def test_alter_partitions(pk, backend):
    t = backend.topic("t")
    ok(pk("pk-topics", *backend, "--create", "--topic", t, "--partitions", "2"))
    assert ok(pk("pk-topics", *backend, "--alter", "--topic", t, "--partitions", "4")) == ""
    assert "PartitionCount: 4" in ok(pk("pk-topics", *backend, "--describe", "--topic", t))
    fails(pk("pk-topics", *backend, "--alter", "--topic", t, "--partitions", "4"),
          ERR + "Topic already has 4 partition(s).")
    fails(pk("pk-topics", *backend, "--alter", "--topic", t, "--partitions", "3"),
          ERR + f"The topic {t} currently has 4 partition(s); 3 would not be an increase.")
    assert "PartitionCount: 4" in ok(pk("pk-topics", *backend, "--describe", "--topic", t))


def test_alter_configs(pk, backend):
    """The bundled engine alters topic configs (as the ZooKeeper-era tool did); through
    --bootstrap-server Kafka 4.4 refuses --config with --alter, and ignores --delete-config
    after a warning."""
    c = backend.topic("c")
    ok(pk("pk-topics", *backend, "--create", "--topic", c, "--config", "retention.ms=1000"))
    proc = pk("pk-topics", *backend, "--alter", "--topic", c, "--config", "max.message.bytes=2000",
              "--config", "cleanup.policy=compact,delete")
    if backend.remote:
        fails(proc, 'Option combination "[[config], [bootstrap-server]]" can\'t be used with option "[alter]" '
                    "(To alter topic configurations, the kafka-configs tool can be used.)")
        fails(pk("pk-topics", *backend, "--alter", "--topic", c, "--delete-config", "retention.ms"),
              DELETE_CONFIG_WARNING + '\nMissing required argument "[partitions]"')
        proc = pk("pk-topics", *backend, "--alter", "--topic", c, "--partitions", "2", "--delete-config", "retention.ms")
        assert (proc.returncode, proc.out, proc.err) == (0, "", DELETE_CONFIG_WARNING + "\n")
        expected = {"retention.ms": "1000"}
    else:
        assert ok(proc) == f"Updated config for topic {c}.\n"
        assert ok(pk("pk-topics", "--alter", "--topic", c, "--delete-config", "retention.ms")) == \
            f"Updated config for topic {c}.\n"
        fails(pk("pk-topics", "--alter", "--topic", c, "--config", "min.insync.replicas=0"),
              ERR + "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1")
        expected = {"cleanup.policy": "compact,delete", "max.message.bytes": "2000"}
    line = ok(pk("pk-topics", *backend, "--describe", "--topic", c)).splitlines()[0]
    count = 2 if backend.remote else 1
    assert line.endswith(f"\tPartitionCount: {count}\tReplicationFactor: 1\tConfigs: {configs(backend, expected)}")
    if backend.data_dir is not None:  # the engine's metadata file (the server shares its data directory)
        with open(os.path.join(backend.data_dir, ".pk", "topics", f"{c}.json")) as f:
            assert json.load(f)["configs"] == expected


def test_describe_report_filters(pk, backend):
    plain_t, strict = backend.topic("plain"), backend.topic("strict")
    b = broker_id(backend)
    ok(pk("pk-topics", *backend, "--create", "--topic", plain_t, "--partitions", "2"))
    ok(pk("pk-topics", *backend, "--create", "--topic", strict, "--config", "min.insync.replicas=2"))
    ours = ["--topic", f"{plain_t}|{strict}"]
    assert ok(pk("pk-topics", *backend, "--describe", *ours, "--under-replicated-partitions")) == ""
    assert ok(pk("pk-topics", *backend, "--describe", *ours, "--unavailable-partitions")) == ""
    assert ok(pk("pk-topics", *backend, "--describe", *ours, "--under-min-isr-partitions")) == \
        partition_line(strict, 0, b, backend) + "\n"
    assert ok(pk("pk-topics", *backend, "--describe", *ours, "--at-min-isr-partitions")) == (
        partition_line(plain_t, 0, b, backend) + "\n" + partition_line(plain_t, 1, b, backend) + "\n")
    # Java allows combining report flags: a partition prints if it matches any.
    assert ok(pk("pk-topics", *backend, "--describe", *ours, "--at-min-isr-partitions",
                 "--under-min-isr-partitions")).count("\n") == 3
    # A topic has overrides when its Configs: is not empty: on a cluster whose static broker
    # settings show in every topic's Configs:, every topic qualifies (as with Kafka).
    out = ok(pk("pk-topics", *backend, "--describe", "--topics-with-overrides", "--topic",
                f"__consumer_offsets|{plain_t}|{strict}"))
    # Every topic of a 4.4 cluster lists min.insync.replicas (a cluster-wide default).
    from pk.engine.topic_config import java_hashmap_order

    expected = java_hashmap_order(sorted(["__consumer_offsets", plain_t, strict]))
    assert [l.split("\t")[0] for l in out.splitlines()] == [f"Topic: {n}" for n in expected]


USAGE_ERRORS = [
    (["--list", "--describe"], "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (["--topic", "t"], "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (["--create"], 'Missing required argument "[topic]"'),
    (["--delete"], 'Missing required argument "[topic]"'),
    (["--alter", "--topic", "t"], 'Missing required argument "[partitions]"'),
    (["--describe", "--if-exists"], "--topic or --topic-id is required to describe a topic"),
    (["--list", "--partitions", "3"], 'Option "[partitions]" can\'t be used with option "[list]"'),
    (["--alter", "--topic", "t", "--partitions", "3", "--replication-factor", "1"],
     'Option "[replication-factor]" can\'t be used with option "[alter]"'),
    (["--create", "--topic", "t", "--replica-assignment", "0", "--partitions", "1"],
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (["--delete", "--topic", "t", "--if-not-exists"], 'Option "[if-not-exists]" can\'t be used with option "[delete]"'),
    (["--create", "--topic", "t", "--if-exists"], 'Option "[if-exists]" can\'t be used with option "[create]"'),
    (["--create", "--topic", "t", "--exclude-internal"], 'Option "[exclude-internal]" can\'t be used with option "[create]"'),
    (["--describe", "--topics-with-overrides", "--unavailable-partitions"],
     'Option "[unavailable-partitions]" can\'t be used with option "[topics-with-overrides]"'),
    (["--list", "--bogus"], "bogus is not a recognized option"),
    (["--list", "--partition-size-limit-per-response", "2", "--zookeeper", "h:1"],
     "partition-size-limit-per-response is not a recognized option"),
    (["--create", "--topic"], "Option topic requires an argument"),
]


@pytest.mark.parametrize("args, message", USAGE_ERRORS)
def test_usage_errors(pk, backend, args, message):
    """Kafka checks the arguments before it contacts the cluster: the same errors either way."""
    proc = pk("pk-topics", *backend, *args)
    assert proc.returncode == 1 and proc.out == "" and "Traceback" not in proc.err
    assert proc.err == message + "\n"


@pytest.mark.engine_only("arguments only: no backend involved")
def test_no_arguments_help_and_version(pk, backend):
    proc = pk("pk-topics")
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err.startswith("Create, delete, describe, or change a topic.\n")
    assert "--bootstrap-server" in proc.err and "--create" in proc.err and "--command-config" in proc.err
    out = ok(pk("pk-topics", "--help"))
    assert "This tool helps to create, delete, describe, or change a topic." in out
    assert ok(pk("pk-topics", "--version")) == "4.4.0\n"


# --------------------------------------------------------------------------- the bundled engine only
@pytest.mark.engine_only("the engine's files")
def test_on_disk_layout(pk, backend, data_dir):
    ok(pk("pk-topics", "--create", "--topic", "orders", "--partitions", "2"))
    for p in (0, 1):
        d = os.path.join(data_dir, f"orders-{p}")
        assert set(os.listdir(d)) >= {"00000000000000000000.index", "00000000000000000000.log",
                                      "00000000000000000000.timeindex", "partition.metadata"}
        with open(os.path.join(d, "partition.metadata")) as f:
            assert f.read() == f"version: 0\ntopic_id: {topic_id(pk, backend, 'orders')}\n"
    with open(os.path.join(data_dir, "meta.properties")) as f:
        text = f.read()
    assert "node.id=0\n" in text and re.search(r"^cluster\.id=[A-Za-z0-9_-]{22}$", text, re.M)


@pytest.mark.engine_only("--data-dir is the bundled engine's option")
def test_data_dir_option_and_bad_data_dir(pk, backend, tmp_path):
    other = str(tmp_path / "other")
    assert ok(pk("pk-topics", "--data-dir", other, "--create", "--topic", "elsewhere")) == "Created topic elsewhere.\n"
    assert ok(pk("pk-topics", "--list", "--exclude-internal")) == "\n"
    assert ok(pk("pk-topics", "--list", "--exclude-internal", "--data-dir", other)) == "elsewhere\n"
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    fails(pk("pk-topics", "--list", "--data-dir", str(not_a_dir)),
          ERR + f"Data directory {not_a_dir} is not a directory")


@pytest.mark.engine_only("the engine's default data directory")
def test_default_data_dir_follows_xdg(pk, backend, tmp_path):
    env = {"PK_DATA_DIR": "", "XDG_DATA_HOME": str(tmp_path / "xdg")}
    ok(pk("pk-topics", "--create", "--topic", "xdg", env=env))
    assert os.path.isdir(tmp_path / "xdg" / "pk" / "xdg-0")


@pytest.mark.engine_only("the engine's metadata files")
def test_corrupt_topic_metadata_is_reported(pk, backend, data_dir):
    ok(pk("pk-topics", "--create", "--topic", "good"))
    ok(pk("pk-topics", "--create", "--topic", "broken"))
    path = os.path.join(data_dir, ".pk", "topics", "broken.json")
    with open(path, "w") as f:
        f.write("{not json")
    proc = pk("pk-topics", "--describe", "--topic", "broken")
    assert proc.returncode == 1 and proc.err.startswith(ERR + f"Topic metadata file {path} is corrupt")
    assert proc.err.count("\n") == 1
    assert ok(pk("pk-topics", "--describe", "--topic", "good")).startswith("Topic: good\t")


# --------------------------------------------------------------------------- --bootstrap-server
@pytest.mark.server_only("the remote backend's own options")
def test_command_config_and_x(pk, backend, tmp_path):
    t = backend.topic("cc")
    props = tmp_path / "admin.properties"
    props.write_text("# Java client keys\nrequest.timeout.ms=20000\ndefault.api.timeout.ms=30000\n"
                     "security.protocol=PLAINTEXT\nclient.id=pk-test\nkey.serializer=ignored.Serializer\n")
    assert ok(pk("pk-topics", *backend, "--command-config", str(props), "--create", "--topic", t)) == \
        f"Created topic {t}.\n"
    assert ok(pk("pk-topics", *backend, "--command-config", str(props), "-X", "socket.keepalive.enable=true",
                 "--list", "--topic", t)) == f"{t}\n"
    fails(pk("pk-topics", *backend, "-X", "no.such.property=1", "--list"), "Unknown client configuration: no.such.property")
    fails(pk("pk-topics", *backend, "-X", "novalue", "--list"), "Invalid -X argument 'novalue': expected -X property=value")
    fails(pk("pk-topics", *backend, "--data-dir", str(tmp_path), "--list"),
          'Option "[data-dir]" can\'t be used with option "[bootstrap-server]"')
    # TLS towards a plaintext listener: the handshake fails at once, as in Java (no waiting for the timeout)
    props.write_text("security.protocol=SSL\ndefault.api.timeout.ms=30000\n")
    start = time.monotonic()
    proc = pk("pk-topics", *backend, "--command-config", str(props), "--list")
    assert proc.returncode == 1 and proc.out == "" and proc.err.count("\n") == 1
    assert proc.err.startswith(ERR) and "SSL handshake failed" in proc.err
    assert time.monotonic() - start < 15


@pytest.mark.parametrize("text, message", [
    ("nope.properties", "java.nio.file.NoSuchFileException: {dir}/nope.properties"),
    ("bogus.key=1\n", "Unknown client configuration: bogus.key"),
    ("request.timeout.ms=soon\n", "Invalid value soon for configuration request.timeout.ms: Not a number of type INT"),
    ("security.protocol=TLS\n", "Invalid value TLS for configuration security.protocol: String must be one of: "
                                "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    ("sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password;\n",
     "Value not specified for key 'password' in JAAS config"),
    ("ssl.truststore.location={dir}/truststore.jks\n",
     "ssl.truststore.location {dir}/truststore.jks is a JKS truststore, which librdkafka cannot read: export its "
     "certificates as PEM (keytool -exportcert -rfc -keystore {dir}/truststore.jks -alias <alias> -file ca.pem), "
     "then set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM"),
])
def test_bad_command_config(plain, tmp_path, text, message):
    (tmp_path / "truststore.jks").write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    if text.endswith(".properties"):
        path = tmp_path / text
    else:
        path = tmp_path / "admin.properties"
        path.write_text(text.format(dir=tmp_path))
    # the Admin client is never created: the cluster is not contacted
    fails(plain("pk-topics", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--command-config", str(path),
                "--list"), message.format(dir=tmp_path))


@pytest.mark.parametrize("address, message", [
    ("localhost", "Please provide valid host:port like host1:9091,host2:9092"),
    ("localhost:x", "Please provide valid host:port like host1:9091,host2:9092"),
    ("localhost:9092,other", "Please provide valid host:port like host1:9091,host2:9092"),
    (",localhost:9092", "Please provide valid host:port like host1:9091,host2:9092"),
    ("", "Error while validating the bootstrap address"),
    ("no-such-host.invalid:9092", "No resolvable bootstrap urls given in bootstrap.servers"),
])
def test_invalid_bootstrap_server(plain, address, message):
    fails(plain("pk-topics", "--bootstrap-server", address, "--list"), message)


def test_unreachable_cluster_fails_within_the_timeout(plain, tmp_path):
    props = tmp_path / "admin.properties"
    props.write_text("default.api.timeout.ms=1500\n")
    closed = f"127.0.0.1:{free_port()}"
    for args, call in ((["--list"], "listTopics"), (["--create", "--topic", "t"], "createTopics")):
        start = time.monotonic()
        proc = plain("pk-topics", "--bootstrap-server", closed, "--command-config", str(props), *args, timeout=30)
        fails(proc, ERR + f"Timed out waiting for a node assignment. Call: {call}")
        assert 1.4 < time.monotonic() - start < 10
        assert proc.out == ""


# --------------------------------------------------------------------------- Java -> librdkafka
def test_client_config_translation():
    from pk.commands.client_config import to_librdkafka

    jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
            'password="s3cr\\"et";')
    assert to_librdkafka({
        "bootstrap.servers": "h:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": jaas, "ssl.endpoint.identification.algorithm": "", "request.timeout.ms": "5000",
        "default.api.timeout.ms": "9000", "key.serializer": "x.Y", "acks": "all", "enable.idempotence": "TRUE",
        "fetch.max.wait.ms": "100", "send.buffer.bytes": "-1", "buffer.memory": "33554432",
        "auto.offset.reset": "none", "partition.assignment.strategy":
            "org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    }, {"linger.ms": "5"}) == {
        "bootstrap.servers": "h:1", "security.protocol": "sasl_ssl", "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "alice", "sasl.password": 's3cr"et', "ssl.endpoint.identification.algorithm": "none",
        "socket.timeout.ms": "5000", "acks": "all", "enable.idempotence": "true", "fetch.wait.max.ms": "100",
        "socket.send.buffer.bytes": "0", "queue.buffering.max.kbytes": "32768", "auto.offset.reset": "error",
        "partition.assignment.strategy": "range", "linger.ms": "5",
    }
    plain_jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required username='bob' password=pw;"
    assert to_librdkafka({"sasl.jaas.config": plain_jaas}) == {"sasl.username": "bob", "sasl.password": "pw"}
    assert to_librdkafka({"request.timeout.ms": "7000"}, role="producer") == {
        "socket.timeout.ms": "7000", "request.timeout.ms": "7000"}


def test_client_config_stores(tmp_path):
    from pk.commands.client_config import to_librdkafka
    from pk.commands.errors import ClientConfigError

    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    p12 = tmp_path / "client.p12"
    p12.write_bytes(b"\x30\x82\x01\x00")
    assert to_librdkafka({"ssl.truststore.location": str(pem), "ssl.truststore.password": "x",
                          "ssl.keystore.location": str(p12), "ssl.keystore.type": "PKCS12",
                          "ssl.keystore.password": "kp", "ssl.key.password": "kp"}) == {
        "ssl.ca.location": str(pem), "ssl.keystore.location": str(p12), "ssl.keystore.password": "kp"}
    jks = tmp_path / "client.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed")
    with pytest.raises(ClientConfigError, match=r"^ssl.keystore.location .* is a JKS keystore, which librdkafka "
                                                r"cannot read: convert it to PKCS12"):
        to_librdkafka({"ssl.keystore.location": str(jks)})
    with pytest.raises(ClientConfigError, match=r"^ssl.truststore.location .* is a PKCS12 truststore"):
        to_librdkafka({"ssl.truststore.location": str(p12), "ssl.truststore.type": "PKCS12"})
    with pytest.raises(ClientConfigError, match="^JAAS config property contains 2 login modules, should be 1 module$"):
        to_librdkafka({"sasl.jaas.config": "a.B required; c.D required;"})
    with pytest.raises(ClientConfigError, match="^sasl.jaas.config: login module a.B cannot be translated"):
        to_librdkafka({"sasl.jaas.config": "a.B required x=\"1\";"})


@pytest.mark.parametrize("address, ok_", [
    ("h:1", True), ("h:1,", True), ("[::1]:9092", True), ("a:1,b:2", True), ("h", False), (",h:1", False),
    ("h:1,x", False), (",", False),
])
def test_validate_bootstrap_as_tools_utils(address, ok_):
    from pk.commands.client_config import validate_bootstrap
    from pk.commands.errors import ClientConfigError

    if ok_:
        validate_bootstrap(address)
    else:
        with pytest.raises(ClientConfigError, match="^Please provide valid host:port like host1:9091,host2:9092$"):
            validate_bootstrap(address)


def test_admin_errors_carry_kafka_texts():
    from pk.commands.backends.kafka_admin import error_from

    timeout = error_from(-185, "Failed while waiting for controller: Local: Timed out", "createTopics")
    assert str(timeout) == "Timed out waiting for a node assignment. Call: createTopics"
    assert timeout.execution_message() == ("org.apache.kafka.common.errors.TimeoutException: Timed out waiting for "
                                           "a node assignment. Call: createTopics")
    exists = error_from(36, "Topic 't' already exists.", "createTopics")  # the broker's own message
    assert (exists.name, str(exists)) == ("TOPIC_ALREADY_EXISTS", "Topic 't' already exists.")
    denied = error_from(29, "Broker: Topic authorization failed", "describeTopics")  # no message: Kafka's default
    assert denied.execution_message() == ("org.apache.kafka.common.errors.TopicAuthorizationException: Topic "
                                          "authorization failed.")
    unknown = error_from(3, "Failed to query partition leaders: Broker: Unknown topic or partition", "listOffsets")
    assert str(unknown) == "This server does not host this topic-partition."
