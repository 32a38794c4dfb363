package dev.kbackfill.sink.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;

/**
 * Batches a lake sink holds back while the table it is to create does not exist yet and they carry no values (only
 * deletes, or nothing): a table takes its columns from the first batch that has values, never from one without, as
 * Delta Kernel cannot add a column the records bring later (Iceberg could, but both lake sinks create a table from the
 * same batch). A held
 * batch is written with the next batch that has values, in one commit: the two reduced together by the version rule,
 * as if they had been one batch, with the later batch's progress. Nothing of a held batch is durable until then; a
 * run that ends while holding leaves the job unstarted in the sink, and the next run reads those records again.
 */
public final class HeldBatches {

    private WriteBatch held;

    /**
     * Whether a table created from {@code batch} would lack the value columns: it holds changes but no value at all
     * (deletes only), or no column at all (every record left out). A batch of no changes whose shape names columns
     * is a table to create as it says (the Spark engine creates the table from a wave's columns that way).
     */
    public static boolean lacksValues(WriteBatch batch) {
        return batch.shape().valueColumns().isEmpty()
                && (!batch.changes().isEmpty() || batch.shape().keyColumns().isEmpty());
    }

    /** Holds {@code batch} back: nothing is written; what the run counts for it is an upsert of nothing. */
    public WriteResult hold(WriteBatch batch) {
        held = held == null ? batch : merged(held, batch);
        return new WriteResult(0, 0, 0, Map.of());
    }

    /** Whether batches are held back (the table not created yet). */
    public boolean holding() {
        return held != null;
    }

    /** How many changes are held back. */
    public int heldChanges() {
        return held == null ? 0 : held.changes().size();
    }

    /** {@code batch} with every held batch before it, reduced together; the holding ends. */
    public WriteBatch release(WriteBatch batch) {
        if (held == null) {
            return batch;
        }
        WriteBatch merged = merged(held, batch);
        held = null;
        return merged;
    }

    /** Forgets what is held (the job was reset). */
    public void clear() {
        held = null;
    }

    /** Two consecutive batches of one run as one: the last change per key by the version rule, the later progress. */
    static WriteBatch merged(WriteBatch earlier, WriteBatch later) {
        List<Change> all = new ArrayList<>(earlier.changes().size() + later.changes().size());
        all.addAll(earlier.changes());
        all.addAll(later.changes());
        List<Change> reduced = Reduction.lastPerKey(all);
        Map<Integer, Long> next = new LinkedHashMap<>(earlier.nextOffsets());
        next.putAll(later.nextOffsets());
        return new WriteBatch(later.job(), later.run(), later.sequence(), reduced, RowShape.of(reduced), next,
                later.topic());
    }
}
