package dev.kbackfill.core.verify;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.run.BackfillRun;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunOptions;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;

/**
 * Proves that a target holds exactly the final state of a range: reads the range as a run does (the same reader,
 * decoder, filters, version fields and reduction, through {@link RangeFold}), then asks the sink what it holds for
 * those keys ({@link Sink#verifier()}) and sorts every key into a {@link Verdict}. Writes nothing, takes no lock,
 * touches no job state; the target may be one kbackfill never wrote.
 *
 * <pre>{@code
 * JobDefinition job = ...;                         // what `kbackfill run` parses its options into
 * try (Sink sink = SinkFactory.forSettings(job.sinkSettings())) {
 *     sink.openForVerify();
 *     VerifyReport report = Verification.of(job, Verification.Options.DEFAULTS).verify(plan, sink);
 *     if (!report.agrees()) { ... report.samples() ... }
 * }
 * }</pre>
 */
public final class Verification {

    /**
     * @param samples     keys kept per class for people
     * @param memoryKeys  keys of the range folded in memory at most before the fold spills to disk
     * @param memoryBytes bytes the fold holds in memory at most (raw records and their objects) before it spills
     * @param spillTo     where the fold spills
     */
    public record Options(int samples, long memoryKeys, long memoryBytes, Path spillTo) {
        public Options {
            if (samples < 0) {
                throw new IllegalArgumentException("samples must be >= 0");
            }
            Objects.requireNonNull(spillTo, "spillTo");
        }

        /** Options holding at most {@code memoryKeys} keys in memory, of any size. */
        public Options(int samples, long memoryKeys, Path spillTo) {
            this(samples, memoryKeys, Long.MAX_VALUE, spillTo);
        }

        /**
         * 10 samples per class; two fifths of the heap for the fold's keys (a key costs its raw record and about 600
         * bytes; the system property {@code kbackfill.verify.memoryKeys} caps their number, for tuning); the
         * temporary directory.
         */
        public static final Options DEFAULTS = new Options(10, Long.getLong("kbackfill.verify.memoryKeys", Long.MAX_VALUE),
                heapBytes(Runtime.getRuntime().maxMemory()), Path.of(System.getProperty("java.io.tmpdir")));

        /** The bytes the fold holds in memory within a heap of {@code maxHeap} bytes. */
        public static long heapBytes(long maxHeap) {
            return Math.max(1L << 20, maxHeap / 5 * 2);
        }

        public Options withSamples(int n) {
            return new Options(n, memoryKeys, memoryBytes, spillTo);
        }

        public Options withMemoryKeys(long keys) {
            return new Options(samples, keys, memoryBytes, spillTo);
        }
    }

    private final Map<String, Object> kafkaConfig;
    private final RecordDecoder decoder;
    private final TombstoneMode tombstones;
    private final boolean strictTime;
    private final Options options;
    private final dev.kbackfill.core.run.LiveWriter liveWriter;
    /** Told every key that disagrees, with the range's final change of it (decoded); null where none listens. */
    private java.util.function.BiConsumer<Verdict, Change> findings;

    /**
     * @param kafkaConfig the source's client settings
     * @param decoder     decodes as the job's runs do
     * @param tombstones  the job's {@code --on-tombstone}
     * @param conflict    the job's {@code --on-conflict}: newer-wins and overwrite can be verified
     * @param strictTime  the job's {@code --strict-time}
     * @throws RequestException for {@code insert-only}, whose target keeps each key's first record, not its last
     */
    public Verification(Map<String, Object> kafkaConfig, RecordDecoder decoder, TombstoneMode tombstones,
                        ConflictMode conflict, boolean strictTime, Options options) {
        this(kafkaConfig, decoder, tombstones, conflict, strictTime, options, dev.kbackfill.core.run.LiveWriter.AUTO);
    }

    /**
     * @param liveWriter whether another writer keeps the target current ({@code --live-writer}): beside one, a key
     *                   whose range's last record a newer record of the log supersedes is the live writer's, judged
     *                   {@link Verdict#NEWER} whatever the target holds, as a run never writes such a record
     */
    public Verification(Map<String, Object> kafkaConfig, RecordDecoder decoder, TombstoneMode tombstones,
                        ConflictMode conflict, boolean strictTime, Options options,
                        dev.kbackfill.core.run.LiveWriter liveWriter) {
        this.liveWriter = Objects.requireNonNull(liveWriter, "liveWriter");
        if (conflict == ConflictMode.INSERT_ONLY) {
            throw new RequestException("invalid --on-conflict 'insert-only' for verify: an insert-only target keeps "
                    + "whatever a key held first, not a range's final state; verify newer-wins or overwrite jobs");
        }
        this.kafkaConfig = Map.copyOf(kafkaConfig);
        this.decoder = decoder;
        this.tombstones = tombstones;
        this.strictTime = strictTime;
        this.options = options;
    }

