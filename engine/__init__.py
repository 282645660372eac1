"""pk's bundled storage engine: Kafka's on-disk log format on a local data directory.

A library that stands alone: the tools are built on it, never the other way round. Where each
Kafka concept lives:

- records/: the RecordBatch v2 layout, its only owner (header fields, framing, CRC,
  LogAppendTime restamp, validation, the walk over a segment file's batches); varint.py, the
  one varint implementation; columns.py, a run of batches decoded column-wise (NumPy) and
  rows built from columns (the consumer's and the tools' output); walk.py, a batch's
  records over its inflating stream, values skipped (batches anyone may send: decompression
  bombs).
- compression.py: the four codecs, whole or streamed in bounded pieces. segment.py, index.py: one segment and its indexes.
- log.py: a partition's log (append, read, roll, retention, recovery, ListOffsets lookups).
- engine.py: the data directory: topics, partitions, placement; metadata.py and
  topic_config.py their durable metadata and configs; topic_names.py the naming rules;
  validation.py what every boundary (engine, handlers, tools) accepts as a name or a number.
- producer.py, partitioner.py, append_worker.py: producing; consumer.py: consuming
  (record lists and column sets); groups.py, assignors.py: group membership on files;
  offsets.py, consumer_offsets.py: committed offsets in `__consumer_offsets` records.
- cleaner.py, compaction.py: log compaction. checkpoint.py, fileutil.py, paths.py: files
  (fileutil.inside: no created or removed path leaves the data directory).
- zk_formats.py: Kafka 2.8's znode paths and JSON; javacompat.py: Java/Scala/Jackson
  behaviour that shows in output (hash orders, string splitting, Java's Random).
- protocol/: the wire-protocol codec (no I/O); broker/: one handler per API over the engine;
  server.py: the asyncio network side of pk-server-start.
- errors.py: Kafka's errors and texts; version.py: the Kafka version pk mirrors.
"""
