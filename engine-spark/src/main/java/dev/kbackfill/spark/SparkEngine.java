package dev.kbackfill.spark;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.sink.SinkFactory;
import org.apache.spark.sql.SparkSession;

/** The Spark engine's runner: the spec's waves, one MERGE each into Delta, else per-partition sub-jobs. */
final class SparkEngine {

    private SparkEngine() {
    }

    static BackfillJob.Runner runner(SparkSession spark, SparkJobSpec spec) {
        SinkFactory.OnSpark how = SinkFactory.factoryFor(spec.job().sink().url()).onSpark(spec.job().sink());
        if (how instanceof SinkFactory.OnSpark.Refused refused) {
            throw new dev.kbackfill.resolver.RequestException(refused.reason());
        }
        return (settings, sink, state, options, listener) -> how instanceof SinkFactory.OnSpark.DeltaMerge merge
                ? new DeltaWaves(spark, spec, merge.location()).run(settings, sink, state, options, listener)
                : new PartitionWaves(spark, spec).run(settings, sink, state, options, listener);
    }
}
