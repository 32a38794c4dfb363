package dev.kbackfill.interop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A Delta table written by kbackfill ({@code bin/kbackfill}, its own process, from a broker in its own process)
 * opened by Spark 4.2 with delta-spark 4.4 in local mode: rows, keys, values, history; then Spark's own MERGE on it.
 */
@Tag("spark")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkInteropIT {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final int KEYS = 200;
    private static final int UPDATES = 10;
    private static Process broker;
    private static String bootstrap;
    private static Path table;
    private static SparkSession spark;
    private static final Map<String, Integer> LAST = new TreeMap<>();

    @BeforeAll
    static void writeWithKbackfill() throws Exception {
        String classpath = ROOT.resolve("backfill-cli/target/kbackfill.jar") + ":" + ROOT.resolve("backfill-cli/target/lib/*");
        broker = new ProcessBuilder("java", "-Xmx512m", "-cp", classpath, "dev.kbackfill.embedded.EmbeddedKafkaProcess")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String line = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(line).startsWith("READY ");
        bootstrap = line.substring(6);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic("spark-orders", 2, (short) 1))).all().get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    admin.listOffsets(Map.of(new TopicPartition("spark-orders", 0), OffsetSpec.latest(),
                            new TopicPartition("spark-orders", 1), OffsetSpec.latest())).all().get(5, TimeUnit.SECONDS);
                    break;
                } catch (Exception e) {
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(200);
                }
            }
        }
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "acks", "all"),
                new StringSerializer(), new StringSerializer())) {
            for (int u = 0; u < UPDATES; u++) {
                for (int k = 0; k < KEYS; k++) {
                    String key = String.format(Locale.ROOT, "k%04d", k);
                    String json = String.format(Locale.ROOT, "{\"status\":\"s%d\",\"amount\":%d.%02d,\"n\":%d}", u, k, u, u);
                    p.send(new ProducerRecord<>("spark-orders", null,
                            Instant.parse("2024-01-01T00:00:00Z").plusSeconds((long) u * KEYS + k).toEpochMilli(), key, json));
                    LAST.put(key, u);
                }
            }
        }
        table = Files.createTempDirectory("kbackfill-spark").resolve("orders");
        assertThat(kbackfill()).as("first run").contains("job spark run 1: wrote");
        spark = LocalDeltaSpark.start("kbackfill-interop");
    }

    /** Runs bin/kbackfill into the Delta table; returns stdout. */
    private static String kbackfill(String... more) throws Exception {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("bin/kbackfill").toString(), "run", "--topic",
                "spark-orders", "--from", "earliest", "--to", "2024-01-02", "--sink", "delta:" + table, "--create-table",
                "--batch-size", "100", "--progress", "none", "--bootstrap-server", bootstrap));
        command.addAll(more.length == 0 ? List.of("--job", "spark") : List.of(more));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    @AfterAll
    static void stop() throws Exception {
        if (spark != null) {
            spark.stop();
        }
        if (broker != null) {
            broker.getOutputStream().close();
            broker.waitFor(30, TimeUnit.SECONDS);
            broker.destroyForcibly();
        }
    }

    @Test
    @Order(1)
    void sparkReadsOneRowPerKeyWithItsLastValue() {
        var df = spark.read().format("delta").load(table.toString());
        assertThat(df.count()).isEqualTo(KEYS);
        assertThat(df.select("kafka_key").distinct().count()).isEqualTo(KEYS);
        List<Row> rows = df.select("kafka_key", "status", "amount", "n", "kafka_partition", "kafka_offset",
                "kafka_timestamp").collectAsList();
        for (Row r : rows) {
            String key = r.getString(0);
            int last = LAST.get(key);
            assertThat(r.getString(1)).as(key).isEqualTo("s" + last);
            int k = Integer.parseInt(key.substring(1));
            assertThat((BigDecimal) r.get(2)).as(key).isEqualByComparingTo(new BigDecimal(String.format(Locale.ROOT,
                    "%d.%02d", k, last)));
            assertThat(r.getLong(3)).isEqualTo(last);
            assertThat(r.get(6)).isNotNull();
        }
    }

    @Test
    @Order(2)
    void theHistoryShowsKbackfillsCommits() {
        List<Row> history = spark.sql("DESCRIBE HISTORY delta.`" + table + "`").collectAsList();
        // the table's creation, then a commit per batch (2,000 records over 200 keys in batches of 100 keys: 20)
        assertThat(history.size()).isGreaterThanOrEqualTo(4);
        List<String> operations = new ArrayList<>();
        history.forEach(h -> operations.add(h.getAs("operation")));
        assertThat(operations).contains("WRITE", "CREATE TABLE");
    }

    @Test
    @Order(3)
    void aRerunOfTheFinishedJobCommitsNothing() throws Exception {
        long before = spark.sql("DESCRIBE HISTORY delta.`" + table + "`").count();
        assertThat(kbackfill()).contains("already complete").contains("nothing to do");
        assertThat(spark.sql("DESCRIBE HISTORY delta.`" + table + "`").count()).isEqualTo(before);
    }

    @Test
    @Order(4)
    void compactionKeepsTheRowsAndSparkSeesNoDataChange() throws Exception {
        Process p = new ProcessBuilder(ROOT.resolve("bin/kbackfill").toString(), "compact", "--sink", "delta:" + table)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        // batches that updated earlier keys left files with deletion vectors and new files: compaction folds them
        assertThat(out).contains("key-sorted file(s)");
        assertThat(spark.read().format("delta").load(table.toString()).count()).isEqualTo(KEYS);
        sparkReadsOneRowPerKeyWithItsLastValue();
    }

    @Test
    @Order(5)
    void sparksOwnMergeStillWorksOnTheTable() {
        spark.sql("MERGE INTO delta.`" + table + "` t USING (SELECT 'k0007' AS kafka_key, 'merged' AS status) s "
                + "ON t.kafka_key = s.kafka_key WHEN MATCHED THEN UPDATE SET t.status = s.status");
        List<Row> r = spark.read().format("delta").load(table.toString()).where("kafka_key = 'k0007'")
                .select("status").collectAsList();
        assertThat(r).hasSize(1);
        assertThat(r.get(0).getString(0)).isEqualTo("merged");
        assertThat(spark.read().format("delta").load(table.toString()).count()).isEqualTo(KEYS);
    }

    @Test
    @Order(6)
    void sparkReadsTheDeletionVectorsKbackfillWritesAndKbackfillReadsSparks() throws Exception {
        Row detail = spark.sql("DESCRIBE DETAIL delta.`" + table + "`").first();
        assertThat(detail.<Integer>getAs("minReaderVersion")).isEqualTo(3);
        assertThat(detail.<Integer>getAs("minWriterVersion")).isEqualTo(7);
        assertThat(detail.getList(detail.fieldIndex("tableFeatures"))).contains("deletionVectors");
        // the first run's later batches marked the rows they replaced (test 1 read the result through them)
        try (var files = Files.list(table)) {
            assertThat(files.filter(f -> f.getFileName().toString().startsWith("deletion_vector_")).count())
                    .isGreaterThan(0);
        }
        // Spark's own MERGE (test 5) may have marked rows in vectors of its own: overwrite every key over them
        assertThat(kbackfill("--job", "spark-overwrite", "--on-conflict", "overwrite")).contains("wrote");
        sparkReadsOneRowPerKeyWithItsLastValue();
        assertThat(spark.read().format("delta").load(table.toString()).where("kafka_key = 'k0007'")
                .select("status").first().getString(0)).isEqualTo("s" + LAST.get("k0007"));
    }

    @Test
    @Order(7)
    void verifyAgreesWithTheTableAndNamesTheRowsSparkChanged() throws Exception {
        String[] verify = {ROOT.resolve("bin/kbackfill").toString(), "verify", "--topic", "spark-orders", "--from",
                "earliest", "--to", "2024-01-02", "--sink", "delta:" + table, "--bootstrap-server", bootstrap};
        Process agrees = new ProcessBuilder(verify).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(agrees.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(agrees.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(agrees.exitValue()).as(out).isZero();
        assertThat(out).startsWith("AGREES: " + KEYS + " keys");
        // commits written by Spark: one row's value changed in place (its version columns kept), one row deleted
        spark.sql("UPDATE delta.`" + table + "` SET status = 'by-spark' WHERE kafka_key = 'k0003'");
        spark.sql("DELETE FROM delta.`" + table + "` WHERE kafka_key = 'k0004'");
        Process differs = new ProcessBuilder(verify).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        out = new String(differs.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(differs.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(differs.exitValue()).as(out).isEqualTo(4);
        assertThat(out).startsWith("DISAGREES: " + KEYS + " keys")
                .contains("different {kafka_key=k0003}").contains("differs in status: expected {status=s"
                        + LAST.get("k0003") + "}, target {status=by-spark}")
                .contains("missing {kafka_key=k0004}");
    }

    /**
     * The mutation test on Delta, with Spark as the hand that changes the table: every column changed in a row of its
     * own (values, and metadata with versions moved older), a row deleted and a second row added for a key: verify
     * names each changed key as disagreeing (one verification of all of them, as JSON).
     */
    @Test
    @Order(8)
    void verifyFindsEveryColumnSparkChangesARowItDeletesAndARowItAddsForAKey() throws Exception {
        String t = "delta.`" + table + "`";
        Map<String, String> changes = new java.util.LinkedHashMap<>();
        changes.put("status", "concat(status, 'x')");
        changes.put("amount", "amount - 1");
        changes.put("n", "n - 1");
        changes.put("kafka_topic", "concat('A', kafka_topic)");
        changes.put("kafka_partition", "kafka_partition - 1");
        changes.put("kafka_offset", "kafka_offset - 1");
        changes.put("kafka_timestamp", "kafka_timestamp - INTERVAL 1 SECOND");
        changes.put("kafka_log_time", "kafka_log_time - INTERVAL 1 SECOND");
        List<String> changed = new ArrayList<>();
        int k = 20;
        for (Map.Entry<String, String> c : changes.entrySet()) {
            String key = String.format(Locale.ROOT, "k%04d", k++);
            spark.sql("UPDATE " + t + " SET " + c.getKey() + " = " + c.getValue() + " WHERE kafka_key = '" + key + "'");
            changed.add(key);
        }
        String gone = String.format(Locale.ROOT, "k%04d", k++);
        spark.sql("DELETE FROM " + t + " WHERE kafka_key = '" + gone + "'");
        changed.add(gone);
        String twice = String.format(Locale.ROOT, "k%04d", k);
        spark.sql("INSERT INTO " + t + " SELECT kafka_key, 'a second row', amount, n, kafka_topic, kafka_partition, "
                + "kafka_offset, kafka_timestamp, kafka_log_time FROM " + t + " WHERE kafka_key = '" + twice + "'");
        changed.add(twice);
        Process p = new ProcessBuilder(ROOT.resolve("bin/kbackfill").toString(), "verify", "--topic", "spark-orders",
                "--from", "earliest", "--to", "2024-01-02", "--sink", "delta:" + table, "--bootstrap-server", bootstrap,
                "--format", "json", "--samples", "1000", "--progress", "none")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(4);
        List<String> disagreeing = new ArrayList<>();
        for (var sample : new com.fasterxml.jackson.databind.ObjectMapper().readTree(out).path("samples")) {
            if (!sample.path("class").asText().equals("newer")) {
                disagreeing.add(sample.path("key").elements().next().asText());
            }
        }
        assertThat(disagreeing).as(out).containsAll(changed);
    }

    /** A run of bin/kbackfill: exit code, stdout, stderr. */
    private record Ran(int exit, String out, String err) {
    }

    private static Ran run(List<String> args) throws Exception {
        return run(Map.of(), args);
    }

    private static Ran run(Map<String, String> env, List<String> args) throws Exception {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("bin/kbackfill").toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(env);
        Process p = builder.start();
        java.util.concurrent.CompletableFuture<String> err = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        return new Ran(p.exitValue(), out, err.get());
    }

    /** Runs the topic's range into a table another engine made (no --create-table), then verifies it. */
    private static void backfillAndVerify(Path made, String job) throws Exception {
        Ran ran = run(List.of("run", "--topic", "spark-orders", "--from", "earliest", "--to", "2024-01-02", "--sink",
                "delta:" + made, "--batch-size", "100", "--progress", "none", "--bootstrap-server", bootstrap,
                "--job", job));
        assertThat(ran.exit()).as(ran.out() + ran.err()).isZero();
        Ran verify = run(List.of("verify", "--job", job, "--sink", "delta:" + made, "--bootstrap-server", bootstrap,
                "--progress", "none"));
        assertThat(verify.exit()).as(verify.out() + verify.err()).isZero();
        assertThat(verify.out()).startsWith("AGREES: " + KEYS + " keys");
    }

    /** The columns of the table kbackfill made, as Spark's DDL: the same columns for a table Spark makes. */
    private static String columnsDdl() {
        return spark.read().format("delta").load(table.toString()).schema().toDDL();
    }

    /**
     * Tables Spark makes the way pipelines do, written by kbackfill without --create-table: partitioned by a status
     * that moves between a key's versions, column-mapped by name and by id, both: each ends holding exactly the
     * range's final state, one row per key in its last status's partition, read by Spark; verify agrees.
     */
    @Test
    @Order(9)
    void tablesSparkMadePartitionedAndColumnMappedHoldTheRangesFinalState() throws Exception {
        Map<String, String> made = new java.util.LinkedHashMap<>();
        made.put("partitioned", "PARTITIONED BY (status)");
        made.put("mapped-name", "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')");
        made.put("mapped-id", "TBLPROPERTIES ('delta.columnMapping.mode' = 'id')");
        made.put("partitioned-mapped", "PARTITIONED BY (status) TBLPROPERTIES ('delta.columnMapping.mode' = 'name')");
        for (Map.Entry<String, String> m : made.entrySet()) {
            Path path = Files.createTempDirectory("kbackfill-spark-made").resolve(m.getKey());
            String ddl = "CREATE TABLE delta.`" + path + "` (" + columnsDdl() + ") USING delta " + m.getValue();
            spark.sql(ddl.contains("TBLPROPERTIES") ? ddl.replace("TBLPROPERTIES (", "TBLPROPERTIES "
                    + "('delta.feature.domainMetadata' = 'supported', ") : ddl
                    + " TBLPROPERTIES ('delta.feature.domainMetadata' = 'supported')");
            backfillAndVerify(path, "made-" + m.getKey());
            var df = spark.read().format("delta").load(path.toString());
            Map<String, String> status = new TreeMap<>();
            for (Row r : df.select("kafka_key", "status").collectAsList()) {
                assertThat(status.put(r.getString(0), r.getString(1))).as(m.getKey() + ": one row per key").isNull();
            }
            Map<String, String> expected = new TreeMap<>();
            LAST.forEach((k, u) -> expected.put(k, "s" + u));
            assertThat(status).as(m.getKey()).isEqualTo(expected);
            if (m.getKey().startsWith("partitioned")) {
                // a partition column is not in the files: Spark reads each row's status from its file's partition
                // values, so the statuses above are those of the partitions the rows were written in
                Row detail = spark.sql("DESCRIBE DETAIL delta.`" + path + "`").first();
                assertThat(detail.getList(detail.fieldIndex("partitionColumns"))).containsExactly("status");
            }
        }
    }

    /**
     * Features Delta Kernel cannot write (a generated column, a CHECK constraint): refused when kbackfill opens the
     * table, exit 2, before anything is read, naming the feature; the table has no new commit.
     */
    @Test
    @Order(10)
    void tablesWithGeneratedColumnsOrCheckConstraintsAreRefusedBeforeAnythingIsRead() throws Exception {
        Path generated = Files.createTempDirectory("kbackfill-spark-made").resolve("generated");
        spark.sql("CREATE TABLE delta.`" + generated + "` (" + columnsDdl() + ", day DATE GENERATED ALWAYS AS "
                + "(CAST(kafka_timestamp AS DATE))) USING delta PARTITIONED BY (day)");
        Path checked = Files.createTempDirectory("kbackfill-spark-made").resolve("checked");
        spark.sql("CREATE TABLE delta.`" + checked + "` (" + columnsDdl() + ") USING delta");
        spark.sql("ALTER TABLE delta.`" + checked + "` ADD CONSTRAINT amount_positive CHECK (amount >= 0)");
        for (Map.Entry<Path, String> t : Map.of(generated, "generatedColumns", checked, "checkConstraints").entrySet()) {
            long before = spark.sql("DESCRIBE HISTORY delta.`" + t.getKey() + "`").count();
            Ran ran = run(List.of("run", "--topic", "spark-orders", "--from", "earliest", "--to", "2024-01-02",
                    "--sink", "delta:" + t.getKey(), "--create-table", "--progress", "none", "--bootstrap-server",
                    bootstrap, "--job", "refused"));
            assertThat(ran.exit()).as(ran.out() + ran.err()).isEqualTo(2);
            assertThat(ran.err().strip().lines()).as(ran.err()).hasSize(1);
            assertThat(ran.err()).contains(t.getValue()).contains("Delta Kernel cannot write");
            assertThat(spark.sql("DESCRIBE HISTORY delta.`" + t.getKey() + "`").count()).isEqualTo(before);
        }
    }

    /**
     * A real Structured Streaming query's checkpoint as a bound: the query reads a topic in batches and stops; the
     * records produced after it are exactly what --from checkpoint:DIR --to latest plans, inspect says how far it is
     * behind, checkpoint-start: is where it began, and a batch planned but not committed is named and planned again.
     */
    @Test
    @Order(11)
    void aStreamingQuerysCheckpointBoundsTheRecordsItHasNotProcessed() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic("spark-stream", 2, (short) 1))).all().get();
        }
        produce("spark-stream", 0, 300);
        Path checkpoint = Files.createTempDirectory("kbackfill-checkpoint").resolve("query");
        org.apache.spark.sql.streaming.StreamingQuery query = spark.readStream().format("kafka")
                .option("kafka.bootstrap.servers", bootstrap).option("subscribe", "spark-stream")
                .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "100").load()
                .writeStream().format("memory").queryName("stream_seen")
                .option("checkpointLocation", checkpoint.toString())
                .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start();
        query.awaitTermination();
        assertThat(spark.sql("SELECT count(*) FROM stream_seen").first().getLong(0)).isEqualTo(300);
        produce("spark-stream", 300, 50);

        Ran plan = run(List.of("plan", "--topic", "spark-stream", "--from", "checkpoint:" + checkpoint, "--to",
                "latest", "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(plan.exit()).as(plan.err()).isZero();
        assertThat(offsets(plan.out())).isEqualTo(50);
        assertThat(plan.err()).contains("the last that query").contains("of checkpoint " + checkpoint);
        Ran inspect = run(List.of("inspect", "--topic", "spark-stream", "--at", "checkpoint:" + checkpoint,
                "--bootstrap-server", bootstrap));
        assertThat(inspect.exit()).as(inspect.err()).isZero();
        assertThat(inspect.out()).contains("backfills the 50 records behind");
        Ran start = run(List.of("plan", "--topic", "spark-stream", "--from", "checkpoint-start:" + checkpoint, "--to",
                "latest", "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(start.exit()).as(start.err()).isZero();
        assertThat(offsets(start.out())).isEqualTo(350);

        // the same checkpoint in an object store: read through the S3 API with the settings a lake sink takes
        dev.kbackfill.testservices.SharedS3 s3 = dev.kbackfill.testservices.SharedS3.standard();
        String bucket = s3.newBucket();
        s3.putTree(bucket, "chk/query", checkpoint);
        List<String> onS3 = new ArrayList<>(List.of("plan", "--topic", "spark-stream", "--from",
                "checkpoint:s3a://" + bucket + "/chk/query", "--to", "latest", "--format", "json",
                "--bootstrap-server", bootstrap));
        s3.s3aEndpointSettings().forEach((k, v) -> onS3.addAll(List.of("--checkpoint-property", k + "=" + v)));
        Map<String, String> credentials = Map.of("AWS_ACCESS_KEY_ID", dev.kbackfill.testservices.SharedS3.ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY", dev.kbackfill.testservices.SharedS3.SECRET_KEY);
        Ran s3Plan = run(credentials, onS3);
        assertThat(s3Plan.exit()).as(s3Plan.err()).isZero();
        assertThat(offsets(s3Plan.out())).isEqualTo(50);
        assertThat(s3Plan.err()).contains("of checkpoint s3a://" + bucket + "/chk/query");
        Ran s3Missing = run(credentials, onS3.stream().map(a -> a.replace("/chk/query", "/chk/nothing")).toList());
        assertThat(s3Missing.exit()).as(s3Missing.err()).isEqualTo(2);
        assertThat(s3Missing.err().strip()).isEqualTo("kbackfill plan: invalid checkpoint 's3a://" + bucket
                + "/chk/nothing': no such directory");

        // the checkpoint lost: a new query on a new location begins fresh at latest; what neither read is one plan,
        // and a run over it writes exactly those keys
        Path restarted = Files.createTempDirectory("kbackfill-checkpoint").resolve("latest");
        stream(restarted, "latest", "stream_latest");
        produce("spark-stream", 350, 20); // read by the new query, were it running
        Ran gap = run(List.of("plan", "--topic", "spark-stream", "--from", "checkpoint:" + checkpoint, "--to",
                "checkpoint-start:" + restarted, "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(gap.exit()).as(gap.err()).isZero();
        assertThat(offsets(gap.out())).isEqualTo(50);
        Ran handOver = run(List.of("inspect", "--topic", "spark-stream", "--at", "checkpoint:" + checkpoint, "--then",
                "checkpoint-start:" + restarted, "--bootstrap-server", bootstrap));
        assertThat(handOver.exit()).as(handOver.err()).isZero();
        assertThat(handOver.out()).contains("'kbackfill run --topic spark-stream --from checkpoint:" + checkpoint
                + " --to checkpoint-start:" + restarted + " --bootstrap-server " + bootstrap
                + " --sink URL' writes the 50 records neither read");
        Path missed = Files.createTempDirectory("kbackfill-missed").resolve("t");
        Ran fill = run(List.of("run", "--topic", "spark-stream", "--from", "checkpoint:" + checkpoint, "--to",
                "checkpoint-start:" + restarted, "--sink", "delta:" + missed, "--create-table", "--progress", "none",
                "--bootstrap-server", bootstrap));
        assertThat(fill.exit()).as(fill.err()).isZero();
        List<String> keys = spark.read().format("delta").load(missed.toString()).select("kafka_key").as(
                org.apache.spark.sql.Encoders.STRING()).collectAsList();
        List<String> expected = new ArrayList<>();
        for (int i = 300; i < 350; i++) {
            expected.add("k" + i);
        }
        assertThat(keys).containsExactlyInAnyOrderElementsOf(expected);
        // begun fresh at earliest instead: nothing left unread, and what both read is the overlap
        Path again = Files.createTempDirectory("kbackfill-checkpoint").resolve("earliest");
        stream(again, "earliest", "stream_earliest");
        Ran overlap = run(List.of("inspect", "--topic", "spark-stream", "--at", "checkpoint:" + checkpoint, "--then",
                "checkpoint-start:" + again, "--bootstrap-server", bootstrap));
        assertThat(overlap.exit()).as(overlap.err()).isZero();
        assertThat(overlap.out()).contains("no record was left unread between the two")
                .contains("300 records were read by both");

        // the last batch planned but its commit lost: a restart runs it again, and so does the plan
        try (java.util.stream.Stream<Path> commits = Files.list(checkpoint.resolve("commits"))) {
            Path last = commits.filter(f -> f.getFileName().toString().matches("\\d+"))
                    .max(java.util.Comparator.comparingLong(f -> Long.parseLong(f.getFileName().toString()))).orElseThrow();
            Files.delete(last);
        }
        Ran uncommitted = run(List.of("plan", "--topic", "spark-stream", "--from", "checkpoint:" + checkpoint, "--to",
                "latest", "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(uncommitted.exit()).as(uncommitted.err()).isZero();
        assertThat(offsets(uncommitted.out())).isGreaterThan(50);
        assertThat(uncommitted.err()).contains("was planned").contains("but not committed");
    }

    @Test
    @Order(12)
    void aCheckpointSaysWhatElseItsQueryReadWhatItPurgedAndWhichPartitionsItNeverKnew() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic("spark-two-a", 2, (short) 1), new NewTopic("spark-two-b", 1,
                    (short) 1), new NewTopic("spark-two-never", 1, (short) 1))).all().get();
        }
        produce("spark-two-a", 0, 100);
        produce1("spark-two-b", 40);
        // one query over two topics, ten records a batch, and only the last two batches kept
        Path checkpoint = Files.createTempDirectory("kbackfill-checkpoint").resolve("two");
        spark.conf().set("spark.sql.streaming.minBatchesToRetain", "2");
        try {
            spark.readStream().format("kafka").option("kafka.bootstrap.servers", bootstrap)
                    .option("subscribe", "spark-two-a,spark-two-b").option("startingOffsets", "earliest")
                    .option("maxOffsetsPerTrigger", "10").load().writeStream().format("memory").queryName("two_seen")
                    .option("checkpointLocation", checkpoint.toString())
                    .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start().awaitTermination();
        } finally {
            spark.conf().unset("spark.sql.streaming.minBatchesToRetain");
        }
        assertThat(spark.sql("SELECT count(*) FROM two_seen").first().getLong(0)).isEqualTo(140);
        try (java.util.stream.Stream<Path> kept = Files.list(checkpoint.resolve("offsets"))) {
            assertThat(kept.count()).as("Spark purged old batches").isLessThan(14);
        }
        // a partition added after the query last planned a batch: Spark reads it from earliest, and so does the plan
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createPartitions(Map.of("spark-two-a", org.apache.kafka.clients.admin.NewPartitions.increaseTo(3)))
                    .all().get();
        }
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "acks",
                "all"), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 7; i++) {
                p.send(new ProducerRecord<>("spark-two-a", 2, "new" + i, "{\"n\":" + i + "}"));
            }
        }
        Ran plan = run(List.of("plan", "--topic", "spark-two-a", "--from", "checkpoint:" + checkpoint, "--to",
                "latest", "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(plan.exit()).as(plan.err()).isZero();
        com.fasterxml.jackson.databind.JsonNode doc = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(plan.out());
        assertThat(offsets(plan.out())).isEqualTo(7);
        assertThat(doc.path("partitions").get(2).path("start").asLong()).isZero();
        assertThat(plan.out()).contains("added since the query last planned a batch");
        assertThat(plan.err()).contains("the query also reads spark-two-b").contains("were purged");
        Ran other = run(List.of("plan", "--topic", "spark-two-b", "--from", "checkpoint:" + checkpoint, "--to",
                "latest", "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(other.exit()).as(other.err()).isZero();
        assertThat(offsets(other.out())).isZero();
        assertThat(other.err()).contains("the query also reads spark-two-a");

        // the offsets log's newer layout (opt-in): read alike
        Path v2 = Files.createTempDirectory("kbackfill-checkpoint").resolve("v2");
        spark.conf().set("spark.sql.streaming.offsetLog.formatVersion", "2");
        try {
            spark.readStream().format("kafka").option("kafka.bootstrap.servers", bootstrap)
                    .option("subscribe", "spark-two-b").option("startingOffsets", "earliest")
                    .option("maxOffsetsPerTrigger", "15").load().writeStream().format("memory").queryName("v2_seen")
                    .option("checkpointLocation", v2.toString())
                    .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start().awaitTermination();
        } finally {
            spark.conf().unset("spark.sql.streaming.offsetLog.formatVersion");
        }
        String v2Log;
        try (java.util.stream.Stream<Path> logs = Files.list(v2.resolve("offsets"))) {
            v2Log = Files.readString(logs.filter(f -> f.getFileName().toString().matches("\\d+"))
                    .max(java.util.Comparator.comparingLong(f -> Long.parseLong(f.getFileName().toString())))
                    .orElseThrow());
        }
        produce1("spark-two-b", 5);
        Ran v2Plan = run(List.of("plan", "--topic", "spark-two-b", "--from", "checkpoint:" + v2, "--to", "latest",
                "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(v2Plan.exit()).as(v2Log + "\n" + v2Plan.err()).isZero();
        assertThat(offsets(v2Plan.out())).as(v2Log).isEqualTo(5);
        Ran v2Start = run(List.of("plan", "--topic", "spark-two-b", "--from", "checkpoint-start:" + v2, "--to",
                "latest", "--format", "json", "--bootstrap-server", bootstrap));
        assertThat(v2Start.exit()).as(v2Start.err()).isZero();
        assertThat(offsets(v2Start.out())).isEqualTo(45);

        // bad input, one line each and exit 2: a topic the checkpoint never read, a file source's checkpoint, no
        // checkpoint at all
        Ran never = run(List.of("plan", "--topic", "spark-two-never", "--from", "checkpoint:" + checkpoint, "--to",
                "latest", "--bootstrap-server", bootstrap));
        assertThat(never.exit()).as(never.err()).isEqualTo(2);
        assertThat(never.err().strip().lines()).as(never.err()).hasSize(1);
        assertThat(never.err()).contains("holds no offsets of topic spark-two-never: its query reads spark-two-a, "
                + "spark-two-b");
        Path texts = Files.createTempDirectory("kbackfill-texts");
        Files.writeString(texts.resolve("a.txt"), "one\ntwo\n");
        Path fileCheckpoint = Files.createTempDirectory("kbackfill-checkpoint").resolve("files");
        spark.readStream().format("text").load(texts.toString()).writeStream().format("memory")
                .queryName("files_seen").option("checkpointLocation", fileCheckpoint.toString())
                .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start().awaitTermination();
        for (String form : List.of("checkpoint:", "checkpoint-start:")) {
            Ran files = run(List.of("plan", "--topic", "spark-two-a", "--from", form + fileCheckpoint, "--to",
                    "latest", "--bootstrap-server", bootstrap));
            assertThat(files.exit()).as(files.err()).isEqualTo(2);
            assertThat(files.err().strip().lines()).as(files.err()).hasSize(1);
            assertThat(files.err()).contains("Kafka source");
        }
        Ran none = run(List.of("plan", "--topic", "spark-two-a", "--from", "checkpoint:" + texts.resolve("nothing"),
                "--to", "latest", "--bootstrap-server", bootstrap));
        assertThat(none.exit()).as(none.err()).isEqualTo(2);
        assertThat(none.err().strip()).isEqualTo("kbackfill plan: invalid checkpoint '" + texts.resolve("nothing")
                + "': no such directory");
    }

    /**
     * {@code --publish-after-verify} onto a table Spark made (partitioned, column-mapped, a property of its own) and
     * filled with rows of its own: Spark then reads exactly the range's final state, the table keeps its
     * partitioning, properties and column mapping, its history holds one commit for the publish, and Spark's
     * {@code RESTORE TABLE ... TO VERSION AS OF} brings the rows before it back.
     */
    @Test
    @Order(13)
    void sparkReadsAPublishedRebuildKeepsTheTablesLayoutAndRestoreUndoesIt() throws Exception {
        Path path = Files.createTempDirectory("kbackfill-spark-publish").resolve("orders");
        String t = "delta.`" + path + "`";
        spark.sql("CREATE TABLE " + t + " (" + columnsDdl() + ") USING delta PARTITIONED BY (status) TBLPROPERTIES "
                + "('delta.columnMapping.mode' = 'name', 'delta.feature.domainMetadata' = 'supported', "
                + "'team' = 'orders')");
        spark.read().format("delta").load(table.toString()).limit(2)
                .withColumn("kafka_key", org.apache.spark.sql.functions.concat(org.apache.spark.sql.functions.lit(
                        "old-"), org.apache.spark.sql.functions.col("kafka_key")))
                .withColumn("status", org.apache.spark.sql.functions.lit("old"))
                .write().format("delta").mode("append").save(path.toString());
        List<String> old = spark.read().format("delta").load(path.toString()).select("kafka_key").collectAsList()
                .stream().map(r -> r.getString(0)).toList();
        assertThat(old).hasSize(2);
        long before = spark.sql("DESCRIBE HISTORY " + t).first().getLong(0);
        Ran ran = run(List.of("run", "--topic", "spark-orders", "--from", "earliest", "--to", "2024-01-02", "--sink",
                "delta:" + path, "--publish-after-verify", "--progress", "none", "--bootstrap-server", bootstrap));
        assertThat(ran.exit()).as(ran.out() + ran.err()).isZero();
        assertThat(ran.out()).contains("verify: AGREES").contains("publish: replaced the");
        Map<String, String> status = new TreeMap<>();
        for (Row r : spark.read().format("delta").load(path.toString()).select("kafka_key", "status")
                .collectAsList()) {
            assertThat(status.put(r.getString(0), r.getString(1))).as("one row per key").isNull();
        }
        Map<String, String> expected = new TreeMap<>();
        LAST.forEach((k, u) -> expected.put(k, "s" + u));
        assertThat(status).isEqualTo(expected);
        Row detail = spark.sql("DESCRIBE DETAIL " + t).first();
        assertThat(detail.getList(detail.fieldIndex("partitionColumns"))).containsExactly("status");
        assertThat(detail.<String, String>getJavaMap(detail.fieldIndex("properties")))
                .containsEntry("team", "orders").containsEntry("delta.columnMapping.mode", "name");
        assertThat(spark.sql("DESCRIBE HISTORY " + t).first().getLong(0)).as("one commit").isEqualTo(before + 1);
        assertThat(Files.exists(Path.of(path + "_kbackfill_shadow"))).isFalse();
        spark.sql("RESTORE TABLE " + t + " TO VERSION AS OF " + before);
        assertThat(spark.read().format("delta").load(path.toString()).select("kafka_key").collectAsList())
                .extracting(r -> r.getString(0)).containsExactlyInAnyOrderElementsOf(old);
    }

    private static void produce1(String topic, int count) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "acks", "all"),
                new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, 0, "b" + i, "{\"n\":" + i + "}"));
            }
        }
    }

    /** A Structured Streaming query over spark-stream from {@code starting}, run until it has read what is there. */
    private static void stream(Path checkpoint, String starting, String name) throws Exception {
        spark.readStream().format("kafka").option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", "spark-stream").option("startingOffsets", starting)
                .option("maxOffsetsPerTrigger", "100").load().writeStream().format("memory").queryName(name)
                .option("checkpointLocation", checkpoint.toString())
                .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start().awaitTermination();
    }

    private static void produce(String topic, int from, int count) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "acks", "all"),
                new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                p.send(new ProducerRecord<>(topic, i % 2, "k" + i, "{\"n\":" + i + "}"));
            }
        }
    }

    /** The offsets a plan document covers. */
    private static long offsets(String planJson) throws Exception {
        long total = 0;
        for (com.fasterxml.jackson.databind.JsonNode r : new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(planJson).path("partitions")) {
            total += r.path("end").asLong() - r.path("start").asLong();
        }
        return total;
    }
}
