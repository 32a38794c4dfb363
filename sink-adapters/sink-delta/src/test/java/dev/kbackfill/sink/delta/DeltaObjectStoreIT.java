package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.ConditionalWrites;
import dev.kbackfill.sink.lake.ObjectStoreLease;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.testservices.SharedS3;
import io.delta.kernel.TableManager;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two writers on one Delta table in a real S3 API (S3Proxy, filesystem backend): safe or refused, never a lost
 * commit. Writers in separate processes race for one version of the log; runs of one job meet the job's lease; a
 * run and {@code compact} interleave; a store that ignores conditional writes is refused.
 */
@Tag("delta")
@Tag("s3")
class DeltaObjectStoreIT {

    @TempDir
    Path dir;

    private String table;

    @BeforeEach
    void newBucket() {
        table = "s3a://" + SharedS3.standard().newBucket() + "/lake/orders";
    }

    private static Map<String, String> storage(SharedS3 s3, String... more) {
        Map<String, String> m = new HashMap<>(s3.s3aSettings());
        for (int i = 0; i < more.length; i += 2) {
            m.put(more[i], more[i + 1]);
        }
        return m;
    }

    /** The filesystem of the table at {@code path}, as the sink reaches it. */
    private static FileSystem fs(String path, Map<String, String> storage) throws java.io.IOException {
        return new org.apache.hadoop.fs.Path(path).getFileSystem(DeltaFiles.hadoopConfiguration(storage));
    }

    private Sink sink(String path, Map<String, String> storage) {
        Sink s = SinkFactory.forSettings(new SinkSettings("delta:" + path, "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT,
                new HashMap<String, Object>(storage), SinkSettings.Source.NONE, Map.of()));
        s.open();
        return s;
    }

    private void createEmptyTable(Map<String, String> storage) {
        var engine = DefaultEngine.create(DeltaFiles.hadoopConfiguration(storage));
        TableManager.buildCreateTableTransaction(table, new StructType().add("id", LongType.LONG, false), "test")
                .build(engine).commit(engine, CloseableIterable.emptyIterable());
    }

