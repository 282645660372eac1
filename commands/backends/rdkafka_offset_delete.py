"""librdkafka's DeleteConsumerGroupOffsets (Kafka's OffsetDelete API, what
Admin.deleteConsumerGroupOffsets sends), called through ctypes.

confluent-kafka's Python AdminClient does not expose this one admin operation (2.16 has
list/alter offsets but no delete), while the librdkafka it loads implements it. So this
module opens that same shared library and drives the C API for one request: a private
rd_kafka_t built from the same librdkafka configuration (security settings included), a
queue, the request, one result event. Nothing else in pk uses ctypes.

`delete_group_offsets(conf, group, partitions, timeout_ms)` returns
(group error or None, {(topic, partition): error or None}), errors as (code, text) with
librdkafka's codes and texts; kafka_admin.py turns them into Kafka's exceptions.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Sequence

from ..errors import ClientConfigError

RawError = tuple[int, str]

_ERRSTR = 512
_PRODUCER = 0  # RD_KAFKA_PRODUCER: any client type can send admin requests
_ADMIN_OP_ANY = 0  # RD_KAFKA_ADMIN_OP_ANY
_TIMED_OUT = -185  # RD_KAFKA_RESP_ERR__TIMED_OUT


class _TopicPartition(ctypes.Structure):
    _fields_ = [("topic", ctypes.c_char_p), ("partition", ctypes.c_int32), ("offset", ctypes.c_int64),
                ("metadata", ctypes.c_void_p), ("metadata_size", ctypes.c_size_t), ("opaque", ctypes.c_void_p),
                ("err", ctypes.c_int), ("_private", ctypes.c_void_p)]


class _TopicPartitionList(ctypes.Structure):
    _fields_ = [("cnt", ctypes.c_int), ("size", ctypes.c_int), ("elems", ctypes.POINTER(_TopicPartition))]


_SIGNATURES = {
    "rd_kafka_conf_new": (ctypes.c_void_p, []),
    "rd_kafka_conf_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_conf_set": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                         ctypes.c_size_t]),
    "rd_kafka_new": (ctypes.c_void_p, [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    "rd_kafka_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_queue_new": (ctypes.c_void_p, [ctypes.c_void_p]),
    "rd_kafka_queue_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_queue_poll": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
    "rd_kafka_topic_partition_list_new": (ctypes.c_void_p, [ctypes.c_int]),
    "rd_kafka_topic_partition_list_add": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32]),
    "rd_kafka_topic_partition_list_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_DeleteConsumerGroupOffsets_new": (ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_void_p]),
    "rd_kafka_DeleteConsumerGroupOffsets_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_AdminOptions_new": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
    "rd_kafka_AdminOptions_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_AdminOptions_set_request_timeout": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                                                 ctypes.c_size_t]),
    "rd_kafka_DeleteConsumerGroupOffsets": (None, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                                   ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]),
    "rd_kafka_event_error": (ctypes.c_int, [ctypes.c_void_p]),
    "rd_kafka_event_error_string": (ctypes.c_char_p, [ctypes.c_void_p]),
    "rd_kafka_event_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_event_DeleteConsumerGroupOffsets_result": (ctypes.c_void_p, [ctypes.c_void_p]),
    "rd_kafka_DeleteConsumerGroupOffsets_result_groups": (ctypes.POINTER(ctypes.c_void_p),
                                                          [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]),
    "rd_kafka_group_result_error": (ctypes.c_void_p, [ctypes.c_void_p]),
    "rd_kafka_group_result_partitions": (ctypes.POINTER(_TopicPartitionList), [ctypes.c_void_p]),
    "rd_kafka_error_code": (ctypes.c_int, [ctypes.c_void_p]),
    "rd_kafka_error_string": (ctypes.c_char_p, [ctypes.c_void_p]),
    "rd_kafka_err2str": (ctypes.c_char_p, [ctypes.c_int]),
}

_lib = None


def _library_path() -> str | None:
    """The librdkafka that confluent-kafka loaded (its wheel bundles one), else the system's."""
    import confluent_kafka.cimpl  # noqa: F401  (maps librdkafka into this process)

    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if "librdkafka" in os.path.basename(path):
                    return path
    except OSError:
        pass
    package = os.path.dirname(os.path.dirname(confluent_kafka.cimpl.__file__))
    for folder in (os.path.join(package, "confluent_kafka.libs"), os.path.join(package, "confluent_kafka", ".dylibs")):
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.startswith("librdkafka"):
                    return os.path.join(folder, name)
    return ctypes.util.find_library("rdkafka")


