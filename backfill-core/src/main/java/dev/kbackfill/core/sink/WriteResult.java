package dev.kbackfill.core.sink;

/**
 * What a sink did with a batch.
 *
 * @param upserted rows inserted or updated (or attempted, where the database does not say which were skipped)
 * @param deleted  rows deleted or marked deleted
 * @param ignored  changes deliberately not written (tombstones under {@code ignore})
 */
public record WriteResult(long upserted, long deleted, long ignored) {
}