    /**
     * Two processes load version 0 of the table and build a commit on it; then p commits, then q: what each
     * printed. (S3Proxy checks a conditional put and then writes, in two steps, so two commits within the same
     * milliseconds are not arbitrated by it as S3 arbitrates them; the commits here are apart.)
     */
    private List<String> commitOnOneSnapshot(Map<String, String> storage) throws Exception {
        Path barrier = Files.createDirectories(dir.resolve("barrier-" + System.nanoTime()));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> said = new ArrayList<>();
        List<Process> writers = new ArrayList<>();
        for (String name : List.of("p", "q")) {
            List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), LogCommitter.class.getName(), table, barrier.toString(), name));
            storage.forEach((k, v) -> command.add(k + "=" + v));
            writers.add(new ProcessBuilder(command).redirectErrorStream(true).start());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(barrier.resolve("ready-p")) || !Files.exists(barrier.resolve("ready-q"))) {
            assertThat(System.nanoTime()).as("both writers ready").isLessThan(deadline);
            assertThat(writers).allMatch(Process::isAlive);
            Thread.sleep(10);
        }
        for (int i = 0; i < 2; i++) {
            Files.createFile(barrier.resolve("go-" + List.of("p", "q").get(i)));
            Process p = writers.get(i);
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            out.lines().filter(l -> l.startsWith("committed") || l.startsWith("refused")).forEach(said::add);
        }
        return said;
    }

    @Test
    void ofTwoProcessesCommittingOneVersionTheSecondIsRefusedAndNoCommitIsLost() throws Exception {
        Map<String, String> storage = storage(SharedS3.standard());
        createEmptyTable(storage);
        assertThat(commitOnOneSnapshot(storage)).containsExactly("committed 1", "refused");
        assertThat(DeltaTableRows.version(table, storage)).isEqualTo(1);
    }

    @Test
    void aSecondRunOfTheJobIsRefusedWhileTheFirstHoldsItsLeaseAndMayRunOnceItIsReleased() throws Exception {
        Map<String, String> storage = storage(SharedS3.standard());
        try (Sink first = sink(table, storage); AutoCloseable lock = first.jobStore().lock("job")) {
            first.jobStore().begin(JobState.begin("job", "fingerprint", 1, DeltaSinkIT.plan()));
            first.write(DeltaSinkIT.batch(1, Map.of(0, 1L), DeltaSinkIT.row("a", "created", "1", 0, 0)));
            try (Sink second = sink(table, storage)) {
                assertThatThrownBy(() -> second.jobStore().lock("job")).isInstanceOf(JobConflictException.class)
                        .hasMessageContaining("job 'job' is already running").hasMessageContaining("pid "
                                + ProcessHandle.current().pid());
                second.jobStore().lock("other-job").close(); // another job's lock is its own
            }
        }
        try (Sink again = sink(table, storage); AutoCloseable lock = again.jobStore().lock("job")) {
            assertThat(again.jobStore().load("job")).isPresent();
        }
        FileSystem fs = fs(table, storage);
        assertThat(fs.exists(new org.apache.hadoop.fs.Path(table + "/_kbackfill/locks/job.lease")))
                .as("released, nothing left behind").isFalse();
    }

    @Test
    void theLeaseOfARunThatDiedExpiresAndTheNextRunTakesItOver() throws Exception {
        Map<String, String> storage = storage(SharedS3.standard());
        FileSystem fs = fs(table, storage);
        org.apache.hadoop.fs.Path lease = new org.apache.hadoop.fs.Path(table + "/_kbackfill/locks/job.lease");
        // what a run killed with SIGKILL leaves: its lease, last renewed until a second ago
        long expired = System.currentTimeMillis() - 1_000;
        assertThat(ConditionalWrites.createIfAbsent(fs, lease, ("{\"job\":\"job\",\"holder\":\"dead-host pid 1\","
                + "\"since\":0,\"expires\":" + expired + "}").getBytes(StandardCharsets.UTF_8))).isTrue();
        try (Sink next = sink(table, storage); AutoCloseable lock = next.jobStore().lock("job")) {
            String holder = new String(ConditionalWrites.read(fs, lease).orElseThrow().bytes(), StandardCharsets.UTF_8);
            assertThat(holder).contains("pid " + ProcessHandle.current().pid()).doesNotContain("dead-host");
        }
        // and one that is still renewed is not taken
        long live = System.currentTimeMillis() + 60_000;
        assertThat(ConditionalWrites.createIfAbsent(fs, lease, ("{\"job\":\"job\",\"holder\":\"live-host pid 2\","
                + "\"since\":0,\"expires\":" + live + "}").getBytes(StandardCharsets.UTF_8))).isTrue();
        try (Sink next = sink(table, storage)) {
            assertThatThrownBy(() -> next.jobStore().lock("job")).isInstanceOf(JobConflictException.class)
                    .hasMessageContaining("live-host pid 2");
        }
    }

    @Test
    void aRunWhoseLeaseWasTakenOverCommitsNothingMore() throws Exception {
        Map<String, String> storage = storage(SharedS3.standard(), ObjectStoreLease.LEASE_MS, "1500");
        FileSystem fs = fs(table, storage);
        try (Sink s = sink(table, storage); AutoCloseable lock = s.jobStore().lock("job")) {
            s.jobStore().begin(JobState.begin("job", "fingerprint", 1, DeltaSinkIT.plan()));
            s.write(DeltaSinkIT.batch(1, Map.of(0, 1L), DeltaSinkIT.row("a", "created", "1", 0, 0)));
            long version = DeltaTableRows.version(table, storage);
            // a paused run: its lease expired and another run took it over (the takeover, as a write of the lease)
            org.apache.hadoop.fs.Path lease = new org.apache.hadoop.fs.Path(table + "/_kbackfill/locks/job.lease");
            // S3Proxy checks a conditional put and then writes, in two steps: a renewal under way as the takeover
            // is written can pass its check first and write after it, which S3 would refuse. The takeover is
            // written again until it outlasts a renewal (every 500 ms); it failed once on a loaded machine so.
            for (int attempt = 0; attempt < 10; attempt++) {
                try (var out = fs.create(lease, true)) {
                    out.write(("{\"job\":\"job\",\"holder\":\"other pid 3\",\"since\":0,\"expires\":"
                            + (System.currentTimeMillis() + 60_000) + "}").getBytes(StandardCharsets.UTF_8));
                }
                Thread.sleep(600);
                if (new String(ConditionalWrites.read(fs, lease).orElseThrow().bytes(), StandardCharsets.UTF_8)
                        .contains("other pid 3")) {
                    break;
                }
            }
            Thread.sleep(1_200); // past a renewal (every 500 ms), which finds the lease changed
            assertThatThrownBy(() -> s.write(DeltaSinkIT.batch(2, Map.of(0, 2L),
                    DeltaSinkIT.row("a", "paid", "1", 0, 1)))).isInstanceOf(JobConflictException.class)
                    .hasMessageContaining("lost its lease").hasMessageContaining("another run took it over");
            assertThat(DeltaTableRows.version(table, storage)).isEqualTo(version);
            assertThat(DeltaSinkContractIT.rows(table, storage)).containsExactly("a=created/1@0:0");
        }
        assertThat(new String(ConditionalWrites.read(fs, new org.apache.hadoop.fs.Path(
                table + "/_kbackfill/locks/job.lease")).orElseThrow().bytes(), StandardCharsets.UTF_8))
                .as("the lost lease is left to its new holder").contains("other pid 3");
    }

    @Test
    void aCompactionBetweenTwoBatchesOfARunLosesNeitherItsRewriteNorTheRunsRows() throws Exception {
        Map<String, String> storage = storage(SharedS3.standard());
        try (Sink s = sink(table, storage); AutoCloseable lock = s.jobStore().lock("job")) {
            s.jobStore().begin(JobState.begin("job", "fingerprint", 1, DeltaSinkIT.plan()));
            s.write(DeltaSinkIT.batch(1, Map.of(0, 2L), DeltaSinkIT.row("a", "created", "1", 0, 0),
                    DeltaSinkIT.row("b", "created", "2", 0, 1)));
            s.write(DeltaSinkIT.batch(2, Map.of(0, 3L), DeltaSinkIT.row("c", "created", "3", 0, 2)));
            long before = DeltaTableRows.version(table, storage);
            DeltaCompaction.Result compacted = DeltaCompaction.compact(table, storage, Optional.empty(), 1_000);
            assertThat(compacted.version()).isEqualTo(before + 1);
            // the run's cached snapshot is one commit behind: its commit is refused and planned again on the table
            s.write(DeltaSinkIT.batch(3, Map.of(0, 4L), DeltaSinkIT.row("a", "paid", "1", 0, 3)));
            assertThat(DeltaTableRows.version(table, storage)).isEqualTo(before + 2);
            assertThat(s.jobStore().load("job").orElseThrow().nextOffsets()).containsEntry(0, 4L);
        }
        assertThat(DeltaSinkContractIT.rows(table, storage)).containsExactly("a=paid/1@0:3", "b=created/2@0:1",
                "c=created/3@0:2");
    }

    @Test
    void aStoreThatIgnoresConditionalWritesIsRefusedBeforeAnythingIsWritten() throws Exception {
        SharedS3 unconditional = SharedS3.unconditional();
        String path = "s3a://" + unconditional.newBucket() + "/lake/orders";
        Map<String, String> storage = storage(unconditional);
        try (Sink s = sink(path, storage)) {
            assertThatThrownBy(() -> s.jobStore().lock("job")).isInstanceOf(SinkConfigException.class)
                    .hasMessageContaining("does not honour conditional writes")
                    .hasMessageContaining("one commit would be lost");
        }
        FileSystem fs = fs(path, storage);
        assertThat(fs.listFiles(new org.apache.hadoop.fs.Path(path).getParent().getParent(), true).hasNext())
                .as("nothing written").isFalse();
    }
}
