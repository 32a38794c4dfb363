package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables kbackfill creates take their columns from records with values, and fields that appear halfway: a topic that
 * starts with a delete (the stuck Delta table), and a field first carried by the 500th record of a range,
 * into SQLite, PostgreSQL, Delta and Iceberg.
 */
@Tag("evolution")
class SchemaEvolutionIT {

    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic("evo-delete-first", 1, Map.of());
        long t = Instant.parse("2024-01-01T00:00:00Z").toEpochMilli();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        records.add(new ProducerRecord<>("evo-delete-first", 0, (Long) t, bytes("k1"), (byte[]) null));
        records.add(new ProducerRecord<>("evo-delete-first", 0, (Long) t, bytes("k2"), bytes("{\"a\":1}")));
        records.add(new ProducerRecord<>("evo-delete-first", 0, (Long) t, bytes("k3"), bytes("{\"a\":3}")));
        records.add(new ProducerRecord<>("evo-delete-first", 0, (Long) t, bytes("k3"), (byte[]) null));
        Orders.send(kafka, records, Map.of());

        kafka.createTopic("evo-halfway", 1, Map.of());
        List<ProducerRecord<byte[], byte[]>> halfway = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            String value = i < 499 ? "{\"n\":" + i + "}" : "{\"n\":" + i + ",\"coupon\":\"c" + i + "\"}";
            halfway.add(new ProducerRecord<>("evo-halfway", 0, (Long) t, bytes("k" + i), bytes(value)));
        }
        Orders.send(kafka, halfway, Map.of());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static CliRun run(String topic, String sink, String... more) {
        List<String> args = new ArrayList<>(List.of("--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                sink, "--create-table", "--table", "t"));
        args.addAll(List.of(more));
        return CliRun.run(kafka, args.toArray(String[]::new));
    }

    private static Map<String, Object> deltaRows(String path, String column) throws Exception {
        Map<String, Object> rows = new TreeMap<>();
        dev.kbackfill.sink.delta.DeltaTableRows.rows(path).forEach(r -> rows.put((String) r.get("kafka_key"),
                r.get(column)));
        return rows;
    }

    private static Map<String, Object> icebergRows(String path, String column) throws Exception {
        Table table = new HadoopTables(new Configuration()).load(path);
        Map<String, Object> rows = new TreeMap<>();
        try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
            records.forEach(r -> rows.put((String) r.getField("kafka_key"), r.getField(column)));
        }
        return rows;
    }

    /**
     * A run whose records are deletes only creates the table from the key columns and stores the job and the deletes
     * in it, so that a rerun, or an older replay, keeps them; the value columns come with the first values.
     */
    @Test
    void aLakeTableCreatedFromDeletesAloneRecordsThemAndTakesItsValueColumnsLater() throws Exception {
        for (String format : List.of("delta", "iceberg")) {
            String path = dir.resolve(format + "-delete-first").toString();
            CliRun first = run("evo-delete-first", format + ":" + path, "--batch-size", "1", "--max-records", "1",
                    "--job", format + "-delete-first");
            assertThat(first.exitCode()).as(first.err()).isZero();
            assertThat(first.err()).doesNotContain("warning:");
            assertThat(dir.resolve(format + "-delete-first").resolve(format.equals("delta") ? "_delta_log" : "metadata"))
                    .as(format + ": the table, from the key columns").exists();
            CliRun status = CliRun.of("status", "--sink", format + ":" + path, "--table", "t", "--job",
                    format + "-delete-first");
            assertThat(status.exitCode()).as(format + ": the job and its delete are stored: " + status.out()
                    + status.err()).isZero();
            assertThat(status.out()).as(format).contains(format + "-delete-first");
            CliRun rest = run("evo-delete-first", format + ":" + path, "--batch-size", "1", "--job",
                    format + "-delete-first");
            assertThat(rest.exitCode()).as(format + ": " + rest.err()).isZero();
            Map<String, Object> rows = format.equals("delta") ? deltaRows(path, "a") : icebergRows(path, "a");
            assertThat(rows).as(format).isEqualTo(Map.of("k2", 1L));
            CliRun again = run("evo-delete-first", format + ":" + path, "--batch-size", "1", "--job",
                    format + "-delete-first");
            assertThat(again.exitCode()).as(again.err()).isZero();
            assertThat(format.equals("delta") ? deltaRows(path, "a") : icebergRows(path, "a")).as(format + ": a rerun "
                    + "keeps every version out, the delete of a key never written included").isEqualTo(Map.of("k2", 1L));

            String ignoring = dir.resolve(format + "-ignore").toString();
            CliRun ignore = run("evo-delete-first", format + ":" + ignoring, "--batch-size", "1", "--on-tombstone",
                    "ignore");
            assertThat(ignore.exitCode()).as(format + ": " + ignore.err()).isZero();
            Map<String, Object> kept = format.equals("delta") ? deltaRows(ignoring, "a") : icebergRows(ignoring, "a");
            assertThat(kept).as(format + ": the key column is there, deletes ignored").isEqualTo(Map.of("k2", 1L, "k3", 3L));
        }
    }

    @Test
    void aFieldFirstCarriedHalfwayBecomesAColumnWhereTheSinkCanAddOne() throws Exception {
        String sqlite = "jdbc:sqlite:" + dir.resolve("halfway.db");
        String pg = SharedPostgres.newDatabase("evo_halfway");
        for (String url : List.of(sqlite, pg)) {
            CliRun r = run("evo-halfway", url, "--batch-size", "100");
            assertThat(r.exitCode()).as(r.err()).isZero();
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*), count(coupon), min(coupon) FROM t")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isEqualTo(1000);
                assertThat(rs.getLong(2)).isEqualTo(501);
                assertThat(rs.getString(3)).isEqualTo("c499");
            }
        }

        String iceberg = dir.resolve("halfway-iceberg").toString();
        CliRun ice = run("evo-halfway", "iceberg:" + iceberg, "--batch-size", "100");
        assertThat(ice.exitCode()).as(ice.err()).isZero();
        Map<String, Object> coupons = icebergRows(iceberg, "coupon");
        assertThat(coupons).hasSize(1000);
        assertThat(coupons.values().stream().filter(java.util.Objects::nonNull).count()).isEqualTo(501);
        assertThat(coupons.get("k499")).isEqualTo("c499");
        assertThat(coupons).containsEntry("k0", null);

        String delta = dir.resolve("halfway-delta").toString();
        CliRun added = run("evo-halfway", "delta:" + delta, "--batch-size", "100");
        assertThat(added.exitCode()).as(added.err()).isZero();
        Map<String, Object> deltaCoupons = deltaRows(delta, "coupon");
        assertThat(deltaCoupons).hasSize(1000);
        assertThat(deltaCoupons.values().stream().filter(java.util.Objects::nonNull).count()).isEqualTo(501);
        assertThat(deltaCoupons.get("k499")).isEqualTo("c499");
    }

    @Test
    void evolveSchemaAddsAColumnToATableKbackfillDidNotCreate() throws Exception {
        String sqlite = "jdbc:sqlite:" + dir.resolve("evolve.db");
        String iceberg = "iceberg:" + dir.resolve("evolve-iceberg");
        String delta = "delta:" + dir.resolve("evolve-delta");
        for (String sink : List.of(sqlite, iceberg, delta)) {
            List<String> common = List.of("--topic", "evo-halfway", "--sink", sink, "--table", "t", "--batch-size", "100");
            List<String> first = new ArrayList<>(common);
            first.addAll(List.of("--from", "earliest", "--to", "offset:499", "--create-table", "--job", "first"));
            CliRun created = CliRun.run(kafka, first.toArray(String[]::new));
            assertThat(created.exitCode()).as(created.err()).isZero();

            List<String> rest = new ArrayList<>(common);
            rest.addAll(List.of("--from", "offset:499", "--to", "latest"));
            List<String> plain = new ArrayList<>(rest);
            plain.addAll(List.of("--job", "plain"));
            CliRun refused = CliRun.run(kafka, plain.toArray(String[]::new));
            assertThat(refused.exitCode()).as(sink).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(refused.err()).contains("value field 'coupon' (first at partition 0 offset 499) has no column")
                    .contains("pass --evolve-schema to have it added");

            List<String> evolving = new ArrayList<>(rest);
            evolving.addAll(List.of("--job", "evolving", "--evolve-schema"));
            CliRun evolved = CliRun.run(kafka, evolving.toArray(String[]::new));
            assertThat(evolved.exitCode()).as(sink + ": " + evolved.err()).isZero();
            if (sink.startsWith("jdbc:")) {
                try (Connection c = DriverManager.getConnection(sqlite); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT count(*), count(coupon) FROM t")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(1000);
                    assertThat(rs.getLong(2)).isEqualTo(501);
                }
            } else {
                Map<String, Object> coupons = sink.startsWith("delta:")
                        ? deltaRows(dir.resolve("evolve-delta").toString(), "coupon")
                        : icebergRows(dir.resolve("evolve-iceberg").toString(), "coupon");
                assertThat(coupons).as(sink).hasSize(1000);
                assertThat(coupons.values().stream().filter(java.util.Objects::nonNull).count()).isEqualTo(501);
            }
        }
        CliRun topic = CliRun.run(kafka, "--topic", "evo-halfway", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:evo-out", "--evolve-schema");
        assertThat(topic.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(topic.errLines()).hasSize(1);
        assertThat(topic.err()).contains("--evolve-schema is for tables: a sink that keeps records whole (--sink kafka:TOPIC) has no columns");
    }
}
