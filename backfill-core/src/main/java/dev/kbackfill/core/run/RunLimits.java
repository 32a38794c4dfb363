package dev.kbackfill.core.run;

import java.time.Duration;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;

/**
 * What one run may do at most, so that a backfill never takes a production database or cluster down: a rate of
 * records and of bytes read (token buckets: a burst of one second's worth, then the rate), and how many records or
 * how long before the run stops at a batch boundary (its progress committed; the next run continues there).
 *
 * @param maxRecords       records to read in this run, 0 for no limit; the batch that reaches it is the last
 * @param maxDuration      how long this run may write, {@link Duration#ZERO} for no limit; the batch then being read
 *                         is the last
 * @param recordsPerSecond records read per second at most, 0 for no limit
 * @param bytesPerSecond   key and value bytes read per second at most, 0 for no limit
 */
public record RunLimits(long maxRecords, Duration maxDuration, long recordsPerSecond, long bytesPerSecond) {

    public static final RunLimits NONE = new RunLimits(0, Duration.ZERO, 0, 0);

    public RunLimits {
        if (maxRecords < 0 || recordsPerSecond < 0 || bytesPerSecond < 0 || maxDuration.isNegative()) {
            throw new IllegalArgumentException("limits must not be negative");
        }
    }

    public boolean isNone() {
        return equals(NONE);
    }

    /** Whether a run that read {@code records} records in {@code elapsedNanos} must stop after its current batch. */
    boolean reached(long records, long elapsedNanos) {
        return (maxRecords > 0 && records >= maxRecords)
                || (!maxDuration.isZero() && elapsedNanos >= nanos(maxDuration));
    }

    /** A duration in nanoseconds, saturated: {@code --max-duration 999999999h} is simply no limit in practice. */
    private static long nanos(Duration d) {
        return d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : d.toNanos();
    }

    /**
     * What is left of these limits for a retry of the same run, after its earlier attempts read {@code records}
     * records in {@code elapsedNanos}: a transient failure never gives a run its limits afresh. A limit used up
     * leaves one record or one millisecond: the retry then writes at most one batch, its last.
     */
    RunLimits remaining(long records, long elapsedNanos) {
        long records0 = maxRecords == 0 ? 0 : Math.max(1, maxRecords - records);
        Duration left = maxDuration.isZero() ? Duration.ZERO
                : nanos(maxDuration) == Long.MAX_VALUE ? maxDuration
                : Duration.ofNanos(Math.max(1_000_000, maxDuration.toNanos() - elapsedNanos));
        return new RunLimits(records0, left, recordsPerSecond, bytesPerSecond);
    }

    /** A throttle for one run's reader, or one that never waits. */
    Throttle throttle() {
        return new Throttle(recordsPerSecond, bytesPerSecond);
    }

    /** Waits before a poll's records are handed on, so that reading stays within the rates. */
    static final class Throttle {
        private final Bucket records;
        private final Bucket bytes;
        private final long recordCapacity;
        private final long byteCapacity;

        Throttle(long recordsPerSecond, long bytesPerSecond) {
            this.recordCapacity = recordsPerSecond;
            this.byteCapacity = bytesPerSecond;
            this.records = recordsPerSecond == 0 ? null : bucket(recordsPerSecond);
            this.bytes = bytesPerSecond == 0 ? null : bucket(bytesPerSecond);
        }

        /**
         * A token bucket of a second's worth. Its refill is at most one token a nanosecond (what the bucket can
         * express): a rate above 10^9 a second, which no reader comes near, refills at that.
         */
        private static Bucket bucket(long perSecond) {
            long refill = Math.min(perSecond, 1_000_000_000L);
            return Bucket.builder().addLimit(Bandwidth.builder().capacity(perSecond)
                    .refillGreedy(refill, Duration.ofSeconds(1)).build()).build();
        }

        void acquire(long recordCount, long byteCount) throws InterruptedException {
            consume(records, recordCapacity, recordCount);
            consume(bytes, byteCapacity, byteCount);
        }

        /** Takes {@code n} tokens, a bucket's capacity at a time (a poll may hold more than a second's worth). */
        private static void consume(Bucket bucket, long capacity, long n) throws InterruptedException {
            if (bucket == null) {
                return;
            }
            for (long left = n; left > 0; left -= Math.min(left, capacity)) {
                bucket.asBlocking().consume(Math.min(left, capacity));
            }
        }
    }
}
