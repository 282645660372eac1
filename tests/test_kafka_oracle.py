"""The oracle itself: Kafka's jars are there, its brokers start and its tools run, so that a
failing differential test points at pk, not at the harness."""

import zipfile

import kafka_oracle


def _classes(dist) -> set[str]:
    names = set()
    for jar in dist.classpath.split(":"):
        with zipfile.ZipFile(jar) as z:
            names.update(n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class"))
    return names


def test_every_script_class_is_in_the_jars(kafka_tools, kafka28_tools):
    for tools in (kafka_tools, kafka28_tools):
        classes = _classes(tools.dist)
        missing = {s: c for s, c in tools.dist.scripts.items() if c not in classes}
        assert not missing, f"Kafka {tools.dist.version}: {missing}"


def test_kraft_broker_and_tools(kafka, kafka_tools):
    b = kafka.bootstrap
    created = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", "oracle-self-check",
                          "--partitions", "2")
    assert (created.returncode, created.out) == (0, "Created topic oracle-self-check.\n"), created.err
    produced = kafka_tools("kafka-console-producer", "--bootstrap-server", b, "--topic", "oracle-self-check",
                           "--reader-property", "parse.key=true", "--reader-property", "key.separator=:", input="k:v1\nk:v2\n")
    assert produced.returncode == 0, produced.err
    consumed = kafka_tools("kafka-console-consumer", "--bootstrap-server", b, "--topic", "oracle-self-check",
                           "--from-beginning", "--max-messages", "2", "--formatter-property", "print.key=true")
    assert consumed.returncode == 0, consumed.err
    assert consumed.out == "k\tv1\nk\tv2\n"
    assert consumed.err.endswith("Processed a total of 2 messages\n")


def test_tool_exit_status_and_version(kafka_tools):
    bad = kafka_tools("kafka-topics", "--bootstrap-server", "127.0.0.1:1", "--no-such-flag")
    assert bad.returncode == 1 and bad.err_first == "no-such-flag is not a recognized option"
    version = kafka_tools("kafka-topics", "--version")
    assert version.returncode == 0 and version.out.startswith(kafka_tools.dist.version)


def test_zookeeper_era_broker_and_tools(kafka28, kafka28_tools):
    created = kafka28_tools("kafka-topics", "--zookeeper", kafka28.zookeeper, "--create", "--topic",
                            "oracle-zk-check", "--partitions", "1", "--replication-factor", "1")
    assert created.returncode == 0, created.err
    assert created.out == "Created topic oracle-zk-check.\n"
    produced = kafka28_tools("kafka-console-producer", "--broker-list", kafka28.bootstrap, "--topic",
                             "oracle-zk-check", input="v1\n")
    assert produced.returncode == 0, produced.err
    consumed = kafka28_tools("kafka-console-consumer", "--bootstrap-server", kafka28.bootstrap, "--topic",
                             "oracle-zk-check", "--from-beginning", "--max-messages", "1")
    assert (consumed.returncode, consumed.out) == (0, "v1\n"), consumed.err


def test_run_process_matches_the_tool_server(kafka_tools):
    shared = kafka_tools("kafka-topics", "--version")
    own = kafka_tools.run_process("kafka-topics", "--version")
    assert (own.returncode, own.out) == (shared.returncode, shared.out)
