package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A row that claims a newer version than the range's last is checked against the log, on every sink verify reads:
 * its version raised by hand to another key's record, or past the log's end, with a cell changed, is different; a
 * row that holds exactly a later record of its key is newer; and a time moved by a microsecond is different.
 * The rows are changed through the sink itself (overwrite), as a hand with the table's own tools would.
 */
@Tag("kafka")
class VerifyNewerClaimsIT {

    static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** Keys a, b, c at offsets 0 to 2 (the range), then a later record of a at offset 3, after it. */
    private static String topic(String name) throws Exception {
        String topic = "newer-claims-" + name;
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        String[][] log = {{"a", "created"}, {"b", "created"}, {"c", "created"}, {"a", "paid"}};
        for (int i = 0; i < log.length; i++) {
            records.add(new ProducerRecord<>(topic, 0, Orders.T0.plusSeconds(i).toEpochMilli(),
                    log[i][0].getBytes(StandardCharsets.UTF_8), value(log[i][1])));
        }
        Orders.send(kafka, records, Map.of());
        return topic;
    }

    private static byte[] value(String status) {
        return ("{\"status\":\"" + status + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** Writes a row for {@code key} stamped with the version of offset {@code offset}, as overwrite writes it. */
    private static void forge(String topic, String sink, String key, long offset, long timestamp, String status) {
        SinkSettings settings = new SinkSettings(sink, "t", Optional.empty(), Optional.empty(), ConflictMode.OVERWRITE,
                TombstoneMode.DELETE, false, false, SinkSettings.MetadataColumns.DEFAULT, Map.of(),
                new SinkSettings.Source(topic, kafka.clientConfig()), Map.of());
        try (Sink writer = SinkFactory.forSettings(settings)) {
            writer.open();
            Plan plan = Plan.fromJson(CliRun.of("plan", "--topic", topic, "--from", "earliest", "--to", "latest",
                    "--format", "json", "--bootstrap-server", kafka.bootstrapServers()).out());
            try (AutoCloseable lock = writer.jobStore().lock("forger")) {
                writer.jobStore().begin(JobState.begin("forger", "forger", 1, plan));
                SourceRecord raw = new SourceRecord(topic, 0, offset, timestamp, key.getBytes(StandardCharsets.UTF_8),
                        value(status), new RecordHeaders());
                List<Change> rows = List.of(new Change(Map.of("kafka_key", key), Map.of("status", status), 0, offset,
                        timestamp, timestamp, raw));
                writer.write(new WriteBatch("forger", 1, 1, rows, RowShape.of(rows), Map.of(0, 4L), topic));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static long at(int second) {
        return Orders.T0.plusSeconds(second).toEpochMilli();
    }

    private void claimsAreCheckedAgainstTheLog(String name, String sink) throws Exception {
        String topic = topic(name);
        boolean toTopic = sink.startsWith("kafka:");
        String[] table = toTopic ? new String[0] : new String[] {"--table", "t"};
        CliRun run = CliRun.run(kafka, CliRun.concat(new String[] {"--topic", topic, "--from", "earliest", "--to",
                "offset:3", "--sink", sink, toTopic ? "--create-topic" : "--create-table", "--job", topic}, table));
        assertThat(run.exitCode()).as(run.err()).isZero();
        String[] verify = CliRun.concat(new String[] {"verify", "--bootstrap-server", kafka.bootstrapServers(),
                "--progress", "none", "--topic", topic, "--from", "earliest", "--to", "offset:3", "--sink", sink}, table);
        assertThat(CliRun.of(verify).exitCode()).as("the backfill agrees").isZero();

        // b raised to offset 3, which is a's record, and its status changed
        forge(topic, sink, "b", 3, at(3), "shipped");
        CliRun raised = CliRun.of(verify);
        assertThat(raised.exitCode()).as(raised.out()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(raised.out()).contains("different {kafka_key=b}").contains("is a record of key {kafka_key=a}");

        // b raised past the log's end
        forge(topic, sink, "b", 40, at(40), "shipped");
        CliRun beyond = CliRun.of(verify);
        assertThat(beyond.exitCode()).as(beyond.out()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(beyond.out()).contains("different {kafka_key=b}").contains("lies beyond the log's end");
        forge(topic, sink, "b", 1, at(1), "created");
        assertThat(CliRun.of(verify).exitCode()).as("b put back").isZero();

        // a holding its later record exactly: newer; with a cell changed: different
        forge(topic, sink, "a", 3, at(3), "paid");
        CliRun newer = CliRun.of(verify);
        assertThat(newer.exitCode()).as(newer.out()).isZero();
        assertThat(newer.out()).containsPattern("newer\\s+1");
        forge(topic, sink, "a", 3, at(3), "refunded");
        CliRun changed = CliRun.of(verify);
        assertThat(changed.exitCode()).as(changed.out()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(changed.out()).contains("different {kafka_key=a}");
        if (toTopic) {
            // a topic's record compared as its value's bytes, shown as a person reads them, in text and in JSON
            assertThat(changed.out()).contains("differs in record value: expected {record value={\"status\":\"paid\"}}, "
                    + "target {record value={\"status\":\"refunded\"}}").doesNotContain("HeapByteBuffer");
            CliRun json = CliRun.of(CliRun.concat(verify, "--format", "json"));
            // the key as a JSON value: a topic's keys are bytes, given byte for byte
            assertThat(json.out()).contains("\"key\":{\"kafka_key\":{\"base64\":\"YQ==\"}}")
                    .contains("\"record value\":\"{\\\"status\\\":\\\"refunded\\\"}\"");
        }
    }

    @Test
    void onSqlite() throws Exception {
        claimsAreCheckedAgainstTheLog("sqlite", "jdbc:sqlite:" + dir.resolve("claims.db"));
    }

    @Test
    @Tag("postgresql")
    void onPostgres() throws Exception {
        claimsAreCheckedAgainstTheLog("pg", SharedPostgres.newDatabase("newer_claims"));
    }

    @Test
    @Tag("mariadb")
    void onMariaDb() throws Exception {
        claimsAreCheckedAgainstTheLog("maria", SharedMariaDb.newDatabase("newer_claims"));
    }

    @Test
    void onDelta() throws Exception {
        claimsAreCheckedAgainstTheLog("delta", "delta:" + dir.resolve("delta"));
    }

    @Test
    void onIceberg() throws Exception {
        claimsAreCheckedAgainstTheLog("iceberg", "iceberg:" + dir.resolve("iceberg"));
    }

    @Test
    void onATopic() throws Exception {
        claimsAreCheckedAgainstTheLog("topic", "kafka:newer-claims-target");
    }
}
