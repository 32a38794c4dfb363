package dev.kbackfill.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.JobDecision;
import dev.kbackfill.core.run.JobPlanner;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RangeResolver;
import dev.kbackfill.resolver.RequestException;

/**
 * {@code kbackfill run --engine spark}: decides what the run is (the job's stored state, a fresh plan, or nothing to
 * do) the way the job protocol does, freezes the plan into a {@link SparkJobSpec}, and runs it as a Spark
 * application in a process of its own (Spark is never on this classpath): through {@code $SPARK_HOME/bin/spark-submit}
 * when {@code SPARK_HOME} is set, otherwise through the Spark runtime the build assembles
 * ({@code engine-spark/target/spark-runtime}). The application's output streams through; its exit code is the
 * command's. The driver runs the job protocol again, under the job's lock, with the frozen plan.
 */
public final class SparkLaunch {

    static final String MAIN_CLASS = "dev.kbackfill.spark.SparkBackfill";
    /** Where the engine's jar and runtime are, when not beside this build. */
    static final String DIR_ENV = "KBACKFILL_SPARK_DIR";

    private final EngineOptions options;
    private final List<String> args;
    private final PrintWriter out;
    private final PrintWriter err;

    SparkLaunch(EngineOptions options, List<String> args, PrintWriter out, PrintWriter err) {
        this.options = options;
        this.args = args;
        this.out = out;
        this.err = err;
    }

    /**
     * @param conflict  the sink's conflict mode
     * @param kafkaSink whether the sink is a topic
     */
    int launch(Sink target, BackfillJob.Settings settings, boolean kafkaSink, ConflictMode conflict,
               Supplier<BackfillJob.Cluster> cluster) {
        if (kafkaSink && conflict != ConflictMode.OVERWRITE) {
            throw new RequestException("--engine spark with a topic sink needs --on-conflict overwrite: newer-wins and "
                    + "insert-only consult an index of the whole target topic, which every per-partition task would "
                    + "have to build; run them with --engine local");
        }
        if (!settings.options().limits().isNone()) {
            throw new RequestException("--max-records, --max-duration and the rate limits are not supported with "
                    + "--engine spark yet: cap a Spark run with --spark-wave-partitions and your cluster's resources, "
                    + "or run it with --engine local");
        }
        Path dir = engineDir();
        Path jar = dir.resolve("kbackfill-spark.jar");
        if (!Files.isRegularFile(jar)) {
            throw new CliFailure("the Spark engine is not built (no " + jar + "): run 'mvn -B -q -DskipTests install' "
                    + "in the kbackfill checkout, or set " + DIR_ENV, null);
        }
        target.open();
        String job = settings.name().orElseGet(() -> JobIdentity.defaultName(settings.request(), target.target()));
        target.warnings().forEach(w -> err.println("warning: " + w));
        target.notes().forEach(n -> err.println("note: " + n));
        Optional<JobState> stored = target.load(job);
        Optional<Plan> planFile = settings.planFile();
        JobDecision decision = JobPlanner.decide(job, settings.request(), settings.spec().apply(target.destination()),
                stored, planFile, () -> JobPlanner.freshPlan(new RangeResolver(cluster.get().source()), settings.request(),
                        stored));
        if (decision instanceof JobDecision.AlreadyDone done) {
            RunCommand.printNothingToDo(job, done.state(), settings.request(), target.target(), out);
            return ExitCodes.OK;
        }
        Plan plan = decision.toRun().orElseThrow().plan();
        List<String> driverArgs = new ArrayList<>(EngineOptions.withoutLaunchOptions(args));
        if (!driverArgs.isEmpty() && !driverArgs.get(0).equals("run")) {
            driverArgs.add(0, "run");
        }
        if (!driverArgs.contains("--job") && driverArgs.stream().noneMatch(a -> a.startsWith("--job="))) {
            driverArgs.add("--job");
            driverArgs.add(job);
        }
        int connections = options.maxConnections != null ? options.maxConnections
                : target.target().startsWith("sqlite:") ? 1 : 8;
        SparkJobSpec spec = new SparkJobSpec(job, options.specName(), plan, driverArgs,
                SparkJobSpec.waves(plan, options.wavePartitions), connections);
        target.close(); // the driver opens its own
        try {
            if (options.specOut != null) {
                writeOwnerOnly(options.specOut, spec.toJson());
                out.println("wrote the Spark job spec of job " + job + " to " + options.specOut + "; run it with:");
                out.println(String.join(" ", submitCommand(dir, jar, options.specOut.toAbsolutePath(),
                        Optional.ofNullable(System.getenv("SPARK_HOME")).orElse("$SPARK_HOME"))));
                return ExitCodes.OK;
            }
            Path file = Files.createTempFile("kbackfill-spark-", ".json");
            try {
                writeOwnerOnly(file, spec.toJson());
                err.println("launching job " + job + " on Spark (" + options.master + "), " + spec.waves().size()
                        + " wave(s) of up to " + options.wavePartitions + " partition(s)");
                err.flush();
                return run(command(dir, jar, file));
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new CliFailure("cannot write the Spark job spec: " + e.getMessage(), e);
        }
    }

    /**
     * Writes the spec readable by its owner only: its command line can hold the sink URL's password (the driver and
     * the executors read it from there; Spark has no general way to hand them a secret otherwise). The file is made
     * owner-only before anything is written into it, and an existing file is narrowed first.
     */
    static void writeOwnerOnly(Path file, String text) throws IOException {
        java.util.Set<java.nio.file.attribute.PosixFilePermission> owner =
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------");
        boolean posix = file.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (posix) {
            if (Files.exists(file)) {
                Files.setPosixFilePermissions(file, owner);
            } else {
                Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(owner));
            }
        }
        Files.writeString(file, text);
    }

