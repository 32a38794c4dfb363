package dev.kbackfill.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.core.run.RunFailure;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunOptions;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.PartitionSplit;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.sink.delta.DeltaEngineSupport;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;

/**
 * A Delta table on Spark: wave by wave, Spark's Kafka source reads the wave's ranges (a large partition by several
 * tasks), executors decode with kbackfill's decoders, the changes are reduced to one per key by the one version
 * rule ({@link Version#RULE}: the same winner whatever the order), and one {@code MERGE} writes the wave under the
 * conflict and tombstone modes, the newer-wins guard being {@link GuardSql}'s rendering of the same rule.
 *
 * <p>Exactly once: each MERGE runs with the session settings {@code txnAppId = kbackfill-spark-JOB-runN} and
 * {@code txnVersion = wave number} (set before, cleared after), so Delta skips a wave it already committed; a wave
 * found committed is not even read. The job's state (plan and progress) lives in the table as for the
 * single-machine sink, written before the first wave and moved past each wave after its MERGE, so {@code status}
 * and {@code reset} work as ever. The tombstone ledger is honoured (an older replay never resurrects a deleted key)
 * and a wave's deletes are recorded in it before its MERGE (recording twice changes nothing).
 *
 * <p>The parts: {@link WaveLoop} runs the waves and moves the job's progress; here a wave is read and keyed
 * ({@link Keying} into {@link Raw} records, counted in {@link WaveCounters}), reduced, decoded into the table's rows
 * ({@link EntryRows}, {@link Entry}), kept from keys the ledger deleted ({@link Deleted}), and written by the
 * statements of {@link DeltaMergeSql}; {@link SparkDeltaTypes} maps the column types.
 */
final class DeltaWaves {

    static final String TOMBSTONE = DeltaMergeSql.TOMBSTONE;
    private static final String TXN_APP_ID = "spark.databricks.delta.write.txnAppId";
    private static final String TXN_VERSION = "spark.databricks.delta.write.txnVersion";

    private final SparkSession spark;
    private final SparkJobSpec spec;
    private final String specJson;
    private final String path;

    /** Waves of the spec into the Delta table at {@code path}. */
    DeltaWaves(SparkSession spark, SparkJobSpec spec, String path) {
        this.spark = spark;
        this.spec = spec;
        this.specJson = spec.toJson();
        this.path = path;
    }

    RunSummary run(BackfillJob.Settings settings, Sink sink, JobState state, RunOptions options, RunListener listener) {
        Plan plan = state.plan();
        SinkSettings sinkSettings = TaskContextCache.job(specJson).sinkSettings();
        // one incarnation's run: a reset gives the job a new incarnation, so a rerun never meets the txn versions
        // the table holds for an earlier one (Delta would skip every wave as committed)
        String appId = "kbackfill-spark-" + state.job() + "-" + state.runId();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Shapes.Filters filters = Shapes.Filters.of(plan, options, settings);
        return WaveLoop.run(spark, spec, sink, state, listener, new WaveLoop.Writer() {
            @Override
            public Map<Integer, PartitionSplit> ranges(List<Integer> partitions, JobState current) {
                return remaining(plan, current, partitions);
            }

            @Override
            public WaveLoop.Written write(int wave, Map<Integer, PartitionSplit> ranges, JobState current) {
                if (DeltaEngineSupport.transactionVersion(path, appId).orElse(0L) >= wave) {
                    return WaveLoop.Written.EARLIER; // committed by an attempt that stopped before moving the progress
                }
                try {
                    Wave w = new Wave(path, plan, ranges, settings, sinkSettings, options, filters, jsc);
                    w.write(appId, wave, sink, state);
                    System.err.println("wave " + wave + " of " + spec.waves().size() + " (" + ranges.size()
                            + " partitions): " + w.timings);
                    return new WaveLoop.Written(w.stats, w.bytes, 1, w.noTable);
                } catch (RunFailure e) {
                    throw e;
                } catch (Exception e) { // SparkException is checked in Java's eyes, not Scala's
                    throw new RunFailure(SparkFailures.describe(e) + "; wave " + wave + " of " + spec.waves().size()
                            + " not committed; " + RunFailure.where(current.rest()), e);
                }
            }
        });
    }

