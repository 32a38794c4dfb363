package dev.kbackfill.core.sink;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.version.Version;

/**
 * One unit of work for a sink: the final state per key of a run of records, and the progress it reaches. A sink
 * applies the changes and stores {@code nextOffsets} in one transaction, or neither.
 *
 * @param job         the job
 * @param run         the job's run number
 * @param sequence    the batch number within the run, from 1
 * @param changes     one change per key (already reduced)
 * @param shape       the columns the changes use
 * @param nextOffsets per partition the batch covers, the first offset after it
 * @param topic       the source topic of every change (rows carry it, so that the version rule can tell logs
 *                    apart)
 * @param commits     false where the run lets the sink keep the batch uncommitted, its changes and progress staged in
 *                    the transaction that the next batch whose flag is true commits ({@link BatchWriter#stagingRows});
 *                    a sink may commit any batch regardless, and says which it did ({@link WriteResult#staged})
 * @param foreignRows what a row another writer wrote (without kbackfill's version) is to the batch's changes under
 *                    newer-wins, where the version field does not decide ({@link Version#replaces}): kept, unless the
 *                    run looked at the log after its range and left out every change with a later record there
 *                    ({@link Version.ForeignRows#NEWEST_IN_LOG}), or the user said no other writer keeps the target
 *                    current ({@link Version.ForeignRows#REPLACED})
 * @param recheck     asked by the sink once the batch's writes hold their place against other writers (rows locked
 *                    until the commit, a table snapshot its commit must still be based on), before it commits: the
 *                    changes a newer record of the log supersedes now (a live writer may have applied it since the
 *                    run looked), which the sink then refuses with {@link SupersededInLogException}, nothing of the
 *                    batch committed; {@link Recheck#NONE} where the run does not look
 */
public record WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                         Map<Integer, Long> nextOffsets, String topic, boolean commits,
                         Version.ForeignRows foreignRows, Recheck recheck) {
    public WriteBatch {
        java.util.Objects.requireNonNull(topic, "topic");
        java.util.Objects.requireNonNull(foreignRows, "foreignRows");
        java.util.Objects.requireNonNull(recheck, "recheck");
        changes = List.copyOf(changes);
        nextOffsets = Map.copyOf(nextOffsets);
    }

    /** What the log says of a batch's changes just before the sink commits them ({@link #recheck()}). */
    @FunctionalInterface
    public interface Recheck {
        /** Of {@code changes}, those a newer record of their key in the log supersedes now. */
        List<Change> superseded(List<Change> changes);

        /** Nothing to look at: the run did not look at the log either. */
        Recheck NONE = changes -> List.of();
    }

    /** A batch whose sink does not look at the log again before it commits. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets, String topic, boolean commits, Version.ForeignRows foreignRows) {
        this(job, run, sequence, changes, shape, nextOffsets, topic, commits, foreignRows, Recheck.NONE);
    }

    /** A batch whose changes leave rows of another writer as they are. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets, String topic, boolean commits) {
        this(job, run, sequence, changes, shape, nextOffsets, topic, commits, Version.ForeignRows.KEPT);
    }

    /**
     * Asks {@link #recheck()} and refuses the changes the log supersedes now, naming them, before anything of the
     * batch is committed: for a sink at the moment its writes hold their place against other writers.
     *
     * @throws SupersededInLogException where the log holds a newer record of some change's key
     */
    public void recheckBeforeCommit() {
        if (recheck == Recheck.NONE || changes.isEmpty()) {
            return;
        }
        List<Change> later = recheck.superseded(changes);
        if (!later.isEmpty()) {
            throw new SupersededInLogException(later);
        }
    }

    /** A batch that commits. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets, String topic) {
        this(job, run, sequence, changes, shape, nextOffsets, topic, true);
    }

    /** The same batch, to be staged uncommitted where the sink can ({@code commits} false) or to commit. */
    public WriteBatch committing(boolean commits) {
        return new WriteBatch(job, run, sequence, changes, shape, nextOffsets, topic, commits, foreignRows, recheck);
    }

    /** The same batch, its changes meeting rows of another writer as {@code foreign} says. */
    public WriteBatch meetingForeignRows(Version.ForeignRows foreign) {
        return new WriteBatch(job, run, sequence, changes, shape, nextOffsets, topic, commits, foreign, recheck);
    }

    /** The same batch, its sink asking {@code r} before it commits. */
    public WriteBatch rechecking(Recheck r) {
        return new WriteBatch(job, run, sequence, changes, shape, nextOffsets, topic, commits, foreignRows, r);
    }

    /** A batch of hand-made changes, from the topic {@value #UNNAMED_TOPIC}. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets) {
        this(job, run, sequence, changes, shape, nextOffsets, UNNAMED_TOPIC);
    }

    /** The topic of hand-made batches. */
    public static final String UNNAMED_TOPIC = "";

    /** The same batch without one of its changes (a record the sink refused), with the same progress. */
    public WriteBatch without(Change refused) {
        return without(java.util.Set.of(refused));
    }

    /**
     * The same batch without some of its changes (records the sink refused, records the log shows superseded), by
     * identity, with the same progress.
     */
    public WriteBatch without(java.util.Collection<Change> left) {
        if (left.isEmpty()) {
            return this;
        }
        java.util.Set<Change> out = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        out.addAll(left);
        List<Change> rest = new java.util.ArrayList<>(changes.size());
        for (Change c : changes) {
            if (!out.contains(c)) {
                rest.add(c);
            }
        }
        return new WriteBatch(job, run, sequence, rest, shape, nextOffsets, topic, commits, foreignRows, recheck);
    }

    /**
     * The same batch with {@code instead} in the place of one of its changes (an earlier record of the key the sink
     * refused), its shape taken again, with the same progress.
     */
    public WriteBatch replacing(Change refused, Change instead) {
        List<Change> rest = new java.util.ArrayList<>(changes.size());
        for (Change c : changes) {
            rest.add(c == refused ? instead : c);
        }
        return new WriteBatch(job, run, sequence, rest, RowShape.of(rest), nextOffsets, topic, commits, foreignRows,
                recheck);
    }

    /** The version of one of its changes: the change's coordinates in this batch's topic. */
    public Version version(Change c) {
        return new Version(topic, c.partition(), c.offset(), c.timestamp(), c.logTime(),
                c.versionField());
    }

    /** The first change whose values carry {@code field}, for messages naming where a field first appears. */
    public Change firstCarrying(String field) {
        return changes.stream().filter(c -> c.values() != null && c.values().containsKey(field)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no change carries " + field));
    }
}
