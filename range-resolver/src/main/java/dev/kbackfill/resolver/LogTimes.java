package dev.kbackfill.resolver;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.IsolationLevel;

/**
 * The highest record timestamp below an offset, per partition: where a reader that starts there picks up a log's
 * clock. kbackfill orders the versions of a key by the <em>log time</em> of their records (the highest timestamp of
 * the partition at or before the record), which never goes down along a log; a run that starts a partition at
 * offset {@code s} starts its clock at the value this class finds for {@code s}, so that every run, wherever it
 * starts, gives each record the same log time.
 *
 * <p>Found without reading the prefix: a visible record below {@code s} with a timestamp of at least {@code T}
 * exists exactly when the first visible record at or after {@code T} (ListOffsets, then checked with a group-less
 * consumer, as for time bounds) lies below {@code s}. The record just below {@code s} gives a first answer; the
 * search then doubles its step upwards from each answer and halves it back, all partitions in one request per
 * step (each partition at its own time). Where timestamps never go backwards, that is two lookups.
 *
 * <p>Only records the log still holds count: records removed by retention or compaction no longer move the clock.
 *
 * <p>A probe reads at most {@value #SCAN_BUDGET} offsets past ListOffsets' answer. Where that is not enough (a
 * transactional topic whose markers, stamped by the broker's clock, are later than every record near them: the first
 * offset at or after a time is then a marker, and no visible record at or after it may follow for a long way), the
 * search stops at the highest timestamp it found, a lower bound, and says so ({@link Result#bounded()}).
 */
public final class LogTimes {

    /** A time every record's timestamp is at or after: the first visible record, whatever its time. */
    private static final Instant ANY_TIME = Instant.ofEpochMilli(Long.MIN_VALUE / 4);

    /** Offsets one probe may read past ListOffsets' answer. */
    static final int SCAN_BUDGET = 10_000;

    private LogTimes() {
    }

    /**
     * @param times   per partition, the highest timestamp below its start (absent: no record below it)
     * @param bounded the partitions whose entry is only a lower bound (a probe ran out of its budget)
     */
    public record Result(Map<Integer, Long> times, java.util.Set<Integer> bounded) {
    }

    /**
     * For each partition in {@code starts}, the highest timestamp (epoch milliseconds) of the records a reader at
     * {@code isolationLevel} sees below its start offset; a partition with no such record is absent.
     */
    public static Map<Integer, Long> before(OffsetSource source, String topic, Map<Integer, Long> starts,
                                            IsolationLevel isolationLevel) {
        return lookUp(source, topic, starts, isolationLevel, SCAN_BUDGET).times();
    }

    /** {@link #before}, saying which partitions got only a lower bound. */
    public static Result lookUp(OffsetSource source, String topic, Map<Integer, Long> starts,
                                IsolationLevel isolationLevel) {
        return lookUp(source, topic, starts, isolationLevel, SCAN_BUDGET);
    }

