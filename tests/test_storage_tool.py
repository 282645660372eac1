"""pk-storage (kafka-storage) on pk's data directories: what `format` writes is what the
bundled engine and pk-server-start then use (cluster id, SCRAM credentials)."""

from __future__ import annotations

import os
import re

from pk.engine import scram_credentials as sc

from conftest import BrokerProcess, free_port

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"


def write_config(path, data_dir: str, **extra) -> str:
    """pk's own server config (no process.roles): pk is one combined broker and controller."""
    props = {"node.id": "0", "listeners": "PLAINTEXT://127.0.0.1:9092", "log.dirs": data_dir, **extra}
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return str(path)


def test_format_then_engine_and_server_use_it(pk, tmp_path):
    data_dir = str(tmp_path / "data")
    config = write_config(tmp_path / "server.properties", data_dir)
    r = pk("pk-storage", "format", "-t", CLUSTER_ID, "-c", config,
           "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]",
           "-S", "SCRAM-SHA-256=[name=bob,password=bob-secret,iterations=8192]")
    assert (r.returncode, r.err) == (0, ""), r.err
    lines = r.out.splitlines()
    assert lines[0].startswith("Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
                               "name='metadata.version', featureLevel=33) at version 0)")
    assert lines[1:] == [f"Formatting metadata directory {data_dir} with metadata.version 4.4-IV2."]
    meta = open(os.path.join(data_dir, "meta.properties")).read()
    assert re.fullmatch(r"#\n#\w{3} \w{3} \d\d \d\d:\d\d:\d\d UTC \d{4}\nnode\.id=0\ndirectory\.id=[\w-]{22}\n"
                        rf"version=1\ncluster\.id={CLUSTER_ID}\n", meta), meta

    # the credentials are the ones a SCRAM client derives from the password and salt
    users = sc.ScramCredentials(data_dir)
    alice = users.get("alice", "SCRAM-SHA-512")
    assert alice.iterations == 4096
    assert alice == sc.Credential.from_password("SCRAM-SHA-512", "alice-secret", 4096, alice.salt)
    assert users.get("bob", "SCRAM-SHA-256").iterations == 8192

    r = pk("pk-storage", "info", "-c", config)
    assert r.returncode == 0, r.out
    directory_id = re.search(r"directory\.id=([\w-]+)", meta).group(1)
    assert r.out == (f"Found log directory:\n  {data_dir}\n\nFound metadata: {{cluster.id={CLUSTER_ID}, "
                     f"directory.id={directory_id}, node.id=0, version=1}}\n\n")

    # the bundled engine and pk-server-start take the formatted cluster id
    r = pk("pk-cluster", "cluster-id", env={"PK_DATA_DIR": data_dir})
    assert r.out == f"Cluster ID: {CLUSTER_ID}\n", r.err
    sasl_port = free_port()
    b = BrokerProcess(data_dir)
    b.overrides.update({
        "listeners": f"PLAINTEXT://{b.bootstrap},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"})
    b.start()
    try:
        r = pk("pk-cluster", "cluster-id", "--bootstrap-server", b.bootstrap)
        assert r.out == f"Cluster ID: {CLUSTER_ID}\n", r.err
        # alice logs in with the password given to format
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        for password, ok in (("alice-secret", True), ("wrong", False)):
            admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                                 "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
                                 "sasl.password": password, "log_level": 0})
            try:
                admin.list_topics(timeout=5)
                logged_in = True
            except KafkaException:
                logged_in = False
            assert logged_in == ok, password
    finally:
        b.stop()
    assert open(os.path.join(data_dir, "meta.properties")).read() == meta  # (kept as formatted)

    # formatted already: refused, or skipped with --ignore-formatted
    r = pk("pk-storage", "format", "-t", CLUSTER_ID, "-c", config)
    assert (r.returncode, r.out, r.err) == (1, "", f"Log directory {data_dir} is already formatted. Use "
                                            "--ignore-formatted to ignore this directory and format the others.\n")
    r = pk("pk-storage", "format", "-t", CLUSTER_ID, "-c", config, "--ignore-formatted")
    assert (r.returncode, r.out, r.err) == (0, "All of the log directories are already formatted.\n", "")


