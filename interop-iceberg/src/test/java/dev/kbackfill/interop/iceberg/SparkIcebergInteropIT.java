package dev.kbackfill.interop.iceberg;

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
 * Iceberg tables written by kbackfill ({@code bin/kbackfill}, its own process, from a broker in its own process)
 * opened by Spark 4.1 with Iceberg's Spark runtime 1.12 in local mode, an independent reader: a Hadoop-catalog table
 * and a path table, final state exact with deletes applied, progress in the snapshot summary; then Spark's own MERGE
 * (with its own delete files) and kbackfill writing over the rows it wrote, keeping those stamped newer.
 */
@Tag("spark")
@Tag("iceberg")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkIcebergInteropIT {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String TOPIC = "spark-iceberg";
    private static final int KEYS = 60;
    /** The last update of each key; the keys deleted last are absent. */
    private static final Map<String, Integer> LAST = new TreeMap<>();
    private static Process broker;
    private static String bootstrap;
    private static Path warehouse;
    private static Path pathTable;
    private static SparkSession spark;

    @BeforeAll
    static void writeWithKbackfill() throws Exception {
        String classpath = ROOT.resolve("backfill-cli/target/kbackfill.jar") + ":" + ROOT.resolve("backfill-cli/target/lib/*");
        broker = new ProcessBuilder("java", "-Xmx512m", "-cp", classpath, "dev.kbackfill.embedded.EmbeddedKafkaProcess")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String line = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(line).startsWith("READY ");
        bootstrap = line.substring(6);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    admin.listOffsets(Map.of(new TopicPartition(TOPIC, 0), OffsetSpec.latest(),
                            new TopicPartition(TOPIC, 1), OffsetSpec.latest())).all().get(5, TimeUnit.SECONDS);
                    break;
                } catch (Exception e) {
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(200);
                }
            }
        }
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "acks", "all"),
                new StringSerializer(), new StringSerializer())) {
            // four updates of every key, then a delete of every tenth key
            for (int u = 0; u < 4; u++) {
                for (int k = 0; k < KEYS; k++) {
                    String key = String.format(Locale.ROOT, "i%04d", k);
                    String json = String.format(Locale.ROOT, "{\"status\":\"s%d\",\"amount\":%d.%02d,\"n\":%d}", u, k, u, u);
                    p.send(new ProducerRecord<>(TOPIC, null, Instant.parse("2024-01-01T00:00:00Z")
                            .plusSeconds((long) u * KEYS + k).toEpochMilli(), key, json));
                    LAST.put(key, u);
                }
            }
            for (int k = 0; k < KEYS; k += 10) {
                String key = String.format(Locale.ROOT, "i%04d", k);
                p.send(new ProducerRecord<>(TOPIC, null, Instant.parse("2024-01-01T12:00:00Z").plusSeconds(k)
                        .toEpochMilli(), key, (String) null));
                LAST.remove(key);
            }
        }
        warehouse = Files.createTempDirectory("kbackfill-iceberg");
        pathTable = Files.createTempDirectory("kbackfill-iceberg-path").resolve("orders");
        assertThat(kbackfill("iceberg:hadoop:" + warehouse + "#db.orders", "--job", "iceberg", "--batch-size", "25"))
                .contains("job iceberg run 1: wrote");
        assertThat(kbackfill("iceberg:" + pathTable, "--job", "iceberg-path", "--batch-size", "25"))
                .contains("job iceberg-path run 1: wrote");
        spark = SparkSession.builder().master("local[2]").appName("kbackfill-iceberg-interop")
                .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                .config("spark.sql.catalog.ice", "org.apache.iceberg.spark.SparkCatalog")
                .config("spark.sql.catalog.ice.type", "hadoop")
                .config("spark.sql.catalog.ice.warehouse", warehouse.toString())
                // path tables (spark.read().format("iceberg").load(PATH)) go through this catalog, by default Hive's
                .config("spark.sql.catalog.default_iceberg", "org.apache.iceberg.spark.SparkCatalog")
                .config("spark.sql.catalog.default_iceberg.type", "hadoop")
                .config("spark.sql.catalog.default_iceberg.warehouse", warehouse.toString())
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.ui.enabled", "false")
                .getOrCreate();
    }

    /** Runs bin/kbackfill over the whole topic into {@code sink}; returns stdout. */
    private static String kbackfill(String sink, String... more) throws Exception {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("bin/kbackfill").toString(), "run", "--topic",
                TOPIC, "--from", "earliest", "--to", "latest", "--sink", sink, "--create-table", "--progress", "none",
                "--bootstrap-server", bootstrap));
        command.addAll(List.of(more));
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

    private static Map<String, String> expected() {
        Map<String, String> expected = new TreeMap<>();
        LAST.forEach((k, u) -> expected.put(k, "s" + u));
        return expected;
    }

    /** Key to status, asserting one row per key and each key's amount. */
    private static Map<String, String> statusByKey(org.apache.spark.sql.Dataset<Row> df, boolean checkAmounts) {
        Map<String, String> status = new TreeMap<>();
        for (Row r : df.select("kafka_key", "status", "amount").collectAsList()) {
            assertThat(status.put(r.getString(0), r.getString(1))).as("one row per key: " + r.getString(0)).isNull();
            if (checkAmounts) {
                int k = Integer.parseInt(r.getString(0).substring(1));
                assertThat((BigDecimal) r.get(2)).isEqualByComparingTo(new BigDecimal(String.format(Locale.ROOT,
                        "%d.%02d", k, LAST.get(r.getString(0)))));
            }
        }
        return status;
    }

    @Test
    @Order(1)
    void sparkReadsTheCatalogTableWithItsDeletesAppliedAndProgressInEverySnapshotSummary() {
        assertThat(statusByKey(spark.table("ice.db.orders"), true)).isEqualTo(expected());
        List<Row> summaries = spark.sql("SELECT summary FROM ice.db.orders.snapshots").collectAsList();
        assertThat(summaries).hasSizeGreaterThan(2); // a snapshot per batch of 25 keys
        for (Row s : summaries) {
            assertThat(s.<scala.collection.Map<String, String>>getAs(0).contains("kbackfill.job.iceberg")).isTrue();
        }
        // rows replaced by later batches are position deletes; the tombstone ledger is no row of the table
        assertThat(spark.sql("SELECT count(*) FROM ice.db.orders.delete_files").first().getLong(0)).isPositive();
        assertThat(spark.sql("SELECT count(*) FROM ice.db.orders.files WHERE file_path LIKE '%/metadata/kbackfill/%'")
                .first().getLong(0)).isZero();
    }

    @Test
    @Order(2)
    void sparkReadsThePathTableByItsPath() {
        assertThat(statusByKey(spark.read().format("iceberg").load(pathTable.toString()), true)).isEqualTo(expected());
    }

    @Test
    @Order(3)
    void kbackfillWritesOverTheRowsSparksMergeWroteKeepingThoseStampedNewer() throws Exception {
        // Spark's MERGE (merge-on-read: its own delete files) stamps two keys newer than any record and two older
        spark.sql("MERGE INTO ice.db.orders t USING (SELECT * FROM VALUES ('i0001', 'spark-new', 1000000000L), "
                + "('i0002', 'spark-new', 1000000000L), ('i0003', 'spark-old', -1L), ('i0004', 'spark-old', -1L) "
                + "AS s(kafka_key, status, kafka_offset)) s ON t.kafka_key = s.kafka_key "
                + "WHEN MATCHED THEN UPDATE SET t.status = s.status, t.kafka_offset = s.kafka_offset");
        assertThat(spark.table("ice.db.orders").where("status LIKE 'spark-%'").count()).isEqualTo(4);
        // a new run of the job (its request is up to `latest`) reads every record again: the two rows Spark stamped
        // older are written back, the two stamped newer kept
        String out = kbackfill("iceberg:hadoop:" + warehouse + "#db.orders", "--job", "iceberg");
        assertThat(out).contains("job iceberg run 2: wrote 2 changes");
        spark.sql("REFRESH TABLE ice.db.orders");
        Map<String, String> want = expected();
        want.put("i0001", "spark-new");
        want.put("i0002", "spark-new");
        assertThat(statusByKey(spark.table("ice.db.orders"), false)).isEqualTo(want);
    }

    /** Runs bin/kbackfill over [from, to) into a table another engine made (no --create-table); returns stdout. */
    private static String into(String sink, String from, String to, String job) throws Exception {
        Map.Entry<Integer, String> ran = cli("run", "--topic", TOPIC, "--from", from, "--to", to, "--sink", sink,
                "--progress", "none", "--bootstrap-server", bootstrap, "--job", job, "--batch-size", "25");
        assertThat(ran.getKey()).as(ran.getValue()).isZero();
        return ran.getValue();
    }

    /** Runs bin/kbackfill with these arguments; its exit code and stdout. */
    private static Map.Entry<Integer, String> cli(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("bin/kbackfill").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        return Map.entry(p.exitValue(), out);
    }

    private static Map.Entry<Integer, String> verify(String sink, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("verify", "--topic", TOPIC, "--from", "earliest", "--to", "latest",
                "--sink", sink, "--bootstrap-server", bootstrap, "--progress", "none"));
        args.addAll(List.of(more));
        return cli(args.toArray(String[]::new));
    }

    /**
     * verify on Iceberg, with Spark as the hand that changes the table: it agrees with what kbackfill wrote, and
     * names a value Spark changed, a row it deleted and a row it added for a key the range deleted.
     */
    @Test
    @Order(4)
    void verifyAgreesWithTheTableAndFindsWhatSparksUpdateDeleteAndInsertChanged() throws Exception {
        String sink = "iceberg:hadoop:" + warehouse + "#db.mutated";
        assertThat(kbackfill(sink, "--job", "mutated")).contains("wrote");
        Map.Entry<Integer, String> agrees = verify(sink);
        assertThat(agrees.getKey()).as(agrees.getValue()).isZero();
        assertThat(agrees.getValue()).startsWith("AGREES: " + KEYS + " keys");
        spark.sql("REFRESH TABLE ice.db.mutated");
        String t = "ice.db.mutated";
        spark.sql("UPDATE " + t + " SET status = 'by-spark' WHERE kafka_key = 'i0003'");
        spark.sql("DELETE FROM " + t + " WHERE kafka_key = 'i0004'");
        spark.sql("INSERT INTO " + t + " SELECT 'i0010', status, amount, n, kafka_topic, kafka_partition, kafka_offset, "
                + "kafka_timestamp, kafka_log_time FROM " + t + " WHERE kafka_key = 'i0005'");
        Map.Entry<Integer, String> differs = verify(sink);
        assertThat(differs.getKey()).as(differs.getValue()).isEqualTo(4);
        assertThat(differs.getValue()).startsWith("DISAGREES: " + KEYS + " keys")
                .contains("different {kafka_key=i0003}").contains("target {status=by-spark}")
                .contains("missing {kafka_key=i0004}").contains("extra {kafka_key=i0010}");
    }

    /** The columns of the table kbackfill made, as Spark's DDL. */
    private static String columnsDdl() {
        return spark.table("ice.db.orders").schema().toDDL();
    }

    /**
     * Tables Spark makes, partitioned by a status that moves between a key's versions, by day, by a bucket of the
     * key, written by kbackfill without --create-table: each holds exactly the range's final state, read by Spark,
     * and verify agrees.
     */
    @Test
    @Order(5)
    void tablesSparkMadePartitionedByIdentityDayAndBucketHoldTheRangesFinalState() throws Exception {
        Map<String, String> specs = new java.util.LinkedHashMap<>();
        specs.put("by_status", "status");
        specs.put("by_day", "days(kafka_timestamp)");
        specs.put("by_bucket", "bucket(8, kafka_key)");
        for (Map.Entry<String, String> spec : specs.entrySet()) {
            spark.sql("CREATE TABLE ice.db." + spec.getKey() + " (" + columnsDdl() + ") USING iceberg PARTITIONED BY ("
                    + spec.getValue() + ") TBLPROPERTIES ('format-version' = '2')");
            String sink = "iceberg:hadoop:" + warehouse + "#db." + spec.getKey();
            assertThat(into(sink, "earliest", "latest", spec.getKey())).contains("wrote");
            spark.sql("REFRESH TABLE ice.db." + spec.getKey());
            assertThat(statusByKey(spark.table("ice.db." + spec.getKey()), true)).as(spec.getKey())
                    .isEqualTo(expected());
            if (!spec.getKey().equals("by_day")) { // every record of the topic is of one day
                assertThat(spark.sql("SELECT count(DISTINCT partition) FROM ice.db." + spec.getKey() + ".files")
                        .first().getLong(0)).as(spec.getKey() + ": files in several partitions").isGreaterThan(1);
            }
            Map.Entry<Integer, String> verified = verify(sink);
            assertThat(verified.getKey()).as(spec.getKey() + ": " + verified.getValue()).isZero();
        }
    }

    /**
     * A table whose partition spec Spark replaces halfway through the backfill (by status, then by a bucket of the
     * key): the second half's rows go in the new spec's partitions, the rows they replace are deleted under the old
     * one; the table holds exactly the range's final state, and a compaction keeps it.
     */
    @Test
    @Order(6)
    void aPartitionSpecSparkReplacesHalfwayKeepsEveryKeyOneRow() throws Exception {
        spark.sql("CREATE TABLE ice.db.evolving (" + columnsDdl() + ") USING iceberg PARTITIONED BY (status) "
                + "TBLPROPERTIES ('format-version' = '2')");
        String sink = "iceberg:hadoop:" + warehouse + "#db.evolving";
        String half = "2024-01-01T00:02:00Z"; // two of the four updates of every key
        assertThat(into(sink, "earliest", half, "evolving-1")).contains("wrote");
        spark.sql("REFRESH TABLE ice.db.evolving");
        spark.sql("ALTER TABLE ice.db.evolving REPLACE PARTITION FIELD status WITH bucket(4, kafka_key)");
        assertThat(into(sink, half, "latest", "evolving-2")).contains("wrote");
        spark.sql("REFRESH TABLE ice.db.evolving");
        assertThat(statusByKey(spark.table("ice.db.evolving"), true)).isEqualTo(expected());
        assertThat(spark.sql("SELECT count(DISTINCT spec_id) FROM ice.db.evolving.files").first().getLong(0))
                .isEqualTo(2);
        Map.Entry<Integer, String> compacted = cli("compact", "--sink", sink);
        assertThat(compacted.getKey()).as(compacted.getValue()).isZero();
        spark.sql("REFRESH TABLE ice.db.evolving");
        assertThat(statusByKey(spark.table("ice.db.evolving"), true)).isEqualTo(expected());
        assertThat(verify(sink).getKey()).isZero();
    }
}
