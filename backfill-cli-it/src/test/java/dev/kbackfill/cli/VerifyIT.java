package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.verify.Verdict;
import dev.kbackfill.core.verify.Verification;
import dev.kbackfill.core.verify.VerifyReport;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RangeResolver;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kbackfill verify} after a backfill into each database: the target agrees (exit 0); after rows are changed
 * by SQL, each change lands in its class (different, missing, stale, extra, newer), named with its key and source
 * coordinates (exit 4); a range partly past retention reports the lost records, not missing keys; only the range's
 * keys move, however large the table; bad input is exit 2 in one line.
 */
@Tag("kafka")
@Tag("verify")
class VerifyIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, int partition, String key, String value, long second) {
        return new ProducerRecord<>(topic, partition, T0.plusSeconds(second).toEpochMilli(),
                key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /** 20 keys over 2 partitions, three updates each; k00018 and k00019 end in a delete. */
    private static List<Orders.Produced> fill(String topic) throws Exception {
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int u = 0; u < 3; u++) {
            for (int k = 0; k < 20; k++) {
                String key = String.format("k%05d", k);
                records.add(record(topic, k % 2, key, Orders.json(key, u), u * 100L + k));
            }
        }
        records.add(record(topic, 0, "k00018", null, 400));
        records.add(record(topic, 1, "k00019", null, 401));
        return Orders.send(kafka, records, Map.of());
    }

    private static CliRun verify(String... args) {
        List<String> all = new ArrayList<>(List.of("verify", "--bootstrap-server", kafka.bootstrapServers()));
        all.addAll(List.of(args));
        return CliRun.of(all.toArray(String[]::new));
    }

