"""pk's protocol codec on the broker's request path, beside kio measured in the same run.

Issue 12 asked whether pk should adopt kio (Python types generated from Kafka's message
schemas, all versions, with a compiled reader core) or extend its own schema module. This
benchmark times both on the messages a broker handles most, at current flexible versions:

- decode a Produce v11 request (1 topic, 3 partitions, a 16 KiB record batch each; the
  records stay a view into the frame in pk, a bytes copy in kio);
- encode a Fetch v16 response (1 topic, 3 partitions, 1 MiB of records each);
- decode a Metadata v12 request for 20 topics, and encode its answer (3 partitions each).

    python bench/protocol_codec.py [--seconds S]

kio is a benchmark-only dependency (`pip install kio`); without it only pk's figures print.
"""

from __future__ import annotations

import argparse
import io
import time
import uuid

from pk.engine.protocol.messages import REQUESTS, RESPONSES

TOPIC_ID = uuid.UUID("8a7c56e1-0f3b-4d38-9d5c-2f0e1a4b6c7d")
BATCH = bytes(16 * 1024)
FETCHED = bytes(1 << 20)


def produce_body() -> dict:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": "orders", "partition_data": [{"index": p, "records": BATCH} for p in range(3)]}]}


def fetch_body() -> dict:
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic_id": TOPIC_ID, "partitions": [
            {"partition_index": p, "error_code": 0, "high_watermark": 1000, "last_stable_offset": 1000,
             "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
             "records": FETCHED} for p in range(3)]}]}


def metadata_request_body() -> dict:
    return {"topics": [{"topic_id": uuid.UUID(int=0), "name": f"topic-{i}"} for i in range(20)],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


def metadata_response_body() -> dict:
    return {"throttle_time_ms": 0, "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}],
            "cluster_id": "pk-cluster", "controller_id": 0, "topics": [
                {"error_code": 0, "name": f"topic-{i}", "topic_id": TOPIC_ID, "is_internal": False,
                 "partitions": [{"error_code": 0, "partition_index": p, "leader_id": 0, "leader_epoch": 0,
                                 "replica_nodes": [0], "isr_nodes": [0], "offline_replicas": []}
                                for p in range(3)],
                 "topic_authorized_operations": -2147483648} for i in range(20)]}


def rate(fn, seconds: float) -> float:
    """Calls per second of fn, over about `seconds` (after a warm-up call)."""
    fn()
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(50):
            fn()
        n += 50
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def pk_cases() -> dict[str, object]:
    produce = REQUESTS[0].encode(produce_body(), 11)
    metadata_req = REQUESTS[3].encode(metadata_request_body(), 12)
    fetch, meta_resp = fetch_body(), metadata_response_body()
    return {
        "decode Produce v11 request": lambda: REQUESTS[0].decode(produce, 11),
        "encode Fetch v16 response": lambda: RESPONSES[1].encode(fetch, 16),
        "decode Metadata v12 request": lambda: REQUESTS[3].decode(metadata_req, 12),
        "encode Metadata v12 response": lambda: RESPONSES[3].encode(meta_resp, 12),
    }, {"produce": produce, "metadata_req": metadata_req}


def kio_cases(frames: dict[str, bytes]) -> dict[str, object] | None:
    try:
        from kio.schema.fetch.v16 import response as fetch16
        from kio.schema.metadata.v12 import request as meta_req12
        from kio.schema.metadata.v12 import response as meta_resp12
        from kio.schema.produce.v11 import request as produce11
        from kio.serial import entity_reader, entity_writer
    except ImportError:
        return None
    read_produce = entity_reader(produce11.ProduceRequest)
    read_meta = entity_reader(meta_req12.MetadataRequest)
    write_fetch = entity_writer(fetch16.FetchResponse)
    write_meta = entity_writer(meta_resp12.MetadataResponse)
    fetch = fetch16.FetchResponse(throttle_time=_ms(0), error_code=_err(0), session_id=0, responses=(
        fetch16.FetchableTopicResponse(topic_id=TOPIC_ID, partitions=tuple(
            fetch16.PartitionData(partition_index=p, error_code=_err(0), high_watermark=1000,
                                  last_stable_offset=1000, log_start_offset=0, aborted_transactions=None,
                                  preferred_read_replica=-1, records=FETCHED) for p in range(3))),))
    meta = meta_resp12.MetadataResponse(throttle_time=_ms(0), brokers=(
        meta_resp12.MetadataResponseBroker(node_id=0, host="127.0.0.1", port=9092, rack=None),),
        cluster_id="pk-cluster", controller_id=0, topics=tuple(
            meta_resp12.MetadataResponseTopic(error_code=_err(0), name=f"topic-{i}", topic_id=TOPIC_ID,
                                              is_internal=False, partitions=tuple(
                    meta_resp12.MetadataResponsePartition(
                        error_code=_err(0), partition_index=p, leader_id=0, leader_epoch=0,
                        replica_nodes=(0,), isr_nodes=(0,), offline_replicas=()) for p in range(3)),
                topic_authorized_operations=-2147483648) for i in range(20)))

    def encode(writer, entity):
        buf = io.BytesIO()
        writer(buf, entity)
        return buf.getvalue()

    produce, metadata_req = memoryview(frames["produce"]), memoryview(frames["metadata_req"])
    return {
        "decode Produce v11 request": lambda: read_produce(produce, 0),
        "encode Fetch v16 response": lambda: encode(write_fetch, fetch),
        "decode Metadata v12 request": lambda: read_meta(metadata_req, 0),
        "encode Metadata v12 response": lambda: encode(write_meta, meta),
    }


def _ms(n):
    import datetime
    return datetime.timedelta(milliseconds=n)


def _err(n):
    from kio.schema.errors import ErrorCode
    return ErrorCode(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time spent on each case and codec")
    args = parser.parse_args()
    pk, frames = pk_cases()
    kio = kio_cases(frames)
    print(f"{'case':32} {'pk calls/s':>12} {'kio calls/s':>12} {'pk/kio':>7}")
    for name, fn in pk.items():
        ours = rate(fn, args.seconds)
        if kio is None:
            print(f"{name:32} {ours:12,.0f}")
            continue
        theirs = rate(kio[name], args.seconds)
        print(f"{name:32} {ours:12,.0f} {theirs:12,.0f} {ours / theirs:6.1f}x")
    if kio is None:
        print("kio is not installed (pip install kio): its column was left out")


if __name__ == "__main__":
    main()
