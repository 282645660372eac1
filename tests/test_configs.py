"""pk-configs on the bundled engine and through --bootstrap-server against pk-server-start:
topic configs altered and described (Kafka's `[a,b]` grouping, --add-config-file,
--delete-config, --all), broker defaults, and Kafka's one-line errors."""

from __future__ import annotations

import pytest


@pytest.fixture
def data_dir(backend_data_dir):
    return backend_data_dir


def test_alter_then_describe_topic(pk, backend, tmp_path):
    t = backend.topic("cfg")
    backend.create(t, 1)
    r = pk("pk-configs", *backend, "--alter", "--topic", t,
           "--add-config", "retention.ms = 1000 , cleanup.policy=[compact,delete]")
    assert (r.returncode, r.out, r.err) == (0, f"Completed updating config for topic {t}.\n", "")
    r = pk("pk-configs", *backend, "--describe", "--entity-type", "topics", "--entity-name", t)
    lines = r.out.splitlines()
    assert r.returncode == 0 and lines[0] == f"Dynamic configs for topic {t} are:"
    assert lines[1].startswith("  cleanup.policy=compact,delete sensitive=false "
                               "synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, ")
    assert lines[1].endswith("DEFAULT_CONFIG:log.cleanup.policy=delete}")
    assert lines[2] == "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}"
    assert len(lines) == 3

    props = tmp_path / "add.properties"
    props.write_text("segment.ms=100000\n")
    assert pk("pk-configs", *backend, "--alter", "--topic", t, "--add-config-file", str(props)).returncode == 0
    r = pk("pk-configs", *backend, "--alter", "--topic", t, "--delete-config", "retention.ms,cleanup.policy,nosuch")
    assert r.returncode == 0, r.err  # an unknown name is deleted without a word, as in Kafka
    r = pk("pk-configs", *backend, "--describe", "--topic", t)
    assert r.out == (f"Dynamic configs for topic {t} are:\n"
                     "  segment.ms=100000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.ms=100000}\n")
    r = pk("pk-configs", *backend, "--describe", "--topic", t, "--all")
    assert r.out.splitlines()[0] == f"All configs for topic {t} are:"
    assert "  segment.ms=100000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.ms=100000" in r.out
    names = [line.split("=")[0].strip() for line in r.out.splitlines()[1:]]
    assert names == sorted(names) and "retention.ms" in names


def test_broker_defaults(pk, backend):
    r = pk("pk-configs", *backend, "--describe", "--entity-type", "brokers")
    assert r.returncode == 0, r.err
    assert r.out == ("Dynamic configs for broker 0 are:\n"
                     "Default configs for brokers in the cluster are:\n"
                     "  min.insync.replicas=1 sensitive=false "
                     "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1}\n")


def test_errors_are_kafkas_lines(pk, backend):
    t = backend.topic("cfgerr")
    backend.create(t, 1)
    cases = [
        (["--describe"], "At least one entity type must be specified"),
        (["--topic", t], "Command must include exactly one action: --describe, --alter"),
        (["--alter", "--topic", t], "At least one of --add-config, --add-config-file, or --delete-config "
                                    "must be specified with --alter"),
        (["--alter", "--topic", t, "--add-config", "retention.ms"],
         'Invalid entity config: all configs to be added must be in the format "key=val" or  "key=[val1,val2]" '
         "to group values which contain commas."),
        (["--alter", "--topic", t, "--add-config", "a b=1"], "Invalid character found for config key: a b"),
        (["--describe", "--entity-type", "foo"],
         "Invalid entity type foo, the entity type must be one of broker-loggers, topics, clients, users, brokers, "
         "ips, client-metrics, groups with a --bootstrap-server or --bootstrap-controller argument"),
        (["--describe", "--broker", "x"], "The entity name for brokers must be a valid integer broker id, but it is: x"),
        (["--describe", "--topic", "a", "--broker", "0"], "Only 'users' and 'clients' entity types may be specified together"),
        (["--describe", "--topic", "a", "--topic", "b"], "Found multiple arguments for option topic, but you asked for only one"),
        (["--describe", "--topic", "bad name!"], "Topic name is invalid: 'bad name!' contains one or more characters "
                                                 "other than ASCII alphanumerics, '.', '_' and '-'"),
        (["--nope"], "nope is not a recognized option"),
    ]
    for args, line in cases:
        r = pk("pk-configs", *backend, *args)
        assert (r.returncode, r.out, r.err) == (1, "", line + "\n"), args
    r = pk("pk-configs", *backend, "--alter", "--topic", t, "--add-config", "bogus.key=1")
    assert r.returncode == 1 and "Traceback" not in r.err
    assert r.err.splitlines() == [
        f"Error while executing config command with args '{' '.join([*backend, '--alter', '--topic', t, '--add-config', 'bogus.key=1'])}'",
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidConfigurationException: "
        "Unknown topic config name: bogus.key"]
    r = pk("pk-configs", *backend, "--describe", "--topic", "nosuch-cfg")
    assert (r.returncode, r.out) == (0, "The topic 'nosuch-cfg' doesn't exist and doesn't have dynamic config.\n")


def test_help_and_no_arguments(pk):
    r = pk("pk-configs")
    assert r.returncode == 1 and r.err.startswith(
        "This tool helps to manipulate and describe entity config for a topic, client, user, broker, ip, "
        "client-metrics or group\n")
    r = pk("pk-configs", "--help")
    assert r.returncode == 0 and "--add-config" in r.out and "--entity-type" in r.out


@pytest.mark.engine_only("the engine has no broker process: quotas and credentials need one")
def test_engine_refuses_what_needs_a_broker(pk, backend):
    r = pk("pk-configs", "--describe", "--user", "alice")
    assert r.returncode == 1 and r.err.splitlines()[1] == (
        "org.apache.kafka.common.errors.UnsupportedVersionException: client quotas need a broker: run "
        "pk-server-start and use --bootstrap-server")
