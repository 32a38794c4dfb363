package dev.kbackfill.core.sink;

import java.util.Map;

/**
 * What a sink did with a batch. Every change of the batch is one of: upserted, deleted, ignored or kept out.
 *
 * @param upserted rows inserted or updated
 * @param deleted  rows deleted or marked deleted (a delete of an absent key is still recorded as a version)
 * @param ignored  changes deliberately not written (tombstones under {@code ignore} or {@code insert-only})
 * @param keptOut  per source partition, changes the target kept out because it holds a newer version of the key
 *                 (newer-wins, deletes included) or the key itself (insert-only)
 * @param superseded per source partition, changes of staged batches that a later change of their key staged in the
 *                 same transaction replaced before writing (counted as the run counts records a batch reduced away)
 * @param staged   whether the batch was staged uncommitted ({@link WriteBatch#commits} false): its counts come with
 *                 the result of the batch that commits it, which covers every batch staged since the last commit
 */
public record WriteResult(long upserted, long deleted, long ignored, Map<Integer, Long> keptOut,
                          Map<Integer, Long> superseded, boolean staged) {

    public WriteResult {
        keptOut = Map.copyOf(keptOut);
        superseded = Map.copyOf(superseded);
    }

    /** A committed batch's result. */
    public WriteResult(long upserted, long deleted, long ignored, Map<Integer, Long> keptOut) {
        this(upserted, deleted, ignored, keptOut, Map.of(), false);
    }

    /** A result in which nothing was kept out. */
    public WriteResult(long upserted, long deleted, long ignored) {
        this(upserted, deleted, ignored, Map.of());
    }

    /** The result of a batch staged uncommitted: nothing counted yet. */
    public static final WriteResult STAGED = new WriteResult(0, 0, 0, Map.of(), Map.of(), true);

    public long keptOutTotal() {
        return keptOut.values().stream().mapToLong(Long::longValue).sum();
    }
}
