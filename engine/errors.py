"""Errors the engine raises, named after Kafka's and carrying Kafka's message texts.

Each class maps to one Kafka error (the wire-protocol code is kept for the broker). The
message is what Kafka's tools print after their prefix, so the CLI prints str(error) as is.
"""


class KafkaError(Exception):
    """Base class: `code` is the Kafka protocol error code, `message` Kafka's text."""

    code = -1  # UNKNOWN_SERVER_ERROR

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class CorruptRecordError(KafkaError):
    code = 2  # CORRUPT_MESSAGE


class CorruptBatchError(CorruptRecordError):
    """A stored batch that fails its checks, in the words of Kafka's consumer
    (CompletedFetch.maybeEnsureValid): its partition, its base offset and the cause."""

    def __init__(self, topic: str, partition: int, base_offset: int, cause: str):
        super().__init__(f"Record batch for partition {topic}-{partition} at offset {base_offset} "
                         f"is invalid, cause: {cause}")
        self.topic, self.partition, self.base_offset = topic, partition, base_offset


class OffsetOutOfRangeError(KafkaError):
    code = 1


class UnknownTopicOrPartitionError(KafkaError):
    code = 3


class RecordTooLargeError(KafkaError):
    code = 10  # MESSAGE_TOO_LARGE


class InvalidTopicError(KafkaError):
    code = 17


class InvalidRecordError(KafkaError):
    code = 87


class TopicExistsError(KafkaError):
    code = 36


class InvalidPartitionsError(KafkaError):
    code = 37


class InvalidReplicationFactorError(KafkaError):
    code = 38


class InvalidReplicaAssignmentError(KafkaError):
    code = 39


class InvalidConfigurationError(KafkaError):
    code = 40  # INVALID_CONFIG


class InvalidRequestError(KafkaError):
    code = 42


class TopicDeletionDisabledError(KafkaError):
    code = 73


class PolicyViolationError(KafkaError):
    code = 44


# KafkaStorageException's message (Errors.KAFKA_STORAGE_ERROR)
STORAGE_ERROR = "Disk error when trying to access log file on the disk"


class KafkaStorageError(KafkaError):
    """The log's files could not be written (a full disk, a read-only file system)."""

    code = 56  # KAFKA_STORAGE_ERROR

    @classmethod
    def from_os_error(cls, exc: OSError) -> "KafkaStorageError":
        detail = f"{exc.strerror} ({exc.filename})" if exc.strerror and exc.filename else str(exc)
        return cls(f"{STORAGE_ERROR}: {detail}")


class PathOutsideDataDirError(KafkaStorageError):
    """A path the engine was about to create or remove resolves outside its directory (a
    symlink planted in the data dir, or a name that slipped past validation)."""


class DataDirError(KafkaError):
    """The data directory cannot be used (unwritable, not a directory, corrupt metadata)."""
