"""The backends the commands run against, one module each: the bundled engine, a remote
cluster through confluent-kafka, legacy ZooKeeper admin through kazoo, and the perf tools'
producer and consumer adapters. commands/backend.py holds the interface they implement."""
