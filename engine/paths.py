"""Where things live in a data directory; imported by shell completion, so stdlib only."""

from __future__ import annotations

import os

PK_DIR = ".pk"


def default_data_dir() -> str:
    """$PK_DATA_DIR, else $XDG_DATA_HOME/pk, else ~/.local/share/pk."""
    env = os.environ.get("PK_DATA_DIR")
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "pk")


def topics_dir(data_dir: str) -> str:
    return os.path.join(data_dir, PK_DIR, "topics")


def groups_dir(data_dir: str) -> str:
    return os.path.join(data_dir, PK_DIR, "groups")


def share_groups_dir(data_dir: str) -> str:
    return os.path.join(data_dir, PK_DIR, "share-groups")
