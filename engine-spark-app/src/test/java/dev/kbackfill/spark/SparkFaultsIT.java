package dev.kbackfill.spark;

import static dev.kbackfill.spark.SparkEngineIT.concat;
import static dev.kbackfill.spark.SparkEngineIT.deltaRows;
import static dev.kbackfill.spark.SparkEngineIT.finalState;
import static dev.kbackfill.spark.SparkEngineIT.sqlRows;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once on Spark under failure: a task that fails on its first attempt (local[2,2] retries it) and a driver
 * killed between waves, or between a wave's MERGE and the job's progress, leave no duplicate and no regression, and
 * the rerun adds no commit for a finished wave. Faults are injected by {@link Faults}' settings. A task's failure and
 * retry happen inside Spark, so those launches run on the {@link SharedDriver} (a session made with their master and
 * settings); a killed driver is a process of its own, killed, and the run that resumes after it the shared driver's.
 */
@Tag("spark")
class SparkFaultsIT {

    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** A topic with a day of updates, then (after --to) newer values for k0..k4 that a replay must not regress. */
    private static void topic(String name) {
        kafka.createTopic(name, 2, Map.of("retention.ms", "-1"));
        SparkEngineIT.produce(name, 2, 300, 3, false);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            long t = SparkEngineIT.T0.plusSeconds(86_400 + 60).toEpochMilli();
            for (int k = 0; k < 5; k++) {
                producer.send(new ProducerRecord<>(name, k % 2, t++, ("k" + k).getBytes(StandardCharsets.UTF_8),
                        "{\"status\":\"newer\",\"amount\":1,\"note\":\"n\"}".getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    private static SparkCli withFailingTask(Path marker, String... args) {
        return SparkCli.onSpark(kafka, List.of("--master", "local[2,2]", "--conf", Faults.FAIL_TASK_ONCE + "=" + marker,
                "--conf", Faults.FAIL_AFTER_ROWS + "=120"), args);
    }

    @Test
    void aTaskFailingOnItsFirstAttemptLeavesNoDuplicateAndNoRegression() throws Exception {
        try (AutoCloseable driver = SharedDriver.install()) {
            taskFailures();
        }
    }

    private void taskFailures() throws Exception {
        topic("faults-task");
        String[] newer = {"--topic", "faults-task", "--from", "2024-01-02", "--to", "2024-01-03", "--create-table"};
        String[] day = {"--topic", "faults-task", "--from", "2024-01-01", "--to", "2024-01-02", "--create-table",
                "--batch-size", "40"};
        // PostgreSQL: each partition's sub-job commits batches, fails, and its retry resumes after them
        String url = SharedPostgres.newDatabase("faults_task");
        for (String table : List.of("expected", "replayed")) {
            SparkCli later = SparkCli.run(kafka, concat(newer, "--sink", url, "--table", table));
            assertThat(later.exitCode()).as(later.toString()).isZero();
        }
        SparkCli single = SparkCli.run(kafka, concat(day, "--sink", url, "--table", "expected"));
        assertThat(single.exitCode()).as(single.toString()).isZero();
        Path pgMarker = dir.resolve("pg-failed");
        SparkCli spark = withFailingTask(pgMarker, concat(day, "--sink", url, "--table", "replayed"));
        assertThat(spark.exitCode()).as(spark.toString()).isZero();
        assertThat(pgMarker).as("a task failed once").exists();
        assertThat(spark.err()).contains("injected task failure");
        Map<String, String> rows = sqlRows(url, "replayed");
        assertThat(rows).isEqualTo(sqlRows(url, "expected")).hasSize(300 - 43 + 1); // k0 deleted, then written again later
        assertThat(rows.get("k1")).startsWith("newer");
        // Delta: a task feeding the MERGE fails; the retried MERGE commits once
        Path expected = dir.resolve("expected");
        Path replayed = dir.resolve("replayed");
        for (Path table : List.of(expected, replayed)) {
            SparkCli later = SparkCli.run(kafka, concat(newer, "--sink", "delta:" + table));
            assertThat(later.exitCode()).as(later.toString()).isZero();
        }
        assertThat(SparkCli.run(kafka, concat(day, "--sink", "delta:" + expected)).exitCode()).isZero();
        Path deltaMarker = dir.resolve("delta-failed");
        SparkCli merged = withFailingTask(deltaMarker, concat(day, "--sink", "delta:" + replayed));
        assertThat(merged.exitCode()).as(merged.toString()).isZero();
        assertThat(deltaMarker).exists();
        assertThat(deltaRows(replayed)).isEqualTo(deltaRows(expected));
        assertThat(deltaRows(replayed).get("k1").get("status")).isEqualTo("newer");
        assertThat(waveCommits(replayed)).isEqualTo(1);
        // a topic: the failed attempt's transaction is aborted, the retry's committed once
        kafka.createTopic("faults-task-expected", 2, Map.of("cleanup.policy", "compact"));
        kafka.createTopic("faults-task-replayed", 2, Map.of("cleanup.policy", "compact"));
        String[] copy = {"--topic", "faults-task", "--from", "2024-01-01", "--to", "2024-01-02", "--batch-size", "40",
                "--on-conflict", "overwrite"};
        assertThat(SparkCli.run(kafka, concat(copy, "--sink", "kafka:faults-task-expected")).exitCode()).isZero();
        Path topicMarker = dir.resolve("topic-failed");
        SparkCli copied = withFailingTask(topicMarker, concat(copy, "--sink", "kafka:faults-task-replayed"));
        assertThat(copied.exitCode()).as(copied.toString()).isZero();
        assertThat(topicMarker).exists();
        assertThat(finalState("faults-task-replayed")).isEqualTo(finalState("faults-task-expected"));
        List<String> written = SparkEngineIT.sourceCoordinates("faults-task-replayed");
        assertThat(written).as("no source record written twice").doesNotHaveDuplicates().isNotEmpty();
    }

    @Test
    void aDriverKilledBetweenWavesResumesWithoutACommitForFinishedWaves() throws Exception {
        topic("faults-driver");
        kafka.createTopic("faults-driver-3", 3, Map.of("retention.ms", "-1"));
        SparkEngineIT.produce("faults-driver-3", 3, 240, 3);
        String[] request = {"--topic", "faults-driver-3", "--from", "2024-01-01", "--to", "2024-01-02",
                "--create-table", "--job", "waves"};
        Path expected = dir.resolve("expected");
        Path table = dir.resolve("waves");
        assertThat(SparkCli.run(kafka, concat(request, "--sink", "delta:" + expected)).exitCode()).isZero();
        List<String> waves = List.of("--spark-wave-partitions", "1");
        // killed after wave 1 and the job's progress past it
        SparkCli killed = SparkCli.onSpark(kafka, concat(waves, "--conf", Faults.HALT_AFTER + "=wave:1"),
                concat(request, "--sink", "delta:" + table));
        // the launch holds the job's lock and reports the driver's death as a runtime failure, naming where the sink
        // says each partition stands
        assertThat(killed.exitCode()).as(killed.toString()).isEqualTo(1);
        assertThat(killed.err()).contains("exited with code 137").contains("stopped with partition 1 at offset 0");
        assertThat(waveCommits(table)).isEqualTo(1);
        // the run is Spark's until it ends: the single-machine engine is refused, naming why
        SparkCli local = SparkCli.run(kafka, concat(request, "--sink", "delta:" + table));
        assertThat(local.exitCode()).as(local.toString()).isEqualTo(3);
        assertThat(local.err()).contains("in the middle of run 1").contains("engine spark, 1 partitions per wave, not local");
        // killed after wave 2's MERGE, before the job's progress moved past it
        SparkCli killedAgain = SparkCli.onSpark(kafka, concat(waves, "--conf", Faults.HALT_AFTER + "=write:2"),
                concat(request, "--sink", "delta:" + table));
        assertThat(killedAgain.exitCode()).as(killedAgain.toString()).isEqualTo(1);
        assertThat(killedAgain.err()).contains("exited with code 137");
        assertThat(waveCommits(table)).isEqualTo(2);
        SparkCli finished;
        try (AutoCloseable driver = SharedDriver.install()) {
            finished = SparkCli.onSpark(kafka, waves, concat(request, "--sink", "delta:" + table));
        }
        assertThat(finished.exitCode()).as(finished.toString()).isZero();
        assertThat(waveCommits(table)).as("wave 2 is not written again").isEqualTo(3);
        assertThat(deltaRows(table)).isEqualTo(deltaRows(expected));
        SparkCli status = SparkCli.status(kafka, "--job", "waves", "--sink", "delta:" + table);
        assertThat(status.out()).contains("complete");
    }

    /** Commits of Spark waves in a Delta table's log (a MERGE, or an append into a table with no rows yet). */
    static long waveCommits(Path table) throws IOException {
        try (Stream<Path> files = Files.list(table.resolve("_delta_log"))) {
            return files.filter(f -> f.getFileName().toString().endsWith(".json")).filter(f -> {
                try {
                    return Files.readString(f).contains("\"appId\":\"kbackfill-spark-");
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).count();
        }
    }
}
