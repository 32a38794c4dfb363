package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The {@code bin/kbackfill} launcher as a user runs it: a separate process on the packaged jar. */
@Tag("launcher")
class LauncherIT {

    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void broker() {
        assertThat(LAUNCHER).isExecutable();
        assertThat(Path.of("..", "backfill-cli", "target", "kbackfill.jar")).as("run after backfill-cli's package")
                .exists();
        kafka = SharedKafka.get();
    }

    private static Launcher.Result launch(String... args) throws IOException, InterruptedException {
        return launch(java.util.Map.of(), args);
    }

    /** The launcher run with {@code env} added to this JVM's environment. */
    private static Launcher.Result launch(java.util.Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        return launch(LAUNCHER, env, args);
    }

    /** {@code launcher} (a copy of bin/kbackfill) run with {@code env} added to this JVM's environment. */
    private static Launcher.Result launch(Path launcher, java.util.Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(launcher.toString());
        command.addAll(List.of(args));
        return Launcher.run(command, env);
    }

    @Test
    void thePlanOfAHandMadeTopicMatchesAdminListOffsets() throws Exception {
        kafka.createTopic("launcher-orders", 4, Map.of());
        for (int p = 0; p < 4; p++) {
            Instant[] times = new Instant[5 + p];
            for (int i = 0; i < times.length; i++) {
                times[i] = T0.plusSeconds(600L * i + p);
            }
            TestTopics.produce(kafka, "launcher-orders", p, times);
        }
        String from = "2024-01-01T00:15Z";
        String to = "2024-01-01T00:45Z";
        Launcher.Result r = launch("plan", "--topic", "launcher-orders", "--from", from, "--to", to, "--format", "json",
                "--bootstrap-server", kafka.bootstrapServers());
        assertThat(r.exitCode()).as(r.err()).isZero();
        Plan plan = Plan.fromJson(r.out());
        assertThat(plan.partitions()).hasSize(4);
        assertThat(plan.partitions()).extracting(PartitionRange::end).containsExactly(5L, 5L, 5L, 5L);
        try (Admin admin = kafka.admin()) {
            for (PartitionRange range : plan.partitions()) {
                TopicPartition tp = new TopicPartition("launcher-orders", range.partition());
                assertThat(range.start()).isEqualTo(listOffset(admin, tp, OffsetSpec.forTimestamp(
                        Instant.parse("2024-01-01T00:15:00Z").toEpochMilli())));
                // Admin answers -1 where no record lies at or after the time; the plan runs to the end, and says so
                long atTo = listOffset(admin, tp, OffsetSpec.forTimestamp(
                        Instant.parse("2024-01-01T00:45:00Z").toEpochMilli()));
                if (atTo == -1) {
                    assertThat(range.end()).isEqualTo(listOffset(admin, tp, OffsetSpec.latest()));
                    assertThat(range.notes()).extracting(n -> n.kind())
                            .containsExactly(dev.kbackfill.resolver.Note.Kind.NO_RECORD_AT_OR_AFTER_TO);
                } else {
                    assertThat(range.end()).isEqualTo(atTo);
                }
            }
            Launcher.Result all = launch("plan", "--topic", "launcher-orders", "--from", "earliest", "--to", "latest",
                    "--format", "json", "--bootstrap-server", kafka.bootstrapServers());
            for (PartitionRange range : Plan.fromJson(all.out()).partitions()) {
                TopicPartition tp = new TopicPartition("launcher-orders", range.partition());
                assertThat(range.start()).isEqualTo(listOffset(admin, tp, OffsetSpec.earliest()));
                assertThat(range.end()).isEqualTo(listOffset(admin, tp, OffsetSpec.latest()));
                assertThat(range.end()).isEqualTo(5 + range.partition());
            }
        }
    }

    private static long listOffset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
        return admin.listOffsets(Map.of(tp, spec), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(tp).get().offset();
    }

