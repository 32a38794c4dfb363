package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A run killed with SIGKILL in the middle, then started again, ends with exactly the expected rows: the launcher
 * as a separate process, killed while it writes, then rerun.
 */
@Tag("launcher")
class CrashResumeIT {

    private static EmbeddedKafka kafka;
    private static List<Orders.Produced> produced;
    private static final int KEYS = 4000;
    private static final int UPDATES = 40;

    @TempDir
    static Path dir;

    @BeforeAll
    static void data() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic("crash", 3, Map.of());
        produced = Orders.produce(kafka, "crash", KEYS, UPDATES);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sqlite", "postgresql", "delta"})
    void aRunKilledMidWayResumesToExactlyTheExpectedRows(String database) throws Exception {
        String url = switch (database) {
            case "sqlite" -> "jdbc:sqlite:" + dir.resolve("crash.db");
            case "delta" -> "delta:" + dir.resolve("crash-delta");
            default -> SharedPostgres.newDatabase("crash");
        };
        String job = "crash-" + database;
        java.nio.file.Path report = dir.resolve("report-" + database + ".json");
        String[] args = {"run", "--topic", "crash", "--from", "earliest", "--to", "latest", "--sink", url,
                "--create-table", "--table", "orders", "--job", job, "--batch-size", "500", "--progress", "none",
                "--bootstrap-server", kafka.bootstrapServers(), "--report", report.toString()};
        long total = (long) KEYS * UPDATES;

        Process first = start(args, "first-" + database);
        long atKill = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (first.isAlive() && System.nanoTime() < deadline) {
            atKill = progress(url, job);
            if (atKill > total / 5) {
                break;
            }
            Thread.sleep(20);
        }
        assertThat(first.isAlive()).as("the first run is still writing when it is killed (progress %d of %d)", atKill,
                total).isTrue();
        first.destroyForcibly(); // SIGKILL: no shutdown hook, no rollback, no goodbye
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();

        long committed = progress(url, job);
        assertThat(committed).isGreaterThan(0).isLessThan(total);
        // the report was begun when the run began: a killed run is shown as running, never as an earlier outcome
        var begun = new com.fasterxml.jackson.databind.ObjectMapper().readTree(Files.readString(report));
        assertThat(begun.path("outcome").asText()).isEqualTo("running");
        assertThat(begun.path("job").asText()).isEqualTo(job);
        assertThat(begun.path("run").asInt()).isEqualTo(1);
        assertThat(begun.has("exitCode")).isFalse();
        // the data is never ahead of the progress stored with it
        Map<Integer, Long> next = nextOffsets(url, job);
        for (Map.Entry<Integer, Long> max : maxOffsets(url).entrySet()) {
            assertThat(max.getValue()).isLessThan(next.get(max.getKey()));
        }

        Process second = start(args, "second-" + database);
        assertThat(second.waitFor(180, TimeUnit.SECONDS)).isTrue();
        String err = Files.readString(dir.resolve("second-" + database + ".err"));
        assertThat(second.exitValue()).as(err).isZero();
        assertThat(err).contains("resuming job " + job + " run 1: " + (total - committed) + " offsets left of " + total);

        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(Files.readString(report))
                .path("outcome").asText()).isEqualTo("completed");
        Plan plan = state(url, job).orElseThrow().plan();
        assertThat(table(url)).isEqualTo(Orders.expected(produced, plan)).hasSize(KEYS);
        assertThat(progress(url, job)).isEqualTo(total);
    }

    private static java.util.Optional<dev.kbackfill.core.sink.JobState> state(String url, String job) {
        return Launcher.state(url, job);
    }

    private static Map<String, String> table(String url) throws Exception {
        if (!url.startsWith("delta:")) {
            return Orders.table(url, "orders");
        }
        Map<String, String> rows = new java.util.TreeMap<>();
        for (Map<String, Object> r : dev.kbackfill.sink.delta.DeltaTableRows.rows(url.substring(6))) {
            assertThat(rows.put((String) r.get("kafka_key"), (String) r.get("status"))).as("duplicate key").isNull();
        }
        return rows;
    }

    private static Map<Integer, Long> maxOffsets(String url) throws Exception {
        Map<Integer, Long> max = new HashMap<>();
        if (url.startsWith("delta:")) {
            for (Map<String, Object> r : dev.kbackfill.sink.delta.DeltaTableRows.rows(url.substring(6))) {
                max.merge(((Number) r.get("kafka_partition")).intValue(), (Long) r.get("kafka_offset"), Math::max);
            }
            return max;
        }
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kafka_partition, max(kafka_offset) FROM orders GROUP BY kafka_partition")) {
            while (rs.next()) {
                max.put(rs.getInt(1), rs.getLong(2));
            }
        }
        return max;
    }

    private static Process start(String[] args, String name) throws Exception {
        // PostgreSQL stages batches into one transaction of up to a million changes, the whole topic here: windows
        // of ten batches, so that the kill lands between commits, often with batches staged and not committed
        return Launcher.start(args, dir, name, Map.of("KBACKFILL_JAVA_OPTS", "-Dkbackfill.pg.stagingRows=5000"));
    }

    private static long progress(String url, String job) {
        return Launcher.progress(url, job);
    }

    private static Map<Integer, Long> nextOffsets(String url, String job) {
        return state(url, job).orElseThrow().nextOffsets();
    }
}