    /**
     * This verification telling {@code findings} every key that disagrees ({@link Verdict#disagrees()}), with the
     * range's final change of it, decoded: what a repair writes. Samples stay as many as asked.
     */
    Verification reporting(java.util.function.BiConsumer<Verdict, Change> findings) {
        this.findings = findings;
        return this;
    }

    /** Whether the target is judged beside a live writer: the log after the range decides whose a key is. */
    boolean besideLiveWriter(Sink sink) {
        return liveWriter.foreignRows(sink::holdsForeignRows) == Version.ForeignRows.NEWEST_IN_LOG;
    }

    /** Verification of the job's target, with the job's source, decoding and modes. */
    public static Verification of(JobDefinition job, Options options) {
        return of(job, job.decoder(), options);
    }

    /** Verification of the job's target decoding with {@code decoder} (one built from the job already). */
    public static Verification of(JobDefinition job, RecordDecoder decoder, Options options) {
        return new Verification(job.kafkaConfig(), decoder, job.sink().tombstones(), job.sink().conflict(),
                job.strictTime(), options, job.liveWriter());
    }

    /** Verifies {@code plan}'s ranges against what {@code sink} (open) holds. */
    public VerifyReport verify(Plan plan, Sink sink) {
        return verify(plan, sink, RunListener.NONE);
    }

    /** Verifies {@code plan}'s ranges against what {@code sink} (open) holds, telling {@code listener} how far it is. */
    public VerifyReport verify(Plan plan, Sink sink, RunListener listener) {
        boolean beside = besideLiveWriter(sink);
        try (TargetLookup target = sink.verifier()) {
            return verify(plan, target, listener, beside);
        }
    }

    /** Verifies {@code plan}'s ranges against {@code target}. */
    public VerifyReport verify(Plan plan, TargetLookup target) {
        return verify(plan, target, RunListener.NONE);
    }

    /**
     * Verifies {@code plan}'s ranges against {@code target}, telling {@code listener} how far the read of the range
     * is ({@link RunListener#onProgress}) and when the keys are judged ({@link RunListener#onNote}).
     */
    public VerifyReport verify(Plan plan, TargetLookup target, RunListener listener) {
        return verify(plan, target, listener, false);
    }

    /**
     * @param besideLiveWriter whether the target is another writer's too: the log after the range is read, and a key
     *                         whose last record there supersedes the range's is judged {@link Verdict#NEWER}
     */
    public VerifyReport verify(Plan plan, TargetLookup target, RunListener listener, boolean besideLiveWriter) {
        try (dev.kbackfill.core.live.NewestInLog after = besideLiveWriter ? afterRange(plan, listener, true) : null) {
            return verify(plan, target, listener, after);
        }
    }