    /** The command that runs the spec: the user's spark-submit, or Spark's own main class on the built runtime. */
    private List<String> command(Path dir, Path jar, Path spec) {
        String sparkHome = System.getenv("SPARK_HOME");
        if (sparkHome != null && !sparkHome.isBlank()) {
            return submitCommand(dir, jar, spec, sparkHome);
        }
        Path runtime = dir.resolve("spark-runtime");
        if (!Files.isDirectory(runtime)) {
            throw new CliFailure("no Spark to run on: set SPARK_HOME, or build the Spark runtime (" + runtime
                    + ") with 'mvn -B -q -DskipTests install'", null);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-Xmx" + conf("spark.driver.memory").orElse("2g"));
        cmd.addAll(JAVA_17_OPENS);
        cmd.add("-Dlog4j2.configurationFile=" + dir.resolve("spark-log4j2.properties").toUri());
        cmd.add("-cp");
        cmd.add(runtime + "/*");
        cmd.add("org.apache.spark.deploy.SparkSubmit");
        cmd.addAll(submitOptions());
        addApplication(cmd, jar, spec);
        return cmd;
    }

    /**
     * The application and its spec: in cluster mode the driver runs on the cluster, so the spec travels with the
     * application ({@code --files}) and is named by its file name there.
     */
    private void addApplication(List<String> cmd, Path jar, Path spec) {
        boolean cluster = "cluster".equals(options.deployMode);
        if (cluster) {
            cmd.add("--files");
            cmd.add(spec.toString());
        }
        cmd.add("--class");
        cmd.add(MAIN_CLASS);
        cmd.add(jar.toString());
        cmd.add("--spec");
        cmd.add(cluster ? spec.getFileName().toString() : spec.toString());
    }

    private List<String> submitCommand(Path dir, Path jar, Path spec, String sparkHome) {
        List<String> cmd = new ArrayList<>();
        cmd.add(sparkHome + "/bin/spark-submit");
        cmd.addAll(submitOptions());
        // what a Spark distribution lacks: the Kafka source, Delta, and the Kafka client kbackfill is built on
        List<String> extras = new ArrayList<>();
        try (var files = Files.list(dir.resolve("spark-runtime"))) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("delta-") || n.startsWith("spark-sql-kafka") || n.startsWith("spark-token-provider-kafka")
                            || n.startsWith("kafka-clients") || n.startsWith("commons-pool2"))
                    .sorted().forEach(n -> extras.add(dir.resolve("spark-runtime").resolve(n).toString()));
        } catch (IOException e) {
            // without the built runtime, the user's Spark must have them (--packages)
        }
        if (!extras.isEmpty()) {
            cmd.add("--jars");
            cmd.add(String.join(",", extras));
        }
        addApplication(cmd, jar, spec);
        return cmd;
    }

    private List<String> submitOptions() {
        List<String> o = new ArrayList<>(List.of("--master", options.master));
        if (options.deployMode != null) {
            o.add("--deploy-mode");
            o.add(options.deployMode);
        }
        for (String c : options.conf) {
            o.add("--conf");
            o.add(c);
        }
        return o;
    }

    private Optional<String> conf(String key) {
        return options.conf.stream().filter(c -> c.startsWith(key + "=")).map(c -> c.substring(key.length() + 1))
                .reduce((a, b) -> b);
    }

    private boolean started;

    /** Whether the Spark application was started: its driver then wrote the run's report and metrics. */
    boolean started() {
        return started;
    }

    /** Runs the application, its output streamed through, and returns its exit code. */
    private int run(List<String> cmd) {
        Process p;
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd);
            if (options.master.startsWith("local") && System.getenv("SPARK_LOCAL_IP") == null) {
                builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1"); // one machine: no guessing at interfaces
            }
            p = builder.start();
        } catch (IOException e) {
            throw new CliFailure("cannot start Spark (" + cmd.get(0) + "): " + e.getMessage(), e);
        }
        Kbackfill.child = p;
        started = true;
        Thread stop = new Thread(p::destroy, "kbackfill-spark-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        Thread o = pump(p.getInputStream(), out);
        Thread e = pump(p.getErrorStream(), err);
        try {
            int code = p.waitFor();
            o.join();
            e.join();
            return code;
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            p.destroy();
            throw new CliFailure("interrupted while the Spark application ran", ie);
        } finally {
            Kbackfill.child = null;
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException ignored) {
                // shutting down already
            }
        }
    }

    private static Thread pump(InputStream in, PrintWriter to) {
        Thread t = new Thread(() -> {
            try (Reader r = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                char[] buf = new char[8192];
                int n;
                while ((n = r.read(buf)) >= 0) {
                    synchronized (to) {
                        to.write(buf, 0, n);
                        to.flush();
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "kbackfill-spark-output");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** engine-spark/target of the checkout this command line was built in, or {@value #DIR_ENV}. */
    static Path engineDir() {
        String env = System.getenv(DIR_ENV);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        try {
            // backfill-cli/target/kbackfill.jar, or backfill-cli/target/classes
            Path here = Path.of(SparkLaunch.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return here.getParent().getParent().getParent().resolve("engine-spark").resolve("target");
        } catch (URISyntaxException | RuntimeException e) {
            return Path.of("engine-spark", "target");
        }
    }

    /** What Spark needs of the JDK's internals on Java 17 (as Spark's own launcher adds). */
    public static final List<String> JAVA_17_OPENS = List.of("--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED", "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
            "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED", "-Djdk.reflect.useDirectMethodHandle=false");
}
