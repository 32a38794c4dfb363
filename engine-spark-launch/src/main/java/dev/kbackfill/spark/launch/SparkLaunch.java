package dev.kbackfill.spark.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;

import dev.kbackfill.core.engine.EngineEvents;
import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.JobRun;
import dev.kbackfill.core.run.JobDecision;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunFailure;
import dev.kbackfill.core.run.RunHandle;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.run.Transient;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.RequestException;

/**
 * The Spark engine's launcher: a job's {@link BackfillJob.Runner} whose run is a Spark application in a process of its
 * own (Spark is never on this classpath), started through {@code $SPARK_HOME/bin/spark-submit} when {@code SPARK_HOME}
 * is set, otherwise through the Spark runtime the build assembles ({@code engine-spark-app/target/spark-runtime}). The job
 * protocol runs in the caller's process, as for a run in it (decide, lock, store the run, check a stored plan against
 * the log); the application is given the job as a value ({@link SparkJobSpec}: the job, its frozen plan, its waves,
 * the run this launch began) and runs exactly that run while the caller holds the job's lock; it reports progress and
 * how the run ended as {@link EngineEvents} on its output, which this runner hands to the run's listener and returns
 * as the run's summary or failure. {@link #writeSpec} decides a run the same way and writes the spec of a run the
 * application's driver begins itself, under the lock, for a {@code spark-submit} of one's own.
 *
 * <p>{@code kbackfill run --engine spark} is this class behind the command line's options; a library caller runs a job
 * with {@link #run}, or gives {@link #runner} to a {@link BackfillJob} of its own as the command line does.
 */
public final class SparkLaunch {

    static final String MAIN_CLASS = "dev.kbackfill.spark.SparkBackfill";
    /** Where the engine's jar and runtime are, when not beside the caller's build. */
    public static final String DIR_ENV = "KBACKFILL_SPARK_DIR";

    /**
     * How the application is launched.
     *
     * @param master         the Spark master: local[N], yarn, k8s://HOST:PORT, spark://..., or local-cluster[W,C,MB]
     * @param deployMode     client (empty: Spark's default) or cluster
     * @param conf           Spark settings, KEY=VALUE
     * @param wavePartitions source partitions per wave (one Delta MERGE, or one stage of per-partition writers)
     * @param maxConnections the most database writers at once (empty: 8, or 1 for SQLite)
     * @param engineDir      where the engine's jar ({@code kbackfill-spark.jar}) and the built runtime
     *                       ({@code spark-runtime}) are: engine-spark-app/target of a build, or {@value #DIR_ENV}
     */
    public record Options(String master, Optional<String> deployMode, List<String> conf, int wavePartitions,
                          OptionalInt maxConnections, Path engineDir) {

        public Options {
            Objects.requireNonNull(master, "master");
            Objects.requireNonNull(deployMode, "deployMode");
            conf = List.copyOf(conf);
            Objects.requireNonNull(maxConnections, "maxConnections");
            Objects.requireNonNull(engineDir, "engineDir");
            if (wavePartitions < 1) {
                throw new RequestException("invalid --spark-wave-partitions '" + wavePartitions
                        + "': expected a whole number >= 1");
            }
            if (maxConnections.isPresent() && maxConnections.getAsInt() < 1) {
                throw new RequestException("invalid --spark-max-connections '" + maxConnections.getAsInt()
                        + "': expected a whole number >= 1");
            }
            if (deployMode.isPresent() && !deployMode.get().equals("client") && !deployMode.get().equals("cluster")) {
                throw new RequestException("invalid --deploy-mode '" + deployMode.get() + "': expected client or cluster");
            }
            for (String c : conf) {
                if (!c.matches("[^=\\s]+=.*")) {
                    throw new RequestException("invalid --conf '" + c + "': expected KEY=VALUE, e.g. "
                            + "spark.executor.memory=4g");
                }
            }
        }

        /** Client mode, no settings of one's own, the default number of database writers. */
        public Options(String master, int wavePartitions, Path engineDir) {
            this(master, Optional.empty(), List.of(), wavePartitions, OptionalInt.empty(), engineDir);
        }

        /** The engine as a job's spec records it: the wave split is part of an unfinished run's shape. */
        public String engineName() {
            return engineName(wavePartitions);
        }

        /** {@link #engineName()} of a split into waves of {@code wavePartitions}. */
        public static String engineName(int wavePartitions) {
            return "spark, " + wavePartitions + " partitions per wave";
        }

        /** {@value #DIR_ENV} if set, else {@code beside}. */
        public static Path engineDir(Path beside) {
            String env = System.getenv(DIR_ENV);
            return env != null && !env.isBlank() ? Path.of(env) : beside;
        }
    }

