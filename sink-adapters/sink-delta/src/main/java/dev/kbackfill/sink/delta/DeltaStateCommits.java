package dev.kbackfill.sink.delta;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;

import dev.kbackfill.core.sink.SinkConfigException;

/**
 * Commits that carry no rows (a job's state, its reset, the tombstone ledger) to a Delta table whose writer features
 * Delta Kernel cannot write: generated columns, CHECK constraints and identity columns constrain the rows a writer
 * adds, and such a commit adds none, yet Kernel refuses every commit to the table. An engine that writes the table's
 * rows with Delta's own writer offers this service ({@link ServiceLoader}) and commits with that writer too: the
 * Spark engine's driver, through delta-spark. Where no service is available (one machine, the command line that
 * launches the engine), such a table's state cannot be committed: it is refused when the sink opens, or its state is
 * stored by the engine ({@link DeltaTable#commitsStatesHere}).
 */
public interface DeltaStateCommits {

    /** Whether this service can commit in this process now (for Spark's: a Spark session is active). */
    boolean available();

    /**
     * Commits to the table at {@code path}, on top of its version {@code readVersion}: the domains set (name to
     * configuration) and removed, and the application's transaction version where given; no rows.
     *
     * @throws dev.kbackfill.sink.lake.LakeSink.Stale another writer committed since {@code readVersion}; nothing was
     *                                                committed
     */
    void commit(String path, long readVersion, Map<String, String> domains, Set<String> removed,
                Optional<Map.Entry<String, Long>> transaction);

    /** The service available in this process, if any. */
    static Optional<DeltaStateCommits> find() {
        for (DeltaStateCommits c : ServiceLoader.load(DeltaStateCommits.class)) {
            if (c.available()) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /** The service that commits to a table with the features {@code unwritable}; refused where there is none. */
    static DeltaStateCommits required(String path, List<String> unwritable) {
        return find().orElseThrow(() -> new SinkConfigException("the Delta table at " + path + " uses the table "
                + "feature(s) " + String.join(", ", unwritable) + ", which Delta Kernel cannot commit to: kbackfill "
                + "changes such a table (a job's rows, its state, a reset) only on --engine spark, where Spark's Delta "
                + "writes it; to start a job over there, run it under a new --job name"));
    }
}
