"""Dynamic broker configs kept in ZooKeeper (ZooKeeper mode), as a Kafka 2.8 cluster keeps
them: the source of truth is `/config/brokers/<id>` (one broker's) and
`/config/brokers/<default>` (the cluster-wide default), each {"version":1,"config":{..}}
(Kafka's ConfigEntityZNode).

A change (AdminZkClient.changeBrokerConfig, reached from ZkAdminManager.alterConfigs and
incrementalAlterConfigs) writes the whole znode, then a sequential change notification
`/config/changes/config_change_<seq>` {"version":2,"entity_path":"brokers/<id>"} so that Kafka
2.8 brokers on the same ZooKeeper (DynamicConfigManager, BrokerConfigHandler) apply it too.

A pk broker reads its own and the default znode at start-up (DynamicBrokerConfig.initialize)
and watches both znodes, so it applies a change whoever made it: another pk broker, a Kafka 2.8
broker, or Kafka 2.8's `kafka-configs --zookeeper` (which writes the znode and notification
alike). Watching the znodes rather than the notifications needs no sequence bookkeeping;
the notifications are left for Kafka's brokers, which purge them after 15 minutes.

Same interface as config_store.ConfigStore (get, alter), which keeps them without ZooKeeper.
"""

from __future__ import annotations

import threading

from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError

from ..errors import KafkaError

from ..zk_formats import CONFIG_BROKERS, CONFIG_CHANGES, decode_config, encode_config, encode_config_change


def broker_config_path(resource: str) -> str:
    return f"{CONFIG_BROKERS}/{resource}"


class ZooKeeperBrokerConfigs:
    def __init__(self, zk, resources: tuple[str, ...]):
        """`resources`: the znodes this broker reads (its id and `<default>`), read at once."""
        self.zk = zk
        self._lock = threading.Lock()
        self._values: dict[str, dict[str, str]] = {r: self._read(r) for r in resources}
        self._on_change = None

    def get(self, resource: str) -> dict[str, str]:
        return self._values.get(resource, {})

    def _read(self, resource: str) -> dict[str, str]:
        """AdminZkClient.fetchEntityConfig: a missing znode is no configs."""
        try:
            data, _ = self.zk.get(broker_config_path(resource))
        except NoNodeError:
            return {}
        return decode_config(data)

    def alter(self, resource: str, change) -> dict[str, str]:
        """Blocking (run it off the event loop): the resource's configs become
        `change(current)` (which may raise to refuse), written as AdminZkClient.changeEntityConfig
        writes them: the znode (set, or created), then the change notification."""
        try:
            return self._alter(resource, change)
        except KazooException as exc:  # UNKNOWN_SERVER_ERROR, as Kafka's request fails on a ZooKeeper error
            raise KafkaError(f"{type(exc).__name__}: {exc}") from None

    def _alter(self, resource: str, change) -> dict[str, str]:
        path = broker_config_path(resource)
        with self._lock:  # one alteration of this broker's at a time (Kafka: one request thread's write)
            try:
                data, _ = self.zk.get(path)
            except NoNodeError:
                data = None
            current = decode_config(data)
            new = change(dict(current))
            # a Properties filled in `new`'s order: the znode's then the added names
            # (incrementalAlterConfigs), or the request's (alterConfigs), as ZkAdminManager fills it
            body = encode_config(new)
            try:
                self.zk.set(path, body)
            except NoNodeError:
                try:
                    self.zk.create(path, body, makepath=True)
                except NodeExistsError:  # created meanwhile: KafkaZkClient.setOrCreateEntityConfigs sets it
                    self.zk.set(path, body)
            self.zk.create(f"{CONFIG_CHANGES}/config_change_", encode_config_change(f"brokers/{resource}"),
                           sequence=True, makepath=True)
            self._values[resource] = new
        return new

    def watch(self, on_change) -> None:
        """Call `on_change(resource, configs)` (from kazoo's thread) whenever one of the znodes
        changes; the caller makes them current with `update` (on its own thread, together with
        applying them, so that no request sees a config described and not yet applied)."""
        from kazoo.recipe.watchers import DataWatch

        self._on_change = on_change
        for resource in list(self._values):
            DataWatch(self.zk, broker_config_path(resource), self._watcher(resource))

    def update(self, resource: str, configs: dict[str, str]) -> None:
        self._values[resource] = configs

    def _watcher(self, resource: str):
        def changed(data, _stat):
            new = decode_config(data)
            if new != self._values.get(resource) and self._on_change is not None:
                self._on_change(resource, new)
        return changed