    private final Options options;
    private final PrintWriter out;
    private final PrintWriter err;
    private final RunHandle runs;

    /**
     * @param out  where the application's output goes (its event lines taken out)
     * @param err  where its error output and the launch's own lines go
     * @param runs the caller's handle: a stop through it destroys the application (its committed waves stay)
     */
    public SparkLaunch(Options options, PrintWriter out, PrintWriter err, RunHandle runs) {
        this.options = Objects.requireNonNull(options, "options");
        this.out = out;
        this.err = err;
        this.runs = runs;
    }

    /**
     * Runs {@code job} on Spark as {@code kbackfill run --engine spark} does: the job protocol here (open the sink, lock
     * the job, load its progress, decide, check a stored plan against the log, begin the run), the run itself in the
     * application, the outcome as a run in this process would return it. A job a run of the command line began resumes
     * here, and the reverse.
     *
     * @throws RequestException              what the engine cannot run, or a stored plan that no longer fits the topic
     * @throws dev.kbackfill.core.sink.JobConflictException the job runs elsewhere, or was created with another spec
     * @throws RunFailure                    the run stopped; the message names where each partition stands
     */
    public BackfillJob.Outcome run(JobDefinition job, BackfillJob.Events events, RunListener listener) {
        JobDefinition onSpark = job.withEngine(options.engineName());
        check(onSpark);
        try (JobRun wired = JobRun.open(onSpark, onSpark.decoder())) {
            BackfillJob protocol = wired.protocol(events, listener, runner(onSpark));
            return runs.during(() -> wired.run(protocol));
        }
    }

    /** Refuses what the engine cannot run, before anything is opened (exit 2). */
    public static void check(JobDefinition job) {
        if (onSpark(job) instanceof SinkFactory.OnSpark.Refused refused) {
            throw new RequestException(refused.reason());
        }
        if (!job.limits().isNone()) {
            throw new RequestException("--max-records, --max-duration and the rate limits are not supported with "
                    + "--engine spark yet: cap a Spark run with --spark-wave-partitions and your cluster's resources, "
                    + "or run it with --engine local");
        }
    }

    /** The engine's jar, which must be built. */
    private Path jar() {
        Path jar = options.engineDir().resolve("kbackfill-spark.jar");
        if (!Files.isRegularFile(jar)) {
            throw new RunFailure("the Spark engine is not built (no " + jar + "): run 'mvn -B -q -DskipTests install' "
                    + "in the kbackfill checkout, or set " + DIR_ENV, null);
        }
        return jar;
    }

    /** How the engine writes the job's sink, as its kind says. */
    private static SinkFactory.OnSpark onSpark(JobDefinition job) {
        return SinkFactory.factoryFor(job.sink().url()).onSpark(job.sink());
    }

    /** The most writers at once: as asked, else as the sink's kind says (one for a SQLite file). */
    private int connections(JobDefinition job) {
        return options.maxConnections().orElse(onSpark(job) instanceof SinkFactory.OnSpark.PartitionTasks t
                ? t.defaultConnections() : 8);
    }

    /** What {@link #writeSpec} did: nothing (the job is done), or the spec written and the command that runs it. */
    public sealed interface Written {
        /** The job's fixed range is complete: nothing to run. */
        record AlreadyDone(JobState state) implements Written {
        }

        /** The spec of job {@code job} is written; {@code command} runs it ({@code $SPARK_HOME} if not set). */
        record Spec(String job, List<String> command) implements Written {
        }
    }

