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
 */
public record WriteResult(long upserted, long deleted, long ignored, Map<Integer, Long> keptOut) {

    public WriteResult {
        keptOut = Map.copyOf(keptOut);
    }

    /** A result in which nothing was kept out. */
    public WriteResult(long upserted, long deleted, long ignored) {
        this(upserted, deleted, ignored, Map.of());
    }

    public long keptOutTotal() {
        return keptOut.values().stream().mapToLong(Long::longValue).sum();
    }
}
