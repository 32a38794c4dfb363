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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.RecordRejectedException;
import dev.kbackfill.core.sink.BatchWriter;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.PartitionSplit;
import dev.kbackfill.resolver.Plan;

/**
 * One run of a job: reads what is left of the plan, decodes, batches, reduces to the last record per key and
 * writes each batch with its progress in one sink transaction.
 *
 * <p>Reading, reducing and writing overlap: a reader thread polls and decodes into a bounded queue, this thread
 * reduces into a batch, and a writer thread writes the previous batch, so memory stays bounded by
 * {@link RunOptions#queueChunks()} polls plus two batches, whatever the size of the range. A batch is reduced as
 * it fills, so it holds one change per key: at most {@link RunOptions#batchRows()} keys, and it ends early after
 * {@link RunOptions#batchRecordLimit()} records.
 */
public final class BackfillRun {

    private final Map<String, Object> kafkaConfig;
    private final RecordDecoder decoder;
    private final BatchWriter sink;
    private final RunOptions options;
    private final TombstoneMode tombstoneMode;
    private final RunListener listener;
    private final Rejects rejects;
    private final boolean keepSource;
    private final boolean lazyValues;
    /**
     * Whether a batch keeps the coordinates of the records it reduced away: where a record the sink refuses does not
     * fail the run, its key then falls back to its last record the sink accepts, as a smaller batch would have left.
     */
    private final boolean keepEarlier;
    /** Reads back the earlier records of refused keys ({@link #keepEarlier}); open while the run reads. */
    private dev.kbackfill.core.read.RecordFetch fetch;
    private final dev.kbackfill.core.read.RecordSource.Factory source;

    public BackfillRun(Map<String, Object> kafkaConfig, RecordDecoder decoder, BatchWriter sink, TombstoneMode tombstoneMode,
                       RunOptions options, RunListener listener) {
        this(kafkaConfig, decoder, sink, tombstoneMode, options, listener, Rejects.fail());
    }

    /** @param rejects what happens to records that cannot be decoded */
    public BackfillRun(Map<String, Object> kafkaConfig, RecordDecoder decoder, BatchWriter sink, TombstoneMode tombstoneMode,
                       RunOptions options, RunListener listener, Rejects rejects) {
        this(kafkaConfig, decoder, sink, tombstoneMode, options, listener, rejects,
                dev.kbackfill.core.read.RecordSource.Factory.KAFKA);
    }

    /** @param source where the records come from (Kafka itself, or an engine's own Kafka source) */
    public BackfillRun(Map<String, Object> kafkaConfig, RecordDecoder decoder, BatchWriter sink, TombstoneMode tombstoneMode,
                       RunOptions options, RunListener listener, Rejects rejects,
                       dev.kbackfill.core.read.RecordSource.Factory source) {
        this.source = source;
        this.rejects = rejects;
        this.kafkaConfig = Map.copyOf(kafkaConfig);
        this.decoder = decoder;
        this.sink = sink;
        this.tombstoneMode = tombstoneMode;
        this.options = options;
        this.listener = listener;
        // a record the sink refuses goes to the dead-letter destination raw: keep raw records where there is one
        this.keepSource = sink.copiesSourceRecords() || !rejects.destination().isEmpty();
        // values are decoded only for the record that survives for its key; a poison record that a later record of
        // its key supersedes is then never seen, so only when poison records fail the run anyway
        // (and not where versions are ordered by a value field: every record's field takes part in the reduction)
        // (a sink that decodes values itself, later, never needs them here)
        // (nor with --where, which reads every record whole to decide whether it is kept)
        this.lazyValues = decoder.keyedByRecordKey() && decoder.versionField().isEmpty()
                && decoder.filter().isEmpty() && (rejects.failsTheRun() || !sink.needsValues());
        this.keepEarlier = !rejects.failsTheRun() && sink.needsValues();
    }

    /** What the reader hands the writer: one poll's changes and the positions after them, or the end, or a failure. */
    private sealed interface Item {
    }

    /**
     * @param poison the records that cannot be decoded, with why: dead-lettered when the chunk joins a batch, not
     *               when it is read, so that a run stopped by a limit or a signal leaves the records it read ahead
     *               (and will read again next run) out of the dead-letter destination
     */
    private record Chunk(List<Change> changes, Map<Integer, Long> positions, Map<Integer, Long> read,
                         Map<Integer, Long> filtered, Map<Integer, Long> rejected, Map<Integer, Long> lost,
                         Map<Integer, Long> late, List<Map.Entry<SourceRecord, DecodeException>> poison,
                         long bytes) implements Item {
    }

    private record End() implements Item {
    }

    private record Failed(Throwable error) implements Item {
    }