    /**
     * Decides the run as the protocol would (under the lock, nothing stored) and writes to {@code file} the spec of
     * it, for the application's driver to begin under the lock itself.
     */
    public Written writeSpec(BackfillJob protocol, Sink target, JobDefinition job, Path file,
                             Supplier<BackfillJob.Cluster> cluster) {
        Path jar = jar();
        JobDecision decision = protocol.decide(cluster);
        if (decision instanceof JobDecision.AlreadyDone done) {
            return new Written.AlreadyDone(done.state());
        }
        JobState state = decision.toRun().orElseThrow();
        SparkJobSpec spec = new SparkJobSpec(job.withName(state.job()).withPlan(state.plan()),
                SparkJobSpec.waves(state.plan(), options.wavePartitions()), connections(job), Optional.empty());
        try {
            writeOwnerOnly(file, spec.toJson());
        } catch (IOException e) {
            throw new RunFailure("cannot write the Spark job spec: " + e.getMessage(), e);
        }
        return new Written.Spec(state.job(), submitCommand(options.engineDir(), jar, file.toAbsolutePath(),
                Optional.ofNullable(System.getenv("SPARK_HOME")).orElse("$SPARK_HOME")));
    }

    /**
     * The runner of a Spark run: it writes the spec of the run the protocol began (this process holding the job's
     * lock meanwhile), runs the application, and returns the summary it reports; its failure is thrown as the kind
     * it reports (bad input, a job conflict, a runtime failure, transient or not: the protocol retries the last).
     */
    public BackfillJob.Runner runner(JobDefinition job) {
        return (settings, sink, state, runOptions, listener) -> {
            Path jar = jar();
            SparkJobSpec spec = new SparkJobSpec(job.withName(state.job()).withPlan(state.plan()),
                    SparkJobSpec.waves(state.plan(), options.wavePartitions()), connections(job),
                    Optional.of(new SparkJobSpec.Launched(state.run(), state.incarnation(),
                            sink.jobStore().storesStatesHere())));
            try {
                Path file = Files.createTempFile("kbackfill-spark-", ".json");
                try {
                    writeOwnerOnly(file, spec.toJson());
                    err.println("launching job " + state.job() + " on Spark (" + options.master() + "), "
                            + spec.waves().size() + " wave(s) of up to " + options.wavePartitions() + " partition(s)");
                    err.flush();
                    Ended ended = runsHere() ? runHere(file, listener)
                            : run(command(options.engineDir(), jar, file), listener);
                    return outcome(ended, job, state, listener);
                } finally {
                    Files.deleteIfExists(file);
                    deleteLocalClusterHome();
                }
            } catch (IOException e) {
                throw new RunFailure("cannot write the Spark job spec: " + e.getMessage(), e);
            }
        };
    }

    /**
     * How the application said the run ended; if it said nothing, where the sink says the run stands: a success of
     * an application whose driver's output does not come back (cluster deploy mode), or a driver that was killed.
     */
    private static RunSummary outcome(Ended ended, JobDefinition job, JobState began,
                                      dev.kbackfill.core.run.RunListener listener) {
        if (ended.last() instanceof EngineEvents.Done done) {
            return done.summary();
        }
        if (ended.last() instanceof EngineEvents.Failed f) {
            RunSummary partial = f.summary().orElse(null);
            throw switch (f.kind()) {
                case BAD_INPUT -> new RequestException(f.message());
                case CONFLICT -> new dev.kbackfill.core.sink.JobConflictException(f.message());
                case FAILURE -> new RunFailure(f.message(),
                        f.transientFailure() ? new Transient.Reported(f.message()) : null, partial);
            };
        }
        RunSummary standing = standing(job, began);
        if (dev.kbackfill.core.run.StopRequest.requested()) {
            return standing; // stopped on a signal: its committed waves and sub-jobs stay
        }
        if (ended.exitCode() == 0 && standing.left() == 0) {
            listener.onNote("the Spark application's driver did not report to this launch (cluster deploy mode): the "
                    + "run is complete in the sink; its counts are in the driver's output");
            return standing;
        }
        throw new RunFailure("the Spark application exited with code " + ended.exitCode() + " without saying how the "
                + "run ended (see its output above); " + RunFailure.where(standing.partitions().stream()
                .map(PartitionStats::rest).toList()), null, standing);
    }

