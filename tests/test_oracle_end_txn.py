"""EndTxn against Kafka 4.4's transaction coordinator (the oracle), by raw frames: the same
requests on a transactional id that is Empty, Ongoing, CompleteCommit or CompleteAbort, with
transaction version 1 (EndTxn v4) and version 2 (v5: every end bumps the epoch, and Kafka
accepts an abort of an Empty or completed transaction), get the same answers from pk-server-start
as from the session's Kafka 4.4 broker. Kafka's Java producer 4.4 aborts an Empty transaction
this way; pk refused that with INVALID_TXN_STATE (reported through librdkafka's 0098_consumer_txn
"rapid abort/committing" with the Java producer). Producer ids differ between the brokers: compared are the error
codes, the epoch answered relative to the one InitProducerId gave, and whether the producer id
is the one InitProducerId gave."""

from __future__ import annotations

import uuid

import pytest

from conftest import ProtocolClient
from pk.engine import protocol as kp
from waits import wait_for

A = kp.ApiKey
E = kp.errors
# "not yet": the coordinator is loading or still writing the markers of the last end
RETRIABLE = {E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR, E.COORDINATOR_LOAD_IN_PROGRESS,
             E.CONCURRENT_TRANSACTIONS}


class Coordinator:
    """One connection to a broker; each transactional id's producer id and first epoch, so that
    answers read the same on both brokers."""

    def __init__(self, client: ProtocolClient):
        self.client = client
        self.first: dict[str, tuple[int, int]] = {}

    def call(self, key: int, version: int, body: dict) -> dict:
        """The first answer that is not retriable (RETRIABLE codes are "not yet")."""
        def answered():
            answer = self.client.call(key, version, body)
            return answer if answer.get("error_code", E.NONE) not in RETRIABLE else None
        return wait_for(answered, 30, f"{A(key).name} v{version} answered")

    def init(self, tid: str, pid: int = -1, epoch: int = -1) -> tuple[int, int]:
        wait_for(lambda: self.client.call(A.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [tid]})[
            "coordinators"][0]["error_code"] == E.NONE, 30, "a transaction coordinator")
        answer = self.call(A.INIT_PRODUCER_ID, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                   "producer_id": pid, "producer_epoch": epoch})
        assert answer["error_code"] == E.NONE, answer
        self.first.setdefault(tid, (answer["producer_id"], answer["producer_epoch"]))
        return answer["producer_id"], answer["producer_epoch"]

    def begin(self, tid: str, pid: int, epoch: int) -> int:
        """Ongoing through AddOffsetsToTxn (no data partition needed)."""
        return self.call(A.ADD_OFFSETS_TO_TXN, 4, {"transactional_id": tid, "producer_id": pid,
                                                   "producer_epoch": epoch, "group_id": "g-end-txn"})["error_code"]

    def end(self, version: int, tid: str, pid: int, epoch: int, commit: bool) -> tuple:
        """(error, epoch answered minus InitProducerId's, same producer id) of one EndTxn."""
        answer = self.call(A.END_TXN, version, {"transactional_id": tid, "producer_id": pid,
                                                "producer_epoch": epoch, "committed": commit})
        first_pid, first_epoch = self.first[tid]
        if answer["producer_epoch"] < 0:  # v4 does not answer them; an error answers -1
            return E.error_name(answer["error_code"]), None, None
        return (E.error_name(answer["error_code"]), answer["producer_epoch"] - first_epoch,
                answer["producer_id"] == first_pid)


def after_prior_end(c: Coordinator, run: str, version: int, prior: str, outcome: str) -> list:
    """A transaction Empty (prior "empty") or ended once (prior "commit"/"abort"), then ended
    `outcome` twice with the epoch the client holds (a second time: a retry)."""
    tid = f"end-{run}-{version}-{prior}-{outcome}"
    pid, epoch = c.init(tid)
    seen = []
    if prior != "empty":
        seen.append(c.begin(tid, pid, epoch))
        ended = c.end(version, tid, pid, epoch, prior == "commit")
        seen.append(ended)
        if version >= 5 and ended[1] is not None:
            epoch += ended[1]  # the client holds the bumped epoch
    for _ in range(2):
        seen.append(c.end(version, tid, pid, epoch, outcome == "commit"))
    return seen


def epochs_and_retries(c: Coordinator, run: str) -> list:
    """Transaction version 2's retries: the epoch before the bump retries the end that bumped
    it (the other outcome is refused), the current epoch starts a new end, an older or newer
    one is fenced; EndTxn v4 on the same transaction keeps version 1's rules."""
    seen = []
    tid = f"retry-{run}"
    pid, epoch = c.init(tid)
    seen += [c.begin(tid, pid, epoch), c.end(5, tid, pid, epoch, True), c.end(5, tid, pid, epoch, False),
             c.end(5, tid, pid, epoch + 1, False), c.end(5, tid, pid, epoch + 1, True)]
    tid = f"reinit-{run}"
    pid, epoch = c.init(tid)
    _, bumped = c.init(tid, pid, epoch)  # Empty at the next epoch
    seen += [bumped - epoch, c.end(5, tid, pid, epoch, False), c.end(5, tid, pid, epoch, True),
             c.end(4, tid, pid, epoch, False), c.end(5, tid, pid, bumped, False)]
    tid = f"mixed-{run}"
    pid, epoch = c.init(tid)
    seen += [c.end(4, tid, pid, epoch, False), c.end(5, tid, pid, epoch, False), c.end(4, tid, pid, epoch, False),
             c.end(4, tid, pid, epoch + 1, False), c.end(4, tid, pid, epoch + 1, True)]
    tid = f"ongoing-{run}"
    pid, epoch = c.init(tid)
    seen += [c.begin(tid, pid, epoch), c.end(5, tid, pid, epoch - 1, False), c.end(5, tid, pid, epoch + 1, False),
             c.end(4, tid, pid, epoch + 1, True), c.end(5, tid, pid, epoch, False)]
    tid = f"again-{run}"
    pid, epoch = c.init(tid)
    seen += [c.end(5, tid, pid, epoch + n, False) for n in range(3)]
    seen += [c.end(5, tid, pid, epoch, False), c.end(5, tid, pid, epoch + 2, False)]
    return seen


def both(kafka, pk_server, scenario, *args) -> tuple[list, list]:
    run = uuid.uuid4().hex[:8]
    with ProtocolClient(kafka.bootstrap) as k, ProtocolClient(pk_server.bootstrap) as p:
        return scenario(Coordinator(k), run, *args), scenario(Coordinator(p), run, *args)


@pytest.mark.parametrize("version", [4, 5])
@pytest.mark.parametrize("prior", ["empty", "commit", "abort"])
def test_end_after_empty_or_completed(kafka, pk_server, version, prior):
    for outcome in ("abort", "commit"):
        on_kafka, on_pk = both(kafka, pk_server, after_prior_end, version, prior, outcome)
        assert on_pk == on_kafka, (version, prior, outcome)
    if version == 5:  # the case Kafka's Java producer needs: an abort accepted, the epoch bumped
        on_kafka, _ = both(kafka, pk_server, after_prior_end, version, prior, "abort")
        assert on_kafka[-2][:2] == ("NONE", 1 if prior == "empty" else 2)


def test_transaction_version_2_retries_and_fencing(kafka, pk_server):
    on_kafka, on_pk = both(kafka, pk_server, epochs_and_retries)
    assert on_pk == on_kafka
    assert "PRODUCER_FENCED" in {s[0] for s in on_kafka if isinstance(s, tuple)}
