package dev.kbackfill.core.run;

import java.time.Duration;

/**
 * How a run reads and batches.
 *
 * @param batchRecords  records per batch before it is reduced and written (one transaction each)
 * @param queueChunks   polls the reader may run ahead of the writer; with the consumer's poll size this bounds memory
 * @param flushAfter    a batch with fewer records is written anyway after this long without new records
 * @param strictTime    keep only records whose timestamp lies in the plan's [fromTime, toTime); count the rest
 * @param allowDataLoss skip offsets deleted since planning, and report them, instead of failing
 * @param stallTimeout  fail when reading makes no progress for this long
 */
public record RunOptions(int batchRecords, int queueChunks, Duration flushAfter, boolean strictTime,
                         boolean allowDataLoss, Duration stallTimeout) {

    public static final RunOptions DEFAULTS = new RunOptions(20_000, 4, Duration.ofSeconds(2), false, false,
            Duration.ofMinutes(2));

    public RunOptions {
        if (batchRecords < 1) {
            throw new IllegalArgumentException("batchRecords must be >= 1: " + batchRecords);
        }
        if (queueChunks < 1) {
            throw new IllegalArgumentException("queueChunks must be >= 1: " + queueChunks);
        }
    }

    public RunOptions withBatchRecords(int n) {
        return new RunOptions(n, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout);
    }

    public RunOptions withStrictTime(boolean strict) {
        return new RunOptions(batchRecords, queueChunks, flushAfter, strict, allowDataLoss, stallTimeout);
    }

    public RunOptions withAllowDataLoss(boolean allow) {
        return new RunOptions(batchRecords, queueChunks, flushAfter, strictTime, allow, stallTimeout);
    }
}