    private static Map<Integer, PartitionSplit> remaining(Plan plan, JobState state, List<Integer> partitions) {
        Map<Integer, PartitionSplit> ranges = new TreeMap<>();
        for (int p : partitions) {
            PartitionRange r = plan.partition(p).orElseThrow(() -> new IllegalStateException(
                    "the spec's waves name partition " + p + ", which the plan does not hold"));
            PartitionSplit rest = state.rest(r);
            if (!rest.done()) {
                ranges.put(p, rest);
            }
        }
        return ranges;
    }


    /** One wave: read, decode, reduce, honour the ledger, MERGE, count. */
    private final class Wave {
        final String path;
        final Plan plan;
        final Map<Integer, PartitionSplit> ranges;
        final BackfillJob.Settings settings;
        final SinkSettings sinkSettings;
        final RunOptions options;
        final Shapes.Filters filters;
        final JavaSparkContext jsc;
        final Map<Integer, PartitionStats> stats = new TreeMap<>();
        long bytes;
        /** Whether the table did not exist and the wave had no values to create it from. */
        boolean noTable;
        /** Per source partition, the changes the log after them supersedes (beside a live writer). */
        final Map<Integer, Long> inLog = new HashMap<>();
        /** Where the wave's time went, for people. */
        final StringBuilder timings = new StringBuilder();
        private long mark = System.nanoTime();

        private void phase(String name) {
            long now = System.nanoTime();
            timings.append(timings.length() == 0 ? "" : ", ").append(name).append(' ')
                    .append(String.format(java.util.Locale.ROOT, "%.1f s", (now - mark) / 1e9));
            mark = now;
        }

        Wave(String path, Plan plan, Map<Integer, PartitionSplit> ranges, BackfillJob.Settings settings,
             SinkSettings sinkSettings, RunOptions options, Shapes.Filters filters, JavaSparkContext jsc) {
            this.path = path;
            this.plan = plan;
            this.ranges = ranges;
            this.settings = settings;
            this.sinkSettings = sinkSettings;
            this.options = options;
            this.filters = filters;
            this.jsc = jsc;
        }

        /** Per source partition, the changes left after reduction (and after the log left out what it supersedes). */
        private Map<Integer, Long> perPartition;
        /** Per source partition, the changes kept out: the table or its ledger holds a newer version of their keys. */
        private final Map<Integer, Long> keptOut = new HashMap<>();

        /**
         * The wave's steps: read and reduce, create the table if absent, decode the values against the table, honour
         * the ledger, leave out what the table's rules or the log refuse, MERGE (or append), count.
         */
        void write(String appId, int wave, Sink sink, JobState state) {
            WaveCounters counters = new WaveCounters(jsc, ranges.keySet());
            HashMap<Integer, Long> before = Keying.logTimesBefore(settings.kafkaConfig(), plan, ranges);
            Newest newest = options.besideLiveWriter() ? new Newest(before) : null;
            org.apache.spark.api.java.JavaPairRDD<String, Raw> survivorsByKey = readAndReduce(state, counters, before,
                    newest);
            JavaRDD<Raw> survivors = survivorsByKey.values().persist(StorageLevel.MEMORY_AND_DISK());
            JavaRDD<Entry> decoded = null;
            try {
                perPartition = survivors.map(e -> e.partition).countByValue();
                phase("read, decode keys and reduce");
                Optional<RowShape> created = createIfAbsent(sink, state, survivors);
                if (!sink.destinationExists()) {
                    // every record of the wave was left out (filtered, rejected), or none carries a column the table
                    // is partitioned by: no table yet, so it waits for a later wave, which reads this one again
                    nothingWritten(counters);
                    noTable = true;
                    return;
                }
                Target target = target(created.orElse(null), survivors);
                if (target.keys().isEmpty()) {
                    // no change survived (all filtered or rejected) and the table names no key columns: nothing to
                    // write, the wave's progress moves past its ranges
                    nothingWritten(counters);
                    return;
                }
                decoded = decode(target, counters, survivors);
                Values values = values(decoded, target, survivors, survivorsByKey, newest);
                merge(appId, wave, target, values.source());
                count(counters, values, newest);
                bytes = counters.bytes.value();
            } finally {
                survivors.unpersist(false);
                if (decoded != null) {
                    decoded.unpersist(false);
                }
            }
        }