    @Test
    void sigtermStopsARunAtABatchBoundaryAndTheRerunResumes(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        kafka.createTopic("launcher-sigterm", 2, Map.of());
        Orders.produce(kafka, "launcher-sigterm", 500, 3); // 1,500 records, read at 250 a second: about 6 s
        String url = "jdbc:sqlite:" + dir.resolve("sigterm.db");
        List<String> command = new ArrayList<>(List.of(LAUNCHER.toString(), "run", "--topic", "launcher-sigterm",
                "--from", "earliest", "--to", "latest", "--sink", url, "--create-table", "--job", "sig", "--batch-size",
                "100", "--max-records-per-second", "250", "--progress", "none", "--bootstrap-server",
                kafka.bootstrapServers()));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(err).contains("starting job sig") && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(1500);
        p.destroy(); // SIGTERM
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String errText = Files.readString(err);
        assertThat(p.exitValue()).as(errText).isEqualTo(143);
        assertThat(errText).contains("SIGTERM: stopping at the next batch boundary")
                .contains("stopped on SIGTERM with").contains("rerun the same command to resume job sig");
        assertThat(Files.readString(out)).contains("PARTITION"); // the summary says where each partition stands
        Launcher.Result rest = launch(command.subList(1, command.size()).toArray(String[]::new));
        assertThat(rest.exitCode()).as(rest.err()).isZero();
        assertThat(rest.err()).contains("resuming job sig");
        assertThat(Orders.table(url, "launcher_sigterm")).hasSize(500);
    }

    /**
     * {@code --timings} on a process of its own: every phase of a run, in order, each ending no earlier than the one
     * before, the launcher first and the command's end last.
     */
    @Test
    void timingsListEveryPhaseOfARunInOrderFromTheProcesssStart(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        kafka.createTopic("launcher-timings", 1, Map.of());
        Orders.produce(kafka, "launcher-timings", 50, 2);
        Launcher.Result r = launch("run", "--topic", "launcher-timings", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("timings.db"), "--table", "t", "--create-table", "--progress", "none",
                "--bootstrap-server", kafka.bootstrapServers(), "--timings");
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<String> phases = List.of("bin/kbackfill to the JVM's start", "JVM start to main", "options parsed", "options checked, job defined",
                "sink opened", "job's state read", "plan resolved, run begun", "first records read",
                "first batch committed", "run ended", "outcome printed", "closed (reader, sink)", "command done");
        List<String> lines = r.err().lines().dropWhile(l -> !l.startsWith("timings (ms from bin/kbackfill's start):"))
                .skip(2).toList();
        assertThat(lines).as(r.err()).hasSize(phases.size());
        long last = 0;
        for (int i = 0; i < phases.size(); i++) {
            assertThat(lines.get(i).strip()).as(r.err()).startsWith(phases.get(i));
            String[] cells = lines.get(i).strip().split("\\s+");
            long at = Long.parseLong(cells[cells.length - 2]);
            assertThat(at).as(lines.get(i)).isGreaterThanOrEqualTo(last);
            last = at;
        }
    }