    static Result lookUp(OffsetSource source, String topic, Map<Integer, Long> starts, IsolationLevel isolationLevel,
                         int budget) {
        java.util.Set<Integer> bounded = new java.util.TreeSet<>();
        Map<Integer, Long> logStarts = source.logStartOffsets(topic, starts.keySet());
        Map<Integer, Long> pending = new HashMap<>();
        starts.forEach((p, s) -> {
            if (s > logStarts.getOrDefault(p, 0L)) {
                pending.put(p, s);
            }
        });
        Map<Integer, Long> found = new HashMap<>();
        if (pending.isEmpty()) {
            return new Result(found, bounded);
        }
        Map<Integer, long[]> search = firstAnswers(source, topic, pending, logStarts, isolationLevel, budget, bounded);
        while (!search.isEmpty()) {
            // every partition at its own time, all in one request (and one check pass) per step
            Map<Integer, Instant> probes = new HashMap<>();
            search.forEach((p, st) -> probes.put(p, Instant.ofEpochMilli(probe(st))));
            Map<Integer, Long> from = new HashMap<>();
            Map<Integer, Long> until = new HashMap<>();
            Map<Integer, OffsetSource.TimestampedOffset> listed = source.offsetsForTimes(topic, probes, isolationLevel);
            listed.forEach((p, o) -> {
                if (o.offset() < pending.get(p)) {
                    from.put(p, o.offset());
                    until.put(p, Math.min(pending.get(p), o.offset() + budget)); // a probe's read is bounded
                }
            });
            Map<Integer, OffsetSource.TimestampedOffset> seen = from.isEmpty() ? Map.of()
                    : source.firstVisibleAtOrAfter(topic, from, until, probes, isolationLevel);
            for (int p : List.copyOf(search.keySet())) {
                long[] st = search.get(p);
                long time = probes.get(p).toEpochMilli();
                OffsetSource.TimestampedOffset hit = seen.get(p);
                if (hit == null && from.containsKey(p) && until.get(p) < pending.get(p)) {
                    // nothing visible within the budget, and the range goes on: the answer stays unknown above
                    // what was found; stop at that lower bound
                    found.put(p, st[0]);
                    bounded.add(p);
                    search.remove(p);
                    continue;
                }
                if (hit != null) {
                    st[0] = Math.max(hit.timestamp().toEpochMilli(), time); // a record at or above the probe
                    st[1] = st[2] == Long.MAX_VALUE ? saturatedDouble(st[1]) : Math.max(1, st[1]);
                } else {
                    st[2] = time; // nothing at or above the probe
                    st[1] = 1;
                }
                if ((st[2] != Long.MAX_VALUE && st[2] - st[0] <= 1) || st[0] >= Long.MAX_VALUE - 1) {
                    found.put(p, st[0]);
                    search.remove(p);
                }
            }
        }
        return new Result(found, bounded);
    }

    /**
     * Per partition, the search's start: the record just below the start (or, past markers, the first one the log
     * holds), as {known lower bound, step, upper bound or MAX}; a partition with no visible record within the budget
     * of the log start is {@code bounded} (nothing known below its start).
     */
    private static Map<Integer, long[]> firstAnswers(OffsetSource source, String topic, Map<Integer, Long> pending,
                                                     Map<Integer, Long> logStarts, IsolationLevel isolationLevel,
                                                     int budget, java.util.Set<Integer> bounded) {
        // a first answer: the record just below the start (or, past markers, the first one the log holds)
        Map<Integer, Long> justBelow = new HashMap<>();
        pending.forEach((p, s) -> justBelow.put(p, s - 1));
        Map<Integer, OffsetSource.TimestampedOffset> first =
                source.firstVisibleAtOrAfter(topic, justBelow, pending, ANY_TIME, isolationLevel);
        Map<Integer, Long> fromLogStart = new HashMap<>();
        pending.forEach((p, s) -> {
            if (!first.containsKey(p)) {
                fromLogStart.put(p, logStarts.getOrDefault(p, 0L));
            }
        });
        Map<Integer, Long> firstUntil = new HashMap<>();
        fromLogStart.forEach((p, from) -> firstUntil.put(p, Math.min(pending.get(p), from + budget)));
        Map<Integer, OffsetSource.TimestampedOffset> firstRetained = fromLogStart.isEmpty() ? Map.of()
                : source.firstVisibleAtOrAfter(topic, fromLogStart, firstUntil, ANY_TIME, isolationLevel);
        fromLogStart.forEach((p, from) -> {
            if (!firstRetained.containsKey(p) && firstUntil.get(p) < pending.get(p)) {
                bounded.add(p); // no visible record within the budget of the log start: nothing known below the start
            }
        });
        Map<Integer, long[]> search = new HashMap<>();
        pending.forEach((p, s) -> {
            OffsetSource.TimestampedOffset f = first.containsKey(p) ? first.get(p) : firstRetained.get(p);
            if (f != null) {
                search.put(p, new long[] {f.timestamp().toEpochMilli(), 1, Long.MAX_VALUE});
            }
        });
        return search;
    }

    /** The next time to probe: above the lower bound by the step while no upper bound is known, else halfway. */
    private static long probe(long[] st) {
        if (st[2] == Long.MAX_VALUE) {
            long next = st[0] + st[1];
            return next < st[0] ? Long.MAX_VALUE - 1 : next; // saturate instead of overflowing
        }
        return st[0] + (st[2] - st[0]) / 2 == st[0] ? st[0] + 1 : st[0] + (st[2] - st[0]) / 2;
    }

    private static long saturatedDouble(long step) {
        return step > Long.MAX_VALUE / 4 ? step : step * 2;
    }
}
