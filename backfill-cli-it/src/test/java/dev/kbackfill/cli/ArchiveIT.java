package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A topic whose first half retention deleted, archived by a Kafka Connect S3 sink (Aiven's layout and Confluent's,
 * written as the connectors document them), and its twin that never lost a record: a backfill of the archive and the
 * topic from the archive's first record equals the twin's, row for row and offset for offset; bad archives are refused
 * naming the file, before anything is written.
 */
@Tag("kafka")
class ArchiveIT {

    private static final String TOPIC = "archived";
    private static final String WHOLE = "archived-whole";
    private static final int KEYS = 40;
    private static final int UPDATES = 10;
    private static EmbeddedKafka kafka;
    private static Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records;
    private static final Map<Integer, Long> deletedBelow = new TreeMap<>();

    @TempDir
    static Path archives;

    @TempDir
    Path dir;

    @BeforeAll
    static void topicsAndArchives() throws Exception {
        kafka = SharedKafka.get();
        for (String t : List.of(TOPIC, WHOLE)) {
            kafka.createTopic(t, 2, Map.of("retention.ms", "-1"));
            produce(t); // keyed: the same records at the same offsets in both
        }
        records = ConnectorArchives.read(kafka, TOPIC, 2);
        ConnectorArchives.aiven(archives.resolve("aiven"), TOPIC, records, 30, true);
        ConnectorArchives.confluent(archives.resolve("confluent"), TOPIC, records, 30);
        ConnectorArchives.aivenAvro(archives.resolve("aiven-avro"), TOPIC, records, 30);
        ConnectorArchives.aivenCsv(archives.resolve("aiven-csv"), TOPIC, records, 30);
        ConnectorArchives.aivenParquet(archives.resolve("aiven-parquet"), TOPIC, records, 30);
        ConnectorArchives.confluentParquet(archives.resolve("confluent-parquet"), TOPIC, records, 30);
        ConnectorArchives.confluentAvro(archives.resolve("confluent-avro"), TOPIC, records, 30);
        Map<TopicPartition, RecordsToDelete> delete = new java.util.HashMap<>();
        records.forEach((p, list) -> {
            long below = list.size() / 2 + 7; // not on a file's boundary: the archive and the topic overlap
            deletedBelow.put(p, below);
            delete.put(new TopicPartition(TOPIC, p), RecordsToDelete.beforeOffset(below));
        });
        try (var admin = kafka.admin()) {
            admin.deleteRecords(delete).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** The orders of {@link Orders#produce}, each with a {@code source} header that differs from its neighbours'. */
    private static void produce(String topic) throws Exception {
        List<org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]>> out = new java.util.ArrayList<>();
        for (int u = 0; u < UPDATES; u++) {
            for (int k = 0; k < KEYS; k++) {
                String key = String.format(java.util.Locale.ROOT, "k%05d", k);
                long ts = Orders.T0.plusSeconds((long) u * KEYS + k).toEpochMilli();
                byte[] source = ("app-" + ((u * KEYS + k) % 7)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                var headers = new org.apache.kafka.common.header.internals.RecordHeaders().add("source", source);
                out.add(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, null, ts,
                        key.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        Orders.json(key, u).getBytes(java.nio.charset.StandardCharsets.UTF_8), headers));
            }
        }
        Orders.send(kafka, out, Map.of());
    }

    @Test
    void aRangeFromTheAivenArchivesFirstRecordEqualsTheTopicThatNeverLostOne() throws Exception {
        Path archive = archives.resolve("aiven");
        Path chart = dir.resolve("plan.svg");
        CliRun plan = CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC,
                "--from", "earliest", "--to", "latest", "--archive", archive.toString(), "--chart", chart.toString());
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        long seam = deletedBelow.get(0);
        assertThat(plan.err()).contains("offsets 0 to " + (seam - 1) + " (" + seam + ") come from " + archive
                + " (Aiven S3 sink, jsonl").contains("exact offsets")
                .contains("from the topic; they meet at the log start " + seam)
                .contains("are in the topic too and are read once, from the topic");
        assertThat(Files.readString(chart)).contains("deleted by retention, read from the archive: [0, " + seam + ")");

        String url = "jdbc:sqlite:" + dir.resolve("archived.db");
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                archive.toString(), "--sink", url, "--table", "t", "--create-table", "--verify");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("verify: AGREES");
        assertThat(rows(url)).isEqualTo(rows(wholeTopicInto(dir.resolve("whole.db")))).hasSize(KEYS);

        // the same command again reads archive and topic again and changes nothing: every record is its own version
        CliRun again = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                archive.toString(), "--sink", url, "--table", "t", "--create-table");
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out() + again.err()).contains("wrote 0 changes from " + total() + " records");
        assertThat(rows(url)).isEqualTo(rows(wholeTopicInto(dir.resolve("whole.db"))));
    }

    @Test
    void confluentsLayoutInfersOffsetsOnlyWhenAllowedAndThenEqualsTheWholeTopic() throws Exception {
        Path archive = archives.resolve("confluent");
        String url = "jdbc:sqlite:" + dir.resolve("confluent.db");
        String[] args = {"--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive", archive.toString(),
                "--sink", url, "--table", "t", "--create-table"};
        CliRun refused = CliRun.run(kafka, args);
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.err()).contains("carry no offsets").contains("--allow-inferred-offsets")
                .doesNotContain("Exception");

        CliRun run = CliRun.run(kafka, CliRun.concat(args, "--allow-inferred-offsets", "--verify"));
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("verify: AGREES");
        assertThat(rows(url)).isEqualTo(rows(wholeTopicInto(dir.resolve("whole.db"))));
    }

    @Test
    void aTimeBoundResolvesInTheArchiveByItsRecordsTimestampsAsInTheWholeTopic() throws Exception {
        String from = Orders.T0.plusSeconds(KEYS * 2L + 3).toString(); // in each partition's archived part
        Plan archived = Plan.fromJson(CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic",
                TOPIC, "--from", from, "--to", "latest", "--archive", archives.resolve("aiven").toString(),
                "--format", "json").out());
        Plan whole = Plan.fromJson(CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic",
                WHOLE, "--from", from, "--to", "latest", "--format", "json").out());
        for (PartitionRange w : whole.partitions()) {
            PartitionRange a = archived.partition(w.partition()).orElseThrow();
            assertThat(w.start()).as("partition %d starts in the archived part", w.partition())
                    .isPositive().isLessThan(deletedBelow.get(w.partition()));
            assertThat(a.start()).as("partition %d", w.partition()).isEqualTo(w.start());
            assertThat(a.end()).isEqualTo(w.end());
        }
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource({
            "aiven-avro,", "aiven-csv,'--archive-fields=key,value,offset,timestamp,headers'", "aiven-parquet,",
            "confluent-parquet,--allow-inferred-offsets", "confluent-avro,--allow-inferred-offsets",
            "confluent,--allow-inferred-offsets", "aiven,"})
    void eachLayoutAndFormatWithHeadersEqualsTheWholeTopicHeadersIncluded(String layout, String option)
            throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve(layout + ".db");
        String[] args = {"--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                archives.resolve(layout).toString(), "--sink", url, "--table", "t", "--create-table",
                "--header-columns", "source", "--verify"};
        CliRun run = CliRun.run(kafka, option == null ? args : CliRun.concat(args, option));
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("verify: AGREES");
        assertThat(rows(url, true)).isEqualTo(rows(wholeTopicWithHeadersInto(dir.resolve("whole-h.db")), true))
                .hasSize(KEYS);
    }

    @Test
    void aConfluentParquetArchiveIntoPostgresqlEqualsTheWholeTopic() throws Exception {
        String url = dev.kbackfill.testservices.SharedPostgres.newDatabase("parquet");
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                archives.resolve("confluent-parquet").toString(), "--allow-inferred-offsets", "--sink", url, "--table",
                "t", "--create-table", "--header-columns", "source");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.err()).contains("(Confluent S3 sink, parquet, headers");
        assertThat(rows(url, true)).isEqualTo(rows(wholeTopicWithHeadersInto(dir.resolve("whole-h.db")), true));
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"gap", "overlap", "name-and-content", "unreadable",
            "another-topic", "missing-keys", "name-and-folder", "format", "parquet", "csv-fields"})
    void aBadArchiveIsRefusedNamingTheFileBeforeAnythingIsWritten(String damage) throws Exception {
        Path archive = ConnectorArchives.copy(archives.resolve(switch (damage) {
            case "missing-keys", "name-and-folder", "format" -> "confluent";
            case "parquet" -> "confluent-parquet";
            case "csv-fields" -> "aiven-csv";
            default -> "aiven";
        }), dir.resolve("a"));
        String named = damage(archive, damage);
        Path db = dir.resolve("bad.db");
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                archive.toString(), "--allow-inferred-offsets", "--sink", "jdbc:sqlite:" + db, "--table", "t",
                "--create-table");
        assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
        assertThat(run.errLines()).hasSize(1);
        assertThat(run.err()).contains(named).doesNotContain("Exception");
        assertThat(db).as("nothing written").doesNotExist();
    }

    /** Damages the archive as {@code how} says; returns what the refusal must name. */
    private static String damage(Path archive, String how) throws Exception {
        List<ConsumerRecord<byte[], byte[]>> p0 = records.get(0);
        switch (how) {
            case "gap" -> {
                Files.delete(archive.resolve(TOPIC + "-0-60"));
                return TOPIC + "-0-30.gz and " + TOPIC + "-0-90.gz";
            }
            case "overlap" -> {
                ConnectorArchives.aivenFile(archive, TOPIC, p0.subList(45, 50), false, true);
                return TOPIC + "-0-30.gz and " + TOPIC + "-0-45";
            }
            case "name-and-content" -> {
                Files.move(archive.resolve(TOPIC + "-1-60"), archive.resolve(TOPIC + "-1-61"));
                return TOPIC + "-1-61 is named for offset 61 but its first record is at offset 60";
            }
            case "unreadable" -> {
                Path f = archive.resolve(TOPIC + "-0-90.gz");
                byte[] bytes = Files.readAllBytes(f);
                Files.write(f, java.util.Arrays.copyOf(bytes, bytes.length / 2));
                return TOPIC + "-0-90.gz cannot be read";
            }
            case "another-topic" -> {
                try (var files = Files.list(archive)) {
                    for (Path f : files.toList()) {
                        Files.move(f, archive.resolve(f.getFileName().toString().replace(TOPIC + "-", "payments-")));
                    }
                }
                return "holds no file of topic " + TOPIC + " (it holds topic(s) payments)";
            }
            case "missing-keys" -> {
                Files.delete(archive.resolve("topics/" + TOPIC + "/partition=1/" + TOPIC + "+1+0000000030.keys.json"));
                return TOPIC + "+1+0000000030.json has no keys file";
            }
            case "name-and-folder" -> {
                Path from = archive.resolve("topics/" + TOPIC + "/partition=1/" + TOPIC + "+1+0000000030.json");
                Files.move(from, from.resolveSibling(TOPIC + "+0+0000000030.json"));
                return TOPIC + "+0+0000000030.json is named for partition 0 but lies in folder partition=1";
            }
            case "format" -> {
                Files.writeString(archive.resolve("topics/" + TOPIC + "/partition=0/" + TOPIC + "+0+0000000300.bin"),
                        "raw");
                return TOPIC + "+0+0000000300.bin is in format .bin, which kbackfill does not read";
            }
            case "parquet" -> {
                Path f = archive.resolve("topics/" + TOPIC + "/partition=0/" + TOPIC + "+0+0000000030.snappy.parquet");
                byte[] bytes = Files.readAllBytes(f);
                Files.write(f, java.util.Arrays.copyOf(bytes, bytes.length / 2)); // an upload cut short
                return TOPIC + "+0+0000000030.snappy.parquet cannot be read as Parquet";
            }
            case "csv-fields" -> {
                return TOPIC + "-0-00000000000000000000 is in Aiven's CSV format, whose lines do not name their fields:"
                        + " give them as the connector's format.output.fields did, in order (--archive-fields";
            }
            default -> throw new IllegalArgumentException(how);
        }
    }

    @Test
    void verifyConfirmsRowsNewerThanItsRangeByTheArchivedRecordsTheyClaim() throws Exception {
        String archive = archives.resolve("aiven").toString();
        String url = "jdbc:sqlite:" + dir.resolve("newer.db");
        // the table holds each key as of offset 40; the range verified ends at 20: every row claims a newer record,
        // one retention deleted from the topic and the archive still holds
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "{\"" + TOPIC
                + "\":{\"0\":40,\"1\":40}}", "--archive", archive, "--sink", url, "--table", "t", "--create-table");
        assertThat(run.exitCode()).as(run.err()).isZero();
        CliRun verify = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC,
                "--from", "earliest", "--to", "{\"" + TOPIC + "\":{\"0\":20,\"1\":20}}", "--archive", archive,
                "--sink", url, "--table", "t");
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
        assertThat(verify.out()).startsWith("AGREES: ").containsPattern("\nnewer +3\\d\n")
                .containsPattern("\nunconfirmed +0\n").doesNotContain("deleted (retention)");
    }

    @Test
    void inspectsSuggestedBackfillOfAGapBelowTheLogStartCarriesTheArchive() throws Exception {
        try (var admin = kafka.admin()) {
            for (String[] g : new String[][] {{"archived-old", "10"}, {"archived-new", "150"}}) {
                Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> at = new java.util.HashMap<>();
                for (int p = 0; p < 2; p++) {
                    at.put(new TopicPartition(TOPIC, p), new org.apache.kafka.clients.consumer.OffsetAndMetadata(
                            Long.parseLong(g[1])));
                }
                admin.alterConsumerGroupOffsets(g[0], at).all().get(30, TimeUnit.SECONDS);
            }
        }
        String archive = archives.resolve("aiven").toString();
        CliRun inspect = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC,
                "--at", "group:archived-old", "--then", "group:archived-new", "--archive", archive);
        assertThat(inspect.exitCode()).as(inspect.err()).isZero();
        // the archive holds every offset retention deleted: nothing is lost, the whole gap is written
        long gap = 2 * (150 - 10);
        assertThat(inspect.out()).containsPattern("(?m)^ +total +" + gap + " +0 +0$")
                .contains("--from group:archived-old --to group:archived-new --bootstrap-server "
                        + kafka.bootstrapServers() + " --archive " + archive + " --sink URL' writes the " + gap
                        + " records neither read");
    }

    @Test
    void anArchiveEndingBelowTheLogStartIsAHoleRefusedUnlessLossIsAllowedThenCounted() throws Exception {
        Path archive = ConnectorArchives.copy(archives.resolve("aiven"), dir.resolve("short"));
        // partition 1 archived to offset 89 only: offsets 90 to the log start are in neither
        for (String f : List.of("-1-90.gz", "-1-120", "-1-150.gz")) {
            Files.delete(archive.resolve(TOPIC + f));
        }
        long seam = deletedBelow.get(1);
        Path db = dir.resolve("hole.db");
        String[] args = {"--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive", archive.toString(),
                "--sink", "jdbc:sqlite:" + db, "--table", "t", "--create-table"};
        CliRun refused = CliRun.run(kafka, args);
        assertThat(refused.exitCode()).as(refused.err()).isEqualTo(2);
        assertThat(refused.err()).contains("partition 1: offsets 90 to " + (seam - 1) + " are in neither " + archive
                + " (it ends at 90) nor the topic (its log starts at " + seam + ")").contains("--allow-data-loss");
        assertThat(Orders.count("jdbc:sqlite:" + db, "SELECT count(*) FROM sqlite_master WHERE name = 't'"))
                .as("no table made").isZero();

        CliRun run = CliRun.run(kafka, CliRun.concat(args, "--allow-data-loss"));
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).contains("lost for good; data loss allowed, the " + (seam - 90) + " offsets are counted");
        assertThat(run.out() + run.err()).containsPattern("\\n1 +" + (records.get(1).size() - (seam - 90)) + " .* "
                + (seam - 90) + " ");
    }

    @Test
    void aRunKilledInsideTheArchivedPartResumesAcrossTheSeamToExactlyTheExpectedRows() throws Exception {
        String topic = "archived-crash";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        List<Orders.Produced> produced = Orders.produce(kafka, topic, 1000, 20);
        Path archive = dir.resolve("crash-archive");
        ConnectorArchives.aiven(archive, topic, ConnectorArchives.read(kafka, topic, 1), 1000, true);
        long seam = 14_000;
        try (var admin = kafka.admin()) {
            admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(seam))).all()
                    .get(30, TimeUnit.SECONDS);
        }
        String url = "jdbc:sqlite:" + dir.resolve("crash.db");
        String job = "archive-crash";
        String[] args = {"run", "--topic", topic, "--from", "earliest", "--to", "latest", "--archive",
                archive.toString(), "--sink", url, "--create-table", "--table", "orders", "--job", job,
                "--batch-size", "500", "--progress", "none", "--bootstrap-server", kafka.bootstrapServers()};
        // slowed, so that the kill lands inside the archived part
        Process first = Launcher.start(CliRun.concat(args, "--max-records-per-second", "4000"), dir, "first");
        long atKill = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (first.isAlive() && System.nanoTime() < deadline && atKill < 2_000) {
            atKill = Launcher.progress(url, job);
            Thread.sleep(20);
        }
        assertThat(first.isAlive()).as("still running at the kill (progress %d)", atKill).isTrue();
        first.destroyForcibly(); // SIGKILL
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        long committed = Launcher.progress(url, job);
        assertThat(committed).as("killed inside the archived part").isPositive().isLessThan(seam);

        Process second = Launcher.start(args, dir, "second");
        assertThat(second.waitFor(180, TimeUnit.SECONDS)).isTrue();
        String err = Files.readString(dir.resolve("second.err"));
        assertThat(second.exitValue()).as(err).isZero();
        assertThat(err).contains("resuming job " + job + " run 1: " + (20_000 - committed) + " offsets left of 20000");
        Plan plan = Launcher.state(url, job).orElseThrow().plan();
        assertThat(plan.partition(0).orElseThrow().start()).isZero();
        assertThat(Orders.table(url, "orders")).isEqualTo(Orders.expected(produced, plan)).hasSize(1000);
        assertThat(Orders.count(url, "SELECT min(kafka_offset) FROM orders")).isEqualTo(19_000);
    }

    @Test
    @Tag("s3")
    void anAivenArchiveInS3IntoPostgresqlEqualsTheWholeTopicTheCredentialsFromTheEnvironment() throws Exception {
        String bucket = dev.kbackfill.testservices.SharedS3.standard().newBucket();
        dev.kbackfill.testservices.SharedS3.standard().putTree(bucket, "kafka/archive", archives.resolve("aiven"));
        String url = dev.kbackfill.testservices.SharedPostgres.newDatabase("archive");
        List<String> args = new java.util.ArrayList<>(List.of("run", "--bootstrap-server", kafka.bootstrapServers(),
                "--progress", "none", "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                "s3a://" + bucket + "/kafka/archive", "--sink", url, "--table", "t", "--create-table", "--verify"));
        dev.kbackfill.testservices.SharedS3.standard().s3aEndpointSettings()
                .forEach((k, v) -> args.addAll(List.of("--checkpoint-property", k + "=" + v)));
        Process run = Launcher.start(args.toArray(String[]::new), dir, "s3", Map.of(
                "AWS_ACCESS_KEY_ID", dev.kbackfill.testservices.SharedS3.ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY", dev.kbackfill.testservices.SharedS3.SECRET_KEY));
        assertThat(run.waitFor(180, TimeUnit.SECONDS)).isTrue();
        String err = Files.readString(dir.resolve("s3.err"));
        assertThat(run.exitValue()).as(err).isZero();
        assertThat(err).contains("come from s3a://" + bucket + "/kafka/archive (Aiven S3 sink, jsonl");
        assertThat(Files.readString(dir.resolve("s3.out"))).contains("verify: AGREES");
        assertThat(rows(url)).isEqualTo(rows(wholeTopicInto(dir.resolve("whole.db"))));
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"confluent", "aiven-parquet"})
    @Tag("delta")
    void anArchiveIntoDeltaEqualsTheWholeTopic(String layout) throws Exception {
        Path table = dir.resolve("delta-orders");
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--archive",
                archives.resolve(layout).toString(), "--allow-inferred-offsets", "--sink", "delta:" + table,
                "--create-table", "--header-columns", "source");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Map<String, String> rows = new TreeMap<>();
        for (Map<String, Object> r : dev.kbackfill.sink.delta.DeltaTableRows.rows(table.toString())) {
            rows.put((String) r.get("kafka_key"), ((Number) r.get("kafka_partition")).intValue() + "@"
                    + r.get("kafka_offset") + " " + r.get("status") + " " + amount(String.valueOf(r.get("amount")))
                    + " " + r.get("source"));
        }
        assertThat(rows).isEqualTo(rows(wholeTopicWithHeadersInto(dir.resolve("whole-h.db")), true));
    }

    private static long total() {
        return records.values().stream().mapToLong(List::size).sum();
    }

    private static String wholeTopicWithHeadersInto(Path db) throws Exception {
        String url = "jdbc:sqlite:" + db;
        if (!Files.exists(db)) {
            CliRun run = CliRun.run(kafka, "--topic", WHOLE, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", "t", "--create-table", "--header-columns", "source");
            assertThat(run.exitCode()).as(run.err()).isZero();
        }
        return url;
    }

    private static String wholeTopicInto(Path db) throws Exception {
        String url = "jdbc:sqlite:" + db;
        if (!Files.exists(db)) {
            CliRun run = CliRun.run(kafka, "--topic", WHOLE, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", "t", "--create-table");
            assertThat(run.exitCode()).as(run.err()).isZero();
        }
        return url;
    }

    /** A decimal as the same text whatever scale its table keeps. */
    private static String amount(String decimal) {
        return new java.math.BigDecimal(decimal).stripTrailingZeros().toPlainString();
    }

    /** Each key's row: partition, offset, status and amount. */
    static Map<String, String> rows(String url) throws Exception {
        return rows(url, false);
    }

    /** Each key's row: partition, offset, status, amount and, with {@code source}, the header column. */
    static Map<String, String> rows(String url, boolean source) throws Exception {
        Map<String, String> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kafka_key, kafka_partition, kafka_offset, status, amount"
                     + (source ? ", source" : "") + " FROM t")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2) + "@" + rs.getLong(3) + " " + rs.getString(4) + " "
                        + amount(rs.getString(5)) + (source ? " " + rs.getString(6) : ""));
            }
        }
        return rows;
    }
}
