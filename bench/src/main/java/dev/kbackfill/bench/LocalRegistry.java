package dev.kbackfill.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

import com.sun.net.httpserver.HttpServer;
import dev.kbackfill.core.registry.SchemaRegistryClient;

/**
 * A schema registry for benchmarks: a loopback HTTP server answering Confluent's {@code /schemas/ids/ID} for fixed
 * schemas, so that a benchmark measures decoding, not a registry (kbackfill's client asks once per schema id).
 */
final class LocalRegistry implements AutoCloseable {

    private final HttpServer server;

    LocalRegistry() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Serves {@code schema} of {@code type} (AVRO, PROTOBUF, JSON) as schema {@code id}. */
    LocalRegistry serve(int id, String type, String schema) {
        byte[] body = ("{\"schemaType\":\"" + type + "\",\"schema\":\"" + schema.replace("\"", "\\\"")
                .replace("\n", "\\n") + "\"}").getBytes(StandardCharsets.UTF_8);
        server.createContext("/schemas/ids/" + id, ex -> {
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        return this;
    }

    /** Starts answering; returns kbackfill's client of this registry. */
    SchemaRegistryClient start() {
        server.start();
        return new SchemaRegistryClient("http://127.0.0.1:" + server.getAddress().getPort(), Optional.empty(),
                Optional.empty(), Duration.ofSeconds(5));
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
