package dev.kbackfill.sink.iceberg;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Iceberg REST catalog on 127.0.0.1 for a test: Iceberg's own REST servlet and adapter over a JDBC catalog
 * (SQLite) whose warehouse is a local directory or an {@code s3a://} bucket, run by the {@code test-rest-catalog}
 * module as a process of its own (its Iceberg, 1.10, is not this module's). Clients reach it as
 * {@code iceberg:rest:}{@link #uri()}.
 */
final class LoopbackRestCatalog implements AutoCloseable {

    private static final Path MODULE = Path.of("../../test-rest-catalog").toAbsolutePath().normalize();

    private final Process process;
    private final int port;

    /**
     * @param catalogDb the backend's SQLite file
     * @param warehouse where tables are created
     * @param hadoop    the backend's filesystem settings (S3A's endpoint and credentials for a bucket)
     */
    LoopbackRestCatalog(String catalogDb, String warehouse, Map<String, String> hadoop) throws Exception {
        List<String> entries = new ArrayList<>(List.of(Files.readString(MODULE.resolve("target/classpath.txt")).strip()
                .split(java.io.File.pathSeparator)));
        // Iceberg's test jar carries a copy of an S3A class of an older Hadoop: hadoop-aws's must come first
        entries.sort(java.util.Comparator.comparing(e -> e.endsWith("-tests.jar")));
        entries.add(0, MODULE.resolve("target/classes").toString());
        String classpath = String.join(java.io.File.pathSeparator, entries);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-cp", classpath, "dev.kbackfill.restcatalog.RestCatalogProcess", catalogDb,
                warehouse));
        hadoop.forEach((k, v) -> command.add(k + "=" + v));
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String line = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
        if (line == null || !line.startsWith("READY ")) {
            process.destroyForcibly();
            throw new IllegalStateException("the REST catalog did not start: " + line);
        }
        port = Integer.parseInt(line.substring("READY ".length()).strip());
    }

    /** The catalog's base URI. */
    String uri() {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() throws Exception {
        process.getOutputStream().close();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
