"""The tools' operations, written once against a backend interface.

One module per tool (topics.py, consumer.py + formatter.py, producer.py, consumer_groups.py,
get_offsets.py, producer_perf.py / consumer_perf.py, dump_log/, topics_zk.py for the 2.8
`--zookeeper` mode); backend.py is the interface and backends/ its implementations (the
bundled engine, confluent-kafka, kazoo). What several tools share: properties.py (Java
properties), client_config.py (Kafka configs onto librdkafka), perf_common.py, and errors.py,
the error types the CLI prints.
"""