def test_several_log_dirs_and_standalone(pk, tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    config = write_config(tmp_path / "s.properties", f"{a},{b}")
    r = pk("pk-storage", "format", "-t", CLUSTER_ID, "-c", config, "--standalone")
    assert r.returncode == 0, r.err
    assert r.out.splitlines()[1:] == [f"Formatting data directory {b} with metadata.version 4.4-IV2.",
                                      f"Formatting dynamic metadata voter directory {a} with metadata.version "
                                      "4.4-IV2."]
    r = pk("pk-storage", "info", "-c", config)
    assert r.out.startswith(f"Found log directories:\n  {a}\n  {b}\n\nFound metadata: {{cluster.id={CLUSTER_ID}, ")


def test_info_problems_and_random_uuid(pk, tmp_path):
    missing = str(tmp_path / "missing")
    r = pk("pk-storage", "info", "-c", write_config(tmp_path / "m.properties", missing))
    assert (r.returncode, r.out) == (1, f"Found problem:\n  {missing} does not exist\n\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    r = pk("pk-storage", "info", "-c", write_config(tmp_path / "e.properties", str(empty)))
    assert (r.returncode, r.out) == (1, f"Found log directory:\n  {empty}\n\nFound problem:\n  {empty} is not "
                                        "formatted.\n\n")
    ids = {pk("pk-storage", "random-uuid").out for _ in range(2)}
    assert len(ids) == 2 and all(re.fullmatch(r"[\w-]{22}\n", i) for i in ids)


def test_refusals(pk, tmp_path):
    config = write_config(tmp_path / "r.properties", str(tmp_path / "d"))
    voters = write_config(tmp_path / "v.properties", str(tmp_path / "v"), **{
        "process.roles": "broker,controller", "controller.quorum.voters": "0@127.0.0.1:9093"})
    fmt = ["format", "-t", CLUSTER_ID, "-c", config]
    cases = [
        ([], "kafka-storage: error: too few arguments"),
        (["bogus"], "kafka-storage: error: invalid choice: 'bogus' (choose from 'info', 'format', 'version-mapping', "
                    "'feature-dependencies', 'random-uuid')"),
        (["feature-dependencies"], "kafka-storage: error: argument --feature/-f is required"),
        (["feature-dependencies", "-f", "x"], "Invalid feature format: x. Expected format: 'feature=version' "
                                              "(e.g. 'group.version=1')"),
        (["feature-dependencies", "-f", "group.version=abc"], "Invalid version format: abc for feature group.version"),
        (["feature-dependencies", "-f", "group.version=9"], "Feature level 9 is not supported for feature "
                                                            "group.version"),
        (["version-mapping", "-r"], "kafka-storage: error: argument --release-version/-r: expected one argument"),
        (["format"], "kafka-storage: error: argument --cluster-id/-t is required"),
        (["format", "-t", CLUSTER_ID], "kafka-storage: error: argument --config/-c is required"),
        (["info"], "kafka-storage: error: argument --config/-c is required"),
        (["random-uuid", "x"], "kafka-storage: error: unrecognized arguments: 'x'"),
        ([*fmt, "--bogus"], "kafka-storage: error: unrecognized arguments: '--bogus'"),
        (["format", "-t", CLUSTER_ID, "-c", str(tmp_path / "nope.properties")],
         f'Exception in thread "main" java.nio.file.NoSuchFileException: {tmp_path / "nope.properties"}'),
        ([*fmt, "--add-scram", "bogus"], "Failed to find equals sign in SCRAM argument 'bogus'"),
        ([*fmt, "--add-scram", "SCRAM-SHA-999=[name=a,password=b]"], "The add-scram mechanism SCRAM-SHA-999 is not "
                                                                     "supported."),
        ([*fmt, "--add-scram", "SCRAM-SHA-256=[password=b]"], "You must supply 'name' to add-scram"),
        ([*fmt, "--add-scram", "SCRAM-SHA-256=[name=a]"],
         "You must supply one of 'password' or 'saltedpassword' to add-scram"),
        ([*fmt, "--add-scram", "SCRAM-SHA-256=[name=a,password=b,iterations=10]"],
         "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256"),
        (["format", "-t", CLUSTER_ID, "-c", voters, "--standalone"],
         "You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
         "--standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify "
         "controller.quorum.bootstrap.servers instead."),
    ]
    for args, line in cases:
        r = pk("pk-storage", *args)
        assert (r.returncode, r.out, r.err) == (1, "", line + "\n"), args
    assert not os.path.exists(tmp_path / "d")  # nothing written by a refused format


def test_version_mapping_and_feature_dependencies(pk):
    r = pk("pk-storage", "version-mapping", "-r", "3.9-IV0")
    assert (r.returncode, r.err) == (0, "")
    assert r.out.splitlines() == ["metadata.version=21 (3.9-IV0)", "kraft.version=1", "transaction.version=0",
                                  "group.version=0", "eligible.leader.replicas.version=0", "share.version=0",
                                  "streams.version=0"]
    # the same table as pk-features'
    assert pk("pk-storage", "version-mapping").out == pk("pk-features", "version-mapping").out
    r = pk("pk-storage", "feature-dependencies", "-f", "eligible.leader.replicas.version=1", "--feature",
           " group.version = 1 ")
    assert (r.returncode, r.err) == (0, "")
    assert r.out == ("eligible.leader.replicas.version=1 requires:\n    metadata.version=23 (4.0-IV1)\n"
                     "group.version=1 has no dependencies.\n")
    # a feature's lines come before the error of the next one
    r = pk("pk-storage", "feature-dependencies", "-f", "group.version=1", "-f", "foo=1")
    assert (r.returncode, r.out, r.err) == (1, "group.version=1 has no dependencies.\n", "Unknown feature: foo\n")
