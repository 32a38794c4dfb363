package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
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
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kbackfill repair} fixes exactly what verify finds, on every sink verify reads: a target that holds only part
 * of a range (keys missing, rows stale, rows the range deletes still live) and rows changed by hand is brought to the
 * range's final state in one commit, verify agrees afterwards, a dry run writes nothing, and a second repair finds
 * nothing to do.
 */
@Tag("kafka")
class RepairIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, int partition, String key, String value,
                                                         long second) {
        return new ProducerRecord<>(topic, partition, T0.plusSeconds(second).toEpochMilli(),
                key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /** 20 keys over 2 partitions (even keys in 0), three updates each; k00018 and k00019 end in a delete. */
    private static void fill(String topic) throws Exception {
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
        Orders.send(kafka, records, Map.of());
    }

    private static CliRun cli(String command, String[] range, String... more) {
        List<String> all = new ArrayList<>(List.of(command, "--bootstrap-server", kafka.bootstrapServers(),
                "--progress", "none"));
        all.addAll(List.of(range));
        all.addAll(List.of(more));
        return CliRun.of(all.toArray(String[]::new));
    }

    /**
     * The target is given part of the range (partition 0's first two updates): verify finds partition 1's keys
     * missing, partition 0's stale and k00018 extra; the dry run says so and writes nothing; the repair writes them in
     * one commit and judges them again; verify agrees; a second repair has nothing to do.
     */
    private void repairsWhatAPartialBackfillLeft(String topic, String[] sink, String[] create) throws Exception {
        fill(topic);
        String[] range = CliRun.concat(new String[] {"--topic", topic, "--from", "earliest", "--to", "latest"}, sink);
        String[] part = CliRun.concat(new String[] {"--topic", topic, "--from", "earliest", "--to",
                "2024-01-01T00:02:30Z", "--partitions", "0"}, sink);
        CliRun first = CliRun.run(kafka, CliRun.concat(part, create));
        assertThat(first.exitCode()).as(first.err()).isZero();

        CliRun found = cli("verify", range, "--format", "json");
        assertThat(found.exitCode()).as(found.out() + found.err()).isEqualTo(ExitCodes.DISAGREES);
        JsonNode counts = JSON.readTree(found.out()).path("counts");
        assertThat(counts.path("missing").asLong()).as(found.out()).isEqualTo(9);
        assertThat(counts.path("stale").asLong()).isEqualTo(9);
        assertThat(counts.path("extra").asLong()).isEqualTo(1);
        JsonNode sample = JSON.readTree(found.out()).path("samples").get(0);
        assertThat(sample.path("key").isObject()).as("a key is a JSON value, not Java's toString").isTrue();
        JsonNode keyValue = sample.path("key").elements().next();
        // text as a string; a topic keeps keys as bytes, given byte for byte
        String key = keyValue.has("base64") ? new String(java.util.Base64.getDecoder().decode(
                keyValue.path("base64").asText()), StandardCharsets.UTF_8) : keyValue.asText();
        assertThat(key).as(sample.toString()).matches("k000[01][0-9]");

        CliRun dry = cli("repair", range, "--dry-run");
        assertThat(dry.exitCode()).as(dry.out() + dry.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(dry.out()).contains("would repair 19 key(s): insert 9, replace 9, delete 1 (dry run: nothing written)")
                .containsPattern("  insert \\{\\w+=k00001\\} \\(missing\\)")
                .containsPattern("  delete \\{\\w+=k00018\\} \\(extra\\)")
                .containsPattern("  replace \\{\\w+=k00000\\} \\(stale\\)");
        assertThat(cli("verify", range).exitCode()).as("a dry run writes nothing").isEqualTo(ExitCodes.DISAGREES);

        CliRun repair = cli("repair", range, "--format", "json");
        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        JsonNode done = JSON.readTree(repair.out());
        assertThat(done.path("agrees").asBoolean()).isTrue();
        assertThat(done.path("repair").path("after").path("matching").asLong()).isEqualTo(19);
        assertThat(done.path("repair").path("run").asInt()).isEqualTo(1);
        assertThat(done.path("fixes")).hasSize(19);
        assertThat(done.path("fixes").get(0).path("key").isObject()).isTrue();

        CliRun agrees = cli("verify", range, "--format", "json");
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        assertThat(JSON.readTree(agrees.out()).path("counts").path("matching").asLong()).isEqualTo(20);
        CliRun again = cli("repair", range);
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(again.out()).contains("AGREES").contains("nothing to repair");
    }

    @Test
    void sqliteIsRepairedToTheRangesFinalStateAndRowsChangedByHandToo() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("repair.db");
        String[] sink = {"--sink", url, "--table", "t"};
        repairsWhatAPartialBackfillLeft("repair-sqlite", sink, new String[] {"--create-table"});
        changedByHandAndRepaired("repair-sqlite", url, sink);
    }

    @Test
    @Tag("postgresql")
    void postgresIsRepairedToTheRangesFinalStateAndRowsChangedByHandToo() throws Exception {
        String url = SharedPostgres.newDatabase("repair_pg");
        String[] sink = {"--sink", url, "--table", "t"};
        repairsWhatAPartialBackfillLeft("repair-postgres", sink, new String[] {"--create-table"});
        changedByHandAndRepaired("repair-postgres", url, sink);
    }

    @Test
    @Tag("mariadb")
    void mariadbIsRepairedToTheRangesFinalStateAndRowsChangedByHandToo() throws Exception {
        String url = SharedMariaDb.newDatabase("repair_maria");
        String[] sink = {"--sink", url, "--table", "t"};
        repairsWhatAPartialBackfillLeft("repair-mariadb", sink, new String[] {"--create-table"});
        changedByHandAndRepaired("repair-mariadb", url, sink);
    }

    @Test
    @Tag("delta")
    void aDeltaTableIsRepairedToTheRangesFinalState() throws Exception {
        repairsWhatAPartialBackfillLeft("repair-delta", new String[] {"--sink", "delta:" + dir.resolve("lake")},
                new String[] {"--create-table"});
    }

    @Test
    @Tag("iceberg")
    void anIcebergTableIsRepairedToTheRangesFinalState() throws Exception {
        repairsWhatAPartialBackfillLeft("repair-iceberg", new String[] {"--sink", "iceberg:" + dir.resolve("ice")},
                new String[] {"--create-table"});
    }

    @Test
    void aCompactedTopicIsRepairedToTheRangesFinalState() throws Exception {
        repairsWhatAPartialBackfillLeft("repair-topic", new String[] {"--sink", "kafka:repair-topic-target"},
                new String[] {"--create-topic"});
    }

    /**
     * Random rows changed by hand (a value, a version moved older, a row deleted, a deleted key brought back): repair
     * names each, fixes exactly those and the rest of the table is as it was, byte for byte.
     */
    private void changedByHandAndRepaired(String topic, String url, String[] sink) throws Exception {
        String[] range = CliRun.concat(new String[] {"--topic", topic, "--from", "earliest", "--to", "latest"}, sink);
        Map<String, List<Object>> before = rows(url);
        Random random = new Random(topic.hashCode());
        List<String> keys = new ArrayList<>(before.keySet());
        java.util.Collections.shuffle(keys, random);
        String changed = keys.get(0);
        String older = keys.get(1);
        String deleted = keys.get(2);
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("UPDATE t SET status = 'by hand' WHERE kafka_key = '" + changed + "'");
            s.execute("UPDATE t SET kafka_offset = kafka_offset - 1 WHERE kafka_key = '" + older + "'");
            s.execute("DELETE FROM t WHERE kafka_key = '" + deleted + "'");
        }
        CliRun dry = cli("repair", range, "--dry-run", "--format", "json");
        assertThat(dry.exitCode()).as(dry.out() + dry.err()).isEqualTo(ExitCodes.DISAGREES);
        Map<String, String> actions = new TreeMap<>();
        JSON.readTree(dry.out()).path("fixes").forEach(f -> actions.put(f.path("key").path("kafka_key").asText(),
                f.path("action").asText() + " " + f.path("class").asText()));
        assertThat(actions).isEqualTo(new TreeMap<>(Map.of(changed, "replace different", older, "replace stale",
                deleted, "insert missing")));
        CliRun repair = cli("repair", range);
        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out()).contains("repaired 3 key(s) as job repair-").contains("AGREES: the 3 repaired key(s) "
                + "judged again: matching 3");
        assertThat(rows(url)).as("every row as the range says, the others untouched").isEqualTo(before);
        assertThat(cli("verify", range).exitCode()).isZero();
    }

    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();

    /**
     * A repair killed with SIGKILL once it has begun writing leaves the table as it was or wholly repaired, never
     * half: the keys found wrong are all still wrong, or none is; the same command again ends in AGREES.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"sqlite", "postgresql"})
    void aRepairKilledWhileItWritesLeavesAllOrNothingAndTheSameCommandFinishesIt(String database) throws Exception {
        String topic = "repair-kill-" + database;
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        Orders.produce(kafka, topic, 20_000, 2);
        String url = database.equals("sqlite") ? "jdbc:sqlite:" + dir.resolve("kill.db")
                : SharedPostgres.newDatabase("repair_kill");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "t"};
        CliRun part = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--partitions", "0",
                "--sink", url, "--table", "t", "--create-table");
        assertThat(part.exitCode()).as(part.err()).isZero();
        CliRun found = cli("verify", range, "--format", "json");
        long wrong = JSON.readTree(found.out()).path("counts").path("missing").asLong();
        assertThat(wrong).as("partitions 1 and 2 missing").isGreaterThan(10_000);

        List<String> command = new ArrayList<>(List.of(LAUNCHER.toString(), "repair", "--bootstrap-server",
                kafka.bootstrapServers(), "--progress", "plain"));
        command.addAll(List.of(range));
        Path err = dir.resolve("repair-" + database + ".err");
        Process repair = new ProcessBuilder(command).redirectOutput(dir.resolve("repair-" + database + ".out").toFile())
                .redirectError(err.toFile()).start();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(120);
        while (repair.isAlive() && System.nanoTime() < deadline
                && !(java.nio.file.Files.exists(err) && java.nio.file.Files.readString(err).contains("repairing "))) {
            Thread.sleep(5);
        }
        boolean killedWhileWriting = repair.isAlive();
        assertThat(killedWhileWriting).as("the repair is still writing when it is killed").isTrue();
        repair.destroyForcibly(); // SIGKILL once it begins writing: no rollback, no goodbye
        assertThat(repair.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        JsonNode between = JSON.readTree(cli("verify", range, "--format", "json").out()).path("counts");
        long missing = between.path("missing").asLong();
        assertThat(missing).as("all or nothing (killed while writing: %s)", killedWhileWriting).isIn(0L, wrong);
        assertThat(between.path("different").asLong() + between.path("stale").asLong()).isZero();

        CliRun again = cli("repair", range);
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(again.out()).contains("AGREES");
        assertThat(cli("verify", range).exitCode()).isZero();
    }

    /** Every row of t by key, every column's value as text. */
    private static Map<String, List<Object>> rows(String url) throws Exception {
        Map<String, List<Object>> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM t")) {
            while (rs.next()) {
                List<Object> values = new ArrayList<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    values.add(rs.getString(i));
                }
                rows.put(rs.getString("kafka_key"), values);
            }
        }
        return rows;
    }
}
