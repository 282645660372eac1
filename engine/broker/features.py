"""The feature levels ApiVersions v3+ reports (KIP-584), as a Kafka 4.4 single-node KRaft
broker reports them: what the broker supports, and what the cluster finalized; and
UpdateFeatures (API 57, kafka-features upgrade/downgrade/disable), which changes the finalized
levels within the supported ranges, as Kafka 4.4's controller validates them.

Clients read these to pick protocols: the Java clients look at `group.version` (the KIP-848
consumer protocol) and `transaction.version` (KIP-890's transactions v2), so a level here
is a promise about the APIs the broker serves.

Finalized levels changed by UpdateFeatures are kept in the data directory's
`finalized-features.json` ({"epoch": N, "levels": {name: level}}); without it, the levels of
a freshly formatted Kafka 4.4 cluster (FINALIZED) apply.
"""

from __future__ import annotations

import json
import logging
import os

# name -> (min, max) supported: Kafka 4.4's order in its ApiVersions answer.
SUPPORTED = {
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 33),
    "share.version": (0, 2),
    "streams.version": (0, 1),
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
}

# name -> finalized level: a freshly formatted Kafka 4.4 cluster's (kraft.version 0 is
# not listed, as Kafka omits finalized levels of 0).
FINALIZED = {
    "group.version": 1,
    "streams.version": 1,
    "transaction.version": 2,
    "eligible.leader.replicas.version": 1,
    "share.version": 2,
    "metadata.version": 33,
}

# Kafka answers the metadata log offset of the last feature change; pk counts the changes
# from this epoch (the levels a data directory starts with).
FINALIZED_EPOCH = 1
FILE_NAME = "finalized-features.json"
log = logging.getLogger("pk.broker")


