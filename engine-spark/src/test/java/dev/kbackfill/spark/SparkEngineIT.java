package dev.kbackfill.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.sink.delta.DeltaTableRows;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kbackfill run --engine spark} against the real broker, Spark in local mode in a process of its own: the
 * same plan gives the same rows as the single-machine run, and a second run writes nothing.
 */
@Tag("spark")
class SparkEngineIT {

    static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** Keys k0..k(keys-1) over the topic's partitions, each updated several times, some deleted at the end. */
    static void produce(String topic, int partitions, int keys, int updates) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        Random random = new Random(7);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            long t = T0.plusSeconds(60).toEpochMilli();
            for (int u = 0; u < updates; u++) {
                for (int k = 0; k < keys; k++) {
                    String key = "k" + k;
                    String value = u == updates - 1 && k % 7 == 0 ? null
                            : "{\"status\":\"s" + u + "\",\"amount\":" + random.nextInt(1000) + ",\"note\":\"" + key + "\"}";
                    // a key moves between partitions now and then: the version rule decides across partitions
                    int partition = (k + (u % 3 == 2 ? 1 : 0)) % partitions;
                    producer.send(new ProducerRecord<>(topic, partition, t++, key.getBytes(StandardCharsets.UTF_8),
                            value == null ? null : value.getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
    }

    static Map<String, Map<String, Object>> deltaRows(Path table) throws Exception {
        Map<String, Map<String, Object>> rows = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(table.toString())) {
            Map<String, Object> copy = new HashMap<>(r);
            rows.put(String.valueOf(copy.get("kafka_key")), copy);
        }
        return rows;
    }

    @Test
    void deltaOnSparkGivesTheSameTableAsTheLocalRunAndASecondRunWritesNothing() throws Exception {
        kafka.createTopic("spark-delta", 3, Map.of("retention.ms", "-1"));
        produce("spark-delta", 3, 200, 4);
        Path local = dir.resolve("local");
        Path spark = dir.resolve("spark");
        String[] request = {"--topic", "spark-delta", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table"};
        SparkCli single = SparkCli.run(kafka, concat(request, "--sink", "delta:" + local));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        SparkCli first = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "2"),
                concat(request, "--sink", "delta:" + spark));
        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(deltaRows(spark)).isEqualTo(deltaRows(local));
        long version = DeltaTableRows.version(spark.toString());
        SparkCli second = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "2"),
                concat(request, "--sink", "delta:" + spark));
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.out()).contains("nothing to do");
        assertThat(DeltaTableRows.version(spark.toString())).isEqualTo(version);
    }

    static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
    }
}
