package dev.kbackfill.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image tarball this build made (docker/target/kbackfill-image.tar), checked without a container runtime:
 * its OCI index, manifest and config are read as a registry would, its layers are unpacked in order into a root
 * file system, and its entry point runs there (a private mount namespace with /dev and /proc, the root changed
 * to the image's, the image's user, working directory and environment), as a container would run it.
 */
@Tag("image")
class ImageIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path TARBALL = Path.of(System.getProperty("image.tar", "target/kbackfill-image.tar"));

    @TempDir
    static Path work;

    private static JsonNode config;
    private static Path root;

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(TARBALL).as("the build makes the image tarball in package").exists();
        Path oci = Files.createDirectories(work.resolve("oci"));
        exec(List.of("tar", "-xf", TARBALL.toString(), "-C", oci.toString()));
        JsonNode index = JSON.readTree(oci.resolve("index.json").toFile());
        assertThat(index.at("/manifests/0/annotations/org.opencontainers.image.ref.name").asText())
                .isEqualTo(System.getProperty("image.name"));
        JsonNode manifest = JSON.readTree(blob(oci, index.at("/manifests/0/digest").asText()).toFile());
        assertThat(manifest.path("mediaType").asText()).isEqualTo("application/vnd.oci.image.manifest.v1+json");
        config = JSON.readTree(blob(oci, manifest.at("/config/digest").asText()).toFile());
        root = Files.createDirectories(work.resolve("rootfs"));
        for (JsonNode layer : manifest.path("layers")) {
            assertThat(layer.path("mediaType").asText()).isEqualTo("application/vnd.oci.image.layer.v1.tar+gzip");
            exec(List.of("tar", "--warning=no-unknown-keyword", "-xzf", blob(oci, layer.path("digest").asText())
                    .toString(), "-C", root.toString()));
        }
        Files.createDirectories(root.resolve("dev"));
        Files.createDirectories(root.resolve("proc"));
    }

    private static Path blob(Path oci, String digest) throws IOException {
        assertThat(digest).startsWith("sha256:");
        Path blob = oci.resolve("blobs/sha256/" + digest.substring("sha256:".length()));
        try (var in = Files.newInputStream(blob)) {
            var sha = java.security.MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                sha.update(buffer, 0, n);
            }
            assertThat("sha256:" + java.util.HexFormat.of().formatHex(sha.digest())).as("content of " + digest)
                    .isEqualTo(digest);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        return blob;
    }

    private record Result(int exitCode, String out, String err) {
    }

    private static Result exec(List<String> command) throws Exception {
        return exec(command, null);
    }

    private static Result exec(List<String> command, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (env != null) {
            pb.environment().clear();
            pb.environment().putAll(env);
        }
        Path out = Files.createTempFile(work, "out", ".txt");
        Path err = Files.createTempFile(work, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(3, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        Result r = new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        if (env == null && r.exitCode != 0) {
            throw new AssertionError(command + " failed: " + r.err);
        }
        return r;
    }

    /** The image's entry point with {@code args}, as a container runtime would start it. */
    private static Result container(String... args) throws Exception {
        return container(Map.of(), args);
    }

    /** The same with {@code extra} added to the image's environment. */
    private static Result container(Map<String, String> extra, String... args) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "running the image's entry point needs root (mount namespace, changed root); CI runs as root");
        JsonNode c = config.path("config");
        String[] user = c.path("User").asText().split(":");
        List<String> command = new ArrayList<>(List.of("/usr/bin/unshare", "-m", "--", "/bin/bash", "-c",
                "root=$1 wd=$2 uid=$3 gid=$4; shift 4; mount --rbind /dev \"$root/dev\" && mount -t proc proc "
                        + "\"$root/proc\" && exec /usr/bin/unshare --root=\"$root\" --wd=\"$wd\" --setuid \"$uid\" "
                        + "--setgid \"$gid\" -- \"$@\"",
                "bash", root.toString(), c.path("WorkingDir").asText(), user[0], user[1]));
        c.path("Entrypoint").forEach(e -> command.add(e.asText()));
        command.addAll(List.of(args));
        Map<String, String> env = new java.util.HashMap<>();
        c.path("Env").forEach(e -> {
            String[] kv = e.asText().split("=", 2);
            env.put(kv[0], kv[1]);
        });
        env.putAll(extra);
        return exec(command, env);
    }

    @Test
    void theImageRunsTheCommandLineAsANonRootUserInADataDirectory() {
        JsonNode c = config.path("config");
        List<String> entrypoint = new ArrayList<>();
        c.path("Entrypoint").forEach(e -> entrypoint.add(e.asText()));
        assertThat(entrypoint).startsWith("java").endsWith("dev.kbackfill.cli.Kbackfill");
        assertThat(c.path("User").asText()).isEqualTo("1000:1000");
        assertThat(c.path("WorkingDir").asText()).isEqualTo("/data");
        assertThat(config.path("architecture").asText()).isEqualTo("amd64");
        assertThat(c.at("/Labels/org.opencontainers.image.version").asText())
                .isEqualTo(System.getProperty("image.name").replaceFirst("^kbackfill:", ""));
    }

    @Test
    void theImageCarriesItsJavaRuntimeAndAWritableDataDirectory() throws IOException {
        assertThat(root.resolve("opt/java/bin/java")).isExecutable();
        assertThat(root.resolve("lib/x86_64-linux-gnu/libpthread.so.0")).as("the SQLite driver's native code needs it")
                .exists();
        PosixFileAttributes data = Files.readAttributes(root.resolve("data"), PosixFileAttributes.class);
        assertThat(data.permissions()).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE);
        assertThat(Files.readString(root.resolve("etc/passwd"))).contains("kbackfill:x:1000:1000");
    }

    @Test
    void theImageRunsTheNewestLongTermSupportJavaItsBuildFoundWithTheOptionsItNeeds() throws IOException {
        String release = Files.readString(root.resolve("opt/java/release"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("JAVA_VERSION=\"(\\d+)").matcher(release);
        assertThat(m.find()).as(release).isTrue();
        int feature = Integer.parseInt(m.group(1));
        assertThat(feature).as("never older than the JDK that built it").isGreaterThanOrEqualTo(Runtime.version().feature());
        assertThat(feature == 17 || (feature >= 21 && (feature - 21) % 4 == 0)).as("a long-term-support release").isTrue();
        List<String> options = Files.readAllLines(root.resolve("opt/java/kbackfill.jvm-options"));
        assertThat(options).isEqualTo(feature >= 24
                ? List.of("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow") : List.of());
        List<String> entrypoint = new ArrayList<>();
        config.at("/config/Entrypoint").forEach(e -> entrypoint.add(e.asText()));
        assertThat(entrypoint).contains("@/opt/java/kbackfill.jvm-options");
    }

    /**
     * The image's JVM runs a backfill with the settings {@code bin/kbackfill} gives one with a heap bound (the
     * image's is the container's): every option the launcher sets on its command line, but for its class-data
     * archive and how to map it, has the same value in the image's JVM.
     */
    @Test
    void theImagesJvmHasTheLaunchersSettingsForABackfillWithAHeapBound() throws Exception {
        Path launcher = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();
        Result own = exec(List.of(launcher.toString(), "run", "--help"), Map.of("PATH", System.getenv("PATH"),
                "KBACKFILL_JAVA_OPTS", "-XX:MaxRAMPercentage=75 -XX:+PrintFlagsFinal"));
        assertThat(own.exitCode()).as(own.err()).isZero();
        Map<String, String> launchers = commandLineFlags(own.out());
        List.of("SharedArchiveFile", "AOTCache", "ArchiveRelocationMode", "UnlockDiagnosticVMOptions", "PrintFlagsFinal")
                .forEach(launchers::remove);
        assertThat(launchers).containsKeys("UseG1GC", "MaxTenuringThreshold", "Tier4InvocationThreshold",
                "FreqInlineSize");
        Result image = container(Map.of("JAVA_TOOL_OPTIONS", "-XX:+PrintFlagsFinal"), "run", "--help");
        assertThat(image.exitCode()).as(image.err()).isZero();
        Map<String, String> images = commandLineFlags(image.out());
        assertThat(images).containsAllEntriesOf(launchers);
    }

    /** The options {@code -XX:+PrintFlagsFinal} says were set on the command line, by name. */
    private static Map<String, String> commandLineFlags(String printed) {
        Map<String, String> flags = new java.util.TreeMap<>();
        printed.lines().filter(l -> l.contains("{command line}")).forEach(l -> {
            String[] cells = l.strip().split("\\s+");
            flags.put(cells[1], cells[3]);
        });
        return flags;
    }

    @Test
    void theLauncherInsideTheImagePrintsItsVersion() throws Exception {
        Result r = container("--version");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out().strip()).isEqualTo(System.getProperty("image.name").replace(':', ' '));
    }

    @Test
    void badInputInsideTheImageIsOneLineAndExitTwo() throws Exception {
        Result r = container("plan", "--topic", "orders", "--from", "tomorrow", "--to", "latest");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err().strip()).startsWith("kbackfill plan: ").contains("'tomorrow'").doesNotContain("\n");
    }

    @Test
    void theDemoRunsEndToEndInsideTheImage() throws Exception {
        Result r = container("demo", "--records", "500");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).as("no JVM warnings on stderr, whatever the runtime").doesNotContain("WARNING:")
                .doesNotContain("[warning]");
        assertThat(r.out()).containsPattern("table demo_orders now holds \\d+ rows");
        Path db = root.resolve("data/kbackfill.db");
        assertThat(db).exists();
        assertThat(Files.getAttribute(db, "unix:uid")).as("written as the image's user").isEqualTo(1000);
        assertThat(new String(Files.readAllBytes(db), 0, 15, StandardCharsets.US_ASCII)).isEqualTo("SQLite format 3");
    }
}
