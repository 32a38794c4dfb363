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
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records as production topics carry them (fields that come and go, numbers sometimes whole, headers, renamed
 * columns, filters), tried through the command line as a user would: the rows are the same for every split into
 * batches and runs, and {@code kbackfill verify} finds every change made to them by hand.
 */
@Tag("kafka")
class ProductionRecordsIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, String value, long second) {
        return new ProducerRecord<>(topic, 0, T0.plusSeconds(second).toEpochMilli(), key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(String topic, List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, records, Map.of());
    }

    /** Every row of a table as {@code key: col=value, ...} over the named columns, by key. */
    private static Map<String, String> rows(String url, String table, String... columns) throws Exception {
        Map<String, String> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM " + table)) {
            while (rs.next()) {
                List<String> values = new ArrayList<>();
                for (String column : columns) {
                    values.add(column + "=" + rs.getString(column));
                }
                rows.put(rs.getString("kafka_key"), String.join(", ", values));
            }
        }
        return rows;
    }

    private static void sql(String url, String statement) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    private static CliRun verify(String... args) {
        List<String> all = new ArrayList<>(List.of("verify", "--bootstrap-server", kafka.bootstrapServers(),
                "--progress", "none"));
        all.addAll(List.of(args));
        return CliRun.of(all.toArray(String[]::new));
    }

    private void aFieldTheLastRecordLacksIsNullForEveryBatchSize(String topic, String url) throws Exception {
        send(topic, List.of(record(topic, "k1", "{\"coupon\":\"X\",\"status\":\"a\"}", 1),
                record(topic, "k1", "{\"status\":\"c\"}", 2),
                record(topic, "k2", "{\"coupon\":\"Y\",\"status\":\"b\"}", 3)));
        Map<String, Map<String, String>> bySize = new TreeMap<>();
        for (String size : List.of("1", "1000")) {
            String table = "shape_" + size;
            CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", table, "--create-table", "--batch-size", size);
            assertThat(run.exitCode()).as(run.err()).isZero();
            bySize.put(size, rows(url, table, "coupon", "status"));
            CliRun agrees = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", table);
            assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        }
        assertThat(bySize.get("1")).isEqualTo(bySize.get("1000"))
                .isEqualTo(Map.of("k1", "coupon=null, status=c", "k2", "coupon=Y, status=b"));
        // a value set by hand in a column the key's last record has no field for is found
        sql(url, "UPDATE shape_1 SET coupon = 'HAND' WHERE kafka_key = 'k1'");
        CliRun found = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table",
                "shape_1");
        assertThat(found.exitCode()).as(found.out() + found.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(found.out()).contains("different {kafka_key=k1}").contains("differs in coupon: expected {coupon=null}, "
                + "target {coupon=HAND}");
    }

    @Test
    void aFieldTheKeysLastRecordLacksIsNullForEveryBatchSizeInSqlite() throws Exception {
        aFieldTheLastRecordLacksIsNullForEveryBatchSize("shape-sqlite", "jdbc:sqlite:" + dir.resolve("shape.db"));
    }

    @Test
    @Tag("postgresql")
    void aFieldTheKeysLastRecordLacksIsNullForEveryBatchSizeInPostgres() throws Exception {
        aFieldTheLastRecordLacksIsNullForEveryBatchSize("shape-pg", SharedPostgres.newDatabase("shape_pg"));
    }

    /** Two jobs over consecutive offset ranges of a topic whose {@code coupon} field stops halfway: no coupon is left. */
    @Test
    void aFieldThatStopsBetweenTwoJobsIsLeftInNoRow() throws Exception {
        String topic = "shape-two-jobs";
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            String coupon = i < 180 ? ",\"coupon\":\"C" + i + "\"" : "";
            records.add(record(topic, "k" + (i % 30), "{\"n\":" + i + coupon + "}", i));
        }
        send(topic, records);
        String url = "jdbc:sqlite:" + dir.resolve("two-jobs.db");
        for (String[] range : new String[][] {{"offset:0", "offset:200"}, {"offset:200", "offset:300"}}) {
            CliRun run = CliRun.run(kafka, "--topic", topic, "--from", range[0], "--to", range[1], "--sink", url,
                    "--table", "t", "--create-table");
            assertThat(run.exitCode()).as(run.err()).isZero();
        }
        assertThat(Orders.count(url, "SELECT count(*) FROM t WHERE coupon IS NOT NULL")).isZero();
        assertThat(rows(url, "t", "n", "coupon")).containsEntry("k0", "n=270, coupon=null");
        CliRun agrees = verify("--topic", topic, "--from", "offset:0", "--to", "offset:300", "--sink", url,
                "--table", "t");
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
    }

    @Test
    void verifyIsNeverOrderedOtherwiseThanTheJobThatWroteTheTarget() throws Exception {
        String topic = "shape-version-field";
        send(topic, List.of(record(topic, "k1", "{\"lsn\":5,\"v\":\"a\"}", 1),
                record(topic, "k1", "{\"lsn\":7,\"v\":\"b\"}", 2),
                record(topic, "k2", "{\"lsn\":3,\"v\":\"c\"}", 3)));
        String url = "jdbc:sqlite:" + dir.resolve("lsn.db");
        CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--version-field", "lsn", "--job", "by-lsn");
        assertThat(run.exitCode()).as(run.err()).isZero();
        sql(url, "UPDATE t SET v = 'GARBAGE' WHERE kafka_key = 'k1'");
        // the range form without the job's --version-field: refused, not a verdict on versions it cannot compare
        CliRun unordered = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t");
        assertThat(unordered.exitCode()).as(unordered.out() + unordered.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unordered.err()).contains("'by-lsn'").contains("version-field").contains("--job NAME");
        assertThat(unordered.out()).doesNotContain("AGREES");
        // the job's own options, taken from the job, find the garbage
        CliRun byJob = CliRun.of("verify", "--job", "by-lsn", "--sink", url, "--progress", "none");
        assertThat(byJob.exitCode()).as(byJob.out() + byJob.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(byJob.out()).contains("different {kafka_key=k1}").contains("v=GARBAGE");
        // so does the range form given the job's option
        CliRun ordered = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--version-field", "lsn");
        assertThat(ordered.exitCode()).as(ordered.out() + ordered.err()).isEqualTo(ExitCodes.DISAGREES);
    }

    @Test
    void verifyJudgesHeaderColumns() throws Exception {
        String topic = "shape-headers";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ProducerRecord<byte[], byte[]> r = record(topic, "k" + (i % 2), "{\"n\":" + i + "}", i);
            if (i != 3) {
                r.headers().add("src", ("app" + i).getBytes(StandardCharsets.UTF_8));
            }
            records.add(r);
        }
        Orders.send(kafka, records, Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("headers.db");
        CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--header-columns", "src", "--job", "headers", "--verify");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(rows(url, "t", "n", "src")).isEqualTo(Map.of("k0", "n=2, src=app2", "k1", "n=3, src=null"));
        sql(url, "UPDATE t SET src = NULL WHERE kafka_key = 'k0'");
        CliRun found = CliRun.of("verify", "--job", "headers", "--sink", url, "--progress", "none");
        assertThat(found.exitCode()).as(found.out() + found.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(found.out()).contains("different {kafka_key=k0}").contains("differs in src");
    }

    /**
     * One field, whole in some records and a double or a fraction in others (an Avro {@code long} that became a
     * {@code double}, JSON numbers): no digit is lost whatever the batch size; the column is an exact decimal either
     * way (created so, or widened to it before the batch that needs it), and verify agrees.
     */
    private void numbersAreNeverRoundedForAnyBatchSize(String topic, String url, String... format) throws Exception {
        Map<String, Map<String, String>> bySize = new TreeMap<>();
        for (String size : List.of("1", "1000")) {
            String table = topic.replace('-', '_') + "_" + size;
            List<String> args = new ArrayList<>(List.of("--topic", topic, "--from", "earliest", "--to", "latest",
                    "--sink", url, "--table", table, "--create-table", "--batch-size", size, "--verify"));
            args.addAll(List.of(format));
            CliRun run = CliRun.run(kafka, args.toArray(String[]::new));
            assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
            Map<String, String> rows = new TreeMap<>();
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT kafka_key, n FROM " + table)) {
                while (rs.next()) {
                    rows.put(rs.getString(1), new java.math.BigDecimal(rs.getString(2)).stripTrailingZeros().toPlainString());
                }
            }
            bySize.put(size, rows);
        }
        assertThat(bySize.get("1")).isEqualTo(bySize.get("1000"))
                .isEqualTo(Map.of("k1", "12345678901234567", "k2", "2.5", "k3", "9007199254740993"));
    }

    @Test
    @Tag("postgresql")
    void jsonNumbersWholeAndFractionalInOneFieldAreNeverRounded() throws Exception {
        String topic = "numbers-json";
        send(topic, List.of(record(topic, "k1", "{\"n\":12345678901234567}", 1),
                record(topic, "k2", "{\"n\":2.5}", 2), record(topic, "k3", "{\"n\":9007199254740993}", 3)));
        numbersAreNeverRoundedForAnyBatchSize(topic, SharedPostgres.newDatabase("numbers_json"));
    }

    @Test
    @Tag("postgresql")
    @Tag("avro")
    void anAvroLongThatBecameADoubleIsNeverRounded() throws Exception {
        String registry = dev.kbackfill.testservices.SharedRegistry.url();
        String v1 = "{\"type\":\"record\",\"name\":\"M\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"}]}";
        String v2 = "{\"type\":\"record\",\"name\":\"M\",\"fields\":[{\"name\":\"n\",\"type\":\"double\"}]}";
        int id1 = dev.kbackfill.testservices.SharedRegistry.register("numbers-avro-value", v1, null);
        int id2 = dev.kbackfill.testservices.SharedRegistry.register("numbers-avro-value", v2, null);
        org.apache.avro.Schema s1 = new org.apache.avro.Schema.Parser().parse(v1);
        org.apache.avro.Schema s2 = new org.apache.avro.Schema.Parser().parse(v2);
        String topic = "numbers-avro";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        Object[][] values = {{"k1", s1, id1, 12_345_678_901_234_567L}, {"k2", s2, id2, 2.5},
                {"k3", s1, id1, 9_007_199_254_740_993L}};
        for (int i = 0; i < values.length; i++) {
            org.apache.avro.Schema schema = (org.apache.avro.Schema) values[i][1];
            org.apache.avro.generic.GenericRecord r = new org.apache.avro.generic.GenericData.Record(schema);
            r.put("n", values[i][3]);
            records.add(new ProducerRecord<>(topic, 0, T0.plusSeconds(i).toEpochMilli(),
                    ((String) values[i][0]).getBytes(StandardCharsets.UTF_8),
                    dev.kbackfill.testservices.ConfluentFraming.frame((Integer) values[i][2], schema, r)));
        }
        Orders.send(kafka, records, Map.of());
        numbersAreNeverRoundedForAnyBatchSize(topic, SharedPostgres.newDatabase("numbers_avro"), "--value-format",
                "avro", "--schema-registry-url", registry);
    }

    /**
     * {@code --on-error skip} with values an {@code integer} column cannot hold: the key keeps its last record the
     * table took, whatever the batch size (one batch used to reduce the key to the refused record and leave no row),
     * and the summary says the records were refused, not undecodable.
     */
    @Test
    @Tag("postgresql")
    void aKeyWhoseLastRecordIsRefusedKeepsItsLastAcceptedRecordForEveryBatchSize() throws Exception {
        String topic = "refused-last";
        send(topic, List.of(record(topic, "k1", "{\"n\":1}", 1), record(topic, "k1", "{\"n\":99999999999}", 2),
                record(topic, "k2", "{\"n\":5}", 3), record(topic, "k2", "{\"n\":6}", 4),
                record(topic, "k2", "{\"n\":88888888888}", 5), record(topic, "k2", "{\"n\":77777777777}", 6)));
        String url = SharedPostgres.newDatabase("refused_last");
        Map<String, Map<String, String>> bySize = new TreeMap<>();
        for (String size : List.of("1", "1000")) {
            String table = "refused_" + size;
            sql(url, "CREATE TABLE " + table + " (kafka_key text PRIMARY KEY, n integer, kafka_partition bigint, "
                    + "kafka_offset bigint, kafka_timestamp timestamptz, kafka_log_time timestamptz, kafka_topic text)");
            CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", table, "--batch-size", size, "--on-error", "skip");
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.err()).contains("3 record(s) held a value the target cannot hold and were skipped")
                    .doesNotContain("could not be decoded");
            // PostgreSQL stages batches into one transaction and reduces k2's two accepted records there too: the
            // same counts for one-record batches as for one batch
            assertThat(run.out()).containsPattern("total\\s+6\\s+2\\s+0\\s+1\\s+0\\s+3");
            bySize.put(size, rows(url, table, "n", "kafka_offset"));
        }
        assertThat(bySize.get("1")).isEqualTo(bySize.get("1000"))
                .isEqualTo(Map.of("k1", "n=1, kafka_offset=0", "k2", "n=6, kafka_offset=3"));
    }

    /** A filter that keeps nothing of a day, with --create-table: the run completes; no table is made of nothing. */
    @Test
    void aFilterThatKeepsNothingCompletesAndCreatesNoTable() throws Exception {
        String topic = "where-nothing";
        send(topic, List.of(record(topic, "k1", "{\"status\":\"new\"}", 1), record(topic, "k2", "{\"value\":5}", 2)));
        String url = "jdbc:sqlite:" + dir.resolve("where.db");
        CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--where", "has(value.status) && value.status == 'packed'");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).containsPattern("total\\s+2\\s+0\\s+0\\s+0\\s+2");
        assertThat(Orders.count(url, "SELECT count(*) FROM sqlite_master WHERE name = 't'")).isZero();
        // {"value":5} is an object with a field value, not the scalar 5
        CliRun scalar = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "s", "--create-table", "--where", "value == 5", "--job", "scalar");
        assertThat(scalar.exitCode()).as(scalar.out() + scalar.err()).isZero();
        assertThat(scalar.out()).containsPattern("total\\s+2\\s+0\\s+0\\s+0\\s+2");
    }

    /**
     * A range of deletes only, into a lake table that does not exist yet: the table is made of the key columns and
     * holds the job and its deletes, so that an older replay keeps the keys out; a range whose every record is
     * filtered out makes no table, and the run says that nothing records the job.
     */
    @Test
    void aRangeOfOnlyDeletesIntoANewLakeTableIsStoredSoAnOlderReplayKeepsTheKeysOut() throws Exception {
        String topic = "deletes-only";
        send(topic, List.of(record(topic, "k1", "{\"a\":1}", 1), record(topic, "k2", "{\"a\":2}", 2),
                record(topic, "k1", null, 3), record(topic, "k2", null, 4)));
        for (String format : List.of("delta", "iceberg")) {
            String sink = format + ":" + dir.resolve(format + "-deletes");
            CliRun deletes = CliRun.run(kafka, "--topic", topic, "--from", "offset:2", "--to", "latest", "--sink", sink,
                    "--table", "t", "--create-table", "--job", "deletes");
            assertThat(deletes.exitCode()).as(deletes.err()).isZero();
            assertThat(deletes.err()).as(format).doesNotContain("warning:");
            CliRun status = CliRun.of("status", "--sink", sink, "--table", "t", "--job", "deletes");
            assertThat(status.exitCode()).as(format + ": " + status.out() + status.err()).isZero();
            CliRun replay = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "offset:2", "--sink",
                    sink, "--table", "t", "--create-table", "--job", "replay");
            assertThat(replay.exitCode()).as(replay.err()).isZero();
            assertThat(replay.out()).as(format + ": read 2, written 0, kept out 2")
                    .containsPattern("total\\s+2\\s+0\\s+2");

            String nothing = format + ":" + dir.resolve(format + "-nothing");
            CliRun filtered = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                    nothing, "--table", "t", "--create-table", "--where", "value != null && has(value.a) && value.a > 5");
            assertThat(filtered.exitCode()).as(filtered.err()).isZero();
            assertThat(filtered.err()).as(format).contains("warning:").contains("so the table was not created and "
                    + "nothing records the job");
        }
    }

    /**
     * --columns leaves a table's other columns as they are: a database row is updated column by column, and a
     * lake table's row, replaced whole, would lose them, so that is refused before anything is written.
     */
    @Test
    void columnsLeaveTheTablesOtherColumnsAsTheyAreOrAreRefusedOnALakeTable() throws Exception {
        String topic = "columns-owned";
        send(topic, List.of(record(topic, "k1", "{\"a\":1,\"b\":\"x\"}", 1)));
        kafka.createTopic(topic + "-later", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(topic + "-later", "k1", "{\"a\":2,\"b\":\"y\"}", 2)), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("owned.db");
        String delta = "delta:" + dir.resolve("owned-delta");
        for (String sink : List.of(url, delta)) {
            CliRun all = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", sink,
                    "--table", "t", "--create-table");
            assertThat(all.exitCode()).as(all.err()).isZero();
            CliRun some = CliRun.run(kafka, "--topic", topic + "-later", "--from", "earliest", "--to", "latest",
                    "--sink", sink, "--table", "t", "--columns", "a");
            if (sink.equals(url)) {
                assertThat(some.exitCode()).as(some.err()).isZero();
                assertThat(rows(url, "t", "a", "b")).isEqualTo(Map.of("k1", "a=2, b=x"));
            } else {
                assertThat(some.exitCode()).as(some.err()).isEqualTo(ExitCodes.BAD_INPUT);
                assertThat(some.err()).contains("column(s) b that --columns leaves out");
                assertThat(dev.kbackfill.sink.delta.DeltaTableRows.rows(delta.substring(6)).get(0))
                        .containsEntry("a", 1L).containsEntry("b", "x");
            }
        }
    }

    /**
     * A record whose fields a rename writes into one column, after batches committed: a poison record named with its
     * coordinates (exit 1, what committed stays, not "bad input"), kept aside by a rerun under --on-error skip, which
     * resumes after what committed.
     */
    @Test
    void aRenameCollisionFoundAfterBatchesCommittedIsAPoisonRecordNotBadInput() throws Exception {
        String topic = "rename-collision";
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String[] values = {"{\"a\":1}", "{\"a\":2}", "{\"a\":3}", "{\"a\":4,\"b\":5}", "{\"a\":6}"};
        for (int i = 0; i < values.length; i++) {
            records.add(record(topic, "k" + i, values[i], i));
        }
        send(topic, records);
        String url = "jdbc:sqlite:" + dir.resolve("collision.db");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "t",
                "--create-table", "--rename", "a=b", "--batch-size", "1"};
        CliRun failed = CliRun.run(kafka, range);
        assertThat(failed.exitCode()).as(failed.err()).isEqualTo(ExitCodes.FAILURE);
        assertThat(failed.err()).contains(topic + "/0@3: --rename a=b writes field 'a' into column 'b'")
                .contains("--on-error skip").contains("another job, --job NAME")
                .contains("stopped with partition 0 at offset 3");
        assertThat(Orders.count(url, "SELECT count(*) FROM t")).isEqualTo(3);
        // the rerun resumes after the committed batches, the record kept aside
        CliRun skipped = CliRun.run(kafka, CliRun.concat(range, "--on-error", "skip"));
        assertThat(skipped.exitCode()).as(skipped.err()).isZero();
        assertThat(skipped.err()).contains("resuming").contains("1 record(s) could not be decoded and were skipped");
        assertThat(Orders.count(url, "SELECT count(*) FROM t")).isEqualTo(4);
    }

    /**
     * A mapping that writes two fields of the job's first records into one column is a wrong command, not a poison
     * record: exit 2 with one line naming the option and the fix, and the new SQLite file it would have written is not
     * left behind (no job, no job tables), so the corrected command just runs.
     */
    @Test
    void aRenameCollisionInTheJobsFirstBatchIsBadInputAndLeavesNothingBehind() throws Exception {
        String topic = "rename-collision-first";
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            records.add(record(topic, "k" + i, "{\"status\":\"s" + i + "\",\"amount\":" + i + "}", i));
        }
        send(topic, records);
        Path db = dir.resolve("collision-first.db");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + db,
                "--table", "t", "--create-table"};
        CliRun refused = CliRun.run(kafka, CliRun.concat(range, "--rename", "status=amount"));
        assertThat(refused.exitCode()).as(refused.err()).isEqualTo(ExitCodes.BAD_INPUT);
        List<String> said = refused.err().lines().filter(l -> l.startsWith("kbackfill")).toList();
        assertThat(said).as(refused.err()).hasSize(1);
        assertThat(said.get(0)).contains(topic + "/0@0: --rename status=amount writes field 'status' into column "
                + "'amount'").contains("nothing was written").doesNotContain("stopped with").doesNotContain("rerun");
        assertThat(db).as("the database file the refused run created").doesNotExist();

        CliRun fixed = CliRun.run(kafka, CliRun.concat(range, "--rename", "status=state"));
        assertThat(fixed.exitCode()).as(fixed.err()).isZero();
        assertThat(rows("jdbc:sqlite:" + db, "t", "state", "amount")).containsEntry("k3", "state=s3, amount=3")
                .hasSize(4);
    }

    /**
     * A misspelt name in --columns, --rename or --header-columns, a near miss of a field or header the first batch
     * carries, is refused before anything is written, so the corrected command just runs; a name no record carries
     * and that is no near miss (a field later records may carry) is a warning in the summary.
     */
    @Test
    void aMisspeltMappedNameIsRefusedBeforeAnythingIsWrittenAndTheCorrectedCommandRuns() throws Exception {
        String topic = "mapped-typos";
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ProducerRecord<byte[], byte[]> r = record(topic, "k" + i, "{\"status\":\"s" + i + "\",\"amount\":" + i + "}", i);
            r.headers().add("source", "web".getBytes(StandardCharsets.UTF_8));
            records.add(r);
        }
        send(topic, records);
        String url = "jdbc:sqlite:" + dir.resolve("typos.db");
        for (String[] typo : new String[][] {{"--columns", "status,amout", "--columns names field 'amout'", "amount"},
                {"--rename", "amout=total", "--rename names field 'amout'", "amount"},
                {"--header-columns", "sourc", "--header-columns names header 'sourc'", "source"}}) {
            CliRun r = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", "t", "--create-table", "--job", "typos", typo[0], typo[1]);
            assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.err()).contains(typo[2]).contains("did you mean '" + typo[3] + "'")
                    .contains("nothing was written");
        }
        CliRun fixed = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--job", "typos", "--columns", "status,amount", "--rename",
                "amount=total", "--header-columns", "source");
        assertThat(fixed.exitCode()).as(fixed.out() + fixed.err()).isZero();
        assertThat(rows(url, "t", "status", "total", "source")).containsEntry("k3", "status=s3, total=3, source=web")
                .hasSize(5);

        // a mapping changed after the rows were written: the conflict says how to rewrite them, and that works
        CliRun changed = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--job", "typos", "--columns", "status,amount", "--rename",
                "amount=total");
        assertThat(changed.exitCode()).as(changed.out() + changed.err()).isEqualTo(ExitCodes.JOB_CONFLICT);
        assertThat(changed.err()).contains("under another --job with --on-conflict overwrite");
        String url2 = "jdbc:sqlite:" + dir.resolve("typos2.db");
        assertThat(CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url2,
                "--table", "t", "--create-table", "--columns", "status").exitCode()).isZero();
        CliRun rewrite = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url2,
                "--table", "t", "--create-table", "--columns", "status,amount", "--on-conflict", "overwrite", "--job",
                "rewrite");
        assertThat(rewrite.exitCode()).as(rewrite.out() + rewrite.err()).isZero();
        assertThat(rows(url2, "t", "status", "amount")).containsEntry("k3", "status=s3, amount=3").hasSize(5);

        CliRun later = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("later.db"), "--table", "t", "--create-table", "--columns",
                "status,discount_code");
        assertThat(later.exitCode()).as(later.out() + later.err()).isZero();
        assertThat(later.err()).contains("--columns names field 'discount_code', which no record this run wrote "
                + "carries: check its spelling");
    }
}
