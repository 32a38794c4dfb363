package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.sink.delta.DeltaTableRows;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command lines that once lost, skipped or corrupted rows and exited 0 (the Trust issue), tried as a user would:
 * each now writes the right rows or refuses with the right exit code.
 */
@Tag("kafka")
class TrustIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, String value, Instant time) {
        return new ProducerRecord<>(topic, 0, time.toEpochMilli(), key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> rows(String url, String table) throws Exception {
        Map<String, String> rows = new TreeMap<>();
        try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement();
             var rs = s.executeQuery("SELECT kafka_key, status FROM " + table)) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getString(2));
            }
        }
        return rows;
    }

    /**
     * Trust, round 6, row 1: JSON keys 8 (a number) and "8" (text) on two partitions, --key-format json
     * --create-table. Text is never a number: the two are two keys, and one key column cannot hold both apart (the
     * column takes the first key's type, and the other would become its row). So the other is a poison record of its
     * own, on every sink, never a row merged, a key silently "kept out", or a batch failing on every rerun: exit 1
     * naming it under --on-error fail, counted as refused under skip, with the first key's row written.
     */
    @Test
    @Tag("postgresql")
    void jsonKeysOfOneTextButTwoTypesAreTwoKeysAndTheOneAColumnCannotHoldApartIsAPoisonRecord() throws Exception {
        String topic = "trust-typed-keys";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(new ProducerRecord<>(topic, 0, T0.toEpochMilli(), "8".getBytes(StandardCharsets.UTF_8),
                "{\"status\":\"number\"}".getBytes(StandardCharsets.UTF_8)), new ProducerRecord<>(topic, 1,
                T0.plusSeconds(1).toEpochMilli(), "\"8\"".getBytes(StandardCharsets.UTF_8),
                "{\"status\":\"text\"}".getBytes(StandardCharsets.UTF_8))), Map.of());
        Map<String, String> sinks = new java.util.LinkedHashMap<>();
        sinks.put("sqlite", "jdbc:sqlite:" + dir.resolve("typed.db"));
        sinks.put("postgres", dev.kbackfill.testservices.SharedPostgres.newDatabase("trust_typed"));
        sinks.put("delta", "delta:" + dir.resolve("typed-delta"));
        sinks.put("iceberg", "iceberg:" + dir.resolve("typed-iceberg"));
        for (Map.Entry<String, String> sink : sinks.entrySet()) {
            String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", sink.getValue(),
                    "--table", "t", "--key-format", "json", "--create-table", "--job", "typed-" + sink.getKey()};
            CliRun failing = CliRun.run(kafka, range);
            assertThat(failing.exitCode()).as(sink.getKey() + ": " + failing.err()).isEqualTo(ExitCodes.FAILURE);
            assertThat(failing.err()).as(sink.getKey()).contains("the key").contains("is another key").contains("would share");
            CliRun skipping = CliRun.run(kafka, CliRun.concat(range, "--on-error", "skip"));
            assertThat(skipping.exitCode()).as(sink.getKey() + ": " + skipping.err()).isZero();
            assertThat(skipping.err()).as(sink.getKey()).contains("1 record(s)");
            CliRun again = CliRun.run(kafka, CliRun.concat(range, "--on-error", "skip"));
            assertThat(again.exitCode()).as(sink.getKey() + " rerun: " + again.err()).isZero();
        }
        assertThat(rows(sinks.get("sqlite"), "t")).hasSize(1);
        assertThat(rows(sinks.get("postgres"), "t")).hasSize(1);
    }

    /**
     * Trust, round 7, as the issue tried it on MariaDB: keys that differ only by case, accents or trailing spaces, a
     * delete of one of them, into a table --create-table makes in a database of the usual default collation
     * (utf8mb4_general_ci): one row per distinct key, the delete removes its own key's row only; a 300-character key
     * into a table made by hand with VARCHAR(255) keys is a counted poison record under --on-error skip, the rest of
     * its batch written; a table whose key column ignores case is refused (exit 2) naming the statement that fixes it.
     */
    @Test
    @Tag("mariadb")
    void keysThatDifferOnlyByCaseAccentsOrTrailingSpacesAreRowsOfTheirOwnInMariaDb() throws Exception {
        String topic = "trust-key-bytes";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        String url = dev.kbackfill.testservices.SharedMariaDb.newDatabase("trust_keys");
        try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement()) {
            s.execute("ALTER DATABASE trust_keys CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci");
        }
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String[] keys = {"Key", "key", "e", "\u00e9", "sp", "sp ", "user@x.com", "USER@X.COM"};
        for (int i = 0; i < keys.length; i++) {
            records.add(record(topic, keys[i], "{\"status\":\"s" + i + "\"}", T0.plusSeconds(i)));
        }
        records.add(record(topic, "USER@X.COM", null, T0.plusSeconds(20)));
        Orders.send(kafka, records, Map.of());
        CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--batch-size", "1");
        assertThat(run.exitCode()).as(run.err()).isZero();
        Map<String, String> rows = rows(url, "t");
        assertThat(rows).hasSize(7).containsEntry("Key", "s0").containsEntry("key", "s1").containsEntry("e", "s2")
                .containsEntry("\u00e9", "s3").containsEntry("sp", "s4").containsEntry("sp ", "s5")
                .containsEntry("user@x.com", "s6").doesNotContainKey("USER@X.COM");
        // a table made by hand: 255-character keys, compared byte for byte
        try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement()) {
            s.execute("CREATE TABLE narrow (kafka_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin "
                    + "NOT NULL PRIMARY KEY, status VARCHAR(20), kafka_topic VARCHAR(100), kafka_partition BIGINT, "
                    + "kafka_offset BIGINT, kafka_timestamp DATETIME(6), kafka_log_time DATETIME(6))");
            s.execute("CREATE TABLE folding (kafka_key VARCHAR(255) NOT NULL PRIMARY KEY, status VARCHAR(20), "
                    + "kafka_topic VARCHAR(100), kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp "
                    + "DATETIME(6), kafka_log_time DATETIME(6))");
        }
        String longTopic = "trust-key-long";
        kafka.createTopic(longTopic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(longTopic, "x".repeat(300), "{\"status\":\"long\"}", T0),
                record(longTopic, "short", "{\"status\":\"ok\"}", T0.plusSeconds(1))), Map.of());
        CliRun narrow = CliRun.run(kafka, "--topic", longTopic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "narrow", "--on-error", "skip");
        assertThat(narrow.exitCode()).as(narrow.err()).isZero();
        assertThat(rows(url, "narrow")).containsOnly(Map.entry("short", "ok"));
        assertThat(narrow.err()).contains("1 record(s) held a value the target cannot hold");
        CliRun failing = CliRun.run(kafka, "--topic", longTopic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "narrow", "--job", "fails");
        assertThat(failing.exitCode()).isEqualTo(1);
        assertThat(failing.err()).contains("is 300 characters long, and the column holds at most 255")
                .contains("partition 0").contains("offset 0");
        CliRun folding = CliRun.run(kafka, "--topic", longTopic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "folding");
        assertThat(folding.exitCode()).isEqualTo(2);
        assertThat(folding.err()).contains("key column kafka_key of table folding compares keys by collation "
                + "utf8mb4_general_ci").contains("ALTER TABLE `folding` MODIFY `kafka_key` varchar(255) CHARACTER SET "
                + "utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL").contains("--keys-distinct-in-collation");
        assertThat(errLines(folding)).hasSize(1);
    }

    private static List<String> errLines(CliRun run) {
        return run.err().lines().filter(l -> !l.isBlank()).toList();
    }

    @Test
    void aJobNameReusedForAnotherTableIsRefusedNotReportedDone() throws Exception {
        kafka.createTopic("trust-reuse", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-reuse", "k1", "{\"status\":\"a\"}", T0.plusSeconds(60))), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("x.db");
        CliRun first = CliRun.run(kafka, "--topic", "trust-reuse", "--from", "2024-01-01", "--to", "2024-01-02",
                "--sink", url, "--table", "a", "--create-table", "--job", "x");
        assertThat(first.exitCode()).as(first.err()).isZero();
        CliRun second = CliRun.run(kafka, "--topic", "trust-reuse", "--from", "2024-01-01", "--to", "2024-01-02",
                "--sink", url, "--table", "b", "--create-table", "--job", "x");
        assertThat(second.exitCode()).as(second.out() + second.err()).isEqualTo(ExitCodes.JOB_CONFLICT);
        assertThat(second.err()).contains("job 'x' was created with destination table a, not table b")
                .contains("--job").contains("kbackfill reset --job x");
        assertThat(second.out()).doesNotContain("nothing to do");
        // another setting that shapes the output is just as much another job
        CliRun modes = CliRun.run(kafka, "--topic", "trust-reuse", "--from", "2024-01-01", "--to", "2024-01-02",
                "--sink", url, "--table", "a", "--create-table", "--job", "x", "--on-conflict", "overwrite");
        assertThat(modes.exitCode()).isEqualTo(ExitCodes.JOB_CONFLICT);
        assertThat(modes.err()).contains("on-conflict newer-wins, not overwrite");
    }

    @Test
    void aStoredPlanOfARecreatedTopicIsRefusedNamingBothIds() throws Exception {
        kafka.createTopic("trust-recreated", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-recreated", "k1", "{\"status\":\"old\"}", T0),
                record("trust-recreated", "k2", "{\"status\":\"old\"}", T0.plusSeconds(1))), Map.of());
        Path plan = planned("trust-recreated", "plan.json");
        String oldId = kafka.admin().describeTopics(List.of("trust-recreated")).allTopicNames().get()
                .get("trust-recreated").topicId().toString();
        kafka.deleteTopic("trust-recreated");
        kafka.createTopic("trust-recreated", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-recreated", "other", "{\"status\":\"new\"}", T0),
                record("trust-recreated", "other2", "{\"status\":\"new\"}", T0),
                record("trust-recreated", "other3", "{\"status\":\"new\"}", T0)), Map.of());
        String newId = kafka.admin().describeTopics(List.of("trust-recreated")).allTopicNames().get()
                .get("trust-recreated").topicId().toString();
        String url = "jdbc:sqlite:" + dir.resolve("recreated.db");
        CliRun r = CliRun.run(kafka, "--plan", plan.toString(), "--sink", url, "--create-table");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains(oldId).contains(newId).doesNotContain("--allow-data-loss");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aPlanFileWhoseTopicNameWasEditedIsRefusedAsAnotherTopicNotAsDataLoss() throws Exception {
        kafka.createTopic("trust-edit-a", 1, Map.of("retention.ms", "-1"));
        kafka.createTopic("trust-edit-b", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-edit-a", "k", "{\"status\":\"x\"}", T0)), Map.of());
        Path plan = planned("trust-edit-a", "edit.json");
        Files.writeString(plan, Files.readString(plan).replace("\"trust-edit-a\"", "\"trust-edit-b\""));
        CliRun r = CliRun.run(kafka, "--plan", plan.toString(), "--sink", "jdbc:sqlite:" + dir.resolve("edit.db"),
                "--create-table");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("now has id").doesNotContain("--allow-data-loss");
    }

    @Test
    void aPlanReachingPastTheLogEndIsRefusedAtOnce() throws Exception {
        kafka.createTopic("trust-past-end", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-past-end", "k", "{\"status\":\"x\"}", T0)), Map.of());
        Path plan = planned("trust-past-end", "past.json");
        Files.writeString(plan, Files.readString(plan).replaceAll("\"end\"\\s*:\\s*1\\b", "\"end\" : 500"));
        long started = System.nanoTime();
        CliRun r = CliRun.run(kafka, "--plan", plan.toString(), "--sink", "jdbc:sqlite:" + dir.resolve("past.db"),
                "--create-table");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("partition 0 ends at offset 500 but the log ends at 1");
        assertThat(System.nanoTime() - started).as("refused before reading, not after a stall").isLessThan(60_000_000_000L);
    }

    @Test
    void oneJsonKeyWrittenInTwoFieldOrdersIsOneRowWithItsOwnValues() throws Exception {
        kafka.createTopic("trust-key-order", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-key-order", "{\"a\":1,\"b\":2}", "{\"status\":\"first\"}", T0),
                record("trust-key-order", "{\"b\":2,\"a\":1}", "{\"status\":\"second\"}", T0.plusSeconds(1)),
                record("trust-key-order", "{\"b\":1,\"a\":2}", "{\"status\":\"swapped\"}", T0.plusSeconds(2))), Map.of());
        String path = dir.resolve("keys-delta").toString();
        CliRun delta = CliRun.run(kafka, "--topic", "trust-key-order", "--from", "earliest", "--to", "latest",
                "--key-format", "json", "--sink", "delta:" + path, "--create-table");
        assertThat(delta.exitCode()).as(delta.err()).isZero();
        List<String> rows = new ArrayList<>();
        DeltaTableRows.rows(path).forEach(r -> rows.add(r.get("a") + "," + r.get("b") + "=" + r.get("status")));
        assertThat(rows).containsExactlyInAnyOrder("1,2=second", "2,1=swapped");
        assertThat(delta.out()).contains("wrote 2 changes from 3 records");
        String url = "jdbc:sqlite:" + dir.resolve("keys.db");
        CliRun sqlite = CliRun.run(kafka, "--topic", "trust-key-order", "--from", "earliest", "--to", "latest",
                "--key-format", "json", "--sink", url, "--table", "keys", "--create-table");
        assertThat(sqlite.exitCode()).as(sqlite.err()).isZero();
        assertThat(Orders.count(url, "SELECT COUNT(*) FROM keys")).isEqualTo(2);
        assertThat(Orders.count(url, "SELECT COUNT(*) FROM keys WHERE a = 1 AND b = 2 AND status = 'second'")).isEqualTo(1);
    }

    @Test
    void aReplayOfAnOlderRangeNeverResurrectsADeletedKey() throws Exception {
        kafka.createTopic("trust-deletes", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-deletes", "gone", "{\"status\":\"v1\"}", T0),
                record("trust-deletes", "kept", "{\"status\":\"v1\"}", T0.plusSeconds(1)),
                record("trust-deletes", "gone", "{\"status\":\"v2\"}", T0.plusSeconds(2)),
                record("trust-deletes", "gone", null, T0.plusSeconds(3))), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("deletes.db");
        String path = dir.resolve("deletes-delta").toString();
        for (String sink : List.of(url, "delta:" + path)) {
            CliRun all = CliRun.run(kafka, "--topic", "trust-deletes", "--from", "earliest", "--to", "latest",
                    "--sink", sink, "--table", "orders", "--create-table", "--job", "all");
            assertThat(all.exitCode()).as(all.err()).isZero();
            CliRun older = CliRun.run(kafka, "--topic", "trust-deletes", "--from", "earliest", "--to", "offset:3",
                    "--sink", sink, "--table", "orders", "--create-table", "--job", "older");
            assertThat(older.exitCode()).as(older.err()).isZero();
            // "kept" holds this very version already, "gone" a newer one (its delete): neither is written again
            assertThat(older.out()).contains("wrote 0 changes from 3 records")
                    .contains("2 change(s) kept out: the target holds a newer version");
        }
        assertThat(rows(url, "orders")).isEqualTo(Map.of("kept", "v1"));
        List<String> delta = new ArrayList<>();
        DeltaTableRows.rows(path).forEach(r -> delta.add(r.get("kafka_key") + "=" + r.get("status")));
        assertThat(delta).containsExactly("kept=v1");
    }

    @Test
    void aNewerRecordFromASecondTopicWinsAndRowsKeptOutAreNotCountedAsWritten() throws Exception {
        kafka.createTopic("trust-v1", 1, Map.of("retention.ms", "-1"));
        kafka.createTopic("trust-v2", 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> v1 = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            v1.add(record("trust-v1", "filler" + i, "{\"status\":\"v1\"}", T0.plusSeconds(i)));
        }
        v1.add(record("trust-v1", "a", "{\"status\":\"v1\"}", T0.plusSeconds(100)));
        v1.add(record("trust-v1", "b", "{\"status\":\"v1-newest\"}", T0.plusSeconds(10_000)));
        Orders.send(kafka, v1, Map.of());
        Orders.send(kafka, List.of(record("trust-v2", "a", "{\"status\":\"v2\"}", T0.plusSeconds(5_000)),
                record("trust-v2", "b", "{\"status\":\"v2-older\"}", T0.plusSeconds(5_000))), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("move.db");
        String path = dir.resolve("move-delta").toString();
        for (String sink : List.of(url, "delta:" + path)) {
            for (String topic : List.of("trust-v1", "trust-v2")) {
                CliRun r = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", sink,
                        "--table", "orders", "--create-table");
                assertThat(r.exitCode()).as(r.err()).isZero();
                if (topic.equals("trust-v2")) {
                    assertThat(r.out()).contains("wrote 1 changes from 2 records").contains("1 change(s) kept out");
                }
            }
        }
        Map<String, String> rows = rows(url, "orders");
        assertThat(rows).containsEntry("a", "v2").containsEntry("b", "v1-newest");
        Map<String, Object> delta = new TreeMap<>();
        DeltaTableRows.rows(path).forEach(r -> delta.put((String) r.get("kafka_key"), r.get("status")));
        assertThat(delta).containsEntry("a", "v2").containsEntry("b", "v1-newest");
    }

    @Test
    void aValueTheDatabaseRefusesIsAPoisonRecordNamedAndRoutedByTheErrorPolicy() throws Exception {
        kafka.createTopic("trust-nul", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-nul", "a", "{\"status\":\"fine\"}", T0),
                record("trust-nul", "b", "{\"status\":\"bad\\u0000byte\"}", T0.plusSeconds(1)),
                record("trust-nul", "c", "{\"status\":\"fine\"}", T0.plusSeconds(2))), Map.of());
        String url = dev.kbackfill.testservices.SharedPostgres.newDatabase("trust_nul");
        String[] common = {"--topic", "trust-nul", "--from", "earliest", "--to", "latest", "--sink", url,
                "--create-table"};
        CliRun failing = CliRun.run(kafka, CliRun.concat(common, "--table", "failing", "--job", "failing"));
        assertThat(failing.exitCode()).as(failing.err()).isEqualTo(ExitCodes.FAILURE);
        assertThat(failing.err()).contains("partition 0 offset 1").contains("NUL character")
                .contains("--on-error skip or --dead-letter");
        CliRun skipping = CliRun.run(kafka, CliRun.concat(common, "--table", "skipping", "--job", "skipping", "--on-error", "skip"));
        assertThat(skipping.exitCode()).as(skipping.err()).isZero();
        assertThat(skipping.out()).containsPattern("total +3 +2 +0 +0 +0 +1 +0");
        assertThat(rows(url, "skipping")).isEqualTo(Map.of("a", "fine", "c", "fine"));
        Path letters = dir.resolve("nul.jsonl");
        CliRun lettered = CliRun.run(kafka, CliRun.concat(common, "--table", "lettered", "--job", "lettered", "--dead-letter",
                letters.toString()));
        assertThat(lettered.exitCode()).as(lettered.err()).isZero();
        assertThat(Files.readAllLines(letters)).singleElement().satisfies(line -> assertThat(line)
                .contains("\"partition\":0").contains("\"offset\":1").contains("NUL character"));
    }

    @Test
    void aRunRefusedBeforeItBeginsLeavesNothingBehind() throws Exception {
        kafka.createTopic("trust-nothing", 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record("trust-nothing", "k", "{\"status\":\"x\"}", T0)), Map.of());
        Path plan = planned("trust-nothing", "nothing.json");
        Files.writeString(plan, Files.readString(plan).replaceAll("\"end\"\\s*:\\s*1\\b", "\"end\" : 500"));
        Path work = Files.createDirectories(dir.resolve("nothing"));
        CliRun r = CliRun.run(kafka, "--plan", plan.toString(), "--sink", "jdbc:sqlite:" + work.resolve("x.db"),
                "--create-table");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        try (var files = Files.list(work)) {
            assertThat(files.toList()).as("no database file, no job tables, no lock file").isEmpty();
        }
    }

    @Test
    void theTombstoneLedgerIsPrunedOnlyExplicitly() throws Exception {
        kafka.createTopic("trust-forget", 1, Map.of("retention.ms", "-1"));
        // (a key with a value too: a Delta table takes its columns from its first batch)
        Orders.send(kafka, List.of(record("trust-forget", "gone", "{\"status\":\"v1\"}", T0),
                record("trust-forget", "kept", "{\"status\":\"v1\"}", T0.plusSeconds(1)),
                record("trust-forget", "gone", null, T0.plusSeconds(3))), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("forget.db");
        String path = dir.resolve("forget-delta").toString();
        for (String sink : List.of(url, "delta:" + path)) {
            CliRun all = CliRun.run(kafka, "--topic", "trust-forget", "--from", "earliest", "--to", "latest",
                    "--sink", sink, "--table", "orders", "--create-table", "--job", "all");
            assertThat(all.exitCode()).as(all.err()).isZero();
            // the tombstone is stamped 2024-01-01T00:00:03Z, but pruning goes by when the delete was recorded (now)
            CliRun keep = CliRun.of("compact", "--sink", sink, "--table", "orders", "--forget-deletes-before",
                    "2024-01-01T00:00:04Z");
            assertThat(keep.exitCode()).as(keep.err()).isZero();
            assertThat(keep.out()).contains("forgot 0 deleted key(s)");
            String later = java.time.Instant.now().plusSeconds(60).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
            CliRun forget = CliRun.of("compact", "--sink", sink, "--table", "orders", "--forget-deletes-before", later);
            assertThat(forget.exitCode()).as(forget.err()).isZero();
            assertThat(forget.out()).contains("forgot 1 deleted key(s) recorded before " + later);
            // forgotten: an older replay brings the key back, which is what pruning trades away
            CliRun older = CliRun.run(kafka, "--topic", "trust-forget", "--from", "earliest", "--to", "offset:1",
                    "--sink", sink, "--table", "orders", "--create-table", "--job", "older");
            assertThat(older.exitCode()).as(older.err()).isZero();
            assertThat(older.out()).contains("wrote 1 changes from 1 records");
        }
    }

    /** {@code kbackfill plan --out FILE} of the whole topic. */
    private Path planned(String topic, String file) {
        Path plan = dir.resolve(file);
        CliRun planned = CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic", topic,
                "--from", "earliest", "--to", "latest", "--out", plan.toString());
        assertThat(planned.exitCode()).as(planned.err()).isZero();
        return plan;
    }
}
