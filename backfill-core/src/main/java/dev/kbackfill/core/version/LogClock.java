package dev.kbackfill.core.version;

import java.util.HashMap;
import java.util.Map;

/**
 * The log time of the records of one run, per partition: the highest record timestamp of the partition at or before
 * each offset. A run starts a partition at some offset {@code s}; its clock starts at the highest timestamp of the
 * records a reader sees below {@code s} ({@link dev.kbackfill.resolver.LogTimes#before}, looked up in the log, not
 * in what this run happened to read), so every run gives a record the same log time wherever it starts.
 *
 * <p>Records must be stamped in offset order per partition, every record the reader sees included (filtered,
 * rejected or superseded records move the clock too: it belongs to the log, not to what a run keeps).
 */
public final class LogClock {

    /** No record below the start: the clock starts from nothing. */
    public static final long NONE = Long.MIN_VALUE;

    private final Map<Integer, long[]> clocks = new HashMap<>();

    /** @param before per partition, the highest timestamp below the run's start; a partition not named starts at {@link #NONE} */
    public LogClock(Map<Integer, Long> before) {
        before.forEach((p, t) -> clocks.put(p, new long[] {t}));
    }

    /** The log time of the next record of {@code partition}, whose timestamp is {@code timestamp}. */
    public long stamp(int partition, long timestamp) {
        long[] clock = clocks.computeIfAbsent(partition, p -> new long[] {NONE});
        if (timestamp > clock[0]) {
            clock[0] = timestamp;
        }
        return clock[0];
    }
}
