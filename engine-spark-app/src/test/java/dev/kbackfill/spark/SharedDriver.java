package dev.kbackfill.spark;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.resolver.Wording;
import dev.kbackfill.spark.launch.SparkLaunch;
import org.apache.spark.sql.SparkSession;

/**
 * The engine's driver in the test JVM, on one Spark session shared by a suite's launches on a local master
 * ({@link SparkLaunch#runLocalSpecsInThisJvm}): each launch still writes its spec, which the driver reads back, and
 * reads the driver's events; what it does not prove (the application's own process, its shaded jar, spark-submit,
 * executors of their own, a driver killed) the launches that keep a process of their own do (the local-cluster and
 * spark-submit tests, {@link SparkFaultsIT}'s killed drivers). A launch with another master or other Spark settings
 * (a task retried on {@code local[2,2]}, a fault injected) gets a session of its own, made as its process would make
 * it. Between launches the session is neither active nor the default, so a command line run in between finds no
 * Spark session, as it would in a process of its own.
 */
final class SharedDriver {

    private static SparkSession session;
    /** The master and settings {@link #session} was made with. */
    private static List<String> madeWith = List.of();

    private SharedDriver() {
    }

    /** Installs the shared driver until the returned handle is closed, which also stops its session. */
    static AutoCloseable install() {
        AutoCloseable installed = SparkLaunch.runLocalSpecsInThisJvm(SharedDriver::run);
        return () -> {
            installed.close();
            synchronized (SharedDriver.class) {
                stop();
            }
        };
    }

    private static void stop() {
        if (session != null) {
            session.stop();
            session = null;
        }
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
    }

    private static synchronized int run(Path specFile, String master, List<String> conf, PrintStream out,
                                        PrintStream err) {
        SparkJobSpec spec = SparkJobSpec.read(specFile);
        Wording before = Wording.current();
        Wording.use(spec.wording());
        List<String> wanted = new ArrayList<>(List.of(master));
        wanted.addAll(conf);
        if (session != null && !session.sparkContext().isStopped() && !wanted.equals(madeWith)) {
            stop();
        }
        if (session == null || session.sparkContext().isStopped()) {
            // a test that made a session of its own and stopped it stopped this one's context too
            var builder = SparkSession.builder().config(SparkBackfill.conf(spec)).master(master)
                    .config("spark.ui.enabled", "false");
            for (String setting : conf) {
                int eq = setting.indexOf('=');
                builder.config(setting.substring(0, eq), setting.substring(eq + 1));
            }
            session = builder.getOrCreate();
            madeWith = wanted;
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