        /**
         * Reads the wave's ranges, decodes keys (values too where a poison value must be seen even if superseded) and
         * reduces by key: one Spark partition per source partition (no split), each read in offset order from its
         * range's start, where its log clock starts ({@code before}), so every record gets the log time any run gives
         * it. Beside a live writer only a key's newest record in the log is kept.
         */
        private org.apache.spark.api.java.JavaPairRDD<String, Raw> readAndReduce(JobState state, WaveCounters counters,
                HashMap<Integer, Long> before, Newest newest) {
            String json = specJson;
            Shapes.Filters f = filters;
            JavaRDD<Row> rows = KafkaRanges.read(spark, plan, ranges,
                    dev.kbackfill.core.read.BoundedReader.withJobClientId(settings.kafkaConfig(), state.job()),
                    options.allowDataLoss(), 0).javaRDD();
            int shuffle = Math.max(rows.getNumPartitions(), jsc.defaultParallelism());
            org.apache.spark.api.java.JavaPairRDD<String, Raw> reducedByKey = rows.mapPartitionsToPair(it -> new Keying(
                    json, f, counters, before, it)).reduceByKey(Raw::newer, shuffle);
            if (newest != null) {
                // beside a live writer only a key's newest record in the log is written: the others go now
                reducedByKey = reducedByKey.persist(StorageLevel.MEMORY_AND_DISK());
                newest.leaveOut(reducedByKey, inLog);
                reducedByKey = newest.kept(reducedByKey).persist(StorageLevel.MEMORY_AND_DISK());
                phase("the log after the range");
            }
            return reducedByKey;
        }

        /**
         * Creates the table from the columns of the wave's changes where it does not exist (as the single-machine sink
         * takes its first batch's): the shape it was created from, else empty.
         */
        private Optional<RowShape> createIfAbsent(Sink sink, JobState state, JavaRDD<Raw> survivors) {
            if (sink.destinationExists()) {
                return Optional.empty();
            }
            RowShape shape = EntryRows.shapeOf(specJson, survivors);
            WriteBatch creating = new WriteBatch(state.job(), state.run(), 0, List.of(), shape, Map.of(),
                    plan.topic());
            if (DeltaEngineSupport.missingToCreate(creating, sinkSettings).isEmpty()) {
                sink.write(creating); // deletes only: the key columns, values added later
            }
            phase("create the table");
            return Optional.of(shape);
        }

        /** The table as the wave writes it: its writable columns, its rules, its key columns, whether it was empty. */
        private record Target(StructType table, DeltaTableRules rules, List<String> keys, boolean emptyBefore) {
        }

        private Target target(RowShape created, JavaRDD<Raw> survivors) {
            RowShape shape = created;
            StructType table = spark.read().format("delta").load(path).schema();
            if (sinkSettings.addsColumns()) { // a table created from this wave's shape lacks none of it
                shape = shape != null ? shape : EntryRows.shapeOf(specJson, survivors);
                table = withColumnsFor(shape, table);
            }
            // the columns Delta computes (generated, identity) are left to it; its CHECK constraints are seen first
            DeltaTableRules rules = DeltaTableRules.of(path);
            table = rules.writable(table);
            // a table with no rows before the MERGE keeps nothing out: no need to count
            boolean emptyBefore = !DeltaEngineSupport.hasData(path);
            // the table's key columns as kbackfill created it; a table made by others: the records' key fields, as
            // the single-machine sink takes them
            RowShape keyed = shape;
            List<String> keys = DeltaEngineSupport.keyColumns(path).orElseGet(() -> (keyed != null ? keyed
                    : EntryRows.shapeOf(specJson, survivors)).keyColumns().stream()
                    .map(dev.kbackfill.core.record.Column::name).toList());
            return new Target(table, rules, keys, emptyBefore);
        }

