"""A share-group consumer (KIP-932) over pk's own codec: librdkafka has no share consumer.

What Kafka's KafkaShareConsumer does, for one subscribed topic, on one thread:
- membership: ShareGroupHeartbeat to the group's coordinator (FindCoordinator, key type 0)
  with a member id this client makes (a random UUID in Kafka's base64 form, as the Java
  consumer makes it since ShareGroupHeartbeat v1), epoch 0 to join, then the member epoch the
  coordinator returns, every heartbeat_interval_ms; epoch -1 to leave;
- records: ShareFetch to each assigned partition's leader, in a share session per leader
  (session epoch 0 opens it, then 1, 2, ...; -1 closes it). Only the offsets in an answer's
  acquired_records ranges are handed out, each with its delivery count;
- acknowledgements: each record handed out is acknowledged by the caller (ACCEPT, RELEASE,
  REJECT or RENEW); they ride on the next ShareFetch to that leader (one that then takes no
  records when a RENEW is among them, as Kafka's flags it is_renew_ack), or go at once in a
  ShareAcknowledge (commit), and those still pending at close on a final ShareAcknowledge
  (session epoch -1). A record renewed (its lock extended) is handed out again by the next
  poll once the broker confirmed the renewal, as Kafka's consumer returns it again. Acquired
  offsets with no record (a batch's gaps) are acknowledged as GAP, and records acquired but
  never handed out are released at close, so that another member gets them at once instead of
  after the acquisition lock.
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import NamedTuple

from pk.engine import protocol as kp
from pk.engine import records
from pk.engine.errors import KafkaError

from .kafka_admin import AdminError, known_error
from .wire import Security, WireClient, _Connection

GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
ACK_TYPES = {"accept": ACCEPT, "release": RELEASE, "reject": REJECT, "renew": RENEW}

HEARTBEAT_VERSION = 1
FETCH_VERSION = 1
ACKNOWLEDGE_VERSION = 2  # the newest pk speaks; v2 carries RENEW (is_renew_ack)
METADATA_VERSION = 12
FIND_COORDINATOR_VERSION = 3

# Errors after which the coordinator or a leader is looked up again and the call retried.
_RETRIABLE = {3, 5, 6, 7, 9, 13, 14, 15, 16, 56, 74, 75, 100}
_UNKNOWN_MEMBER_ID, _FENCED_MEMBER_EPOCH = 25, 110
RECONNECT_BACKOFF_S = 0.1  # before asking a broker that could not be reached again (Kafka's reconnect.backoff.ms)
_SHARE_SESSION_ERRORS = {122, 123, 124}  # SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, ...LIMIT_REACHED


class ShareRecord(NamedTuple):
    """A consumer record with its delivery count (the formatters print it as Delivery:N)."""
    topic: str
    partition: int
    timestamp_type: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple
    delivery_count: int


class ShareError(KafkaError):
    """An error Kafka's share consumer would raise from poll(), with its text."""


def new_member_id() -> str:
    """Uuid.randomUuid().toString(): url-safe base64 of 16 random bytes, no padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class _Session:
    """One leader's share session: its connection, epoch and the acknowledgements to send."""

    def __init__(self, conn: _Connection):
        self.conn = conn
        self.epoch = 0
        self.partitions: set[tuple[str, int]] = set()  # in the session on the broker's side
        self.acks: dict[tuple[str, int], dict[int, int]] = {}  # tp -> offset -> type


