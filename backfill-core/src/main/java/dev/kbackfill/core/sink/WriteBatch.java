package dev.kbackfill.core.sink;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.RowShape;

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
 */
public record WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                         Map<Integer, Long> nextOffsets, String topic, boolean commits) {
    public WriteBatch {
        java.util.Objects.requireNonNull(topic, "topic");
        changes = List.copyOf(changes);
        nextOffsets = Map.copyOf(nextOffsets);
    }

    /** A batch that commits. */
    public WriteBatch(String job, int run, long sequence, List<Change> changes, RowShape shape,
                      Map<Integer, Long> nextOffsets, String topic) {
        this(job, run, sequence, changes, shape, nextOffsets, topic, true);
    }

    /** The same batch, to be staged uncommitted where the sink can ({@code commits} false) or to commit. */
    public WriteBatch committing(boolean commits) {
        return new WriteBatch(job, run, sequence, changes, shape, nextOffsets, topic, commits);
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
        List<Change> rest = new java.util.ArrayList<>(changes.size());
        for (Change c : changes) {
            if (c != refused) {
                rest.add(c);
            }
        }
        return new WriteBatch(job, run, sequence, rest, shape, nextOffsets, topic, commits);
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
        return new WriteBatch(job, run, sequence, rest, RowShape.of(rest), nextOffsets, topic, commits);
    }

    /** The version of one of its changes: the change's coordinates in this batch's topic. */
    public dev.kbackfill.core.version.Version version(Change c) {
        return new dev.kbackfill.core.version.Version(topic, c.partition(), c.offset(), c.timestamp(), c.logTime(),
                c.versionField());
    }

    /** The first change whose values carry {@code field}, for messages naming where a field first appears. */
    public Change firstCarrying(String field) {
        return changes.stream().filter(c -> c.values() != null && c.values().containsKey(field)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no change carries " + field));
    }
}