    /**
     * Each key's newest record in the log after the plan's range, read to the log's end now; sealed (read on no
     * further, its keys merged for lookups), or left open to read on ({@link dev.kbackfill.core.live.NewestInLog#catchUp}).
     */
    dev.kbackfill.core.live.NewestInLog afterRange(Plan plan, RunListener listener, boolean seal) {
        Map<Integer, Long> ends = new java.util.TreeMap<>();
        plan.partitions().forEach(r -> ends.put(r.partition(), r.end()));
        Map<Integer, Long> before;
        try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(kafkaConfig)) {
            before = dev.kbackfill.resolver.LogTimes.lookUp(offsets, plan.topic(), ends, plan.request().isolationLevel())
                    .times();
        }
        dev.kbackfill.core.live.NewestInLog after = new dev.kbackfill.core.live.NewestInLog(kafkaConfig,
                plan.request().isolationLevel(), plan.topic(), ends, before, decoder, Runtime.getRuntime().maxMemory() / 16,
                options.spillTo(), Duration.ofMinutes(2));
        try {
            after.catchUp();
            if (seal) {
                after.seal();
            }
        } catch (RuntimeException e) {
            after.close();
            throw e;
        }
        listener.onNote("beside a live writer: read the " + after.records() + " record(s) of " + plan.topic()
                + " after the range; a key with a newer record there is the live writer's (newer)");
        return after;
    }

    private VerifyReport verify(Plan plan, TargetLookup target, RunListener listener,
                                dev.kbackfill.core.live.NewestInLog after) {
        long started = System.nanoTime();
        requireKeyColumns(target);
        long records = plan.partitions().stream().mapToLong(r -> r.end() - r.start()).sum();
        RunOptions run = RunOptions.DEFAULTS.withBatchRows(5_000).withStrictTime(strictTime).withAllowDataLoss(true);
        try (RangeFold fold = new RangeFold(decoder, options.memoryKeys(), options.memoryBytes(), records,
                options.spillTo())) {
            JobState state = JobState.begin("verify", "verify", 1, plan);
            fold.begin(state);
            // a target read in one pass: keys that go to disk are bucketed by its join key
            java.util.concurrent.atomic.AtomicReference<TargetLookup.Scan> scan = new java.util.concurrent.atomic.AtomicReference<>();
            fold.joinOn(keyFields -> {
                scan.set(target.scan(keyFields).orElse(null));
                return scan.get() == null ? null : scan.get()::joinKey;
            });
            RunSummary summary = new BackfillRun(kafkaConfig, decoder, fold, tombstones, run, listener,
                    Rejects.skip()).execute(state);
            listener.onNote("read " + summary.read() + " records of " + plan.topic() + (fold.spilled()
                    ? " (their keys folded on disk)" : "") + "; judging their keys against the target");
            long streamed = 0;
            if (fold.joined()) {
                listener.onNote("reading the target once for the keys that went to disk");
                streamed = fold.streamTarget(scan.get());
            }
            try (Judging judging = new Judging(plan, target, fold, after)) {
                fold.forEachChunk(target.keysPerLookup(), (bucket, chunk) -> judging.chunk(chunk,
                        bucket >= 0 && fold.joined() ? scan.get() : null, bucket));
                judging.settle();
                long refusedKeys = judging.refusedInstead(listener);
                return new VerifyReport(plan.topic(), judging.counts, judging.samples, summary.read(),
                        summary.filtered(), summary.rejected() + judging.undecodable + refusedKeys, summary.lost(),
                        target.rowsRead() + streamed, fold.spilled(), Duration.ofNanos(System.nanoTime() - started));
            }
        }
    }

    /** Refuses a target without a column for the key: no row of it could be judged (nothing is read). */
    private void requireKeyColumns(TargetLookup target) {
        decoder.keyColumns().ifPresent(columns -> columns.stream().filter(c -> !target.hasColumn(c)).findFirst()
                .ifPresent(c -> {
                    throw new dev.kbackfill.core.sink.SinkConfigException("the target has no column '" + c + "' for "
                            + "the key, so no row of it can be judged; nothing was read (name the job's table with "
                            + "--table, or the key with --key-fields or --key-column as the run did)");
                }));
    }

    /**
     * Judges the range's final changes, chunk by chunk, against what the target holds: counts and samples per class,
     * the keys whose value does not decode, the newer claims the log is asked to bear out, and the keys whose last
     * record the target refuses (judged by the record a run writes in its place).
     */
    private final class Judging implements AutoCloseable {
        final Map<Verdict, Long> counts = new EnumMap<>(Verdict.class);
        final Map<Verdict, List<VerifyReport.Sample>> samples = new EnumMap<>(Verdict.class);
        long undecodable;
        private final Plan plan;
        private final String topic;
        private final TargetLookup target;
        private final RangeFold fold;
        private final dev.kbackfill.core.live.NewestInLog after;
        private final boolean unordered = decoder.versionField().isEmpty();
        private final NewerClaims claims;
        private final RefusedRecords refused = new RefusedRecords();
        /** The raw changes whose values the target's lookup decoded: a key is decoded once, not again to judge it. */
        private final java.util.Set<Change> decodable = java.util.Collections.newSetFromMap(
                new java.util.IdentityHashMap<>());
        private final java.util.function.Function<Change, Map<String, Object>> values;

        Judging(Plan plan, TargetLookup target, RangeFold fold, dev.kbackfill.core.live.NewestInLog after) {
            this.plan = plan;
            this.topic = plan.topic();
            this.target = target;
            this.fold = fold;
            this.after = after;
            this.claims = new NewerClaims(kafkaConfig, plan.request().isolationLevel(), decoder, topic,
                    dev.kbackfill.core.read.archive.ConnectorArchive.of(plan.request()).orElse(null));
            this.values = c -> {
                Change d = fold.decoded(c);
                if (d != null) {
                    decodable.add(c);
                }
                return d == null ? null : d.values();
            };
        }

        /** Judges one chunk of keys, looked up in the target (or in its rows streamed for the chunk's bucket). */
        void chunk(List<Change> chunk, TargetLookup.Scan scan, int bucket) {
            decodable.clear();
            Map<KeyIdentity, TargetRow> held = scan != null ? scan.judge(chunk, fold.targetRows(bucket), topic, values)
                    : target.lookup(chunk, topic, values);
            for (Change c : chunk) {
                // a chunk holds raw records: a value the lookup did not decode is decoded here, one key at a time, to
                // know that it can be (its key's state cannot be told otherwise)
                if (!c.isDecoded() && !decodable.contains(c) && fold.decoded(c) == null) {
                    undecodable++; // its value cannot be decoded: counted, not judged
                    continue;
                }
                judge(c, held.get(KeyIdentity.of(c.key())));
            }
        }

        private void judge(Change c, TargetRow row) {
            if (unordered && row != null) {
                requireNoField(row.version(), c);
                requireNoField(row.deletedAt(), c);
            }
            // beside a live writer, a key the log shows newer after the range is the live writer's
            boolean liveWriters = after != null && after.superseded(c);
            Verdict v = liveWriters ? Verdict.NEWER : Verdict.judge(c, version(c, topic), row);
            if (v != Verdict.MATCHING && !c.isTombstone() && target.refusal(fold.decoded(c)).isPresent()) {
                refused.add(fold.decoded(c)); // judged by the record a run writes in its place
                return;
            }
            if (v == Verdict.NEWER && !liveWriters && NewerClaims.checkable(row)) {
                claims.add(fold.decoded(c), row); // judged once the log bears its version out
                if (claims.full()) {
                    settle();
                }
                return;
            }
            count(counts, samples, v, fold.decoded(c), row);
        }

        /** Judges the newer claims gathered so far, as the log bears them out or not. */
        void settle() {
            claims.check(target).forEach(o -> count(counts, samples, o.verdict(), o.shown(), o.row()));
        }

        /**
         * Judges the keys whose last record the target refuses by the records a run writes in their place; returns
         * how many keys had none (each counted as not judged).
         */
        long refusedInstead(RunListener listener) {
            long refusedKeys = refused.size();
            if (refused.isEmpty()) {
                return refusedKeys;
            }
            listener.onNote("the target refuses the last record of " + refusedKeys + " key(s), as a run would: "
                    + "reading the range again for the records a run writes in their place");
            List<Change> instead = refused.acceptedBefore(plan, kafkaConfig, decoder, target);
            refusedKeys -= instead.size();
            Map<KeyIdentity, TargetRow> rows = instead.isEmpty() ? Map.of()
                    : target.lookup(instead, topic, Change::values);
            for (Change c : instead) {
                TargetRow row = rows.get(KeyIdentity.of(c.key()));
                Verdict v = Verdict.judge(c, version(c, topic), row);
                if (v == Verdict.NEWER && NewerClaims.checkable(row)) {
                    claims.add(c, row);
                } else {
                    count(counts, samples, v, c, row);
                }
            }
            settle();
            return refusedKeys;
        }

        @Override
        public void close() {
            claims.close();
        }
    }

    /** Counts a key in its class, keeping it as a sample while the class has room. */
    private void count(Map<Verdict, Long> counts, Map<Verdict, List<VerifyReport.Sample>> samples, Verdict v,
                       Change c, TargetRow row) {
        counts.merge(v, 1L, Long::sum);
        if (findings != null && v.disagrees()) {
            findings.accept(v, c);
        }
        if (v != Verdict.MATCHING) {
            List<VerifyReport.Sample> list = samples.computeIfAbsent(v, x -> new ArrayList<>());
            if (list.size() < options.samples()) {
                list.add(sample(c, v, row));
            }
        }
    }

    /**
     * A target whose rows carry a version field's value was written by a job that orders versions by that field
     * ({@code --version-field}); judged without it, every such row would look newer than the range and nothing it
     * holds would be compared. Refused as bad input, before a verdict is given.
     */
    private static void requireNoField(Version stored, Change c) {
        if (stored != null && stored.field() != null) {
            throw new RequestException("the target orders versions by a value field (key " + KeyIdentity.of(c.key())
                    + " holds version " + stored.field() + "), and this verification by none: pass the job's "
                    + "--version-field, or verify with --job NAME to take the job's own options");
        }
    }

    /** A change's version in the range's topic, as a run's batch gives it ({@link dev.kbackfill.core.sink.WriteBatch#version}). */
    public static Version version(Change c, String topic) {
        return new Version(topic, c.partition(), c.offset(), c.timestamp(), c.logTime(), c.versionField());
    }

    static VerifyReport.Sample sample(Change c, Verdict v, TargetRow row) {
        Version held = row == null ? null : row.live() ? row.version() : row.deletedAt();
        Map<String, Object> expected = c.values() == null ? Map.of() : c.values();
        if (row != null && row.differing().contains(TargetRow.RECORD_VALUE) && c.source() != null) {
            // a target of whole records compares the record's value, not its fields
            expected = new java.util.LinkedHashMap<>(expected);
            expected.put(TargetRow.RECORD_VALUE, dev.kbackfill.core.record.Readable.bytes(c.source().value()));
        }
        return new VerifyReport.Sample(KeyIdentity.of(c.key()).toString(), v, c.partition(), c.offset(), c.timestamp(),
                c.isTombstone(), expected, held, row == null ? Map.of() : row.values(),
                row == null ? List.of() : row.differing(), c.key());
    }
}
