package dev.kbackfill.cli;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test data: JSON order updates keyed by order id, and the model of what a backfill of a plan must leave in a
 * table: for every key, its last record inside the plan's ranges.
 */
final class Orders {

    static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    /** A produced record: where it landed and what it said ({@code value} null for a tombstone). */
    record Produced(String key, String value, int partition, long offset, long timestamp) {
    }

    private Orders() {
    }

    static String json(String key, int update) {
        return String.format(Locale.ROOT, "{\"order_id\":\"%s\",\"status\":\"s%d\",\"n\":%d,\"amount\":%d.%02d}",
                key, update, update, update, update % 100);
    }

    /** Writes {@code updates} rounds over {@code keys} keys, one second apart, and returns what landed where. */
    static List<Produced> produce(EmbeddedKafka kafka, String topic, int keys, int updates) throws Exception {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int u = 0; u < updates; u++) {
            for (int k = 0; k < keys; k++) {
                String key = String.format(Locale.ROOT, "k%05d", k);
                long ts = T0.plusSeconds((long) u * keys + k).toEpochMilli();
                records.add(new ProducerRecord<>(topic, null, ts, key.getBytes(StandardCharsets.UTF_8),
                        json(key, u).getBytes(StandardCharsets.UTF_8)));
            }
        }
        return send(kafka, records, Map.of());
    }

    static List<Produced> send(EmbeddedKafka kafka, List<ProducerRecord<byte[], byte[]>> records,
                               Map<String, Object> extra) throws Exception {
        Map<String, Object> config = kafka.clientConfig();
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.putAll(extra);
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (ProducerRecord<byte[], byte[]> r : records) {
                futures.add(p.send(r));
            }
            p.flush();
        }
        List<Produced> produced = new ArrayList<>();
        for (int i = 0; i < records.size(); i++) {
            RecordMetadata m = futures.get(i).get();
            ProducerRecord<byte[], byte[]> r = records.get(i);
            produced.add(new Produced(new String(r.key(), StandardCharsets.UTF_8),
                    r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8), m.partition(), m.offset(),
                    m.timestamp()));
        }
        return produced;
    }

    /** For each key, the value of its last record inside the plan's ranges (keys whose last record is a tombstone are absent). */
    static Map<String, String> expected(List<Produced> produced, Plan plan) {
        Map<String, Produced> last = new TreeMap<>();
        for (Produced p : produced) {
            PartitionRange r = plan.partition(p.partition()).orElse(null);
            if (r == null || p.offset() < r.start() || p.offset() >= r.end()) {
                continue;
            }
            Produced before = last.get(p.key());
            if (before == null || before.offset() < p.offset()) {
                last.put(p.key(), p);
            }
        }
        Map<String, String> expected = new TreeMap<>();
        last.forEach((k, p) -> {
            if (p.value() != null) {
                expected.put(k, statusOf(p.value()));
            }
        });
        return expected;
    }

    static String statusOf(String json) {
        int i = json.indexOf("\"status\":\"") + 10;
        return json.substring(i, json.indexOf('"', i));
    }

    /** The table as key to status. */
    static Map<String, String> table(String url, String table) throws SQLException {
        Map<String, String> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kafka_key, status FROM " + table)) {
            while (rs.next()) {
                if (rows.put(rs.getString(1), rs.getString(2)) != null) {
                    throw new AssertionError("duplicate key " + rs.getString(1) + " in " + table);
                }
            }
        }
        return rows;
    }

    static long count(String url, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
