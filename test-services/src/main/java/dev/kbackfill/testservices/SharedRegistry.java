package dev.kbackfill.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One real Confluent-API schema registry per JVM: Apicurio Registry (in-memory storage) from its Maven
 * distribution, on 127.0.0.1 and a free port, started on first use and stopped at exit. Its Confluent API lives
 * under {@code /apis/ccompat/v7}.
 */
public final class SharedRegistry {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\\d+)");
    private static String url;

    private SharedRegistry() {
    }

    /** The Confluent-API base URL, starting the registry on the first call. */
    public static synchronized String url() {
        if (url == null) {
            url = start();
        }
        return url;
    }

    /**
     * Registers an Avro schema under a subject, the way a Confluent serializer does, and returns its id.
     *
     * @param references JSON array text of references ({@code [{"name":..,"subject":..,"version":1}]}), or null
     */
    public static int register(String subject, String avroSchema, String references) {
        return register(subject, "AVRO", avroSchema, references);
    }

    /**
     * Registers a schema of {@code type} ({@code AVRO}, {@code PROTOBUF} or {@code JSON}) under a subject and returns
     * its id.
     *
     * @param references JSON array text of references ({@code [{"name":..,"subject":..,"version":1}]}), or null
     */
    public static int register(String subject, String type, String schema, String references) {
        String body = "{\"schemaType\":\"" + type + "\",\"schema\":" + quote(schema)
                + (references == null ? "" : ",\"references\":" + references) + "}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(url() + "/subjects/"
                        + java.net.URLEncoder.encode(subject, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20")
                        + "/versions"))
                .header("Content-Type", "application/vnd.schemaregistry.v1+json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            Matcher m = ID.matcher(response.body());
            if (response.statusCode() / 100 != 2 || !m.find()) {
                throw new IllegalStateException("registering " + subject + " failed: HTTP " + response.statusCode()
                        + " " + response.body());
            }
            return Integer.parseInt(m.group(1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                default -> sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    private static String start() {
        try {
            Path dir = distribution();
            Path jar = Files.list(dir).filter(p -> p.getFileName().toString().endsWith("-runner.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no Apicurio runner jar in " + dir));
            int port;
            try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            Path log = Files.createTempFile("kbackfill-registry", ".log");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process process = new ProcessBuilder(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-Xmx384m", "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port,
                    "-Dquarkus.log.level=WARN", "-jar", jar.toString()))
                    .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            ServiceProcesses.stopAtExit(process, "shared-registry", 10, () -> { });
            String base = "http://127.0.0.1:" + port + "/apis/ccompat/v7";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (true) {
                try {
                    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/subjects"))
                            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        return base;
                    }
                } catch (IOException e) {
                    // not listening yet
                }
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("the schema registry did not start; its log: " + Files.readString(log));
                }
                Thread.sleep(200);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the schema registry", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the schema registry", e);
        }
    }

    /** Where the build unpacked Apicurio's distribution (see this module's pom). */
    private static Path distribution() throws IOException {
        Properties p = new Properties();
        try (InputStream in = SharedRegistry.class.getResourceAsStream("apicurio.properties")) {
            if (in == null) {
                throw new IllegalStateException("apicurio.properties is missing: build test-services with Maven");
            }
            p.load(in);
        }
        Path dir = Path.of(p.getProperty("apicurio.dir"));
        if (!Files.isDirectory(dir)) {
            throw new IllegalStateException("Apicurio Registry is not unpacked at " + dir + ": run 'mvn install' on test-services");
        }
        return dir;
    }
}
