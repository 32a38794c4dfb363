package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --version-field}, tried as a user replaying a CDC topic would: a re-partitioned topic whose log order
 * disagrees with the database's (its LSNs), Debezium-style deletes (a delete event, then a tombstone), split into
 * runs in adversarial orders: every key ends in its highest LSN; a record without the field is a poison record;
 * what cannot work is refused before anything is written.
 */
@Tag("kafka")
class VersionFieldIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> event(String topic, int partition, String key, String status, Long lsn,
                                                        long millis) {
        String value = status == null ? null : "{\"status\":\"" + status + "\""
                + (lsn == null ? "" : ",\"source\":{\"lsn\":" + lsn + ",\"db\":\"app\"}") + "}";
        return new ProducerRecord<>(topic, partition, T0.toEpochMilli() + millis, key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aRepartitionedCdcTopicEndsInEachKeysHighestLsnWhateverTheRunsAndTheirOrder() throws Exception {
        String topic = "vf-cdc";
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        Random random = new Random(13);
        // the database's history: LSN order; keys deleted now and then, and created again
        List<Object[]> history = new ArrayList<>(); // key, status (null: delete), lsn
        for (long lsn = 1; lsn <= 150; lsn++) {
            String key = "k" + random.nextInt(12);
            history.add(new Object[] {key, random.nextInt(6) == 0 ? null : "s" + lsn, lsn});
        }
        Map<String, String> expected = new TreeMap<>();
        for (Object[] h : history) {
            if (h[1] == null) {
                expected.remove((String) h[0]);
            } else {
                expected.put((String) h[0], (String) h[1]);
            }
        }
        // the topic: each event in a partition of its own choosing (a re-partitioned topic), and events reordered
        // in windows, so that a partition's log order often disagrees with the LSNs
        List<Object[]> shuffled = new ArrayList<>(history);
        for (int from = 0; from < shuffled.size(); from += 10) {
            Collections.shuffle(shuffled.subList(from, Math.min(shuffled.size(), from + 10)), random);
        }
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        long millis = 0;
        for (Object[] h : shuffled) {
            int partition = random.nextInt(3);
            String key = (String) h[0];
            long lsn = (Long) h[2];
            if (h[1] == null) {
                // Debezium: the delete event, then its tombstone, in the same partition
                records.add(event(topic, partition, key, "deleted", lsn, millis++));
                records.add(event(topic, partition, key, null, null, millis++));
            } else {
                records.add(event(topic, partition, key, (String) h[1], lsn, millis++));
            }
        }
        Orders.send(kafka, records, Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("cdc.db");
        List<List<String[]>> scenarios = List.of(
                List.<String[]>of(new String[] {"--from", "earliest", "--to", "latest"}),
                // the tails first: a tombstone whose delete event lies before its run's start takes that event's LSN
                List.of(new String[] {"--from", "offset:20", "--to", "latest"},
                        new String[] {"--from", "earliest", "--to", "offset:20"}),
                List.of(new String[] {"--from", "earliest", "--to", "latest", "--partitions", "2"},
                        new String[] {"--from", "offset:7", "--to", "latest", "--partitions", "0,1"},
                        new String[] {"--from", "earliest", "--to", "offset:7", "--partitions", "0,1"}));
        for (int s = 0; s < scenarios.size(); s++) {
            String table = "cdc_" + s;
            Path delta = dir.resolve("cdc-delta-" + s);
            String out = topic + "-out-" + s;
            int run = 0;
            for (String[] range : scenarios.get(s)) {
                run++;
                for (String[] sink : List.of(new String[] {"--sink", url, "--table", table},
                        new String[] {"--sink", "delta:" + delta},
                        new String[] {"--sink", "kafka:" + out, "--create-topic", "--key-format", "string",
                                "--value-format", "json"})) {
                    List<String> args = new ArrayList<>(List.of("--topic", topic, "--create-table", "--version-field",
                            "source.lsn", "--batch-size", "7", "--job", "cdc-" + s + "-" + run));
                    args.addAll(List.of(sink));
                    args.addAll(List.of(range));
                    CliRun r = CliRun.run(kafka, args.toArray(String[]::new));
                    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
                }
            }
            // a key whose last change is a delete is absent: the tombstone took its delete event's LSN and came after it
            assertThat(Orders.table(url, table)).as("scenario %d", s).isEqualTo(expected);
            Map<String, String> lake = new TreeMap<>();
            dev.kbackfill.sink.delta.DeltaTableRows.rows(delta.toString())
                    .forEach(r -> lake.put((String) r.get("kafka_key"), (String) r.get("status")));
            assertThat(lake).as("scenario %d on Delta", s).isEqualTo(expected);
            Map<String, String> copied = new TreeMap<>();
            KafkaSinkIT.latest(KafkaSinkIT.readCommitted(out)).forEach((k, v) -> copied.put(k, Orders.statusOf(v)));
            assertThat(copied).as("scenario %d in a topic", s).isEqualTo(expected);
        }
    }

    /**
     * A run that starts at a tombstone: its field is the delete event's before it, read back in the log, so the
     * delete event written by a later run of the range's head is older, and the key stays deleted.
     */
    @Test
    void aTombstoneAtARunsStartTakesTheFieldOfTheRecordBeforeItInTheLog() throws Exception {
        String topic = "vf-seed";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(event(topic, 0, "a", "a5", 5L, 0), event(topic, 0, "a", "deleted", 6L, 1),
                event(topic, 0, "a", null, null, 2), event(topic, 0, "b", "b1", 1L, 3)), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("seed.db");
        for (String[] range : List.of(new String[] {"--from", "offset:2", "--to", "latest"},
                new String[] {"--from", "earliest", "--to", "offset:2"})) {
            List<String> args = new ArrayList<>(List.of("--topic", topic, "--sink", url, "--table", "seeded",
                    "--create-table", "--version-field", "source.lsn", "--job", "seed-" + range[1]));
            args.addAll(List.of(range));
            CliRun r = CliRun.run(kafka, args.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        }
        assertThat(Orders.table(url, "seeded")).isEqualTo(Map.of("b", "b1"));
    }

    /**
     * A record the --where filter cannot judge is a poison record, but its version field is the log's all the same:
     * a tombstone after it takes that field whether the run starts before the record (and meets it) or after it (and
     * reads it back from the log), so the final state does not depend on where runs start.
     */
    @Test
    void aRecordTheFilterCannotJudgeStillGivesItsFieldToTheTombstoneAfterIt() throws Exception {
        String topic = "vf-filter-seed";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(event(topic, 0, "a", "keep", 5L, 0),
                new ProducerRecord<>(topic, 0, T0.toEpochMilli() + 1, "b".getBytes(StandardCharsets.UTF_8),
                        "{\"source\":{\"lsn\":20}}".getBytes(StandardCharsets.UTF_8)),
                event(topic, 0, "a", null, null, 2), event(topic, 0, "a", "keep", 15L, 3)), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("filter-seed.db");
        List<String[][]> splits = List.of(new String[][] {{"earliest", "latest"}},
                new String[][] {{"earliest", "offset:2"}, {"offset:2", "latest"}});
        List<Long> tables = new ArrayList<>();
        for (int i = 0; i < splits.size(); i++) {
            String table = "filtered_" + i;
            for (String[] range : splits.get(i)) {
                CliRun r = CliRun.run(kafka, "--topic", topic, "--from", range[0], "--to", range[1], "--sink", url,
                        "--table", table, "--create-table", "--version-field", "source.lsn", "--on-error", "skip",
                        "--where", "value == null || value.status == 'keep'", "--job", table + "-" + range[0]);
                assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            }
            tables.add(Orders.count(url, "SELECT count(*) FROM " + table));
        }
        assertThat(tables).as("rows after one run, after two: a deleted at lsn 20, not brought back at 15")
                .containsExactly(0L, 0L);
    }

    @Test
    void aRecordWithoutTheFieldIsAPoisonRecordAndWhatCannotWorkIsRefusedBeforeAnythingIsWritten() throws Exception {
        String topic = "vf-poison";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(event(topic, 0, "a", "a2", 2L, 0), event(topic, 0, "a", "a1", 1L, 1),
                event(topic, 0, "b", "b?", null, 2), event(topic, 0, "c", "c5", 5L, 3)), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("poison.db");
        String[] request = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--create-table"};
        CliRun skipped = CliRun.run(kafka, CliRun.concat(request, "--table", "skipped", "--job", "vf-skip", "--version-field",
                "source.lsn", "--on-error", "skip"));
        assertThat(skipped.exitCode()).as(skipped.out() + skipped.err()).isZero();
        assertThat(skipped.err()).contains("1 record(s) could not be decoded");
        assertThat(Orders.table(url, "skipped")).isEqualTo(Map.of("a", "a2", "c", "c5"));
        CliRun failed = CliRun.run(kafka, CliRun.concat(request, "--table", "failed", "--job", "vf-fail", "--version-field",
                "source.lsn"));
        assertThat(failed.exitCode()).as(failed.out() + failed.err()).isEqualTo(1);
        assertThat(failed.err()).contains("vf-poison/0@2").contains("version field 'source.lsn' is missing or null");
        // the same job ordered by another field, or by none, is another job's spec
        CliRun other = CliRun.run(kafka, CliRun.concat(request, "--table", "skipped", "--job", "vf-skip", "--version-field",
                "source.db:string", "--on-error", "skip"));
        assertThat(other.exitCode()).as(other.out() + other.err()).isEqualTo(3);
        assertThat(other.err()).contains("version-field");
        CliRun none = CliRun.run(kafka, CliRun.concat(request, "--table", "skipped", "--job", "vf-skip", "--on-error", "skip"));
        assertThat(none.exitCode()).as(none.out() + none.err()).isEqualTo(3);
        assertThat(none.err()).contains("version-field").contains("source.lsn:integer").contains("(none)");
        // a table of one's own without the column: refused, nothing written
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE mine (kafka_key TEXT PRIMARY KEY, status TEXT, source TEXT, kafka_topic TEXT, "
                    + "kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp BIGINT, kafka_log_time BIGINT)");
        }
        CliRun mine = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "mine", "--job", "vf-mine", "--version-field", "source.lsn", "--on-error", "skip");
        assertThat(mine.exitCode()).as(mine.out() + mine.err()).isEqualTo(2);
        assertThat(mine.err()).contains("has no column kafka_version").contains("--create-table");
        assertThat(Orders.table(url, "mine")).isEmpty();
        // a topic sink copies bytes unless told: the field needs a decoded value
        CliRun bytes = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "kafka:vf-poison-out", "--create-topic", "--version-field", "source.lsn");
        assertThat(bytes.exitCode()).as(bytes.out() + bytes.err()).isEqualTo(2);
        assertThat(bytes.err()).contains("needs --value-format json, avro, protobuf or json-schema");
        CliRun bad = CliRun.run(kafka, CliRun.concat(request, "--version-field", "lsn:float"));
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err()).contains("invalid --version-field 'lsn:float'");
    }
}
