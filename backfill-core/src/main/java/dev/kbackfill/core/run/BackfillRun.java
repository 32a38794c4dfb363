package dev.kbackfill.core.run;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;

/**
 * One run of a job: reads what is left of the plan, decodes, batches, reduces to the last record per key and
 * writes each batch with its progress in one sink transaction.
 *
 * <p>Reading and writing overlap: a reader thread polls and decodes into a bounded queue, so memory stays bounded
 * by {@link RunOptions#queueChunks()} polls plus one batch, whatever the size of the range.
 */
public final class BackfillRun {

    private final Map<String, Object> kafkaConfig;
    private final RecordDecoder decoder;
    private final Sink sink;
    private final RunOptions options;
    private final TombstoneMode tombstoneMode;
    private final RunListener listener;
    private final Rejects rejects;

    public BackfillRun(Map<String, Object> kafkaConfig, RecordDecoder decoder, Sink sink, TombstoneMode tombstoneMode,
                       RunOptions options, RunListener listener) {
        this(kafkaConfig, decoder, sink, tombstoneMode, options, listener, Rejects.fail());
    }

    /** @param rejects what happens to records that cannot be decoded */
    public BackfillRun(Map<String, Object> kafkaConfig, RecordDecoder decoder, Sink sink, TombstoneMode tombstoneMode,
                       RunOptions options, RunListener listener, Rejects rejects) {
        this.rejects = rejects;
        this.kafkaConfig = Map.copyOf(kafkaConfig);
        this.decoder = decoder;
        this.sink = sink;
        this.tombstoneMode = tombstoneMode;
        this.options = options;
        this.listener = listener;
    }

    /** What the reader hands the writer: one poll's changes and the positions after them, or the end, or a failure. */
    private sealed interface Item {
    }

    private record Chunk(List<Change> changes, Map<Integer, Long> positions, Map<Integer, Long> read,
                         Map<Integer, Long> filtered, Map<Integer, Long> rejected, Map<Integer, Long> lost,
                         long bytes) implements Item {
    }

    private record End() implements Item {
    }

    private record Failed(Throwable error) implements Item {
    }

    /** Mutable per-partition counters of this run. */
    private static final class Counters {
        long read;
        long superseded;
        long filtered;
        long rejected;
        long written;
        long lost;
        long next;
        final long end;

        Counters(long next, long end) {
            this.next = next;
            this.end = end;
        }
    }

    /**
     * Runs the job from its stored progress to the end of its plan.
     *
     * @throws RunFailure naming the cause and where each unfinished partition stands
     */
    public RunSummary execute(JobState state) {
        long startedNanos = System.nanoTime();
        Plan plan = state.plan();
        Map<Integer, Counters> counters = new TreeMap<>();
        List<BoundedReader.Range> ranges = new ArrayList<>();
        long total = 0;
        for (PartitionRange r : plan.partitions()) {
            long next = state.next(r);
            counters.put(r.partition(), new Counters(next, r.end()));
            if (next < r.end()) {
                ranges.add(new BoundedReader.Range(r.partition(), next, r.end()));
                total += r.end() - next;
            }
        }
        long[] totals = {0, 0, 0}; // bytes, batches, records
        if (!ranges.isEmpty()) {
            readAndWrite(state, plan, ranges, counters, total, totals);
        }
        List<PartitionStats> stats = new ArrayList<>();
        counters.forEach((p, c) -> stats.add(new PartitionStats(p, c.read, c.superseded, c.filtered, c.rejected,
                c.written, c.lost, c.next, c.end)));
        return new RunSummary(state.job(), state.run(), stats, totals[0], totals[1],
                Duration.ofNanos(System.nanoTime() - startedNanos));
    }

