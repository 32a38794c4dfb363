package dev.kbackfill.spark;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;

import dev.kbackfill.core.engine.EngineEvents;
import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.JobRun;
import dev.kbackfill.core.run.JobDecision;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.RunFailure;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.run.RunText;
import dev.kbackfill.core.run.Transient;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.resolver.RequestException;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark application: {@code spark-submit --class dev.kbackfill.spark.SparkBackfill kbackfill-spark.jar --spec
 * FILE}. It builds everything from the spec's job ({@link JobDefinition}), never from a command line, and writes
 * wave by wave ({@link DeltaWaves}, {@link PartitionWaves}):
 * <ul>
 *   <li>launched by {@code kbackfill run --engine spark}, which holds the job's lock and began the run: it runs
 *       exactly that run ({@link BackfillJob#runLaunched}) and reports progress and how it ended as
 *       {@link EngineEvents} on its output, from which the launch prints, reports and picks the exit code;</li>
 *   <li>from a spec written by {@code --spark-spec-out}: it runs the job protocol itself (lock, stored state, plan
 *       check) with the spec's frozen plan, prints the run's summary line besides the events, and exits 0 done, 1
 *       failure, 2 bad input, 3 job conflict, as the command line does.</li>
 * </ul>
 */
public final class SparkBackfill {

    private SparkBackfill() {
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        if (args.length != 2 || !args[0].equals("--spec")) {
            err.println("kbackfill-spark: expected --spec FILE (written by 'kbackfill run --engine spark "
                    + "--spark-spec-out FILE')");
            System.exit(2);
        }
        SparkJobSpec spec;
        try {
            spec = SparkJobSpec.read(Path.of(args[1]));
            dev.kbackfill.resolver.Wording.use(spec.wording());
        } catch (RequestException e) {
            out.println(EngineEvents.failed(EngineEvents.Kind.BAD_INPUT, e.getMessage(), false, null));
            err.println("kbackfill-spark: " + e.getMessage());
            System.exit(2);
            return;
        }
        SparkSession spark = SparkSession.builder().config(conf(spec)).getOrCreate();
        int code;
        try {
            code = run(spark, spec, out, err);
        } finally {
            spark.stop();
        }
        System.exit(code);
    }

    /** Runs the spec's job on {@code spark}; returns the exit code. */
    static int run(SparkSession spark, SparkJobSpec spec, PrintWriter out, PrintWriter err) {
        JobDefinition job = spec.job();
        boolean launched = spec.launched().isPresent();
        try {
            try (JobRun wired = launched ? JobRun.openDecided(job, job.decoder()) : JobRun.open(job, job.decoder())) {
                Sink sink = wired.sink();
                BackfillJob protocol = wired.protocol(launched ? BackfillJob.Events.NONE : events(err, sink),
                        listener(out), SparkEngine.runner(spark, spec));
                BackfillJob.Outcome outcome;
                if (launched) {
                    SparkJobSpec.Launched l = spec.launched().get();
                    outcome = protocol.runLaunched(spec.name(), l.run(), l.incarnation(), l.stored());
                } else {
                    outcome = wired.run(protocol);
                }
                if (outcome instanceof BackfillJob.Outcome.NothingToDo nothing) {
                    out.println(RunText.nothingToDo(nothing.job(), nothing.state(), job.request(), sink.target()));
                    return 0;
                }
                RunSummary summary = ((BackfillJob.Outcome.Completed) outcome).summary();
                out.println(EngineEvents.done(summary));
                if (!launched) {
                    out.println(RunText.headline(summary, sink.target()));
                }
                return 0;
            }
        } catch (RuntimeException e) {
            EngineEvents.Kind kind = EngineEvents.kindOf(e);
            String message = oneLine(String.valueOf(e.getMessage()));
            out.println(EngineEvents.failed(kind, message, Transient.is(e), e instanceof RunFailure f ? f.summary() : null));
            if (!launched) {
                err.println("kbackfill-spark: " + message);
            }
            if (System.getenv("KBACKFILL_DEBUG") != null) {
                e.printStackTrace(err);
            }
            return switch (kind) {
                case BAD_INPUT -> 2;
                case CONFLICT -> 3;
                case FAILURE -> 1;
            };
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** Progress and notes as events, for the launch (or whoever reads the driver's output). */
    private static RunListener listener(PrintWriter out) {
        return new RunListener() {
            @Override
            public void onProgress(long done, long total, long records, long bytes) {
                out.println(EngineEvents.progress(done, total, records, bytes));
            }

            @Override
            public void onNote(String note) {
                out.println(EngineEvents.note(note));
            }
        };
    }

    /** What a driver run on its own says about the protocol's decisions, for people. */
    private static BackfillJob.Events events(PrintWriter err, Sink sink) {
        return new BackfillJob.Events() {
            @Override
            public void opened(String job, List<String> warnings) {
                warnings.forEach(w -> err.println("warning: " + w));
            }

            @Override
            public void noted(String job, List<String> notes) {
                notes.forEach(n -> err.println("note: " + n));
            }

            @Override
            public void starting(JobDecision decision, JobState state) {
                err.println((decision instanceof JobDecision.Resume ? "resuming" : "starting") + " job " + state.job()
                        + " run " + state.run() + ": " + state.remaining() + " offsets left of "
                        + state.plan().totalSpan() + " into " + sink.target());
            }
        };
    }

    private static String oneLine(String message) {
        return message.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    /** The session's settings: what spark-submit was given, then what kbackfill needs unless given. */
    static SparkConf conf(SparkJobSpec spec) {
        SparkConf conf = new SparkConf();
        conf.setIfMissing("spark.app.name", "kbackfill " + spec.name());
        conf.setIfMissing("spark.master", "local[*]");
        conf.setIfMissing("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension");
        conf.setIfMissing("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog");
        conf.setIfMissing("spark.sql.datetime.java8API.enabled", "true");
        conf.setIfMissing("spark.sql.session.timeZone", "UTC");
        // a first Delta read takes minutes on a small machine otherwise (FACTS.md)
        conf.setIfMissing("spark.databricks.delta.snapshotPartitions", "2");
        conf.setIfMissing("spark.ui.showConsoleProgress", "false");
        conf.setIfMissing("spark.sql.debug.maxToStringFields", "1000");
        conf.setIfMissing("spark.sql.shuffle.partitions", "8");
        return conf;
    }
}
