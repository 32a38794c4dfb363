package dev.kbackfill.core.sink;

import java.util.Map;
import java.util.TreeMap;

/**
 * Batches a sink holds uncommitted in one transaction ({@link BatchWriter#stagingRows}), the one type both ends of a
 * window use, so that what opens, fills and closes a window is decided here only:
 * <ul>
 *   <li>the run's side: which batch closes the window ({@link #closesWith}, its {@link WriteBatch#commits}): the one
 *       that reaches the sink's staging rows, or any batch at a pause, a limit or the end (an empty one where no
 *       records are left to carry the commit, {@link #holdsStaged});</li>
 *   <li>the sink's side: what the window's batches did, added up as each is written into the open transaction
 *       ({@link #add}), whether the batch just written may stay staged ({@link #staysOpenAfter}), and the result the
 *       batch that commits reports for all of them ({@link #result}).</li>
 * </ul>
 * Beside a live writer every batch commits on its own (the sink looks at the log once more before each commit, and
 * a window would be undone whole): the run gives such a window no staging rows.
 */
public final class StagingWindow {

    private final long stagingRows;
    private long stagedRows;

    private long upserted;
    private long deleted;
    private long ignored;
    private final Map<Integer, Long> keptOut = new TreeMap<>();
    private final Map<Integer, Long> superseded = new TreeMap<>();
    private boolean committedEarly;
    private int savepoints;

    /** @param stagingRows the changes the sink may hold uncommitted ({@link BatchWriter#stagingRows}); 0: none */
    public StagingWindow(long stagingRows) {
        this.stagingRows = Math.max(0, stagingRows);
    }

    /** A window of a sink that commits every batch. */
    public static StagingWindow none() {
        return new StagingWindow(0);
    }

    // the run's side

    /**
     * Whether a batch of {@code changes} handed over now closes the window (commits what the window staged with its
     * own changes), counting it in when it does not.
     *
     * @param closing a pause, a limit, a stop or the end of the run: the window closes whatever it holds
     */
    public boolean closesWith(int changes, boolean closing) {
        boolean commits = stagingRows == 0 || closing || stagedRows + changes >= stagingRows;
        stagedRows = commits ? 0 : stagedRows + changes;
        return commits;
    }

    /** Whether batches were handed over uncommitted since the last that commits: a pause must close them. */
    public boolean holdsStaged() {
        return stagedRows > 0;
    }

    // the sink's side

    /** Counts one batch written into the open transaction: its rows, deletes, ignored changes and kept-out ones. */
    public void add(long upserted, long deleted, long ignored, Map<Integer, Long> keptOut,
                    Map<Integer, Long> superseded) {
        this.upserted += upserted;
        this.deleted += deleted;
        this.ignored += ignored;
        keptOut.forEach((p, n) -> this.keptOut.merge(p, n, Long::sum));
        superseded.forEach((p, n) -> this.superseded.merge(p, n, Long::sum));
    }

    /** Rows staged earlier that their flush found kept out after all (the sink decides staged rows at its flush). */
    public void unstaged(long rows) {
        upserted -= rows;
    }

    /** The counts the flush of staged rows adds to, per partition: kept out, and superseded by a later change. */
    public Map<Integer, Long> keptOut() {
        return keptOut;
    }

    /** See {@link #keptOut()}. */
    public Map<Integer, Long> superseded() {
        return superseded;
    }

    /** One more savepoint in the open transaction (one per batch staged after the first); how many it holds now. */
    public int savepoint() {
        return ++savepoints;
    }

    /**
     * Whether the batch just written stays staged, the transaction left open for the next: where the run lets it
     * ({@code batch.commits()} false), the sink stages at all and holds staged rows, the transaction has room for
     * another savepoint, and the batch deleted nothing (a delete holds the table's writer lock, which other writers
     * wait for).
     */
    public boolean staysOpenAfter(WriteBatch batch, boolean holdsRows, int maxSavepoints, long deletedByBatch) {
        return !batch.commits() && stagingRows > 0 && holdsRows && savepoints < maxSavepoints && deletedByBatch == 0;
    }

    /**
     * What was staged is committed before the batch being written (a transaction of its own the batch needs): the
     * counts stay, reported with the batch; the open transaction holds no savepoint any more.
     */
    public void committedEarly() {
        committedEarly = true;
        savepoints = 0;
    }

    /** Whether counts of batches committed before a failure are still to be reported (by the batch written again). */
    public boolean holdsCommittedCounts() {
        return committedEarly;
    }

    /** What the window's batches did, reported by the batch that commits them. */
    public WriteResult result() {
        return new WriteResult(upserted, deleted, ignored, keptOut, superseded, false);
    }
}