    /** Where the began run stands in the sink (read afresh: what the application committed), nothing counted. */
    private static RunSummary standing(JobDefinition job, JobState began) {
        JobState now;
        try (dev.kbackfill.core.sink.JobStore jobs = SinkFactory.jobStore(job.sinkSettings())) {
            jobs.openForJobs();
            now = jobs.load(began.job()).filter(s -> s.run() == began.run()).orElse(began);
        }
        List<PartitionStats> partitions = new ArrayList<>();
        for (PartitionRange r : now.plan().partitions()) {
            partitions.add(PartitionStats.untouched(new dev.kbackfill.resolver.PartitionSplit(r.partition(),
                    now.nextOffsets().getOrDefault(r.partition(), r.start()), r.end())));
        }
        return new RunSummary(began.job(), began.run(), partitions, 0, 0, java.time.Duration.ZERO);
    }

    /**
     * Writes the spec readable by its owner only: a sink URL may hold a password (the driver and the executors read
     * it from there; Spark has no general way to hand them a secret otherwise). The file is made owner-only before
     * anything is written into it, and an existing file is narrowed first.
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
            throw new RunFailure("no Spark to run on: set SPARK_HOME, or build the Spark runtime (" + runtime
                    + ") with 'mvn -B -q -DskipTests install'", null);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(driverJvmOptions(conf("spark.driver.memory"), conf("spark.driver.extraJavaOptions")));
        cmd.add("-Dlog4j2.configurationFile=" + dir.resolve("spark-log4j2.properties").toUri());
        cmd.add("-cp");
        cmd.add(runtime + "/*");
        cmd.add("org.apache.spark.deploy.SparkSubmit");
        cmd.addAll(submitOptions());
        localClusterOptions(runtime).forEach(c -> cmd.addAll(List.of("--conf", c)));
        addApplication(cmd, jar, spec);
        return cmd;
    }

    /**
     * The driver's JVM options on the built runtime, where the launch starts the driver's JVM itself (spark-submit's
     * own launcher would otherwise read these two settings): its heap from {@code spark.driver.memory} (2g unless
     * set), Spark's module openings, then {@code spark.driver.extraJavaOptions} split on white space.
     */
    static List<String> driverJvmOptions(Optional<String> memory, Optional<String> extraJavaOptions) {
        List<String> options = new ArrayList<>();
        options.add("-Xmx" + memory.orElse("2g"));
        options.addAll(JAVA_17_OPENS);
        extraJavaOptions.ifPresent(extra -> {
            for (String option : extra.strip().split("\\s+")) {
                if (!option.isEmpty()) {
                    options.add(option);
                }
            }
        });
        return options;
    }

    /** {@code local-cluster[WORKERS,CORES,MB]}: a master and workers in the driver, each executor a JVM of its own. */
    private static final java.util.regex.Pattern LOCAL_CLUSTER =
            java.util.regex.Pattern.compile("local-cluster\\[\\s*(\\d+)\\s*,\\s*(\\d+)\\s*,\\s*(\\d+)\\s*]");

    /** The Spark home made for a local-cluster run on the built runtime, removed when the run ends. */
    private Path localClusterHome;

    /**
     * What a {@code local-cluster} master needs on the built runtime, where no Spark is installed: its workers start
     * executors from a Spark home's jars, so a temporary one points at the runtime (Spark's build layout,
     * {@code assembly/target/scala-2.13/jars}, named by {@code SPARK_HOME} and {@code SPARK_SCALA_VERSION} for the
     * driver only); executors get the driver's module openings, and no more memory than a worker has (else none
     * would ever start).
     */
    private List<String> localClusterOptions(Path runtime) {
        java.util.regex.Matcher m = LOCAL_CLUSTER.matcher(options.master().strip());
        if (!m.matches()) {
            return List.of();
        }
        try {
            localClusterHome = Files.createTempDirectory("kbackfill-spark-home-");
            Path jars = localClusterHome.resolve("assembly/target/scala-2.13/jars");
            Files.createDirectories(jars.getParent());
            Files.createSymbolicLink(jars, runtime.toAbsolutePath());
        } catch (IOException e) {
            throw new RunFailure("cannot prepare the local cluster's Spark home: " + e.getMessage(), e);
        }
        List<String> conf = new ArrayList<>();
        if (conf("spark.executor.extraJavaOptions").isEmpty()) {
            conf.add("spark.executor.extraJavaOptions=" + String.join(" ", JAVA_17_OPENS));
        }
        if (conf("spark.executor.memory").isEmpty()) {
            conf.add("spark.executor.memory=" + m.group(3) + "m");
        }
        return conf;
    }

