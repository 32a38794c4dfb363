package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backfill beside a live writer, through the command line: the table a streaming pipeline keeps current, whose rows
 * carry none of kbackfill's columns, and the gap its lost checkpoint left. The case on every sink: offsets
 * 0-4 {@code k1..k5 a}, 5-9 {@code k1..k5 b} (the gap), 10-12 {@code k1..k3 c}; the table holds {@code k1..k3=c,
 * k4..k5=a} as the live writer left it; a run of {@code [5, 10)} leaves {@code k1..k3=c, k4..k5=b}, with and without
 * a version field both writers store, and verify of the gap agrees. And a live writer that goes on producing and
 * applying records while a run writes: no row it wrote is ever made older.
 */
@Tag("kafka")
class LiveWriterIT {

    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** The topic: one partition, thirteen records; {@code ts} grows with the offset. */
    private static String gapTopic(String name) throws Exception {
        kafka.createTopic(name, 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String[][] rounds = {{"a", "1", "2", "3", "4", "5"}, {"b", "1", "2", "3", "4", "5"}, {"c", "1", "2", "3"}};
        int ts = 0;
        for (String[] round : rounds) {
            for (int i = 1; i < round.length; i++) {
                ts++;
                records.add(record(name, "k" + round[i], round[0], ts));
            }
        }
        Orders.send(kafka, records, Map.of());
        return name;
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, String status, long ts) {
        String json = "{\"order_id\":\"" + key + "\",\"status\":\"" + status + "\",\"ts\":" + ts + "}";
        return new ProducerRecord<>(topic, 0, Orders.T0.plusSeconds(ts).toEpochMilli(), key.getBytes(StandardCharsets.UTF_8),
                json.getBytes(StandardCharsets.UTF_8));
    }

    /** The table as the live writer left it, created by SQL without any of kbackfill's columns. */
    private static void liveTable(String url, String type) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE orders (order_id " + type + " NOT NULL PRIMARY KEY, status VARCHAR(20), ts BIGINT)");
            s.execute("INSERT INTO orders (order_id, status, ts) VALUES ('k1', 'c', 11), ('k2', 'c', 12), ('k3', 'c', 13), "
                    + "('k4', 'a', 4), ('k5', 'a', 5)");
        }
    }

    private static Map<String, String> statuses(String url) throws Exception {
        Map<String, String> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT order_id, status FROM orders")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getString(2));
            }
        }
        return rows;
    }

    private static final Map<String, String> EXPECTED = Map.of("k1", "c", "k2", "c", "k3", "c", "k4", "b", "k5", "b");

    /** The gap fill as docs/recovering-a-streaming-pipeline.md gives it, with the table's key column and columns. */
    private static String[] gapFill(String topic, String sink, String... more) {
        List<String> args = new ArrayList<>(List.of("--topic", topic, "--from", "offset:5", "--to", "offset:10",
                "--sink", sink, "--table", "orders", "--key-column", "order_id", "--columns", "status,ts"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    private void gapOnDatabase(String topic, String url, String keyType) throws Exception {
        for (boolean byField : new boolean[] {false, true}) {
            String dbUrl = url;
            if (byField) {
                try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
                    s.execute("DROP TABLE orders");
                    s.execute("DROP TABLE IF EXISTS orders_kbackfill_deletes");
                }
            }
            liveTable(dbUrl, keyType);
            // by the field both writers store, the log after the range need not be read: every row holds it
            String[] args = byField ? gapFill(topic, dbUrl, "--create-table", "--version-field", "ts", "--live-writer",
                    "no") : gapFill(topic, dbUrl, "--create-table");
            CliRun run = CliRun.run(kafka, CliRun.concat(args, "--job", topic + "-" + byField));
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(statuses(dbUrl)).as(byField ? "by the field" : "by the log").isEqualTo(EXPECTED);
            assertThat(run.out()).contains(byField ? "3 change(s) kept out" : "3 change(s) superseded in the log");
            // the gap verified against the table: the live writer's keys are newer, kbackfill's match
            List<String> verify = new ArrayList<>(List.of("verify", "--bootstrap-server", kafka.bootstrapServers()));
            verify.addAll(List.of(gapFill(topic, dbUrl)));
            if (byField) {
                verify.addAll(List.of("--version-field", "ts"));
            }
            CliRun v = CliRun.of(verify.toArray(String[]::new));
            assertThat(v.exitCode()).as(v.out() + v.err()).isZero();
            assertThat(v.out()).contains("AGREES").containsPattern("matching +2").containsPattern("newer +3");
            // a rerun has nothing to do, and a second job of the same range changes nothing
            CliRun again = CliRun.run(kafka, CliRun.concat(args, "--job", topic + "-again" + byField));
            assertThat(again.exitCode()).as(again.err()).isZero();
            assertThat(statuses(dbUrl)).isEqualTo(EXPECTED);
        }
    }

    /**
     * {@code kbackfill repair} of the gap beside the live writer, instead of a run: verify finds k4 and k5 different
     * (the live writer's older rows) and k1-k3 newer (the log holds their later records); the repair replaces k4 and
     * k5 only, and never makes k1-k3 older.
     */
    @Test
    void aRepairOfTheGapReplacesOnlyWhatTheLogSaysIsOlderAndLeavesTheLiveWritersNewerRows() throws Exception {
        String topic = gapTopic("live-repair");
        String url = "jdbc:sqlite:" + dir.resolve("live-repair.db");
        liveTable(url, "VARCHAR(10)");
        List<String> repair = new ArrayList<>(List.of("repair", "--bootstrap-server", kafka.bootstrapServers(),
                "--progress", "none"));
        repair.addAll(List.of(gapFill(topic, url, "--create-table")));
        List<String> dry = new ArrayList<>(repair);
        dry.add("--dry-run");
        CliRun said = CliRun.of(dry.toArray(String[]::new));
        assertThat(said.exitCode()).as(said.out() + said.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(said.out()).contains("would repair 2 key(s): insert 0, replace 2, delete 0")
                .contains("replace {order_id=k4} (different)").contains("replace {order_id=k5} (different)")
                .containsPattern("newer +3");
        assertThat(statuses(url)).as("a dry run writes nothing").containsEntry("k4", "a").containsEntry("k5", "a");
        CliRun repaired = CliRun.of(repair.toArray(String[]::new));
        assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
        assertThat(repaired.out()).contains("AGREES: the 2 repaired key(s) judged again: matching 2");
        assertThat(statuses(url)).isEqualTo(EXPECTED);
    }

    @Test
    void theGapFillLeavesTheLiveWritersNewerRowsInSqlite() throws Exception {
        gapOnDatabase(gapTopic("live-gap-sqlite"), "jdbc:sqlite:" + dir.resolve("live.db"), "VARCHAR(10)");
    }

    @Test
    @Tag("postgresql")
    void theGapFillLeavesTheLiveWritersNewerRowsInPostgres() throws Exception {
        gapOnDatabase(gapTopic("live-gap-pg"), SharedPostgres.newDatabase("live_gap"), "text");
    }

    @Test
    @Tag("mariadb")
    void theGapFillLeavesTheLiveWritersNewerRowsInMariaDb() throws Exception {
        gapOnDatabase(gapTopic("live-gap-maria"), SharedMariaDb.newDatabase("live_gap"), "VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin");
    }

    /**
     * A lake table whose rows the live writer wrote: made by a first backfill of {@code [0, 5)} (its columns kbackfill's),
     * then {@code k1..k3} rewritten by the live writer's own writer, which knows none of kbackfill's columns.
     */
    private static void lakeAsTheLiveWriterLeftIt(String topic, String sink, Optional<String> field) {
        CliRun first = CliRun.run(kafka, CliRun.concat(new String[] {"--topic", topic, "--from", "offset:0", "--to",
                "offset:5", "--sink", sink, "--table", "orders", "--key-column", "order_id", "--columns", "status,ts",
                "--create-table", "--job", topic + "-first"}, field.map(f -> new String[] {"--version-field", f})
                .orElse(new String[0])));
        assertThat(first.exitCode()).as(first.err()).isZero();
        SinkSettings live = new SinkSettings(sink, "orders", Optional.empty(), Optional.empty(), ConflictMode.OVERWRITE,
                TombstoneMode.DELETE, false, false, new SinkSettings.MetadataColumns("live_partition", "live_offset",
                "live_timestamp", "live_deleted", "live_topic", "live_log_time", "live_version"));
        try (Sink writer = SinkFactory.forSettings(live)) {
            writer.open();
            Plan plan = Plan.fromJson(CliRun.of("plan", "--topic", topic, "--from", "earliest", "--to", "latest",
                    "--format", "json", "--bootstrap-server", kafka.bootstrapServers()).out());
            writer.jobStore().begin(JobState.begin("pipeline", "pipeline", 1, plan));
            List<Change> rows = new ArrayList<>();
            for (int k = 1; k <= 3; k++) {
                Map<String, Object> values = new HashMap<>();
                values.put("status", "c");
                values.put("ts", 10L + k);
                rows.add(new Change(Map.of("order_id", "k" + k), values, 0, 0, 0));
            }
            writer.write(new WriteBatch("pipeline", 1, 1, rows, RowShape.of(rows), Map.of(), topic));
        }
    }

    private static Map<String, String> deltaStatuses(String path) throws Exception {
        Map<String, String> rows = new TreeMap<>();
        for (Map<String, Object> r : dev.kbackfill.sink.delta.DeltaTableRows.rows(path)) {
            rows.put((String) r.get("order_id"), (String) r.get("status"));
        }
        return rows;
    }

    @Test
    void theGapFillLeavesTheLiveWritersNewerRowsInDelta() throws Exception {
        for (boolean byField : new boolean[] {false, true}) {
            String topic = gapTopic("live-gap-delta" + (byField ? "-field" : ""));
            String path = dir.resolve("delta" + byField).toString();
            Optional<String> field = byField ? Optional.of("ts") : Optional.empty();
            lakeAsTheLiveWriterLeftIt(topic, "delta:" + path, field);
            assertThat(deltaStatuses(path)).containsEntry("k1", "c").containsEntry("k4", "a");
            CliRun run = CliRun.run(kafka, CliRun.concat(gapFill(topic, "delta:" + path),
                    byField ? new String[] {"--version-field", "ts"} : new String[0]));
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.err()).contains("beside a live writer");
            assertThat(deltaStatuses(path)).isEqualTo(EXPECTED);
            CliRun v = CliRun.of(CliRun.concat(new String[] {"verify", "--bootstrap-server", kafka.bootstrapServers()},
                    CliRun.concat(gapFill(topic, "delta:" + path), byField ? new String[] {"--version-field", "ts"}
                            : new String[0])));
            assertThat(v.exitCode()).as(v.out() + v.err()).isZero();
        }
    }

    @Test
    void theGapFillLeavesTheLiveWritersNewerRowsInIceberg() throws Exception {
        String topic = gapTopic("live-gap-iceberg");
        String path = dir.resolve("iceberg").toString();
        lakeAsTheLiveWriterLeftIt(topic, "iceberg:" + path, Optional.empty());
        CliRun run = CliRun.run(kafka, gapFill(topic, "iceberg:" + path));
        assertThat(run.exitCode()).as(run.err()).isZero();
        Map<String, String> rows = new TreeMap<>();
        org.apache.iceberg.Table table = new org.apache.iceberg.hadoop.HadoopTables(
                new org.apache.hadoop.conf.Configuration()).load(path);
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
                     org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
            records.forEach(r -> rows.put((String) r.getField("order_id"), (String) r.getField("status")));
        }
        assertThat(rows).isEqualTo(EXPECTED);
    }

    /** A compacted topic another producer keeps current: its records carry none of kbackfill's headers. */
    @Test
    void theGapFillLeavesTheLiveWritersNewerRecordsInATopic() throws Exception {
        String topic = gapTopic("live-gap-topic");
        String target = "live-gap-topic-table";
        kafka.createTopic(target, 1, Map.of("cleanup.policy", "compact"));
        List<ProducerRecord<byte[], byte[]>> live = new ArrayList<>();
        for (String[] kv : new String[][] {{"k1", "c"}, {"k2", "c"}, {"k3", "c"}, {"k4", "a"}, {"k5", "a"}}) {
            live.add(new ProducerRecord<>(target, 0, null, kv[0].getBytes(StandardCharsets.UTF_8),
                    ("{\"order_id\":\"" + kv[0] + "\",\"status\":\"" + kv[1] + "\"}").getBytes(StandardCharsets.UTF_8)));
        }
        Orders.send(kafka, live, Map.of());
        CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "offset:5", "--to", "offset:10", "--sink",
                "kafka:" + target);
        assertThat(run.exitCode()).as(run.err()).isZero();
        Map<String, String> last = new TreeMap<>();
        KafkaSinkIT.latest(KafkaSinkIT.readCommitted(target)).forEach((k, v) -> last.put(k, Orders.statusOf(v)));
        assertThat(last).isEqualTo(EXPECTED);
    }

    /**
     * The live writer goes on while the run writes: a producer appends newer records of the range's keys and a
     * pipeline applies each to the table as it lands (plain SQL, none of kbackfill's columns), while a slowed run
     * backfills the older part of the log in small batches. Every key ends in its last record, which the live writer
     * applied: no batch ever put an older record over it (the run reads on to the log's end before each batch, and
     * the sink once more before each commit).
     */
    @Test
    @Tag("postgresql")
    void aLiveWriterApplyingRecordsDuringTheRunNeverLosesARow() throws Exception {
        String topic = "live-during-run";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        int keys = 40;
        List<ProducerRecord<byte[], byte[]>> history = new ArrayList<>();
        for (int round = 0; round < 5; round++) {
            for (int k = 0; k < keys; k++) {
                history.add(record(topic, "k" + k, "h" + round, round * keys + k));
            }
        }
        Orders.send(kafka, history, Map.of());
        String url = SharedPostgres.newDatabase("live_during");
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE orders (order_id text PRIMARY KEY, status text, ts bigint)");
            s.execute("INSERT INTO orders (order_id, status) VALUES ('k0', 'seed')"); // the pipeline's first row
        }
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Map<String, String> lastApplied = new java.util.concurrent.ConcurrentHashMap<>();
        Thread pipeline = new Thread(() -> {
            Map<String, Object> config = kafka.clientConfig();
            config.put("acks", "all");
            try (Connection c = DriverManager.getConnection(url);
                 PreparedStatement upsert = c.prepareStatement("INSERT INTO orders (order_id, status) VALUES (?, ?) "
                         + "ON CONFLICT (order_id) DO UPDATE SET status = EXCLUDED.status");
                 org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> producer =
                         new org.apache.kafka.clients.producer.KafkaProducer<>(config,
                                 new org.apache.kafka.common.serialization.ByteArraySerializer(),
                                 new org.apache.kafka.common.serialization.ByteArraySerializer())) {
                java.util.Random random = new java.util.Random(52);
                int n = 0;
                while (!done.get() && n < 300) {
                    String key = "k" + random.nextInt(keys);
                    String status = "live" + n++;
                    producer.send(record(topic, key, status, 1000 + n)).get(); // in the log before it is applied
                    upsert.setString(1, key);
                    upsert.setString(2, status);
                    upsert.executeUpdate();
                    lastApplied.put(key, status);
                    Thread.sleep(random.nextInt(15));
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "live-pipeline");
        pipeline.start();
        CliRun run;
        try {
            run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "offset:" + history.size(),
                    "--sink", url, "--table", "orders", "--key-column", "order_id", "--columns", "status,ts",
                    "--create-table", "--batch-size", "5", "--max-records-per-second", "150");
        } finally {
            done.set(true);
            pipeline.join(30_000);
        }
        assertThat(failed.get()).isNull();
        assertThat(run.exitCode()).as(run.err()).isZero();
        Map<String, String> rows = statuses(url);
        for (int k = 0; k < keys; k++) {
            String key = "k" + k;
            assertThat(rows.get(key)).as(key).isEqualTo(lastApplied.getOrDefault(key, "h4"));
        }
    }
}
