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
 */
public record WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                         Map<Integer, Long> nextOffsets, String topic, boolean commits,
                         Version.ForeignRows foreignRows) {
    public WriteBatch {
        java.util.Objects.requireNonNull(topic, "topic");
        java.util.Objects.requireNonNull(foreignRows, "foreignRows");
        changes = List.copyOf(changes);
        nextOffsets = Map.copyOf(nextOffsets);
    }

    /** A batch whose changes leave rows of another writer as they are. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets, String topic, boolean commits) {
        this(job, run, sequence, changes, shape, nextOffsets, topic, commits, Version.ForeignRows.KEPT);
    }

    /** A batch that commits. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets, String topic) {
        this(job, run, sequence, changes, shape, nextOffsets, topic, true);
    }

    /** The same batch, to be staged uncommitted where the sink can ({@code commits} false) or to commit. */
    public WriteBatch committing(boolean commits) {
        return new WriteBatch(job, run, sequence, changes, shape, nextOffsets, topic, commits, foreignRows);
    }

    /** The same batch, its changes meeting rows of another writer as {@code foreign} says. */
    public WriteBatch meetingForeignRows(Version.ForeignRows foreign) {
        return new WriteBatch(job, run, sequence, changes, shape, nextOffsets, topic, commits, foreign);
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
        return new WriteBatch(job, run, sequence, rest, shape, nextOffsets, topic, commits, foreignRows);
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
        return new WriteBatch(job, run, sequence, rest, RowShape.of(rest), nextOffsets, topic, commits, foreignRows);
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