        /** The survivors' values decoded into the table's columns, as entries. */
        private JavaRDD<Entry> decode(Target target, WaveCounters counters, JavaRDD<Raw> survivors) {
            String json = specJson;
            String p = path;
            StructType columns = target.table();
            List<String> keys = target.keys();
            SinkSettings.MetadataColumns meta = sinkSettings.metadata();
            boolean soft = sinkSettings.tombstoneMode() == TombstoneMode.SOFT_DELETE;
            boolean ignoreUnknown = sinkSettings.ignoreUnknownFields();
            java.util.HashSet<String> computed = new java.util.HashSet<>(target.rules().computed());
            return survivors.mapPartitions(raws -> new EntryRows(json, columns, keys, meta, soft, ignoreUnknown,
                    computed, p, counters, raws)).persist(StorageLevel.MEMORY_AND_DISK());
        }

        /**
         * What the wave MERGEs ({@code source}) and what it counts: per partition the values the table refused (a
         * value it cannot hold, a row that breaks its CHECK constraints) and those that decoded.
         */
        private record Values(JavaRDD<Entry> source, Map<Integer, Long> refusedByTable, Map<Integer, Long> decoded,
                              Map<Integer, Long> broken) {
        }

        private Values values(JavaRDD<Entry> decoded, Target target, JavaRDD<Raw> survivors,
                              org.apache.spark.api.java.JavaPairRDD<String, Raw> survivorsByKey, Newest newest) {
            // counted from the entries, not by accumulators, which a retried task would add to twice
            Map<Integer, Long> refusedByTable = decoded.filter(Entry::isRefusedByTable).map(e -> e.partition)
                    .countByValue();
            JavaRDD<Entry> reduced = decoded.filter(e -> !e.isRefusedByTable());
            Map<Integer, Long> decodedCounts = reduced.map(e -> e.partition).countByValue();
            phase("decode values");
            JavaRDD<Entry> source = honourLedger(reduced, target.keys());
            StructType sourceSchema = target.table().add(TOMBSTONE, DataTypes.BooleanType, false);
            Map<String, String> broken = target.rules().broken(spark, source, sourceSchema, TOMBSTONE);
            if (!broken.isEmpty()) {
                rejectBroken(survivors, broken); // throws at the first when poison records fail the run
                java.util.HashSet<String> out = new java.util.HashSet<>(broken.keySet());
                source = source.filter(e -> !out.contains(e.partition + ":" + e.offset));
                phase("CHECK constraints");
            }
            if (newest != null) {
                // what the live writer applied while the wave was decoded: read on to the log's end, last thing
                java.util.HashSet<String> later = newest.caughtUp(survivorsByKey, inLog);
                if (!later.isEmpty()) {
                    Broadcast<java.util.HashSet<String>> out = jsc.broadcast(later);
                    source = source.filter(e -> !out.value().contains(e.partition + ":" + e.offset));
                }
                phase("the log's end");
            }
            return new Values(source, refusedByTable, decodedCounts, DeltaTableRules.perPartition(broken));
        }

