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

import java.io.PrintWriter;

import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.RunHandle;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkTarget;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.spark.launch.SparkLaunch;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.sink.delta.DeltaTableRows;
import dev.kbackfill.testservices.SharedPostgres;
import dev.kbackfill.testservices.SharedRegistry;
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
    private static EmbeddedKafka kafka = SharedKafka.get();

    @TempDir
    Path dir;

    /** One Spark driver in this JVM for the launches on a local master ({@link SharedDriver}). */
    private static AutoCloseable sharedDriver;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
        sharedDriver = SharedDriver.install();
    }

    @org.junit.jupiter.api.AfterAll
    static void stopSharedDriver() throws Exception {
        sharedDriver.close();
    }

    /** Keys k0..k(keys-1) over the topic's partitions, each updated several times, some deleted at the end. */
    static void produce(String topic, int partitions, int keys, int updates) {
        produce(topic, partitions, keys, updates, true);
    }

    /** @param moving whether keys move between partitions now and then (the version rule then decides across them) */
    static void produce(String topic, int partitions, int keys, int updates, boolean moving) {
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
                    int partition = (k + (moving && u % 3 == 2 ? 1 : 0)) % partitions;
                    producer.send(new ProducerRecord<>(topic, partition, t++, key.getBytes(StandardCharsets.UTF_8),
                            value == null ? null : value.getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
    }

    /** A producer of raw keys and values to the shared broker. */
    static KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static Map<String, Map<String, Object>> deltaRows(Path table) throws Exception {
        Map<String, Map<String, Object>> rows = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(table.toString())) {
            Map<String, Object> copy = new HashMap<>(r);
            rows.put(String.valueOf(copy.get("kafka_key")), copy);
        }
        return rows;
    }

    /**
     * The engine outside a single JVM: Spark's {@code local-cluster} master on the built runtime (no Spark installed)
     * starts two executors as processes of their own, with real RPC and shuffle between them; the job decodes,
     * reduces and merges there, and gives the single-machine run's table. The launch holds the job's lock for as long
     * as Spark runs: another run of the job (here on the single-machine engine) is a job conflict meanwhile, not a
     * second writer. A second run writes nothing.
     */
    @Test
    void deltaOnSparkExecutorsOfTheirOwnGivesTheLocalRunsTableUnderTheJobsLockAndASecondRunWritesNothing() throws Exception {
        kafka.createTopic("spark-delta", 3, Map.of("retention.ms", "-1"));
        produce("spark-delta", 3, 200, 4);
        Path local = dir.resolve("local");
        Path spark = dir.resolve("spark");
        String[] request = {"--topic", "spark-delta", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table",
                "--job", "flagship"};
        SparkCli single = SparkCli.run(kafka, concat(request, "--sink", "delta:" + local));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        java.util.concurrent.CompletableFuture<SparkCli> onSpark = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "3", "--master", "local-cluster[2,1,1024]"),
                        concat(request, "--sink", "delta:" + spark, "--verify")));
        Path lock = dev.kbackfill.core.sink.JobLockFile.beside(spark, "flagship");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!java.nio.file.Files.exists(lock) && !onSpark.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(onSpark.isDone()).as("the Spark run is still starting").isFalse();
        SparkCli meanwhile = SparkCli.run(kafka, concat(request, "--sink", "delta:" + spark));
        assertThat(meanwhile.exitCode()).as(meanwhile.toString()).isEqualTo(3);
        assertThat(meanwhile.err()).contains("already running");
        SparkCli first = onSpark.get();
        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.err()).contains("on Spark (local-cluster[2,1,1024])");
        assertThat(first.out()).contains("verify: AGREES: 200 keys"); // the run verified the MERGEs' table
        assertThat(deltaRows(spark)).isEqualTo(deltaRows(local));
        long version = DeltaTableRows.version(spark.toString());
        SparkCli second = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "3"),
                concat(request, "--sink", "delta:" + spark));
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.out()).contains("nothing to do");
        assertThat(DeltaTableRows.version(spark.toString())).isEqualTo(version);
    }

    @Test
    void postgresOnSparkGivesTheSameRowsAsTheLocalRunWritingEachPartitionUnderASubJob() throws Exception {
        kafka.createTopic("spark-pg", 4, Map.of("retention.ms", "-1"));
        produce("spark-pg", 4, 300, 4);
        String url = SharedPostgres.newDatabase("spark_pg");
        String[] command = {"--topic", "spark-pg", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table",
                "--sink", url, "--batch-size", "100"};
        SparkCli single = SparkCli.run(kafka, concat(command, "--table", "local_rows"));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        // the job on Spark from a library call (the README's example), the command line's job after it
        SparkLaunch.Options options = new SparkLaunch.Options("local[2]", java.util.Optional.empty(), List.of(), 3,
                java.util.OptionalInt.of(2), Path.of(System.getenv(SparkLaunch.DIR_ENV)));
        java.io.StringWriter launchOut = new java.io.StringWriter();
        java.io.StringWriter launchErr = new java.io.StringWriter();
        BackfillJob.Outcome outcome;
        // --- the README example, with the broker, topic, database, table, job, batch size and launch replaced ---
        BackfillRequest request = BackfillRequest.builder("spark-pg").from("2024-01-01").to("2024-01-02").build();
        JobDefinition job = JobDefinition.of(request, Map.of("bootstrap.servers", kafka.bootstrapServers()),
                SinkTarget.of(url, "spark_rows", ConflictMode.NEWER_WINS, true))
                .withName("pg-on-spark").withBatchRows(100);
        SparkLaunch spark = new SparkLaunch(options,
                new PrintWriter(launchOut, true), new PrintWriter(launchErr, true), new RunHandle());
        outcome = spark.run(job, BackfillJob.Events.NONE, RunListener.NONE);
        if (outcome instanceof BackfillJob.Outcome.Completed done) {
            System.out.println(done.summary().written() + " rows written on Spark");
        }   // a second call: Outcome.NothingToDo
        // --- end of the README example ---
        assertThat(outcome).as(launchErr.toString()).isInstanceOf(BackfillJob.Outcome.Completed.class);
        RunSummary summary = ((BackfillJob.Outcome.Completed) outcome).summary();
        assertThat(summary.job()).isEqualTo("pg-on-spark");
        assertThat(summary.left()).isZero();
        assertThat(launchErr.toString()).contains("launching job pg-on-spark on Spark (local[2]), 2 wave(s) of up to 3");
        assertThat(sqlRows(url, "spark_rows")).isEqualTo(sqlRows(url, "local_rows")).hasSize(300 - 43);
        // a job the engine ran verifies by name as any other: its sub-jobs' rows are its rows
        SparkCli verified = SparkCli.command(kafka, "verify", "--job", "pg-on-spark", "--sink", url, "--table",
                "spark_rows");
        assertThat(verified.exitCode()).as(verified.toString()).isZero();
        assertThat(verified.out()).startsWith("AGREES: 300 keys");
        // the job's own progress is complete and its sub-jobs are gone
        SparkCli status = SparkCli.status(kafka, "--job", "pg-on-spark", "--sink", url, "--table", "spark_rows");
        assertThat(status.out()).contains("complete").contains("engine spark, 3 partitions per wave");
        assertThat(count(url, "SELECT count(*) FROM kbackfill_jobs WHERE job LIKE 'pg-on-spark/%'")).isZero();
        SparkCli again = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "3"),
                concat(command, "--table", "spark_rows", "--job", "pg-on-spark"));
        assertThat(again.out()).as(again.toString()).contains("nothing to do");
        // reset forgets a job run on Spark as any other
        SparkCli reset = SparkCli.command(kafka, "reset", "--job", "pg-on-spark", "--sink", url, "--table", "spark_rows",
                "--yes");
        assertThat(reset.exitCode()).as(reset.toString()).isZero();
        assertThat(SparkCli.status(kafka, "--job", "pg-on-spark", "--sink", url, "--table", "spark_rows").exitCode())
                .isEqualTo(2);
    }

    /**
     * Beside a live writer on Spark: the gap fill of the live-writer issue (offsets 0-4 {@code k1..k5 a}, 5-9
     * {@code b}, 10-12 {@code k1..k3 c}; the table holding {@code k1..k3=c, k4..k5=a} as the pipeline left it) into a
     * Delta table by the wave's MERGE and into PostgreSQL by sub-jobs: {@code k1..k3} stay the pipeline's, {@code k4,
     * k5} take the gap's {@code b}, as on one machine.
     */
    @Test
    void theGapFillBesideALiveWriterLeavesItsNewerRowsOnSparkIntoDeltaAndPostgres() throws Exception {
        String topic = "spark-live-gap";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            int ts = 0;
            for (String[] round : new String[][] {{"a", "12345"}, {"b", "12345"}, {"c", "123"}}) {
                for (char k : round[1].toCharArray()) {
                    ts++;
                    String json = "{\"order_id\":\"k" + k + "\",\"status\":\"" + round[0] + "\",\"ts\":" + ts + "}";
                    producer.send(new ProducerRecord<>(topic, 0, T0.plusSeconds(ts).toEpochMilli(),
                            ("k" + k).getBytes(StandardCharsets.UTF_8), json.getBytes(StandardCharsets.UTF_8))).get();
                }
            }
        }
        Map<String, String> expected = Map.of("k1", "c", "k2", "c", "k3", "c", "k4", "b", "k5", "b");
        String[] gap = {"--topic", topic, "--from", "offset:5", "--to", "offset:10", "--table", "orders",
                "--key-column", "order_id", "--columns", "status,ts"};
        // Delta: made by a first run of [0, 5), then k1..k3 rewritten by the pipeline's writer (none of our columns)
        Path table = dir.resolve("live-delta");
        SparkCli first = SparkCli.run(kafka, "--topic", topic, "--from", "offset:0", "--to", "offset:5", "--sink",
                "delta:" + table, "--table", "orders", "--key-column", "order_id", "--columns", "status,ts",
                "--create-table", "--job", "first");
        assertThat(first.exitCode()).as(first.toString()).isZero();
        dev.kbackfill.core.sink.SinkSettings live = new dev.kbackfill.core.sink.SinkSettings("delta:" + table, "orders",
                java.util.Optional.empty(), java.util.Optional.empty(), ConflictMode.OVERWRITE,
                dev.kbackfill.core.sink.TombstoneMode.DELETE, false, false,
                new dev.kbackfill.core.sink.SinkSettings.MetadataColumns("live_partition", "live_offset",
                        "live_timestamp", "live_deleted", "live_topic", "live_log_time", "live_version"));
        try (dev.kbackfill.core.sink.Sink writer = dev.kbackfill.core.sink.SinkFactory.forSettings(live)) {
            writer.open();
            dev.kbackfill.resolver.Plan plan = dev.kbackfill.resolver.Plan.fromJson(SparkCli.command(kafka, "plan",
                    "--topic", topic, "--from", "earliest", "--to", "latest", "--format", "json").out());
            writer.jobStore().begin(dev.kbackfill.core.sink.JobState.begin("pipeline", "pipeline", 1, plan));
            List<dev.kbackfill.core.record.Change> rows = new ArrayList<>();
            for (int k = 1; k <= 3; k++) {
                Map<String, Object> values = new HashMap<>();
                values.put("status", "c");
                values.put("ts", 10L + k);
                rows.add(new dev.kbackfill.core.record.Change(Map.of("order_id", "k" + k), values, 0, 0, 0));
            }
            writer.write(new dev.kbackfill.core.sink.WriteBatch("pipeline", 1, 1, rows,
                    dev.kbackfill.core.record.RowShape.of(rows), Map.of(), topic));
        }
        SparkCli delta = SparkCli.onSpark(kafka, List.of(), concat(gap, "--sink", "delta:" + table));
        assertThat(delta.exitCode()).as(delta.toString()).isZero();
        Map<String, String> deltaRows = new TreeMap<>();
        DeltaTableRows.rows(table.toString()).forEach(r -> deltaRows.put((String) r.get("order_id"),
                (String) r.get("status")));
        assertThat(deltaRows).isEqualTo(expected);
        assertThat(delta.out()).contains("3 change(s) superseded in the log");
        // PostgreSQL: a table the pipeline made, none of kbackfill's columns; --create-table adds them
        String url = SharedPostgres.newDatabase("spark_live");
        try (var c = java.sql.DriverManager.getConnection(url); var st = c.createStatement()) {
            st.execute("CREATE TABLE orders (order_id text PRIMARY KEY, status text, ts bigint)");
            st.execute("INSERT INTO orders VALUES ('k1', 'c', 11), ('k2', 'c', 12), ('k3', 'c', 13), ('k4', 'a', 4), "
                    + "('k5', 'a', 5)");
        }
        SparkCli pg = SparkCli.onSpark(kafka, List.of(), concat(gap, "--sink", url, "--create-table"));
        assertThat(pg.exitCode()).as(pg.toString()).isZero();
        Map<String, String> pgRows = new TreeMap<>();
        try (var c = java.sql.DriverManager.getConnection(url); var st = c.createStatement();
             var rs = st.executeQuery("SELECT order_id, status FROM orders")) {
            while (rs.next()) {
                pgRows.put(rs.getString(1), rs.getString(2));
            }
        }
        assertThat(pgRows).isEqualTo(expected);
    }

    /**
     * A key is its bytes on Spark too: seeded random keys that differ only by case, accents, Unicode normalisation or
     * trailing spaces, or are long, mixed with deletes over three partitions, into Delta by the wave's MERGE and into
     * MariaDB (its server's default collation folds such keys) by sub-jobs: one row per distinct key, its last
     * record, a delete removing its own key's row only, as the model says, and verify agrees.
     */
    @Test
    void keysThatDifferOnlyByCaseAccentsOrSpacesAreRowsOfTheirOwnOnSparkIntoDeltaAndMariaDb() throws Exception {
        String topic = "spark-key-bytes";
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        String longKey = "L".repeat(300);
        List<String> keys = List.of("Key", "key", "KEY", "e", "\u00e9", "e\u0301", "sp", "sp ", "user@x.com",
                "USER@X.COM", "\u00df", "ss", longKey, longKey.toLowerCase());
        java.util.Random random = new java.util.Random(59);
        Map<String, String> expected = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int i = 0; i < 120; i++) {
                String key = keys.get(random.nextInt(keys.size()));
                boolean delete = random.nextInt(4) == 0;
                // a key keeps to one partition, as Kafka's partitioner puts it
                int partition = Math.floorMod(key.hashCode(), 3);
                String status = "s" + i;
                producer.send(new ProducerRecord<>(topic, partition, T0.plusSeconds(i).toEpochMilli(),
                        key.getBytes(StandardCharsets.UTF_8), delete ? null
                        : ("{\"status\":\"" + status + "\"}").getBytes(StandardCharsets.UTF_8))).get();
                if (delete) {
                    expected.remove(key);
                } else {
                    expected.put(key, status);
                }
            }
        }
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--table", "t", "--batch-size", "7"};
        Path table = dir.resolve("key-bytes-delta");
        SparkCli delta = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "2"),
                concat(range, "--sink", "delta:" + table, "--create-table"));
        assertThat(delta.exitCode()).as(delta.toString()).isZero();
        Map<String, String> deltaRows = new TreeMap<>();
        DeltaTableRows.rows(table.toString()).forEach(r -> deltaRows.put((String) r.get("kafka_key"),
                (String) r.get("status")));
        assertThat(deltaRows).isEqualTo(expected);
        String url = dev.kbackfill.testservices.SharedMariaDb.newDatabase("spark_key_bytes");
        try (var c = java.sql.DriverManager.getConnection(url); var st = c.createStatement()) {
            st.execute("ALTER DATABASE spark_key_bytes CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci");
        }
        SparkCli maria = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "2"),
                concat(range, "--sink", url, "--create-table"));
        assertThat(maria.exitCode()).as(maria.toString()).isZero();
        Map<String, String> mariaRows = new TreeMap<>();
        try (var c = java.sql.DriverManager.getConnection(url); var st = c.createStatement();
             var rs = st.executeQuery("SELECT kafka_key, status FROM t")) {
            while (rs.next()) {
                mariaRows.put(rs.getString(1), rs.getString(2));
            }
        }
        assertThat(mariaRows).isEqualTo(expected);
        for (String sink : List.of("delta:" + table, url)) {
            SparkCli verified = SparkCli.command(kafka, "verify", "--topic", topic, "--from", "earliest", "--to",
                    "latest", "--table", "t", "--sink", sink);
            assertThat(verified.exitCode()).as(sink + ": " + verified).isZero();
        }
    }

    @Test
    void aTopicOnSparkHoldsTheSameFinalStateAsTheLocalRunAndNewerWinsIsRefused() throws Exception {
        kafka.createTopic("spark-topic-src", 3, Map.of("retention.ms", "-1"));
        kafka.createTopic("spark-topic-local", 2, Map.of("cleanup.policy", "compact"));
        kafka.createTopic("spark-topic-spark", 2, Map.of("cleanup.policy", "compact"));
        produce("spark-topic-src", 3, 150, 3, false);
        String[] request = {"--topic", "spark-topic-src", "--from", "2024-01-01", "--to", "2024-01-02",
                "--on-conflict", "overwrite"};
        SparkCli single = SparkCli.run(kafka, concat(request, "--sink", "kafka:spark-topic-local"));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        SparkCli spark = SparkCli.onSpark(kafka, List.of(), concat(request, "--sink", "kafka:spark-topic-spark"));
        assertThat(spark.exitCode()).as(spark.toString()).isZero();
        assertThat(finalState("spark-topic-spark")).isEqualTo(finalState("spark-topic-local")).hasSize(150);
        SparkCli newerWins = SparkCli.onSpark(kafka, List.of(), "--topic", "spark-topic-src", "--from", "2024-01-01",
                "--to", "2024-01-02", "--sink", "kafka:spark-topic-spark", "--job", "refused");
        assertThat(newerWins.exitCode()).as(newerWins.toString()).isEqualTo(2);
        assertThat(newerWins.err()).contains("--on-conflict overwrite").contains("--engine local");
    }

    @Test
    void aTransactionalTopicWithAbortedRecordsGivesCommittedRecordsOnly() throws Exception {
        kafka.createTopic("spark-txn", 3, Map.of("retention.ms", "-1"));
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "spark-txn-producer");
        long t = T0.plusSeconds(60).toEpochMilli();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            for (int round = 0; round < 4; round++) {
                producer.beginTransaction();
                for (int k = 0; k < 30; k++) {
                    // partition 2 only ever sees aborted transactions
                    int partition = round % 2 == 1 ? k % 3 : k % 2;
                    producer.send(new ProducerRecord<>("spark-txn", partition, t++, ("k" + k).getBytes(StandardCharsets.UTF_8),
                            ("{\"status\":\"" + (round % 2 == 1 ? "aborted" : "committed-" + round) + "\"}")
                                    .getBytes(StandardCharsets.UTF_8)));
                }
                if (round % 2 == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
        String[] request = {"--topic", "spark-txn", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table"};
        Path table = dir.resolve("txn");
        SparkCli delta = SparkCli.onSpark(kafka, List.of(), concat(request, "--sink", "delta:" + table));
        assertThat(delta.exitCode()).as(delta.toString()).isZero();
        Map<String, Map<String, Object>> rows = deltaRows(table);
        assertThat(rows).hasSize(30);
        assertThat(rows.values()).allSatisfy(r -> assertThat(r.get("status")).isEqualTo("committed-2"));
        String url = SharedPostgres.newDatabase("spark_txn");
        SparkCli pg = SparkCli.onSpark(kafka, List.of(), concat(request, "--sink", url, "--table", "rows"));
        assertThat(pg.exitCode()).as(pg.toString()).isZero();
        assertThat(sqlRows(url, "rows")).hasSize(30).allSatisfy((k, v) -> assertThat(v).startsWith("committed-2"));
        // every partition's range is done, the one that held only aborted records included
        SparkCli status = SparkCli.status(kafka, "--job", jobName(pg), "--sink", url, "--table", "rows");
        assertThat(status.out()).contains("complete");
    }

    @Test
    void avroThroughTheRegistryIsDecodedOnTheExecutorsAsOnOneMachine() throws Exception {
        String schemaText = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"shop\",\"fields\":["
                + "{\"name\":\"status\",\"type\":\"string\"},"
                + "{\"name\":\"amount\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":12,\"scale\":2}},"
                + "{\"name\":\"placed\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
                + "{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null}]}";
        String registry = SharedRegistry.url();
        int id = SharedRegistry.register("spark-avro-value", schemaText, null);
        org.apache.avro.Schema schema = new org.apache.avro.Schema.Parser().parse(schemaText);
        kafka.createTopic("spark-avro", 2, Map.of("retention.ms", "-1"));
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        long t = T0.plusSeconds(60).toEpochMilli();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int u = 0; u < 2; u++) {
                for (int k = 0; k < 60; k++) {
                    org.apache.avro.generic.GenericData.Record order = new org.apache.avro.generic.GenericData.Record(schema);
                    order.put("status", "s" + u);
                    order.put("amount", new org.apache.avro.Conversions.DecimalConversion().toBytes(
                            new java.math.BigDecimal(k + "." + (10 + u)), schema.getField("amount").schema(),
                            schema.getField("amount").schema().getLogicalType()));
                    order.put("placed", t);
                    order.put("note", k % 2 == 0 ? null : "n" + k);
                    producer.send(new ProducerRecord<>("spark-avro", k % 2, t++, ("k" + k).getBytes(StandardCharsets.UTF_8),
                            dev.kbackfill.testservices.ConfluentFraming.frame(id, schema, order)));
                }
            }
            // a poison record: not in the wire format
            producer.send(new ProducerRecord<>("spark-avro", 1, t, "bad".getBytes(StandardCharsets.UTF_8),
                    "not avro".getBytes(StandardCharsets.UTF_8)));
        }
        String[] request = {"--topic", "spark-avro", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table",
                "--value-format", "avro", "--schema-registry-url", registry, "--on-error", "skip"};
        Path local = dir.resolve("avro-local");
        Path spark = dir.resolve("avro-spark");
        SparkCli single = SparkCli.run(kafka, concat(request, "--sink", "delta:" + local));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        SparkCli onSpark = SparkCli.onSpark(kafka, List.of(), concat(request, "--sink", "delta:" + spark));
        assertThat(onSpark.exitCode()).as(onSpark.toString()).isZero();
        Map<String, Map<String, Object>> rows = deltaRows(spark);
        assertThat(rows).isEqualTo(deltaRows(local)).hasSize(60);
        assertThat(rows.get("k7").get("amount").toString()).isEqualTo("7.110000000000000000");
        assertThat(onSpark.err()).contains("1 record(s) could not be decoded");
    }

    @Test
    void protobufKeysValidatedJsonSchemaValuesAndAWhereAreDecodedOnTheExecutorsAsOnOneMachine() throws Exception {
        String registry = SharedRegistry.url();
        int keyId = SharedRegistry.register("spark-formats-key", "PROTOBUF",
                "syntax = \"proto3\";\npackage shop;\nmessage Key { string tenant = 1; int64 n = 2; }", null);
        int valueId = SharedRegistry.register("spark-formats-value", "JSON", "{\"type\":\"object\",\"properties\":{"
                + "\"amount\":{\"type\":\"number\"},\"placed\":{\"type\":\"string\",\"format\":\"date-time\"},"
                + "\"qty\":{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"qty\"]}", null);
        kafka.createTopic("spark-formats", 2, Map.of("retention.ms", "-1"));
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        long t = T0.plusSeconds(60).toEpochMilli();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int u = 0; u < 2; u++) {
                for (int k = 0; k < 40; k++) {
                    int n = k;
                    byte[] key = dev.kbackfill.testservices.ConfluentFraming.protobuf(keyId, new int[] {0},
                            dev.kbackfill.testservices.ConfluentFraming.protobufMessage(body -> {
                                body.writeString(1, "t" + (n % 3));
                                body.writeInt64(2, n);
                            }));
                    String json = "{\"amount\":" + k + "." + (10 + u) + ",\"placed\":\"" + Instant.ofEpochMilli(t)
                            + "\",\"qty\":" + (k == 5 && u == 1 ? -1 : u) + "}";
                    producer.send(new ProducerRecord<>("spark-formats", k % 2, t++, key,
                            dev.kbackfill.testservices.ConfluentFraming.jsonSchema(valueId, json)));
                }
            }
        }
        String[] request = {"--topic", "spark-formats", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table",
                "--key-format", "protobuf", "--value-format", "json-schema", "--validate", "--schema-registry-url",
                registry, "--on-error", "skip", "--where", "key.tenant != 't1' && value.amount >= 0"};
        Path local = dir.resolve("formats-local");
        Path spark = dir.resolve("formats-spark");
        SparkCli single = SparkCli.run(kafka, concat(request, "--sink", "delta:" + local));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        SparkCli onSpark = SparkCli.onSpark(kafka, List.of(), concat(request, "--sink", "delta:" + spark));
        assertThat(onSpark.exitCode()).as(onSpark.toString()).isZero();
        Map<String, Map<String, Object>> rows = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(spark.toString())) {
            rows.put(r.get("tenant") + "/" + r.get("n"), new HashMap<>(r));
        }
        Map<String, Map<String, Object>> expected = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(local.toString())) {
            expected.put(r.get("tenant") + "/" + r.get("n"), new HashMap<>(r));
        }
        assertThat(rows).as("--where leaves tenant t1's 13 keys out on both engines").isEqualTo(expected).hasSize(27);
        assertThat(rows.get("t0/6").get("amount").toString()).startsWith("6.11");
        assertThat(rows.get("t2/5").get("qty")).as("the invalid update was kept out").isEqualTo(0L);
        assertThat(onSpark.err()).contains("1 record(s) could not be decoded");
    }

    /**
     * A field that first appears at the 500th record of the range, in the last wave only: under --create-table the
     * Delta table gains its column (Spark's ALTER TABLE) before that wave's MERGE, and every row ends with its last
     * record's fields (a JDBC table on Spark is created from every record of the run first). The first wave holds
     * only a delete, newer than every record of its key in another partition: no table to create from it, so its
     * partition is read again with the next wave, and the key stays deleted.
     */
    @Test
    void aFieldAddedHalfwayBecomesADeltaColumnOnSparkAndAWaveOfDeletesCreatesTheTableFromItsKey() throws Exception {
        String topic = "spark-evolve";
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        Map<String, String> expected = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            long t = T0.plusSeconds(60).toEpochMilli();
            for (int i = 0; i < 1000; i++) {
                String key = "k" + (i % 300); // partition 1 for even keys, 2 for odd ones
                String coupon = i >= 500 && i % 2 == 1 ? "C" + i : null;
                String value = "{\"status\":\"s" + i + "\"" + (coupon == null ? "" : ",\"coupon\":\"" + coupon + "\"") + "}";
                producer.send(new ProducerRecord<>(topic, 1 + i % 2, t++, key.getBytes(StandardCharsets.UTF_8),
                        value.getBytes(StandardCharsets.UTF_8)));
                expected.put(key, "s" + i + "|" + coupon);
            }
            producer.send(new ProducerRecord<>(topic, 0, (Long) (t + 1000), "k0".getBytes(StandardCharsets.UTF_8),
                    (byte[]) null));
            expected.remove("k0");
        }
        String[] request = {"--topic", topic, "--from", "2024-01-01", "--to", "2024-01-02", "--create-table"};
        Path delta = dir.resolve("evolved");
        SparkCli onDelta = SparkCli.onSpark(kafka, List.of("--spark-wave-partitions", "1"),
                concat(request, "--sink", "delta:" + delta));
        assertThat(onDelta.exitCode()).as(onDelta.toString()).isZero();
        // wave 1 holds only k0's delete: the table is created from its key column, the ledger records the delete,
        // and the fields of later waves become columns
        assertThat(onDelta.err()).containsPattern("wave 1 of 3 \\(1 partitions\\): .*create the table")
                .contains("added column(s) `status` STRING").contains("added column(s) `coupon` STRING");
        Map<String, String> rows = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(delta.toString())) {
            rows.put(String.valueOf(r.get("kafka_key")), r.get("status") + "|" + r.get("coupon"));
        }
        assertThat(rows).isEqualTo(expected);
    }

    /**
     * A compound key deleted on one machine with its fields as (id, region), into a table whose key columns came as
     * (region, id): an older record of the key, replayed on Spark, is kept out. The engine named the key's values in
     * the table's key column order, the single-machine sink in its batch's, and the older record came back as a row.
     */
    @Test
    void aCompoundKeyDeletedOnOneMachineStaysDeletedOnSparkWhateverTheOrderOfItsFields() throws Exception {
        String topic = "spark-compound";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            long t = T0.plusSeconds(60).toEpochMilli();
            String[][] records = {{"{\"region\":\"eu\",\"id\":7}", "{\"status\":\"older\"}"},
                {"{\"id\":7,\"region\":\"eu\"}", null}, {"{\"region\":\"eu\",\"id\":8}", "{\"status\":\"eight\"}"}};
            for (String[] r : records) {
                producer.send(new ProducerRecord<>(topic, 0, t++, r[0].getBytes(StandardCharsets.UTF_8),
                        r[1] == null ? null : r[1].getBytes(StandardCharsets.UTF_8))).get();
            }
        }
        Path delta = dir.resolve("compound");
        // the table, from id 8's key (region, id); then the delete of id 7, its fields (id, region); then, on Spark,
        // id 7's older record
        String[][] ranges = {{"2", "3"}, {"1", "2"}, {"0", "1"}};
        for (int run = 0; run < ranges.length; run++) {
            String[] args = {"--topic", topic, "--from", "{\"" + topic + "\":{\"0\":" + ranges[run][0] + "}}",
                "--to", "{\"" + topic + "\":{\"0\":" + ranges[run][1] + "}}", "--key-format", "json",
                "--create-table", "--sink", "delta:" + delta};
            SparkCli done = run < 2 ? SparkCli.run(kafka, args) : SparkCli.onSpark(kafka, List.of(), args);
            assertThat(done.exitCode()).as(done.toString()).isZero();
        }
        Map<String, Object> rows = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(delta.toString())) {
            rows.put(r.get("region") + "/" + r.get("id"), r.get("status"));
        }
        assertThat(rows).isEqualTo(Map.of("eu/8", "eight"));
    }

    @Test
    void theSpecRunsThroughSparkSubmitAsDocumented() throws Exception {
        kafka.createTopic("spark-submit", 2, Map.of("retention.ms", "-1"));
        produce("spark-submit", 2, 50, 2);
        Path table = dir.resolve("submitted");
        Path spec = dir.resolve("spec.json");
        SparkCli written = SparkCli.onSpark(kafka, List.of("--spark-spec-out", spec.toString()), "--topic",
                "spark-submit", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table", "--sink", "delta:" + table);
        assertThat(written.exitCode()).as(written.toString()).isZero();
        // the job as a value (settings and frozen plan), not a command line to parse again
        assertThat(java.nio.file.Files.readString(spec)).contains("\"kbackfill-spark-spec\" : 2").contains("\"waves\"")
                .contains("\"kbackfill-job\" : 1").doesNotContain("\"arguments\"").doesNotContain("\"launched\"");
        // its command line may hold the sink's password: readable by its owner only
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files.getPosixFilePermissions(spec)))
                .isEqualTo("rw-------");
        String command = written.out().lines().filter(l -> l.contains("/bin/spark-submit")).findFirst().orElseThrow();
        assertThat(command).contains("--class dev.kbackfill.spark.SparkBackfill").contains("--spec " + spec);
        // a Spark installation: its spark-submit, here the build's runtime behind the same script name
        Path home = dir.resolve("spark-home");
        java.nio.file.Files.createDirectories(home.resolve("bin"));
        Path submit = home.resolve("bin/spark-submit");
        java.nio.file.Files.writeString(submit, "#!/usr/bin/env bash\nexec java "
                + String.join(" ", SparkLaunch.JAVA_17_OPENS) + " -cp \"" + System.getenv("KBACKFILL_SPARK_DIR")
                + "/spark-runtime/*\" org.apache.spark.deploy.SparkSubmit \"$@\"\n");
        submit.toFile().setExecutable(true);
        List<String> argv = new ArrayList<>(List.of(command.replace("$SPARK_HOME", home.toString()).split(" ")));
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as(output).isZero();
        assertThat(output).contains("wrote");
        assertThat(deltaRows(table)).hasSize(50 - 8);
    }

    /**
     * {@code --version-field} on Spark: a re-partitioned CDC topic whose log order disagrees with its LSNs, with
     * Debezium-style deletes (a delete event, then its tombstone), ends in each key's highest LSN on Delta (the
     * range's tail on Spark first, its head on one machine after) and on PostgreSQL (the whole on Spark).
     */
    @Test
    void aVersionFieldOrdersACdcTopicOnSparkAsOnOneMachine() throws Exception {
        String topic = "spark-cdc";
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        Random random = new Random(17);
        List<Object[]> history = new ArrayList<>(); // key, status (null: a delete), lsn
        Map<String, String> expected = new TreeMap<>();
        for (long lsn = 1; lsn <= 120; lsn++) {
            String key = "k" + random.nextInt(10);
            String status = random.nextInt(6) == 0 ? null : "s" + lsn;
            history.add(new Object[] {key, status, lsn});
            if (status == null) {
                expected.remove(key);
            } else {
                expected.put(key, status);
            }
        }
        for (int from = 0; from < history.size(); from += 10) {
            java.util.Collections.shuffle(history.subList(from, Math.min(history.size(), from + 10)), random);
        }
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            long t = T0.plusSeconds(60).toEpochMilli();
            for (Object[] h : history) {
                int partition = random.nextInt(3);
                byte[] key = ((String) h[0]).getBytes(StandardCharsets.UTF_8);
                String status = h[1] == null ? "deleted" : (String) h[1];
                producer.send(new ProducerRecord<>(topic, partition, t++, key, ("{\"status\":\"" + status
                        + "\",\"source\":{\"lsn\":" + h[2] + "}}").getBytes(StandardCharsets.UTF_8)));
                if (h[1] == null) {
                    producer.send(new ProducerRecord<>(topic, partition, t++, key, (byte[]) null));
                }
            }
        }
        Path table = dir.resolve("cdc");
        String[] field = {"--topic", topic, "--create-table", "--version-field", "source.lsn", "--sink", "delta:" + table};
        SparkCli tail = SparkCli.onSpark(kafka, List.of(), concat(field, "--from", "offset:15", "--to", "latest",
                "--job", "cdc-tail"));
        assertThat(tail.exitCode()).as(tail.toString()).isZero();
        SparkCli head = SparkCli.run(kafka, concat(field, "--from", "earliest", "--to", "offset:15", "--job", "cdc-head"));
        assertThat(head.exitCode()).as(head.toString()).isZero();
        Map<String, String> lake = new TreeMap<>();
        deltaRows(table).forEach((k, r) -> lake.put(k, String.valueOf(r.get("status"))));
        assertThat(lake).isEqualTo(expected);
        String url = SharedPostgres.newDatabase("spark_cdc");
        SparkCli pg = SparkCli.onSpark(kafka, List.of(), "--topic", topic, "--from", "earliest", "--to", "latest",
                "--create-table", "--version-field", "source.lsn", "--sink", url, "--table", "cdc", "--job", "cdc-pg");
        assertThat(pg.exitCode()).as(pg.toString()).isZero();
        assertThat(sqlRows(url, "cdc")).isEqualTo(expected);
    }

    /**
     * Timestamps that go backwards inside partitions and keys that move between them: whatever the split of the
     * range into runs (here the whole range on Spark, then its halves again on Spark and locally, in the reverse
     * order), the Delta table ends in the newest record of each key by the version rule, as one local run leaves it.
     */
    @Test
    void backwardsTimestampsEndInTheSameStateOnSparkWhateverTheRunsAndTheirOrder() throws Exception {
        String topic = "spark-clocks";
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        Random random = new Random(11);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 240; i++) {
                long t = T0.plusSeconds(60).toEpochMilli() + i * 10L - (random.nextInt(3) == 0 ? random.nextInt(2000) : 0);
                String key = "k" + random.nextInt(30);
                producer.send(new ProducerRecord<>(topic, random.nextInt(3), t, key.getBytes(StandardCharsets.UTF_8),
                        ("{\"status\":\"s" + i + "\"}").getBytes(StandardCharsets.UTF_8)));
            }
        }
        Path local = dir.resolve("clocks-local");
        Path spark = dir.resolve("clocks-spark");
        SparkCli single = SparkCli.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest",
                "--create-table", "--sink", "delta:" + local, "--job", "all-local");
        assertThat(single.exitCode()).as(single.toString()).isZero();
        assertThat(single.out()).contains("record(s) late");
        // the second half first, on Spark; then everything on Spark; then the first half, locally
        SparkCli second = SparkCli.onSpark(kafka, List.of(), "--topic", topic, "--from", "offset:40", "--to", "latest",
                "--create-table", "--sink", "delta:" + spark, "--job", "second-half");
        assertThat(second.exitCode()).as(second.toString()).isZero();
        SparkCli all = SparkCli.onSpark(kafka, List.of(), "--topic", topic, "--from", "earliest", "--to", "latest",
                "--create-table", "--sink", "delta:" + spark, "--job", "all-spark");
        assertThat(all.exitCode()).as(all.toString()).isZero();
        // the same records late by the same log clock: the engine counts them as the single run does
        assertThat(batchFreeCounts(all)).isEqualTo(batchFreeCounts(single)).isNotEmpty();
        SparkCli first = SparkCli.run(kafka, "--topic", topic, "--from", "earliest", "--to", "offset:40",
                "--create-table", "--sink", "delta:" + spark, "--job", "first-half");
        assertThat(first.exitCode()).as(first.toString()).isZero();
        Map<String, Object> expected = new TreeMap<>();
        deltaRows(local).forEach((k, r) -> expected.put(k, r.get("status") + "@" + r.get("kafka_partition") + ":" + r.get("kafka_offset")));
        Map<String, Object> actual = new TreeMap<>();
        deltaRows(spark).forEach((k, r) -> actual.put(k, r.get("status") + "@" + r.get("kafka_partition") + ":" + r.get("kafka_offset")));
        assertThat(actual).isEqualTo(expected).hasSize(30);
    }

    /** A row's values as text, numbers by value: two tables' rows compare whatever their column types. */
    private static Map<String, Map<String, String>> normalised(Map<String, Map<String, Object>> rows) {
        Map<String, Map<String, String>> out = new TreeMap<>();
        rows.forEach((k, r) -> {
            Map<String, String> row = new TreeMap<>();
            r.forEach((c, v) -> row.put(c, v instanceof Number n
                    ? new java.math.BigDecimal(n.toString()).stripTrailingZeros().toPlainString() : String.valueOf(v)));
            out.put(k, row);
        });
        return out;
    }

    /**
     * The row shape on Spark as on one machine: a random topic whose records add and drop fields, carry a number
     * whole and fractional, headers and poison records ({@link dev.kbackfill.testservices.ShapeTopic}), with --where,
     * --rename and --header-columns, gives the same Delta table from Spark's MERGE as from the single-machine run, and
     * the same PostgreSQL table from the sub-jobs; verify agrees with both. The Delta table is created by the same
     * first run (its records carry every field), as a lake table's number types are fixed by the batch that creates it.
     */
    @Test
    void recordsWhoseFieldsComeAndGoGiveTheSameRowsOnSparkAsOnOneMachine() throws Exception {
        String topic = "spark-shape";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(kafka.clientConfig(), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (ProducerRecord<byte[], byte[]> r : dev.kbackfill.testservices.ShapeTopic.records(topic, 77, 30)) {
                producer.send(r);
            }
        }
        String[] shaping = {"--on-error", "skip", "--where", "value == null || !has(value.opt) || value.opt != 'o1'",
                "--rename", "opt=option", "--header-columns", "src", "--create-table"};
        Path local = dir.resolve("shape-local");
        Path spark = dir.resolve("shape-spark");
        for (Path table : List.of(local, spark)) {
            SparkCli seed = SparkCli.run(kafka, concat(shaping, "--topic", topic, "--from", "earliest", "--to",
                    "offset:" + dev.kbackfill.testservices.ShapeTopic.SEED_RECORDS, "--sink", "delta:" + table, "--job",
                    "shape-seed"));
            assertThat(seed.exitCode()).as(seed.toString()).isZero();
        }
        String[] rest = concat(shaping, "--topic", topic, "--from", "offset:" + dev.kbackfill.testservices.ShapeTopic.SEED_RECORDS,
                "--to", "latest", "--job", "shape-rest", "--batch-size", "3");
        SparkCli one = SparkCli.run(kafka, concat(rest, "--sink", "delta:" + local));
        assertThat(one.exitCode()).as(one.toString()).isZero();
        SparkCli onSpark = SparkCli.onSpark(kafka, List.of(), concat(rest, "--sink", "delta:" + spark, "--verify"));
        assertThat(onSpark.exitCode()).as(onSpark.toString()).isZero();
        assertThat(onSpark.out()).contains("verify: AGREES");
        assertThat(normalised(deltaRows(spark))).isEqualTo(normalised(deltaRows(local))).isNotEmpty();
        String pg = dev.kbackfill.testservices.SharedPostgres.newDatabase("spark_shape");
        SparkCli pgLocal = SparkCli.run(kafka, concat(shaping, "--topic", topic, "--from", "earliest", "--to", "latest",
                "--sink", pg, "--table", "local_rows", "--job", "shape-pg-local"));
        assertThat(pgLocal.exitCode()).as(pgLocal.toString()).isZero();
        SparkCli pgSpark = SparkCli.onSpark(kafka, List.of(), concat(shaping, "--topic", topic, "--from", "earliest",
                "--to", "latest", "--sink", pg, "--table", "spark_rows", "--job", "shape-pg-spark", "--batch-size", "2",
                "--verify"));
        assertThat(pgSpark.exitCode()).as(pgSpark.toString()).isZero();
        assertThat(pgRows(pg, "spark_rows")).isEqualTo(pgRows(pg, "local_rows")).isNotEmpty();
        // the sub-jobs' counts reach the summary whole: late records, refused values apart from undecodable ones
        assertThat(batchFreeCounts(pgSpark)).isEqualTo(batchFreeCounts(pgLocal)).isNotEmpty();
        assertThat(batchFreeCounts(onSpark)).isEqualTo(batchFreeCounts(one));
    }

    /**
     * The summary's lines whose counts do not depend on the batch size or the engine: late records, records that
     * could not be decoded, values the target refused.
     */
    private static List<String> batchFreeCounts(SparkCli run) {
        return (run.out() + run.err()).lines().filter(l -> l.contains("record(s) late")
                || l.contains("could not be decoded") || l.contains("held a value the target cannot hold")).toList();
    }

    private static Map<String, Map<String, String>> pgRows(String url, String table) throws Exception {
        Map<String, Map<String, Object>> rows = new TreeMap<>();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url); java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
            while (rs.next()) {
                Map<String, Object> row = new HashMap<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    row.put(rs.getMetaData().getColumnName(i), rs.getObject(i));
                }
                rows.put(String.valueOf(row.get("kafka_key")), row);
            }
        }
        return normalised(rows);
    }

    /**
     * A reset gives the job a new incarnation: the same command afterwards writes the records produced since, on
     * Delta (a new txnAppId, not the old one's committed waves) and on PostgreSQL (new sub-jobs, not the old ones'
     * progress).
     */
    @Test
    void afterAResetTheSameCommandWritesTheNewRecordsOnDeltaAndPostgres() throws Exception {
        String topic = "spark-reset";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        produce(topic, 2, 20, 1, false);
        Path table = dir.resolve("reset-delta");
        String pg = SharedPostgres.newDatabase("spark_reset");
        List<String[]> sinks = List.of(new String[] {"--sink", "delta:" + table},
                new String[] {"--sink", pg, "--table", "reset_rows"});
        for (String[] sink : sinks) {
            SparkCli run = SparkCli.onSpark(kafka, List.of(), concat(concat(new String[] {"--topic", topic, "--from",
                    "earliest", "--to", "latest", "--create-table", "--job", "sr"}, sink)));
            assertThat(run.exitCode()).as(run.toString()).isZero();
        }
        // 20 keys, three of them deleted (k0, k7, k14)
        assertThat(deltaRows(table)).hasSize(17);
        assertThat(count(pg, "SELECT count(*) FROM reset_rows")).isEqualTo(17);
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int k = 20; k < 30; k++) {
                producer.send(new ProducerRecord<>(topic, k % 2, T0.plusSeconds(3600).toEpochMilli(),
                        ("k" + k).getBytes(StandardCharsets.UTF_8), "{\"status\":\"new\"}".getBytes(StandardCharsets.UTF_8)));
            }
        }
        for (String[] sink : sinks) {
            SparkCli reset = SparkCli.command(kafka, "reset", concat(new String[] {"--job", "sr", "--yes"}, sink));
            assertThat(reset.exitCode()).as(reset.toString()).isZero();
            SparkCli again = SparkCli.onSpark(kafka, List.of(), concat(concat(new String[] {"--topic", topic, "--from",
                    "earliest", "--to", "latest", "--create-table", "--job", "sr"}, sink)));
            assertThat(again.exitCode()).as(again.toString()).isZero();
            // the 10 new keys written; the 20 records the target holds already are kept out
            assertThat(again.out()).contains("job sr run 1: wrote 10 changes");
        }
        assertThat(deltaRows(table)).hasSize(27);
        assertThat(count(pg, "SELECT count(*) FROM reset_rows")).isEqualTo(27);
    }

    /**
     * A table Spark made with a generated partition column ({@code day}, from the record's timestamp), an identity
     * column and a CHECK constraint: refused on one machine before anything is read (Delta Kernel cannot write such a table), written on
     * {@code --engine spark}, where Delta computes the column and the job's state goes through delta-spark's commits.
     * A record whose row breaks the constraint is a poison record: {@code --on-error fail} stops the wave naming its
     * partition and offset, with no row committed; {@code --on-error skip} dead-letters it with its coordinates and
     * writes every other key's last record. status reads the job; a reset (which only Spark could commit) and a
     * compaction (which Kernel would write) are refused in one line.
     */
    @Test
    void generatedColumnsAndCheckConstraintsAreHonouredOnSparkAndRefusedOnOneMachine() throws Exception {
        String topic = "spark-rules";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        int keys = 40;
        produce(topic, 2, keys, 3, false);
        // the last record of each key as produce() makes them: amounts from Random(7), every 7th key deleted
        Random random = new Random(7);
        Map<String, Integer> last = new TreeMap<>();
        for (int u = 0; u < 3; u++) {
            for (int k = 0; k < keys; k++) {
                if (u == 2 && k % 7 == 0) {
                    last.remove("k" + k);
                } else {
                    last.put("k" + k, random.nextInt(1000));
                }
            }
        }
        int bound = java.util.Collections.max(last.values()); // CHECK (amount < bound): the keys at the maximum break it
        List<String> breaking = last.entrySet().stream().filter(e -> e.getValue() >= bound).map(Map.Entry::getKey).toList();
        assertThat(breaking).isNotEmpty();

        Path table = dir.resolve("rules");
        org.apache.spark.sql.SparkSession spark = org.apache.spark.sql.SparkSession.builder().master("local[1]")
                .appName("tables made by others").config("spark.ui.enabled", "false")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.sql.session.timeZone", "UTC").getOrCreate();
        try {
            spark.sql("CREATE TABLE delta.`" + table + "` (kafka_key STRING, status STRING, amount BIGINT, note STRING, "
                    + "kafka_topic STRING, kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp TIMESTAMP, "
                    + "kafka_log_time TIMESTAMP, day DATE GENERATED ALWAYS AS (CAST(kafka_timestamp AS DATE)), "
                    + "row_id BIGINT GENERATED ALWAYS AS IDENTITY) "
                    + "USING delta PARTITIONED BY (day) TBLPROPERTIES ('delta.feature.domainMetadata' = 'supported')");
            spark.sql("ALTER TABLE delta.`" + table + "` ADD CONSTRAINT amount_below CHECK (amount < " + bound + ")");
        } finally {
            spark.stop(); // no Spark session in this JVM from here: the command line below runs without one
            org.apache.spark.sql.SparkSession.clearActiveSession();
            org.apache.spark.sql.SparkSession.clearDefaultSession();
        }
        long made = DeltaTableRows.version(table.toString());
        String[] request = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "delta:" + table,
                "--job", "rules"};

        SparkCli oneMachine = SparkCli.run(kafka, request);
        assertThat(oneMachine.exitCode()).as(oneMachine.toString()).isEqualTo(2);
        assertThat(oneMachine.err().strip().lines()).as(oneMachine.err()).hasSize(1);
        assertThat(oneMachine.err()).contains("checkConstraints").contains("generatedColumns").contains("identityColumns")
                .contains("--engine spark");
        assertThat(DeltaTableRows.version(table.toString())).isEqualTo(made);

        SparkCli failing = SparkCli.onSpark(kafka, List.of(), request);
        assertThat(failing.exitCode()).as(failing.toString()).isEqualTo(1);
        assertThat(failing.err()).contains("breaks the CHECK constraint amount_below (amount < " + bound + ")")
                .containsPattern(topic + "/\\d+@\\d+");
        assertThat(DeltaTableRows.count(table.toString())).as("no row of the failed wave").isZero();

        // one more key whose amount the BIGINT column cannot hold: refused by the table as the CHECK's breakers are,
        // not counted as a record that could not be decoded
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, 0, T0.plusSeconds(120).toEpochMilli(),
                    "k999".getBytes(StandardCharsets.UTF_8),
                    "{\"status\":\"s2\",\"amount\":\"lots\",\"note\":\"k999\"}".getBytes(StandardCharsets.UTF_8))).get();
        }

        Path dead = dir.resolve("rules-dead.jsonl");
        // a job of its own: the failed run's plan (which the same job would resume) ends before the record above
        String[] skipRequest = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "delta:" + table,
                "--job", "rules-skip"};
        SparkCli skipping = SparkCli.onSpark(kafka, List.of(), concat(skipRequest, "--on-error", "skip", "--dead-letter",
                dead.toString()));
        assertThat(skipping.exitCode()).as(skipping.toString()).isZero();
        assertThat(skipping.err()).contains((breaking.size() + 1) + " record(s) held a value the target cannot hold and "
                + "were written to " + dead).doesNotContain("could not be decoded");
        Map<String, Map<String, Object>> rows = deltaRows(table);
        Map<String, Integer> expected = new TreeMap<>(last);
        breaking.forEach(expected::remove);
        assertThat(rows.keySet()).isEqualTo(expected.keySet());
        for (Map.Entry<String, Map<String, Object>> r : rows.entrySet()) {
            assertThat(((Number) r.getValue().get("amount")).intValue()).as(r.getKey()).isEqualTo(expected.get(r.getKey()));
            assertThat(r.getValue().get("status")).isEqualTo("s2");
            // computed by Delta from the timestamp kbackfill wrote
            java.time.LocalDate day = java.time.LocalDate.ofEpochDay(((Number) r.getValue().get("day")).longValue());
            Object ts = r.getValue().get("kafka_timestamp");
            long micros = ((Number) ts).longValue();
            assertThat(day).isEqualTo(Instant.ofEpochMilli(micros / 1000).atZone(java.time.ZoneOffset.UTC).toLocalDate());
        }
        // the identity column: a value of Delta's for every row, each its own
        assertThat(rows.values().stream().map(r -> r.get("row_id")).filter(java.util.Objects::nonNull).distinct())
                .hasSize(rows.size());
        List<String> letters = java.nio.file.Files.readAllLines(dead);
        assertThat(letters).hasSize(breaking.size() + 1);
        for (String letter : letters) {
            assertThat(letter).contains("\"topic\":\"" + topic + "\"");
        }
        assertThat(letters.stream().filter(l -> l.contains("amount_below"))).hasSize(breaking.size());
        assertThat(letters.stream().filter(l -> l.contains("cannot hold") && !l.contains("amount_below"))).hasSize(1);

        SparkCli status = SparkCli.status(kafka, "--sink", "delta:" + table, "--job", "rules");
        assertThat(status.exitCode()).as(status.toString()).isZero();
        assertThat(status.out()).contains("rules");
        SparkCli reset = SparkCli.command(kafka, "reset", "--sink", "delta:" + table, "--job", "rules", "--yes");
        assertThat(reset.exitCode()).as(reset.toString()).isEqualTo(2);
        assertThat(reset.err().strip().lines()).as(reset.err()).hasSize(1);
        assertThat(reset.err()).contains("Delta Kernel cannot commit to").contains("--engine spark");
        java.io.StringWriter compactErr = new java.io.StringWriter();
        int compact = dev.kbackfill.cli.Kbackfill.execute(new java.io.PrintWriter(new java.io.StringWriter()),
                new java.io.PrintWriter(compactErr), "compact", "--sink", "delta:" + table, "--key-columns", "kafka_key");
        assertThat(compact).as(compactErr.toString()).isEqualTo(2);
        assertThat(compactErr.toString()).contains("OPTIMIZE");
        assertThat(deltaRows(table)).isEqualTo(rows); // neither changed the table
    }

    static String jobName(SparkCli run) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("job (\\S+) run \\d+").matcher(run.out());
        assertThat(m.find()).as(run.toString()).isTrue();
        return m.group(1);
    }

    static Map<String, String> sqlRows(String url, String table) throws Exception {
        Map<String, String> rows = new TreeMap<>();
        try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement();
             var rs = s.executeQuery("SELECT kafka_key, status, amount, note FROM " + table)) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getString(2) + "|" + rs.getString(3) + "|" + rs.getString(4));
            }
        } catch (java.sql.SQLException e) {
            if (!e.getMessage().contains("amount")) {
                throw e;
            }
            try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement();
                 var rs = s.executeQuery("SELECT kafka_key, status FROM " + table)) {
                while (rs.next()) {
                    rows.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return rows;
    }

    static long count(String url, String sql) throws Exception {
        try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement(); var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** A topic's last value per key (null for a tombstone), read to its end. */
    static Map<String, String> finalState(String topic) {
        Map<String, String> state = new TreeMap<>();
        readCommitted(topic, r -> state.put(new String(r.key(), StandardCharsets.UTF_8),
                r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8)));
        return state;
    }

    /** Every committed record of a topic, in order per partition, to the partitions' high watermarks. */
    static void readCommitted(String topic,
                              java.util.function.Consumer<org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]>> each) {
        Map<String, Object> config = new HashMap<>(kafka.clientConfig());
        config.put("isolation.level", "read_committed");
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(config,
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            List<org.apache.kafka.common.TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(i -> new org.apache.kafka.common.TopicPartition(topic, i.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<org.apache.kafka.common.TopicPartition, Long> ends = highWatermarks(parts);
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                consumer.poll(java.time.Duration.ofMillis(500)).forEach(each);
            }
        }
    }

    /**
     * The partitions' high watermarks: a read_committed consumer reads to them once every transaction before them
     * ended (a commit returns before its markers are written, so the last stable offset may lag for a moment).
     */
    static Map<org.apache.kafka.common.TopicPartition, Long> highWatermarks(List<org.apache.kafka.common.TopicPartition> parts) {
        Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
        parts.forEach(tp -> latest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()));
        Map<org.apache.kafka.common.TopicPartition, Long> ends = new HashMap<>();
        try (org.apache.kafka.clients.admin.Admin admin = kafka.admin()) {
            admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                    org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)).all().get()
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return ends;
    }

    static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
    }

    static List<String> concat(List<String> a, String... b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(List.of(b));
        return all;
    }

    /** The source coordinates ({@code partition@offset}) of every committed record a topic sink wrote, in order. */
    static List<String> sourceCoordinates(String topic) {
        List<String> coordinates = new ArrayList<>();
        readCommitted(topic, r -> coordinates.add(new String(r.headers().lastHeader("kbackfill.source.partition").value(),
                StandardCharsets.UTF_8) + "@" + new String(r.headers().lastHeader("kbackfill.source.offset").value(),
                StandardCharsets.UTF_8)));
        return coordinates;
    }
}
