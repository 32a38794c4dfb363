package dev.kbackfill.sink.lake;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;

/**
 * A lake table's store of job state, the {@link JobStore} of a lake destination: the states live in the table's own
 * commits (Delta's transaction ids, Iceberg's snapshot summaries), each advanced in the commit of the batch that
 * advances it ({@link LakeSink.Table#write}). A job begun before its table exists, or where this process cannot commit
 * to the table (an engine's writer does), is held here as pending until that first commit.
 */
public final class LakeJobStore implements JobStore {

    private final LakeSink.Table table;
    /**
     * A job begun before its table exists, stored with the table's first commit; or begun where this process cannot
     * commit to the table, stored by the engine that writes it.
     */
    private JobState pending;
    private boolean closed;

    public LakeJobStore(LakeSink.Table table) {
        this.table = table;
    }

    /** Its jobs are looked for where its rows go. */
    @Override
    public String store() {
        return table.target();
    }

    /** The job's state lives in the table itself: another table holds no state of the job. */
    @Override
    public String destination() {
        return table.destination();
    }

    @Override
    public void openForJobs() {
        table.connect();
    }

    @Override
    public boolean storesStatesHere() {
        return table.exists() && table.commitsStatesHere();
    }

    @Override
    public AutoCloseable lock(String job) {
        table.connect();
        return table.lock(job);
    }

    @Override
    public Optional<JobState> load(String job) {
        Optional<JobState> stored = table.exists() ? table.stored(job) : Optional.empty();
        if (pending != null && pending.job().equals(job)
                && (stored.isEmpty() || stored.get().run() < pending.run())) {
            return Optional.of(pending); // begun here, not stored yet (by the first commit, or an engine's)
        }
        return stored;
    }

    @Override
    public List<String> jobs() {
        return table.exists() ? table.jobs() : List.of();
    }

    @Override
    public void begin(JobState state) {
        if (!table.exists() || !table.commitsStatesHere()) {
            pending = state; // stored with the table's first commit, or by the engine that writes the table
            return;
        }
        table.commitStates(Map.of(state.job(), state));
        pending = null;
    }

    @Override
    public boolean reset(String job) {
        boolean wasPending = pending != null && pending.job().equals(job);
        if (wasPending) {
            pending = null;
        }
        if (!table.exists() || table.stored(job).isEmpty()) {
            return wasPending;
        }
        Map<String, JobState> forget = new java.util.HashMap<>();
        forget.put(job, null);
        table.commitStates(forget);
        return true;
    }

    /**
     * The state a batch of {@code job} advances: the table's, else the one begun here and not stored yet; empty when
     * there is neither (reset by another process).
     */
    Optional<JobState> current(String job) {
        return (table.exists() ? table.stored(job) : Optional.<JobState>empty()).or(() -> Optional.ofNullable(pending));
    }

    /** A commit of the table stored the job's state: nothing is pending any more. */
    void stored() {
        pending = null;
    }

    /** The job begun here and not stored yet, if any. */
    Optional<JobState> pending() {
        return Optional.ofNullable(pending);
    }

    /** Closes the table (once: a sink closes its store with it). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            table.close();
        }
    }
}
