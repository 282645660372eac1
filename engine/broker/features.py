"""The feature levels ApiVersions v3+ reports (KIP-584), as a Kafka 4.4 single-node KRaft
broker reports them: what the broker supports, and what the cluster finalized.

Clients read these to pick protocols: the Java clients look at `group.version` (the KIP-848
consumer protocol) and `transaction.version` (KIP-890's transactions v2), so a level here
is a promise about the APIs the broker serves.
"""

from __future__ import annotations

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

# Kafka answers the metadata log offset of the last feature change; pk's finalized levels
# never change, so their epoch is constant.
FINALIZED_EPOCH = 1


def api_versions_fields() -> dict:
    """The ApiVersions v3+ fields about features."""
    return {
        "supported_features": [{"name": n, "min_version": lo, "max_version": hi}
                                for n, (lo, hi) in SUPPORTED.items()],
        "finalized_features_epoch": FINALIZED_EPOCH,
        "finalized_features": [{"name": n, "min_version_level": v, "max_version_level": v}
                               for n, v in FINALIZED.items()],
        "zk_migration_ready": False,
    }