        /**
         * Under newer-wins: leaves out (counted as kept out) the changes the tombstone ledger holds a newer delete
         * of, and records the wave's deletes in it before the MERGE (a rerun records them again).
         */
        private JavaRDD<Entry> honourLedger(JavaRDD<Entry> reduced, List<String> keys) {
            if (sinkSettings.conflictMode() != ConflictMode.NEWER_WINS) {
                return reduced;
            }
            JavaRDD<Entry> source = reduced;
            Map<String, Version> held = DeltaEngineSupport.read(path, keys);
            if (!held.isEmpty()) {
                HashMap<String, Deleted> ledger = new HashMap<>();
                held.forEach((k, v) -> ledger.put(k, Deleted.of(v)));
                Broadcast<HashMap<String, Deleted>> b = jsc.broadcast(ledger);
                reduced.filter(e -> Entry.blocked(b.value(), e)).map(e -> e.partition).countByValue()
                        .forEach((part, n) -> keptOut.merge(part, n, Long::sum));
                source = reduced.filter(e -> !Entry.blocked(b.value(), e));
            }
            if (sinkSettings.tombstoneMode() == TombstoneMode.DELETE) {
                Map<String, Version> deletes = new HashMap<>();
                source.filter(e -> e.tombstone).map(e -> new Tuple2<>(e.key, Deleted.of(e.version())))
                        .collect().forEach(t -> deletes.put(t._1(), t._2().version()));
                DeltaEngineSupport.record(path, deletes);
            }
            phase("ledger");
            return source;
        }

        /**
         * MERGEs the source into the table, idempotent by the wave's transaction id (an empty table: appended, by the
         * same ids), counting what the table kept out.
         */
        private void merge(String appId, int wave, Target target, JavaRDD<Entry> source) {
            SinkSettings.MetadataColumns meta = sinkSettings.metadata();
            StructType table = target.table();
            List<String> keys = target.keys();
            StructType sourceSchema = table.add(TOMBSTONE, DataTypes.BooleanType, false);
            Dataset<Row> src = spark.createDataFrame(source.mapPartitions(Entry::rowsOf), sourceSchema);
            String view = "kbackfill_wave_" + wave;
            src.createOrReplaceTempView(view);
            List<String> written = List.of(table.fieldNames());
            DeltaEngineSupport.requireWritten(written.stream().filter(c -> !keys.contains(c)
                    && !meta.contains(c) && !sinkSettings.writesValueColumn(c)).toList());
            DeltaMergeSql sql = new DeltaMergeSql(path, written, has(table, meta.version())
                    && table.apply(meta.version()).dataType() == DataTypes.StringType, keys, meta,
                    sinkSettings.conflictMode(), sinkSettings.tombstoneMode(), options.foreignRows(),
                    ownField(table, sinkSettings));
            String against = "kbackfill_table_" + view;
            if (target.emptyBefore()) {
                // nothing to merge with: what a MERGE would insert, appended, idempotent by the same txn ids
                src.where(sql.appended()).drop(TOMBSTONE).write().format("delta").mode("append")
                        .option("txnAppId", appId).option("txnVersion", String.valueOf(wave)).save(path);
                phase("append (empty table)");
            } else {
                if (sinkSettings.conflictMode() == ConflictMode.NEWER_WINS) {
                    // the versions the table already holds: the MERGE leaves them alone, and they are kept out
                    countAgainstTable(against, sql.heldAlready(view, against))
                            .forEach((part, n) -> keptOut.merge(part, n, Long::sum));
                }
                spark.conf().set(TXN_APP_ID, appId);
                spark.conf().set(TXN_VERSION, String.valueOf(wave));
                try {
                    spark.sql(sql.merge(view));
                    phase("MERGE");
                } finally {
                    spark.conf().unset(TXN_APP_ID);
                    spark.conf().unset(TXN_VERSION);
                }
            }
            if (sinkSettings.conflictMode() != ConflictMode.OVERWRITE && !target.emptyBefore()) {
                countAgainstTable(against, sql.keptOut(view, against))
                        .forEach((part, n) -> keptOut.merge(part, n, Long::sum));
                phase("kept-out count");
            }
            spark.catalog().dropTempView(view);
        }

