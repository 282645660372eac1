"""kafka-features describe (Kafka 4.4's FeatureCommand): the feature flags a broker supports
and the cluster finalized (KIP-584), from its ApiVersions answer; on the bundled engine, the
levels pk-server-start reports for it."""

from __future__ import annotations

# MetadataVersion feature levels -> release versions (Kafka 4.4's MetadataVersion enum;
# tests/test_oracle_admin_tools.py checks them with kafka-features version-mapping)
METADATA_VERSIONS = {
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1",
    14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0",
    21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1",
    28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2", 34: "4.5-IV0",
}


def level_text(feature: str, level: int) -> str:
    if feature == "metadata.version" and level in METADATA_VERSIONS:
        return METADATA_VERSIONS[level]
    return str(level)


def describe_lines(answer: dict) -> list[str]:
    """One line per supported feature, by name; a feature the cluster did not finalize is at
    level 0."""
    finalized = {f["name"]: f["max_version_level"] for f in answer.get("finalized_features") or []}
    epoch = answer.get("finalized_features_epoch", -1)
    lines = []
    for f in sorted(answer.get("supported_features") or [], key=lambda f: f["name"]):
        name = f["name"]
        lines.append(f"Feature: {name:<40}  SupportedMinVersion: {level_text(name, f['min_version']):<15}  "
                     f"SupportedMaxVersion: {level_text(name, f['max_version']):<15}  "
                     f"FinalizedVersionLevel: {level_text(name, finalized.get(name, 0)):<15}  Epoch: {epoch}")
    return lines


def engine_answer() -> dict:
    from pk.engine.broker.features import api_versions_fields

    return api_versions_fields()
