"""pk-features version-mapping and feature-dependencies against Kafka 4.4's kafka-features
(the oracle; neither needs a cluster): every release name, every level of every feature, and
the refusals."""

from __future__ import annotations

import subprocess

from conftest import tool_path


def _pk(*args):
    proc = subprocess.run([tool_path("pk-features"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_version_mapping_and_dependencies_match(kafka_tools):
    from pk.commands.features import FEATURE_LEVELS, METADATA_VERSIONS

    calls = [["version-mapping"], ["version-mapping", "--release-version", "3.9"],
             ["version-mapping", "--release-version", "4.0"], ["version-mapping", "--release-version", "9.9"],
             ["version-mapping", "--release-version", "3.2-IV0"], ["feature-dependencies"],
             ["feature-dependencies", "--feature", "x"], ["feature-dependencies", "--feature", "group.version=x"],
             ["feature-dependencies", "--feature", "foo=1"],
             ["feature-dependencies", "--feature", "eligible.leader.replicas.version=1", "--feature", "share.version=1"]]
    calls += [["version-mapping", "--release-version", name] for name in METADATA_VERSIONS.values()]
    calls += [["feature-dependencies", "--feature", f"metadata.version={lvl}"] for lvl in range(5, 37)]
    calls += [["feature-dependencies", "--feature", f"{f}={lvl}"] for f in FEATURE_LEVELS for lvl in range(-1, 5)]
    for args in calls:
        k = kafka_tools("kafka-features", *args)
        rc, out, err = _pk(*args)
        assert (rc, out, err.rstrip("\n")) == (k.returncode, k.out, k.err.rstrip("\n")), args


UPDATES = (
    ["upgrade", "--feature", "group.version=1", "--dry-run"],
    ["upgrade", "--feature", "group.version=1"],
    ["upgrade", "--feature", "group.version=2"],
    ["upgrade", "--feature", "group.version=1", "--feature", "foo.version=1"],
    ["downgrade", "--feature", "streams.version=0"],
    ["describe"],
    ["upgrade", "--feature", "streams.version=1"],  # (back to where the session broker was)
    ["disable", "--feature", "group.version", "--dry-run"],
    ["disable", "--feature", "group.version=1"],
    ["disable", "--feature", "kraft.version"],
    ["disable", "--feature", "metadata.version", "--unsafe"],
    ["upgrade", "--feature", "transaction.version=1"],
    ["downgrade", "--feature", "transaction.version=3"],
    ["downgrade", "--feature", "transaction.version=1", "--dry-run"],
    ["upgrade", "--metadata", "4.4-IV2"],
    ["downgrade", "--metadata", "4.4-IV1"],
    ["downgrade", "--metadata", "4.4-IV1", "--unsafe"],
    ["downgrade", "--release-version", "3.9-IV0", "--dry-run"],
    ["upgrade", "--release-version", "4.4-IV2", "--dry-run"],
    ["upgrade"],
    ["disable"],
    ["upgrade", "--feature", "x"],
    ["upgrade", "--feature", "group.version=abc"],
    ["upgrade", "--feature", "group.version=0"],
    ["upgrade", "--feature", "group.version=1", "--feature", "group.version=1"],
    ["upgrade", "--release-version", "4.4-IV2", "--feature", "group.version=1"],
    ["upgrade", "--metadata", "9.9"],
)


def test_updates_match(kafka, kafka_tools, tmp_path):
    """upgrade, downgrade, disable (and describe between them): Kafka's tool and pk's, each on
    the session's Kafka broker and on a pk-server-start, give the same stdout, stderr and
    status (describe without its epochs, which count different things). Only changes that are
    undone at once are made on the shared Kafka broker (kraft.version, once upgraded, stays)."""
    import re

    from conftest import BrokerProcess

    server = BrokerProcess(str(tmp_path / "data")).start()
    try:
        for args in UPDATES:
            seen = []
            for bootstrap in (kafka.bootstrap, server.bootstrap):
                k = kafka_tools("kafka-features", "--bootstrap-server", bootstrap, *args)
                rc, out, err = _pk("--bootstrap-server", bootstrap, *args)
                seen += [(k.returncode, k.out, k.err), (rc, out, err)]
            views = {(rc, re.sub(r"Epoch: \d+", "Epoch: <e>", out), err) for rc, out, err in seen}
            assert len(views) == 1, (args, views)
    finally:
        server.stop()