        /** Each partition's counts: every record read is written, kept out, superseded, filtered or rejected. */
        private void count(WaveCounters counters, Values values, Newest newest) {
            for (Map.Entry<Integer, PartitionSplit> r : ranges.entrySet()) {
                int part = r.getKey();
                long changes = counters.changes.get(part).value();
                long survived = perPartition.getOrDefault(part, 0L);
                long broken = values.broken().getOrDefault(part, 0L);
                // values rejected after reduction: undecodable, a value the table cannot hold, or a row that
                // breaks a CHECK constraint of the table; the last two the table refused
                long rejectedLate = survived - values.decoded().getOrDefault(part, 0L) + broken;
                long refusedHere = values.refusedByTable().getOrDefault(part, 0L) + broken;
                long kept = keptOut.getOrDefault(part, 0L);
                // survivors are counted after the log left out what it supersedes
                long later = inLog.getOrDefault(part, 0L);
                long laterEarly = later - (newest == null ? 0 : newest.lateCount(part));
                stats.put(part, new PartitionStats(part, counters.read.get(part).value(),
                        changes - survived - laterEarly, counters.filtered.get(part).value(),
                        counters.rejected.get(part).value() + rejectedLate,
                        survived - rejectedLate - kept - (later - laterEarly), kept, 0, r.getValue().end(),
                        r.getValue().end(), counters.late.get(part).value(), refusedHere, later));
            }
        }

        /**
         * Each key's newest record in the log from the wave's ranges' starts to the log's end, by the version rule
         * without a field (log time, partition, offset): read with Spark's Kafka source once early, and to the log's
         * end once more just before the MERGE, as a run beside a live writer reads it ({@link
         * dev.kbackfill.core.live.NewestInLog}).
         */
        private final class Newest {
            private final Map<Integer, PartitionSplit> upTo = new TreeMap<>();
            private final Map<Integer, Long> lateCounts = new HashMap<>();

            Newest(HashMap<Integer, Long> before) {
                Map<Integer, Long> ends = logEnds();
                ranges.forEach((p, r) -> upTo.put(p, new PartitionSplit(p, r.next(), Math.max(r.next(),
                        ends.getOrDefault(p, r.end())))));
                this.before = before;
            }

            private final HashMap<Integer, Long> before;

            private Map<Integer, Long> logEnds() {
                try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(
                        settings.kafkaConfig())) {
                    return offsets.endOffsets(plan.topic(), ranges.keySet(), plan.request().isolationLevel());
                }
            }

            /** Per key text, its newest place in {@code splits} of the log, the clock starting at {@code clock}. */
            private org.apache.spark.api.java.JavaPairRDD<String, long[]> places(Map<Integer, PartitionSplit> splits,
                                                                                  HashMap<Integer, Long> clock) {
                String json = specJson;
                JavaRDD<Row> log = KafkaRanges.read(spark, plan, splits, dev.kbackfill.core.read.BoundedReader
                        .withJobClientId(settings.kafkaConfig(), "newest"), true, 0).javaRDD();
                return log.mapPartitionsToPair(it -> {
                    dev.kbackfill.core.record.RecordDecoder decoder = TaskContextCache.job(json).decoder();
                    dev.kbackfill.core.version.LogClock lc = new dev.kbackfill.core.version.LogClock(clock);
                    List<Tuple2<String, long[]>> out = new ArrayList<>();
                    while (it.hasNext()) {
                        SourceRecord r = KafkaRanges.record(it.next());
                        long lt = lc.stamp(r.partition(), r.timestamp()); // a Spark partition is one source partition, in order
                        try {
                            out.add(new Tuple2<>(dev.kbackfill.core.record.KeyIdentity.of(decoder.keyOf(r)).text(),
                                    new long[] {lt, r.partition(), r.offset()}));
                        } catch (dev.kbackfill.core.record.DecodeException | dev.kbackfill.resolver.RequestException e) {
                            // no key: nothing of the wave's can be its
                        }
                    }
                    return out.iterator();
                }).reduceByKey((a, b) -> after(a, b) ? a : b);
            }

            private static boolean after(long[] a, long[] b) {
                return a[0] != b[0] ? a[0] > b[0] : a[1] != b[1] ? a[1] > b[1] : a[2] > b[2];
            }

