"""Live values for shell completion: topic and group names straight from the data directory.

Completion runs the tool once per <TAB>, so this reads directory listings only: no engine,
no metadata parsing, nothing heavy.
"""

from __future__ import annotations

import json
import os

from click.shell_completion import CompletionItem

from pk.engine.paths import default_data_dir, groups_dir, share_groups_dir, topics_dir


def _data_dir(ctx) -> str:
    given = ctx.params.get("data_dir") if ctx is not None else None
    return given or _profile_data_dir(ctx) or default_data_dir()


def _profile_data_dir(ctx) -> str | None:
    """The data directory of the profile the line would use (--profile, $PK_PROFILE, the
    current one), when that is a data-dir profile and the line names no cluster."""
    if ctx is None or ctx.params.get("bootstrap_server"):
        return None
    from pk.commands import profiles

    try:
        name = profiles.chosen(ctx.meta.get("pk.profile"))
        return profiles.load(name, warn=False).data_dir if name else None
    except profiles.ProfileError:
        return None


def complete_topics(ctx, _param, incomplete: str) -> list[CompletionItem]:
    try:
        names = os.listdir(topics_dir(_data_dir(ctx)))
    except OSError:
        return []
    return [CompletionItem(n[:-5]) for n in sorted(names)
            if n.endswith(".json") and n.startswith(incomplete)]


def complete_groups(ctx, _param, incomplete: str) -> list[CompletionItem]:
    """The engine's consumer groups and share groups (each one file of its folder)."""
    data_dir = _data_dir(ctx)
    found = set()
    for folder in (groups_dir(data_dir), share_groups_dir(data_dir)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    group = json.loads(f.read())["group_id"]
            except (OSError, ValueError, KeyError):
                continue
            if group.startswith(incomplete):
                found.add(group)
    return [CompletionItem(g) for g in sorted(found)]


def complete_profiles(_ctx, _param, incomplete: str) -> list[CompletionItem]:
    """Saved profile names (pk-profile), from the profile directory's listing."""
    from pk.commands.profiles import names

    return [CompletionItem(n) for n in names() if n.startswith(incomplete)]
