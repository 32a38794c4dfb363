package dev.kbackfill.spark;

import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
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
import dev.kbackfill.sink.jdbc.GuardSql;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.util.LongAccumulator;
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
 */
final class DeltaWaves {

    static final String TOMBSTONE = "__kbackfill_tombstone";
    private static final String TXN_APP_ID = "spark.databricks.delta.write.txnAppId";
    private static final String TXN_VERSION = "spark.databricks.delta.write.txnVersion";

    private final SparkSession spark;
    private final SparkJobSpec spec;
    private final String specJson;

    DeltaWaves(SparkSession spark, SparkJobSpec spec) {
        this.spark = spark;
        this.spec = spec;
        this.specJson = spec.toJson();
    }

    RunSummary run(BackfillJob.Settings settings, Sink sink, JobState state, RunOptions options, RunListener listener) {
        long started = System.nanoTime();
        Plan plan = state.plan();
        String job = state.job();
        SinkSettings sinkSettings = TaskContextCache.job(specJson).sinkSettings();
        String path = ((dev.kbackfill.core.sink.SinkUrl.Delta) sinkSettings.sinkUrl()).location();
        // one incarnation's run: a reset gives the job a new incarnation, so a rerun never meets the txn versions
        // the table holds for an earlier one (Delta would skip every wave as committed)
        String appId = "kbackfill-spark-" + job + "-" + state.runId();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Shapes.Filters filters = Shapes.Filters.of(plan, options, settings);
        // the table, from the columns of every record of the plan: later waves then find every column

        Map<Integer, PartitionStats> stats = new TreeMap<>();
        long total = state.remaining();
        long records = 0;
        long bytes = 0;
        long waves = 0;
        JobState current = state;
        int wave = 0;
        // the partitions of waves that found no table and had nothing to create it from (deletes only): read again
        // with the next wave, so that their deletes reach the table (and its ledger) with the first values
        List<Integer> carried = new ArrayList<>();
        for (List<Integer> waveParts : spec.waves()) {
            wave++;
            List<Integer> partitions = new ArrayList<>(carried);
            partitions.addAll(waveParts);
            Map<Integer, PartitionSplit> ranges = remaining(plan, current, partitions);
            if (ranges.isEmpty()) {
                continue;
            }
            if (DeltaEngineSupport.transactionVersion(path, appId).orElse(0L) < wave) {
                try {
                    Wave w = new Wave(path, plan, ranges, settings, sinkSettings, options, filters, jsc);
                    w.write(appId, wave, sink, state);
                    System.err.println("wave " + wave + " of " + spec.waves().size() + " (" + ranges.size()
                            + " partitions): " + w.timings);
                    if (w.noTable && wave < spec.waves().size()) {
                        System.err.println("wave " + wave + " holds no values to create the Delta table from: its "
                                + "partitions are read again with wave " + (wave + 1));
                        carried = partitions;
                        continue;
                    }
                    carried = new ArrayList<>();
                    Faults.haltAt(spark, "write:" + wave);
                    w.stats.forEach((p, s) -> stats.merge(p, s, PartitionStats::plus));
                    records += w.stats.values().stream().mapToLong(PartitionStats::read).sum();
                    bytes += w.bytes;
                    waves++;
                } catch (RunFailure e) {
                    throw e;
                } catch (Exception e) { // SparkException is checked in Java's eyes, not Scala's
                    throw new RunFailure(SparkFailures.describe(e) + "; wave " + wave + " of " + spec.waves().size()
                            + " not committed; " + where(plan, current), e);
                }
            } // else: committed by an earlier attempt that stopped before moving the job's progress
            Map<Integer, Long> ends = new TreeMap<>();
            ranges.keySet().forEach(p -> ends.put(p, plan.partition(p).orElseThrow().end()));
            sink.write(new WriteBatch(job, current.run(), wave, List.of(), new RowShape(List.of(), List.of()), ends,
                    plan.topic()));
            current = current.advancedTo(ends);
            Faults.haltAt(spark, "wave:" + wave);
            listener.onProgress(total - current.remaining(), total, records, bytes);
        }
        List<PartitionStats> list = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            list.add(stats.getOrDefault(r.partition(), PartitionStats.untouched(current.rest(r))));
        }
        return new RunSummary(job, current.run(), list, bytes, waves, Duration.ofNanos(System.nanoTime() - started));
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

    private static String where(Plan plan, JobState state) {
        return RunFailure.where(state.rest());
    }

