package dev.kbackfill.spark;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.BackfillJob;
import org.apache.spark.sql.SparkSession;

/** The Spark engine's runner: the spec's waves, one MERGE each into Delta, else per-partition sub-jobs. */
final class SparkEngine {

    private SparkEngine() {
    }

    static BackfillJob.Runner runner(SparkSession spark, SparkJobSpec spec) {
        boolean delta = dev.kbackfill.core.sink.SinkUrl.is(spec.job().sink().url(), dev.kbackfill.core.sink.SinkUrl.Delta.class);
        return (settings, sink, state, options, listener) -> delta
                ? new DeltaWaves(spark, spec).run(settings, sink, state, options, listener)
                : new PartitionWaves(spark, spec).run(settings, sink, state, options, listener);
    }
}