    /**
     * On a JDK 25, a command whose sink is a database ({@code --sink X}, {@code --sink=X} or {@code KBACKFILL_SINK})
     * and {@code plan} start with the AOT cache made without Delta's classes, any other with the whole one. Checked
     * on a copy of the launcher beside the build's jar and two stand-in caches (a JVM given a cache it cannot map
     * runs without it), so that it runs where the build made no cache (CI skips the training); skipped where no
     * JDK 25 or later is installed.
     */
    @Test
    void onJdk25ACommandIntoADatabaseAndPlanStartWithTheCacheWithoutDelta(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path jdk = jdk25();
        org.junit.jupiter.api.Assumptions.assumeTrue(jdk != null, "no JDK 25 or later under /usr/lib/jvm");
        Path built = Path.of("..", "backfill-cli", "target").toAbsolutePath().normalize();
        Path target = Files.createDirectories(dir.resolve("backfill-cli/target"));
        Files.createSymbolicLink(target.resolve("kbackfill.jar"), built.resolve("kbackfill.jar"));
        Files.createSymbolicLink(target.resolve("kbackfill-lake.jar"), built.resolve("kbackfill-lake.jar"));
        Files.createSymbolicLink(target.resolve("lib"), built.resolve("lib"));
        Path jdbc = target.resolve("kbackfill-jdbc.aot");
        Path whole = target.resolve("kbackfill.aot");
        for (Path cache : List.of(jdbc, whole)) {
            Files.writeString(cache, "a stand-in: the JVM cannot map it and runs without it");
            Files.writeString(Path.of(cache + ".java"), jdk + "\n");
        }
        Path launcher = Files.createDirectories(dir.resolve("bin")).resolve("kbackfill");
        Files.copy(LAUNCHER, launcher, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        Map<String, String> flags = Map.of("JAVA_HOME", jdk.getParent().getParent().toString(),
                "KBACKFILL_JAVA_OPTS", "-XX:+PrintCommandLineFlags");
        Map<List<String>, Path> expected = Map.of(
                List.of("run", "--sink", "jdbc:sqlite:x.db", "--help"), jdbc,
                List.of("run", "--sink=jdbc:postgresql://db/app", "--help"), jdbc,
                List.of("plan", "--help"), jdbc,
                List.of("run", "--sink", "kafka:orders_latest", "--help"), jdbc,
                List.of("run", "--sink", "delta:/tmp/t", "--help"), whole,
                List.of("status", "--sink=iceberg:/tmp/t", "--help"), whole,
                List.of("run", "--help"), whole);
        for (Map.Entry<List<String>, Path> e : expected.entrySet()) {
            assertThat(aotCache(launcher, flags, e.getKey().toArray(String[]::new))).as(e.getKey().toString())
                    .isEqualTo(e.getValue());
        }
        Map<String, String> fromEnv = new java.util.HashMap<>(flags);
        fromEnv.put("KBACKFILL_SINK", "jdbc:sqlite:x.db");
        assertThat(aotCache(launcher, fromEnv, "run", "--help")).isEqualTo(jdbc);
        fromEnv.put("KBACKFILL_SINK", "delta:/tmp/t");
        assertThat(aotCache(launcher, fromEnv, "plan", "--help")).isEqualTo(whole);
        // a training that failed leaves none: the JVM starts without a cache (the whole one was made on the class
        // path with the lake libraries, which this command starts without)
        Files.delete(jdbc);
        assertThat(aotCache(launcher, flags, "run", "--sink", "jdbc:sqlite:x.db", "--help")).isNull();
    }

    /**
     * Where the build made its AOT caches, the JVM can use the one without Delta for a run into SQLite:
     * {@code -XX:AOTMode=on} stops a JVM whose cache does not fit its class path or options.
     */
    @Test
    void aRunIntoSqliteOnJdk25CanUseTheCacheMadeWithoutDelta(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path marker = Path.of("..", "backfill-cli", "target", "kbackfill-jdbc.aot.java");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(marker), "the build made no AOT cache");
        String javaHome = Path.of(Files.readString(marker).strip()).getParent().getParent().toString();
        kafka.createTopic("launcher-aot", 1, Map.of());
        Orders.produce(kafka, "launcher-aot", 50, 2);
        Launcher.Result run = launch(Map.of("JAVA_HOME", javaHome, "KBACKFILL_JAVA_OPTS", "-XX:AOTMode=on"), "run", "--topic",
                "launcher-aot", "--from", "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + dir.resolve("aot.db"),
                "--table", "t", "--create-table", "--progress", "none", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).doesNotContain("AOT", "warning");
    }

