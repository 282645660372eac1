"""DumpLogSegments (kafka.tools.DumpLogSegments, Kafka 3.7.1): print segment files.

Works on any Kafka-format file given by path (pk's or a broker's):

* `.log` (and KRaft `.checkpoint` snapshots): batch lines, record lines with deep
  iteration, keys/payloads with --print-data-log (string/long/integer decoders or the
  `__consumer_offsets` decoder), then the non-consecutive offsets report;
* `.index` / `.timeindex`: entries, --index-sanity-check, --verify-index-only and the
  mismatch reports;
* `.snapshot` (producer state) and `.txnindex` (aborted transactions).

The layouts, the field order and the order of the reports follow DumpLogSegments.scala at
3.7.1 (docs/versions.md), down to Scala's HashMap order of the per-file reports and the
reversed order of the mismatch lists. Where Kafka dies with an uncaught Java exception the
tool raises commands/errors.JavaError, whose `line` is the JVM's first line
("Exception in thread "main" ...").

The modules:

* tool.py: the options, the output, the report loop over the files (`run`) and the
  per-kind dumps;
* segment.py: segment files read as FileRecords does: batches, v2 records and legacy
  (magic 0/1) messages, with Kafka's errors for corrupt data;
* index.py: the offset and time indexes (AbstractIndex's reads and sanity checks);
* parsers.py: the record decoders of --print-data-log (string/long/integer, the
  __consumer_offsets and __transaction_state parsers) and the control-record texts;
* java.py: the Java behaviour the tool shows: jopt's option reads, java.io.File paths,
  number parsing, sequence arithmetic.
"""
