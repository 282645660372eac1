"""A kept set of config resources: resource name -> {config: value}, one JSON file under the
data directory's `.pk/`, so that the configs survive restarts and every process sharing the
directory sees them (Kafka keeps such records in its metadata log).

    {"version": 1, "resources": {"g1": {"consumer.session.timeout.ms": "50000"}}}

Only configs that are set are kept; a resource whose last config is deleted is gone. Changes
are read-modify-write under an flock on the file's `.lock` sibling and replace the file
atomically; readers re-read it when its modification stamp changes. The group configs
(`group-configs.json`), the dynamic broker configs (`broker-configs.json`) and the
client-metrics subscriptions (`client-metrics.json`) are kept so.
"""

from __future__ import annotations

import json
import os

from . import paths
from .fileutil import atomic_write, file_stamp, locked


class ConfigStore:
    def __init__(self, data_dir: str, name: str, what: str = "config"):
        self.what = what  # what the file holds, for the error that says it is malformed
        self.dir = os.path.join(data_dir, paths.PK_DIR)
        self.path = os.path.join(self.dir, f"{name}.json")
        self.lock_path = os.path.join(self.dir, f"{name}.lock")
        self._stamp: tuple | None = None
        self._resources: dict[str, dict[str, str]] = {}

    def resources(self) -> dict[str, dict[str, str]]:
        """Every resource, in the order they were first set (re-read only when the file changed)."""
        stamp = file_stamp(self.path)
        if stamp != self._stamp:
            self._resources = self._read() if stamp is not None else {}
            self._stamp = stamp
        return self._resources

    def get(self, name: str) -> dict[str, str]:
        return self.resources().get(name, {})

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            with open(self.path, "rb") as f:
                data = json.load(f)
            return {str(name): {str(k): str(v) for k, v in configs.items()}
                    for name, configs in data["resources"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"Malformed {self.what} file {self.path}: {exc}") from None

    def alter(self, name: str, change) -> dict[str, str]:
        """Replace one resource's configs by `change(current configs)` (which may raise to
        refuse), as one atomic read-modify-write; returns the new configs."""
        os.makedirs(self.dir, exist_ok=True)
        with locked(self.lock_path):
            resources = self._read()
            configs = change(dict(resources.get(name, {})))
            if configs:
                resources[name] = configs
            else:
                resources.pop(name, None)
            atomic_write(self.path, json.dumps({"version": 1, "resources": resources}, indent=1).encode() + b"\n")
        self._stamp = None  # re-read on next use
        return configs
