package dev.kbackfill.spark;

import dev.kbackfill.cli.RunEngine;
import dev.kbackfill.cli.SparkJobSpec;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.resolver.Plan;
import org.apache.spark.sql.SparkSession;

/** The Spark engine under the command line: the spec's frozen plan, and waves as the runner. */
final class SparkEngine implements RunEngine {

    private final SparkSession spark;
    private final SparkJobSpec spec;

    SparkEngine(SparkSession spark, SparkJobSpec spec) {
        this.spark = spark;
        this.spec = spec;
    }

    @Override
    public String name() {
        return spec.engine();
    }

    @Override
    public Plan plan() {
        return spec.plan();
    }

    @Override
    public BackfillJob.Runner runner() {
        return (settings, sink, state, options, listener) -> sink.target().startsWith("delta:")
                ? new DeltaWaves(spark, spec).run(settings, sink, state, options, listener)
                : new PartitionWaves(spark, spec).run(settings, sink, state, options, listener);
    }
}
