package dev.kbackfill.resolver;

/**
 * The requested range starts (or lies entirely) below the partition's log start offset: those records were
 * deleted (retention, {@code deleteRecords}) and cannot be backfilled. Raised unless the request allows data
 * loss, in which case the range is clamped to the log start and the plan carries a note instead.
 */
public final class DataLossException extends RequestException {
    public DataLossException(String message) {
        super(message);
    }
}
