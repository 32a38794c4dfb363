package dev.kbackfill.cli;

import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.resolver.Plan;

/**
 * An engine that runs {@code kbackfill run}'s command line with its own runner: the Spark driver runs the same
 * command line (same options, same messages, same exit codes) with the plan frozen by the launch and its waves as
 * the runner ({@link Kbackfill#execute(java.io.PrintWriter, java.io.PrintWriter, RunEngine, String...)}).
 */
public interface RunEngine {

    /** The engine as the job's spec records it, e.g. {@code spark, 64 partitions per wave}. */
    String name();

    /** The plan to run, frozen when the run was launched. */
    Plan plan();

    /** Executes the run the job protocol decides on. */
    BackfillJob.Runner runner();
}