            private static boolean superseded(Raw r, long[] newest) {
                return newest != null && after(newest, new long[] {r.logTime, r.partition, r.offset});
            }

            private final java.util.Set<String> dropped = new java.util.HashSet<>();
            private org.apache.spark.api.java.JavaPairRDD<String, long[]> early;

            /** Counts per partition the survivors the log up to its end now supersedes. */
            void leaveOut(org.apache.spark.api.java.JavaPairRDD<String, Raw> keyed, Map<Integer, Long> inLog) {
                if (upTo.values().stream().allMatch(PartitionSplit::done)) {
                    return;
                }
                early = places(upTo, before).persist(StorageLevel.MEMORY_AND_DISK());
                keyed.join(early).filter(t -> superseded(t._2()._1(), t._2()._2())).map(t -> t._2()._1().partition)
                        .countByValue().forEach((p, n) -> inLog.merge(p, n, Long::sum));
            }

            /** The survivors the log does not supersede. */
            org.apache.spark.api.java.JavaPairRDD<String, Raw> kept(org.apache.spark.api.java.JavaPairRDD<String, Raw> keyed) {
                if (early == null) {
                    return keyed;
                }
                return keyed.leftOuterJoin(early).filter(t -> !superseded(t._2()._1(), t._2()._2().orElse(null)))
                        .mapToPair(t -> new Tuple2<>(t._1(), t._2()._1()));
            }

            /**
             * Reads the log from where {@link #leaveOut} stopped to its end now; returns the survivors (as
             * {@code partition:offset}) what it read supersedes, counted per partition: records a live writer may
             * have applied while the wave was decoded.
             */
            java.util.HashSet<String> caughtUp(org.apache.spark.api.java.JavaPairRDD<String, Raw> keyed,
                                               Map<Integer, Long> inLog) {
                Map<Integer, Long> ends = logEnds();
                Map<Integer, PartitionSplit> more = new TreeMap<>();
                upTo.forEach((p, r) -> more.put(p, new PartitionSplit(p, r.end(), Math.max(r.end(),
                        ends.getOrDefault(p, r.end())))));
                java.util.HashSet<String> out = new java.util.HashSet<>();
                if (more.values().stream().allMatch(PartitionSplit::done)) {
                    return out;
                }
                HashMap<Integer, Long> clock = Keying.logTimesBefore(settings.kafkaConfig(), plan, more);
                Map<String, long[]> late = new HashMap<>(places(more, clock).collectAsMap()); // a few, read since
                Broadcast<Map<String, long[]>> b = jsc.broadcast(late);
                for (Raw r : keyed.filter(t -> superseded(t._2(), b.value().get(t._1()))).values().collect()) {
                    out.add(r.partition + ":" + r.offset);
                    inLog.merge(r.partition, 1L, Long::sum);
                    lateCounts.merge(r.partition, 1L, Long::sum);
                }
                return out;
            }

            /** Of a partition's survivors left out, those {@link #caughtUp} left out (after they were decoded). */
            long lateCount(int partition) {
                return lateCounts.getOrDefault(partition, 0L);
            }
        }

        /** The wave's counts where nothing of it is written: every change superseded, filtered or rejected. */
        private void nothingWritten(WaveCounters counters) {
            for (Map.Entry<Integer, PartitionSplit> r : ranges.entrySet()) {
                int part = r.getKey();
                long later = inLog.getOrDefault(part, 0L);
                stats.put(part, new PartitionStats(part, counters.read.get(part).value(),
                        counters.changes.get(part).value() - later, counters.filtered.get(part).value(),
                        counters.rejected.get(part).value(), 0, 0, 0, r.getValue().end(), r.getValue().end(),
                        counters.late.get(part).value(), 0, later));
            }
            bytes = counters.bytes.value();
        }