    /**
     * What a batch's records came to besides its changes, per partition: counted when the batch commits, as its
     * changes are, so that a retry that reads them again counts them once (reads alone count per attempt).
     */
    private static final class Tally {
        final Map<Integer, Long> filtered = new HashMap<>();
        final Map<Integer, Long> rejected = new HashMap<>();
        final Map<Integer, Long> lost = new HashMap<>();
        final Map<Integer, Long> late = new HashMap<>();

        void add(Chunk c) {
            c.filtered().forEach((p, n) -> filtered.merge(p, n, Long::sum));
            c.rejected().forEach((p, n) -> rejected.merge(p, n, Long::sum));
            c.lost().forEach((p, n) -> lost.merge(p, n, Long::sum));
            c.late().forEach((p, n) -> late.merge(p, n, Long::sum));
        }

        void applyTo(Map<Integer, Counters> counters) {
            filtered.forEach((p, n) -> counters.get(p).filtered += n);
            rejected.forEach((p, n) -> counters.get(p).rejected += n);
            lost.forEach((p, n) -> counters.get(p).lost += n);
            late.forEach((p, n) -> counters.get(p).late += n);
        }
    }

    /** Mutable per-partition counters of this run. */
    private static final class Counters {
        long read;
        long superseded;
        long filtered;
        long rejected;
        long written;
        long keptOut;
        long lost;
        long late;
        long refused;
        long supersededInLog;
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
        Map<Integer, Long> starts = new TreeMap<>();
        long total = 0;
        for (PartitionRange r : plan.partitions()) {
            long next = state.next(r);
            counters.put(r.partition(), new Counters(next, r.end()));
            if (next < r.end()) {
                starts.put(r.partition(), next);
                total += r.end() - next;
            }
        }
        Totals totals = new Totals();
        if (!starts.isEmpty()) {
            try {
                List<BoundedReader.Range> ranges = ranges(plan, starts);
                newest = options.besideLiveWriter() ? newestInLog(state, plan, ranges) : null;
                readAndWrite(state, plan, ranges, counters, total, totals);
            } catch (RunFailure e) {
                if (state.untouched() && totals.batches == 0) {
                    refusedFirstBatch(e.getCause()); // the options, not a record: bad input, nothing written
                }
                // what the committed batches did, so that a retry or a report can account for it
                throw new RunFailure(e.getMessage(), e.getCause(), summary(state, counters, totals, startedNanos));
            } finally {
                if (newest != null) {
                    listener.onNote("beside a live writer: read " + newest.records() + " record(s) of " + plan.topic()
                            + " for their keys in all, to the log's end before each write");
                    newest.close();
                    newest = null;
                }
            }
        }
        return summary(state, counters, totals, startedNanos);
    }

    /**
     * Each key's newest record in the log from where this run starts to the log's end, read before the range is: a run
     * beside a live writer writes a record only where it is its key's newest there ({@link #write}). Partitions this
     * run does not read count from their range's end, their clocks looked up there.
     *
     * @throws RunFailure when the log cannot be read
     */
    private dev.kbackfill.core.live.NewestInLog newestInLog(JobState state, Plan plan, List<BoundedReader.Range> ranges) {
        Map<Integer, Long> from = new TreeMap<>();
        Map<Integer, Long> before = new HashMap<>();
        for (BoundedReader.Range r : ranges) {
            from.put(r.partition(), r.start());
            before.put(r.partition(), r.logTimeBefore());
        }
        Map<Integer, Long> finished = new TreeMap<>();
        plan.partitions().stream().filter(r -> !from.containsKey(r.partition()))
                .forEach(r -> finished.put(r.partition(), r.end()));
        long started = System.nanoTime();
        dev.kbackfill.core.live.NewestInLog log = null;
        try {
            if (!finished.isEmpty()) {
                before.putAll(withOffsets(offsets -> dev.kbackfill.resolver.LogTimes.lookUp(offsets, plan.topic(),
                        finished, plan.request().isolationLevel())).times());
                from.putAll(finished);
            }
            log = new dev.kbackfill.core.live.NewestInLog(BoundedReader.withJobClientId(kafkaConfig, state.job()),
                    plan.request().isolationLevel(), plan.topic(), from, before, decoder,
                    Runtime.getRuntime().maxMemory() / 16, java.nio.file.Path.of(System.getProperty("java.io.tmpdir")),
                    options.stallTimeout());
            log.catchUp();
            log.seal();
        } catch (RuntimeException e) {
            if (log != null) {
                log.close();
            }
            throw new RunFailure("cannot read the log of " + plan.topic() + " for its keys' newest records (a run beside "
                    + "a live writer writes a record only where it is its key's newest in the log): " + e.getMessage(), e);
        }
        listener.onNote("beside a live writer: read the "
                + log.records() + " record(s) of " + plan.topic() + " from where this run starts, up to " + log.positions()
                + ", in " + (System.nanoTime() - started) / 1_000_000 + " ms; a record is written only where it is its "
                + "key's newest among them" + log.spilledTo().map(d -> " (their keys went to disk under " + d + ")")
                .orElse("") + (log.undecodable() > 0 ? "; " + log.undecodable() + " of them had no key that decodes" : ""));
        return log;
    }