    private void readAndWrite(JobState state, Plan plan, List<BoundedReader.Range> ranges,
                              Map<Integer, Counters> counters, long total, long[] totals) {
        BlockingQueue<Item> queue = new ArrayBlockingQueue<>(options.queueChunks());
        Instant from = options.strictTime() ? plan.fromTime().orElse(null) : null;
        Instant to = options.strictTime() ? plan.toTime().orElse(null) : null;
        // a poll never hands over more than a batch: --batch-size bounds a transaction (and memory) as it says
        Map<String, Object> readerConfig = new HashMap<>(kafkaConfig);
        readerConfig.putIfAbsent("max.poll.records", Math.min(5000, options.batchRecords()));
        BoundedReader reader = new BoundedReader(plan.topic(), readerConfig, plan.request().isolationLevel(), ranges,
                options.allowDataLoss(), options.stallTimeout());
        Thread readerThread = new Thread(() -> {
            try {
                reader.read((records, positions, lost) -> queue.put(decode(records, positions, lost, from, to)));
                queue.put(new End());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable t) {
                try {
                    queue.put(new Failed(t));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "kbackfill-reader");
        readerThread.setDaemon(true);
        readerThread.start();
        try {
            writeLoop(state, queue, counters, total, totals);
        } catch (RunFailure e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RunFailure(describeFailure(e, counters), e);
        } finally {
            reader.stop();
            joinQuietly(readerThread);
            reader.close();
        }
    }

    private Chunk decode(List<SourceRecord> records, Map<Integer, Long> positions, Map<Integer, Long> lost,
                         Instant from, Instant to) {
        List<Change> changes = new ArrayList<>(records.size());
        Map<Integer, Long> read = new HashMap<>();
        Map<Integer, Long> filtered = new HashMap<>();
        Map<Integer, Long> rejected = new HashMap<>();
        long bytes = 0;
        for (SourceRecord r : records) {
            read.merge(r.partition(), 1L, Long::sum);
            bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
            if ((from != null && r.timestamp() < from.toEpochMilli()) || (to != null && r.timestamp() >= to.toEpochMilli())) {
                filtered.merge(r.partition(), 1L, Long::sum);
                continue;
            }
            if (r.value() == null && tombstoneMode == TombstoneMode.IGNORE) {
                filtered.merge(r.partition(), 1L, Long::sum);
                continue;
            }
            try {
                changes.add(decoder.decode(r));
            } catch (DecodeException e) {
                rejects.reject(r, e);
                rejected.merge(r.partition(), 1L, Long::sum);
            }
        }
        // dead letters are durable before the writer can commit progress past them
        rejects.flush();
        return new Chunk(changes, positions, read, filtered, rejected, lost, bytes);
    }

    private void writeLoop(JobState state, BlockingQueue<Item> queue, Map<Integer, Counters> counters, long total,
                           long[] totals) {
        List<Change> pending = new ArrayList<>();
        Map<Integer, Long> pendingPositions = new HashMap<>();
        long sequence = 0;
        long records = 0;
        while (true) {
            Item item;
            try {
                item = queue.poll(options.flushAfter().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RunFailure("interrupted; " + where(counters), e);
            }
            if (item instanceof Failed f) {
                Throwable error = f.error();
                if (error instanceof RuntimeException re) {
                    throw new RunFailure(describeFailure(re, counters), re);
                }
                throw new RunFailure(describeFailure(error, counters), error);
            }
            boolean end = item instanceof End;
            if (item instanceof Chunk c) {
                pending.addAll(c.changes());
                pendingPositions.putAll(c.positions());
                c.read().forEach((p, n) -> counters.get(p).read += n);
                c.filtered().forEach((p, n) -> counters.get(p).filtered += n);
                c.rejected().forEach((p, n) -> counters.get(p).rejected += n);
                c.lost().forEach((p, n) -> counters.get(p).lost += n);
                records += c.read().values().stream().mapToLong(Long::longValue).sum();
                totals[0] += c.bytes();
            }
            boolean full = pending.size() >= options.batchRecords();
            boolean idle = item == null;
            if ((full || idle || end) && hasProgress(pendingPositions, counters)) {
                sequence++;
                write(state, sequence, pending, pendingPositions, counters);
                totals[1]++;
                pending = new ArrayList<>();
                pendingPositions = new HashMap<>();
                listener.onProgress(done(counters, total), total, records, totals[0]);
            }
            if (end) {
                return;
            }
        }
    }

    private void write(JobState state, long sequence, List<Change> changes, Map<Integer, Long> positions,
                       Map<Integer, Counters> counters) {
        List<Change> reduced = Reduction.lastPerKey(changes);
        Map<Integer, Long> superseded = new HashMap<>();
        changes.forEach(c -> superseded.merge(c.partition(), 1L, Long::sum));
        reduced.forEach(c -> superseded.merge(c.partition(), -1L, Long::sum));
        Map<Integer, Long> next = new HashMap<>();
        positions.forEach((p, pos) -> {
            if (pos > counters.get(p).next) {
                next.put(p, pos);
            }
        });
        sink.write(new WriteBatch(state.job(), state.run(), sequence, reduced, RowShape.of(reduced), next));
        superseded.forEach((p, n) -> counters.get(p).superseded += n);
        reduced.forEach(c -> counters.get(c.partition()).written++);
        next.forEach((p, pos) -> counters.get(p).next = pos);
    }

    private static boolean hasProgress(Map<Integer, Long> positions, Map<Integer, Counters> counters) {
        return positions.entrySet().stream().anyMatch(e -> e.getValue() > counters.get(e.getKey()).next);
    }

    private static long done(Map<Integer, Counters> counters, long total) {
        long left = counters.values().stream().mapToLong(c -> Math.max(0, c.end - c.next)).sum();
        return Math.max(0, total - left);
    }

    private static String describeFailure(Throwable e, Map<Integer, Counters> counters) {
        String cause = e instanceof DecodeException ? "cannot decode " + e.getMessage()
                : e.getMessage() == null ? e.getClass().getName() : e.getMessage();
        return cause + "; " + where(counters);
    }

    private static String where(Map<Integer, Counters> counters) {
        StringBuilder sb = new StringBuilder("stopped with ");
        List<String> parts = new ArrayList<>();
        counters.forEach((p, c) -> {
            if (c.next < c.end) {
                parts.add("partition " + p + " at offset " + c.next + " of [.., " + c.end + ")");
            }
        });
        if (parts.isEmpty()) {
            return sb.append("every partition written to its end").toString();
        }
        return sb.append(String.join(", ", parts)).append(" committed; a rerun resumes there").toString();
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
