package dev.kbackfill.core.sink;

import java.util.Optional;

/**
 * A destination that applies keyed changes and stores the job's progress atomically with them.
 *
 * <p>The run loop calls, in order: {@link #open()}; {@link #lock(String)}; {@link #load(String)};
 * {@link #begin(JobState)} for a new run; {@link #write(WriteBatch)} for every batch; {@link #close()}. A sink
 * never sees the same key twice in a batch, and it must store {@link WriteBatch#nextOffsets()} in the same
 * transaction (or commit) as the batch's changes, so that a crash at any moment resumes exactly where the data
 * stopped.
 */
public interface Sink extends AutoCloseable {

    /** Where rows go, for people, without credentials, e.g. {@code sqlite:/data/kbackfill.db, table orders}. */
    String target();

    /**
     * The store that holds the job's state, for people, without credentials: where a job is looked for by name (a
     * database's URL, without the table {@link #target()} adds; a lake table; a topic at its cluster).
     */
    default String store() {
        return target();
    }

    /**
     * What this sink writes, as it names it within the store that holds the job's state: the qualified table of a
     * database, the path of a Delta table, the target topic. Part of a job's {@link JobSpec}: a job is bound to one
     * destination.
     */
    String destination();

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
     * Whether {@link dev.kbackfill.core.record.Change#source()} must reach this sink (a sink that copies records as
     * they are); otherwise the run drops the raw records as soon as they are decoded.
     */
    default boolean copiesSourceRecords() {
        return false;
    }

    /**
     * Whether batches must carry decoded values; false for a sink that keeps raw records and decodes what it needs
     * later (verification's fold): the run then decodes keys only, where the key is the record key.
     */
    default boolean needsValues() {
        return true;
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
     * Whether {@link #begin} stores a job's state in the sink now. Not for a lake table not created yet (its first
     * commit stores the state), nor for a Delta table whose features only an engine's writer can commit to (the Spark
     * engine's driver stores it there): the sink holds a state begun meanwhile.
     */
    default boolean storesStatesHere() {
        return true;
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
     * Connects for job administration only ({@code status}, {@code reset}): the job state must be reachable, the
     * data table need not exist.
     */
    default void openForJobs() {
        open();
    }

    /**
     * Takes the job's exclusive lock, held until the returned handle is closed or the process dies.
     *
     * @throws JobConflictException if another run holds it
     */
    AutoCloseable lock(String job);

    /**
     * Joins the lock that a launching process holds for {@code job} on this process's behalf (an engine's driver
     * under {@code kbackfill run --engine spark}, which holds {@link #lock(String)} while the engine runs): where
     * the lock excludes other runs (a database lock, a file lock) nothing is taken here, the launch holds it; a sink
     * whose lock is its writer's identity (a topic's transactional id) takes that identity over, fencing the
     * launch's idle writer.
     */
    default AutoCloseable joinLock(String job) {
        return () -> { };
    }

    /** The job's stored state, or empty if it never ran against this destination (or was reset). */
    Optional<JobState> load(String job);

    /**
     * The stored states of several jobs (an engine's sub-jobs) at once, by name; a job with none is left out. A
     * sink that reads all its jobs to find one (a topic) reads them once here.
     */
    default java.util.Map<String, JobState> loadAll(java.util.Collection<String> jobs) {
        java.util.Map<String, JobState> states = new java.util.HashMap<>();
        for (String job : jobs) {
            load(job).ifPresent(s -> states.put(job, s));
        }
        return states;
    }

    /** Stores a new run of the job (its plan and start offsets), replacing any earlier run's state. */
    void begin(JobState state);

    /** Applies one batch and stores its progress, atomically. */
    WriteResult write(WriteBatch batch);

    /**
     * Prunes the tombstone ledger: forgets the versions of keys whose deletes were recorded before {@code before} (by
     * when kbackfill recorded them: a back-dated tombstone is not forgotten at once), so that a later replay of
     * records older than those deletes could bring such keys back. Only ever explicit
     * ({@code kbackfill compact --forget-deletes-before}). Call after {@link #openForJobs()}.
     *
     * @return how many deleted keys were forgotten
     * @throws SinkConfigException where the sink keeps no ledger
     */
    default long forgetDeletesBefore(java.time.Instant before) {
        throw new SinkConfigException("this sink keeps no tombstone ledger to prune (a topic's own compaction "
                + "removes tombstones after delete.retention.ms)");
    }

    /**
     * Whether the store of job state this sink uses is shared by other destinations (a cluster's job topic holds the
     * jobs of every target topic): {@code kbackfill jobs} then lists this destination's jobs unless asked for all.
     */
    default boolean sharesJobStore() {
        return false;
    }

    /**
     * The names of the jobs whose state this sink holds ({@code kbackfill jobs}), sorted. Call after
     * {@link #openForJobs()}.
     */
    default java.util.List<String> jobs() {
        throw new SinkConfigException("this sink cannot list its jobs");
    }

    /**
     * Connects for verification only: nothing is created or changed (no job tables, no job topic), the target need
     * not have been written by kbackfill. By default {@link #openForJobs()}.
     */
    default void openForVerify() {
        openForJobs();
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

    /** Forgets the job's plan and progress (not the rows written); returns whether there was a job. */
    boolean reset(String job);

    @Override
    void close();
}
