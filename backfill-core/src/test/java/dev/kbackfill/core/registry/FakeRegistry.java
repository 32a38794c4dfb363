package dev.kbackfill.core.registry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.sun.net.httpserver.HttpServer;

/** An in-process HTTP server answering canned registry responses by raw path; records every request. */
public final class FakeRegistry implements AutoCloseable {

    public record Answer(int status, String body) {
    }

    private final HttpServer server;
    public final Map<String, Answer> answers = new ConcurrentHashMap<>();
    public final List<String> requests = new ArrayList<>();
    public final List<String> authorizations = new ArrayList<>();

    /** A registry started for a test field initialiser (where a checked exception cannot be thrown). */
    public static FakeRegistry start() {
        try {
            return new FakeRegistry();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    public FakeRegistry() throws IOException {
        this(null);
    }

    /** A registry served over HTTPS with {@code tls}'s certificate (a null context: plain HTTP). */
    public FakeRegistry(javax.net.ssl.SSLContext tls) throws IOException {
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        if (tls == null) {
            server = HttpServer.create(address, 0);
        } else {
            com.sun.net.httpserver.HttpsServer https = com.sun.net.httpserver.HttpsServer.create(address, 0);
            https.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(tls));
            server = https;
        }
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getRawPath();
            synchronized (requests) {
                requests.add(path);
                authorizations.add(exchange.getRequestHeaders().getFirst("Authorization"));
            }
            Answer a = answers.getOrDefault(path, new Answer(404,
                    "{\"error_code\":40401,\"message\":\"Subject not found\"}"));
            byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/vnd.schemaregistry.v1+json");
            exchange.sendResponseHeaders(a.status(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    public String url() {
        return (server instanceof com.sun.net.httpserver.HttpsServer ? "https" : "http") + "://localhost:"
                + server.getAddress().getPort();
    }

    /** Serves {@code schema} (Avro JSON) as schema id {@code id}, with optional references JSON. */
    public void schema(int id, String schema, String references) {
        answers.put("/schemas/ids/" + id, new Answer(200, "{\"schema\":" + quote(schema)
                + (references == null ? "" : ",\"references\":" + references) + "}"));
    }

    /** Serves a schema of {@code type} (AVRO, PROTOBUF, JSON) as schema id {@code id}, with optional references JSON. */
    public void schema(int id, String type, String schema, String references) {
        answers.put("/schemas/ids/" + id, new Answer(200, "{\"schemaType\":\"" + type + "\",\"schema\":" + quote(schema)
                + (references == null ? "" : ",\"references\":" + references) + "}"));
    }

    /** Serves a schema as version {@code version} of {@code subject}, as a reference is fetched. */
    public void version(String subject, int version, String type, String schema) {
        answers.put("/subjects/" + subject + "/versions/" + version, new Answer(200, "{\"subject\":\"" + subject
                + "\",\"version\":" + version + ",\"schemaType\":\"" + type + "\",\"schema\":" + quote(schema) + "}"));
    }

    public static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