    /** Removes the local cluster's Spark home: its link to the runtime (never what it points at) and the workers' files. */
    private void deleteLocalClusterHome() {
        if (localClusterHome == null) {
            return;
        }
        try (var paths = Files.walk(localClusterHome)) { // does not follow the link into the runtime
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            err.println("warning: could not remove " + localClusterHome + ": " + e.getMessage());
        }
        localClusterHome = null;
    }

    /**
     * The application and its spec: in cluster mode the driver runs on the cluster, so the spec travels with the
     * application ({@code --files}) and is named by its file name there.
     */
    private void addApplication(List<String> cmd, Path jar, Path spec) {
        boolean cluster = options.deployMode().filter("cluster"::equals).isPresent();
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
        List<String> o = new ArrayList<>(List.of("--master", options.master()));
        options.deployMode().ifPresent(mode -> {
            o.add("--deploy-mode");
            o.add(mode);
        });
        for (String c : options.conf()) {
            o.add("--conf");
            o.add(c);
        }
        return o;
    }

    private Optional<String> conf(String key) {
        return options.conf().stream().filter(c -> c.startsWith(key + "=")).map(c -> c.substring(key.length() + 1))
                .reduce((a, b) -> b);
    }

    /**
     * A driver in the launching JVM, on a Spark session it holds: it runs the spec file as the application's main would
     * (without exiting), on a session with the launch's {@code master} ({@code local[N]} or {@code local[N,F]}) and its
     * Spark settings ({@code KEY=VALUE}, the driver's JVM options left out: this JVM stands for them), writing the
     * application's output and events to {@code out} and its messages to {@code err}, and returns the exit code the
     * application would exit with.
     */
    @FunctionalInterface
    public interface DriverInThisJvm {
        int run(Path spec, String master, List<String> conf, java.io.PrintStream out, java.io.PrintStream err);
    }

    private static volatile DriverInThisJvm inThisJvm;

    /**
     * Runs the specs of launches on a local master ({@code local}, {@code local[N]}, {@code local[*]}, or
     * {@code local[N,F]} with task retries; no spark-submit, no deploy mode) with {@code driver} instead of an
     * application process of its own, until the returned handle is closed. For the engine's own tests, where a
     * process per launch proves nothing a few launches do not: the spec is still written to its file and read back by
     * the driver, and the driver's events read back by the launch line by line.
     */
    public static AutoCloseable runLocalSpecsInThisJvm(DriverInThisJvm driver) {
        inThisJvm = Objects.requireNonNull(driver, "driver");
        return () -> inThisJvm = null;
    }

    private boolean runsHere() {
        String home = System.getenv("SPARK_HOME");
        return inThisJvm != null && options.master().matches("local(\\[(\\d+|\\*)(,\\d+)?])?")
                && options.deployMode().isEmpty() && (home == null || home.isBlank());
    }

    /** The launch's Spark settings a session in this JVM takes: all but the driver JVM's own. */
    private List<String> sessionConf() {
        return options.conf().stream().filter(c -> !c.startsWith("spark.driver.extraJavaOptions=")
                && !c.startsWith("spark.driver.memory=")).toList();
    }

