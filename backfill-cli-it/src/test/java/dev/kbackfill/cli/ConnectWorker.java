package dev.kbackfill.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Kafka Connect worker (Kafka's {@code ConnectStandalone}) as a process of its own, built by the
 * {@code test-connect} module (its Jetty and Jersey stay off this module's classpath), running one sink connector
 * that takes records and lets the worker commit their offsets. Its REST API is at {@link #url()}.
 */
final class ConnectWorker implements AutoCloseable {

    private static final Path MODULE = Path.of("../test-connect").toAbsolutePath().normalize();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final Process process;
    private final Path log;
    private final String url;

    /**
     * @param connector the connector's settings besides its class ({@code name}, {@code topics}, overrides)
     */
    ConnectWorker(String bootstrap, Map<String, String> connector) throws Exception {
        Path dir = Files.createTempDirectory("kbackfill-connect");
        int port;
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        url = "http://127.0.0.1:" + port;
        Files.writeString(dir.resolve("worker.properties"), String.join("\n",
                "bootstrap.servers=" + bootstrap,
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=org.apache.kafka.connect.storage.StringConverter",
                "offset.storage.file.filename=" + dir.resolve("source-offsets"),
                "offset.flush.interval.ms=200",
                "listeners=" + url,
                "plugin.discovery=service_load",
                "connector.client.config.override.policy=All") + "\n");
        List<String> props = new ArrayList<>(List.of("connector.class=dev.kbackfill.testconnect.TakingSinkConnector",
                "tasks.max=1"));
        connector.forEach((k, v) -> props.add(k + "=" + v));
        Files.writeString(dir.resolve("connector.properties"), String.join("\n", props) + "\n");
        String classpath = MODULE.resolve("target/classes") + java.io.File.pathSeparator
                + Files.readString(MODULE.resolve("target/classpath.txt")).strip();
        log = dir.resolve("connect.log");
        process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", classpath, "org.apache.kafka.connect.cli.ConnectStandalone",
                dir.resolve("worker.properties").toString(), dir.resolve("connector.properties").toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    String url() {
        return url;
    }

    /** Waits until {@code check} holds of the body of {@code GET path} (answered with 200), or fails with the log. */
    String await(String path, java.util.function.Predicate<String> check) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        String last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the Connect worker exited: " + tail());
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url + path))
                        .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
                last = r.statusCode() + " " + r.body();
                if (r.statusCode() == 200 && check.test(r.body())) {
                    return r.body();
                }
            } catch (IOException e) {
                last = e.toString(); // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("GET " + path + " did not get there; last answer " + last + "; " + tail());
    }

    /** {@code PUT path}, e.g. KIP-875's {@code /connectors/NAME/stop}. */
    void put(String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url + path))
                .PUT(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException("PUT " + path + ": " + r.statusCode() + " " + r.body());
        }
    }

    private String tail() throws IOException {
        List<String> lines = Files.readAllLines(log);
        return "its log: " + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
