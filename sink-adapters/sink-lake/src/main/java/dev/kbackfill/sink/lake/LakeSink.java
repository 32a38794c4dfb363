package dev.kbackfill.sink.lake;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Maintenance;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.verify.TargetLookup;

/**
 * Keyed upserts into a lake table, the same for every table format: the job's state lives in the table and goes in
 * the commit of the batch that advances it; a job begun before its table exists waits for the table's first commit;
 * a commit refused because another writer committed first is planned again, once, from the table as it is then. The
 * format ({@link Table}: Delta, Iceberg) writes a batch's files and commits them with the job's state, the shape of
 * Iceberg's own Kafka Connect sink, where workers write files and one committer commits files and offsets together.
 */
public final class LakeSink implements Sink {

    /**
     * What a lake table's kind can do: its filesystem or catalog takes settings and a client file, it keeps a
     * tombstone ledger, and it compacts.
     */
    public static final java.util.Set<dev.kbackfill.core.sink.SinkFactory.Capability> CAPABILITIES =
            java.util.Collections.unmodifiableSet(java.util.EnumSet.of(
                    dev.kbackfill.core.sink.SinkFactory.Capability.STORAGE_SETTINGS,
                    dev.kbackfill.core.sink.SinkFactory.Capability.CLIENT_FILE,
                    dev.kbackfill.core.sink.SinkFactory.Capability.KEEPS_LEDGER,
                    dev.kbackfill.core.sink.SinkFactory.Capability.COMPACTS));

    /** A lake table format, as the lake sink drives it. */
    public interface Table extends AutoCloseable {
        /** Where rows go, for people: {@code delta:PATH}, {@code iceberg:REF}. */
        String target();

        /** The table as messages name it: {@code the Delta table at PATH}. */
        String shown();

        /** What the sink writes within the store that holds the job's state ({@link Sink#destination()}). */
        String destination();

        /** Rows per batch by default: every batch is a commit that writes new files. */
        int defaultBatchRows();

        /** Connects (the filesystem, the catalog): enough for job administration. */
        void connect();

        /** Whether the table exists now. */
        boolean exists();

        /** Checks an existing table before anything is read; returns warnings for people. */
        List<String> check();

        /**
         * Whether the table holds a row without kbackfill's version ({@link Sink#holdsForeignRows}); false for a table
         * that does not exist.
         */
        default boolean holdsForeignRows() {
            return false;
        }

        /** Checks what creating the table from the records would need (its properties) before anything is read. */
        void checkCreation();

        /** The job's state the table holds. */
        Optional<JobState> stored(String job);

        /** The jobs whose state the table holds, sorted. */
        List<String> jobs();

        /** Whether this process can commit job states to the existing table ({@link Sink#storesStatesHere}). */
        default boolean commitsStatesHere() {
            return true;
        }

        /** Commits job states only, no rows: a state, or null to forget the job. */
        void commitStates(Map<String, JobState> states);

        /** Forgets the deletes recorded before {@code millis} (kbackfill's time); how many; commits where any. */
        long forgetDeletesBefore(long millis);

        /** Takes the job's lock: a lock file beside a local table, a lease in an object store, or none. */
        AutoCloseable lock(String job);

        /**
         * Writes a batch and the job's state after it in one commit, creating the table from the batch where it does
         * not exist yet.
         *
         * @throws Stale when another writer committed since the table was read: nothing of the batch was committed
         */
        WriteResult write(WriteBatch batch, JobState after);

        /** Forgets what is cached of the table, to read it as it is now. */
        void refresh();

        /** Reads back what the table holds, for verification. */
        TargetLookup verifier();

        /** Warnings found since the sink opened (a post-commit hook that failed). */
        List<String> warnings();

        @Override
        void close();
    }

