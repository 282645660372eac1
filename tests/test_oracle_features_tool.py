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
