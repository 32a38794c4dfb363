package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md's nightly cron job, "by calendar day", run as cron would over seven simulated nights (each run
 * resolved as of 02:30 in Europe/Paris of its night, through {@code kbackfill.now}): one night skipped, one run killed
 * with SIGKILL mid-way. The runs' ranges meet end to start with no gap and no overlap, every day's records are in
 * the table (keys that live one day only), and the table holds each key's last record up to the last night's day.
 */
@Tag("launcher")
class NightlyCronIT {

    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();
    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
    private static final String TOPIC = "nightly";
    private static final Pattern STARTED = Pattern.compile("starting job orders-nightly \\(run \\d+[^)]*\\): (\\d+) "
            + "offsets");

    @TempDir
    Path dir;

    @Test
    void sevenNightsWithOneSkippedAndOneKilledLeaveNoGapAndNoDuplicate() throws Exception {
        EmbeddedKafka kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 3, Map.of("retention.ms", "-1"));
        List<Orders.Produced> produced = produce(kafka);
        String url = "jdbc:sqlite:" + dir.resolve("nightly.db");
        String[] command = {"run", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "none", "--topic",
                TOPIC, "--from", "continue:2024-01-01", "--to", "today", "--zone", "Europe/Paris", "--sink", url,
                "--table", "orders", "--job", "orders-nightly", "--create-table"};

        long planned = 0; // offsets the runs set out to read, summed: each offset of the days covered exactly once
        for (int night = 1; night <= 7; night++) {
            Instant at = LocalDate.of(2024, 1, 1 + night).atTime(2, 30).atZone(PARIS).toInstant();
            if (night == 3) {
                continue; // the machine was down: the next night covers two days
            }
            String err;
            if (night == 5) {
                err = killedMidWay(command, at, url);
            } else {
                System.setProperty("kbackfill.now", at.toString());
                try {
                    CliRun r = CliRun.of(command);
                    assertThat(r.exitCode()).as("night %d: %s", night, r.err()).isZero();
                    err = r.err();
                } finally {
                    System.clearProperty("kbackfill.now");
                }
                if (night == 6) {
                    assertThat(err).as("night 6 resumes the killed run first").contains("resuming job orders-nightly");
                }
            }
            Matcher m = STARTED.matcher(err);
            while (m.find()) {
                planned += Long.parseLong(m.group(1));
            }
        }
        // night 6 finished night 5's killed run; night 7 runs from where that ended to the start of 2024-01-08
        Instant from = LocalDate.of(2024, 1, 1).atStartOfDay(PARIS).toInstant();
        Instant to = LocalDate.of(2024, 1, 8).atStartOfDay(PARIS).toInstant();
        List<Orders.Produced> inRange = produced.stream()
                .filter(p -> p.timestamp() >= from.toEpochMilli() && p.timestamp() < to.toEpochMilli()).toList();
        assertThat(planned).as("the runs' ranges, end to start: no gap, no overlap").isEqualTo(inRange.size());

        Map<String, String> expected = new TreeMap<>();
        for (Orders.Produced p : inRange) {
            expected.put(p.key(), Orders.statusOf(p.value())); // in offset order per key: the last one stays
        }
        assertThat(Orders.table(url, "orders")).isEqualTo(expected);
        for (int day = 1; day <= 7; day++) {
            assertThat(expected).as("keys that live on day %d only", day).containsKey(dayKey(day, 0));
        }
    }

    /** The night's run as a process, killed once it has committed a batch and before it ends; its stderr. */
    private String killedMidWay(String[] command, Instant at, String url) throws Exception {
        List<String> args = new ArrayList<>(List.of(LAUNCHER.toString()));
        args.addAll(List.of(command));
        args.addAll(List.of("--batch-size", "20", "--max-records-per-second", "100"));
        Path err = dir.resolve("night5.err");
        ProcessBuilder builder = new ProcessBuilder(args).redirectOutput(dir.resolve("night5.out").toFile())
                .redirectError(err.toFile());
        builder.environment().put("KBACKFILL_JAVA_OPTS", "-Dkbackfill.now=" + at);
        long before = committed(url);
        Process run = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (run.isAlive() && committed(url) <= before && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(run.isAlive()).as("night 5 is still running when it is killed: %s", Files.exists(err)
                ? Files.readString(err) : "").isTrue();
        run.destroyForcibly();
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return Files.readString(err, StandardCharsets.UTF_8);
    }

    /** The offsets the job has committed in all (0 before it exists). */
    private static long committed(String url) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
             java.sql.Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT sum(next_offset) FROM kbackfill_progress")) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (java.sql.SQLException e) {
            return 0;
        }
    }

    /**
     * Eight and a half days of records, in time order: 20 keys updated every hour, and each day 3 keys that only that
     * day carries (so that a day no run covered would show).
     */
    private static List<Orders.Produced> produce(EmbeddedKafka kafka) throws Exception {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        Instant start = Instant.parse("2023-12-31T12:00:00Z");
        for (int hour = 0; hour < 24 * 9; hour++) {
            Instant t = start.plus(Duration.ofHours(hour));
            int day = LocalDate.ofInstant(t, PARIS).getDayOfMonth() % 31; // 2023-12-31 is day 0
            for (int k = 0; k < 20; k++) {
                String key = String.format(Locale.ROOT, "k%02d", k);
                records.add(record(key, hour, t.plusSeconds(k)));
            }
            if (t.atZone(PARIS).getHour() == 12) {
                for (int k = 0; k < 3; k++) {
                    records.add(record(dayKey(day, k), hour, t.plusSeconds(30 + k)));
                }
            }
        }
        return Orders.send(kafka, records, Map.of());
    }

    private static ProducerRecord<byte[], byte[]> record(String key, int update, Instant at) {
        return new ProducerRecord<>(TOPIC, null, at.toEpochMilli(), key.getBytes(StandardCharsets.UTF_8),
                Orders.json(key, update).getBytes(StandardCharsets.UTF_8));
    }

    private static String dayKey(int day, int k) {
        return String.format(Locale.ROOT, "day%d-%d", day, k);
    }
}
