package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ecosystem's reader of a table topic: a Kafka Streams application (the real library, exactly-once, RocksDB
 * store) builds a KTable from a topic kbackfill wrote, and the table holds exactly the source's final state:
 * the last value of every key, deleted keys absent (also those the table topic held before: the tombstones are
 * there), a key deleted then written again present with its new value.
 */
@Tag("kafka")
class KafkaStreamsTableIT {

    private static EmbeddedKafka kafka;

    @TempDir
    Path state;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, String value, long secondsAfterT0) {
        return new ProducerRecord<>(topic, null, Orders.T0.plusSeconds(secondsAfterT0).toEpochMilli(),
                key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aKTableOfTheTopicKbackfillWroteHoldsExactlyTheFinalStateTombstonesIncluded() throws Exception {
        kafka.createTopic("kst-source", 3, Map.of());
        List<Orders.Produced> produced = new ArrayList<>(Orders.produce(kafka, "kst-source", 40, 3));
        List<ProducerRecord<byte[], byte[]>> later = new ArrayList<>();
        for (int k = 3; k < 8; k++) {
            later.add(record("kst-source", String.format("k%05d", k), null, 10_000 + k)); // deleted
        }
        later.add(record("kst-source", "k00005", Orders.json("k00005", 9), 20_000)); // deleted, then written again
        produced.addAll(Orders.send(kafka, later, Map.of()));
        Map<String, String> expected = new TreeMap<>();
        produced.stream().sorted((a, b) -> Long.compare(a.offset(), b.offset())).forEach(p -> {
            if (p.value() == null) {
                expected.remove(p.key());
            } else {
                expected.put(p.key(), p.value());
            }
        });
        assertThat(expected).hasSize(36).doesNotContainKeys("k00003", "k00007").containsKey("k00005");

        // the table topic already holds older values of two keys the source deletes: only a tombstone removes them
        kafka.createTopic("kst-table", 3, Map.of("cleanup.policy", "compact"));
        Orders.send(kafka, List.of(record("kst-table", "k00003", "stale", -60), record("kst-table", "k00004", "stale",
                -60)), Map.of());
        CliRun r = CliRun.run(kafka, "--topic", "kst-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:kst-table", "--job", "kst");
        assertThat(r.exitCode()).as(r.err()).isZero();

        StreamsBuilder builder = new StreamsBuilder();
        builder.table("kst-table", Consumed.with(Serdes.String(), Serdes.String()),
                Materialized.as("orders"));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kst-reader");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(StreamsConfig.STATE_DIR_CONFIG, state.toString());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.start();
            Map<String, String> table = new TreeMap<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (System.nanoTime() < deadline) {
                if (streams.state() == KafkaStreams.State.RUNNING) {
                    table = contents(streams.store(StoreQueryParameters.fromNameAndType("orders",
                            QueryableStoreTypes.<String, String>keyValueStore())));
                    if (table.equals(expected)) {
                        break;
                    }
                }
                Thread.sleep(200);
            }
            assertThat(table).as("the KTable once the application caught up").isEqualTo(expected);
        }
    }

    private static Map<String, String> contents(ReadOnlyKeyValueStore<String, String> store) {
        Map<String, String> m = new TreeMap<>();
        try (KeyValueIterator<String, String> all = store.all()) {
            while (all.hasNext()) {
                KeyValue<String, String> kv = all.next();
                m.put(kv.key, kv.value);
            }
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException e) {
            return Map.of(); // rebalancing: asked again
        }
        return m;
    }
}