    /** The offset source of the job's cluster side, where the run was given one; else each lookup opens its own. */
    private dev.kbackfill.resolver.OffsetSource offsets;

    /** This run looking offsets up in {@code source}, the job's own, rather than opening a client for each lookup. */
    public BackfillRun lookingUpIn(dev.kbackfill.resolver.OffsetSource source) {
        this.offsets = java.util.Objects.requireNonNull(source, "source");
        return this;
    }

    private <T> T withOffsets(java.util.function.Function<dev.kbackfill.resolver.OffsetSource, T> lookup) {
        if (offsets != null) {
            return lookup.apply(offsets);
        }
        try (dev.kbackfill.resolver.KafkaOffsetSource own = dev.kbackfill.resolver.KafkaOffsetSource.create(kafkaConfig)) {
            return lookup.apply(own);
        }
    }

    /**
     * Each key's newest record in the log, for a run beside a live writer; null otherwise. Touched by the writer
     * thread only, once read.
     */
    private dev.kbackfill.core.live.NewestInLog newest;

    /**
     * The ranges left to read, each with the log time its partition has reached below its start, so that this run
     * gives every record the log time any other run gives it ({@link dev.kbackfill.resolver.LogTimes}).
     */
    private List<BoundedReader.Range> ranges(Plan plan, Map<Integer, Long> starts) {
        Map<Integer, Long> before;
        try {
            dev.kbackfill.resolver.LogTimes.Result found = withOffsets(offsets -> dev.kbackfill.resolver.LogTimes.lookUp(
                    offsets, plan.topic(), starts, plan.request().isolationLevel()));
            before = found.times();
            if (!found.bounded().isEmpty()) {
                listener.onNote("the log time below the start of partition(s) " + found.bounded() + " of " + plan.topic()
                        + " is only bounded (transaction markers later than the records near them): where producer "
                        + "timestamps go backwards there, runs starting at other offsets may order those records apart");
            }
        } catch (RuntimeException e) {
            List<PartitionSplit> where = plan.partitions().stream()
                    .map(r -> new PartitionSplit(r.partition(), starts.getOrDefault(r.partition(), r.end()), r.end()))
                    .toList();
            throw new RunFailure("cannot look up the log time below the start of each partition: " + e.getMessage()
                    + "; " + RunFailure.where(where), e);
        }
        List<BoundedReader.Range> ranges = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            Long start = starts.get(r.partition());
            if (start != null) {
                ranges.add(new BoundedReader.Range(r.partition(), start, r.end(),
                        before.getOrDefault(r.partition(), dev.kbackfill.core.version.LogClock.NONE)));
            }
        }
        return ranges;
    }

    private RunSummary summary(JobState state, Map<Integer, Counters> counters, Totals totals, long startedNanos) {
        List<PartitionStats> stats = new ArrayList<>();
        counters.forEach((p, c) -> stats.add(new PartitionStats(p, c.read, c.superseded, c.filtered, c.rejected,
                c.written, c.keptOut, c.lost, c.next, c.end, c.late, c.refused, c.supersededInLog)));
        List<String> warnings = new ArrayList<>();
        if (stats.stream().anyMatch(s -> s.written() + s.keptOut() > 0)) {
            for (String field : new java.util.TreeSet<>(decoder.unseenMappedFields())) {
                boolean header = decoder.mapping().headerColumns().contains(field);
                warnings.add(decoder.mapping().optionsNaming(field) + " name" + (decoder.mapping().optionsNaming(field)
                        .contains(" and ") ? "" : "s") + " " + (header ? "header" : "field") + " '" + field
                        + "', which no record this run wrote carries: check its spelling");
            }
        }
        return new RunSummary(state.job(), state.run(), stats, totals.bytes, totals.batches,
                Duration.ofNanos(System.nanoTime() - startedNanos), warnings);
    }

    private void readAndWrite(JobState state, Plan plan, List<BoundedReader.Range> ranges,
                              Map<Integer, Counters> counters, long total, Totals totals) {
        BlockingQueue<Item> queue = new ArrayBlockingQueue<>(options.queueChunks());
        Instant from = options.strictTime() ? plan.fromTime().orElse(null) : null;
        Instant to = options.strictTime() ? plan.toTime().orElse(null) : null;
        // a poll never hands over more than a batch: --batch-size bounds a transaction (and memory) as it says
        dev.kbackfill.core.read.RecordSource reader = source.open(plan, ranges,
                BoundedReader.withJobClientId(kafkaConfig, state.job()), options.allowDataLoss(),
                options.stallTimeout(), Math.min(5000, options.batchRows()));
        // a tombstone's version field: the nearest record before it with one (read back in the log where needed)
        dev.kbackfill.core.read.FieldSeeds seeds = decoder.versionField().isEmpty() ? null
                : new dev.kbackfill.core.read.FieldSeeds(kafkaConfig, plan.request().isolationLevel(), plan.topic(), decoder);
        // below the log start, the archive the plan names holds them
        dev.kbackfill.core.record.FieldClock fields = seeds == null ? null : new dev.kbackfill.core.record.FieldClock(
                dev.kbackfill.core.read.archive.ConnectorArchive.of(plan.request())
                        .<dev.kbackfill.core.record.FieldClock.Seeds>map(a -> new dev.kbackfill.core.read.archive
                                .ArchiveSeeds(seeds, a, plan.topic(), decoder)).orElse(seeds));
        ReadProgress progress = new ReadProgress(counters, total);
        Thread readerThread = new Thread(() -> {
            try {
                RunLimits.Throttle throttle = options.limits().throttle();
                reader.read((records, positions, lost) -> {
                    long bytes = 0;
                    for (SourceRecord r : records) {
                        bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                    }
                    throttle.acquire(records.size(), bytes); // --max-records-per-second, --max-bytes-per-second
                    queue.put(decode(records, positions, lost, bytes, from, to, fields));
                    progress.read(positions, records.size(), bytes);
                });
                queue.put(new End());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable t) {
                handOver(queue, new Failed(t));
            }
        }, "kbackfill-reader");
        readerThread.setDaemon(true);
        readerThread.start();
        fetch = new dev.kbackfill.core.read.RecordFetch(BoundedReader.withJobClientId(kafkaConfig, state.job()),
                plan.request().isolationLevel(), plan.topic());
        try {
            writeLoop(state, queue, counters, total, totals);
        } catch (RunFailure e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RunFailure(describeFailure(e, counters), e);
        } finally {
            reader.stop();
            readerThread.interrupt(); // it may wait on a full queue that nobody drains any more
            joinQuietly(readerThread);
            reader.close();
            fetch.close();
            if (seeds != null) {
                seeds.close();
            }
        }
    }

    private static void handOver(BlockingQueue<Item> queue, Failed failure) {
        try {
            queue.put(failure);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    /** @param bytes the records' key and value bytes */
    /** @param fields the version field's clock (records in offset order per partition), or null for none */
    private Chunk decode(List<SourceRecord> records, Map<Integer, Long> positions, Map<Integer, Long> lost, long bytes,
                         Instant from, Instant to, dev.kbackfill.core.record.FieldClock fields) {
        List<Change> changes = new ArrayList<>(records.size());
        Map<Integer, Long> read = new HashMap<>();
        Map<Integer, Long> filtered = new HashMap<>();
        Map<Integer, Long> rejected = new HashMap<>();
        Map<Integer, Long> late = new HashMap<>();
        List<Map.Entry<SourceRecord, DecodeException>> poison = new ArrayList<>();
        for (SourceRecord r : records) {
            read.merge(r.partition(), 1L, Long::sum);
            if (r.logTime() > r.timestamp()) {
                late.merge(r.partition(), 1L, Long::sum); // its producer's clock ran behind its log
            }
            if ((from != null && r.timestamp() < from.toEpochMilli()) || (to != null && r.timestamp() >= to.toEpochMilli())) {
                filtered.merge(r.partition(), 1L, Long::sum);
                if (fields != null) {
                    fields.passed(r, decoder);
                }
                continue;
            }
            if (r.value() == null && tombstoneMode == TombstoneMode.IGNORE) {
                filtered.merge(r.partition(), 1L, Long::sum);
                continue;
            }
            try {
                if (lazyValues) {
                    changes.add(decoder.decodeKey(r));
                    continue;
                }
                java.util.Optional<Change> kept = decoder.decodeKept(r);
                if (kept.isEmpty()) {
                    filtered.merge(r.partition(), 1L, Long::sum); // left out by --where
                    if (fields != null) {
                        fields.passed(r, decoder);
                    }
                    continue;
                }
                Change c = kept.get();
                if (fields != null) {
                    c = fields.stamp(c);
                }
                changes.add(keepSource ? c : c.withoutSource());
            } catch (DecodeException e) {
                if (rejects.failsTheRun()) {
                    reject(r, e); // the run fails on it: dead-lettered (where there is a destination) at once
                    throw e;
                }
                poison.add(Map.entry(r, e));
                rejected.merge(r.partition(), 1L, Long::sum);
                if (fields != null) {
                    // a record --where cannot judge still carries the log's field, as the records a run reads back
                    // below its start do (FieldSeeds): the tombstones after it take it wherever the run starts
                    fields.passed(r, decoder);
                }
            }
        }
        return new Chunk(changes, positions, read, filtered, rejected, lost, late, poison, bytes);
    }

    /**
     * A batch handed to the writer thread; its counters apply once its transaction is committed. It keeps what that
     * counting needs, per partition the records it superseded and the changes it reduced to, counts only, so that the
     * batch's raw records and undecoded changes are not kept alive beside its decoded ones while it is written (with
     * unique keys they were a third of the heap).
     */
    private record InFlight(Future<Written> done, Map<Integer, Long> superseded, Map<Integer, Long> reduced,
                            Map<Integer, Long> next, Tally tally) {
    }

    /**
     * Throws, as bad input, a failure of a job's first batch that says the command is wrong rather than a record:
     * a misspelt mapped name, or a mapping that writes two fields of the first records into one column. The job
     * never committed anything, so it is forgotten again, and the corrected command just runs.
     */
    private static void refusedFirstBatch(Throwable cause) {
        if (cause instanceof dev.kbackfill.resolver.RequestException r) {
            throw r;
        }
        if (cause instanceof DecodeException d && d.getCause() instanceof dev.kbackfill.core.record.ColumnMapping.Collision c) {
            throw new dev.kbackfill.resolver.RequestException(d.record().coordinates() + ": " + c.getMessage()
                    + " (nothing was written)");
        }
    }

    /**
     * The reader's side of the progress, on the reader's thread: per partition how far it is past its start, told to
     * the listener as records arrive.
     */
    private final class ReadProgress {
        private final Map<Integer, long[]> partitions = new HashMap<>(); // start, end, position
        private final long total;
        private long records;
        private long bytes;

        ReadProgress(Map<Integer, Counters> counters, long total) {
            counters.forEach((p, c) -> partitions.put(p, new long[] {c.next, c.end, c.next}));
            this.total = total;
        }

        void read(Map<Integer, Long> positions, int count, long size) {
            positions.forEach((p, pos) -> {
                long[] range = partitions.get(p);
                if (range != null) {
                    range[2] = Math.max(range[2], Math.min(pos, range[1]));
                }
            });
            records += count;
            bytes += size;
            long read = 0;
            for (long[] range : partitions.values()) {
                read += range[2] - range[0];
            }
            listener.onRead(read, total, records, bytes);
        }
    }

    /** What a run read and committed in all: the bytes of the records read, and the batches committed. */
    private static final class Totals {
        long bytes;
        long batches;
    }

    /**
     * Reduces chunks into batches on this thread while the previous batch is written on a writer thread: the
     * database (or Delta's Parquet writer) works while the next batch fills, and while that batch's values are
     * decoded. One batch at a time is written, in order; the counters, and so every progress report and failure
     * message, count committed batches only, but for reads: those count per attempt (--max-records limits them).
     */
    private void writeLoop(JobState state, BlockingQueue<Item> queue, Map<Integer, Counters> counters, long total,
                           Totals totals) {
        ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kbackfill-writer");
            t.setDaemon(true);
            return t;
        });
        WriteLoop loop = new WriteLoop(state, counters, total, totals, writer);
        try {
            loop.run(queue);
        } finally {
            loop.finishQuietly(); // failing for another reason: the write in flight ends before the sink is closed
            writer.shutdownNow();
        }
    }

    /** The state of {@link #writeLoop}: the batch being filled, the one in flight, and what the run has read. */
    private final class WriteLoop {
        private final JobState state;
        private final Map<Integer, Counters> counters;
        private final long total;
        private final Totals totals;
        private final ExecutorService writer;
        /** Per partition, the position the last batch handed over reaches. */
        private final Map<Integer, Long> submitted = new HashMap<>();
        private final long startedNanos = System.nanoTime();
        /**
         * Batches handed over uncommitted since the last that commits; beside a live writer each batch commits on its
         * own (the sink looks at the log once more just before a commit, and a window would be undone whole).
         */
        private final dev.kbackfill.core.sink.StagingWindow staging;
        private Reduction.Pending pending = new Reduction.Pending(keepEarlier);
        private Map<Integer, Long> positions = new HashMap<>();
        private Tally tally = new Tally();
        private long batchRecords;
        private long records;
        private long sequence;
        private boolean limited;
        private InFlight inFlight;

        WriteLoop(JobState state, Map<Integer, Counters> counters, long total, Totals totals, ExecutorService writer) {
            this.state = state;
            this.counters = counters;
            this.total = total;
            this.totals = totals;
            this.writer = writer;
            this.staging = new dev.kbackfill.core.sink.StagingWindow(newest != null ? 0 : sink.stagingRows());
            counters.forEach((p, c) -> submitted.put(p, c.next));
            window.clear();
        }

        void run(BlockingQueue<Item> queue) {
            while (true) {
                Item item = poll(queue);
                if (item instanceof Failed f) {
                    completeInFlight(); // a write failure, if any, is the first cause
                    Throwable error = f.error();
                    throw new RunFailure(describeFailure(error, counters), error);
                }
                // --max-records, --max-duration: the batch that reaches a limit is the run's last
                boolean end = item instanceof End || limited;
                if (item instanceof Chunk c) {
                    take(c);
                }
                if (!limited && (options.limits().reached(records, System.nanoTime() - startedNanos)
                        || StopRequest.requested())) {
                    limited = true;
                    end = true;
                }
                boolean full = pending.size() >= options.batchRows() || batchRecords >= options.batchRecordLimit();
                boolean idle = item == null;
                boolean progress = hasProgress(positions, submitted);
                // a window of staged batches closes at the end, a limit, a stop or a pause, with an empty batch
                // where no records are left to carry the commit
                if ((full && progress) || ((idle || end) && (progress || staging.holdsStaged()))) {
                    handOver(idle || end);
                } else if (inFlight != null && inFlight.done().isDone()) {
                    completeInFlight();
                }
                if (end) {
                    completeInFlight();
                    tally.applyTo(counters); // records of no batch: none moved past what is committed
                    return;
                }
            }
        }

        private Item poll(BlockingQueue<Item> queue) {
            try {
                return queue.poll(options.flushAfter().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RunFailure("interrupted; " + where(counters), e);
            }
        }

        /** Reduces a chunk into the batch being filled, as its records arrive: one change per key. */
        private void take(Chunk c) {
            c.changes().forEach(pending::add);
            c.poison().forEach(e -> reject(e.getKey(), e.getValue())); // flushed before the batch is written
            positions.putAll(c.positions());
            c.read().forEach((p, n) -> counters.get(p).read += n);
            tally.add(c);
            long read = c.read().values().stream().mapToLong(Long::longValue).sum();
            records += read;
            batchRecords += read;
            totals.bytes += c.bytes();
        }

        /**
         * Decodes the batch being filled (while the batch in flight is still being written, not after it: the two
         * added up to a third of a Delta batch's time with every key once), counts the batch in flight, and hands the
         * new one to the writer.
         *
         * @param closing a pause, a limit, a stop or the end: the batch closes the window of staged batches
         */
        private void handOver(boolean closing) {
            Decoded next;
            try {
                next = decode(pending);
            } catch (RuntimeException e) {
                completeInFlight(); // a failed write is the first cause
                throw e;
            }
            // its raw records are garbage while the batch in flight ends; the next is likely as large
            pending = new Reduction.Pending(keepEarlier, next.changes().size());
            completeInFlight(); // counted once, even if the next batch cannot be handed over
            sequence++;
            boolean commits = staging.closesWith(next.changes().size(), closing);
            inFlight = submit(writer, state, sequence, next, positions, submitted, tally, commits);
            positions = new HashMap<>();
            tally = new Tally();
            batchRecords = 0;
        }

        private void completeInFlight() {
            InFlight done = inFlight;
            inFlight = null; // counted once, whatever its write says
            complete(done, counters, total, records, totals);
        }

        void finishQuietly() {
            if (inFlight != null) {
                try {
                    completeInFlight();
                } catch (RunFailure ignored) {
                    // the failure being thrown already says where the run stopped
                }
            }
        }
    }

    /**
     * A full batch with its values decoded, ready to be handed over; per partition the records it superseded and the
     * changes it reduced to (counts only, see {@link InFlight}).
     */
    private record Decoded(List<Change> changes, RowShape shape, Map<Integer, Long> superseded,
                           Map<Integer, Long> reduced, Map<dev.kbackfill.core.record.KeyIdentity, List<Reduction.Earlier>> earlier) {
    }

    /** Decodes a full batch's values; a value that does not decode fails the run (nothing of the batch is written). */
    /** Whether the mapping's names were checked against the first batch's records. */
    private boolean namesChecked;

    private Decoded decode(Reduction.Pending pending) {
        List<Change> reduced = pending.changes();
        Map<Integer, Long> perPartition = new HashMap<>();
        reduced.forEach(c -> perPartition.merge(c.partition(), 1L, Long::sum));
        List<Change> decoded = decodeValues(reduced);
        if (!namesChecked) {
            namesChecked = true;
            decoder.checkMappedNames(); // a misspelt --columns/--rename/--header-columns name, before anything is written
        }
        return new Decoded(decoded, RowShape.of(decoded), pending.superseded(), perPartition, pending.earlier());
    }

    private InFlight submit(ExecutorService writer, JobState state, long sequence, Decoded decoded,
                            Map<Integer, Long> positions, Map<Integer, Long> submitted, Tally tally,
                            boolean commits) {
        Map<Integer, Long> next = new HashMap<>();
        positions.forEach((p, pos) -> {
            if (pos > submitted.get(p)) {
                next.put(p, pos);
            }
        });
        // dead letters are durable before the writer can commit progress past them, and after the batch before
        // this one committed (a failure of that one reads them again)
        flushRejects();
        WriteBatch batch = new WriteBatch(state.job(), state.run(), sequence, decoded.changes(), decoded.shape(), next,
                state.plan().topic(), commits, options.foreignRows());
        submitted.putAll(next);
        return new InFlight(writer.submit(() -> write(batch, decoded.earlier())), decoded.superseded(), decoded.reduced(),
                next, tally);
    }

    /**
     * What the writer did with a batch: the sink's result; per partition the records the sink refused, and the
     * records it wrote in their place (each the refused key's newest earlier record of the batch, which the batch had
     * counted as superseded).
     */
    private record Written(WriteResult result, Map<Integer, Long> rejected, Map<Integer, Long> revived,
                           Map<Integer, Long> supersededInLog) {
    }

    /**
     * Writes a batch; a record the sink refuses is a poison record: it fails the run (naming it), or is rejected by
     * the policy (skipped, or made durable in the dead-letter destination) and the batch written again without it,
     * its key falling back to its newest earlier record in the batch that the sink accepts (read back from the log),
     * or to what the target holds: a key keeps its last accepted record, however the records were split into
     * batches.
     */
    private Written write(WriteBatch batch, Map<dev.kbackfill.core.record.KeyIdentity, List<Reduction.Earlier>> earlier) {
        Map<Integer, Long> rejected = new HashMap<>();
        Map<Integer, Long> revived = new HashMap<>();
        Map<Integer, Long> inLog = new HashMap<>();
        WriteBatch current = withoutLaterInLog(batch, inLog);
        while (true) {
            try {
                return new Written(sink.write(current), rejected, revived, inLog);
            } catch (dev.kbackfill.core.sink.SupersededInLogException e) {
                // a live writer applied a newer record while the batch was written: nothing of it committed, and it
                // goes again without the changes that record supersedes
                e.changes().forEach(c -> inLog.merge(c.partition(), 1L, Long::sum));
                current = current.without(e.changes());
            } catch (RecordRejectedException e) {
                Change bad = e.change();
                if (rejects.failsTheRun()) {
                    throw new RecordRejectedException(bad, e.reason()
                            + " (--on-error skip or --dead-letter keep such records aside)", e);
                }
                if (bad.source() == null && !rejects.destination().isEmpty()) {
                    throw new IllegalStateException("a refused record without its raw record cannot be dead-lettered", e);
                }
                reject(bad.source(), e);
                flushRejects(); // durable before the batch that passes it commits
                rejected.merge(bad.partition(), 1L, Long::sum);
                Change instead = earlierRecord(earlier.get(dev.kbackfill.core.record.KeyIdentity.of(bad.key())));
                if (instead == null) {
                    current = current.without(bad);
                } else {
                    revived.merge(instead.partition(), 1L, Long::sum);
                    current = current.replacing(bad, instead);
                }
            }
        }
    }

    /**
     * Beside a live writer, the batch without the changes the log shows superseded: the log is read on to its end as it
     * stands now, and a change whose key has a newer record there (later in the range, or after it) is left out
     * (counted per partition in {@code inLog}): the live writer has written, or will write, something newer for it.
     * The rest are their keys' newest records in the log, which may replace rows the live writer wrote. Elsewhere the
     * batch as it is.
     */
    private WriteBatch withoutLaterInLog(WriteBatch batch, Map<Integer, Long> inLog) {
        if (newest == null) {
            return batch;
        }
        List<Change> later = supersededNow(batch.changes());
        later.forEach(c -> inLog.merge(c.partition(), 1L, Long::sum));
        // the sink asks again once its writes hold their place, before it commits
        return batch.without(later).rechecking(this::supersededNow);
    }

    /** Of {@code changes}, those a newer record of the log, read on to its end now, supersedes. */
    private List<Change> supersededNow(List<Change> changes) {
        newest.catchUp();
        List<Change> later = new ArrayList<>();
        for (Change c : changes) {
            if (newest.superseded(c)) {
                later.add(c);
            }
        }
        return later;
    }

    /**
     * The newest of a key's earlier records of the batch, read back from the log and decoded as when it was read
     * (taken out of {@code candidates}), or null where there is none left.
     */
    private Change earlierRecord(List<Reduction.Earlier> candidates) {
        while (candidates != null && !candidates.isEmpty()) {
            Reduction.Earlier newest = candidates.get(0);
            for (Reduction.Earlier e : candidates) {
                if (e.version().supersedes(newest.version())) {
                    newest = e;
                }
            }
            candidates.remove(newest);
            java.util.Optional<SourceRecord> record = fetch.fetch(newest.partition(), newest.offset(), newest.logTime());
            if (record.isEmpty()) {
                continue; // gone from the log since (retention): the next one, or what the target holds
            }
            try {
                java.util.Optional<Change> kept = decoder.decodeKept(record.get());
                if (kept.isPresent()) {
                    Change c = kept.get().withVersionField(newest.field());
                    return keepSource ? c : c.withoutSource();
                }
            } catch (DecodeException e) {
                // decoded when it was read: not again now (a registry that lost its schema): the next one
            }
        }
        return null;
    }

    /** Hands a poison record to the policy; the reader, this thread and the writer may all reject. */
    private void reject(SourceRecord r, RuntimeException e) {
        synchronized (rejects) {
            rejects.reject(r, e);
        }
    }

    private void flushRejects() {
        synchronized (rejects) {
            rejects.flush();
        }
    }

    /** Decodes the values of the changes reduced undecoded. */
    private List<Change> decodeValues(List<Change> reduced) {
        if (!lazyValues || !sink.needsValues()) {
            return reduced;
        }
        List<Change> decoded = new ArrayList<>(reduced.size());
        for (Change c : reduced) {
            if (c.isDecoded()) {
                decoded.add(keepSource ? c : c.withoutSource());
                continue;
            }
            try {
                Change full = decoder.decode(c.source());
                decoded.add(keepSource ? full : full.withoutSource());
            } catch (DecodeException e) {
                reject(c.source(), e); // fails the run: nothing of this batch is written
                throw e;
            }
        }
        return decoded;
    }

    /** Batches the sink staged uncommitted, with what their writes said: counted when a later batch commits them. */
    private final List<Map.Entry<InFlight, Written>> window = new ArrayList<>();

    /**
     * Waits for the batch in flight, if any; once it is committed counts it, with the batches staged before it, and
     * reports the progress they made. A staged batch waits in {@link #window}.
     *
     * @throws RunFailure when its write failed (nothing of it, or of the batches staged before it, was committed)
     */
    private void complete(InFlight inFlight, Map<Integer, Counters> counters, long total, long records, Totals totals) {
        if (inFlight == null) {
            return;
        }
        Written result;
        try {
            result = inFlight.done().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RunFailure("interrupted; " + where(counters), e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw new RunFailure(describeFailure(cause, counters), cause);
        }
        window.add(Map.entry(inFlight, result));
        if (result.result().staged()) {
            return;
        }
        for (Map.Entry<InFlight, Written> done : window) {
            InFlight batch = done.getKey();
            Written written = done.getValue();
            batch.tally().applyTo(counters);
            batch.superseded().forEach((p, n) -> counters.get(p).superseded += n);
            batch.reduced().forEach((p, n) -> counters.get(p).written += n);
            written.rejected().forEach((p, n) -> {
                Counters c = counters.get(p);
                c.written -= n;
                c.rejected += n;
                c.refused += n;
            });
            written.revived().forEach((p, n) -> {
                Counters c = counters.get(p);
                c.superseded -= n;
                c.written += n;
            });
            written.supersededInLog().forEach((p, n) -> {
                Counters c = counters.get(p);
                c.written -= n;
                c.supersededInLog += n;
            });
            batch.next().forEach((p, pos) -> counters.get(p).next = pos);
            totals.batches++;
        }
        window.clear();
        // what the target kept out (it holds a newer version) is not written, nor what a later batch of the same
        // commit replaced: the committing batch's result covers every batch it committed
        result.result().keptOut().forEach((p, n) -> {
            Counters c = counters.get(p);
            c.written -= n;
            c.keptOut += n;
        });
        result.result().superseded().forEach((p, n) -> {
            Counters c = counters.get(p);
            c.written -= n;
            c.superseded += n;
        });
        listener.onProgress(done(counters, total), total, records, totals.bytes);
    }

    private static boolean hasProgress(Map<Integer, Long> positions, Map<Integer, Long> submitted) {
        return positions.entrySet().stream().anyMatch(e -> e.getValue() > submitted.get(e.getKey()));
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
        return RunFailure.where(counters.entrySet().stream()
                .map(e -> new PartitionSplit(e.getKey(), e.getValue().next, e.getValue().end)).toList());
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
