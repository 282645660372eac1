"""pk-features upgrade, downgrade and disable, and pk-server-start's UpdateFeatures: finalized
levels change within the supported ranges, with Kafka 4.4's refusals; they are kept in the
data directory (a restart keeps them, the bundled engine reads and changes the same ones) and
ApiVersions reports them."""

from __future__ import annotations

import subprocess

import pytest

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey

ALL_FAILED = "The update failed for all features since the following feature had an error: "


def _pk(*args):
    proc = subprocess.run([tool_path("pk-features"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _finalized(port: int) -> tuple[int, dict[str, int]]:
    client = ProtocolClient(port)
    try:
        answer = client.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    finally:
        client.close()
    return answer["finalized_features_epoch"], {f["name"]: f["max_version_level"]
                                                 for f in answer["finalized_features"]}


def _levels(out: str) -> dict[str, str]:
    return {line.split()[1]: line.split()[7] for line in out.splitlines()}


@pytest.fixture
def server(tmp_path):
    b = BrokerProcess(str(tmp_path / "data")).start()
    yield b
    b.stop()


def test_upgrade_downgrade_disable_on_the_server(server, tmp_path):
    b = ["--bootstrap-server", server.bootstrap]
    epoch, before = _finalized(server.port)
    assert before["group.version"] == 1 and "kraft.version" not in before
    assert _pk(*b, "downgrade", "--feature", "group.version=0", "--dry-run") == (
        0, "group.version can be downgraded to 0.\n", "")
    assert _finalized(server.port) == (epoch, before)  # a dry run changes nothing
    assert _pk(*b, "downgrade", "--feature", "group.version=0", "--feature", "streams.version=0") == (
        0, "group.version was downgraded to 0.\nstreams.version was downgraded to 0.\n", "")
    new_epoch, levels = _finalized(server.port)
    # a level of 0 is no longer listed as finalized; the epoch moved on
    assert new_epoch > epoch and "group.version" not in levels and "streams.version" not in levels
    assert _pk(*b, "disable", "--feature", "share.version") == (0, "share.version was disabled.\n", "")
    assert _pk(*b, "upgrade", "--feature", "kraft.version=1", "--feature", "group.version=1") == (
        0, "group.version was upgraded to 1.\nkraft.version was upgraded to 1.\n", "")
    rc, out, err = _pk(*b, "describe")
    assert _levels(out) == {"eligible.leader.replicas.version": "1", "group.version": "1", "kraft.version": "1",
                            "metadata.version": "4.4-IV2", "share.version": "0", "streams.version": "0",
                            "transaction.version": "2"}
    # every update is refused when one is, with the first refusal's text
    rc, out, err = _pk(*b, "upgrade", "--feature", "streams.version=1", "--feature", "foo.version=1")
    refusal = ALL_FAILED + "Invalid update version 1 for feature foo.version. Local controller 0 does not support " \
                           "this feature."
    assert (rc, out, err) == (1, f"Could not upgrade foo.version to 1. {refusal}\n"
                                 f"Could not upgrade streams.version to 1. {refusal}\n",
                              "2 out of 2 operation(s) failed.\n")
    for args, line in [
        (["upgrade", "--feature", "group.version=2"], "Could not upgrade group.version to 2. " + ALL_FAILED +
         "Invalid update version 2 for feature group.version. Local controller 0 only supports versions 0-1"),
        (["upgrade", "--feature", "transaction.version=1"],
         "Could not upgrade transaction.version to 1. " + ALL_FAILED + "Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature "
         "without setting the upgrade type to either safe or unsafe downgrade."),
        (["disable", "--feature", "kraft.version", "--dry-run"], "Can not disable kraft.version. " + ALL_FAILED +
         "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."),
        (["downgrade", "--feature", "metadata.version=30"], "Could not downgrade metadata.version to 30. " +
         ALL_FAILED + "Unsupported metadata.version downgrade from 33 to 30. Refusing to perform the requested "
         "downgrade because it might delete metadata information."),
        (["downgrade", "--feature", "metadata.version=30", "--unsafe"], "Could not downgrade metadata.version to 30. "
         + ALL_FAILED + "Unsupported metadata.version downgrade from 33 to 30. Unsafe metadata downgrade is not "
         "supported in this version."),
    ]:
        assert _pk(*b, *args) == (1, line + "\n", "1 out of 1 operation(s) failed.\n"), args
    # the levels survive a restart (they live in the data directory)
    levels = _finalized(server.port)
    server.stop()
    server.start()
    assert _finalized(server.port) == levels


def test_update_features_v0_and_v1_answer_per_feature(server):
    client = ProtocolClient(server.port)
    try:
        answer = client.call(ApiKey.UPDATE_FEATURES, 0, {"timeout_ms": 1000, "feature_updates": [
            {"feature": "group.version", "max_version_level": 0, "allow_downgrade": False}]})
        assert answer["error_code"] == 0 and [r["error_code"] for r in answer["results"]] == [95]
        assert "without setting the upgrade type" in answer["results"][0]["error_message"]
        answer = client.call(ApiKey.UPDATE_FEATURES, 1, {"timeout_ms": 1000, "validate_only": True, "feature_updates": [
            {"feature": "group.version", "max_version_level": 0, "upgrade_type": 2}]})
        assert answer["error_code"] == 0 and [(r["feature"], r["error_code"]) for r in answer["results"]] == [
            ("group.version", 0)]
        answer = client.call(ApiKey.UPDATE_FEATURES, 2, {
            "timeout_ms": 1000, "validate_only": False, "feature_updates": [
                {"feature": "group.version", "max_version_level": 1, "upgrade_type": 1},
                {"feature": "group.version", "max_version_level": 1, "upgrade_type": 1}]})
        assert answer["error_code"] == 42  # INVALID_REQUEST: a feature twice
    finally:
        client.close()


def test_the_bundled_engine_shares_the_levels_with_the_server(tmp_path):
    data = str(tmp_path / "data")
    d = ["--data-dir", data]
    assert _pk(*d, "downgrade", "--feature", "transaction.version=1") == (
        0, "transaction.version was downgraded to 1.\n", "")
    assert _levels(_pk(*d, "describe")[1])["transaction.version"] == "1"
    rc, out, err = _pk(*d, "upgrade", "--feature", "group.version=0")
    assert (rc, out, err) == (1, "", "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when "
                                     "the provided maxVersionLevel:0 is < 1.\n")
    server = BrokerProcess(data).start()
    try:
        assert _finalized(server.port)[1]["transaction.version"] == 1
    finally:
        server.stop()


@pytest.mark.parametrize("args, err", [
    (["upgrade"], "You must specify at least one feature to upgrade"),
    (["disable"], "You must specify at least one feature to disable"),
    (["upgrade", "--feature", "x"], "Can't parse feature=level string x: equals sign not found."),
    (["upgrade", "--feature", "group.version=1", "--feature", "group.version=1"],
     "Feature group.version was specified more than once."),
    (["upgrade", "--release-version", "4.4-IV2", "--feature", "group.version=1"],
     "Can not specify `release-version` with other feature flags."),
])
def test_refusals(tmp_path, args, err):
    assert _pk("--data-dir", str(tmp_path / "d"), *args) == (1, "", err + "\n")
