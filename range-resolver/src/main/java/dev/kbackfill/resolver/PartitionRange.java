package dev.kbackfill.resolver;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The slice of one partition to backfill: the half-open offset range {@code [start, end)}.
 *
 * <p>{@code start} is the first offset to read; {@code end} is the first offset <em>not</em> to read. For
 * example {@code [10, 15)} covers offsets 10, 11, 12, 13 and 14, and {@code [15, 15)} is empty. A reader is done
 * with the partition when its position reaches {@code end}: transaction markers and compaction gaps mean that
 * there may be no record at {@code end - 1}, and {@link #span()} is an upper bound on the records read.
 *
 * @param partition the partition number
 * @param start     first offset in the range
 * @param end       first offset after the range
 * @param logStart  the partition's log start offset when the plan was resolved
 * @param logEnd    the partition's end offset when the plan was resolved (at the plan's isolation level)
 * @param startTime timestamp of the record at {@code start}, where the lookups told it
 * @param notes     adjustments made on this partition and why
 */
public record PartitionRange(int partition, long start, long end, long logStart, long logEnd,
                             Optional<Instant> startTime, List<Note> notes) {

    public PartitionRange {
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
        if (start < 0 || start > end) {
            throw new IllegalArgumentException("partition " + partition + ": not a range [" + start + ", " + end + ")");
        }
        Objects.requireNonNull(startTime, "startTime");
        notes = List.copyOf(notes);
    }

    /** {@code end - start}: the number of offsets in the range, an upper bound on the records in it. */
    public long span() {
        return end - start;
    }

    public boolean isEmpty() {
        return start == end;
    }
}
