package dev.kbackfill.spark;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.util.LongAccumulator;

/** Per-partition counters filled by the executors' decoding. */
final class WaveCounters implements Serializable {
    private static final long serialVersionUID = 1L;
    final Map<Integer, LongAccumulator> read = new HashMap<>();
    final Map<Integer, LongAccumulator> filtered = new HashMap<>();
    final Map<Integer, LongAccumulator> rejected = new HashMap<>();
    final Map<Integer, LongAccumulator> changes = new HashMap<>();
    /** Records whose log time lies above their own timestamp (their producer's clock ran behind their log). */
    final Map<Integer, LongAccumulator> late = new HashMap<>();
    final LongAccumulator bytes;

    WaveCounters(JavaSparkContext jsc, Iterable<Integer> partitions) {
        for (int p : partitions) {
            read.put(p, jsc.sc().longAccumulator());
            filtered.put(p, jsc.sc().longAccumulator());
            rejected.put(p, jsc.sc().longAccumulator());
            changes.put(p, jsc.sc().longAccumulator());
            late.put(p, jsc.sc().longAccumulator());
        }
        bytes = jsc.sc().longAccumulator();
    }
}
