package dev.kbackfill.core.sink;

/**
 * A destination that applies keyed changes and stores the job's progress atomically with them.
 *
 * <p>The run loop calls, in order: {@link #open()}; {@link #lock(String)}; {@link #load(String)};
 * {@link #begin(JobState)} for a new run; {@link #write(WriteBatch)} for every batch; {@link #close()}. A sink
 * never sees the same key twice in a batch, and it must store {@link WriteBatch#nextOffsets()} in the same
 * transaction (or commit) as the batch's changes, so that a crash at any moment resumes exactly where the data
 * stopped.
 *
 * <p>This type is the writer: what a run opens, writes batches into and closes. Its other roles are types of their
 * own: the {@link JobStore} that keeps its jobs' state, with which its batches commit their progress
 * ({@link #jobStore()}; {@code status}, {@code reset} and {@code jobs} ask {@link SinkFactory#jobStore} for it
 * alone), reading back what the target holds ({@link #verifier()}, a {@link dev.kbackfill.core.verify.TargetLookup})
 * and its upkeep ({@link #maintenance()}).
 */
public interface Sink extends BatchWriter, AutoCloseable {

    /** Where rows go, for people, without credentials, e.g. {@code sqlite:/data/kbackfill.db, table orders}. */
    String target();

    /**
     * The store of this destination's jobs, which this sink's batches commit their progress into (the same
     * connection, transaction or commit as the rows).
     */
    JobStore jobStore();

    /**
     * Connects and checks the destination before anything is read: the table exists (or will be created), the
     * job tables exist.
     *
     * @throws SinkConfigException for settings that do not fit the destination
     * @throws SinkException       when the destination cannot be reached
     */
    void open();

    /**
     * Rows per batch when the user does not say ({@code --batch-size}): a batch is one transaction or commit of at
     * most this many keys, and what it costs (a database round trip, a rewritten Delta file) decides what size pays
     * off.
     */
    default int defaultBatchRows() {
        return 20_000;
    }

    /** Bytes a pending key is assumed to hold (its last raw record, its key, the reduction's entry). */
    int BYTES_PER_PENDING_KEY = 1024;

    /**
     * A batch size from the heap: a run holds two batches (one being written while the next fills and is decoded),
     * each given an eighth of the heap at {@link #BYTES_PER_PENDING_KEY} per key, the rest left to polls, decoding and
     * the destination's driver; between 20,000 and 500,000 rows (32,768 in -Xmx256m, 131,072 in -Xmx1g). Records far
     * larger than 1 KB want an explicit {@code --batch-size}.
     */
    static int heapSizedBatchRows(long maxHeapBytes) {
        long rows = maxHeapBytes / 8 / BYTES_PER_PENDING_KEY;
        return (int) Math.max(20_000, Math.min(500_000, rows));
    }

    /**
     * Whether the destination exists, after {@link #open()}: false only where {@code --create-table} will create it
     * from the columns of the first batch written (an engine that writes from several tasks creates it first, with a
     * batch of no changes and the columns of every record).
     */
    default boolean destinationExists() {
        return true;
    }

    /**
     * Whether the target holds a row without kbackfill's version, after {@link #open()}: a row another writer wrote
     * (the live pipeline that keeps the table current) or one written before kbackfill's columns existed. Under
     * newer-wins a run then runs beside a live writer ({@code --live-writer auto}): such a row's place in the log is
     * unknown, and the log after the range decides ({@link dev.kbackfill.core.version.Version#replaces}). False
     * under the other conflict modes, for a target that does not exist yet, and where the sink keeps no versions.
     */
    default boolean holdsForeignRows() {
        return false;
    }

    /** Warnings about the destination found by {@link #open()}, for people (a non-compacted topic, ...). */
    default java.util.List<String> warnings() {
        return java.util.List.of();
    }

    /** What {@link #open()} did that people may want to know, not a warning (an index built, and how long it took). */
    default java.util.List<String> notes() {
        return java.util.List.of();
    }

    /**
     * The destination's upkeep ({@code kbackfill compact}): pruning its tombstone ledger, where it keeps one.
     *
     * @throws SinkConfigException where the sink keeps no ledger
     */
    default Maintenance maintenance() {
        throw new SinkConfigException("this sink keeps no tombstone ledger to prune (a topic's own compaction "
                + "removes tombstones after delete.retention.ms)");
    }

    /**
     * Connects for verification only: nothing is created or changed (no job tables, no job topic), the target need
     * not have been written by kbackfill. By default {@link JobStore#openForJobs()}.
     */
    default void openForVerify() {
        jobStore().openForJobs();
    }

    /**
     * Reads back what the target holds for the keys of a range, for {@code kbackfill verify}: read-only, no lock, no
     * job state touched. Call after {@link #openForVerify()} or {@link #open()} (the target must exist).
     *
     * @throws SinkConfigException where the sink cannot be verified
     */
    default dev.kbackfill.core.verify.TargetLookup verifier() {
        throw new SinkConfigException("this sink cannot be verified");
    }

    @Override
    void close();
}
