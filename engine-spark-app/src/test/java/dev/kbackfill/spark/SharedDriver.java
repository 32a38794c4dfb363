package dev.kbackfill.spark;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.resolver.Wording;
import dev.kbackfill.spark.launch.SparkLaunch;
import org.apache.spark.sql.SparkSession;

/**
 * The engine's driver in the test JVM, on one Spark session (local[2]) shared by a suite's launches on a local master
 * ({@link SparkLaunch#runLocalSpecsInThisJvm}): each launch still writes its spec, which the driver reads back, and
 * reads the driver's events; what it does not prove (the application's own process, its shaded jar, spark-submit,
 * executors of their own, a driver killed) the launches that keep a process of their own do (the local-cluster and
 * spark-submit tests, {@link SparkFaultsIT}). Between launches the session is neither active nor the default, so a
 * command line run in between finds no Spark session, as it would in a process of its own.
 */
final class SharedDriver {

    private static SparkSession session;

    private SharedDriver() {
    }

    /** Installs the shared driver until the returned handle is closed, which also stops its session. */
    static AutoCloseable install() {
        AutoCloseable installed = SparkLaunch.runLocalSpecsInThisJvm(SharedDriver::run);
        return () -> {
            installed.close();
            synchronized (SharedDriver.class) {
                if (session != null) {
                    session.stop();
                    session = null;
                }
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        };
    }

    private static synchronized int run(Path specFile, PrintStream out, PrintStream err) {
        SparkJobSpec spec = SparkJobSpec.read(specFile);
        Wording before = Wording.current();
        Wording.use(spec.wording());
        if (session == null || session.sparkContext().isStopped()) {
            // a test that made a session of its own and stopped it stopped this one's context too
            session = SparkSession.builder().config(SparkBackfill.conf(spec)).master("local[2]")
                    .config("spark.ui.enabled", "false").getOrCreate();
        }
        SparkSession.setActiveSession(session);
        SparkSession.setDefaultSession(session);
        PrintStream stderr = System.err;
        System.setErr(err); // what the driver prints to its process's standard error (a wave's line) goes there too
        try {
            return SparkBackfill.run(session, spec, new PrintWriter(out, true), new PrintWriter(err, true));
        } finally {
            System.setErr(stderr);
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
            Wording.use(before);
        }
    }
}