    private static void sql(String url, String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        }
    }

    private static JsonNode json(CliRun run) throws Exception {
        return JSON.readTree(run.out());
    }

    /**
     * A cron job ({@code --from continue:FIRST}) of three runs, records arriving between them: {@code verify --job}
     * judges what all three covered, not only the last run's range, and says so first; a row of the first run changed
     * by hand is found.
     */
    @Test
    void aContinueJobOfSeveralRunsIsVerifiedOverEveryRunsRange() throws Exception {
        String topic = "verify-cron";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        String url = "jdbc:sqlite:" + dir.resolve("cron.db");
        String[] run = {"--topic", topic, "--from", "continue:earliest", "--to", "latest", "--sink", url, "--job",
                "nightly", "--create-table"};
        for (int night = 0; night < 3; night++) {
            List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
            for (int k = 0; k < 10; k++) {
                String key = String.format("n%d-k%02d", night, k);
                records.add(record(topic, k % 2, key, Orders.json(key, night), night * 100L + k));
            }
            Orders.send(kafka, records, Map.of());
            CliRun r = CliRun.run(kafka, run);
            assertThat(r.exitCode()).as(r.err()).isZero();
        }
        sql(url, "UPDATE verify_cron SET status = 'by hand' WHERE kafka_key = 'n0-k03'");
        CliRun v = verify("--job", "nightly", "--sink", url);
        assertThat(v.exitCode()).as(v.out() + v.err()).isEqualTo(4);
        assertThat(v.err()).startsWith("job nightly has run 3 times from continue:earliest: verifying what runs 1 to 3 "
                + "covered");
        assertThat(v.out()).containsPattern("matching +29").containsPattern("different +1").contains("n0-k03");
    }

    @Test
    void sqliteAgreesAfterABackfillAndNamesEveryKeyChangedBySql() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("v.db");
        classesOnOneDatabase("verify-sqlite", url);
    }

    @Test
    @Tag("postgresql")
    void postgresAgreesAfterABackfillAndNamesEveryKeyChangedBySql() throws Exception {
        classesOnOneDatabase("verify-pg", SharedPostgres.newDatabase("verify_pg"));
    }

    @Test
    @Tag("mariadb")
    void mariadbAgreesAfterABackfillAndNamesEveryKeyChangedBySql() throws Exception {
        classesOnOneDatabase("verify-maria", SharedMariaDb.newDatabase("verify_maria"));
    }

    private void classesOnOneDatabase(String topic, String url) throws Exception {
        List<Orders.Produced> produced = fill(topic);
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders"};
        CliRun run = CliRun.run(kafka, CliRun.concat(range, "--create-table", "--job", "j-" + topic));
        assertThat(run.exitCode()).as(run.err()).isZero();

        CliRun agrees = verify(CliRun.concat(range, "--format", "json"));
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        JsonNode ok = json(agrees);
        assertThat(ok.path("agrees").asBoolean()).isTrue();
        assertThat(ok.path("counts").path("matching").asLong()).isEqualTo(20);
        assertThat(ok.path("read").asLong()).isEqualTo(62);
        // the job's own stored plan, by name
        CliRun byJob = verify("--job", "j-" + topic, "--sink", url, "--table", "orders");
        assertThat(byJob.exitCode()).as(byJob.out() + byJob.err()).isZero();
        assertThat(byJob.out()).startsWith("AGREES: 20 keys");
        // a job is verified as its runs decoded: another mode is bad input, named
        CliRun otherMode = verify("--job", "j-" + topic, "--sink", url, "--table", "orders", "--on-tombstone",
                "soft-delete");
        assertThat(otherMode.exitCode()).as(otherMode.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(otherMode.err()).contains("on-tombstone soft-delete here, the job's runs had delete");
        // the range form finds the job under every spelling the database resolves to its table
        String database = url.replaceAll("^.*/([^/?]+)(\\?.*)?$", "$1");
        List<String> spellings = url.startsWith("jdbc:sqlite:") ? List.of("orders", "main.orders", "ORDERS")
                : url.startsWith("jdbc:postgresql:") ? List.of("orders", "public.orders", "ORDERS")
                : List.of("orders", database + ".orders");
        for (String spelling : spellings) {
            CliRun spelt = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table",
                    spelling, "--on-tombstone", "soft-delete");
            assertThat(spelt.exitCode()).as(spelling + ": " + spelt.out() + spelt.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(spelt.err()).as(spelling).contains("j-" + topic).contains("on-tombstone");
        }

        Orders.Produced last3 = lastOf(produced, "k00003");
        Orders.Produced first5 = produced.stream().filter(p -> p.key().equals("k00005")).findFirst().orElseThrow();
        sql(url,
                "UPDATE orders SET status = 'by-hand' WHERE kafka_key = 'k00003'",
                "DELETE FROM orders WHERE kafka_key = 'k00004'",
                "UPDATE orders SET kafka_offset = " + first5.offset() + ", status = 's0' WHERE kafka_key = 'k00005'",
                "UPDATE orders SET kafka_offset = kafka_offset + 1000 WHERE kafka_key = 'k00006'",
                "INSERT INTO orders (kafka_key, status, n, amount, kafka_partition, kafka_offset, kafka_timestamp, "
                        + "kafka_topic, kafka_log_time) SELECT 'k00018', 'zombie', n, amount, kafka_partition, 0, "
                        + "kafka_timestamp, kafka_topic, kafka_log_time FROM orders WHERE kafka_key = 'k00000'");
        CliRun differs = verify(CliRun.concat(range, "--format", "json"));
        assertThat(differs.exitCode()).as(differs.out() + differs.err()).isEqualTo(ExitCodes.DISAGREES);
        JsonNode bad = json(differs);
        assertThat(bad.path("agrees").asBoolean()).isFalse();
        JsonNode counts = bad.path("counts");
        // k00006's version raised past the log's end by hand: no record bears it out, so not newer but different
        assertThat(counts.path("different").asLong()).isEqualTo(2);
        assertThat(counts.path("missing").asLong()).isEqualTo(1);
        assertThat(counts.path("stale").asLong()).isEqualTo(1);
        assertThat(counts.path("newer").asLong()).isZero();
        assertThat(counts.path("extra").asLong()).isEqualTo(1);
        assertThat(counts.path("matching").asLong()).isEqualTo(15);
        JsonNode different = sample(bad, "different");
        assertThat(different.path("key").path("kafka_key").asText()).isEqualTo("k00003");
        assertThat(different.path("partition").asInt()).isEqualTo(last3.partition());
        assertThat(different.path("offset").asLong()).isEqualTo(last3.offset());
        assertThat(different.path("differing").get(0).asText()).isEqualTo("status");
        assertThat(different.path("target").path("status").asText()).isEqualTo("by-hand");
        assertThat(different.path("expected").path("status").asText()).isEqualTo("s2");
        assertThat(sample(bad, "missing").path("key").path("kafka_key").asText()).isEqualTo("k00004");
        assertThat(sample(bad, "stale").path("held").path("offset").asLong()).isEqualTo(first5.offset());
        assertThat(sample(bad, "extra").path("tombstone").asBoolean()).isTrue();

        CliRun table = verify(range);
        assertThat(table.exitCode()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(table.out()).startsWith("DISAGREES: 20 keys")
                .contains("different {kafka_key=k00003}: range ends in a value at partition " + last3.partition()
                        + " offset " + last3.offset())
                .contains("differs in status: expected {status=s2}, target {status=by-hand}")
                .contains("missing {kafka_key=k00004}").contains("target has no row");
    }

    private static Orders.Produced lastOf(List<Orders.Produced> produced, String key) {
        Orders.Produced last = null;
        for (Orders.Produced p : produced) {
            if (p.key().equals(key)) {
                last = p;
            }
        }
        return last;
    }

    private static JsonNode sample(JsonNode report, String verdict) {
        for (JsonNode s : report.path("samples")) {
            if (s.path("class").asText().equals(verdict)) {
                return s;
            }
        }
        throw new AssertionError("no " + verdict + " sample in " + report);
    }

    @Test
    @Tag("delta")
    void deltaAgreesAfterABackfillTellsAnotherJobsNewerRowsApartAndNamesRowsRewrittenOtherwise() throws Exception {
        String topic = "verify-delta";
        fill(topic);
        String table = dir.resolve("lake").toString();
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "delta:" + table};
        CliRun run = CliRun.run(kafka, CliRun.concat(range, "--create-table"));
        assertThat(run.exitCode()).as(run.err()).isZero();
        CliRun agrees = verify(CliRun.concat(range, "--format", "json"));
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        assertThat(json(agrees).path("counts").path("matching").asLong()).isEqualTo(20);

        // a second job fills the same table from a topic of corrections, later in time: newer, not a disagreement
        String corrections = "verify-delta-corrections";
        kafka.createTopic(corrections, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(corrections, 0, "k00001", "{\"status\":\"fixed\"}", 10_000),
                record(corrections, 0, "k00002", "{\"status\":\"fixed\"}", 10_001)), Map.of());
        CliRun fix = CliRun.run(kafka, "--topic", corrections, "--from", "earliest", "--to", "latest", "--sink",
                "delta:" + table);
        assertThat(fix.exitCode()).as(fix.err()).isZero();
        // a third writes older records over two keys with --on-conflict overwrite: those rows are stale
        String old = "verify-delta-old";
        kafka.createTopic(old, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(old, 0, "k00007", "{\"status\":\"ancient\"}", -10_000),
                record(old, 0, "k00008", "{\"status\":\"ancient\"}", -10_001),
                record(old, 0, "k00019", "{\"status\":\"ancient\"}", -10_002)), Map.of());
        CliRun overwrite = CliRun.run(kafka, "--topic", old, "--from", "earliest", "--to", "latest", "--sink",
                "delta:" + table, "--on-conflict", "overwrite");
        assertThat(overwrite.exitCode()).as(overwrite.err()).isZero();

        CliRun after = verify(CliRun.concat(range, "--format", "json"));
        assertThat(after.exitCode()).as(after.out() + after.err()).isEqualTo(ExitCodes.DISAGREES);
        JsonNode r = json(after);
        assertThat(r.path("counts").path("newer").asLong()).isEqualTo(2);
        assertThat(r.path("counts").path("stale").asLong()).isEqualTo(2);
        assertThat(r.path("counts").path("extra").asLong()).isEqualTo(1); // k00019 ends in a delete: back as a row
        assertThat(r.path("counts").path("matching").asLong()).isEqualTo(15);
        JsonNode stale = sample(r, "stale");
        assertThat(stale.path("held").path("topic").asText()).isEqualTo(old);
        assertThat(stale.path("target").path("status").asText()).isEqualTo("ancient");
    }

    @Test
    @Tag("delta")
    void aDeltaTableIsReadOnceWhenTheRangesKeysGoToDiskAndJudgedAsWhenTheyFitInMemory() throws Exception {
        String topic = "verify-delta-disk";
        fill(topic);
        String table = dir.resolve("disk").toString();
        assertThat(CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "delta:" + table,
                "--create-table", "--batch-size", "7").exitCode()).isZero(); // several files
        String old = "verify-delta-disk-old";
        kafka.createTopic(old, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(old, 0, "k00007", "{\"status\":\"ancient\"}", -10_000),
                record(old, 0, "k00019", "{\"status\":\"ancient\"}", -10_001)), Map.of());
        assertThat(CliRun.run(kafka, "--topic", old, "--from", "earliest", "--to", "latest", "--sink", "delta:" + table,
                "--on-conflict", "overwrite").exitCode()).isZero();
        Plan plan;
        try (KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig())) {
            plan = new RangeResolver(source).resolve(BackfillRequest.builder(topic).from("earliest").to("latest").build());
        }
        SinkSettings settings = new SinkSettings("delta:" + table, "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false, SinkSettings.MetadataColumns.DEFAULT);
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        VerifyReport inMemory;
        VerifyReport onDisk;
        try (Sink sink = SinkFactory.forSettings(settings)) {
            sink.openForVerify();
            inMemory = new Verification(kafka.clientConfig(), decoder, TombstoneMode.DELETE, ConflictMode.NEWER_WINS,
                    false, Verification.Options.DEFAULTS).verify(plan, sink);
            onDisk = new Verification(kafka.clientConfig(), decoder, TombstoneMode.DELETE, ConflictMode.NEWER_WINS,
                    false, new Verification.Options(10, 3, dir)).verify(plan, sink);
        }
        assertThat(inMemory.spilled()).isFalse();
        assertThat(onDisk.spilled()).isTrue();
        assertThat(onDisk.counts()).isEqualTo(inMemory.counts());
        assertThat(onDisk.count(Verdict.STALE)).isEqualTo(1);
        assertThat(onDisk.count(Verdict.EXTRA)).isEqualTo(1);
        assertThat(onDisk.count(Verdict.MATCHING)).isEqualTo(18);
        // the table streamed once, not probed per bucket (42 of them): its 19 rows pass the Bloom filter of the range's
        // keys into the buckets on disk, and each is read back from there once
        assertThat(inMemory.rowsRead()).isEqualTo(19);
        assertThat(onDisk.rowsRead()).isEqualTo(2 * 19);
        assertThat(onDisk.samples().get(Verdict.STALE).get(0).target()).containsEntry("status", "ancient");
    }

    @Test
    void aTopicSinkAgreesAfterABackfillAndJudgesRecordsProducedIntoItByOthers() throws Exception {
        String topic = "verify-topic";
        List<Orders.Produced> produced = fill(topic);
        String target = "verify-topic-target";
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "kafka:" + target};
        CliRun run = CliRun.run(kafka, CliRun.concat(range, "--create-topic"));
        assertThat(run.exitCode()).as(run.err()).isZero();
        CliRun agrees = verify(CliRun.concat(range, "--format", "json"));
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        JsonNode ok = json(agrees);
        assertThat(ok.path("counts").path("matching").asLong()).isEqualTo(20);
        assertThat(ok.path("targetRowsRead").asLong()).isEqualTo(20);

        // other producers write into the target: a later record, an earlier one, a later and an earlier delete
        List<ProducerRecord<byte[], byte[]>> others = new ArrayList<>();
        others.add(new ProducerRecord<>(target, (Integer) null, T0.plusSeconds(9_000).toEpochMilli(), bytes("k00001"), bytes("{}")));
        others.add(new ProducerRecord<>(target, (Integer) null, T0.minusSeconds(9_000).toEpochMilli(), bytes("k00002"), bytes("{}")));
        others.add(new ProducerRecord<>(target, (Integer) null, T0.plusSeconds(9_000).toEpochMilli(), bytes("k00003"), (byte[]) null));
        others.add(new ProducerRecord<>(target, (Integer) null, T0.minusSeconds(9_000).toEpochMilli(), bytes("k00004"), (byte[]) null));
        others.add(new ProducerRecord<>(target, (Integer) null, T0.minusSeconds(9_000).toEpochMilli(), bytes("k00018"),
                bytes("{}")));
        // a record that claims the source record of k00005's last version, with other bytes
        Orders.Produced last5 = lastOf(produced, "k00005");
        ProducerRecord<byte[], byte[]> forged = new ProducerRecord<>(target, (Integer) null, last5.timestamp(),
                bytes("k00005"), bytes("{\"status\":\"forged\"}"));
        forged.headers().add("kbackfill.source.topic", bytes(topic))
                .add("kbackfill.source.partition", bytes(String.valueOf(last5.partition())))
                .add("kbackfill.source.offset", bytes(String.valueOf(last5.offset())))
                .add("kbackfill.source.timestamp", bytes(String.valueOf(last5.timestamp())));
        others.add(forged);
        Orders.send(kafka, others, Map.of());
        CliRun after = verify(CliRun.concat(range, "--format", "json"));
        assertThat(after.exitCode()).as(after.out() + after.err()).isEqualTo(ExitCodes.DISAGREES);
        JsonNode counts = json(after).path("counts");
        assertThat(counts.path("newer").asLong()).isEqualTo(2);
        assertThat(counts.path("stale").asLong()).isEqualTo(1);
        assertThat(counts.path("missing").asLong()).isEqualTo(1);
        assertThat(counts.path("different").asLong()).isEqualTo(1);
        assertThat(counts.path("extra").asLong()).isEqualTo(1);
        assertThat(counts.path("matching").asLong()).isEqualTo(14);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aTableAnotherToolWroteIsJudgedByItsValuesAndNothingIsCreatedInIt() throws Exception {
        String topic = "verify-foreign";
        List<Orders.Produced> produced = fill(topic);
        String url = "jdbc:sqlite:" + dir.resolve("foreign.db");
        // a sink connector's table: the key and the fields, no metadata columns, no job tables
        sql(url, "CREATE TABLE orders (kafka_key TEXT PRIMARY KEY, status TEXT, n BIGINT, amount NUMERIC)");
        try (Connection c = DriverManager.getConnection(url);
             var ps = c.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?)")) {
            for (int k = 0; k < 18; k++) {
                String key = String.format("k%05d", k);
                ps.setString(1, key);
                ps.setString(2, k == 5 ? "s1" : Orders.statusOf(lastOf(produced, key).value()));
                ps.setLong(3, 2);
                ps.setBigDecimal(4, new java.math.BigDecimal("2.02"));
                if (k != 6) {
                    ps.executeUpdate();
                }
            }
        }
        CliRun v = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders",
                "--format", "json");
        assertThat(v.exitCode()).as(v.out() + v.err()).isEqualTo(ExitCodes.DISAGREES);
        JsonNode counts = json(v).path("counts");
        assertThat(counts.path("matching").asLong()).isEqualTo(16 + 2); // and the two keys that end in a delete
        assertThat(counts.path("different").asLong()).isEqualTo(1);
        assertThat(counts.path("missing").asLong()).isEqualTo(1);
        assertThat(Orders.count(url, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'kbackfill%'")).isZero();
    }

    @Test
    void aKeyWhoseLastRecordCannotBeDecodedIsCountedNotJudged() throws Exception {
        String topic = "verify-poison";
        fill(topic);
        String url = "jdbc:sqlite:" + dir.resolve("p.db");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders"};
        assertThat(CliRun.run(kafka, CliRun.concat(range, "--create-table")).exitCode()).isZero();
        Orders.send(kafka, List.of(record(topic, 0, "k00010", "{not json", 500)), Map.of());
        CliRun v = verify(CliRun.concat(range, "--format", "json"));
        assertThat(v.exitCode()).as(v.out() + v.err()).isZero();
        JsonNode r = json(v);
        assertThat(r.path("rejected").asLong()).isEqualTo(1);
        assertThat(r.path("counts").path("matching").asLong()).isEqualTo(19);
    }

    @Test
    void aRangePartlyPastRetentionReportsTheLostRecordsNotMissingKeys() throws Exception {
        String topic = "verify-retention";
        fill(topic);
        String url = "jdbc:sqlite:" + dir.resolve("r.db");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders"};
        assertThat(CliRun.run(kafka, CliRun.concat(range, "--create-table")).exitCode()).isZero();
        Path plan = dir.resolve("plan.json");
        CliRun planned = CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic", topic, "--from",
                "earliest", "--to", "latest", "--out", plan.toString());
        assertThat(planned.exitCode()).as(planned.err()).isZero();
        // the first 10 records of partition 0 go: the plan still starts at 0
        try (var admin = kafka.admin()) {
            admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(10))).all().get();
        }
        CliRun v = verify("--plan", plan.toString(), "--sink", url, "--table", "orders", "--format", "json");
        assertThat(v.exitCode()).as(v.out() + v.err()).isZero();
        JsonNode r = json(v);
        assertThat(r.path("lost").asLong()).isEqualTo(10);
        assertThat(r.path("counts").path("missing").asLong()).isZero();
        assertThat(r.path("counts").path("matching").asLong()).isEqualTo(20);
    }

    /**
     * A key whose last record the table refuses (99999999999 for an integer column): the run keeps it aside and
     * writes the key's last record the table takes, and verify expects exactly that, as the run judged it.
     */
    @Test
    @Tag("postgresql")
    void aRefusedLastRecordIsJudgedAsTheRunJudgedIt() throws Exception {
        String topic = "verify-refused";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String[][] log = {{"a", "1"}, {"b", "2"}, {"a", "3"}, {"c", "4"}, {"a", "99999999999"}, {"c", "99999999999"},
                {"d", "99999999999"}};
        for (int i = 0; i < log.length; i++) {
            records.add(record(topic, 0, log[i][0], "{\"n\":" + log[i][1] + "}", i));
        }
        Orders.send(kafka, records, Map.of());
        String url = SharedPostgres.newDatabase("verify_refused");
        sql(url, "CREATE TABLE t (kafka_key text PRIMARY KEY, n integer, kafka_partition int, kafka_offset bigint, "
                + "kafka_timestamp timestamptz, kafka_log_time timestamptz, kafka_topic text)");
        CliRun run = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--on-error", "skip", "--verify");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("verify: AGREES: 3 keys");
        assertThat(Orders.count(url, "SELECT count(*) FROM t WHERE kafka_key = 'a' AND n = 3")).isEqualTo(1);
        assertThat(Orders.count(url, "SELECT count(*) FROM t WHERE kafka_key = 'd'")).isZero();
        // a row changed by hand is still found
        sql(url, "UPDATE t SET n = 5 WHERE kafka_key = 'a'");
        CliRun changed = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "t");
        assertThat(changed.exitCode()).as(changed.out() + changed.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(changed.out()).contains("different {kafka_key=a}");
    }

    @Test
    void aRunWithVerifyChecksItsOwnResultAndSaysSoInTheSummaryAndTheReport() throws Exception {
        String topic = "verify-run";
        fill(topic);
        String url = "jdbc:sqlite:" + dir.resolve("run.db");
        Path report = dir.resolve("report.json");
        String[] args = {"--topic", topic, "--from", "earliest", "--to", "2024-01-02", "--sink", url, "--table",
                "orders", "--create-table", "--job", "verified", "--verify", "--report", report.toString()};
        CliRun run = CliRun.run(kafka, args);
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("job verified run 1: wrote").contains("verify: AGREES: 20 keys");
        JsonNode r = JSON.readTree(report.toFile());
        assertThat(r.path("outcome").asText()).isEqualTo("completed");
        assertThat(r.path("verify").path("agrees").asBoolean()).isTrue();
        assertThat(r.path("verify").path("counts").path("matching").asLong()).isEqualTo(20);

        sql(url, "UPDATE orders SET status = 'by-hand' WHERE kafka_key = 'k00011'");
        CliRun again = CliRun.run(kafka, args);
        assertThat(again.exitCode()).as(again.out() + again.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(again.out()).contains("nothing to do").contains("verify: DISAGREES")
                .contains("different {kafka_key=k00011}");
        r = JSON.readTree(report.toFile());
        assertThat(r.path("outcome").asText()).isEqualTo("verify-disagrees");
        assertThat(r.path("exitCode").asInt()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(r.path("verify").path("counts").path("different").asLong()).isEqualTo(1);
    }

    @Test
    void onlyTheRangesKeysAreReadFromATableFarLargerThanTheRange() throws Exception {
        String topic = "verify-large";
        fill(topic);
        String url = "jdbc:sqlite:" + dir.resolve("l.db");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders"};
        assertThat(CliRun.run(kafka, CliRun.concat(range, "--create-table")).exitCode()).isZero();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            for (int i = 0; i < 20_000; i++) {
                s.addBatch("INSERT INTO orders (kafka_key, status, kafka_partition, kafka_offset, kafka_timestamp) "
                        + "VALUES ('other" + i + "', 'x', 0, " + i + ", '2023-01-01 00:00:00.000')");
            }
            s.executeBatch();
            c.commit();
        }
        CliRun v = verify(CliRun.concat(range, "--format", "json"));
        assertThat(v.exitCode()).as(v.out() + v.err()).isZero();
        JsonNode r = json(v);
        assertThat(r.path("counts").path("matching").asLong()).isEqualTo(20);
        assertThat(r.path("targetRowsRead").asLong()).isLessThanOrEqualTo(20);
    }

    @Test
    void badInputIsExitTwoInOneLine() throws Exception {
        String topic = "verify-bad";
        fill(topic);
        String url = "jdbc:sqlite:" + dir.resolve("b.db");
        CliRun noTable = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url);
        assertThat(noTable.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noTable.err().strip().lines()).hasSize(1);
        assertThat(noTable.err()).contains("does not exist");
        CliRun both = verify("--job", "x", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url);
        assertThat(both.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(both.err()).contains("--job verifies the plan its latest run stored");
        CliRun insertOnly = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--on-conflict", "insert-only");
        assertThat(insertOnly.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(insertOnly.err().strip().lines()).hasSize(1);
        assertThat(insertOnly.err()).contains("insert-only");
        CliRun samples = verify("--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--samples", "-1");
        assertThat(samples.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(samples.err()).contains("invalid --samples '-1'");
        CliRun bound = verify("--topic", topic, "--from", "yesterdayish", "--to", "latest", "--sink", url);
        assertThat(bound.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bound.err()).doesNotContain("Exception").doesNotContain("\tat ");
    }
}
