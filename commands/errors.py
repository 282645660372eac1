"""The errors the tools raise for the CLI to print.

Each class is one way a Kafka tool ends, and says how the CLI shows it:

- `UsageError`: what jopt-simple tools report with printUsageAndExit (the message, exit 1);
- `ArgumentError`: what argparse4j would report (`<prog>: error: <message>`);
- `JavaError`: an exception Kafka's tool lets escape (`java_class` + `message`); str() is its
  Java toString(), `line` the JVM's first line when it escapes main();
- `ToolError`: a pk refusal with its own one-line text;
- `CommandFailure`: what ConsumerGroupCommand prints as `Error: Executing consumer group
  command failed due to <message>`;
- `TopicCommandError`: what TopicCommand prints after "Error while executing topic command : "
  (a KafkaError, as the engine's own failures there are);
- `ClientConfigError` (`BootstrapError` for a refused --bootstrap-server): a client
  configuration that cannot be used, one line;
- `Unsupported`: an option of Kafka's tool that pk does not implement (its one line);
- `ConsumerFailure`: the console consumer's "Unknown error when running consumer: " line;
- `FormatterError`: a record the console consumer's formatter cannot write (`java` is Java's
  toString of the exception);
- `PropertiesError`: a properties file that cannot be read (the first line Java prints);
- `OffsetShellError`: what GetOffsetShell prints after "Error occurred: "; `PartitionError` a
  per-partition ListOffsets failure inside it;
- `ProducerFailure`: the console producer's other failures (one line); `ConfigError` Kafka's
  ConfigException for a producer (or consumer) config, `ReaderError` the line reader's
  KafkaException.

`java_class_of` names the Java exception Kafka's client raises for an engine error.
"""

from __future__ import annotations

from pk.engine.errors import KafkaError


class UsageError(Exception):
    """A jopt tool's printUsageAndExit message: one line on stderr, exit 1."""


class ArgumentError(Exception):
    """An argparse4j ArgumentParserException (ProducerPerformance): str() is its message."""


class JavaError(Exception):
    """An exception the Java tool does not catch (or prints with getMessage()).

    str() is Java's toString(): `java_class: message`, or the class alone without a message."""

    def __init__(self, java_class: str, message: str | None = None):
        super().__init__(f"{java_class}: {message}" if message is not None else java_class)
        self.java_class = java_class
        self.message = message

    @property
    def line(self) -> str:
        """The JVM's first line for an exception escaping main()."""
        return f'Exception in thread "main" {self}'


class ToolError(Exception):
    """A failure pk reports in its own words (one line)."""


class CommandFailure(Exception):
    """An exception ConsumerGroupCommand catches in run():
    `Error: Executing consumer group command failed due to <message>`."""


class TopicCommandError(KafkaError):
    """A failure inside a TopicCommand action, printed after "Error while executing topic command : "."""


class ClientConfigError(ValueError):
    """A client configuration that cannot be used; str() is the one line to print."""


class BootstrapError(ClientConfigError):
    """A --bootstrap-server value Kafka's tools refuse (a usage error)."""


class Unsupported(Exception):
    """An option of Kafka's tool that pk accepts but does not implement (DumpLogSegments)."""


class ConsumerFailure(Exception):
    """A failure while consuming: printed as Kafka's "Unknown error when running consumer: " line."""


class FormatterError(Exception):
    """A record the formatter could not write (e.g. a deserializer rejected its bytes).
    `java` is how Java prints the exception (its class, then the message)."""

    JAVA_CLASS = "org.apache.kafka.common.errors.SerializationException"

    @property
    def java(self) -> str:
        return f"{self.JAVA_CLASS}: {self}"


class PropertiesError(Exception):
    """A properties file cannot be read; str() is the first line Java prints for it."""


class OffsetShellError(Exception):
    """What GetOffsetShell prints after "Error occurred: "."""


class PartitionError(Exception):
    """A per-partition ListOffsets failure: `java_class: message`, as Kafka's
    ExecutionException.getMessage() shows it."""

    def __init__(self, java_class: str, message: str):
        super().__init__(f"{java_class}: {message}")
        self.java_class = java_class
        self.message = message


class ProducerFailure(Exception):
    """A console producer failure other than usage; str() is the one line printed, exit 1."""


class ConfigError(ProducerFailure):
    """org.apache.kafka.common.config.ConfigException."""

    def __init__(self, name: str, value, message: str | None):
        super().__init__(f"Invalid value {value} for configuration {name}" + (f": {message}" if message else ""))


class ReaderError(ProducerFailure):
    """A KafkaException thrown by the line reader; Kafka 4.x prints it as the first line of its
    stack trace, `org.apache.kafka.common.KafkaException: <message>`."""

    JAVA_CLASS = "org.apache.kafka.common.KafkaException"

    def __init__(self, message: str):
        super().__init__(f"{self.JAVA_CLASS}: {message}")


# Java exception classes the tools die with (JavaError.java_class).
KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
NUMBER_FORMAT = "java.lang.NumberFormatException"
STRING_INDEX = "java.lang.StringIndexOutOfBoundsException"
NO_SUCH_ELEMENT = "java.util.NoSuchElementException"
BUFFER_UNDERFLOW = "java.nio.BufferUnderflowException"
NO_SUCH_FILE = "java.nio.file.NoSuchFileException"
ACCESS_DENIED = "java.nio.file.AccessDeniedException"
IO_EXCEPTION = "java.io.IOException"
CORRUPT_RECORD = "org.apache.kafka.common.errors.CorruptRecordException"
INVALID_RECORD = "org.apache.kafka.common.InvalidRecordException"
CORRUPT_INDEX = "org.apache.kafka.storage.internals.log.CorruptIndexException"

# engine error class name -> the Java exception Kafka's client raises for it
_JAVA_CLASSES = {
    "RecordTooLargeError": "org.apache.kafka.common.errors.RecordTooLargeException",
    "ProducerTimeoutError": "org.apache.kafka.common.errors.TimeoutException",
    "InvalidTopicError": "org.apache.kafka.common.errors.InvalidTopicException",
    "UnknownTopicOrPartitionError": "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
    "ProducerClosedError": "java.lang.IllegalStateException",
    "OffsetOutOfRangeError": "org.apache.kafka.clients.consumer.OffsetOutOfRangeException",
    "NoOffsetForPartitionError": "org.apache.kafka.clients.consumer.NoOffsetForPartitionException",
    "CorruptRecordError": "org.apache.kafka.common.errors.CorruptRecordException",
    "InvalidRecordError": "org.apache.kafka.common.InvalidRecordException",
}


def java_class_of(exc: BaseException) -> str:
    return getattr(exc, "java_class", None) or _JAVA_CLASSES.get(type(exc).__name__, KAFKA_EXCEPTION)
