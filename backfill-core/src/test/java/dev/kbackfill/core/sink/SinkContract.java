package dev.kbackfill.core.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Test;

/**
 * What every sink must do, whatever it writes to: the final state of each key, progress stored with it, the one
 * version rule under every conflict mode, deletes as versions, rows kept out counted apart, jobs bound to their
 * spec, resume after a refused batch. A subclass per sink supplies the destination and an independent reader of
 * its rows; the JDBC databases, Delta and the Kafka sink all run it.
 *
 * <p>Rows read back are {@code key=status/amount@partition:offset}, sorted, {@code " deleted"} appended to a
 * soft-deleted row; a key with no row (deleted, never written) is absent.
 */
public abstract class SinkContract {

    protected static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    protected static final String TOPIC = "orders";
    private static final AtomicInteger JOBS = new AtomicInteger();

    /** The job of this test: unique, since some sinks keep job state cluster-wide. */
    protected final String job = "contract-" + getClass().getSimpleName().toLowerCase() + "-" + JOBS.incrementAndGet();

    /** A sink of this kind over this test's destination, not yet opened. */
    /** The settings of the destination under test, with these modes. */
    protected abstract SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create);

    /** A sink of the destination under test, as a run builds it. */
    protected Sink newSink(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return SinkFactory.forSettings(settings(conflict, tombstone, create));
    }

    /** The store of the destination's jobs alone, as {@code status}, {@code reset} and {@code jobs} build it. */
    protected JobStore newJobStore() {
        return SinkFactory.jobStore(settings(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false));
    }

    /**
     * Whether this configuration runs the contract's test {@code test}: every test by default. A configuration that
     * repeats another's sink on a slower medium (the same catalog over an object store) may run the tests its medium
     * changes (writing, replaying, deletes, job state, the lock) and skip, visibly, those it cannot change.
     */
    protected boolean runs(String test) {
        return true;
    }

    @org.junit.jupiter.api.BeforeEach
    void onlyTheTestsThisConfigurationRuns(org.junit.jupiter.api.TestInfo info) {
        String test = info.getTestMethod().orElseThrow().getName();
        assumeTrue(runs(test), test + " runs on another configuration of this sink");
    }

    /** The destination's rows, read by an independent reader, as described above. */
    protected abstract List<String> rows() throws Exception;

    /** Whether the sink knows soft deletes (a topic does not). */
    protected boolean softDeletes() {
        return true;
    }

    /** Whether a second run of a job is refused while one holds it (the Kafka sink fences the first instead). */
    protected boolean refusesSecondRun() {
        return true;
    }

    /** A value this sink's destination cannot hold, for the refused-record case; empty where it takes anything. */
    protected Optional<Map<String, Object>> unwritableValues() {
        Map<String, Object> bad = new LinkedHashMap<>();
        bad.put("status", "y");
        bad.put("amount", "not a number");
        return Optional.of(bad);
    }

    /** A change as this sink's batches carry it; a sink that copies records overrides this to attach the raw record. */
    protected Change change(String topic, String key, Map<String, Object> values, int partition, long offset,
                            long timestamp) {
        return new Change(Map.of("kafka_key", key), values, partition, offset, timestamp);
    }

    /** An open sink with the job's lock: closing it releases both. */
    protected final class Opened implements AutoCloseable {
        public final Sink sink;
        private final AutoCloseable lock;

        public Opened(Sink sink, AutoCloseable lock) {
            this.sink = sink;
            this.lock = lock;
        }

        public WriteResult write(WriteBatch b) {
            return sink.write(b);
        }

        @Override
        public void close() throws Exception {
            try {
                lock.close();
            } finally {
                sink.close();
            }
        }
    }

    protected Opened open(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        Sink s = newSink(conflict, tombstone, create);
        s.open();
        return new Opened(s, s.jobStore().lock(job));
    }

    /** Opens with the job begun (its plan stored). */
    protected Opened begun(ConflictMode conflict, TombstoneMode tombstone) {
        Opened o = open(conflict, tombstone, true);
        o.sink.jobStore().begin(JobState.begin(job, "fingerprint", 1, plan()));
        return o;
    }

    protected static Plan plan() {
        return new Plan(BackfillRequest.builder(TOPIC).from("earliest").to("latest").build(), T0, Optional.empty(),
                Optional.empty(), "cluster", "topic-id", TopicInfo.TimestampType.CREATE_TIME,
                List.of(new PartitionRange(0, 0, 1000, 0, 1000, Optional.empty(), List.of()),
                        new PartitionRange(1, 0, 1000, 0, 1000, Optional.empty(), List.of())), List.of());
    }

    protected Change row(String key, String status, String amount, int partition, long offset) {
        return rowFrom(TOPIC, key, status, amount, partition, offset, T0.plusSeconds(offset));
    }

    protected Change rowFrom(String topic, String key, String status, String amount, int partition, long offset,
                             Instant time) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("status", status);
        values.put("amount", amount == null ? null : new BigDecimal(amount));
        return change(topic, key, values, partition, offset, time.toEpochMilli());
    }

    /**
     * A record of the one key of two fields (region "eu", id 7) with {@code status} (null: its tombstone), its key's
     * fields in the order a producer gave them: region first, or id first.
     */
    protected static Change compoundKeyed(boolean regionFirst, String status, long offset) {
        Map<String, Object> key = new LinkedHashMap<>();
        if (regionFirst) {
            key.put("region", "eu");
        }
        key.put("id", 7L);
        key.putIfAbsent("region", "eu");
        return new Change(key, status == null ? null : Map.of("status", status), 0, offset, T0.toEpochMilli());
    }

    protected Change tombstone(String key, int partition, long offset) {
        return change(TOPIC, key, null, partition, offset, T0.plusSeconds(offset).toEpochMilli());
    }

    /** The change as a reader stamps it when its log time ({@link dev.kbackfill.core.version.LogClock}) is {@code logTime}. */
    protected static Change withLogTime(Change c, long logTime) {
        return new Change(c.key(), c.values(), c.partition(), c.offset(), c.timestamp(), logTime,
                c.source() == null ? null : c.source().withLogTime(logTime));
    }

    protected WriteBatch batch(long sequence, Map<Integer, Long> next, Change... changes) {
        return batchFrom(TOPIC, sequence, next, changes);
    }

    protected WriteBatch batchFrom(String topic, long sequence, Map<Integer, Long> next, Change... changes) {
        List<Change> reduced = Reduction.lastPerKey(List.of(changes));
        return new WriteBatch(job, 1, sequence, reduced, RowShape.of(reduced), next, topic);
    }

    @Test
    void upsertsLeaveTheLastStateOfEachKeyAndStoreProgressWithIt() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 3L), row("a", "created", "1.50", 0, 0), row("b", "created", "2", 0, 1),
                    row("a", "paid", "1.50", 0, 2)));
            s.write(batch(2, Map.of(0, 5L, 1, 1L), row("b", "paid", "2", 0, 4), row("c", "created", null, 1, 0)));
            assertThat(rows()).containsExactly("a=paid/1.5@0:2", "b=paid/2@0:4", "c=created/null@1:0");
            JobState stored = s.sink.jobStore().load(job).orElseThrow();
            assertThat(stored.nextOffsets()).containsEntry(0, 5L).containsEntry(1, 1L);
            assertThat(stored.plan()).isEqualTo(plan());
            assertThat(stored.complete()).isFalse();
        }
    }

    /**
     * The store of the destination's jobs is a role of its own, not the sink: built alone, as {@code status},
     * {@code reset} and {@code jobs} build it (no writer, no table read), it finds the progress the sink's batches
     * committed with their rows.
     */
    @Test
    void aJobStoreBuiltAloneFindsTheProgressTheSinksBatchesCommitted() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            assertThat((Object) s.sink.jobStore()).isNotSameAs(s.sink).isNotInstanceOf(Sink.class);
            assertThat((Object) s.sink).isNotInstanceOf(JobStore.class).isNotInstanceOf(Maintenance.class);
            s.write(batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 0), row("b", "y", "2", 0, 1)));
        }
        try (JobStore store = newJobStore()) {
            assertThat((Object) store).isNotInstanceOf(Sink.class);
            store.openForJobs();
            assertThat(store.jobs()).contains(job);
            JobState stored = store.load(job).orElseThrow();
            assertThat(stored.nextOffsets()).containsEntry(0, 2L);
            assertThat(stored.plan()).isEqualTo(plan());
        }
    }

    @Test
    void replayingTheSameBatchChangesNothing() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            WriteBatch b = batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 0), row("b", "y", "2", 0, 1));
            s.write(b);
            List<String> once = rows();
            s.write(b);
            assertThat(rows()).isEqualTo(once);
        }
    }

    @Test
    void aReplayOfTheVersionsTheTargetHoldsIsKeptOutAndCountedSo() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            WriteBatch b = batch(1, Map.of(0, 3L), row("a", "x", "1", 0, 0), row("b", "y", "2", 0, 1),
                    tombstone("c", 0, 2));
            s.write(b);
            List<String> once = rows();
            WriteResult again = s.write(b);
            assertThat(rows()).isEqualTo(once);
            assertThat(again.upserted()).as("nothing rewritten or re-sent").isZero();
            assertThat(again.keptOut()).isEqualTo(Map.of(0, 3L));
        }
    }

    /**
     * The property every sink must have: records of a few keys over two partitions of two topics, timestamps often
     * going backwards (log times stamped as a reader does), split at random into runs of a sub-range of one log and
     * into batches, the runs written in a random order: each key ends in its newest record by the version rule
     * (absent when that is a delete), and a replay over it changes nothing.
     */
    @Test
    void anySplitIntoRunsAndBatchesInAnyOrderLeavesEachKeyItsNewestRecord() throws Exception {
        anySplitLeavesTheNewest(false, false);
    }

    /**
     * The same property with batches the run lets the sink stage uncommitted ({@link WriteBatch#commits} false, the
     * last of each run committing them): a sink that stages reduces a key across the batches of one commit and must
     * end in the same state; every change is counted once, by the result of the batch that committed it.
     */
    @Test
    void anySplitIntoStagedBatchesAndCommitsLeavesEachKeyItsNewestRecordAndCountsEachChangeOnce() throws Exception {
        anySplitLeavesTheNewest(false, true);
    }

    /** Whether this sink orders versions by a value field ({@code --version-field}); those that do not refuse it. */
    protected boolean supportsVersionField() {
        return false;
    }

    /** The version field the sink's settings name ({@link SinkSettings#versionField()}), for the test that uses one. */
    protected java.util.Optional<dev.kbackfill.core.version.VersionField> versionField = java.util.Optional.empty();

    /**
     * The same property with versions ordered by a value field first ({@code --version-field}): whole numbers that
     * often disagree with the logs' order, some changes without the field (older than any with it: the SPI takes them
     * from a library caller, though the command line makes such records poison), tombstones taking
     * the field of the nearest record before them in their partition ({@link dev.kbackfill.core.record.FieldClock},
     * as every run stamps them).
     */
    @Test
    void withAVersionFieldAnySplitIntoRunsAndBatchesInAnyOrderLeavesEachKeyItsNewestByTheField() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(supportsVersionField(), "the sink refuses --version-field");
        versionField = java.util.Optional.of(dev.kbackfill.core.version.VersionField.parse("lsn"));
        anySplitLeavesTheNewest(true, false);
    }

    private void anySplitLeavesTheNewest(boolean byField, boolean staged) throws Exception {
        java.util.Random random = new java.util.Random(31 + getClass().getSimpleName().hashCode() + (byField ? 1 : 0));
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            java.util.Map<String, String> expected = new java.util.TreeMap<>();
            long sequence = 0;
            for (int trial = 0; trial < 3; trial++) {
                String prefix = "t" + trial + "k";
                // the logs: per topic and partition, records in offset order with their log times
                List<Map.Entry<String, Change[]>> runs = new java.util.ArrayList<>();
                java.util.Map<String, dev.kbackfill.core.version.Version> newest = new java.util.HashMap<>();
                java.util.Map<String, Boolean> deleted = new java.util.HashMap<>();
                for (String topic : List.of(TOPIC, TOPIC + "-corrections")) {
                    for (int p = 0; p < 2; p++) {
                        List<Change> log = new java.util.ArrayList<>();
                        dev.kbackfill.core.record.FieldClock fields = new dev.kbackfill.core.record.FieldClock(
                                dev.kbackfill.core.record.FieldClock.Seeds.NONE);
                        long ts = T0.toEpochMilli() + random.nextInt(50);
                        long logTime = Long.MIN_VALUE;
                        int size = 1 + random.nextInt(7);
                        for (long o = 0; o < size; o++) {
                            ts += random.nextInt(3) == 0 ? -random.nextInt(40) : random.nextInt(20);
                            logTime = Math.max(logTime, ts);
                            String key = prefix + random.nextInt(3);
                            boolean delete = random.nextInt(5) == 0;
                            Map<String, Object> values = new LinkedHashMap<>();
                            values.put("status", topic.length() + "-" + trial);
                            values.put("amount", null);
                            Change c = withLogTime(change(topic, key, delete ? null : values, p, o, ts), logTime);
                            if (byField) {
                                // a fifth of the records lack the field (older than any record with it)
                                c = fields.stamp(delete || random.nextInt(5) == 0 ? c
                                        : c.withVersionField((long) random.nextInt(5)));
                            }
                            log.add(c);
                            dev.kbackfill.core.version.Version v = new dev.kbackfill.core.version.Version(topic, p, o,
                                    ts, logTime, c.versionField());
                            if (v.supersedes(newest.get(key))) {
                                newest.put(key, v);
                                deleted.put(key, delete);
                            }
                        }
                        int at = 0;
                        while (at < log.size()) {
                            int to = Math.min(log.size(), at + 1 + random.nextInt(log.size()));
                            runs.add(Map.entry(topic, log.subList(at, to).toArray(new Change[0])));
                            at = random.nextInt(3) == 0 ? Math.max(at + 1, to - 1) : to; // sometimes overlapping
                        }
                    }
                }
                java.util.Collections.shuffle(runs, random);
                runs.add(runs.get(random.nextInt(runs.size()))); // and one replayed
                long changes = 0;
                long counted = 0;
                for (Map.Entry<String, Change[]> entry : runs) {
                    String topic = entry.getKey();
                    Change[] run = entry.getValue();
                    int at = 0;
                    while (at < run.length) {
                        int to = Math.min(run.length, at + 1 + random.nextInt(3));
                        Change[] slice = java.util.Arrays.copyOfRange(run, at, to);
                        WriteBatch batch = batchFrom(topic, ++sequence, Map.of(slice[0].partition(),
                                slice[slice.length - 1].offset() + 1), slice);
                        if (staged) {
                            batch = batch.committing(to == run.length || random.nextInt(4) == 0);
                        }
                        WriteResult r = s.write(batch);
                        changes += batch.changes().size();
                        counted += r.upserted() + r.deleted() + r.ignored() + r.keptOutTotal()
                                + r.superseded().values().stream().mapToLong(Long::longValue).sum();
                        at = to;
                    }
                }
                if (staged && s.sink.stagingRows() > 0) {
                    // (a sink that commits every batch counts as it always does: a table partitioned by a value
                    // column holds a batch's deletes back for the batch that carries their partition)
                    assertThat(counted).as("each change counted once, by the batch that committed it").isEqualTo(changes);
                }
                int t = trial;
                newest.forEach((key, v) -> {
                    if (!deleted.get(key)) {
                        expected.put(key, key + "=" + v.topic().length() + "-" + t + "/null@" + v.partition() + ":"
                                + v.offset());
                    }
                });
            }
            assertThat(rows()).containsExactlyElementsOf(expected.values());
        }
    }

    /** The metadata columns of another writer's sink: names the target does not have, so it leaves kbackfill's NULL. */
    protected static final SinkSettings.MetadataColumns FOREIGN_METADATA = new SinkSettings.MetadataColumns(
            "live_partition", "live_offset", "live_timestamp", "live_deleted", "live_topic", "live_log_time",
            "live_version");

    /**
     * Another writer of this test's destination, as a live pipeline writes it: rows (or records) without kbackfill's
     * version, its own column of the version field ({@code lsn}) where it writes one. The default drives this very
     * sink kind under overwrite with metadata columns named {@link #FOREIGN_METADATA} (kbackfill's columns are then
     * value columns its records lack: NULL, or, where {@code keepOurColumns}, left as they are) through
     * {@link #newForeignSink}; empty where the sink has no such writer.
     */
    protected java.util.Optional<ForeignWriter> foreignWriter(boolean keepOurColumns) {
        Sink sink = newForeignSink(keepOurColumns);
        if (sink == null) {
            return java.util.Optional.empty();
        }
        sink.open();
        String writer = job + "-live";
        AutoCloseable lock = sink.jobStore().lock(writer);
        sink.jobStore().begin(JobState.begin(writer, "fingerprint", 1, plan()));
        long[] sequence = {0};
        return java.util.Optional.of(new ForeignWriter() {
            @Override
            public void write(String key, Map<String, Object> values) {
                Change c = change(TOPIC, key, values, 0, 0, T0.toEpochMilli());
                sink.write(new WriteBatch(writer, 1, ++sequence[0], List.of(c), RowShape.of(List.of(c)), Map.of(), TOPIC));
            }

            @Override
            public void close() throws Exception {
                try {
                    lock.close();
                } finally {
                    sink.close();
                }
            }
        });
    }

    /**
     * This sink kind over this test's destination as another writer uses it: {@link #FOREIGN_METADATA}, overwrite,
     * hard deletes, no table created; {@code keepOurColumns} writes only {@code status}, {@code amount} and {@code lsn}
     * where the sink can leave the other columns as they are. Null where the sink kind has no such writer.
     */
    protected Sink newForeignSink(boolean keepOurColumns) {
        return null;
    }

    /** Another writer of the destination ({@link #foreignWriter}). */
    protected interface ForeignWriter extends AutoCloseable {
        /** Writes the key's row as {@code values} (null: deletes it), as a live pipeline applies a record. */
        void write(String key, Map<String, Object> values);
    }

    /**
     * Beside a live writer: a seeded random log of two partitions (keys of one partition each, a fifth of the records
     * deletes, each record's status naming its offset); another writer applies a random suffix of each partition's
     * log to the target record by record, rows without kbackfill's version (with and without the payload version
     * {@code lsn}, its own columns of kbackfill's nulled or left alone), interleaved at random with the runs of a
     * backfill over random ranges (covering everything before the suffix, often overlapping it), split at random into
     * batches. Each run leaves out, as a run does after reading the log after its range, the records whose key has a
     * later one there, and writes the rest as its key's newest in the log. No backfill write ever makes a row older
     * than it was; when both are done, every key holds its last record (or none after a delete).
     */
    @Test
    void besideALiveWriterNoBackfillWriteMakesARowOlderAndBothEndInTheLogsLastRecords() throws Exception {
        int ran = 0;
        // the field first: the table made for it has its version column, which not every sink can add later
        for (int variant : new int[] {2, 0, 1}) {
            boolean byField = variant == 2;
            if (byField && !supportsVersionField() || variant == 1 && newForeignSink(true) == null && !keepsColumns()) {
                continue;
            }
            boolean keepOurColumns = variant == 1;
            versionField = byField ? java.util.Optional.of(dev.kbackfill.core.version.VersionField.parse("lsn"))
                    : java.util.Optional.empty();
            java.util.Optional<ForeignWriter> probe;
            // the table made by a first batch of kbackfill's, with every column the rows use
            try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
                Map<String, Object> seed = new LinkedHashMap<>();
                seed.put("status", "seed");
                seed.put("amount", null);
                seed.put("lsn", 0L);
                Change first = change(TOPIC, "v" + variant + "-seed", seed, 0, 0, T0.toEpochMilli());
                s.write(new WriteBatch(job, 1, 1, List.of(first.withVersionField(byField ? 0L : null)),
                        RowShape.of(List.of(first)), Map.of(0, 1L), TOPIC));
            }
            probe = foreignWriter(keepOurColumns);
            if (probe.isEmpty()) {
                continue;
            }
            try (ForeignWriter live = probe.get()) {
                liveWriterRounds(live, new java.util.Random(52 + variant * 7 + getClass().getSimpleName().hashCode()),
                        "v" + variant, byField);
            }
            ran++;
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(ran > 0, "this sink has no foreign writer here");
    }

    /** Rounds of the live-writer property: two, fewer where every run costs seconds (a topic's transactions). */
    protected int liveWriterRounds() {
        return 2;
    }

    /** Whether another writer of this sink can write some columns of a row and leave the others ({@link #foreignWriter}). */
    protected boolean keepsColumns() {
        return false;
    }

    private void liveWriterRounds(ForeignWriter live, java.util.Random random, String prefix, boolean byField)
            throws Exception {
        java.util.Map<String, String> expected = new java.util.TreeMap<>();
        for (int round = 0; round < liveWriterRounds(); round++) {
            // the log: per partition, records in offset order; keys of one partition each; lsn grows along the log
            List<List<Change>> logs = new java.util.ArrayList<>();
            long lsn = 1;
            for (int p = 0; p < 2; p++) {
                List<Change> log = new java.util.ArrayList<>();
                int size = 6 + random.nextInt(6);
                for (long o = 0; o < size; o++) {
                    String key = prefix + "r" + round + "p" + p + "k" + random.nextInt(3);
                    boolean delete = random.nextInt(5) == 0;
                    Map<String, Object> values = new LinkedHashMap<>();
                    values.put("status", "p" + p + "o" + o);
                    values.put("amount", null);
                    values.put("lsn", lsn);
                    Change c = change(TOPIC, key, delete ? null : values, p, o, T0.plusSeconds(o).toEpochMilli());
                    log.add(c.withVersionField(byField ? lsn : null));
                    lsn++;
                }
                logs.add(log);
            }
            // each key's last record
            java.util.Map<String, Change> last = new java.util.HashMap<>();
            logs.forEach(log -> log.forEach(c -> last.put((String) c.key().get("kafka_key"), c)));
            last.forEach((k, c) -> {
                if (!c.isTombstone()) {
                    expected.put(k, k + "=" + c.values().get("status"));
                } else {
                    expected.remove(k);
                }
            });
            // the live writer's suffix, and the backfill's runs: ranges that cover everything before it
            int[] suffix = new int[2];
            List<int[]> runs = new java.util.ArrayList<>(); // {partition, start, end}
            for (int p = 0; p < 2; p++) {
                int size = logs.get(p).size();
                suffix[p] = random.nextInt(size + 1);
                int at = 0;
                int cover = Math.min(size, suffix[p] + random.nextInt(3)); // often overlapping the suffix
                while (at < cover) {
                    int to = Math.min(cover, at + 1 + random.nextInt(4));
                    runs.add(new int[] {p, at, to});
                    at = to;
                }
            }
            java.util.Collections.shuffle(runs, random);
            // the order of events: a live step (one record) or a backfill run, at random
            int[] livePos = suffix.clone();
            java.util.Map<String, Long> applied = new java.util.HashMap<>(); // per key, the offset of its state
            java.util.Iterator<int[]> pending = runs.iterator();
            while (pending.hasNext() || livePos[0] < logs.get(0).size() || livePos[1] < logs.get(1).size()) {
                boolean liveLeft = livePos[0] < logs.get(0).size() || livePos[1] < logs.get(1).size();
                if (liveLeft && (!pending.hasNext() || random.nextInt(3) != 0)) {
                    int p = livePos[0] >= logs.get(0).size() ? 1 : livePos[1] >= logs.get(1).size() ? 0
                            : random.nextInt(2);
                    Change c = logs.get(p).get(livePos[p]++);
                    live.write((String) c.key().get("kafka_key"), c.values());
                    applied.put((String) c.key().get("kafka_key"), c.offset());
                    seen = null;
                    continue;
                }
                int[] run = pending.next();
                backfillRun(logs, run, random, applied);
            }
        }
        List<String> held = new java.util.ArrayList<>();
        for (String row : rows()) {
            String key = row.substring(0, row.indexOf('='));
            if (key.startsWith(prefix + "r")) {
                held.add(row.substring(0, row.indexOf('/')));
            }
        }
        assertThat(held).as("every key its last record").containsExactlyElementsOf(expected.values());
    }

    /**
     * One run of a backfill over {@code run} ({partition, start, end}) beside the live writer: the records whose key
     * has a later record in the log are left out (as a run reads the log from its start), the rest written
     * in random batches as their keys' newest in the log; no write makes a row older than it was.
     */
    private void backfillRun(List<List<Change>> logs, int[] run, java.util.Random random,
                             java.util.Map<String, Long> applied) throws Exception {
        int p = run[0];
        // each key's newest record in the log (keys of one partition each): what the run reads from its start on
        java.util.Map<Object, Long> newestOffset = new java.util.HashMap<>();
        logs.get(p).forEach(c -> newestOffset.put(c.key().get("kafka_key"), c.offset()));
        List<Change> range = logs.get(p).subList(run[1], run[2]);
        try (Opened s = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            String name = job + "-p" + p + "-" + run[1];
            s.sink.jobStore().begin(JobState.begin(name, "fingerprint", 1, plan()));
            int at = 0;
            while (at < range.size()) {
                int to = Math.min(range.size(), at + 1 + random.nextInt(3));
                List<Change> reduced = Reduction.lastPerKey(range.subList(at, to));
                List<Change> newest = reduced.stream()
                        .filter(c -> newestOffset.get(c.key().get("kafka_key")) == c.offset()).toList();
                java.util.Map<String, String> before = seen != null ? seen : statuses();
                s.write(new WriteBatch(name, 1, at + 1, newest, RowShape.of(newest.isEmpty() ? reduced : newest),
                        Map.of(p, range.get(to - 1).offset() + 1), TOPIC, true,
                        dev.kbackfill.core.version.Version.ForeignRows.NEWEST_IN_LOG));
                java.util.Map<String, String> after = statuses();
                seen = after;
                for (Change c : newest) {
                    String key = (String) c.key().get("kafka_key");
                    if (java.util.Objects.equals(before.get(key), after.get(key))) {
                        continue; // kept out, or written as it was
                    }
                    long now = after.containsKey(key) ? Long.parseLong(after.get(key).replaceFirst("^p\\do", ""))
                            : c.offset(); // deleted by this batch's tombstone
                    assertThat(now).as("key " + key + ": a backfill write never makes its row older (it held the "
                            + "record at " + applied.get(key) + ")").isGreaterThanOrEqualTo(applied.getOrDefault(key, -1L));
                    applied.put(key, now);
                }
                at = to;
            }
        }
    }

    /**
     * A row another writer wrote, met by a record: kept (counted as kept out) where nothing says the record is newer,
     * replaced where the run found it its key's newest in the log or the user said no other writer exists; and,
     * where the job orders by a version field and the row holds it in its own column, by that field whatever the
     * batch says. The same for a delete.
     */
    @Test
    void aRowOfAnotherWriterIsReplacedOnlyWhereTheLogOrItsOwnVersionFieldSaysTheRecordIsNewer() throws Exception {
        for (boolean byField : new boolean[] {true, false}) { // the table made for the field has its column
            if (byField && !supportsVersionField()) {
                continue;
            }
            versionField = byField ? java.util.Optional.of(dev.kbackfill.core.version.VersionField.parse("lsn"))
                    : java.util.Optional.empty();
            String k = byField ? "f" : "n";
            try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
                s.write(foreignBatch(1, List.of(versioned(k + "-seed", "seed", 0, 0, 1L)), Version.ForeignRows.KEPT));
            }
            java.util.Optional<ForeignWriter> foreign = foreignWriter(false);
            org.junit.jupiter.api.Assumptions.assumeTrue(foreign.isPresent(), "this sink has no foreign writer here");
            try (ForeignWriter live = foreign.get()) {
                for (String key : List.of(k + "-kept", k + "-newest", k + "-replaced", k + "-deleted")) {
                    live.write(key, values("live", 10L));
                }
            }
            try (Opened s = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
                String name = job + "-" + k;
                s.sink.jobStore().begin(JobState.begin(name, "fingerprint", 1, plan()));
                // the record's field below the row's own (5 against 10), or none where the job has no field
                WriteResult kept = s.write(named(name, foreignBatch(2, List.of(versioned(k + "-kept", "backfill", 0, 5,
                        byField ? 5L : null)), Version.ForeignRows.KEPT)));
                WriteResult newest = s.write(named(name, foreignBatch(3, List.of(versioned(k + "-newest", "backfill", 0,
                        6, byField ? 5L : null)), Version.ForeignRows.NEWEST_IN_LOG)));
                boolean own = byField && foreignRowsHoldTheirField();
                WriteResult replaced = s.write(named(name, foreignBatch(4, List.of(versioned(k + "-replaced", "backfill",
                        0, 7, byField ? 20L : null)), own ? Version.ForeignRows.KEPT : Version.ForeignRows.REPLACED)));
                Change delete = tombstone(k + "-deleted", 0, 8).withVersionField(byField ? 20L : null);
                s.write(named(name, foreignBatch(5, List.of(delete), Version.ForeignRows.NEWEST_IN_LOG)));
                assertThat(kept.keptOutTotal()).isEqualTo(1);
                assertThat(statuses()).containsEntry(k + "-kept", "live")
                        // by its own field the row is newer (10 against 5), whatever the log says
                        .containsEntry(k + "-newest", own ? "live" : "backfill")
                        .containsEntry(k + "-replaced", "backfill")
                        .doesNotContainKey(k + "-deleted");
                assertThat(newest.keptOutTotal()).isEqualTo(own ? 1 : 0);
                assertThat(replaced.upserted()).isEqualTo(1);
            }
        }
    }

    /**
     * Whether a row of another writer is read with its own column of the version field; a topic's records are not
     * decoded for it (their order is the log's).
     */
    protected boolean foreignRowsHoldTheirField() {
        return true;
    }

    /**
     * A batch whose recheck finds a change superseded in the log by the time its writes hold their place (a live writer
     * applied a newer record meanwhile) commits nothing, rows or progress, and names the change; written again without
     * it, it commits the rest.
     */
    @Test
    void aBatchTheLogSupersedesBeforeItsCommitCommitsNothingAndNamesTheChange() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("a", "first", "1", 0, 0), row("b", "first", "1", 0, 1)));
            Change a = row("a", "second", "2", 0, 2);
            Change b = row("b", "second", "2", 0, 3);
            WriteBatch batch = new WriteBatch(job, 1, 2, List.of(a, b), RowShape.of(List.of(a, b)), Map.of(0, 4L), TOPIC,
                    true, Version.ForeignRows.NEWEST_IN_LOG).rechecking(changes -> changes.stream()
                    .filter(c -> "b".equals(c.key().get("kafka_key"))).toList());
            assertThatThrownBy(() -> s.write(batch)).isInstanceOfSatisfying(SupersededInLogException.class,
                    e -> assertThat(e.changes()).extracting(c -> c.key().get("kafka_key")).containsExactly("b"));
            assertThat(rows()).as("nothing of the batch").containsExactly("a=first/1@0:0", "b=first/1@0:1");
            assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 2L);
            s.write(batch.without(List.of(b)).rechecking(WriteBatch.Recheck.NONE));
            assertThat(rows()).containsExactly("a=second/2@0:2", "b=first/1@0:1");
            assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 4L);
        }
    }

    private static Map<String, Object> values(String status, Long lsn) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("status", status);
        v.put("amount", null);
        v.put("lsn", lsn);
        return v;
    }

    private Change versioned(String key, String status, int partition, long offset, Long lsn) {
        return change(TOPIC, key, values(status, lsn), partition, offset, T0.plusSeconds(offset).toEpochMilli())
                .withVersionField(lsn);
    }

    private WriteBatch foreignBatch(long sequence, List<Change> changes, Version.ForeignRows foreign) {
        return new WriteBatch(job, 1, sequence, changes, RowShape.of(changes), Map.of(0, changes.get(0).offset() + 1),
                TOPIC, true, foreign);
    }

    private static WriteBatch named(String name, WriteBatch b) {
        return new WriteBatch(name, b.run(), b.sequence(), b.changes(), b.shape(), b.nextOffsets(), b.topic(), b.commits(),
                b.foreignRows());
    }

    /**
     * Keys that differ only by case, by accents, by Unicode normalisation (NFC and NFD), by trailing spaces, or are
     * long, mixed with deletes, split at random into batches, with and without a fresh table: one row per distinct key
     * (its bytes), each its last record, and a delete removes its own key's row only. The keys a collation other than a
     * binary one folds together (MariaDB's and MySQL's default ones fold case, accents and trailing spaces).
     */
    @Test
    void aKeyIsItsBytesCaseAccentsNormalisationAndTrailingSpacesAllDistinctAndLongKeysKept() throws Exception {
        java.util.Random random = new java.util.Random(59);
        String longKey = "L".repeat(300);
        List<String> keys = List.of("Key", "key", "KEY", "e", "\u00e9", "e\u0301", "sp", "sp ", "sp  ", "user@x.com",
                "USER@X.COM", "\u00df", "ss", "\u0130", "i", longKey, longKey + "x", longKey.toLowerCase());
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            Map<String, String> expected = new java.util.TreeMap<>();
            long offset = 0;
            long sequence = 0;
            for (int round = 0; round < 3; round++) {
                List<Change> log = new java.util.ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    String key = keys.get(random.nextInt(keys.size()));
                    boolean delete = random.nextInt(4) == 0;
                    String status = "r" + round + "o" + offset;
                    log.add(delete ? tombstone(key, 0, offset) : row(key, status, "1", 0, offset));
                    if (delete) {
                        expected.remove(key);
                    } else {
                        expected.put(key, status);
                    }
                    offset++;
                }
                int at = 0;
                while (at < log.size()) {
                    int to = Math.min(log.size(), at + 1 + random.nextInt(8));
                    s.write(batch(++sequence, Map.of(0, log.get(to - 1).offset() + 1),
                            log.subList(at, to).toArray(new Change[0])));
                    at = to;
                }
            }
            assertThat(statuses()).as("one row per distinct key, its last record").isEqualTo(expected);
        }
    }

    /** The statuses read last, while no other writer wrote since; null otherwise. */
    private java.util.Map<String, String> seen;

    /** The status of each key's row: the record it holds ({@code pPoO}). */
    protected java.util.Map<String, String> statuses() throws Exception {
        java.util.Map<String, String> out = new java.util.HashMap<>();
        for (String row : rows()) {
            int eq = row.indexOf('=');
            out.put(row.substring(0, eq), row.substring(eq + 1, row.indexOf('/', eq)));
        }
        return out;
    }

    /**
     * A row is its key's last record: a field that record lacks is NULL, never a value an older record of the key left
     * in the column, whether the older record was written by an earlier batch or reduced away in the same one.
     */
    @Test
    void aFieldTheKeysLastRecordLacksIsNullInItsRowWhateverTheBatch() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 0), row("b", "x", "2", 0, 1)));
            Map<String, Object> statusOnly = new LinkedHashMap<>();
            statusOnly.put("status", "y");
            s.write(batch(2, Map.of(0, 5L), change(TOPIC, "a", statusOnly, 0, 2, T0.plusSeconds(2).toEpochMilli()),
                    row("c", "x", "3", 0, 3),
                    change(TOPIC, "c", statusOnly, 0, 4, T0.plusSeconds(4).toEpochMilli())));
            assertThat(rows()).containsExactly("a=y/null@0:2", "b=x/2@0:1", "c=y/null@0:4");
        }
    }

    @Test
    void newerWinsNeverRegressesARowWrittenFromALaterRecordAndCountsWhatItKeptOut() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 51L), row("a", "new", "9", 0, 50), row("b", "new", "9", 1, 50)));
            // an older replay: same partition, lower offset; another partition, older timestamp
            WriteResult r = s.write(batch(2, Map.of(0, 51L), row("a", "old", "1", 0, 10), row("b", "old", "1", 0, 20),
                    row("c", "fresh", "1", 0, 30)));
            assertThat(rows()).containsExactly("a=new/9@0:50", "b=new/9@1:50", "c=fresh/1@0:30");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 2L));
            assertThat(r.upserted()).isEqualTo(1);
            // a newer record does replace it
            s.write(batch(3, Map.of(0, 61L), row("a", "newer", "2", 0, 60)));
            assertThat(rows()).containsExactly("a=newer/2@0:60", "b=new/9@1:50", "c=fresh/1@0:30");
        }
    }

    @Test
    void theSinkListsTheJobsItHoldsStateForAndForgetsAResetOne() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 1)));
            assertThat(s.sink.jobStore().jobs()).contains(job);
            assertThat(s.sink.jobStore().loadAll(List.of(job, job + "-never-ran")))
                    .containsOnlyKeys(job).containsEntry(job, s.sink.jobStore().load(job).orElseThrow());
            s.sink.jobStore().reset(job);
            assertThat(s.sink.jobStore().jobs()).doesNotContain(job);
        }
    }

    @Test
    void overwriteLetsTheLastWriteWin() throws Exception {
        try (Opened s = begun(ConflictMode.OVERWRITE, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 51L), row("a", "new", "9", 0, 50)));
            s.write(batch(2, Map.of(0, 51L), row("a", "old", "1", 0, 10)));
            assertThat(rows()).containsExactly("a=old/1@0:10");
        }
    }

    @Test
    void insertOnlyKeepsExistingRowsIgnoresTombstonesAndCountsExistingKeysAsKeptOut() throws Exception {
        try (Opened s = begun(ConflictMode.INSERT_ONLY, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("a", "first", "1", 0, 1)));
            WriteResult r = s.write(batch(2, Map.of(0, 9L), row("a", "second", "2", 0, 5), row("b", "first", "3", 0, 6),
                    tombstone("c", 0, 8)));
            assertThat(rows()).containsExactly("a=first/1@0:1", "b=first/3@0:6");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(r.ignored()).isEqualTo(1);
        }
    }

    @Test
    void aTombstoneDeletesTheRowButNotANewerOne() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 51L), row("a", "x", "1", 0, 10), row("b", "x", "1", 0, 50)));
            s.write(batch(2, Map.of(0, 51L), tombstone("a", 0, 20), tombstone("b", 0, 30)));
            assertThat(rows()).containsExactly("b=x/1@0:50");
        }
    }

    @Test
    void aReplayOlderThanADeleteNeverBringsTheKeyBack() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 3L), row("gone", "x", "1", 0, 1), row("kept", "x", "1", 0, 2)));
            // the delete of a key, and the delete of a key the destination never held: both are versions
            s.write(batch(2, Map.of(0, 10L), tombstone("gone", 0, 9), tombstone("never", 0, 8)));
            assertThat(rows()).containsExactly("kept=x/1@0:2");
            WriteResult r = s.write(batch(3, Map.of(0, 10L), row("gone", "stale", "5", 0, 4),
                    row("never", "stale", "5", 0, 3), row("kept", "y", "2", 0, 5)));
            assertThat(rows()).containsExactly("kept=y/2@0:5");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 2L));
            assertThat(r.upserted()).isEqualTo(1);
            // a record newer than the delete does bring it back
            s.write(batch(4, Map.of(0, 20L), row("gone", "again", "7", 0, 19)));
            assertThat(rows()).containsExactly("gone=again/7@0:19", "kept=y/2@0:5");
        }
    }

    /** Whether the sink keys its rows by the key's fields (a table's key columns), not by a record's key bytes. */
    protected boolean keysByFields() {
        return true;
    }

    /**
     * A delete of a compound key is a version whatever order the key's fields come in: deleted as (id, region), the
     * key keeps out an older record that gives them as (region, id), and the other way round; a newer record brings it
     * back; verify sees the delete as the writes do. A lake table's ledger held a key as its values in its batch's
     * order, and brought such an older record back as a row.
     */
    @Test
    void aDeleteOfACompoundKeyHoldsWhateverTheOrderOfItsFields() throws Exception {
        assumeTrue(keysByFields(), "a topic keys its records by their key bytes");
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 1L), compoundKeyed(true, "first", 0)));
            assertThat(s.write(batch(2, Map.of(0, 6L), compoundKeyed(false, null, 5))).deleted()).isEqualTo(1);
            WriteResult older = s.write(batch(3, Map.of(0, 6L), compoundKeyed(true, "older", 3)));
            assertThat(older.upserted()).isZero();
            assertThat(older.keptOut()).isEqualTo(Map.of(0, 1L));

            assertThat(s.write(batch(4, Map.of(0, 7L), compoundKeyed(false, "newer", 6))).upserted()).isEqualTo(1);
            assertThat(s.write(batch(5, Map.of(0, 9L), compoundKeyed(true, null, 8))).deleted()).isEqualTo(1);
            Change stale = compoundKeyed(false, "older", 7);
            older = s.write(batch(6, Map.of(0, 9L), stale));
            assertThat(older.upserted()).isZero();
            assertThat(older.keptOut()).isEqualTo(Map.of(0, 1L));
            // verify reads the key's delete as the writes do
            try (dev.kbackfill.core.verify.TargetLookup lookup = s.sink.verifier()) {
                dev.kbackfill.core.verify.TargetRow held = lookup.lookup(List.of(stale), TOPIC, Change::values)
                        .get(dev.kbackfill.core.record.KeyIdentity.of(stale.key()));
                assertThat(held).isNotNull();
                assertThat(held.live()).isFalse();
                assertThat(held.deletedAt().offset()).isEqualTo(8);
            }
        }
    }

    /**
     * The value column a new table of this sink is partitioned by ({@code --partition-by}), if any: such a table cannot
     * be created from deletes (the column's type is unknown until a record carries it).
     */
    protected Optional<String> partitionedByAValue() {
        return Optional.empty();
    }

    /**
     * A range of deletes only, into a destination that does not exist yet: the job and its deletes are stored (the
     * table created from the key columns), so that an older replay of any job is kept out, and the values the next
     * batches bring get their columns. A table partitioned by a value column holds the deletes back for the first
     * batch that carries it, and says meanwhile that nothing records the job.
     */
    @Test
    void aFirstBatchOfOnlyDeletesStoresTheJobAndTheDeletesInANewDestination() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            WriteResult deletes = s.write(batch(1, Map.of(0, 10L), tombstone("a", 0, 8), tombstone("b", 0, 9)));
            if (partitionedByAValue().isPresent()) {
                assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).as("nothing stored yet").containsEntry(0, 0L);
                assertThat(s.sink.warnings()).anySatisfy(w -> assertThat(w).contains("no record so far carries "
                        + partitionedByAValue().get() + ", which --partition-by partitions by")
                        .contains("nothing records the job or its 2 change(s)"));
                s.write(batch(2, Map.of(0, 12L), row("c", "new", "3", 0, 11)));
                assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 12L);
                assertThat(s.sink.warnings()).noneSatisfy(w -> assertThat(w).contains("nothing records"));
            } else {
                assertThat(deletes.deleted()).isEqualTo(2);
                assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 10L);
                assertThat(rows()).isEmpty();
                s.write(batch(2, Map.of(0, 12L), row("c", "new", "3", 0, 11)));
            }
        }
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            WriteResult r = s.write(batch(1, Map.of(0, 12L), row("a", "stale", "5", 0, 4)));
            assertThat(r.keptOut()).as("older than the stored delete").isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("c=new/3@0:11");
        }
    }

    @Test
    void aDeleteStaysAVersionForTheNextRunOfAnyJob() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 3L), row("gone", "x", "1", 0, 1), row("kept", "x", "1", 0, 2)));
            s.write(batch(2, Map.of(0, 10L), tombstone("gone", 0, 9)));
        }
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            WriteResult r = s.write(batch(1, Map.of(0, 5L), row("gone", "stale", "5", 0, 4)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("kept=x/1@0:2");
        }
    }

    @Test
    void softDeleteKeepsTheVersionSoAnOlderReplayCannotResurrectTheKey() throws Exception {
        assumeTrue(softDeletes(), "no soft deletes in this sink");
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.SOFT_DELETE)) {
            s.write(batch(1, Map.of(0, 11L), row("a", "x", "1", 0, 10)));
            s.write(batch(2, Map.of(0, 21L), tombstone("a", 0, 20)));
            s.write(batch(3, Map.of(0, 21L), row("a", "stale", "5", 0, 15)));
            assertThat(rows()).containsExactly("a=x/1@0:20 deleted");
            s.write(batch(4, Map.of(0, 31L), row("a", "back", "6", 0, 30)));
            assertThat(rows()).containsExactly("a=back/6@0:30");
        }
    }

    @Test
    void insertOnlyNeverTouchesARowEvenASoftDeletedOne() throws Exception {
        assumeTrue(softDeletes(), "no soft deletes in this sink");
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.SOFT_DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 1)));
            s.write(batch(2, Map.of(0, 3L), tombstone("a", 0, 2)));
        }
        try (Opened s = begun(ConflictMode.INSERT_ONLY, TombstoneMode.SOFT_DELETE)) {
            WriteResult r = s.write(batch(1, Map.of(0, 52L), row("a", "new", "2", 0, 50), row("b", "new", "2", 0, 51)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("a=x/1@0:2 deleted", "b=new/2@0:51");
        }
    }

    @Test
    void aNewerRecordFromAnotherTopicWinsOverAnOlderOneWithAHigherOffset() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            // orders-v1 at high offsets, then orders-v2 starting again at offset 0, a month later
            s.write(batchFrom("orders-v1", 1, Map.of(0, 1000L), rowFrom("orders-v1", "a", "v1", "1", 0, 900, T0),
                    rowFrom("orders-v1", "b", "v1", "1", 0, 901, T0.plusSeconds(86_400 * 40))));
            WriteResult r = s.write(batchFrom("orders-v2", 2, Map.of(0, 5L),
                    rowFrom("orders-v2", "a", "v2", "2", 0, 3, T0.plusSeconds(86_400 * 31)),
                    rowFrom("orders-v2", "b", "v2-older", "2", 0, 4, T0.plusSeconds(86_400 * 31))));
            assertThat(rows()).containsExactly("a=v2/2@0:3", "b=v1/1@0:901");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            // within orders-v2 the offset decides, whatever the timestamps: offset 5's clock ran behind, its log time
            // is that of the offsets before it
            s.write(batchFrom("orders-v2", 3, Map.of(0, 6L), withLogTime(rowFrom("orders-v2", "a", "v2-later", "3", 0, 5,
                    T0), T0.plusSeconds(86_400 * 31).toEpochMilli())));
            assertThat(rows()).containsExactly("a=v2-later/3@0:5", "b=v1/1@0:901");
        }
    }

    @Test
    void equalTimestampsAcrossPartitionsAreDecidedByTheFixedTieBreakWhateverTheOrder() throws Exception {
        Instant t = T0.plusSeconds(100);
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            // the higher partition wins a tie, whether it comes first or last
            s.write(batch(1, Map.of(0, 71L, 1, 8L), rowFrom(TOPIC, "high-first", "p1", "1", 1, 7, t)));
            s.write(batch(2, Map.of(0, 71L, 1, 8L), rowFrom(TOPIC, "high-first", "p0", "1", 0, 70, t)));
            s.write(batch(3, Map.of(0, 71L, 1, 8L), rowFrom(TOPIC, "high-last", "p0", "1", 0, 70, t)));
            s.write(batch(4, Map.of(0, 71L, 1, 8L), rowFrom(TOPIC, "high-last", "p1", "1", 1, 7, t)));
            assertThat(rows()).containsExactly("high-first=p1/1@1:7", "high-last=p1/1@1:7");
        }
    }

    @Test
    void aRefusedRecordFailsItsBatchWholeAndTheBatchGoesThroughWithoutIt() throws Exception {
        Optional<Map<String, Object>> unwritable = unwritableValues();
        assumeTrue(unwritable.isPresent(), "this sink takes any value");
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Change bad = change(TOPIC, "b", unwritable.get(), 0, 1, T0.plusSeconds(1).toEpochMilli());
            Change fine = row("c", "z", "3", 0, 2);
            WriteBatch b = batch(2, Map.of(0, 3L), fine, bad);
            assertThatThrownBy(() -> s.write(b))
                    .isInstanceOfSatisfying(RecordRejectedException.class, e -> assertThat(e.change()).isEqualTo(bad))
                    .hasMessageStartingWith("partition 0 offset 1: ")
                    .hasMessageContaining("nothing of its batch was written");
            assertThat(rows()).containsExactly("a=x/1@0:0");
            assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 1L);
            s.write(b.without(bad));
            assertThat(rows()).containsExactly("a=x/1@0:0", "c=z/3@0:2");
            assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 3L);
        }
    }

    /**
     * A record refused in a batch staged after others ({@link WriteBatch#commits} false): the batch goes through
     * without it and what was staged before it is kept, committed with the batch that commits.
     */
    @Test
    void aRefusedRecordInAStagedBatchKeepsTheBatchesStagedBeforeIt() throws Exception {
        Optional<Map<String, Object>> unwritable = unwritableValues();
        assumeTrue(unwritable.isPresent(), "this sink takes any value");
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("d", "x", "1", 0, 0), row("a", "x", "1", 0, 1)).committing(false));
            Change bad = change(TOPIC, "b", unwritable.get(), 0, 2, T0.plusSeconds(1).toEpochMilli());
            WriteBatch b = batch(2, Map.of(0, 3L), row("a", "y", "2", 0, 2), bad).committing(false);
            assertThatThrownBy(() -> s.write(b)).isInstanceOf(RecordRejectedException.class);
            s.write(b.without(bad));
            WriteResult last = s.write(batch(3, Map.of(0, 4L), row("c", "z", "3", 0, 3)));
            assertThat(rows()).containsExactly("a=y/2@0:2", "c=z/3@0:3", "d=x/1@0:0");
            assertThat(s.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 4L);
            assertThat(last.staged()).isFalse();
        }
    }

    @Test
    void aJobIsStoredWithItsSpecAndResetForgetsItButNotTheRows() throws Exception {
        try (Opened s = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            JobSpec spec = new JobSpec(Map.of(JobSpec.DESTINATION, s.sink.jobStore().destination(), JobSpec.TOPIC, TOPIC));
            s.sink.jobStore().begin(JobState.begin(job, spec, 1, plan()));
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            assertThat(s.sink.jobStore().load(job).orElseThrow().spec()).isEqualTo(spec);
            assertThat(s.sink.jobStore().reset(job)).isTrue();
            assertThat(s.sink.jobStore().load(job)).isEmpty();
            assertThat(rows()).containsExactly("a=x/1@0:0");
        }
    }

    @Test
    void aSecondRunOfTheSameJobIsRefusedWhileTheFirstHoldsIt() throws Exception {
        assumeTrue(refusesSecondRun(), "this sink fences the first run instead");
        try (Opened first = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            Sink second = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
            try {
                second.open();
                assertThatThrownBy(() -> second.jobStore().lock(job))
                        .isInstanceOf(JobConflictException.class)
                        .hasMessageContaining("job '" + job + "' is already running");
            } finally {
                second.close();
            }
        }
        try (Opened again = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            assertThat(again.sink.jobStore().destination()).isNotEmpty(); // released with the first
        }
    }
}
