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
 * @param liveWriter    {@code --live-writer}: whether another writer keeps the target current, which
 *                      {@link BackfillJob} resolves into {@code foreignRows} when the sink is open
 * @param foreignRows   what a target row another writer wrote is to the run's records under newer-wins
 *                      ({@link dev.kbackfill.core.version.Version#replaces}); {@code NEWEST_IN_LOG} makes the run read
 *                      the log after its range first and leave out every record with a later one of its key there (a
 *                      run beside a live writer, {@link dev.kbackfill.core.live.LogTail})
 */
public record RunOptions(int batchRows, int queueChunks, Duration flushAfter, boolean strictTime,
                         boolean allowDataLoss, Duration stallTimeout, RunLimits limits, LiveWriter liveWriter,
                         dev.kbackfill.core.version.Version.ForeignRows foreignRows) {

    /** Options of a run whose live writer is found out when the sink opens. */
    public RunOptions(int batchRows, int queueChunks, Duration flushAfter, boolean strictTime, boolean allowDataLoss,
                      Duration stallTimeout, RunLimits limits) {
        this(batchRows, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, limits, LiveWriter.AUTO,
                dev.kbackfill.core.version.Version.ForeignRows.KEPT);
    }

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
        java.util.Objects.requireNonNull(liveWriter, "liveWriter");
        java.util.Objects.requireNonNull(foreignRows, "foreignRows");
    }

    /** Whether the run reads the log after its range and leaves out what it shows superseded. */
    public boolean besideLiveWriter() {
        return foreignRows == dev.kbackfill.core.version.Version.ForeignRows.NEWEST_IN_LOG;
    }

    /**
     * Records read into one batch at most, whatever their keys: bounds the work a crash can cost (a topic with few
     * keys would otherwise reduce for ever into one uncommitted batch). Ten times {@link #batchRows()}.
     */
    public long batchRecordLimit() {
        return 10L * batchRows;
    }

    public RunOptions withBatchRows(int n) {
        return new RunOptions(n, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, limits, liveWriter,
                foreignRows);
    }

    public RunOptions withStrictTime(boolean strict) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strict, allowDataLoss, stallTimeout, limits, liveWriter,
                foreignRows);
    }

    public RunOptions withAllowDataLoss(boolean allow) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strictTime, allow, stallTimeout, limits, liveWriter,
                foreignRows);
    }

    public RunOptions withLimits(RunLimits l) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, l, liveWriter,
                foreignRows);
    }

    public RunOptions withForeignRows(dev.kbackfill.core.version.Version.ForeignRows f) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, limits,
                liveWriter, f);
    }

    public RunOptions withLiveWriter(LiveWriter w) {
        return new RunOptions(batchRows, queueChunks, flushAfter, strictTime, allowDataLoss, stallTimeout, limits, w,
                foreignRows);
    }
}
