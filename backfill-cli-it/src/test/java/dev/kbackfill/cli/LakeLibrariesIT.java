package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lake libraries (the Delta and Iceberg sinks, Hadoop, Parquet, the demo's broker) kept off kbackfill.jar's class
 * path, as the packaged command line starts without them and finds them: by the launcher's choice of class path,
 * or added by kbackfill.jar's agent when a command started without them needs them.
 */
@Tag("launcher")
class LakeLibrariesIT {

    private static final Path TARGET = Path.of("..", "backfill-cli", "target").toAbsolutePath().normalize();
    private static final Path JAR = TARGET.resolve("kbackfill.jar");
    private static final Path LAKE = TARGET.resolve("kbackfill-lake.jar");
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void broker() {
        assertThat(JAR).as("run after backfill-cli's package").exists();
        assertThat(LAKE).exists();
        kafka = SharedKafka.get();
    }

    private static Manifest manifest(Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.getManifest();
        }
    }

    /** The jars a manifest's Class-Path names in lib/, by file name. */
    private static Set<String> classPath(Path jar) throws IOException {
        Set<String> names = new TreeSet<>();
        for (String entry : manifest(jar).getMainAttributes().getValue("Class-Path").split(" ")) {
            assertThat(entry).startsWith("lib/");
            assertThat(names.add(entry.substring(4))).as(entry + " named twice").isTrue();
        }
        return names;
    }

    @Test
    void theTwoManifestsNameEveryLibraryOnceAndTheLakesOnlyOnKbackfillLakeJar() throws IOException {
        Set<String> without = classPath(JAR);
        Set<String> lake = classPath(LAKE);
        Set<String> lib = new TreeSet<>();
        try (Stream<Path> files = Files.list(TARGET.resolve("lib"))) {
            files.forEach(f -> lib.add(f.getFileName().toString()));
        }
        assertThat(without).doesNotContainAnyElementsOf(lake);
        Set<String> both = new TreeSet<>(without);
        both.addAll(lake);
        assertThat(both).isEqualTo(lib);
        for (String module : List.of("sink-delta", "sink-iceberg", "sink-lake", "embedded-kafka", "hadoop-client-api",
                "hadoop-client-runtime", "delta-kernel-api", "iceberg-core", "parquet-hadoop", "kafka_2.13",
                "kafka-server", "scala-library")) {
            assertThat(lake).as(module).anyMatch(n -> n.matches(java.util.regex.Pattern.quote(module) + "-\\d.*"));
        }
        assertThat(without).noneMatch(n -> n.matches("(hadoop|delta|iceberg|parquet|scala|kafka_|kafka-server"
                + "|sink-delta|sink-iceberg|sink-lake|embedded-kafka).*"));
        assertThat(without).anyMatch(n -> n.startsWith("sink-jdbc-")).anyMatch(n -> n.startsWith("sink-kafka-"))
                .anyMatch(n -> n.startsWith("sqlite-jdbc-")).anyMatch(n -> n.startsWith("postgresql-"))
                .anyMatch(n -> n.startsWith("kafka-clients-")).anyMatch(n -> n.startsWith("picocli-"));
        assertThat(manifest(JAR).getMainAttributes().getValue("Launcher-Agent-Class"))
                .isEqualTo(LakeLibraries.class.getName());
    }

    /**
     * bin/kbackfill starts a command for a database or Kafka, and plan, with kbackfill.jar alone and its archive;
     * any other command with both jars and the archive dumped with both (a JVM maps one only on its class path).
     */
    @Test
    void aCommandForADatabaseKafkaOrPlanStartsWithoutTheLakeAndAnyOtherWithIt() throws Exception {
        Map<List<String>, Boolean> lakeExpected = new LinkedHashMap<>();
        lakeExpected.put(List.of("run", "--sink", "jdbc:sqlite:x.db", "--help"), false);
        lakeExpected.put(List.of("status", "--sink=jdbc:postgresql://db/app", "--help"), false);
        lakeExpected.put(List.of("run", "--sink", "kafka:orders_latest", "--help"), false);
        lakeExpected.put(List.of("plan", "--help"), false);
        lakeExpected.put(List.of("--version"), false);
        lakeExpected.put(List.of("run", "--sink", "delta:/tmp/t", "--help"), true);
        lakeExpected.put(List.of("compact", "--sink=iceberg:/tmp/t", "--help"), true);
        lakeExpected.put(List.of("run", "--help"), true); // the sink may be in the settings file
        lakeExpected.put(List.of("demo", "--help"), true);
        Map<String, String> env = Map.of("KBACKFILL_JAVA_OPTS", "-XshowSettings:properties -XX:+PrintCommandLineFlags");
        for (Map.Entry<List<String>, Boolean> e : lakeExpected.entrySet()) {
            Launcher.Result r = Launcher.launch(env, e.getKey().toArray(String[]::new));
            assertThat(r.exitCode()).as(e.getKey() + ": " + r.err()).isZero();
            List<Path> expected = e.getValue() ? List.of(JAR, LAKE) : List.of(JAR);
            assertThat(classPathShown(r.err())).as(e.getKey().toString()).isEqualTo(expected);
            String archive = e.getValue() ? "kbackfill-lake.jsa" : "kbackfill.jsa";
            assertThat(java.util.Arrays.stream(r.out().lines().findFirst().orElse("").split(" "))
                    .filter(f -> f.startsWith("-XX:SharedArchiveFile="))
                    .map(f -> Path.of(f.substring("-XX:SharedArchiveFile=".length())).normalize()))
                    .as(e.getKey().toString()).containsExactly(TARGET.resolve(archive));
        }
        Launcher.Result fromEnv = Launcher.launch(Map.of("KBACKFILL_JAVA_OPTS", "-XshowSettings:properties",
                "KBACKFILL_SINK", "jdbc:sqlite:x.db"), "run", "--help");
        assertThat(classPathShown(fromEnv.err())).isEqualTo(List.of(JAR));
    }

    /** java.class.path as {@code -XshowSettings:properties} prints it (one entry per line after the first). */
    private static List<Path> classPathShown(String err) {
        List<Path> entries = new ArrayList<>();
        boolean in = false;
        for (String line : err.lines().toList()) {
            if (line.strip().startsWith("java.class.path = ")) {
                in = true;
                entries.add(Path.of(line.strip().substring("java.class.path = ".length())).normalize());
            } else if (in && !line.contains(" = ") && !line.isBlank()) {
                entries.add(Path.of(line.strip()).normalize());
            } else {
                in = false;
            }
        }
        return entries;
    }

    /** A run into SQLite never loads a class of the lake libraries: they are neither on its class path nor added. */
    @Test
    void aRunIntoSqliteLoadsNoClassOfTheLakeLibraries(@TempDir Path dir) throws Exception {
        kafka.createTopic("lake-none", 1, Map.of());
        Orders.produce(kafka, "lake-none", 10, 5);
        Path loaded = dir.resolve("classes.txt");
        Launcher.Result r = Launcher.launch(Map.of("KBACKFILL_JAVA_OPTS", "-Xlog:class+load=info:file=" + loaded),
                "run", "--topic", "lake-none", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("k.db"), "--table", "orders", "--create-table", "--progress", "none",
                "--bootstrap-server", kafka.bootstrapServers());
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<String> lines = Files.readAllLines(loaded);
        assertThat(lines).anyMatch(l -> l.contains("dev.kbackfill.sink.jdbc.JdbcSinkFactory"));
        Set<String> lake = classPath(LAKE);
        assertThat(lines).noneMatch(l -> lake.stream().anyMatch(jar -> l.contains("lib/" + jar)))
                .noneMatch(l -> l.contains("dev.kbackfill.sink.delta.") || l.contains("org.apache.hadoop."));
    }

    /**
     * {@code java -jar kbackfill.jar} starts with kbackfill.jar's class path alone: a run into a Delta table has the
     * lake libraries added by the jar's agent and writes the table. Started without the agent (-cp), it says in one
     * line how to give them, and writes nothing.
     */
    @Test
    void javaJarAddsTheLakeLibrariesWhenARunNeedsThemAndWithoutItsAgentSaysHow(@TempDir Path dir) throws Exception {
        kafka.createTopic("lake-added", 2, Map.of());
        Orders.produce(kafka, "lake-added", 8, 10); // 80 records
        List<String> run = List.of("run", "--topic", "lake-added", "--from", "earliest", "--to", "latest",
                "--create-table", "--job", "lake", "--progress", "none", "--bootstrap-server", kafka.bootstrapServers());
        List<String> byJar = new ArrayList<>(List.of(JAVA, "-jar", JAR.toString()));
        byJar.addAll(run);
        byJar.addAll(List.of("--sink", "delta:" + dir.resolve("t")));
        Launcher.Result added = Launcher.run(byJar, Map.of());
        assertThat(added.exitCode()).as(added.err()).isZero();
        assertThat(added.out()).contains("total");
        assertThat(dir.resolve("t").resolve("_delta_log")).isDirectory();
        assertThat(Launcher.progress("delta:" + dir.resolve("t"), "lake")).isEqualTo(80);

        List<String> byClassPath = new ArrayList<>(List.of(JAVA, "-cp", JAR.toString(), Kbackfill.class.getName()));
        byClassPath.addAll(run);
        byClassPath.addAll(List.of("--sink", "delta:" + dir.resolve("u")));
        Launcher.Result refused = Launcher.run(byClassPath, Map.of());
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(refused.err().lines()).hasSize(1);
        assertThat(refused.err()).startsWith("kbackfill run: the lake libraries are not on the class path: ")
                .contains("add " + LAKE + " to -cp").doesNotContain("Exception");
        assertThat(dir.resolve("u")).doesNotExist();

        // every library on one class path, as the image starts: nothing to add
        List<String> allOnOne = new ArrayList<>(List.of(JAVA, "-cp", JAR + java.io.File.pathSeparator
                + TARGET.resolve("lib") + "/*", Kbackfill.class.getName()));
        allOnOne.addAll(run);
        allOnOne.addAll(List.of("--sink", "delta:" + dir.resolve("v")));
        Launcher.Result whole = Launcher.run(allOnOne, Map.of());
        assertThat(whole.exitCode()).as(whole.err()).isZero();
        assertThat(Launcher.progress("delta:" + dir.resolve("v"), "lake")).isEqualTo(80);
    }

    /** The demo, started by java -jar, has its broker's libraries (Kafka's server, Scala) added before it starts. */
    @Test
    void theDemoStartedByJavaJarHasItsBrokersLibrariesAdded(@TempDir Path dir) throws Exception {
        Launcher.Result r = Launcher.run(List.of("bash", "-c", "cd \"$1\" && exec \"$2\" -jar \"$3\" demo --records 200",
                "demo", dir.toString(), JAVA, JAR.toString()), Map.of());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).contains("wrote 200 orders").contains("stopping the embedded broker")
                .doesNotContain("Exception");
        assertThat(r.out()).contains("total");
        assertThat(dir.resolve("kbackfill.db")).exists();
    }
}
