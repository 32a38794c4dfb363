package dev.kbackfill.sink.iceberg;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;

import dev.kbackfill.core.sink.Publication;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;

/**
 * A rebuild of an Iceberg table published after verification, as Iceberg's write-audit-publish has it: the run writes
 * the branch {@value #BRANCH}, made from {@code main} and emptied in its first snapshot (a metadata-only delete of
 * every row, the tombstone ledger cleared), verify reads the branch, and the publish fast-forwards {@code main} to
 * it in one metadata commit, which Iceberg refuses where {@code main} moved meanwhile (another writer committed:
 * nothing is published then). {@code main}'s snapshots before the publish stay in its history (time travel, and
 * {@code rollback_to_snapshot} to undo it); the branch is removed and the job that built it forgotten.
 */
final class IcebergPublication implements Publication {

    static final String BRANCH = "kbackfill_shadow";

    private final SinkSettings settings;
    private final IcebergTableRef main;
    private final IcebergTables tables;

    IcebergPublication(SinkSettings settings) {
        this.settings = settings;
        this.main = IcebergTableRef.parse(settings.url(), settings.table());
        if (main.branch().isPresent()) {
            throw new dev.kbackfill.core.sink.SinkConfigException("invalid --table '" + settings.table() + "': a "
                    + "rebuild is published onto main, not onto a branch");
        }
        this.tables = IcebergTables.open(main, settings);
    }

    @Override
    public SinkSettings shadow() {
        return settings.withTable(settings.table() + "@" + BRANCH);
    }

    @Override
    public List<String> prepare() {
        Optional<Table> loaded = tables.load();
        if (loaded.isEmpty()) {
            return List.of();
        }
        Table t = loaded.get();
        if (t.refs().containsKey(BRANCH) || t.currentSnapshot() == null) {
            return List.of();
        }
        t.newDelete().deleteFromRowFilter(Expressions.alwaysTrue()).set(TableState.DELETES, "").toBranch(BRANCH)
                .commit();
        return List.of("branch " + BRANCH + " of main's snapshot " + t.currentSnapshot().snapshotId() + ", emptied "
                + "(its first snapshot deletes every row): the rebuild writes into it, main stays as it is");
    }

    @Override
    public boolean shadowExists() {
        return tables.load().map(t -> t.refs().containsKey(BRANCH)).orElse(false);
    }

    @Override
    public List<String> publish(String job) {
        Table t = tables.load().orElseThrow(() -> new SinkException("no Iceberg table " + main.shown() + " to publish"));
        Snapshot shadow = t.snapshot(BRANCH);
        if (shadow == null) {
            throw new SinkException("no branch " + BRANCH + " of " + main.shown() + " to publish");
        }
        List<String> done = new ArrayList<>();
        Snapshot before = t.currentSnapshot();
        try {
            if (before == null) {
                t.manageSnapshots().createBranch(SnapshotRef.MAIN_BRANCH, shadow.snapshotId()).commit();
            } else if (before.snapshotId() != shadow.snapshotId()) {
                t.manageSnapshots().fastForwardBranch(SnapshotRef.MAIN_BRANCH, BRANCH).commit();
            }
        } catch (RuntimeException e) {
            throw new SinkException("cannot publish the branch " + BRANCH + " onto main of " + main.shown()
                    + " (nothing was published): " + e.getMessage() + (before == null ? ""
                    : "; main must still be the snapshot the branch was made from, and another writer may have "
                    + "committed since"), e);
        }
        done.add("fast-forwarded main of " + main.shown() + " to the branch's snapshot " + shadow.snapshotId()
                + (before == null ? "" : " (main was " + before.snapshotId() + ": rollback_to_snapshot undoes it)"));
        try (dev.kbackfill.core.sink.JobStore store = new IcebergSinkFactory().createJobStore(settings)) {
            store.openForJobs();
            store.reset(job); // the table's own state commit, on main
        }
        t.refresh();
        t.manageSnapshots().removeBranch(BRANCH).commit();
        done.add("removed the branch " + BRANCH);
        return done;
    }

    @Override
    public void close() {
        tables.close();
    }
}
