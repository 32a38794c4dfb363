package dev.kbackfill.spark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.PartitionSplit;
import dev.kbackfill.resolver.Plan;
import org.apache.spark.sql.SparkSession;

/**
 * The run of both Spark engines' writers, wave by wave: what is left of each wave's partitions is handed to the
 * writer (one Delta MERGE, or one stage of per-partition sub-jobs), then the job's own progress moves past the wave
 * in the sink ({@code status} follows the waves, a rerun skips them), and the run's counts add up. A wave the writer
 * could not place (a Delta table that does not exist yet and nothing in the wave to create it from) is read again
 * with the next one.
 */
final class WaveLoop {

    /** How one engine writes a wave. */
    interface Writer {
        /**
         * What is left to write of {@code partitions} (the wave's, and any carried from the wave before), given the
         * job's progress {@code current}; empty when an earlier attempt of this run wrote them all.
         */
        Map<Integer, PartitionSplit> ranges(List<Integer> partitions, JobState current);

        /** Writes wave {@code wave} (numbered from 1) of {@code ranges}, committed when this returns. */
        Written write(int wave, Map<Integer, PartitionSplit> ranges, JobState current);
    }

    /**
     * What a wave wrote.
     *
     * @param stats   per partition, the wave's counts (its partitions stand at their ranges' ends)
     * @param bytes   bytes of keys and values read (0 when the writer does not count them)
     * @param batches commits made (a MERGE, or the sub-jobs' batches)
     * @param carried whether nothing could be written and the wave's partitions go to the next wave instead
     */
    record Written(Map<Integer, PartitionStats> stats, long bytes, long batches, boolean carried) {

        /** A wave an earlier attempt of this run committed: nothing counted again. */
        static final Written EARLIER = new Written(Map.of(), 0, 0, false);

        /** A wave that could not be placed: read again with the next. */
        static final Written CARRY = new Written(Map.of(), 0, 0, true);

        long records() {
            return stats.values().stream().mapToLong(PartitionStats::read).sum();
        }
    }

    private WaveLoop() {
    }

    static RunSummary run(SparkSession spark, SparkJobSpec spec, Sink sink, JobState state, RunListener listener,
                          Writer writer) {
        long started = System.nanoTime();
        Plan plan = state.plan();
        Map<Integer, PartitionStats> stats = new TreeMap<>();
        long total = state.remaining();
        long records = 0;
        long bytes = 0;
        long batches = 0;
        JobState current = state;
        int wave = 0;
        List<Integer> carried = new ArrayList<>();
        for (List<Integer> waveParts : spec.waves()) {
            wave++;
            List<Integer> partitions = new ArrayList<>(carried);
            partitions.addAll(waveParts);
            Map<Integer, PartitionSplit> ranges = writer.ranges(partitions, current);
            if (ranges.isEmpty()) {
                continue;
            }
            Written written = writer.write(wave, ranges, current);
            if (written.carried() && wave < spec.waves().size()) {
                System.err.println("wave " + wave + " holds no values to create the table from: its partitions are "
                        + "read again with wave " + (wave + 1));
                carried = partitions;
                continue;
            }
            carried = new ArrayList<>();
            if (written != Written.EARLIER) {
                Faults.haltAt(spark, "write:" + wave);
            }
            written.stats().forEach((p, s) -> stats.merge(p, s, PartitionStats::plus));
            records += written.records();
            bytes += written.bytes();
            batches += written.batches();
            Map<Integer, Long> ends = new TreeMap<>();
            ranges.keySet().forEach(p -> ends.put(p, plan.partition(p).orElseThrow().end()));
            sink.write(new WriteBatch(state.job(), current.run(), wave, List.of(), new RowShape(List.of(), List.of()),
                    ends, plan.topic()));
            current = current.advancedTo(ends);
            Faults.haltAt(spark, "wave:" + wave);
            listener.onProgress(total - current.remaining(), total, records, bytes);
        }
        List<PartitionStats> list = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            list.add(stats.getOrDefault(r.partition(), PartitionStats.untouched(current.rest(r))));
        }
        return new RunSummary(state.job(), current.run(), list, bytes, batches,
                Duration.ofNanos(System.nanoTime() - started));
    }
}
