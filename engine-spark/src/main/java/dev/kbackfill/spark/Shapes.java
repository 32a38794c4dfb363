package dev.kbackfill.spark;

import java.io.Serializable;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.RunOptions;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.resolver.PartitionSplit;
import dev.kbackfill.resolver.Plan;
import org.apache.spark.sql.SparkSession;

/**
 * A destination that {@code --create-table} is to create, created by the driver before any task writes: from the
 * columns of every record of the run, decoded by the executors (one extra read of the plan, on a job's first run
 * only), so that tasks writing at once never race to create a table or add a column.
 */
final class Shapes {

    private Shapes() {
    }

    /** Which records a run skips as filtered: outside [from, to) under strict time; tombstones under ignore. */
    record Filters(long fromMillis, long toMillis, boolean ignoreTombstones) implements Serializable {
        static Filters of(Plan plan, RunOptions options, BackfillJob.Settings settings) {
            long from = options.strictTime() ? plan.fromTime().map(java.time.Instant::toEpochMilli).orElse(Long.MIN_VALUE)
                    : Long.MIN_VALUE;
            long to = options.strictTime() ? plan.toTime().map(java.time.Instant::toEpochMilli).orElse(Long.MAX_VALUE)
                    : Long.MAX_VALUE;
            return new Filters(from, to, settings.tombstones() == dev.kbackfill.core.sink.TombstoneMode.IGNORE);
        }

        boolean filters(SourceRecord r) {
            return r.timestamp() < fromMillis || r.timestamp() >= toMillis || (ignoreTombstones && r.value() == null);
        }
    }

    /** Creates the destination if it does not exist yet; the job's state is stored with it. */
    static void createIfAbsent(SparkSession spark, SparkJobSpec spec, Sink sink, JobState state,
                               BackfillJob.Settings settings, RunOptions options) {
        if (sink.destinationExists()) {
            return;
        }
        Plan plan = state.plan();
        Map<Integer, PartitionSplit> ranges = new TreeMap<>();
        for (PartitionSplit rest : state.rest()) {
            if (!rest.done()) {
                ranges.put(rest.partition(), rest);
            }
        }
        RowShape shape = ranges.isEmpty() ? new RowShape(List.of(), List.of())
                : of(spark, spec.toJson(), plan, ranges, settings, options, Filters.of(plan, options, settings));
        if (shape.keyColumns().isEmpty()) {
            return; // nothing to take columns from: the first task with a record creates it
        }
        sink.write(new WriteBatch(state.job(), state.run(), 0, List.of(), shape, Map.of(), plan.topic()));
    }

    /** The columns of the changes of {@code ranges}, computed by the executors. */
    static RowShape of(SparkSession spark, String specJson, Plan plan, Map<Integer, PartitionSplit> ranges,
                       BackfillJob.Settings settings, RunOptions options, Filters filters) {
        int tasks = Math.max(ranges.size(), spark.sparkContext().defaultParallelism());
        return KafkaRanges.read(spark, plan, ranges, settings.kafkaConfig(), options.allowDataLoss(), tasks)
                .javaRDD().mapPartitions(rows -> List.of(accumulate(TaskContextCache.job(specJson).decoder(),
                        new Iterator<SourceRecord>() {
                            @Override
                            public boolean hasNext() {
                                return rows.hasNext();
                            }

                            @Override
                            public SourceRecord next() {
                                return KafkaRanges.record(rows.next());
                            }
                        }, filters)).iterator())
                .reduce(RowShape.Accumulator::merge).shape();
    }

    /**
     * The columns of {@code records} as the decoder makes them, those {@code filters} skip left out (null: none); a
     * record that cannot be decoded is left to the write, which rejects it or fails the run.
     */
    static RowShape.Accumulator accumulate(RecordDecoder decoder, Iterator<SourceRecord> records, Filters filters) {
        RowShape.Accumulator shape = new RowShape.Accumulator();
        while (records.hasNext()) {
            SourceRecord r = records.next();
            if (filters != null && filters.filters(r)) {
                continue;
            }
            try {
                shape.add(decoder.decode(r));
            } catch (DecodeException e) {
                // rejected (or failing the run) when it is written
            }
        }
        return shape;
    }
}
