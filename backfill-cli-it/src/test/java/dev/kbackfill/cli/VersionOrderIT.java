package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.sink.delta.DeltaTableRows;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command lines of the third Trust issue, tried as a user would: producer timestamps that go backwards inside
 * a partition end in one state whatever the runs and their order; a replay of what a topic sink holds re-sends
 * nothing; a dead-letter topic that does not exist is refused before anything is read.
 */
@Tag("kafka")
class VersionOrderIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, int partition, String key, String status,
                                                         long millis) {
        return new ProducerRecord<>(topic, partition, T0.toEpochMilli() + millis, key.getBytes(StandardCharsets.UTF_8),
                ("{\"status\":\"" + status + "\"}").getBytes(StandardCharsets.UTF_8));
    }

    /** {@code p0@0 t=300 "A"}, {@code p0@1 t=100 "C"}, {@code p1@0 t=200 "B"}: C, the last of its log, in every order. */
    @Test
    void threeRecordsWhoseTimestampsGoBackwardsEndInTheLastOfTheirLogWhateverTheRuns() throws Exception {
        String topic = "order-cycle";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(topic, 0, "k", "A", 300), record(topic, 0, "k", "C", 100),
                record(topic, 1, "k", "B", 200)), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("cycle.db");
        List<List<String[]>> scenarios = List.of(
                List.<String[]>of(new String[] {"--from", "earliest", "--to", "latest"}),
                List.of(new String[] {"--from", "earliest", "--to", "latest", "--partitions", "0"},
                        new String[] {"--from", "earliest", "--to", "latest", "--partitions", "1"},
                        new String[] {"--from", "earliest", "--to", "offset:1", "--partitions", "0"}),
                List.of(new String[] {"--from", "earliest", "--to", "latest", "--partitions", "1"},
                        new String[] {"--from", "earliest", "--to", "latest", "--partitions", "0"}),
                List.of(new String[] {"--from", "offset:1", "--to", "latest", "--partitions", "0"},
                        new String[] {"--from", "earliest", "--to", "latest", "--partitions", "1"},
                        new String[] {"--from", "earliest", "--to", "offset:1", "--partitions", "0"}));
        for (int s = 0; s < scenarios.size(); s++) {
            String table = "cycle_" + s;
            Path delta = dir.resolve("cycle-delta-" + s);
            int run = 0;
            for (String[] range : scenarios.get(s)) {
                run++;
                for (String[] sink : List.of(new String[] {"--sink", url, "--table", table},
                        new String[] {"--sink", "delta:" + delta})) {
                    List<String> args = new ArrayList<>(List.of("--topic", topic, "--create-table", "--job",
                            "cycle-" + s + "-" + run));
                    args.addAll(List.of(range));
                    args.addAll(List.of(sink));
                    CliRun r = CliRun.run(kafka, args.toArray(String[]::new));
                    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
                }
            }
            assertThat(Orders.table(url, table)).as("scenario %d", s).isEqualTo(Map.of("k", "C"));
            List<String> rows = new ArrayList<>();
            DeltaTableRows.rows(delta.toString()).forEach(r -> rows.add(r.get("kafka_key") + "=" + r.get("status")));
            assertThat(rows).as("scenario %d on Delta", s).containsExactly("k=C");
        }
    }

    @Test
    void aSecondRunIntoATopicOverAnUnchangedRangeSendsNothingAndSaysSo() throws Exception {
        String topic = "order-replay";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int k = 0; k < 20; k++) {
            records.add(record(topic, k % 2, "k" + k, "s" + k, 1000 + k));
        }
        Orders.send(kafka, records, Map.of());
        String[] args = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", "kafka:" + topic + ".out",
                "--create-topic", "--job", "dj"};
        CliRun first = CliRun.run(kafka, args);
        assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
        assertThat(first.out()).contains("wrote 20 changes from 20 records");
        // "latest" moves: the second run is the job's run 2, over the whole (unchanged) topic again
        CliRun second = CliRun.run(kafka, args);
        assertThat(second.exitCode()).as(second.out() + second.err()).isZero();
        assertThat(second.out()).contains("job dj run 2: wrote 0 changes from 20 records")
                .contains("20 change(s) kept out");
        assertThat(KafkaSinkIT.readCommitted(topic + ".out")).hasSize(20);
    }

    /**
     * A run stopped by --max-records has read ahead of its last batch; the poison records it read ahead are
     * dead-lettered by the run that writes them, not twice: every poison record once in the dead-letter file.
     */
    @Test
    void runsStoppedByALimitDeadLetterEachPoisonRecordOnce() throws Exception {
        String topic = "order-poison";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            records.add(i % 10 == 3 ? new ProducerRecord<>(topic, 0, T0.toEpochMilli() + i,
                    ("k" + i).getBytes(StandardCharsets.UTF_8), "{not json".getBytes(StandardCharsets.UTF_8))
                    : record(topic, 0, "k" + i, "s" + i, i));
        }
        Orders.send(kafka, records, Map.of());
        Path letters = dir.resolve("letters.jsonl");
        String url = "jdbc:sqlite:" + dir.resolve("poison.db");
        for (int run = 0; run < 12; run++) {
            CliRun r = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "offset:300", "--sink", url,
                    "--create-table", "--job", "poison", "--batch-size", "20", "--max-records", "40", "--dead-letter",
                    letters.toString());
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            if (r.out().contains("nothing to do")) {
                break;
            }
        }
        assertThat(Orders.count(url, "SELECT COUNT(*) FROM order_poison")).isEqualTo(270);
        assertThat(Files.readAllLines(letters)).hasSize(30);
    }

    @Test
    void aDeadLetterTopicThatDoesNotExistIsRefusedBeforeAnythingIsRead() throws Exception {
        String topic = "order-dlq";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(record(topic, 0, "k", "A", 1)), Map.of());
        Path db = dir.resolve("dlq.db");
        long started = System.nanoTime();
        CliRun r = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + db, "--create-table", "--dead-letter", "topic:no.such.topic");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.errLines()).last().asString().contains("invalid --dead-letter 'topic:no.such.topic'")
                .contains("does not exist");
        assertThat(r.err()).doesNotContain("Exception");
        assertThat(System.nanoTime() - started).isLessThan(30_000_000_000L);
        assertThat(Files.exists(db)).as("nothing written").isFalse();
    }
}
