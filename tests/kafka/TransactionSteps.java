// Kafka's own Java producer through a sequence of transactions, for tests/test_oracle_java_txn.py
// (the shapes of librdkafka's test 0098_consumer_txn, whose Java helper drives Kafka's producer
// the same way). Run in the tool server's JVM (KafkaTools.run_class), so it costs no JVM start.
//
//   TransactionSteps <bootstrap> <topic> <transactional id> <step> ...
//   step: <kind>,<flush|noflush>,<first key>,<count>
//     kind commit / abort: beginTransaction, send <count> records, flush or not, then
//                          commitTransaction / abortTransaction (count 0: an empty transaction)
//     kind plain:          the same records from a non-transactional idempotent producer
// Record keys are the decimal numbers first key .. first key + count - 1, values "v".
//
// Prints one line per step: "<step> ok" or "<step> <exception class>: <message>" (a failed
// step does not stop the sequence: a producer in a fatal state fails the later steps too,
// which shows where it broke), then "transaction version <n>": the version the producer's
// TransactionManager chose from the broker's finalized features (2: KIP-890, EndTxn v5).
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class TransactionSteps {
    static KafkaProducer<byte[], byte[]> producer(String bootstrap, String transactionalId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");  // batching, as 0098's helper sets
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        if (transactionalId != null) p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        return new KafkaProducer<>(p);
    }

    static void send(KafkaProducer<byte[], byte[]> producer, String topic, int first, int count) {
        for (int key = first; key < first + count; key++) {
            producer.send(new ProducerRecord<>(topic, 0, String.valueOf(key).getBytes(StandardCharsets.UTF_8),
                                               "v".getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The TransactionManager's own answer (no public API tells which version it uses). */
    static String transactionVersion(KafkaProducer<byte[], byte[]> producer) throws ReflectiveOperationException {
        Field f = KafkaProducer.class.getDeclaredField("transactionManager");
        f.setAccessible(true);
        Object manager = f.get(producer);
        boolean v2 = (Boolean) manager.getClass().getMethod("isTransactionV2Enabled").invoke(manager);
        return v2 ? "2" : "1";
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        KafkaProducer<byte[], byte[]> txn = producer(bootstrap, args[2]);
        KafkaProducer<byte[], byte[]> plain = null;
        try {
            txn.initTransactions();
            for (int i = 3; i < args.length; i++) {
                String[] step = args[i].split(",");
                String kind = step[0];
                boolean flush = step[1].equals("flush");
                int first = Integer.parseInt(step[2]), count = Integer.parseInt(step[3]);
                String outcome = "ok";
                try {
                    if (kind.equals("plain")) {
                        if (plain == null) plain = producer(bootstrap, null);
                        send(plain, topic, first, count);
                        if (flush) plain.flush();
                    } else {
                        txn.beginTransaction();
                        send(txn, topic, first, count);
                        if (flush) txn.flush();
                        if (kind.equals("commit")) txn.commitTransaction();
                        else txn.abortTransaction();
                    }
                } catch (Exception e) {
                    outcome = e.getClass().getName() + ": " + e.getMessage();
                }
                System.out.println(args[i] + " " + outcome);
            }
            System.out.println("transaction version " + transactionVersion(txn));
        } finally {
            txn.close(Duration.ofSeconds(10));
            if (plain != null) plain.close(Duration.ofSeconds(10));
        }
    }
}