class ShareConsumer:
    def __init__(self, bootstrap: str, group: str, topic: str, security: Security | None = None,
                 client_id: str = "console-share-consumer", max_wait_ms: int = 500, max_records: int = 500,
                 timeout_s: float = 30.0):
        self.group, self.topic = group, topic
        self.max_wait_ms, self.max_records = max_wait_ms, max_records
        self.bootstrap = bootstrap
        self.client = WireClient(bootstrap, timeout_s, "poll", security=security)
        self.client_id = client_id
        self.security = security
        self.timeout_s = timeout_s
        self.member_id = new_member_id()
        self.member_epoch = 0
        self.interval_s = 5.0
        self._next_heartbeat = 0.0
        self._coordinator: _Connection | None = None
        self._topic_ids: dict[str, uuid.UUID] = {}
        self._names: dict[uuid.UUID, str] = {}  # topic id -> name
        self._leaders: dict[tuple[str, int], int] = {}
        self.assignment: set[tuple[str, int]] = set()
        self._sessions: dict[int, _Session] = {}
        self._unhanded: list[ShareRecord] = []  # acquired, not handed out yet
        self._renewing: dict[tuple[str, int, int], ShareRecord] = {}  # acknowledged RENEW, not answered yet
        self._renewed: list[ShareRecord] = []  # renewals the broker confirmed: the next poll's records
        # Kafka's AcknowledgementCommitCallback: called as (topic, partition, offsets, error
        # message or None) for each partition whose acknowledgements a broker answered.
        self.on_acknowledged = None

    # ------------------------------------------------------------------ membership
    def _coordinator_conn(self) -> _Connection:
        if self._coordinator is None:
            answer = self._cluster_call(kp.ApiKey.FIND_COORDINATOR, FIND_COORDINATOR_VERSION,
                                        {"key": self.group, "key_type": 0})
            if answer["error_code"]:
                raise known_error(answer["error_code"], answer.get("error_message"))
            self._coordinator = _Connection(answer["host"], answer["port"], self.timeout_s, self.security,
                                            self.client_id)
        return self._coordinator

    def heartbeat(self, leaving: bool = False) -> None:
        body = {"group_id": self.group, "member_id": self.member_id,
                "member_epoch": -1 if leaving else self.member_epoch, "rack_id": None,
                "subscribed_topic_names": None if leaving or self.member_epoch > 0 else [self.topic]}
        try:
            answer = self._coordinator_conn().call(kp.ApiKey.SHARE_GROUP_HEARTBEAT, HEARTBEAT_VERSION, body)
        except (OSError, ConnectionError):
            answer = {"error_code": 15}
        except AdminError as exc:  # FindCoordinator's: no coordinator yet (a broker's first group)
            if exc.code not in _RETRIABLE:
                raise ShareError(exc.message) from None
            answer = {"error_code": exc.code}
        code = answer["error_code"]
        if leaving:
            return
        if code in _RETRIABLE:
            self._drop_coordinator()
            self._next_heartbeat = time.monotonic() + 0.2
            return
        if code in (_UNKNOWN_MEMBER_ID, _FENCED_MEMBER_EPOCH):  # rejoin with epoch 0, as Kafka's consumer does
            self.member_epoch = 0
            self._set_assignment(set())
            self._next_heartbeat = 0.0
            return
        if code:
            raise ShareError(known_error(code, answer.get("error_message")).message)
        self.member_epoch = answer["member_epoch"]
        self.interval_s = max(answer["heartbeat_interval_ms"], 50) / 1000
        self._next_heartbeat = time.monotonic() + self.interval_s
        if answer["assignment"] is not None:
            tps = set()
            for tp in answer["assignment"]["topic_partitions"]:
                name = self._topic_name(tp["topic_id"])
                tps |= {(name, p) for p in tp["partitions"] if name is not None}
            self._set_assignment(tps)

    def _drop_coordinator(self) -> None:
        if self._coordinator is not None:
            self._coordinator.close()
        self._coordinator = None

    def _set_assignment(self, tps: set) -> None:
        if tps - self.assignment:
            self._refresh_metadata()
        self.assignment = tps

    # ------------------------------------------------------------------ metadata
    def _refresh_metadata(self) -> None:
        md = self._cluster_call(kp.ApiKey.METADATA, METADATA_VERSION,
                                {"topics": [{"name": self.topic}], "allow_auto_topic_creation": False,
                                 "include_topic_authorized_operations": False})
        for t in md["topics"]:
            if t["error_code"]:
                continue
            self._topic_ids[t["name"]] = t["topic_id"]
            self._names[t["topic_id"]] = t["name"]
            for p in t["partitions"]:
                self._leaders[(t["name"], p["partition_index"])] = p["leader_id"]

    def _cluster_call(self, api_key: int, version: int, body: dict) -> dict:
        """A cluster-wide request (Metadata, FindCoordinator) to the broker the client
        bootstrapped from; when that broker is gone, to the next bootstrap address that answers
        (as Kafka's client asks any broker it knows)."""
        try:
            return self.client.call(api_key, version, body)
        except (OSError, ConnectionError):
            self.client.close()
            self.client = WireClient(self.bootstrap, self.timeout_s, "poll", security=self.security)
            return self.client.call(api_key, version, body)

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        if topic_id not in self._names:
            self._refresh_metadata()
        return self._names.get(topic_id)

    def _session(self, node: int) -> _Session:
        if node not in self._sessions:
            broker = next((b for b in self.client.brokers() if b.node_id == node), None)
            if broker is None:
                raise ConnectionError(f"no broker with id {node}")
            self._sessions[node] = _Session(_Connection(broker.host, broker.port, self.timeout_s, self.security,
                                                            self.client_id))
        return self._sessions[node]

    # ------------------------------------------------------------------ records
    def acknowledge(self, record: ShareRecord, ack_type: int) -> None:
        node = self._leaders.get((record.topic, record.partition))
        if node is not None and node in self._sessions:
            self._sessions[node].acks.setdefault((record.topic, record.partition), {})[record.offset] = ack_type
            key = (record.topic, record.partition, record.offset)
            if ack_type == RENEW:
                self._renewing[key] = record
            else:
                self._renewing.pop(key, None)

    def poll(self, timeout_s: float) -> list[ShareRecord]:
        """Records acquired for this member (each to be acknowledged before the next poll)."""
        if self._renewed:  # Kafka's consumer returns renewed records before fetching any more
            out, self._renewed = sorted(self._renewed, key=lambda r: (r.topic, r.partition, r.offset)), []
            return out
        if self._unhanded:
            out, self._unhanded = self._unhanded, []
            return out
        deadline = time.monotonic() + max(timeout_s, 0)
        while True:
            if time.monotonic() >= self._next_heartbeat:
                self.heartbeat()
            got = self._fetch_all(min(self.max_wait_ms, max(int((deadline - time.monotonic()) * 1000), 0)))
            if got or time.monotonic() >= deadline:
                return got
            if not self.assignment:
                time.sleep(min(0.1, max(deadline - time.monotonic(), 0)))

    def _fetch_all(self, wait_ms: int) -> list[ShareRecord]:
        by_node: dict[int, list[tuple[str, int]]] = {}
        for tp in sorted(self.assignment):
            node = self._leaders.get(tp)
            if node is not None:
                by_node.setdefault(node, []).append(tp)
        for node, session in self._sessions.items():  # a session whose partitions left: acks still go
            if session.acks or session.partitions:
                by_node.setdefault(node, [])
        out: list[ShareRecord] = []
        for node, tps in by_node.items():
            out += self._fetch(node, tps, wait_ms if len(by_node) == 1 else 0)
        return out

    def _fetch(self, node: int, tps: list, wait_ms: int) -> list[ShareRecord]:
        try:
            session = self._session(node)
        except (OSError, ConnectionError):  # a leader gone (not re-elected yet): ask again shortly
            time.sleep(RECONNECT_BACKOFF_S)
            self._refresh_metadata()
            return []
        wanted = set(tps)
        topics: dict[str, list] = {}
        for tp in sorted(wanted | set(session.acks)):
            topics.setdefault(tp[0], []).append({
                "partition_index": tp[1], "partition_max_bytes": 1048576,
                "acknowledgement_batches": _batches(session.acks.get(tp, {}))})
        forgotten: dict[str, list] = {}
        for tp in session.partitions - wanted:
            forgotten.setdefault(tp[0], []).append(tp[1])
        renewing = any(RENEW in acks.values() for acks in session.acks.values())
        limits = (0, 0, 0, 0) if renewing else (wait_ms, 1, 52428800, self.max_records)
        body = {"group_id": self.group, "member_id": self.member_id, "share_session_epoch": session.epoch,
                "max_wait_ms": limits[0], "min_bytes": limits[1], "max_bytes": limits[2], "max_records": limits[3],
                "batch_size": limits[3], "is_renew_ack": renewing,
                "topics": [{"topic_id": self._topic_ids[t], "partitions": ps} for t, ps in topics.items()],
                "forgotten_topics_data": [{"topic_id": self._topic_ids[t], "partitions": ps}
                                          for t, ps in forgotten.items()]}
        if not body["topics"] and not forgotten:
            return []
        sent = {tp: sorted(acks) for tp, acks in session.acks.items() if acks}
        try:
            _, hi = session.conn.versions.get(int(kp.ApiKey.SHARE_FETCH), (None, None))
            if hi is None:
                raise known_error(35, "The node does not support SHARE_FETCH")
            if renewing and hi < 2:
                raise known_error(35, "The v1 ShareFetch does not support AcknowledgeType.RENEW")
            answer = session.conn.call(kp.ApiKey.SHARE_FETCH, min(hi, 2), body)
        except (OSError, ConnectionError):
            self._lose(node)
            return []
        session.acks = {}
        code = answer["error_code"]
        if code in _SHARE_SESSION_ERRORS or code in _RETRIABLE:
            self._lose(node)
            return []
        if code:
            raise ShareError(known_error(code, answer.get("error_message")).message)
        session.epoch += 1
        session.partitions = wanted  # the forgotten ones left the session with this request
        self._acknowledged(sent, answer["responses"], "acknowledge_error_code", "acknowledge_error_message")
        out: list[ShareRecord] = []
        for topic in answer["responses"]:
            name = self._names.get(topic["topic_id"])
            for part in topic["partitions"]:
                if part["error_code"]:
                    if part["error_code"] in _RETRIABLE:  # a leader or share coordinator moving
                        time.sleep(RECONNECT_BACKOFF_S)
                        self._refresh_metadata()
                        continue
                    raise ShareError(known_error(part["error_code"], part.get("error_message")).message)
                out += self._acquired(session, name, part)
        return out

    def _acquired(self, session: _Session, name: str, part: dict) -> list[ShareRecord]:
        """The records of the acquired ranges, each with its delivery count; acquired offsets
        without a record are acknowledged as gaps."""
        ranges = part["acquired_records"]
        if not ranges:
            return []
        counts: dict[int, int] = {}
        for r in ranges:
            for offset in range(r["first_offset"], r["last_offset"] + 1):
                counts[offset] = r["delivery_count"]
        tp = (name, part["partition_index"])
        out = []
        data = part["records"] or b""
        for pos, header in records.iter_batches(data):
            if header.is_control or header.last_offset < min(counts) or header.base_offset > max(counts):
                continue
            make = _record_maker(name, tp[1], header.timestamp_type)
            for rec in records.decode_records(data, pos, header, make):
                count = counts.pop(rec.offset, None)
                if count is not None:
                    out.append(rec._replace(delivery_count=count))
        if counts:
            session.acks.setdefault(tp, {}).update({offset: GAP for offset in counts})
        return out

    def _lose(self, node: int) -> None:
        """A broken or refused session: the broker releases its acquired records when the
        session ends, so they are delivered again; start a new session (epoch 0)."""
        session = self._sessions.pop(node, None)
        if session is not None:
            session.conn.close()
        self._refresh_metadata()

    def _acknowledged(self, sent: dict, responses: list, code_field: str, message_field: str) -> None:
        """Report each partition's acknowledgements the answer settles, in the answer's order."""
        if not sent:
            return
        for topic in responses:
            name = self._names.get(topic["topic_id"])
            for part in topic["partitions"]:
                offsets = sent.pop((name, part["partition_index"]), None)
                if offsets is not None:
                    code = part[code_field]
                    error = None if not code else known_error(code, part.get(message_field)).message
                    self._settled(name, part["partition_index"], offsets, error)
        for (name, partition), offsets in sent.items():  # answered without an error of their own
            self._settled(name, partition, offsets, None)

    def _settled(self, topic: str, partition: int, offsets: list[int], error: str | None) -> None:
        """A partition's acknowledgements answered: its renewed records come back on the next
        poll (only when the renewal succeeded), then the caller's callback."""
        for offset in offsets:
            record = self._renewing.pop((topic, partition, offset), None)
            if record is not None and error is None:
                self._renewed.append(record)
        if self.on_acknowledged is not None:
            self.on_acknowledged(topic, partition, offsets, error)

    def commit(self) -> None:
        """commitSync: the pending acknowledgements sent now, in a ShareAcknowledge of each
        session (its next epoch), answered before this returns."""
        for session in list(self._sessions.values()):
            if session.epoch == 0 or not any(session.acks.values()):
                continue
            sent = {tp: sorted(acks) for tp, acks in session.acks.items() if acks}
            topics: dict[str, list] = {}
            for tp, acks in sorted(session.acks.items()):
                topics.setdefault(tp[0], []).append({"partition_index": tp[1],
                                                     "acknowledgement_batches": _batches(acks)})
            renewing = any(RENEW in acks.values() for acks in session.acks.values())
            session.acks = {}
            try:
                answer = session.conn.call(kp.ApiKey.SHARE_ACKNOWLEDGE, self._acknowledge_version(session, renewing),
                                           {"group_id": self.group, "member_id": self.member_id,
                                            "share_session_epoch": session.epoch, "is_renew_ack": renewing,
                                            "topics": [{"topic_id": self._topic_ids[t], "partitions": ps}
                                                       for t, ps in topics.items()]})
            except (OSError, ConnectionError, kp.ProtocolError):
                continue  # the broker releases what the lost session held
            session.epoch += 1
            if answer["error_code"]:
                for (name, partition), offsets in sent.items():
                    self._settled(name, partition, offsets,
                                  known_error(answer["error_code"], answer.get("error_message")).message)
                continue
            self._acknowledged(sent, answer["responses"], "error_code", "error_message")

    @staticmethod
    def _acknowledge_version(session: _Session, renewing: bool) -> int:
        """The newest ShareAcknowledge both sides speak; RENEW needs v2 (Kafka's client refuses
        to send it older)."""
        _, hi = session.conn.versions.get(int(kp.ApiKey.SHARE_ACKNOWLEDGE), (None, None))
        version = min(hi or 1, ACKNOWLEDGE_VERSION)
        if renewing and version < 2:
            raise known_error(35, "The v1 ShareAcknowledge does not support AcknowledgeType.RENEW")
        return version

    # ------------------------------------------------------------------ close
    def close(self) -> None:
        """Send the pending acknowledgements and close each share session, then leave."""
        for rec in self._unhanded:
            self.acknowledge(rec, RELEASE)
        for node, session in list(self._sessions.items()):
            topics: dict[str, list] = {}
            for tp, acks in sorted(session.acks.items()):
                topics.setdefault(tp[0], []).append({"partition_index": tp[1],
                                                     "acknowledgement_batches": _batches(acks)})
            sent = {tp: sorted(acks) for tp, acks in session.acks.items() if acks}
            renewing = any(RENEW in acks.values() for acks in session.acks.values())
            try:
                # (with or without acknowledgements: the close releases what the session still holds,
                # in a write of its own after theirs, as Kafka's broker does)
                if session.epoch > 0:
                    answer = session.conn.call(kp.ApiKey.SHARE_ACKNOWLEDGE,
                                               self._acknowledge_version(session, renewing),
                                               {"group_id": self.group, "member_id": self.member_id,
                                                "share_session_epoch": -1, "is_renew_ack": renewing,
                                                "topics": [{"topic_id": self._topic_ids[t], "partitions": ps}
                                                           for t, ps in topics.items()]})
                    if not answer["error_code"]:
                        self._acknowledged(sent, answer["responses"], "error_code", "error_message")
            except (OSError, ConnectionError, KafkaError, kp.ProtocolError):
                pass  # the broker releases what this session acquired once it is gone
            session.conn.close()
        self._sessions.clear()
        if self.member_epoch > 0:
            try:
                self.heartbeat(leaving=True)
            except (OSError, ConnectionError, KafkaError, kp.ProtocolError):
                pass  # the member expires after the session timeout instead
        self._drop_coordinator()
        self.client.close()


def _record_maker(topic: str, partition: int, timestamp_type: int):
    def make(offset, timestamp, key, value, headers):
        return ShareRecord(topic, partition, timestamp_type, offset, timestamp, key, value, headers, 0)
    return make


def _batches(acks: dict[int, int]) -> list[dict]:
    """Acknowledgements as AcknowledgementBatches: runs of consecutive offsets, each with one
    type when the run has one, else a type per offset."""
    out: list[dict] = []
    for offset in sorted(acks):
        if out and out[-1]["last_offset"] == offset - 1:
            out[-1]["last_offset"] = offset
            out[-1]["acknowledge_types"].append(acks[offset])
        else:
            out.append({"first_offset": offset, "last_offset": offset, "acknowledge_types": [acks[offset]]})
    for batch in out:
        if len(set(batch["acknowledge_types"])) == 1:
            batch["acknowledge_types"] = batch["acknowledge_types"][:1]
    return out
