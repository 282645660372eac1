"""ZooKeeper mode: what a Kafka 2.8 broker (and, when it wins the election, its controller)
does in ZooKeeper, for a pk-server-start started with `zookeeper.connect`.

Start-up (blocking, before the engine opens the data directory; see cli/server_start.py):
  connect within zookeeper.connection.timeout.ms, make sure the persistent paths exist, and
  get the cluster id: /cluster/id when present (a meta.properties with another id is fatal, as
  in Kafka), else meta.properties' id when the data directory has one (pk: an existing pk data
  directory can become a ZooKeeper broker), else a new one. A fresh data directory gets a
  meta.properties with that id.
Then (ZooKeeperSync.start, on the event loop, once the socket listens):
  register the ephemeral /brokers/ids/<id> (BrokerIdZNode v5), try to become the controller
  (ephemeral /controller, /controller_epoch), and reconcile.

Reconciling (Broker.tick() every second, when a watch fired, the local topics changed, or
every RESYNC_S seconds): the znodes under /brokers/topics are the source of truth.
  - a topic in ZooKeeper and not in the engine is created with the znode's assignment (replicas
    of other brokers are kept as listed), its topic_id if the znode has one, and the overrides
    of /config/topics/<t>;
  - a longer assignment adds the new partitions; a changed /config/topics/<t> replaces the
    topic's overrides;
  - /admin/delete_topics/<t> deletes the topic from the engine and (the controller) removes
    /brokers/topics/<t>, /config/topics/<t> and then the marker, as a 2.8 controller with
    delete.topic.enable=true does;
  - the controller keeps /brokers/topics/<t>/partitions/<p>/state (Kafka 2.8's JSON): a new
    partition gets leader = its first live replica and isr = its live replicas; when a broker's
    registration goes, the partitions it led move to their first live ISR member (leader epoch
    + 1, the lost broker out of the ISR), or to no leader (-1) when none is left (unclean
    leader election off); a lost follower leaves the ISR; a returning ISR member of a
    leaderless partition leads it again. Kafka 4.4's eligible leader replicas (KIP-966) ride
    along in the same znode (elr.py has the rules). Every write is conditional on the znode's
    version;
  - every broker reads the state znodes (watched) and hands them to replication.py, which
    makes it leader or follower of its replicas; the leader itself writes its ISR changes
    (conditionally, plus an /isr_change_notification sequential znode);
  - every broker must use the same topic id: a topic created through the Admin API is
    published with its topic_id (as a 2.8 broker does); for a znode without one (kafka-topics
    --zookeeper writes none) each broker derives it from the cluster id, the name and the
    znode's creation transaction id (czxid), so they agree without writing to the znode;
  - changes made through the Admin API (CreateTopics, CreatePartitions, DeleteTopics, configs)
    land in the engine first and are written back to ZooKeeper here (a deletion as the marker,
    which the next pass carries out).
  - the internal topics (__consumer_offsets, __transaction_state) are created in ZooKeeper,
    replicated like any topic, when FindCoordinator first needs one (`ensure_internal_topic`,
    Kafka's createInternalTopic); the controller gives their partitions leaders and the
    coordinators follow those leaders (docs/replication.md).
kazoo's watches only flag work (from kazoo's threads); ZooKeeper calls run in the default
executor and every engine change happens on the event loop. After a session loss kazoo
reconnects with a new session: the broker registers again and runs for controller again.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass

from kazoo.exceptions import (BadVersionError, ConnectionLoss, KazooException, NodeExistsError, NoNodeError,
                              SessionExpiredError)

from ..zk_formats import (
    BROKER_IDS,
    ISR_CHANGE_NOTIFICATION,
    CLUSTER_ID,
    CONFIG_CHANGES,
    CONFIG_TOPICS,
    CONTROLLER,
    CONTROLLER_EPOCH,
    DELETE_TOPICS,
    PERSISTENT_PATHS,
    TOPICS,
    ReplicaAssignment,
    decode_config,
    decode_topic_assignment,
    encode_broker,
    encode_cluster_id,
    encode_config,
    encode_config_change,
    encode_controller,
    encode_isr_change,
    decode_partition_state,
    encode_partition_state,
    encode_topic_assignment,
    partition_state_path,
    topic_path,
)

from .. import topic_config, topic_names
from ..errors import KafkaError, TopicDeletionDisabledError, UnknownTopicOrPartitionError
from ..fileutil import atomic_write, locked
from ..metadata import TopicMetadata, new_kafka_uuid
from ..replica_assignment import BrokerMetadata, assign_replicas_to_brokers
from . import controller, elr, features
from .dynamic_config import DEFAULT_NAME
from .producer_state import ZooKeeperBlocks
from .replication import PartitionState, ReplicaManager
from .zk_broker_configs import ZooKeeperBrokerConfigs

log = logging.getLogger("kafka.server.KafkaServer")
ctl_log = logging.getLogger("kafka.controller.KafkaController")

RESYNC_S = 10.0
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"  # Kafka's LogManager marker: the logs were closed cleanly


class ZooKeeperStartupError(Exception):
    """Start-up failed: str() is the exception line Kafka prints after its fatal log line."""

    def report(self, logger: logging.Logger) -> None:
        logger.error("Fatal error during KafkaServer startup. Prepare to shutdown\n%s", self)


# --------------------------------------------------------------------------- snapshots
@dataclass
class ZkTopic:
    assignment: dict[int, list[int]]
    topic_id: str | None
    configs: dict[str, str]


@dataclass
class Known:
    """A topic this broker has seen both in ZooKeeper and in its engine, with the overrides
    each side had when they last agreed."""
    zk_configs: dict[str, str]
    local_configs: dict[str, str]


class ZooKeeperSync:
    def __init__(self, config, data_dir: str):
        self.config = config
        self.node_id = config.node_id
        self.connect_string = config.get("zookeeper.connect")
        self.data_dir = data_dir
        self.zk = None
        self.cluster_id: str | None = None
        self.broker = None
        self.engine = None
        self.is_controller = False
        self.controller_epoch = 0
        self._dirty = threading.Event()
        self._session_lost = threading.Event()
        self._known: dict[str, Known] = {}
        self._watched: set[str] = set()
        self.replication: ReplicaManager | None = None
        self.controller_id = -1
        self._loop = None
        self._local_sig: dict[str, int] = {}
        self._next_resync = 0.0
        self._busy = False
        self._again = False
        self._next_rebalance: float | None = None
        self._closed = False
        self.racks: dict[int, str | None] = {}  # the registered brokers' broker.rack
        self._without_id: dict[str, int] = {}  # topic znodes read without a topic id: their versions
        self._zk_reassignment: int | None = None  # czxid of the /admin/reassign_partitions started
        self.clean_shutdown = True  # whether the last run ended with the logs closed (connect() reads it)
        self._min_isr_seen: dict[str, str | None] = {}  # the controller's: each topic's min.insync.replicas
        self.broker_configs: ZooKeeperBrokerConfigs | None = None  # /config/brokers/<id> and <default>

    # ------------------------------------------------------------------ start-up (blocking)
    @classmethod
    def connect(cls, config, data_dir: str) -> "ZooKeeperSync":
        """Connect, create the top-level paths, settle the cluster id (meta.properties)."""
        sync = cls(config, data_dir)
        sync.clean_shutdown = sync._take_clean_shutdown_marker()
        sync._connect()
        try:
            sync._ensure_paths()
            sync._settle_cluster_id()
            # DynamicBrokerConfig.initialize: this broker's and the default's dynamic configs
            sync.broker_configs = ZooKeeperBrokerConfigs(sync.zk, (str(sync.node_id), DEFAULT_NAME))
        except ZooKeeperStartupError:
            sync.close()
            raise
        except KazooException as exc:
            sync.close()
            raise ZooKeeperStartupError(f"org.apache.zookeeper.KeeperException: {type(exc).__name__}") from None
        return sync

    def _connect(self) -> None:
        import warnings

        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        quiet = logging.getLogger("pk.zookeeper.kazoo")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        timeout = self.config.get_int("zookeeper.connection.timeout.ms") / 1000
        session = int(self.config.values.get("zookeeper.session.timeout.ms") or 18000) / 1000
        log.info("Connecting to zookeeper on %s", self.connect_string)
        try:
            self.zk = KazooClient(hosts=self.connect_string, timeout=session, logger=quiet)
        except (ValueError, KazooException) as exc:
            raise ZooKeeperStartupError(f"java.lang.IllegalArgumentException: {exc}") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.zk.start(timeout=timeout)
        except KazooTimeoutError:
            self.close()
            raise ZooKeeperStartupError("kafka.zookeeper.ZooKeeperClientTimeoutException: Timed out waiting for "
                                        "connection while in state: CONNECTING") from None
        self.zk.add_listener(self._state_listener)
        chroot = self.zk.chroot
        if chroot and chroot != "/":
            # Kafka 2.8 creates a missing chroot path before the top-level paths.
            self.zk.ensure_path("/")

    def _ensure_paths(self) -> None:
        for path in PERSISTENT_PATHS:
            self.zk.ensure_path(path)

    def _take_clean_shutdown_marker(self) -> bool:
        """Whether the previous run ended cleanly (its marker is there), and the marker goes, as
        Kafka's LogManager deletes it at start-up. A new data directory counts as unclean: a
        broker back with an empty disk must not be elected from an ELR."""
        path = os.path.join(self.data_dir, CLEAN_SHUTDOWN)
        try:
            os.remove(path)
            return True
        except FileNotFoundError:
            return False

    def mark_clean_shutdown(self) -> None:
        """After the logs were flushed and closed: the next start is a clean one."""
        try:
            atomic_write(os.path.join(self.data_dir, CLEAN_SHUTDOWN), b"")
        except OSError as exc:
            log.warning("Writing %s failed: %s", CLEAN_SHUTDOWN, exc)

    def _read_meta(self) -> dict[str, str] | None:
        path = os.path.join(self.data_dir, META_PROPERTIES)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            return None
        props = {}
        for line in lines:
            line = line.strip()
            if line and not line.startswith(("#", "!")) and "=" in line:
                key, value = line.split("=", 1)
                props[key.strip()] = value.strip()
        return props

    def _settle_cluster_id(self) -> None:
        meta = self._read_meta()
        stored = (meta or {}).get("cluster.id")
        try:
            data, _ = self.zk.get(CLUSTER_ID)
            cluster_id = json.loads(data)["id"]
        except NoNodeError:
            cluster_id = stored or new_kafka_uuid()
            try:
                self.zk.create(CLUSTER_ID, encode_cluster_id(cluster_id), makepath=True)
            except NodeExistsError:  # another broker was quicker: createOrGetClusterId
                data, _ = self.zk.get(CLUSTER_ID)
                cluster_id = json.loads(data)["id"]
        except (ValueError, KeyError, TypeError):
            raise ZooKeeperStartupError(f"org.apache.kafka.common.KafkaException: Failed to parse the cluster id "
                                        f"json {data!r}") from None
        log.info("Cluster ID = %s", cluster_id)
        if stored is not None and stored != cluster_id:
            raise ZooKeeperStartupError(
                f"kafka.common.InconsistentClusterIdException: The Cluster ID {cluster_id} doesn't match stored "
                f"clusterId Some({stored}) in meta.properties. The broker is trying to join the wrong cluster. "
                f"Configured zookeeper.connect may be wrong.")
        if meta is None:
            os.makedirs(self.data_dir, exist_ok=True)
            stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
            atomic_write(os.path.join(self.data_dir, META_PROPERTIES),
                         f"#\n#{stamp}\nbroker.id={self.node_id}\nversion=0\ncluster.id={cluster_id}\n".encode())
        self.cluster_id = cluster_id

    # ------------------------------------------------------------------ on the event loop
    async def start(self, broker) -> None:
        """Register, run for controller, set the watches, and take the topics from ZooKeeper."""
        self.broker = broker
        self.engine = broker.engine
        self._loop = asyncio.get_running_loop()
        self.replication = broker.replication = ReplicaManager(broker, self)
        # producer ids unique across the cluster (Kafka 2.8's blocks in ZooKeeper)
        broker.data.producers.ids.use_zookeeper(ZooKeeperBlocks(lambda: self.zk, self.node_id))
        if not self.clean_shutdown:
            await self._while_reconnecting(lambda: self._run(self._leave_elrs))
        await self._while_reconnecting(lambda: self._run(self._register))
        await self._while_reconnecting(lambda: self._run(self._elect))
        # The watches fire as they are set, and the listener may already take requests: the
        # first pass holds the guard tick() takes, so that no second pass runs beside it (two
        # passes could both find a just-created topic only here; the one losing the race to
        # publish it deleted the local copy, and the other then asked ZooKeeper to delete it).
        self._busy = True
        try:
            await self._while_reconnecting(lambda: self._run(self._set_watches))
            await self._while_reconnecting(self._reconcile)
        finally:
            self._end_pass()

    async def _while_reconnecting(self, step) -> None:
        """A start-up step, run again after a lost connection (kazoo reconnects within the
        session) as Kafka's ZooKeeperClient waits up to zookeeper.connection.timeout.ms for the
        connection and resends. A lost answer is harmless: the steps find their own writes."""
        deadline = time.monotonic() + self.config.get_int("zookeeper.connection.timeout.ms") / 1000
        while True:
            try:
                return await step()
            except (ConnectionLoss, SessionExpiredError):
                if time.monotonic() > deadline:
                    raise ZooKeeperStartupError("kafka.zookeeper.ZooKeeperClientTimeoutException: Timed out waiting "
                                                "for connection while in state: CONNECTING") from None
                await asyncio.sleep(0.1)

    async def tick(self) -> None:
        if self._closed or self._busy:
            return
        self._busy = True
        try:
            if self._session_lost.is_set() and self.zk.connected:
                self._session_lost.clear()
                log.info("[KafkaServer id=%d] ZooKeeper session re-established: registering again", self.node_id)
                try:
                    await self._run(self._register)
                except (KazooException, ZooKeeperStartupError) as exc:
                    log.warning("Re-registering broker %d failed (%s); retrying", self.node_id, exc)
                    self._session_lost.set()
                    return
                self._dirty.set()
            if not self.zk.connected:
                return
            # Take the flag before acting on it: a watch firing from here on (say /controller
            # deleted while _elect still saw it) sets it again for the next tick, never lost.
            dirty = self._dirty.is_set()
            self._dirty.clear()
            if not self.is_controller and dirty:
                await self._run(self._elect)
            sig = self._local_signature()
            if dirty or sig != self._local_sig or time.monotonic() >= self._next_resync:
                await self._reconcile()
            await self.replication.tick()
        except KazooException as exc:
            log.warning("ZooKeeper sync failed (%s: %s); retrying", type(exc).__name__, exc)
            self._dirty.set()
        finally:
            self._end_pass()

    def _end_pass(self) -> None:
        """Release the one-pass-at-a-time guard; a watch that fired during the pass gets its
        pass right after."""
        self._busy = False
        if self._again:
            self._again = False
            asyncio.get_running_loop().call_soon(self._tick_soon)

    async def controlled_shutdown(self) -> None:
        """Kafka 2.8's controlled shutdown, through ZooKeeper (Kafka 4.4's schemas have no
        ControlledShutdown request): the registration goes first, so the controller moves this
        broker's leaderships to other ISR members at once (no session timeout to wait out);
        the broker keeps serving until no partition with another live ISR member names it
        leader, or controlled.shutdown.max.retries x controlled.shutdown.retry.backoff.ms
        passed (Kafka's bound on its retries), then stops."""
        if self._closed or self.zk is None or not self.zk.connected or self.replication is None:
            return
        if self._setting("controlled.shutdown.enable", "true").lower() != "true":
            return
        bound = (int(self._setting("controlled.shutdown.max.retries", "3"))
                 * int(self._setting("controlled.shutdown.retry.backoff.ms", "5000")) / 1000)
        log.info("[KafkaServer id=%d] Starting controlled shutdown", self.node_id)
        try:
            await self._run(self._deregister)
        except KazooException as exc:
            log.warning("[KafkaServer id=%d] Controlled shutdown: deregistering failed (%s)", self.node_id, exc)
            return
        self._flag()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bound
        while self._still_leading():
            if loop.time() >= deadline:
                log.warning("[KafkaServer id=%d] Controlled shutdown: still leading %s after %.0f s; stopping anyway",
                            self.node_id, ", ".join(f"{t}-{p}" for t, p in self._still_leading()), bound)
                return
            await asyncio.sleep(0.05)  # the watches bring the new states (ticks run meanwhile)
        log.info("[KafkaServer id=%d] Controlled shutdown succeeded", self.node_id)

    def _still_leading(self) -> list[tuple[str, int]]:
        """The partitions this broker leads that another live ISR member could take over."""
        live = self.replication.brokers
        return [key for key, s in self.replication.states.items()
                if s.leader == self.node_id and any(r != self.node_id and r in live for r in s.isr)]

    def _deregister(self) -> None:
        try:
            self.zk.delete(f"{BROKER_IDS}/{self.node_id}")
        except NoNodeError:
            pass

    def close(self) -> None:
        self._closed = True
        if self.replication is not None:
            self.replication.close()
        if self.zk is not None:
            try:
                self.zk.stop()
                self.zk.close()
            except Exception:
                pass

    async def _run(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    # ------------------------------------------------------------------ kazoo side
    def _state_listener(self, state) -> None:
        from kazoo.protocol.states import KazooState

        if state == KazooState.LOST:
            self._session_lost.set()
            self.is_controller = False
        self._dirty.set()

    def _flag(self, *_args) -> None:
        self._dirty.set()
        loop = self._loop
        if loop is not None and not self._closed:
            try:  # act now rather than at the next second's tick (elections, ISR changes)
                loop.call_soon_threadsafe(self._tick_soon)
            except RuntimeError:
                pass  # the loop is closing

    def wake(self) -> None:
        """Run a pass now (from the event loop): a handler changed what ZooKeeper must learn."""
        self._flag()

    def _tick_soon(self) -> None:
        if self._closed or self.broker is None:
            return
        if self._busy:
            # A watch fired during a pass: run again right after it rather than at the next
            # second's tick (other brokers act on a new assignment or leader within milliseconds).
            self._again = True
            return
        asyncio.ensure_future(self.tick())

    def _set_watches(self) -> None:
        from kazoo.recipe.watchers import ChildrenWatch, DataWatch

        for path in (TOPICS, DELETE_TOPICS, BROKER_IDS):
            ChildrenWatch(self.zk, path, self._flag)
        DataWatch(self.zk, CONTROLLER, self._flag)
        DataWatch(self.zk, controller.REASSIGN_PARTITIONS, self._flag)

    def _watch_topic(self, name: str, partitions=()) -> None:
        from kazoo.recipe.watchers import DataWatch

        paths = [topic_path(name), f"{CONFIG_TOPICS}/{name}"] + [partition_state_path(name, p) for p in partitions]
        for path in paths:
            if path not in self._watched:
                self._watched.add(path)
                DataWatch(self.zk, path, self._flag)

    def _leave_elrs(self) -> None:
        """Back from an unclean shutdown (or with a new data directory): out of every ISR and
        ELR before registering, so that no election picks this broker's possibly shorter log.
        Kafka 4.4's controller does it when the broker registers with another broker epoch than
        the one its clean shutdown recorded (ReplicationControlManager.handleBrokerUncleanShutdown);
        pk's registration znode is Kafka 2.8's, with no room for that epoch, so the broker makes
        the same change itself, conditional on each state's version, with the same rules (elr.py)."""

        live = {int(c) for c in self._children(BROKER_IDS) if c.isdigit()} - {self.node_id}
        enabled = self.elr_enabled()
        for name in self._children(TOPICS):
            try:
                parsed = decode_topic_assignment(self._get(topic_path(name)))
            except (ValueError, TypeError):
                continue
            zt = ZkTopic({p: a.replicas for p, a in parsed.partitions.items()}, None,
                         decode_config(self._get(f"{CONFIG_TOPICS}/{name}")))
            min_isr, unclean, _ = self._elr_settings(name, zt, enabled)
            for p, replicas in zt.assignment.items():
                path = partition_state_path(name, p)
                for _attempt in range(5):
                    try:
                        data, stat = self.zk.get(path)
                    except NoNodeError:
                        break
                    current = decode_partition_state(data)
                    if current is None or (self.node_id not in current.isr and self.node_id not in current.elr):
                        break
                    before = elr.Partition(tuple(replicas), current.leader, current.isr, current.elr,
                                           current.last_known_elr)
                    after = elr.change(before, [r for r in current.isr if r != self.node_id], min_isr,
                                       lambda r: r in live, election=elr.UNCLEAN if unclean else elr.ONLINE,
                                       enabled=enabled, unclean_shutdown=(self.node_id,))
                    bump = after.leader != current.leader or any(r not in after.isr for r in current.isr)
                    kept = [r for r in current.zk_isr if r != self.node_id] or list(current.zk_isr[:1])
                    state = encode_partition_state(after.leader, current.leader_epoch + int(bump), list(after.isr),
                                                   current.controller_epoch, after.elr, after.last_known_elr,
                                                   kept_isr=kept)
                    try:
                        self.zk.set(path, state, version=stat.version)
                    except BadVersionError:
                        continue
                    except NoNodeError:
                        break
                    log.info("[KafkaServer id=%d] Unclean shutdown: out of the ISR and ELR of %s-%d (isr %s, "
                             "elr %s)", self.node_id, name, p, list(after.isr), list(after.elr))
                    break

    def _register(self) -> None:
        """KafkaZkClient.registerBroker: the ephemeral /brokers/ids/<id>, owned by this session."""
        host, port = self.broker.host, self.broker.port
        path = f"{BROKER_IDS}/{self.node_id}"
        data = encode_broker(self.node_id, host, port, self.config.get("broker.rack"))
        try:
            self.zk.create(path, data, ephemeral=True, makepath=True)
        except NodeExistsError:
            try:
                _, stat = self.zk.get(path)
            except NoNodeError:
                return self._register()
            session = self.zk.client_id[0] if self.zk.client_id else 0
            if stat.ephemeralOwner != session:
                raise ZooKeeperStartupError(
                    f"org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists "
                    f"(Error while creating ephemeral at {path}, node already exists and owner "
                    f"'{stat.ephemeralOwner}' does not match current session '{session}')") from None
            self.zk.set(path, data)
        log.info("Registered broker %d at path %s with addresses: PLAINTEXT://%s:%d", self.node_id, path, host, port)

    def _elect(self) -> None:
        """KafkaController.elect: become the controller unless there is one. As Kafka's
        registerControllerAndIncrementControllerEpoch, /controller is created and
        /controller_epoch moved on in one ZooKeeper transaction (checked against the epoch's
        version): nobody ever sees the new controller with the old epoch."""
        session = self.zk.client_id[0] if self.zk.client_id else 0
        try:
            data, stat = self.zk.get(CONTROLLER)
            if stat.ephemeralOwner != session or self.is_controller:
                self.is_controller = stat.ephemeralOwner == session
                return
            # our own znode, whose transaction was answered into a lost connection: it moved the
            # epoch too
            epoch = int(self.zk.get(CONTROLLER_EPOCH)[0] or b"0")
        except NoNodeError:
            epoch = self._register_controller()
            if epoch is None:
                self.is_controller = False
                return
        self.controller_epoch = epoch
        self.is_controller = True
        self._zk_reassignment = None  # a new controller starts a pending znode's moves again
        ctl_log.info("[Controller id=%d] %d successfully elected as the controller. Epoch incremented to %d",
                     self.node_id, self.node_id, epoch)

    def _register_controller(self) -> int | None:
        """Create /controller and move /controller_epoch on, at once; the new epoch, or None
        when another broker became the controller first."""
        while True:
            try:
                data, stat = self.zk.get(CONTROLLER_EPOCH)
            except NoNodeError:
                try:  # (Kafka creates it at 0 before the first election)
                    self.zk.create(CONTROLLER_EPOCH, b"0")
                except NodeExistsError:
                    pass
                continue
            epoch = int(data or b"0") + 1
            transaction = self.zk.transaction()
            transaction.check(CONTROLLER_EPOCH, stat.version)
            transaction.create(CONTROLLER, encode_controller(self.node_id), ephemeral=True)
            transaction.set_data(CONTROLLER_EPOCH, str(epoch).encode(), version=stat.version)
            results = transaction.commit()
            failed = [r for r in results if isinstance(r, Exception)]
            if not failed:
                return epoch
            if any(isinstance(r, NodeExistsError) for r in results):
                return None  # another broker is the controller
            if not any(isinstance(r, BadVersionError) for r in results):
                raise failed[0]
            # the epoch moved meanwhile (a controller came and went): read it again

    def _get(self, path: str) -> bytes | None:
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        return data or b""

    def _children(self, path: str) -> list[str]:
        try:
            return self.zk.get_children(path)
        except NoNodeError:
            return []

    def _read_cluster(self) -> tuple[dict[str, ZkTopic], set[str], dict[int, tuple[str, int]], int]:
        """(topics, delete markers, live brokers' endpoints, controller epoch) as ZooKeeper has
        them now."""
        topics: dict[str, ZkTopic] = {}
        without_id: dict[str, int] = {}
        self._without_id = without_id
        for name in self._children(TOPICS):
            try:
                data, stat = self.zk.get(topic_path(name))
            except NoNodeError:
                continue
            try:
                parsed = decode_topic_assignment(data)
            except ValueError:
                log.warning("Ignoring topic %s: invalid assignment %r", name, data)
                continue
            configs = decode_config(self._get(f"{CONFIG_TOPICS}/{name}"))
            topic_id = parsed.topic_id or self._derived_topic_id(name, stat.czxid)
            if parsed.topic_id is None:
                without_id[name] = stat.version
            topics[name] = ZkTopic({p: a.replicas for p, a in parsed.partitions.items()}, topic_id, configs)
            self._watch_topic(name, parsed.partitions)
        markers = set(self._children(DELETE_TOPICS))
        live: dict[int, tuple[str, int]] = {}
        racks: dict[int, str | None] = {}
        for child in self._children(BROKER_IDS):
            data = self._get(f"{BROKER_IDS}/{child}")
            try:
                js = json.loads(data)
                live[int(child)] = (str(js["host"]), int(js["port"]))
                racks[int(child)] = None if js.get("rack") is None else str(js["rack"])
            except (ValueError, KeyError, TypeError):
                continue
        self.racks = racks
        try:
            self.controller_id = int(json.loads(self._get(CONTROLLER) or b"{}").get("brokerid", -1))
        except (ValueError, TypeError, AttributeError):
            self.controller_id = -1
        epoch = self._get(CONTROLLER_EPOCH)
        try:
            epoch = int(epoch) if epoch else 0
        except ValueError:
            epoch = 0
        return topics, markers, live, epoch

    def _derived_topic_id(self, name: str, czxid: int) -> str:
        """The same id on every broker for a topic whose znode has none."""
        digest = hashlib.sha256(f"{self.cluster_id}/{name}/{czxid}".encode()).digest()
        for i in range(len(digest) - 15):
            text = base64.urlsafe_b64encode(digest[i:i + 16]).decode().rstrip("=")
            if not text.startswith("-"):  # as Kafka never hands out
                return text
        return "A" + text[1:]

    def _remove_topic_znodes(self, name: str) -> None:
        """TopicDeletionManager.completeDeleteTopic: the topic, its config, then the marker."""
        for path in (topic_path(name), f"{CONFIG_TOPICS}/{name}", f"{DELETE_TOPICS}/{name}"):
            try:
                self.zk.delete(path, recursive=True)
            except NoNodeError:
                pass
        self._watched.discard(topic_path(name))

    def _publish_topic(self, meta: TopicMetadata) -> bool:
        """AdminZkClient.createTopicWithAssignment for a topic created through the Admin API
        (with its topic id, as a 2.8 broker writes it: the other brokers take the same)."""
        self._set_or_create(f"{CONFIG_TOPICS}/{meta.name}", encode_config(dict(meta.configs)))
        data = encode_topic_assignment(meta.topic_id, {p: ReplicaAssignment(list(r))
                                                       for p, r in sorted(meta.assignment.items())})
        try:
            self.zk.create(topic_path(meta.name), data, makepath=True)
        except NodeExistsError:
            return False  # another broker published it first (both auto-created it)
        return True

    def _publish_partitions(self, name: str, zk_topic: ZkTopic, assignment: dict[int, list[int]]) -> None:
        data = encode_topic_assignment(zk_topic.topic_id, {p: ReplicaAssignment(list(r))
                                                           for p, r in sorted(assignment.items())})
        self.zk.set(topic_path(name), data)

    def _publish_configs(self, name: str, configs: dict[str, str]) -> None:
        self._set_or_create(f"{CONFIG_TOPICS}/{name}", encode_config(configs))
        self.zk.create(f"{CONFIG_CHANGES}/config_change_", encode_config_change(f"topics/{name}"),
                       sequence=True, makepath=True)

    def _set_or_create(self, path: str, data: bytes) -> None:
        try:
            self.zk.set(path, data)
        except NoNodeError:
            try:
                self.zk.create(path, data, makepath=True)
            except NodeExistsError:
                self.zk.set(path, data)

    def _mark_for_deletion(self, name: str) -> None:
        try:
            self.zk.create(f"{DELETE_TOPICS}/{name}", makepath=True)
        except NodeExistsError:
            pass

    def _elect_leaders(self, topics: dict[str, ZkTopic], live: set[int], epoch: int) -> None:
        """The controller's partition state machine: states for new partitions, elections
        for partitions whose leader is gone, lost followers out of the ISR. Each write is
        conditional on the version read; a lost race is retried on the next pass."""
        for name, version in self._without_id.items():
            if name in topics:  # Kafka 2.8's controller gives a topic created without an id its id
                controller.write_topic_id(self.zk, name, topics[name].topic_id, version)
        self._zk_reassignment = controller.process_zk_reassignment(self.zk, self._zk_reassignment)
        if controller.advance_reassignments(self.zk, list(topics), live, epoch):
            self._dirty.set()  # the next pass reads the new assignments
        for child in self._children(ISR_CHANGE_NOTIFICATION):  # read as Kafka's controller does, then gone
            try:
                self.zk.delete(f"{ISR_CHANGE_NOTIFICATION}/{child}")
            except NoNodeError:
                pass
        enabled = self.elr_enabled()
        for name, zt in topics.items():
            settings = self._elr_settings(name, zt, enabled)
            # Kafka 4.4's controller clears a topic's ELRs when its min.insync.replicas is set
            # (ConfigurationControlManager's ClearElrRecord): the ELR was taken against the old one.
            value = zt.configs.get("min.insync.replicas")
            clear = name in self._min_isr_seen and self._min_isr_seen[name] != value
            self._min_isr_seen[name] = value
            for p, replicas in zt.assignment.items():
                path = partition_state_path(name, p)
                try:
                    data, stat = self.zk.get(path)
                except NoNodeError:
                    data = None
                if data is None:
                    online = [r for r in replicas if r in live]
                    if online:
                        try:
                            self.zk.create(path, encode_partition_state(online[0], 0, online, epoch), makepath=True)
                        except NodeExistsError:
                            self._dirty.set()
                    continue
                current = decode_partition_state(data)
                if current is None:
                    continue
                self._write_election(path, name, p, replicas, current, stat.version, live, epoch, settings, clear)

    def _elr_settings(self, name: str, zt: ZkTopic, enabled: bool) -> tuple[int, bool, bool]:
        """(effective min.insync.replicas, unclean.leader.election.enable, ELR enabled) of a
        topic for the controller's elections: the topic's overrides, else the broker's."""
        broker = self.engine.broker_config
        try:
            values = topic_config.effective(zt.configs, broker)
        except (KafkaError, ValueError, TypeError):
            values = topic_config.effective({}, broker)
        factor = len(next(iter(zt.assignment.values()), ()))
        if "unclean.leader.election.enable" in zt.configs:
            unclean = values["unclean.leader.election.enable"]
        else:  # the broker's setting: its dynamic default, else its server.properties
            unclean = broker.get("unclean.leader.election.enable", self.config.get("unclean.leader.election.enable"))
        unclean = unclean if isinstance(unclean, bool) else str(unclean).lower() == "true"
        return (elr.effective_min_isr(int(values["min.insync.replicas"]), factor), unclean, enabled)

    def elr_enabled(self) -> bool:
        """eligible.leader.replicas.version >= 1 in this broker's finalized features (what a new
        Kafka 4.4 cluster finalizes; kafka-features can disable it)."""
        return features.load_levels(self.data_dir)[1].get("eligible.leader.replicas.version", 0) >= 1

    def _write_election(self, path: str, name: str, p: int, replicas: list[int], current, version: int,
                        live: set[int], epoch: int, settings: tuple[int, bool, bool], clear: bool = False) -> None:
        """One partition on a controller pass, as Kafka 4.4's controller handles a fenced or
        returning broker (PartitionChangeBuilder, elr.py): the brokers not registered leave the
        ISR (into the ELR below min.insync.replicas), a partition without a live leader gets one
        (from the ISR, else the ELR, else its last known leader, else with unclean election any
        live replica). A new leader or a smaller ISR bumps the leader epoch, as Kafka 2.8's
        controller does; `clear` drops the ELR and LastKnownELR first (min.insync.replicas set)."""

        min_isr, unclean, enabled = settings
        if any(r not in live for r in current.isr):
            # the pass read the registrations a while ago: a broker back since then may be in
            # this ISR already (its leader saw it), and must not be taken out as lost
            live = live | {int(c) for c in self._children(BROKER_IDS) if c.isdigit()}
        before = elr.Partition(tuple(replicas), current.leader, current.isr,
                               () if clear else current.elr, () if clear else current.last_known_elr)
        after = elr.change(before, [r for r in current.isr if r in live], min_isr, lambda r: r in live,
                           election=elr.UNCLEAN if unclean else elr.ONLINE, enabled=enabled)
        if (after.leader, after.isr, after.elr, after.last_known_elr) == \
                (current.leader, current.isr, current.elr, current.last_known_elr):
            return
        # what Kafka 2.8 keeps in "isr" when the ISR empties: its last member
        kept = [r for r in current.zk_isr if r in live] or list(current.zk_isr[:1]) or [current.leader]
        leader_epoch = current.leader_epoch + int(after.leader != current.leader
                                                  or any(r not in after.isr for r in current.isr))
        state = encode_partition_state(after.leader, leader_epoch, list(after.isr), epoch,
                                       after.elr, after.last_known_elr, kept_isr=kept)
        try:
            self.zk.set(path, state, version=version)
            ctl_log.info("[Controller id=%d] %s-%d: leader %d -> %d, epoch %d, isr %s, elr %s, last known elr %s%s",
                         self.node_id, name, p, current.leader, after.leader, leader_epoch,
                         list(after.isr), list(after.elr), list(after.last_known_elr),
                         " (unclean election)" if after.unclean else "")
        except (BadVersionError, NoNodeError):
            self._dirty.set()

    def _read_states(self, topics: dict[str, ZkTopic]) -> dict[tuple[str, int], PartitionState]:
        states = {}
        for name, zt in topics.items():
            for p, replicas in zt.assignment.items():
                try:
                    data, stat = self.zk.get(partition_state_path(name, p))
                except NoNodeError:
                    continue
                current = decode_partition_state(data)
                if current is None:
                    continue
                states[(name, p)] = PartitionState(tuple(replicas), current.leader, current.leader_epoch,
                                                   current.isr, stat.version, current.controller_epoch,
                                                   current.elr, current.last_known_elr, current.zk_isr)
        return states

    # ------------------------------------------------------------------ controller commands
    async def elect_leaders(self, partitions: list[tuple[str, int]], unclean: bool):
        """ElectLeaders on the controller (controller.py); the brokers see the outcome at once."""
        results = await self._run(controller.elect_leaders, self.zk, partitions, unclean, self.controller_epoch or 1)
        self._flag()
        return results

    async def reassign(self, topic: str, partition: int, target: list[int] | None) -> tuple[int, str | None]:
        result = await self._run(controller.start_reassignment, self.zk, topic, partition, target)
        if result[0] == 0:
            await self._run(controller.drop_from_zk_reassignment, self.zk, (topic, partition))
        self._flag()
        return result

    async def ongoing_reassignments(self, topics: list[str]):
        return await self._run(controller.ongoing_reassignments, self.zk, topics)

    async def write_isr(self, key: tuple[str, int], state: PartitionState) -> int | None:
        """The leader's ISR change (Kafka 2.8 without AlterIsr): the state znode, conditional
        on its version, then an /isr_change_notification sequential znode. The znode's new
        version, or None when the write lost (the next read brings the winner's state)."""
        return await self._run(self._write_isr, key, state)

    def _write_isr(self, key: tuple[str, int], state: PartitionState) -> int | None:

        data = encode_partition_state(state.leader, state.leader_epoch, list(state.isr), state.controller_epoch,
                                      state.elr, state.last_known_elr, kept_isr=state.zk_isr)
        try:
            stat = self.zk.set(partition_state_path(*key), data, version=state.zk_version)
        except (BadVersionError, NoNodeError):
            self._dirty.set()
            return None
        except KazooException as exc:
            log.warning("Writing the ISR of %s-%d failed: %s", key[0], key[1], exc)
            return None
        try:
            self.zk.create(f"{ISR_CHANGE_NOTIFICATION}/isr_change_", encode_isr_change([key]), sequence=True,
                           makepath=True)
        except KazooException:
            pass
        return stat.version

    # ------------------------------------------------------------------ internal topics
    async def ensure_internal_topic(self, name: str) -> bool:
        """Create an internal topic in ZooKeeper if it is not there (FindCoordinator's
        createInternalTopic): its settings' partitions and replication factor, placed across the
        live brokers as any new topic. False when it cannot be created: fewer live brokers than
        its replication factor (Kafka's InvalidReplicationFactorException, logged as Kafka 2.8's
        ZkAdminManager does). The controller elects its leaders on its next pass; until then
        FindCoordinator answers COORDINATOR_NOT_AVAILABLE, as Kafka's does right after creating it."""
        return await self._run(self._ensure_internal_topic, name)

    def internal_topic_spec(self, name: str) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, topic configs) of an internal topic, from the broker
        settings (Kafka's GroupMetadataManager.offsetsTopicConfigs and
        TransactionStateManager.transactionTopicConfigs)."""
        get = self.config.get
        if name == topic_names.GROUP_METADATA_TOPIC:
            return (int(get("offsets.topic.num.partitions")), int(get("offsets.topic.replication.factor")),
                    {"cleanup.policy": "compact", "compression.type": "producer",
                     "segment.bytes": str(get("offsets.topic.segment.bytes"))})
        if name == topic_names.SHARE_GROUP_STATE_TOPIC:
            from .dynamic_config_keys import KAFKA_CONFIGS

            def get(key: str) -> str:  # (Kafka's defaults: pk has no defaults of its own for these)
                value = self.config.get(key)
                return value if value is not None else KAFKA_CONFIGS[key][1]
            # Kafka 4.4's ShareCoordinatorService.shareGroupStateTopicConfigs has cleanup.policy
            # delete and prunes the log itself; pk does not prune, so the topic is compacted
            # (docs/replication.md, "The share coordinator")
            return (int(get("share.coordinator.state.topic.num.partitions")),
                    int(get("share.coordinator.state.topic.replication.factor")),
                    {"cleanup.policy": "compact", "compression.type": "producer",
                     "min.insync.replicas": str(get("share.coordinator.state.topic.min.isr")),
                     "segment.bytes": str(get("share.coordinator.state.topic.segment.bytes"))})
        return (int(get("transaction.state.log.num.partitions")),
                int(get("transaction.state.log.replication.factor")),
                {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
                 "cleanup.policy": "compact", "min.insync.replicas": str(get("transaction.state.log.min.isr")),
                 "segment.bytes": str(get("transaction.state.log.segment.bytes"))})

    def _ensure_internal_topic(self, name: str) -> bool:
        if self.zk.exists(topic_path(name)) is not None:
            return True
        partitions, factor, configs = self.internal_topic_spec(name)
        live = sorted(int(c) for c in self._children(BROKER_IDS) if c.isdigit())
        if factor > len(live):
            listed = ", ".join(f"CreatableTopicConfig(name='{k}', value='{v}')" for k, v in configs.items())
            log.info("[Admin Manager on Broker %d]: Error processing create topic request CreatableTopic(name='%s', "
                     "numPartitions=%d, replicationFactor=%d, assignments=[], configs=[%s])\n"
                     "org.apache.kafka.common.errors.InvalidReplicationFactorException: Replication factor: %d "
                     "larger than available brokers: %d.", self.node_id, name, partitions, factor, listed, factor,
                     len(live))
            return False
        assignment = assign_replicas_to_brokers([BrokerMetadata(b) for b in live], partitions, factor)
        meta = TopicMetadata(name=name, topic_id=new_kafka_uuid(), assignment=assignment, configs=configs)
        if self._publish_topic(meta):
            log.info("Creating topic %s with configuration %s and initial partition assignment %s", name,
                     "{" + ", ".join(f"{k}={v}" for k, v in configs.items()) + "}",
                     "HashMap(" + ", ".join(f"{p} -> ArrayBuffer({', '.join(map(str, r))})"
                                            for p, r in sorted(assignment.items())) + ")")
        self._flag()  # take it in (and, on the controller, elect its leaders) right away
        return True

    # ------------------------------------------------------------------ reconcile (event loop)
    def _local_signature(self) -> dict[str, int]:
        store = self.engine.store
        sig = {}
        for name in store.names():
            try:
                sig[name] = store.mtime_ns(name)
            except (OSError, KafkaError):
                continue
        return sig

    async def _reconcile(self) -> None:
        self._next_resync = time.monotonic() + RESYNC_S
        topics, markers, endpoints, epoch = await self._run(self._read_cluster)
        live = set(endpoints)
        self.engine.cluster_brokers = sorted(live)  # where new topics' replicas go
        self.engine.cluster_racks = {b: self.racks.get(b) for b in live}  # rack-aware when they have racks
        if self.is_controller:
            self.controller_epoch = max(self.controller_epoch, epoch)
        else:
            self.controller_epoch = epoch
        engine = self.engine
        local = set(engine.list_topics())

        # Deletions marked in ZooKeeper (by kafka-topics --delete, or by us for DeleteTopics).
        deletion_enabled = str(engine.broker_config.get("delete.topic.enable", "true")).lower() == "true"
        for name in sorted(markers):
            if not deletion_enabled:
                break
            if name in local:
                try:
                    engine.delete_topic(name)
                    self.broker.data.forget_topic(name)
                    self.broker.groups.topic_deleted(name)
                    log.info("[KafkaServer id=%d] Deleted topic %s (marked for deletion in ZooKeeper)",
                             self.node_id, name)
                except (UnknownTopicOrPartitionError, TopicDeletionDisabledError):
                    pass
                local.discard(name)
            self._known.pop(name, None)
            if self.is_controller:
                await self._run(self._remove_topic_znodes, name)
            topics.pop(name, None)

        for name, zt in sorted(topics.items()):
            if name in markers or not zt.assignment:
                continue
            known = self._known.get(name)
            if name not in local:
                if known is not None:
                    # Deleted here through the Admin API: ask for the deletion in ZooKeeper.
                    log.info("[KafkaServer id=%d] Topic %s was deleted here: marking it for deletion in ZooKeeper",
                             self.node_id, name)
                    self._known.pop(name, None)
                    await self._run(self._mark_for_deletion, name)
                    self._dirty.set()
                    continue
                if not self._create_local(name, zt):
                    continue
                local.add(name)
                known = None
            elif topic_names.is_internal(name) and zt.topic_id and engine.topic(name).topic_id != zt.topic_id:
                # A local-only copy from before the topic was published (an older pk, each
                # broker its own): the replicated topic replaces it.
                try:
                    engine.delete_topic(name)
                    self.broker.data.forget_topic(name)
                except (KafkaError, OSError) as exc:
                    log.warning("Cannot replace the local %s by the replicated one: %s", name, exc)
                    continue
                if not self._create_local(name, zt):
                    continue
                log.info("[KafkaServer id=%d] Replaced the local-only %s by the replicated topic", self.node_id, name)
                known = None
            meta = engine.topic(name)
            # Partitions: more in ZooKeeper -> add here; more here (CreatePartitions) -> publish.
            if len(zt.assignment) > meta.partitions:
                self._add_local_partitions(name, zt.assignment)
            elif any(meta.assignment.get(p) != list(r) for p, r in zt.assignment.items()):
                self._set_local_replicas(name, zt.assignment)
            elif meta.partitions > len(zt.assignment):
                combined = {**meta.assignment, **zt.assignment}
                await self._run(self._publish_partitions, name, zt, combined)
                zt.assignment = combined
            # Configs: a change in ZooKeeper wins; else a local change (AlterConfigs) is published.
            if known is None or zt.configs != known.zk_configs:
                if self._usable_configs(name, zt.configs) != meta.configs:
                    self._replace_local_configs(name, zt.configs)
            elif meta.configs != known.local_configs:
                await self._run(self._publish_configs, name, dict(meta.configs))
                zt.configs = dict(meta.configs)
            self._known[name] = Known(dict(zt.configs), dict(engine.topic(name).configs))

        # Topics only here: created through the Admin API (publish them), or their znode went
        # away without a deletion marker (drop them, as the znode is the source of truth).
        for name in sorted(local - set(topics) - markers):
            if topic_names.is_internal(name):
                continue
            if name in self._known:
                log.info("[KafkaServer id=%d] Deleting topic %s: its znode is gone from ZooKeeper", self.node_id, name)
                self._known.pop(name)
                try:
                    engine.delete_topic(name)
                    self.broker.data.forget_topic(name)
                except (KafkaError, OSError):
                    pass
                continue
            try:
                meta = engine.topic(name)
            except UnknownTopicOrPartitionError:
                continue
            if not await self._run(self._publish_topic, meta):
                # Lost the race to another broker: this copy (just created, empty) goes, and
                # the next pass creates the topic as ZooKeeper has it.
                log.info("[KafkaServer id=%d] Topic %s was created in ZooKeeper by another broker first: "
                         "taking ZooKeeper's", self.node_id, name)
                try:
                    engine.delete_topic(name)
                    self.broker.data.forget_topic(name)
                except (KafkaError, OSError):
                    pass
                self._dirty.set()
                continue
            self._known[name] = Known(dict(meta.configs), dict(meta.configs))
            self._dirty.set()  # next pass writes its partition states

        active = {n: zt for n, zt in topics.items() if n not in markers and zt.assignment}
        if self.is_controller:
            await self._run(self._elect_leaders, active, live, self.controller_epoch or 1)
            if self._rebalance_due():
                moved = await self._run(controller.rebalance_leaders, self.zk,
                                        {n: zt.assignment for n, zt in active.items()}, live,
                                        float(self._setting("leader.imbalance.per.broker.percentage", "10")),
                                        self.controller_epoch or 1)
                if moved:
                    ctl_log.info("[Controller id=%d] Preferred leaders back for %s", self.node_id,
                                 ", ".join(f"{t}-{p}" for t, p in moved))
        states = await self._run(self._read_states, active)
        self.replication.apply(states, endpoints)
        self._local_sig = self._local_signature()

    def _setting(self, name: str, default: str) -> str:
        return str(self.engine.broker_config.get(name) or self.config.values.get(name) or default)

    def _rebalance_due(self) -> bool:
        """auto.leader.rebalance.enable (default true, as in Kafka): every
        leader.imbalance.check.interval.seconds (default 300) on the controller."""
        if self._setting("auto.leader.rebalance.enable", "true").lower() != "true":
            return False
        now = time.monotonic()
        if self._next_rebalance is None:  # the first check one interval after becoming controller
            self._next_rebalance = now + float(self._setting("leader.imbalance.check.interval.seconds", "300"))
            return False
        if now < self._next_rebalance:
            return False
        self._next_rebalance = now + float(self._setting("leader.imbalance.check.interval.seconds", "300"))
        return True

    def _create_local(self, name: str, zt: ZkTopic) -> bool:
        """Create a topic found in ZooKeeper, with its assignment as listed (replicas on other
        brokers included: the engine stores them) and the overrides pk knows how to apply."""
        engine = self.engine
        configs = self._usable_configs(name, zt.configs)
        try:
            topic_names.validate(name)
        except KafkaError as exc:
            log.warning("Ignoring topic %s found in ZooKeeper: %s", name, exc)
            return False

        meta = TopicMetadata(name=name, topic_id=zt.topic_id or new_kafka_uuid(),
                             assignment={p: list(r) for p, r in sorted(zt.assignment.items())}, configs=configs)
        with locked(engine.admin_lock_path):
            if engine.store.exists(name):
                return True
            engine._create_locked(meta)  # partition directories, then the metadata
        log.info("[KafkaServer id=%d] Created topic %s with %d partition(s) from ZooKeeper",
                 self.node_id, name, meta.partitions)
        return True

    @staticmethod
    def _usable_configs(name: str, configs: dict[str, str]) -> dict[str, str]:
        usable = {}
        for key, value in configs.items():
            try:
                topic_config.validate({key: value})
            except KafkaError as exc:
                log.warning("Ignoring config %s=%s of topic %s: %s", key, value, name, exc)
                continue
            usable[key] = str(value)
        return usable

    def _add_local_partitions(self, name: str, assignment: dict[int, list[int]]) -> None:
        engine = self.engine
        total = len(assignment)
        try:
            engine.create_partitions(name, total)  # the directories (replicas copied from partition 0)
        except KafkaError as exc:
            log.warning("Adding partitions to %s failed: %s", name, exc)
            return
        with locked(engine.admin_lock_path):  # then the replicas the znode lists
            meta = engine.store.get(name)
            meta.assignment.update({p: list(r) for p, r in assignment.items() if p in meta.assignment})
            engine.store.put(meta)
        log.info("[KafkaServer id=%d] Topic %s now has %d partitions (from ZooKeeper)", self.node_id, name, total)

    def _set_local_replicas(self, name: str, assignment: dict[int, list[int]]) -> None:
        """The replicas ZooKeeper lists win over the local assignment."""
        engine = self.engine
        with locked(engine.admin_lock_path):
            meta = engine.store.get(name)
            meta.assignment.update({p: list(r) for p, r in assignment.items() if p in meta.assignment})
            engine.store.put(meta)

    def _replace_local_configs(self, name: str, configs: dict[str, str]) -> None:
        usable = self._usable_configs(name, configs)
        current = self.engine.topic(name).configs
        try:
            self.engine.alter_topic_configs(name, set_configs=usable,
                                            delete_configs=[k for k in current if k not in usable])
        except KafkaError as exc:
            log.warning("Applying the configs of topic %s from ZooKeeper failed: %s", name, exc)
