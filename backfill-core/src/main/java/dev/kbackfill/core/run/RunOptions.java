package dev.kbackfill.core.run;

import java.time.Duration;

/**
 * How a run reads and batches.
 *
 * @param batchRows     rows a batch writes at most: distinct keys, the batch being reduced as it is read (one
 *                      transaction each); a batch also ends after {@link #batchRecordLimit()} records
 * @param queueChunks   polls the reader may run ahead of the writer; with the consumer's poll size this bounds memory
 * @param flushAfter    a batch with fewer records is written anyway after this long without new records
 * @param strictTime    keep only records whose timestamp lies in the plan's [fromTime, toTime); count the rest
 * @param allowDataLoss skip offsets deleted since planning, and report them, instead of failing
 * @param stallTimeout  fail when reading makes no progress for this long
 * @param limits        rates and per-run limits ({@link RunLimits#NONE}: none)
 */
public record RunOptions(int batchRows, int queueChunks, Duration flushAfter, boolean strictTime,
                         boolean allowDataLoss, Duration stallTimeout, RunLimits limits) {

    /** Options without limits. */
    public RunOptions(int batchRows, int queueChunks, Duration flushAfter, boolean strictTime, boolean allowDataLoss,
                      Duration stallTimeout) {
        this(batchRows, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, RunLimits.NONE);
    }

    public static final RunOptions DEFAULTS = new RunOptions(20_000, 4, Duration.ofSeconds(2), false, false,
            Duration.ofMinutes(2));

    public RunOptions {
        if (batchRows < 1) {
            throw new IllegalArgumentException("batchRows must be >= 1: " + batchRows);
        }
        if (queueChunks < 1) {
            throw new IllegalArgumentException("queueChunks must be >= 1: " + queueChunks);
        }
        java.util.Objects.requireNonNull(limits, "limits");
    }

    /**
     * Records read into one batch at most, whatever their keys: bounds the work a crash can cost (a topic with few
     * keys would otherwise reduce for ever into one uncommitted batch). Ten times {@link #batchRows()}.
     */
    public long batchRecordLimit() {
        return 10L * batchRows;
    }

    public RunOptions withBatchRows(int n) {
        return new RunOptions(n, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, limits);
    }

    public RunOptions withStrictTime(boolean strict) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strict, allowDataLoss, stallTimeout, limits);
    }

    public RunOptions withAllowDataLoss(boolean allow) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strictTime, allow, stallTimeout, limits);
    }

    public RunOptions withLimits(RunLimits l) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, l);
    }
}
