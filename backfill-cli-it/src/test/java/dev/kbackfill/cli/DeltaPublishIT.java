package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.sink.delta.DeltaTableRows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --publish-after-verify} on a Delta table: the rebuild goes into a shadow table beside it
 * ({@code PATH_kbackfill_shadow}), is verified, and only then replaces the table's files in one commit; a shadow that
 * disagrees, or a table that moved meanwhile, leaves the table exactly as it was.
 */
@Tag("kafka")
@Tag("delta")
class DeltaPublishIT {

    private static final int KEYS = 600;
    private static final String TOPIC = "delta-publish";
    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of("retention.ms", "-1"));
        Orders.produce(kafka, TOPIC, KEYS, 2);
    }

    private static String[] rebuild(String path, String... more) {
        return CliRun.concat(new String[] {"--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink",
                "delta:" + path, "--publish-after-verify"}, more);
    }

    /** The table as another backfill left it: the first records of partition 0 only, partitioned by status. */
    private static void oldTable(String path) {
        CliRun old = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "offset:100", "--partitions",
                "0", "--sink", "delta:" + path, "--create-table", "--partition-by", "status");
        assertThat(old.exitCode()).as(old.err()).isZero();
    }

    /** The whole range backfilled straight into a new table: what a published rebuild must equal. */
    private Map<String, Map<String, Object>> direct() throws Exception {
        String path = dir.resolve("direct").toString();
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink",
                "delta:" + path, "--create-table");
        assertThat(run.exitCode()).as(run.err()).isZero();
        return rows(path);
    }

    private static Map<String, Map<String, Object>> rows(String path) throws Exception {
        Map<String, Map<String, Object>> rows = new TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(path)) {
            assertThat(rows.put((String) r.get("kafka_key"), new TreeMap<>(r))).as("one row per key").isNull();
        }
        return rows;
    }

    /**
     * A partitioned table rebuilt: the shadow is made from its version, the table keeps that version while the shadow
     * is written and verified (a reader polling it meanwhile sees the old rows or all the new ones, never part), then
     * one commit replaces its files; the rows equal a direct backfill's, the table keeps its partitioning, the old
     * version stays readable (time travel), the shadow is gone, and a second rebuild publishes again.
     */
    @Test
    void aRebuildReplacesTheTablesFilesInOneCommitThatAPollingReaderSeesAllAtOnce() throws Exception {
        String path = dir.resolve("orders").toString();
        oldTable(path);
        long before = DeltaTableRows.count(path);
        long versionBefore = DeltaTableRows.version(path);
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            while (!stop.get()) {
                try {
                    seen.add(DeltaTableRows.count(path));
                } catch (Throwable e) {
                    errors.add(e);
                }
            }
        });
        reader.start();
        CliRun rebuild;
        try {
            rebuild = CliRun.run(kafka, rebuild(path, "--batch-size", "100"));
        } finally {
            stop.set(true);
            reader.join();
        }
        assertThat(rebuild.exitCode()).as(rebuild.out() + rebuild.err()).isZero();
        assertThat(rebuild.err()).contains("shadow " + path + "_kbackfill_shadow made like the table: a Delta table "
                + "with the columns and partitioning of the table's version " + versionBefore);
        assertThat(rebuild.out()).contains("verify: AGREES").contains("publish: replaced the")
                .contains("of the Delta table at " + path).contains("RESTORE TABLE ... TO VERSION AS OF "
                        + versionBefore).contains("publish: deleted the shadow");
        assertThat(errors).isEmpty();
        assertThat(seen).as("the table as it was, or the whole rebuild").isSubsetOf(before, (long) KEYS);
        assertThat(DeltaTableRows.version(path)).as("one commit").isEqualTo(versionBefore + 1);
        Map<String, Map<String, Object>> published = rows(path);
        assertThat(published).isEqualTo(direct());
        assertThat(DeltaTableRows.count(path, versionBefore)).as("the version before, by time travel")
                .isEqualTo(before);
        assertThat(DeltaTableRows.dataFiles(path).keySet()).as("still partitioned by status")
                .allMatch(f -> f.matches(".*/[^/]+=s[01]/[^/]+\\.parquet"));
        assertThat(Files.exists(Path.of(path + "_kbackfill_shadow"))).isFalse();

        java.util.regex.Matcher job = java.util.regex.Pattern.compile("job (\\S+) run 1: wrote").matcher(rebuild.out());
        assertThat(job.find()).as(rebuild.out()).isTrue();
        CliRun jobs = CliRun.of("jobs", "--sink", "delta:" + path);
        assertThat(jobs.exitCode()).as(jobs.out() + jobs.err()).isZero();
        assertThat(jobs.out()).as("the rebuild's job is forgotten with its shadow").doesNotContain(job.group(1));

        CliRun again = CliRun.run(kafka, rebuild(path));
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(rows(path)).isEqualTo(published);
        CliRun verify = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "none",
                "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink", "delta:" + path);
        assertThat(verify.exitCode()).as(verify.out()).isZero();
    }

    /** Without a table, the rebuild's shadow is created from the rows and the publish creates the table in one commit. */
    @Test
    void aRebuildWithoutATableCreatesItWhenPublished() throws Exception {
        String path = dir.resolve("fresh").toString();
        CliRun created = CliRun.run(kafka, rebuild(path, "--create-table"));
        assertThat(created.exitCode()).as(created.out() + created.err()).isZero();
        assertThat(created.out()).contains("publish: created the Delta table at " + path);
        assertThat(DeltaTableRows.version(path)).isZero();
        assertThat(rows(path)).isEqualTo(direct());
        assertThat(Files.exists(Path.of(path + "_kbackfill_shadow"))).isFalse();
    }

    /**
     * A shadow changed by another job while its rebuild was stopped half-way: the run that finishes it disagrees,
     * exit 4, the table exactly as it was (its version and rows), the shadow kept. A table that moved while its
     * rebuild was stopped is refused before the rebuild goes on, naming the versions; nothing is published.
     */
    @Test
    void aShadowThatDisagreesOrATableThatMovedLeavesTheTableExactlyAsItWas() throws Exception {
        String path = dir.resolve("kept").toString();
        oldTable(path);
        Map<String, Map<String, Object>> before = rows(path);
        long versionBefore = DeltaTableRows.version(path);
        CliRun half = CliRun.run(kafka, rebuild(path, "--max-records", "900", "--batch-size", "100", "--job",
                "rebuild"));
        assertThat(half.exitCode()).as(half.out() + half.err()).isZero();
        assertThat(half.err()).contains("not verified, not published");
        // another job writes older versions of keys the half rebuild gave their newer ones into the shadow
        CliRun stale = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "offset:20", "--partitions",
                "0", "--sink", "delta:" + path + "_kbackfill_shadow", "--on-conflict", "overwrite", "--job",
                "stale-writer");
        assertThat(stale.exitCode()).as(stale.out() + stale.err()).isZero();
        CliRun finish = CliRun.run(kafka, rebuild(path, "--job", "rebuild"));
        assertThat(finish.exitCode()).as(finish.out() + finish.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(finish.out()).contains("verify: DISAGREES").contains("not published");
        assertThat(DeltaTableRows.version(path)).isEqualTo(versionBefore);
        assertThat(rows(path)).isEqualTo(before);
        assertThat(Files.exists(Path.of(path + "_kbackfill_shadow", "_delta_log"))).isTrue();

        // the table moves (another job commits to it): publishing the shadow would drop that commit
        CliRun other = CliRun.run(kafka, "--topic", TOPIC, "--from", "offset:100", "--to", "offset:110",
                "--partitions", "0", "--sink", "delta:" + path, "--job", "other");
        assertThat(other.exitCode()).as(other.out() + other.err()).isZero();
        Map<String, Map<String, Object>> moved = rows(path);
        long versionMoved = DeltaTableRows.version(path);
        CliRun refused = CliRun.run(kafka, rebuild(path, "--job", "rebuild"));
        assertThat(refused.exitCode()).as(refused.out() + refused.err()).isNotZero();
        assertThat(refused.err()).contains("changed since its shadow was made from its version " + versionBefore)
                .contains("at version " + versionMoved + " now").contains("nothing was published");
        assertThat(DeltaTableRows.version(path)).isEqualTo(versionMoved);
        assertThat(rows(path)).isEqualTo(moved);
    }

    /**
     * A publish stopped after its commit and while it was deleting its shadow (the shadow as it was, its data files
     * and newer log versions gone, the way the delete goes): the table holds the rebuild; the next rebuild knows the
     * leftover shadow as published, deletes it, rebuilds into a new one and publishes.
     */
    @Test
    void aShadowLeftHalfDeletedByAStoppedPublishIsKnownAsPublishedAndReplaced() throws Exception {
        String path = dir.resolve("leftover").toString();
        oldTable(path);
        CliRun most = CliRun.run(kafka, rebuild(path, "--max-records", "900", "--batch-size", "100"));
        assertThat(most.exitCode()).as(most.out() + most.err()).isZero();
        assertThat(most.err()).contains("not verified, not published");
        Path shadow = Path.of(path + "_kbackfill_shadow");
        Path copy = dir.resolve("shadow-copy");
        copyTree(shadow, copy);
        CliRun publish = CliRun.run(kafka, rebuild(path));
        assertThat(publish.exitCode()).as(publish.out() + publish.err()).isZero();
        assertThat(Files.exists(shadow)).isFalse();
        Map<String, Map<String, Object>> published = rows(path);
        copyTree(copy, shadow);
        try (java.util.stream.Stream<Path> files = Files.walk(shadow)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                String name = f.getFileName().toString();
                boolean log = f.startsWith(shadow.resolve("_delta_log"));
                if (Files.isRegularFile(f) && (!log || name.matches("0*[1-9]\\d*\\..*|.*\\.crc|_last_checkpoint"))) {
                    Files.delete(f);
                }
            }
        }
        CliRun again = CliRun.run(kafka, rebuild(path));
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(again.err()).contains("the shadow the last rebuild published deleted");
        assertThat(again.out()).contains("verify: AGREES").contains("publish: replaced the");
        assertThat(rows(path)).isEqualTo(published);
        assertThat(Files.exists(shadow)).isFalse();
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (java.util.stream.Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }

    /**
     * The rebuild command killed with SIGKILL at moments spread over its run, verification and publish, again and
     * again, then run to its end: the table ends exactly a direct backfill's rows; at every kill it was the old table
     * or the new one, never part of either.
     */
    @Test
    void aRebuildKilledAnywhereEndsPublishedWholeByTheSameCommand() throws Exception {
        String path = dir.resolve("killed").toString();
        oldTable(path);
        Map<String, Map<String, Object>> old = rows(path);
        List<String> command = new ArrayList<>(List.of(LAUNCHER.toString(), "run", "--bootstrap-server",
                kafka.bootstrapServers(), "--batch-size", "50"));
        command.addAll(List.of(rebuild(path)));
        java.util.Random random = new java.util.Random(11);
        for (int kill = 0; kill < 4; kill++) {
            Process p = new ProcessBuilder(command).redirectOutput(dir.resolve("kill" + kill + ".out").toFile())
                    .redirectError(dir.resolve("kill" + kill + ".err").toFile()).start();
            Thread.sleep(1_500 + random.nextInt(5_000));
            p.destroyForcibly(); // SIGKILL: no rollback, no goodbye
            assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            long now = DeltaTableRows.count(path);
            assertThat(now).as("after kill %d: the old table or the new, whole", kill).isIn((long) old.size(),
                    (long) KEYS);
            if (now != KEYS) {
                assertThat(rows(path)).as("unpublished: the table exactly as it was").isEqualTo(old);
            }
        }
        CliRun finish = CliRun.run(kafka, rebuild(path));
        assertThat(finish.exitCode()).as(finish.out() + finish.err()).isZero();
        assertThat(rows(path)).isEqualTo(direct());
        assertThat(Files.exists(Path.of(path + "_kbackfill_shadow"))).isFalse();
    }
}