    /** Per source partition, the log time below the start of its range ({@link dev.kbackfill.resolver.LogTimes}). */
    static HashMap<Integer, Long> logTimesBefore(Map<String, Object> kafkaConfig, Plan plan,
                                                 Map<Integer, PartitionSplit> ranges) {
        Map<Integer, Long> starts = new HashMap<>();
        ranges.forEach((p, r) -> starts.put(p, r.next()));
        try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(kafkaConfig)) {
            return new HashMap<>(dev.kbackfill.resolver.LogTimes.before(offsets, plan.topic(), starts,
                    plan.request().isolationLevel()));
        }
    }

    /** One change on its way to the MERGE: its key's ledger text, its version, and its row in the table's columns. */
    static final class Entry implements Serializable {
        private static final long serialVersionUID = 1L;
        final String key;
        final String topic;
        final int partition;
        final long offset;
        final long timestamp;
        final long logTime;
        final boolean tombstone;
        final Row row;
        /** The version field's value ({@code --version-field}: a Long or a String), or null. */
        final Comparable<?> field;

        Entry(String key, String topic, int partition, long offset, long timestamp, long logTime, boolean tombstone,
              Row row, Comparable<?> field) {
            this.key = key;
            this.topic = topic;
            this.partition = partition;
            this.offset = offset;
            this.timestamp = timestamp;
            this.logTime = logTime;
            this.tombstone = tombstone;
            this.row = row;
            this.field = field;
        }

        Version version() {
            return new Version(topic, partition, offset, timestamp, logTime, field);
        }

        /**
         * The mark a record leaves in its partition when it decoded but held a value the table cannot hold: counted
         * as refused (not as undecodable), then dropped before anything reads the entries.
         */
        static Entry refusedByTable(int partition) {
            return new Entry(null, null, partition, -1, 0, 0, false, null, null);
        }

        boolean isRefusedByTable() {
            return key == null;
        }
    }

    /** A ledger entry as executors get it. */
    record Deleted(String topic, int partition, long offset, long timestamp, long logTime, Serializable field)
            implements Serializable {
        static Deleted of(Version v) {
            return new Deleted(v.topic(), v.partition(), v.offset(), v.timestamp(), v.logTime(), (Serializable) v.field());
        }

        Version version() {
            return new Version(topic, partition, offset, timestamp, logTime, (Comparable<?>) field);
        }
    }

    /** Per-partition counters filled by the executors' decoding. */
    static final class Counters implements Serializable {
        private static final long serialVersionUID = 1L;
        final Map<Integer, LongAccumulator> read = new HashMap<>();
        final Map<Integer, LongAccumulator> filtered = new HashMap<>();
        final Map<Integer, LongAccumulator> rejected = new HashMap<>();
        final Map<Integer, LongAccumulator> changes = new HashMap<>();
        final LongAccumulator bytes;

        Counters(JavaSparkContext jsc, Iterable<Integer> partitions) {
            for (int p : partitions) {
                read.put(p, jsc.sc().longAccumulator());
                filtered.put(p, jsc.sc().longAccumulator());
                rejected.put(p, jsc.sc().longAccumulator());
                changes.put(p, jsc.sc().longAccumulator());
            }
            bytes = jsc.sc().longAccumulator();
        }
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

        void write(String appId, int wave, Sink sink, JobState state) {
            String jobName = state.job();
            SinkSettings.MetadataColumns meta = sinkSettings.metadata();
            Counters counters = new Counters(jsc, ranges.keySet());
            String json = specJson;
            Shapes.Filters f = filters;
            boolean soft = sinkSettings.tombstoneMode() == TombstoneMode.SOFT_DELETE;
            boolean ignoreUnknown = sinkSettings.ignoreUnknownFields();
            String p = path;
            // read, decode keys (values too where a poison value must be seen even if superseded), reduce by key
            // one Spark partition per source partition (no split): each is read in offset order from its range's start,
            // where its log clock starts (looked up here, once), so every record gets the log time any run gives it
            HashMap<Integer, Long> before = logTimesBefore(settings.kafkaConfig(), plan, ranges);
            JavaRDD<Row> rows = KafkaRanges.read(spark, plan, ranges,
                    dev.kbackfill.core.read.BoundedReader.withJobClientId(settings.kafkaConfig(), jobName), options.allowDataLoss(),
                    0).javaRDD();
            int shuffle = Math.max(rows.getNumPartitions(), jsc.defaultParallelism());
            JavaRDD<Raw> survivors = rows.mapPartitionsToPair(it -> new Keying(json, f, counters, before, it))
                    .reduceByKey(Raw::newer, shuffle).values().persist(StorageLevel.MEMORY_AND_DISK());
            JavaRDD<Entry> decoded = null;
            try {
                Map<Integer, Long> perPartition = survivors.map(e -> e.partition).countByValue();
                phase("read, decode keys and reduce");
                RowShape shape = null; // the wave's columns, decoded once where they are needed
                if (!sink.destinationExists()) {
                    // the table, from the columns of the wave's changes (as the single-machine sink takes its first batch's)
                    shape = shapeOf(json, survivors);
                    WriteBatch creating = new WriteBatch(state.job(), state.run(), 0, List.of(), shape, Map.of(),
                            plan.topic());
                    if (dev.kbackfill.sink.lake.HeldBatches.missingToCreate(creating, sinkSettings).isEmpty()) {
                        sink.write(creating); // deletes only: the key columns, values added later
                    }
                    phase("create the table");
                    if (!sink.destinationExists()) {
                        // every record of the wave was left out (filtered, rejected), or none carries a column the
                        // table is partitioned by: no table yet, so it waits for a later wave, which reads this one
                        // again
                        nothingWritten(counters);
                        noTable = true;
                        return;
                    }
                }
                StructType table = spark.read().format("delta").load(path).schema();
                if (sinkSettings.addsColumns()) { // a table created from this wave's shape lacks none of it
                    shape = shape != null ? shape : shapeOf(json, survivors);
                    table = withColumnsFor(shape, table);
                }
                // the columns Delta computes (generated, identity) are left to it; its CHECK constraints are seen first
                DeltaTableRules rules = DeltaTableRules.of(path);
                table = rules.writable(table);
                StructType columns = table;
                java.util.HashSet<String> computed = new java.util.HashSet<>(rules.computed());
                // a table with no rows before the MERGE keeps nothing out: no need to count
                boolean emptyBefore = !DeltaEngineSupport.hasData(path);
                // the table's key columns as kbackfill created it; a table made by others: the records' key fields,
                // as the single-machine sink takes them
                RowShape keyed = shape;
                List<String> keys = DeltaEngineSupport.keyColumns(path).orElseGet(() -> (keyed != null ? keyed
                        : shapeOf(json, survivors)).keyColumns().stream().map(dev.kbackfill.core.record.Column::name)
                        .toList());
                if (keys.isEmpty()) {
                    // no change survived (all filtered or rejected) and the table names no key columns: nothing to
                    // write, the wave's progress moves past its ranges
                    nothingWritten(counters);
                    return;
                }
                decoded = survivors.mapPartitions(raws -> new Rows(json, columns, keys, meta, soft, ignoreUnknown,
                        computed, p, counters, raws)).persist(StorageLevel.MEMORY_AND_DISK());
                // counted from the entries, not by accumulators, which a retried task would add to twice
                Map<Integer, Long> refusedByTable = decoded.filter(Entry::isRefusedByTable).map(e -> e.partition)
                        .countByValue();
                JavaRDD<Entry> reduced = decoded.filter(e -> !e.isRefusedByTable());
                Map<Integer, Long> refused = reduced.map(e -> e.partition).countByValue();
                phase("decode values");
                Map<Integer, Long> keptOut = new HashMap<>();
                JavaRDD<Entry> source = reduced;
                if (sinkSettings.conflictMode() == ConflictMode.NEWER_WINS) {
                    Map<String, Version> held = DeltaEngineSupport.read(path);
                    if (!held.isEmpty()) {
                        HashMap<String, Deleted> ledger = new HashMap<>();
                        held.forEach((k, v) -> ledger.put(k, Deleted.of(v)));
                        Broadcast<HashMap<String, Deleted>> b = jsc.broadcast(ledger);
                        reduced.filter(e -> blocked(b.value(), e)).map(e -> e.partition).countByValue()
                                .forEach((part, n) -> keptOut.merge(part, n, Long::sum));
                        source = reduced.filter(e -> !blocked(b.value(), e));
                    }
                    if (sinkSettings.tombstoneMode() == TombstoneMode.DELETE) {
                        Map<String, Version> deletes = new HashMap<>();
                        source.filter(e -> e.tombstone).map(e -> new Tuple2<>(e.key, Deleted.of(e.version())))
                                .collect().forEach(t -> deletes.put(t._1(), t._2().version()));
                        DeltaEngineSupport.record(path, deletes); // before the MERGE: a rerun records them again
                    }
                    phase("ledger");
                }
                StructType sourceSchema = table.add(TOMBSTONE, DataTypes.BooleanType, false);
                Map<String, String> broken = rules.broken(spark, source, sourceSchema, TOMBSTONE);
                Map<Integer, Long> brokenPerPartition = DeltaTableRules.perPartition(broken);
                if (!broken.isEmpty()) {
                    rejectBroken(survivors, broken); // throws at the first when poison records fail the run
                    java.util.HashSet<String> out = new java.util.HashSet<>(broken.keySet());
                    source = source.filter(e -> !out.contains(e.partition + ":" + e.offset));
                    phase("CHECK constraints");
                }
                Dataset<Row> src = spark.createDataFrame(source.mapPartitions(DeltaWaves::rowsOf), sourceSchema);
                String view = "kbackfill_wave_" + wave;
                src.createOrReplaceTempView(view);
                if (emptyBefore) {
                    // nothing to merge with: what a MERGE would insert, appended, idempotent by the same txn ids
                    String insertable = sinkSettings.conflictMode() == ConflictMode.INSERT_ONLY
                            || sinkSettings.tombstoneMode() != TombstoneMode.SOFT_DELETE ? "NOT " + q(TOMBSTONE) : "true";
                    src.where(insertable).drop(TOMBSTONE).write().format("delta").mode("append")
                            .option("txnAppId", appId).option("txnVersion", String.valueOf(wave)).save(path);
                    phase("append (empty table)");
                } else {
                    if (sinkSettings.conflictMode() == ConflictMode.NEWER_WINS) {
                        // the versions the table already holds: the MERGE leaves them alone, and they are kept out
                        heldAlready(view, table, keys, meta).forEach((part, n) -> keptOut.merge(part, n, Long::sum));
                    }
                    String merge = mergeStatement(path, view, table, keys, meta);
                    spark.conf().set(TXN_APP_ID, appId);
                    spark.conf().set(TXN_VERSION, String.valueOf(wave));
                    try {
                        spark.sql(merge);
                        phase("MERGE");
                    } finally {
                        spark.conf().unset(TXN_APP_ID);
                        spark.conf().unset(TXN_VERSION);
                    }
                }
                if (sinkSettings.conflictMode() != ConflictMode.OVERWRITE && !emptyBefore) {
                    keptOutByMerge(view, table, keys, meta).forEach((part, n) -> keptOut.merge(part, n, Long::sum));
                    phase("kept-out count");
                }
                spark.catalog().dropTempView(view);
                for (Map.Entry<Integer, PartitionSplit> r : ranges.entrySet()) {
                    int part = r.getKey();
                    long changes = counters.changes.get(part).value();
                    long survived = perPartition.getOrDefault(part, 0L);
                    // values rejected after reduction: undecodable, a value the table cannot hold, or a row that
                    // breaks a CHECK constraint of the table; the last two the table refused
                    long rejectedLate = survived - refused.getOrDefault(part, 0L)
                            + brokenPerPartition.getOrDefault(part, 0L);
                    long refusedHere = refusedByTable.getOrDefault(part, 0L) + brokenPerPartition.getOrDefault(part, 0L);
                    long kept = keptOut.getOrDefault(part, 0L);
                    stats.put(part, new PartitionStats(part, counters.read.get(part).value(), changes - survived,
                            counters.filtered.get(part).value(), counters.rejected.get(part).value() + rejectedLate,
                            survived - rejectedLate - kept, kept, 0, r.getValue().end(), r.getValue().end(), 0, refusedHere));
                }
                bytes = counters.bytes.value();
            } finally {
                survivors.unpersist(false);
                if (decoded != null) {
                    decoded.unpersist(false);
                }
            }
        }

        /** The wave's counts where nothing of it is written: every change superseded, filtered or rejected. */
        private void nothingWritten(Counters counters) {
            for (Map.Entry<Integer, PartitionSplit> r : ranges.entrySet()) {
                int part = r.getKey();
                stats.put(part, new PartitionStats(part, counters.read.get(part).value(),
                        counters.changes.get(part).value(), counters.filtered.get(part).value(),
                        counters.rejected.get(part).value(), 0, 0, 0, r.getValue().end(), r.getValue().end()));
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
                    add.add(q(c.name()) + " " + sparkType(c.type()).sql());
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

        /** Per source partition, the changes whose version the key's row holds already (a replay). */
        private Map<Integer, Long> heldAlready(String view, StructType table, List<String> keys,
                                               SinkSettings.MetadataColumns meta) {
            return countAgainstTable(view, keys, meta, "JOIN", sameVersion(table, meta) + " AND NOT s." + q(TOMBSTONE));
        }

        /**
         * Per source partition, the wave's changes (view {@code s}) that meet {@code where} against the table as it is
         * now ({@code t}, joined on the key by {@code join}).
         */
        private Map<Integer, Long> countAgainstTable(String view, List<String> keys, SinkSettings.MetadataColumns meta,
                                                     String join, String where) {
            String target = "kbackfill_table_" + view;
            spark.read().format("delta").load(path).createOrReplaceTempView(target);
            String on = keys.stream().map(k -> "t." + q(k) + " = s." + q(k)).collect(Collectors.joining(" AND "));
            Map<Integer, Long> counts = new HashMap<>();
            for (Row r : spark.sql("SELECT s." + q(meta.partition()) + " AS p, count(*) AS n FROM " + view + " s " + join
                    + " " + target + " t ON " + on + " WHERE " + where + " GROUP BY s." + q(meta.partition())).collectAsList()) {
                counts.put((int) r.getLong(0), r.getLong(1));
            }
            spark.catalog().dropTempView(target);
            return counts;
        }

        /** The key's row ({@code t}) holds the change's ({@code s}) version coordinates. */
        private static String sameVersion(StructType table, SinkSettings.MetadataColumns meta) {
            return "t." + q(meta.partition()) + " <=> s." + q(meta.partition()) + " AND t." + q(meta.offset())
                    + " <=> s." + q(meta.offset()) + (has(table, meta.topic()) ? " AND t." + q(meta.topic()) + " <=> s."
                    + q(meta.topic()) : "");
        }

        /** The MERGE of a wave under the conflict and tombstone modes. */
        private String mergeStatement(String path, String view, StructType table, List<String> keys,
                                      SinkSettings.MetadataColumns meta) {
            ConflictMode conflict = sinkSettings.conflictMode();
            TombstoneMode tombstones = sinkSettings.tombstoneMode();
            boolean topicColumn = has(table, meta.topic());
            boolean versionColumn = has(table, meta.version());
            boolean versionText = versionColumn
                    && table.apply(meta.version()).dataType() == org.apache.spark.sql.types.DataTypes.StringType;
            String guard = conflict == ConflictMode.NEWER_WINS
                    ? " AND " + GuardSql.sparkSql(meta, topicColumn, versionColumn, versionText, "t.", "s.") : "";
            String on = keys.stream().map(k -> "t." + q(k) + " = s." + q(k)).collect(Collectors.joining(" AND "));
            List<String> columns = List.of(table.fieldNames());
            dev.kbackfill.sink.lake.KeyedBatch.requireWritten(columns.stream().filter(c -> !keys.contains(c)
                    && !meta.contains(c) && !sinkSettings.writesValueColumn(c)).toList());
            String set = columns.stream().filter(c -> !keys.contains(c)).map(c -> "t." + q(c) + " = s." + q(c))
                    .collect(Collectors.joining(", "));
            String insert = "INSERT (" + columns.stream().map(DeltaWaves::q).collect(Collectors.joining(", "))
                    + ") VALUES (" + columns.stream().map(c -> "s." + q(c)).collect(Collectors.joining(", ")) + ")";
            String tomb = "s." + q(TOMBSTONE);
            StringBuilder sql = new StringBuilder("MERGE INTO delta.`").append(path.replace("`", "``"))
                    .append("` AS t USING ").append(view).append(" AS s ON ").append(on);
            if (conflict == ConflictMode.INSERT_ONLY) {
                sql.append(" WHEN NOT MATCHED AND NOT ").append(tomb).append(" THEN ").append(insert);
                return sql.toString();
            }
            if (tombstones == TombstoneMode.SOFT_DELETE) {
                List<String> marks = new ArrayList<>(List.of(meta.deleted()));
                for (String m : List.of(meta.topic(), meta.partition(), meta.offset(), meta.timestamp(), meta.logTime(),
                        meta.version())) {
                    if (has(table, m)) {
                        marks.add(m);
                    }
                }
                sql.append(" WHEN MATCHED AND ").append(tomb).append(guard).append(" THEN UPDATE SET ")
                        .append(marks.stream().map(c -> "t." + q(c) + " = s." + q(c)).collect(Collectors.joining(", ")));
            } else if (tombstones == TombstoneMode.DELETE) {
                sql.append(" WHEN MATCHED AND ").append(tomb).append(guard).append(" THEN DELETE");
            }
            sql.append(" WHEN MATCHED AND NOT ").append(tomb).append(guard).append(" THEN UPDATE SET ").append(set);
            sql.append(" WHEN NOT MATCHED");
            if (tombstones != TombstoneMode.SOFT_DELETE) {
                sql.append(" AND NOT ").append(tomb);
            }
            sql.append(" THEN ").append(insert);
            return sql.toString();
        }

        /**
         * Per source partition, the changes the MERGE kept out: after it, the key's row does not hold the change's
         * version (or, for a hard delete, the key still has a row). Insert-only tombstones are ignored, not kept out.
         */
        private Map<Integer, Long> keptOutByMerge(String view, StructType table, List<String> keys,
                                                  SinkSettings.MetadataColumns meta) {
            String present = "t." + q(keys.get(0)) + " IS NOT NULL";
            String same = sameVersion(table, meta);
            String tomb = "s." + q(TOMBSTONE);
            String notApplied;
            if (sinkSettings.conflictMode() == ConflictMode.INSERT_ONLY) {
                notApplied = "NOT " + tomb + " AND NOT (" + present + " AND " + same + ")";
            } else if (sinkSettings.tombstoneMode() == TombstoneMode.DELETE) {
                notApplied = "(" + tomb + " AND " + present + ") OR (NOT " + tomb + " AND NOT (" + present + " AND "
                        + same + "))";
            } else {
                notApplied = "NOT (" + present + " AND " + same + ")";
            }
            return countAgainstTable(view, keys, meta, "LEFT JOIN", notApplied);
        }
    }

    /** The rows a MERGE takes from its source's entries (where an injected task failure may strike). */
    static Iterator<Row> rowsOf(Iterator<Entry> entries) {
        Faults.failTaskOnce("feeding the MERGE");
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return entries.hasNext();
            }

            @Override
            public Row next() {
                return entries.next().row;
            }
        };
    }

    private static boolean has(StructType table, String column) {
        return List.of(table.fieldNames()).contains(column);
    }

    static String q(String identifier) {
        return "`" + identifier.replace("`", "``") + "`";
    }

    /** Whether the ledger holds a delete of the change's key that the change does not supersede. */
    static boolean blocked(Map<String, Deleted> ledger, Entry e) {
        Deleted d = ledger.get(e.key);
        return d != null && !e.version().supersedes(d.version());
    }

    /** A record on its way to reduction, as Spark ships it: coordinates and raw bytes. */
    static final class Raw implements Serializable {
        private static final long serialVersionUID = 1L;
        final String topic;
        final int partition;
        final long offset;
        final long timestamp;
        final long logTime;
        final byte[] key;
        final byte[] value;
        final String[] headerKeys;
        final byte[][] headerValues;
        /** The version field's value ({@code --version-field}; a tombstone's from its partition's clock), or null. */
        final Comparable<?> field;

        Raw(SourceRecord r) {
            this(r, null);
        }

        Raw(SourceRecord r, Comparable<?> field) {
            this.field = field;
            this.topic = r.topic();
            this.partition = r.partition();
            this.offset = r.offset();
            this.timestamp = r.timestamp();
            this.logTime = r.logTime();
            this.key = r.key();
            this.value = r.value();
            org.apache.kafka.common.header.Header[] headers = r.headers() == null ? new org.apache.kafka.common.header.Header[0]
                    : r.headers().toArray();
            this.headerKeys = new String[headers.length];
            this.headerValues = new byte[headers.length][];
            for (int i = 0; i < headers.length; i++) {
                headerKeys[i] = headers[i].key();
                headerValues[i] = headers[i].value();
            }
        }

        SourceRecord record() {
            org.apache.kafka.common.header.internals.RecordHeaders headers = new org.apache.kafka.common.header.internals.RecordHeaders();
            for (int i = 0; i < headerKeys.length; i++) {
                headers.add(headerKeys[i], headerValues[i]);
            }
            return new SourceRecord(topic, partition, offset, timestamp, logTime, key, value, headers);
        }

        Version version() {
            return new Version(topic, partition, offset, timestamp, logTime, field);
        }

        /** The newer of two records of a key, by the one version rule. */
        static Raw newer(Raw a, Raw b) {
            return Version.compare(a.version(), b.version()) >= 0 ? a : b;
        }
    }

    /**
     * An executor's first pass over its rows: each record read, filtered, rejected (by the run's policy, as the
     * command line's run does) or keyed for reduction. Only keys are decoded when a poison value would fail the run
     * anyway (record keys, {@code --on-error fail}): the values of superseded records are then never decoded, as in
     * the single-machine run; otherwise every value is decoded here so that no poison record hides behind a later
     * one.
     */
    static final class Keying implements Iterator<Tuple2<String, Raw>> {
        private final Iterator<Row> rows;
        private final RecordDecoder decoder;
        private final Rejects rejects;
        private final boolean lazy;
        private final Shapes.Filters filters;
        private final Counters counters;
        private final dev.kbackfill.core.version.LogClock clock;
        /** The version field's clock for tombstones (records arrive in offset order per partition), or null. */
        private dev.kbackfill.core.version.FieldClock fields;
        private dev.kbackfill.core.read.FieldSeeds seeds;
        private Tuple2<String, Raw> next;
        private boolean done;

        /** @param logTimesBefore per source partition, the log time below its range's start (the clock's start) */
        Keying(String specJson, Shapes.Filters filters, Counters counters, Map<Integer, Long> logTimesBefore,
               Iterator<Row> rows) {
            JobDefinition args = TaskContextCache.job(specJson);
            this.clock = new dev.kbackfill.core.version.LogClock(logTimesBefore);
            this.rows = rows;
            this.decoder = args.decoder();
            this.rejects = args.rejects();
            // every record's version field takes part in the reduction: values are decoded first where there is one
            // (nor with --where, which reads every record whole to decide whether it is kept)
            this.lazy = decoder.keyedByRecordKey() && decoder.versionField().isEmpty() && decoder.filter().isEmpty()
                    && rejects.failsTheRun();
            if (decoder.versionField().isPresent()) {
                this.seeds = new dev.kbackfill.core.read.FieldSeeds(args.kafkaConfig(),
                        args.request().isolationLevel(), args.request().topic(), decoder);
                this.fields = new dev.kbackfill.core.version.FieldClock(seeds);
            }
            this.filters = filters;
            this.counters = counters;
        }

        @Override
        public boolean hasNext() {
            while (next == null && !done) {
                if (!rows.hasNext()) {
                    done = true;
                    rejects.flush(); // dead letters are durable before the wave commits
                    rejects.close();
                    if (seeds != null) {
                        seeds.close();
                    }
                    break;
                }
                SourceRecord raw = KafkaRanges.record(rows.next());
                // a Spark partition holds one source partition's range in offset order: stamped as read
                SourceRecord r = raw.withLogTime(clock.stamp(raw.partition(), raw.timestamp()));
                counters.read.get(r.partition()).add(1);
                counters.bytes.add((r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length));
                if (filters.filters(r)) {
                    counters.filtered.get(r.partition()).add(1);
                    if (fields != null) {
                        fields.passed(r, decoder);
                    }
                    continue;
                }
                try {
                    Change c = lazy ? decoder.decodeKey(r) : decoder.decodeKept(r).orElse(null);
                    if (c == null) {
                        counters.filtered.get(r.partition()).add(1); // left out by --where
                        if (fields != null) {
                            fields.passed(r, decoder);
                        }
                        continue;
                    }
                    if (fields != null) {
                        c = fields.stamp(c);
                    }
                    next = new Tuple2<>(dev.kbackfill.core.record.KeyIdentity.of(c.key()).text(),
                            new Raw(r, c.versionField()));
                    counters.changes.get(r.partition()).add(1);
                } catch (DecodeException e) {
                    rejects.reject(r, e); // throws when poison records fail the run
                    counters.rejected.get(r.partition()).add(1);
                    if (fields != null) {
                        fields.passed(r, decoder); // its field is the log's, as in the single-machine run
                    }
                }
            }
            return next != null;
        }

        @Override
        public Tuple2<String, Raw> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Tuple2<String, Raw> n = next;
            next = null;
            return n;
        }
    }

    /** The columns of a wave's changes, decoded by the executors (none for a wave without any). */
    static RowShape shapeOf(String specJson, JavaRDD<Raw> survivors) {
        return survivors.mapPartitions(raws -> shapeOf(specJson, raws))
                .fold(new RowShape.Accumulator(), RowShape.Accumulator::merge).shape();
    }

    /** The Spark type of the column a lake table kbackfill creates gives values of {@code type}. */
    static DataType sparkType(dev.kbackfill.core.record.ColumnType type) {
        dev.kbackfill.sink.lake.LakeType lake = dev.kbackfill.sink.lake.LakeType.forColumn(type);
        return switch (lake.kind()) {
            case STRING -> DataTypes.StringType;
            case LONG -> DataTypes.LongType;
            case INT -> DataTypes.IntegerType;
            case DOUBLE -> DataTypes.DoubleType;
            case FLOAT -> DataTypes.FloatType;
            case DECIMAL -> DataTypes.createDecimalType(lake.precision(), lake.scale());
            case BOOLEAN -> DataTypes.BooleanType;
            case BINARY -> DataTypes.BinaryType;
            case TIMESTAMP -> DataTypes.TimestampType;
            case DATE -> DataTypes.DateType;
        };
    }

    /** The columns of the records of one Spark partition of a wave's survivors. */
    static Iterator<RowShape.Accumulator> shapeOf(String specJson, Iterator<Raw> raws) {
        return List.of(Shapes.accumulate(TaskContextCache.job(specJson).decoder(), new Iterator<SourceRecord>() {
            @Override
            public boolean hasNext() {
                return raws.hasNext();
            }

            @Override
            public SourceRecord next() {
                return raws.next().record();
            }
        }, null)).iterator();
    }

    /**
     * The survivors of a wave as rows of the table: values decoded, converted to the columns' types, keyed by their
     * key's ledger text; a value the table cannot hold (or cannot be decoded) is a poison record for the run's policy.
     */
    static final class Rows implements Iterator<Entry> {
        private final Iterator<Raw> raws;
        private final RecordDecoder decoder;
        private final Rejects rejects;
        private final StructType table;
        private final List<String> keys;
        private final SinkSettings.MetadataColumns meta;
        private final boolean soft;
        private final boolean ignoreUnknown;
        /** The columns Delta computes: a record's field of that name is left to Delta. */
        private final java.util.Set<String> computed;
        private final String path;
        private final io.delta.kernel.types.DataType[] kernelTypes;
        private Entry next;
        private boolean done;

        Rows(String specJson, StructType table, List<String> keys, SinkSettings.MetadataColumns meta, boolean soft,
             boolean ignoreUnknown, java.util.Set<String> computed, String path, Counters counters, Iterator<Raw> raws) {
            JobDefinition args = TaskContextCache.job(specJson);
            this.raws = raws;
            this.decoder = args.decoder();
            this.rejects = args.rejects();
            this.table = table;
            this.keys = keys;
            this.meta = meta;
            this.soft = soft;
            this.ignoreUnknown = ignoreUnknown;
            this.computed = computed;
            this.path = path;
            this.kernelTypes = new io.delta.kernel.types.DataType[table.size()];
            for (int i = 0; i < table.size(); i++) {
                kernelTypes[i] = kernelType(table.fields()[i].dataType());
            }
        }

        @Override
        public boolean hasNext() {
            while (next == null && !done) {
                if (!raws.hasNext()) {
                    done = true;
                    rejects.flush();
                    rejects.close();
                    break;
                }
                Raw raw = raws.next();
                SourceRecord r = raw.record();
                try {
                    next = entry(decoder.decode(r), r, raw.field);
                } catch (DecodeException | IllegalArgumentException e) {
                    RuntimeException why = e instanceof DecodeException ? e : new IllegalArgumentException(
                            "the Delta table at " + path + " cannot hold " + r.coordinates() + ": " + e.getMessage(), e);
                    rejects.reject(r, why); // throws when poison records fail the run
                    if (!(e instanceof DecodeException)) {
                        next = Entry.refusedByTable(r.partition());
                    }
                }
            }
            return next != null;
        }

        @Override
        public Entry next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Entry n = next;
            next = null;
            return n;
        }

        private Entry entry(Change c, SourceRecord r, Comparable<?> field) {
            Object[] values = new Object[table.size() + 1];
            List<Object> physicalKey = new ArrayList<>(keys.size());
            for (String k : keys) {
                if (!c.key().containsKey(k)) {
                    throw new IllegalArgumentException("the key at partition " + c.partition() + " offset " + c.offset()
                            + " has no field " + k + " (fields " + c.key().keySet() + ")");
                }
                int i = index(k);
                if (i < 0) {
                    throw new IllegalStateException("key column " + k + " is not in the Delta table at " + path);
                }
                Object phys = DeltaEngineSupport.physical(c.key().get(k), kernelTypes[i], k);
                physicalKey.add(phys);
                values[i] = spark(phys, table.fields()[i].dataType());
            }
            if (c.isTombstone()) {
                if (soft) {
                    values[index(meta.deleted())] = true;
                }
            } else {
                for (Map.Entry<String, Object> v : c.values().entrySet()) {
                    if (c.key().containsKey(v.getKey())) {
                        continue;
                    }
                    int i = index(v.getKey());
                    if (i < 0) {
                        if (ignoreUnknown || computed.contains(v.getKey())) {
                            continue;
                        }
                        throw new IllegalStateException("value field '" + v.getKey() + "' (first at partition "
                                + c.partition() + " offset " + c.offset() + ") has no column in the Delta table at "
                                + path + "; pass --create-table to have it added (on the Spark engine, through "
                                + "ALTER TABLE), or --ignore-unknown-fields to skip such fields");
                    }
                    values[i] = spark(DeltaEngineSupport.physical(v.getValue(), kernelTypes[i], v.getKey()),
                            table.fields()[i].dataType());
                }
                int deleted = index(meta.deleted());
                if (deleted >= 0) {
                    values[deleted] = false;
                }
            }
            set(values, meta.topic(), r.topic());
            set(values, meta.partition(), (long) r.partition());
            set(values, meta.offset(), r.offset());
            set(values, meta.timestamp(), Instant.ofEpochMilli(r.timestamp()));
            set(values, meta.logTime(), Instant.ofEpochMilli(r.logTime()));
            set(values, meta.version(), field);
            values[table.size()] = c.isTombstone();
            String key = DeltaEngineSupport.keyText(physicalKey);
            return new Entry(key, r.topic(), r.partition(), r.offset(), r.timestamp(), r.logTime(), c.isTombstone(),
                    RowFactory.create(values), field);
        }

        private int index(String column) {
            for (int n = 0; n < table.size(); n++) {
                if (table.fields()[n].name().equals(column)) {
                    return n;
                }
            }
            return -1;
        }

        private void set(Object[] values, String column, Object value) {
            int i = index(column);
            if (i >= 0) {
                values[i] = value;
            }
        }
    }

    /** Delta Kernel's type for a Spark column type: the physical form of values is Kernel's ({@link DeltaEngineSupport}). */
    static io.delta.kernel.types.DataType kernelType(DataType t) {
        if (t instanceof StringType) {
            return io.delta.kernel.types.StringType.STRING;
        }
        if (t instanceof LongType) {
            return io.delta.kernel.types.LongType.LONG;
        }
        if (t instanceof IntegerType) {
            return io.delta.kernel.types.IntegerType.INTEGER;
        }
        if (t instanceof DoubleType) {
            return io.delta.kernel.types.DoubleType.DOUBLE;
        }
        if (t instanceof FloatType) {
            return io.delta.kernel.types.FloatType.FLOAT;
        }
        if (t instanceof DecimalType d) {
            return new io.delta.kernel.types.DecimalType(d.precision(), d.scale());
        }
        if (t instanceof BooleanType) {
            return io.delta.kernel.types.BooleanType.BOOLEAN;
        }
        if (t instanceof BinaryType) {
            return io.delta.kernel.types.BinaryType.BINARY;
        }
        if (t instanceof TimestampType) {
            return io.delta.kernel.types.TimestampType.TIMESTAMP;
        }
        if (t instanceof TimestampNTZType) {
            return io.delta.kernel.types.TimestampNTZType.TIMESTAMP_NTZ;
        }
        if (t instanceof DateType) {
            return io.delta.kernel.types.DateType.DATE;
        }
        throw new IllegalStateException("kbackfill does not write Delta columns of type " + t.simpleString());
    }

    /** A physical value (Kernel's form) as Spark's external type for the column. */
    static Object spark(Object physical, DataType t) {
        if (physical == null) {
            return null;
        }
        if (t instanceof TimestampType) {
            long micros = (Long) physical;
            return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
        }
        if (t instanceof TimestampNTZType) {
            long micros = (Long) physical;
            return java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                    (int) Math.floorMod(micros, 1_000_000L) * 1000, java.time.ZoneOffset.UTC);
        }
        if (t instanceof DateType) {
            return LocalDate.ofEpochDay((Integer) physical);
        }
        if (t instanceof FloatType) {
            return ((Number) physical).floatValue();
        }
        return physical;
    }
}