        /**
         * Sends the records whose rows break a CHECK constraint to the run's poison-record policy, in partition and
         * offset order, from the driver: the first fails the run under {@code --on-error fail} (nothing of the wave
         * committed), otherwise each is skipped or dead-lettered with its coordinates, before the wave commits.
         */
        private void rejectBroken(JavaRDD<Raw> survivors, Map<String, String> broken) {
            Rejects rejects = TaskContextCache.job(specJson).rejects();
            try {
                for (Raw raw : DeltaTableRules.recordsOf(survivors, broken)) {
                    SourceRecord r = raw.record();
                    rejects.reject(r, new IllegalArgumentException("the Delta table at " + path + " cannot hold "
                            + r.coordinates() + ": its row breaks " + broken.get(raw.partition + ":" + raw.offset)));
                }
                rejects.flush();
            } finally {
                rejects.close();
            }
        }

        /**
         * The table with a nullable column for each value field of the wave it lacks, added by Spark's {@code ALTER
         * TABLE .. ADD COLUMNS} (a commit of its own, before the wave's MERGE: a column added by a wave that then
         * fails is NULL in every row, and the rerun finds it). Types as a table kbackfill creates gives them.
         */
        private StructType withColumnsFor(RowShape shape, StructType table) {
            List<String> add = new ArrayList<>();
            for (dev.kbackfill.core.record.Column c : shape.valueColumns()) {
                if (!has(table, c.name())) {
                    add.add(DeltaMergeSql.q(c.name()) + " " + SparkDeltaTypes.sparkType(c.type()).sql());
                }
            }
            if (add.isEmpty()) {
                return table;
            }
            spark.sql("ALTER TABLE delta.`" + path.replace("`", "``") + "` ADD COLUMNS (" + String.join(", ", add) + ")");
            System.err.println("added column(s) " + String.join(", ", add) + " to the Delta table at " + path);
            phase("add columns");
            return spark.read().format("delta").load(path).schema();
        }

        /**
         * Per source partition, the count {@code sql} gives (columns {@code p} and {@code n}) with the table as it is
         * now as view {@code target}.
         */
        private Map<Integer, Long> countAgainstTable(String target, String sql) {
            spark.read().format("delta").load(path).createOrReplaceTempView(target);
            Map<Integer, Long> counts = new HashMap<>();
            for (Row r : spark.sql(sql).collectAsList()) {
                counts.put((int) r.getLong(0), r.getLong(1));
            }
            spark.catalog().dropTempView(target);
            return counts;
        }
    }

    /**
     * The table's column that holds the version field in every row, another writer's too, and how its values compare
     * with the field's (as {@link GuardSql} compares them): a top-level field's column of a
     * type its values fit; empty otherwise.
     */
    static java.util.Optional<Map.Entry<String, dev.kbackfill.core.version.Guard.FieldForm>> ownField(StructType table,
                                                                                                  SinkSettings settings) {
        if (settings.versionField().isEmpty() || settings.versionField().get().path().contains(".")) {
            return java.util.Optional.empty();
        }
        String column = settings.mapping().columnOf(settings.versionField().get().path());
        if (!has(table, column)) {
            return java.util.Optional.empty();
        }
        org.apache.spark.sql.types.DataType t = table.apply(column).dataType();
        boolean integer = t == DataTypes.LongType || t == DataTypes.IntegerType || t == DataTypes.ShortType;
        dev.kbackfill.core.version.Guard.FieldForm form = switch (settings.versionField().get().type()) {
            case INTEGER -> integer ? dev.kbackfill.core.version.Guard.FieldForm.NUMBER : null;
            case STRING -> t == DataTypes.StringType ? dev.kbackfill.core.version.Guard.FieldForm.TEXT : null;
            case TIMESTAMP -> integer ? dev.kbackfill.core.version.Guard.FieldForm.EPOCH_MILLIS
                    : t == DataTypes.TimestampType ? dev.kbackfill.core.version.Guard.FieldForm.TIMESTAMP : null;
        };
        return form == null ? java.util.Optional.empty() : java.util.Optional.of(Map.entry(column, form));
    }

    private static boolean has(StructType table, String column) {
        return List.of(table.fieldNames()).contains(column);
    }
}