def _library():
    global _lib
    if _lib is None:
        path = _library_path()
        if path is None:
            raise ClientConfigError("Deleting consumer group offsets needs librdkafka's DeleteConsumerGroupOffsets, "
                                    "and no librdkafka library was found")
        lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        _lib = lib
    return _lib


def _text(value: bytes | None) -> str:
    return (value or b"").decode("utf-8", "replace")


def delete_group_offsets(conf: dict, group: str, partitions: Sequence[tuple[str, int]], timeout_ms: int
                         ) -> tuple[RawError | None, dict[tuple[str, int], RawError | None]]:
    lib = _library()
    errstr = ctypes.create_string_buffer(_ERRSTR)
    rk_conf = lib.rd_kafka_conf_new()
    for key, value in conf.items():
        if not isinstance(value, str):
            continue  # callbacks belong to the Python clients
        if lib.rd_kafka_conf_set(rk_conf, key.encode(), value.encode(), errstr, _ERRSTR) != 0:
            lib.rd_kafka_conf_destroy(rk_conf)
            raise ClientConfigError(_text(errstr.value))
    rk = lib.rd_kafka_new(_PRODUCER, rk_conf, errstr, _ERRSTR)
    if not rk:
        lib.rd_kafka_conf_destroy(rk_conf)
        raise ClientConfigError(_text(errstr.value))
    queue = options = request = event = None
    try:
        queue = lib.rd_kafka_queue_new(rk)
        tplist = lib.rd_kafka_topic_partition_list_new(max(len(partitions), 1))
        for topic, partition in partitions:
            lib.rd_kafka_topic_partition_list_add(tplist, topic.encode(), partition)
        request = lib.rd_kafka_DeleteConsumerGroupOffsets_new(group.encode(), tplist)
        lib.rd_kafka_topic_partition_list_destroy(tplist)
        options = lib.rd_kafka_AdminOptions_new(rk, _ADMIN_OP_ANY)
        lib.rd_kafka_AdminOptions_set_request_timeout(options, max(int(timeout_ms), 1), errstr, _ERRSTR)
        requests = (ctypes.c_void_p * 1)(request)
        lib.rd_kafka_DeleteConsumerGroupOffsets(rk, requests, 1, options, queue)
        # librdkafka answers within the request timeout; the margin only guards against a hang
        event = lib.rd_kafka_queue_poll(queue, max(int(timeout_ms), 1) + 5000)
        if not event:
            return (_TIMED_OUT, "Timed out"), {}
        code = lib.rd_kafka_event_error(event)
        if code:
            return (code, _text(lib.rd_kafka_event_error_string(event))), {}
        result = lib.rd_kafka_event_DeleteConsumerGroupOffsets_result(event)
        count = ctypes.c_size_t(0)
        groups = lib.rd_kafka_DeleteConsumerGroupOffsets_result_groups(result, ctypes.byref(count))
        if not count.value:
            return None, {}
        group_result = groups[0]
        group_error = None
        error = lib.rd_kafka_group_result_error(group_result)
        if error:
            group_error = (lib.rd_kafka_error_code(error), _text(lib.rd_kafka_error_string(error)))
        out: dict[tuple[str, int], RawError | None] = {}
        tpl = lib.rd_kafka_group_result_partitions(group_result)
        if tpl:
            for i in range(tpl.contents.cnt):
                element = tpl.contents.elems[i]
                key = (_text(element.topic), element.partition)
                out[key] = (element.err, _text(lib.rd_kafka_err2str(element.err))) if element.err else None
        return group_error, out
    finally:
        if event:
            lib.rd_kafka_event_destroy(event)
        if options:
            lib.rd_kafka_AdminOptions_destroy(options)
        if request:
            lib.rd_kafka_DeleteConsumerGroupOffsets_destroy(request)
        if queue:
            lib.rd_kafka_queue_destroy(queue)
        lib.rd_kafka_destroy(rk)