    /** A commit refused because another writer committed since the table was read; nothing of it was committed. */
    public static final class Stale extends SinkException {
        public Stale(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final SinkSettings settings;
    private final Table table;
    /** Batches held back until the table can be created from one ({@link HeldBatches}). */
    private final HeldBatches held = new HeldBatches();
    /** The store of its jobs: in the table's own commits. */
    private final LakeJobStore jobs;
    private final List<String> warnings = new ArrayList<>();

    public LakeSink(SinkSettings settings, Table table) {
        this.settings = settings;
        this.table = table;
        this.jobs = new LakeJobStore(table);
    }

    /** Its ledger's upkeep, a commit of the table. */
    @Override
    public Maintenance maintenance() {
        return before -> table.exists() ? table.forgetDeletesBefore(before.toEpochMilli()) : 0;
    }

    /** Its jobs' state, in the table's commits: a batch's state goes in the commit of its rows. */
    @Override
    public JobStore jobStore() {
        return jobs;
    }

    @Override
    public String target() {
        return table.target();
    }

    @Override
    public int defaultBatchRows() {
        return table.defaultBatchRows();
    }

    @Override
    public void open() {
        table.connect();
        if (!table.exists()) {
            if (!settings.createTable()) {
                throw new SinkConfigException("no " + table.shown().replaceFirst("^the ", "") + "; create it, or pass "
                        + "--create-table to create it from the records");
            }
            table.checkCreation();
            return;
        }
        warnings.addAll(table.check());
    }

    @Override
    public boolean destinationExists() {
        return table.exists();
    }

    @Override
    public boolean holdsForeignRows() {
        return settings.conflictMode() == dev.kbackfill.core.sink.ConflictMode.NEWER_WINS && table.exists()
                && table.holdsForeignRows();
    }

    @Override
    public WriteResult write(WriteBatch batch) {
        if (!table.exists() && (held.holding() || !HeldBatches.missingToCreate(batch, settings).isEmpty())) {
            if (!held.holding()) {
                java.util.Optional<String> misspelt = HeldBatches.misspelt(batch, settings);
                if (misspelt.isPresent()) {
                    throw new dev.kbackfill.core.sink.SinkConfigException(misspelt.get());
                }
            }
            batch = held.release(batch);
            if (!HeldBatches.missingToCreate(batch, settings).isEmpty()) {
                return held.hold(batch); // no column to create the table from yet
            }
        }
        try {
            return writeOnce(batch);
        } catch (Stale e) {
            // another writer committed since this sink read the table: plan again from the table as it is now;
            // nothing of the failed attempt was committed
            table.refresh();
            try {
                return writeOnce(batch);
            } catch (Stale again) {
                throw new SinkException("another writer keeps committing to " + table.shown() + " while job "
                        + batch.job() + " writes: " + again.getMessage() + "; nothing of batch " + batch.sequence()
                        + " was committed", again);
            }
        }
    }

    private WriteResult writeOnce(WriteBatch batch) {
        JobState state = jobs.current(batch.job())
                .orElseThrow(() -> new SinkException("job " + batch.job() + " has no stored state in " + table.shown()
                        + " (reset by another process?)"));
        WriteResult result = table.write(batch, state.advancedTo(batch.nextOffsets()));
        jobs.stored(); // the state is in the table now
        return result;
    }

    @Override
    public TargetLookup verifier() {
        return table.verifier();
    }

    /**
     * The sink's warnings; at the end of a run, also a job whose table was never created because no record reached
     * it: nothing records the job, and a rerun reads its range again.
     */
    @Override
    public List<String> warnings() {
        List<String> all = new ArrayList<>(warnings);
        Optional<JobState> pending = jobs.pending();
        if (pending.isPresent() && !table.exists()) {
            all.add(held.waiting(pending.get().job(), table.shown(), settings).orElse("job " + pending.get().job() + " wrote "
                    + "nothing to " + table.shown() + " (no record in its range), so the table was not created and "
                    + "nothing records the job"));
        }
        all.addAll(table.warnings());
        return List.copyOf(all);
    }

    @Override
    public void close() {
        jobs.close();
    }
}