    /** A JDK of release 25 or later under /usr/lib/jvm (its bin/java), or null. */
    private static Path jdk25() throws IOException {
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return null;
        }
        try (var homes = Files.list(jvms)) {
            for (Path home : homes.sorted().toList()) {
                Path release = home.resolve("release");
                if (Files.isExecutable(home.resolve("bin/java")) && Files.isRegularFile(release)) {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("JAVA_VERSION=\"(\\d+)")
                            .matcher(Files.readString(release));
                    if (m.find() && Integer.parseInt(m.group(1)) >= 25) {
                        return home.resolve("bin/java").toRealPath();
                    }
                }
            }
        }
        return null;
    }

    /**
     * The AOT cache the JVM {@code launcher} started was given ({@code -XX:+PrintCommandLineFlags} in {@code env}),
     * or null.
     */
    private static Path aotCache(Path launcher, Map<String, String> env, String... args) throws Exception {
        Launcher.Result r = launch(launcher, env, args);
        assertThat(r.exitCode()).as(r.err()).isZero();
        return java.util.Arrays.stream(r.out().lines().findFirst().orElse("").split(" "))
                .filter(f -> f.startsWith("-XX:AOTCache=")).map(f -> Path.of(f.substring(13)).normalize())
                .findFirst().orElse(null);
    }

    @Test
    void versionComesFromTheJarManifest() throws Exception {
        Launcher.Result r = launch("--version");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out().strip()).matches("kbackfill \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    /**
     * A backfill runs on the throughput collector and a short command on the serial one, unless
     * {@code KBACKFILL_JAVA_OPTS} names a collector: then the JVM runs that one (two would stop it at start, as any
     * collector named there once did for {@code plan}, {@code status} and {@code --version}); a backfill given a heap
     * bound there runs on G1, tuned for batches that live until they are written.
     */
    @Test
    void aCollectorNamedInTheJavaOptionsIsTheOneTheJvmRuns() throws Exception {
        for (String[] args : List.of(new String[] {"run", "--help"}, new String[] {"--version"})) {
            String expected = args[0].equals("run") ? "-XX:+UseParallelGC" : "-XX:+UseSerialGC";
            Launcher.Result own = launch(java.util.Map.of("KBACKFILL_JAVA_OPTS", "-XX:+PrintCommandLineFlags"), args);
            assertThat(own.exitCode()).as(own.err()).isZero();
            assertThat(own.out()).contains(expected);
            for (String named : List.of("-XX:+UseG1GC", "-Xmx512m -XX:+UseSerialGC -Xss1m")) {
                Launcher.Result r = launch(java.util.Map.of("KBACKFILL_JAVA_OPTS", named + " -XX:+PrintCommandLineFlags"), args);
                assertThat(r.exitCode()).as(named + ": " + r.err()).isZero();
                String collector = named.contains("G1") ? "-XX:+UseG1GC" : "-XX:+UseSerialGC";
                assertThat(r.out()).as(named).contains(collector);
                assertThat(r.out().lines().filter(l -> l.contains("-XX:"))
                        .flatMap(l -> java.util.Arrays.stream(l.split(" ")))
                        .filter(f -> f.matches("-XX:\\+Use\\w*GC"))).as(named).containsExactly(collector);
            }
        }
        // a backfill given a heap bound runs on G1 (ParallelGC's full collections thrash near one), promoting what
        // survives a young collection at once and marking from three quarters full; the user's own settings win
        Launcher.Result bounded = launch(java.util.Map.of("KBACKFILL_JAVA_OPTS", "-Xmx512m -XX:+PrintCommandLineFlags"),
                "run", "--help");
        assertThat(bounded.exitCode()).as(bounded.err()).isZero();
        assertThat(bounded.out()).contains("-XX:MaxHeapSize=", "-XX:+UseG1GC", "-XX:MaxTenuringThreshold=0",
                "-XX:InitiatingHeapOccupancyPercent=75", "-XX:-G1UseAdaptiveIHOP").doesNotContain("-XX:+UseParallelGC");
        Launcher.Result own = launch(java.util.Map.of("KBACKFILL_JAVA_OPTS",
                "-Xmx512m -XX:MaxTenuringThreshold=4 -XX:+PrintCommandLineFlags"), "run", "--help");
        assertThat(own.exitCode()).as(own.err()).isZero();
        assertThat(own.out()).contains("-XX:MaxTenuringThreshold=4").doesNotContain("-XX:MaxTenuringThreshold=0");
        Launcher.Result serial = launch(java.util.Map.of("KBACKFILL_JAVA_OPTS",
                "-Xmx512m -XX:+UseSerialGC -XX:+PrintCommandLineFlags"), "run", "--help");
        assertThat(serial.exitCode()).as(serial.err()).isZero();
        assertThat(serial.out()).contains("-XX:+UseSerialGC").doesNotContain("-XX:MaxTenuringThreshold=0", "G1");
    }

    @Test
    void badInputExitsTwoWithOneLineAndNoStackTrace() throws Exception {
        Launcher.Result r = launch("plan", "--topic", "orders", "--from", "2024-01-01", "--to", "tomorrow",
                "--bootstrap-server", "127.0.0.1:1");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.err()).startsWith("kbackfill plan: invalid --to 'tomorrow'").doesNotContain("Exception");
    }

    @Test
    void theDemoRunsWithNoServicesAndStopsCleanly() throws Exception {
        Launcher.Result r = launch("demo", "--records", "3000");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("topic orders (id ").contains("PARTITION").contains("total");
        assertThat(r.err()).contains("wrote 3000 orders").contains("stopping the embedded broker")
                .doesNotContain("ERROR").doesNotContain("Exception");
        // a quarter of the day is planned: 3000 records spread evenly, 750 of them from 06:00 to 12:00
        assertThat(r.out().lines().filter(l -> l.startsWith("total")).findFirst().orElseThrow()).contains(" 750 ");
    }
}
