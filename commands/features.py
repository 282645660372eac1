"""kafka-features describe (Kafka 4.4's FeatureCommand): the feature flags a broker supports
and the cluster finalized (KIP-584), from its ApiVersions answer; on the bundled engine, the
levels pk-server-start reports for it."""

from __future__ import annotations

import os

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


def engine_answer(data_dir: str | None = None) -> dict:
    """The bundled engine's levels: those pk-server-start serves from the data directory."""
    from pk.engine.broker.features import api_versions_fields
    from pk.engine.paths import default_data_dir

    return api_versions_fields(data_dir or default_data_dir())


# --------------------------------------------------------------------------- version-mapping, feature-dependencies
LATEST_PRODUCTION = 33  # 4.4-IV2: what version-mapping maps without --release-version
# Kafka 4.4's other features (its Feature enum, in order): each level with the lowest
# metadata.version that bootstraps it (version-mapping), and what a level requires
# (feature-dependencies); tests/test_oracle_features_tool.py checks both against Kafka's tool.
FEATURE_LEVELS = {
    "kraft.version": {0: 7, 1: 21},
    "transaction.version": {0: 7, 1: 24, 2: 24},
    "group.version": {0: 7, 1: 22},
    "eligible.leader.replicas.version": {0: 7, 1: 26},
    "share.version": {0: 7, 1: 28, 2: 31},
    "streams.version": {0: 7, 1: 29},
}
DEPENDENCIES = {("eligible.leader.replicas.version", 1): [("metadata.version", 23)]}


class FeatureError(Exception):
    """One of kafka-features' own error lines."""


def release_level(release: str | None) -> tuple[int, str]:
    """metadata.version level of a release name (`3.9-IV0`, or `3.9`: that release's last) and
    the name version-mapping shows for it."""
    if release is None:
        return LATEST_PRODUCTION, METADATA_VERSIONS[LATEST_PRODUCTION]
    exact = [lvl for lvl, name in METADATA_VERSIONS.items() if name == release]
    short = [lvl for lvl, name in METADATA_VERSIONS.items() if name.split("-")[0] == release]
    if not exact and not short:
        raise FeatureError(f"Unknown metadata.version '{release}'. Supported metadata.version are: "
                           + ", ".join(METADATA_VERSIONS.values()))
    return (exact or short)[-1], release


def version_mapping_lines(release: str | None) -> list[str]:
    level, name = release_level(release)
    lines = [f"metadata.version={level} ({name})"]
    for feature, levels in FEATURE_LEVELS.items():
        lines.append(f"{feature}={max(lvl for lvl, mv in levels.items() if mv <= level)}")
    return lines


def _parse_feature(text: str) -> tuple[str, int]:
    name, eq, level = text.partition("=")
    if not eq:
        raise FeatureError(f"Can't parse feature=level string {text}: equals sign not found.")
    try:
        value = int(level.strip())
        if not -32768 <= value <= 32767:
            raise ValueError
    except ValueError:
        raise FeatureError(f"Can't parse feature=level string {text}: unable to parse {level} as a short.") from None
    return name.strip(), value


def _describe_level(feature: str, level: int) -> str:
    if feature == "metadata.version":
        return f"metadata.version={level} ({METADATA_VERSIONS[level]})"
    return f"{feature}={level}"


def dependency_lines(features: list[str]) -> list[str]:
    lines = []
    for feature, level in [_parse_feature(f) for f in features]:
        if feature == "metadata.version":
            if level not in METADATA_VERSIONS:
                raise FeatureError(f"Unknown metadata.version {level}")
        elif feature not in FEATURE_LEVELS:
            raise FeatureError(f"Unknown feature: {feature}")
        elif level not in FEATURE_LEVELS[feature]:
            raise FeatureError(f"No feature:{feature} with feature level {level}")
        needs = DEPENDENCIES.get((feature, level))
        if not needs:
            lines.append(f"{_describe_level(feature, level)} has no dependencies.")
        else:
            lines.append(f"{_describe_level(feature, level)} requires:")
            lines += [f"    {_describe_level(f, lvl)}" for f, lvl in needs]
    return lines


# --------------------------------------------------------------------------- kafka-storage feature-dependencies
def _storage_feature(text: str) -> tuple[str, int]:
    """kafka-storage reads `name=level` its own way: split at the first '=', both sides
    trimmed, the level a Java short."""
    if "=" not in text:
        raise FeatureError(f"Invalid feature format: {text}. Expected format: 'feature=version' "
                           "(e.g. 'group.version=1')")
    name, _, level = text.partition("=")
    name, level = name.strip(), level.strip()
    try:
        value = int(level)
        if not -32768 <= value <= 32767 or not level.lstrip("+-").isdigit():
            raise ValueError
    except ValueError:
        raise FeatureError(f"Invalid version format: {level} for feature {name}") from None
    return name, value