def load_levels(data_dir: str | None) -> tuple[int, dict[str, int]]:
    """(epoch, finalized levels) of a data directory (FINALIZED when it never changed them)."""
    if data_dir is not None:
        try:
            with open(os.path.join(data_dir, FILE_NAME)) as f:
                stored = json.load(f)
            return int(stored["epoch"]), {str(k): int(v) for k, v in stored["levels"].items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("Ignoring unreadable %s in %s: %s", FILE_NAME, data_dir, exc)
    return FINALIZED_EPOCH, dict(FINALIZED)


# A ZooKeeper-mode cluster (Kafka 2.8's model) has no KIP-890 transaction version 2: there a
# partition's leader is often not the transaction's coordinator and cannot add the partition to
# the transaction for the client (Produce v12's implicit add), so clients must keep sending
# AddPartitionsToTxn. Transaction version 1 is the highest level such a cluster reports.
ZOOKEEPER_MODE_CAPS = {"transaction.version": 1}


def api_versions_fields(data_dir: str | None = None, zookeeper_mode: bool = False) -> dict:
    """The ApiVersions v3+ fields about features (a level of 0 is not listed as finalized,
    as Kafka leaves it out)."""
    epoch, levels = load_levels(data_dir)
    if zookeeper_mode:
        levels = {n: min(v, ZOOKEEPER_MODE_CAPS.get(n, v)) for n, v in levels.items()}
    return {
        "supported_features": [{"name": n, "min_version": lo, "max_version": hi}
                                for n, (lo, hi) in SUPPORTED.items()],
        "finalized_features_epoch": epoch,
        "finalized_features": [{"name": n, "min_version_level": v, "max_version_level": v}
                               for n, v in levels.items() if v > 0],
        "zk_migration_ready": False,
    }


# --------------------------------------------------------------------------- UpdateFeatures
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
# features whose level can never go down (metadata.version has its own texts)
NO_DOWNGRADE = {"kraft.version"}
ALL_FAILED = "The update failed for all features since the following feature had an error: "


def _java_string_hash(text: str) -> int:
    """String.hashCode(), as an unsigned 32-bit value."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def _hash_order(names: list[str]) -> list[str]:
    """The order a small Java HashMap of these names iterates in: Kafka's controller checks
    the updates in that order, and the first error fails them all."""
    def bucket(name: str) -> int:
        h = _java_string_hash(name)
        return (h ^ (h >> 16)) & 15 if len(names) <= 12 else (h ^ (h >> 16)) & 31
    return sorted(names, key=bucket)


def check_update(feature: str, level: int, upgrade_type: int, current: int | None, node_id: int) -> str | None:
    """Why the controller refuses one update, or None."""
    invalid = f"Invalid update version {level} for feature {feature}. "
    if feature not in SUPPORTED:  # (removing one is "not found", setting one "not supported")
        if level == 0:
            return invalid + f"Feature {feature} not found."
        return invalid + f"Local controller {node_id} does not support this feature."
    lo, hi = SUPPORTED[feature]
    below_range = level < lo and not (level == 0 and feature != "metadata.version")
    if level > hi or below_range:
        return invalid + f"Local controller {node_id} only supports versions {lo}-{hi}"
    current = current or 0
    if level > current and upgrade_type != UPGRADE:
        return invalid + "Can't downgrade to a newer version."
    if level >= current:
        return None
    if upgrade_type == UPGRADE:
        return invalid + ("Can't downgrade the version of this feature without setting the upgrade type to either "
                          "safe or unsafe downgrade.")
    if feature == "metadata.version":
        why = ("Refusing to perform the requested downgrade because it might delete metadata information."
               if upgrade_type == SAFE_DOWNGRADE else "Unsafe metadata downgrade is not supported in this version.")
        return f"Unsupported metadata.version downgrade from {current} to {level}. {why}"
    if feature in NO_DOWNGRADE:
        return invalid + "Can't downgrade the version of this feature."
    return None


def update_levels(data_dir: str, updates: list[tuple[str, int, int]], validate_only: bool,
                  node_id: int) -> str | None:
    """Apply [(feature, level, upgrade type)] to a data directory's finalized levels, all or
    none: the controller checks them in its HashMap's order and the first refusal (returned,
    with Kafka's prefix) refuses them all; validate_only changes nothing."""
    epoch, levels = load_levels(data_dir)
    by_name = {name: (level, kind) for name, level, kind in updates}
    for name in _hash_order(list(by_name)):
        level, kind = by_name[name]
        refusal = check_update(name, level, kind, levels.get(name), node_id)
        if refusal is not None:
            return ALL_FAILED + refusal
    if not validate_only:
        from ..fileutil import atomic_write

        levels.update({name: level for name, (level, _) in by_name.items()})
        atomic_write(os.path.join(data_dir, FILE_NAME), json.dumps({"epoch": epoch + 1, "levels": levels}).encode())
        log.info("Finalized features updated: %s", {name: level for name, (level, _) in by_name.items()})
    return None


class FeatureHandlers:
    """UpdateFeatures (API 57) on pk-server-start's data directory."""

    def __init__(self, broker):
        from ..protocol import ApiKey

        self.broker = broker
        broker.register(ApiKey.UPDATE_FEATURES, self.update_features)

    async def update_features(self, request) -> dict:
        from .. import acls
        from ..protocol import errors as E

        body, version = request.body, request.api_version
        names = [u["feature"] for u in body["feature_updates"]]
        error, message = E.NONE, None
        if not self.broker.guard.allows_cluster(request, acls.ALTER):
            error = E.CLUSTER_AUTHORIZATION_FAILED
        elif len(set(names)) != len(names):
            error, message = E.INVALID_REQUEST, "Feature updates contain a duplicate feature."
        else:
            updates = [(u["feature"], u["max_version_level"], u["upgrade_type"] if version >= 1 else
                        (SAFE_DOWNGRADE if u["allow_downgrade"] else UPGRADE)) for u in body["feature_updates"]]
            try:
                message = update_levels(self.broker.engine.data_dir, updates,
                                        version >= 1 and body["validate_only"], self.broker.node_id)
            except OSError as exc:
                log.warning("UpdateFeatures failed: %s", exc)
                message = f"Unable to store the finalized features: {exc.strerror or exc}"
                error = E.UNKNOWN_SERVER_ERROR
            else:
                error = E.NONE if message is None else E.INVALID_UPDATE_VERSION
        answer = {"throttle_time_ms": 0, "error_code": error, "error_message": message}
        if version < 2:  # v0-1 answer a refused update per feature (v2 dropped the list)
            answer["results"] = [{"feature": n, "error_code": error, "error_message": message} for n in names]
            if error == E.INVALID_UPDATE_VERSION:
                answer.update(error_code=E.NONE, error_message=None)
        return answer