    /** The application run by the driver in this JVM ({@link #runLocalSpecsInThisJvm}), read as a process's would be. */
    private Ended runHere(Path spec, dev.kbackfill.core.run.RunListener listener) {
        java.util.concurrent.atomic.AtomicReference<EngineEvents.Event> last = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.function.Consumer<String> eventLines = eventLines(out, events(listener, last));
        java.util.function.Consumer<String> errLines = line -> {
            synchronized (err) {
                err.println(line);
                err.flush();
            }
        };
        try (Lines o = new Lines(eventLines); Lines e = new Lines(errLines);
             java.io.PrintStream po = new java.io.PrintStream(o, true, StandardCharsets.UTF_8);
             java.io.PrintStream pe = new java.io.PrintStream(e, true, StandardCharsets.UTF_8)) {
            int code = inThisJvm.run(spec, options.master(), sessionConf(), po, pe);
            po.flush();
            pe.flush();
            o.close();
            return new Ended(code, last.get());
        }
    }

    /** An output stream handing each line written to it, in UTF-8, to a consumer; the rest when it is closed. */
    private static final class Lines extends java.io.OutputStream {
        private final java.util.function.Consumer<String> lines;
        private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

        Lines(java.util.function.Consumer<String> lines) {
            this.lines = lines;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                lines.accept(line.toString(StandardCharsets.UTF_8));
                line.reset();
            } else {
                line.write(b);
            }
        }

        @Override
        public synchronized void close() {
            if (line.size() > 0) {
                lines.accept(line.toString(StandardCharsets.UTF_8));
                line.reset();
            }
        }
    }

    /** What the launch does with the application's events: progress and notes to the listener, the rest kept. */
    private static java.util.function.Consumer<EngineEvents.Event> events(dev.kbackfill.core.run.RunListener listener,
            java.util.concurrent.atomic.AtomicReference<EngineEvents.Event> last) {
        return event -> {
            if (event instanceof EngineEvents.Progress pr) {
                listener.onProgress(pr.done(), pr.total(), pr.records(), pr.bytes());
            } else if (event instanceof EngineEvents.Note n) {
                listener.onNote(n.text());
            } else {
                last.set(event);
            }
        };
    }

    /** How the application ended: its exit code and the last event that says how the run ended, if any. */
    private record Ended(int exitCode, EngineEvents.Event last) {
    }

    /**
     * Runs the application, its output streamed through, its events handed to {@code listener} (progress, notes),
     * and returns how it ended.
     */
    private Ended run(List<String> cmd, dev.kbackfill.core.run.RunListener listener) {
        Process p;
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd);
            if (options.master().startsWith("local") && System.getenv("SPARK_LOCAL_IP") == null) {
                builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1"); // one machine: no guessing at interfaces
            }
            if (localClusterHome != null) {
                builder.environment().put("SPARK_HOME", localClusterHome.toString());
                builder.environment().put("SPARK_SCALA_VERSION", "2.13");
            }
            p = builder.start();
        } catch (IOException e) {
            throw new RunFailure("cannot start Spark (" + cmd.get(0) + "): " + e.getMessage(), e);
        }
        RunHandle.Registration passStop = runs.onStop(p::destroy);
        Thread stop = new Thread(p::destroy, "kbackfill-spark-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        java.util.concurrent.atomic.AtomicReference<EngineEvents.Event> last = new java.util.concurrent.atomic.AtomicReference<>();
        Thread o = pumpEvents(p.getInputStream(), eventLines(out, events(listener, last)));
        Thread e = pump(p.getErrorStream(), err);
        try {
            int code = p.waitFor();
            o.join();
            e.join();
            return new Ended(code, last.get());
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            p.destroy();
            throw new RunFailure("interrupted while the Spark application ran", ie);
        } finally {
            passStop.close();
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException ignored) {
                // shutting down already
            }
        }
    }

    /** Passes the application's output through line by line, except its event lines, which go to {@code events}. */
    private static Thread pumpEvents(InputStream in, java.util.function.Consumer<String> lines) {
        Thread t = new Thread(() -> {
            try (java.io.BufferedReader r = new java.io.BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.accept(line);
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "kbackfill-spark-events");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** The application's output line by line: its event lines to {@code events}, the others passed through. */
    private static java.util.function.Consumer<String> eventLines(PrintWriter to,
            java.util.function.Consumer<EngineEvents.Event> events) {
        return line -> {
            Optional<EngineEvents.Event> event = EngineEvents.parse(line);
            if (event.isPresent()) {
                events.accept(event.get());
                return;
            }
            synchronized (to) {
                to.println(line);
                to.flush();
            }
        };
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