def storage_dependency_lines(features: list[str]):
    """kafka-storage feature-dependencies: the same answers as kafka-features', with the
    storage tool's own error texts; each feature's lines come before the next one is read
    (an error after a good feature follows its lines, as Kafka prints them)."""
    for text in features:
        feature, level = _storage_feature(text)
        if feature == "metadata.version":
            if level not in METADATA_VERSIONS:
                raise FeatureError(f"Unknown metadata.version {level}")
        elif feature not in FEATURE_LEVELS:
            raise FeatureError(f"Unknown feature: {feature}")
        elif level not in FEATURE_LEVELS[feature]:
            raise FeatureError(f"Feature level {level} is not supported for feature {feature}")
        needs = DEPENDENCIES.get((feature, level))
        if not needs:
            yield f"{_describe_level(feature, level)} has no dependencies."
        else:
            yield f"{_describe_level(feature, level)} requires:"
            yield from (f"    {_describe_level(f, lvl)}" for f, lvl in needs)


# --------------------------------------------------------------------------- upgrade, downgrade, disable
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3  # FeatureUpdate.UpgradeType
PAST = {"upgrade": "upgraded", "downgrade": "downgraded", "disable": "disabled"}
METADATA_DEPRECATED = " `metadata` flag is deprecated and may be removed in a future release."


def planned_updates(command: str, features: list[str], metadata: str | None = None,
                    release: str | None = None) -> list[tuple[str, int]]:
    """The (feature, level) updates a command asks for, by name, with kafka-features' own
    refusals; disable names features and sets them to 0."""
    updates: dict[str, int] = {}

    def add(name: str, level: int) -> None:
        if name in updates:
            raise FeatureError(f"Feature {name} was specified more than once.")
        updates[name] = level

    if command == "disable":
        for name in features:
            add(name, 0)
    else:
        if release is not None and (features or metadata is not None):
            raise FeatureError("Can not specify `release-version` with other feature flags.")
        if release is not None:
            level = release_level(release)[0]
            add("metadata.version", level)
            for feature, levels in FEATURE_LEVELS.items():
                add(feature, max(lvl for lvl, mv in levels.items() if mv <= level))
        for text in features:
            add(*_parse_feature(text))
        if metadata is not None:
            add("metadata.version", release_level(metadata)[0])
    if not updates:
        raise FeatureError(f"You must specify at least one feature to {command}")
    if command == "upgrade":
        for level in updates.values():
            if level < 1:
                raise FeatureError("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when "
                                   f"the provided maxVersionLevel:{level} is < 1.")
    return sorted(updates.items())


def upgrade_type(command: str, unsafe: bool) -> int:
    if command == "upgrade":
        return UPGRADE
    return UNSAFE_DOWNGRADE if unsafe else SAFE_DOWNGRADE


def update_cluster(client, updates: list[tuple[str, int]], kind: int, dry_run: bool) -> dict[str, str | None]:
    """Admin.updateFeatures: one UpdateFeatures request; {feature: error message or None}."""
    from pk.engine import protocol as kp

    from .backends.kafka_admin import known_error

    answer = client.call(kp.ApiKey.UPDATE_FEATURES, 2, {
        "timeout_ms": 30000, "validate_only": dry_run,
        "feature_updates": [{"feature": name, "max_version_level": level, "upgrade_type": kind,
                             "allow_downgrade": kind != UPGRADE} for name, level in updates]})

    def message(code: int, text: str | None) -> str | None:
        return None if code == 0 else (text or known_error(code).message)

    per_feature = {r["feature"]: message(r["error_code"], r["error_message"]) for r in answer.get("results") or []}
    top = message(answer["error_code"], answer.get("error_message"))
    return {name: top if top is not None else per_feature.get(name) for name, _ in updates}


def update_engine(data_dir: str | None, updates: list[tuple[str, int]], kind: int,
                  dry_run: bool) -> dict[str, str | None]:
    """The same update on the bundled engine's data directory (the levels pk-server-start
    serves from it)."""
    from pk.engine.broker.features import update_levels
    from pk.engine.paths import default_data_dir

    directory = data_dir or default_data_dir()
    os.makedirs(directory, exist_ok=True)
    refusal = update_levels(directory, [(name, level, kind) for name, level in updates], dry_run, 0)
    return {name: refusal for name, _ in updates}


def result_lines(command: str, updates: list[tuple[str, int]], errors: dict[str, str | None],
                 dry_run: bool) -> tuple[list[str], int]:
    """kafka-features' line per feature, and how many failed."""
    lines, failed = [], 0
    for name, level in updates:
        target = "" if command == "disable" else f" to {level}"
        error = errors.get(name)
        if error is None:
            lines.append(f"{name} {'can be' if dry_run else 'was'} {PAST[command]}{target}.")
        else:
            failed += 1
            lines.append(f"{'Can not' if dry_run else 'Could not'} {command} {name}{target}. {error}")
    return lines, failed
