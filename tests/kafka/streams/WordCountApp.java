import java.util.Arrays;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The test suite's Kafka Streams client (KIP-1071's streams rebalance protocol): a word count
 * whose topology has a repartition topic (group by word) and a changelog topic (the count's
 * store), so the broker must register a topology, create internal topics and assign tasks.
 *
 * Usage: WordCountApp BOOTSTRAP APPLICATION_ID INPUT_TOPIC OUTPUT_TOPIC
 * Prints "STATE <state>" on every state change and "TASKS <sorted active task ids>" whenever
 * this instance's active tasks change, so a test waits for states instead of sleeping.
 * Runs until SIGTERM (then closes cleanly, leaving the group).
 */
public class WordCountApp {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/pk-streams-" + ProcessHandle.current().pid());
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase().split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts")))
            .toStream()
            .mapValues(count -> Long.toString(count))
            .to(args[3], Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            done.countDown();
        }));
        streams.start();
        String shown = null;
        while (done.getCount() > 0) {
            TreeSet<String> tasks = new TreeSet<>();
            try {
                for (ThreadMetadata thread : streams.metadataForLocalThreads())
                    for (TaskMetadata task : thread.activeTasks())
                        tasks.add(task.taskId().toString());
            } catch (IllegalStateException notRunning) {
                // closing: nothing to show
            }
            String now = String.join(" ", tasks);
            if (!now.equals(shown)) {
                System.out.println("TASKS " + now);
                System.out.flush();
                shown = now;
            }
            Thread.sleep(100);
        }
    }
}
