package dev.kbackfill.bench;

import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;

import com.sun.net.httpserver.HttpServer;
import dev.kbackfill.core.record.ConfluentAvro;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.testservices.ConfluentFraming;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Decode throughput, side by side: the same order records as Confluent-framed Avro (with logical types) and as
 * JSON, decoded into columns by kbackfill's RecordDecoder in one warm JVM. Usage: {@code DecodeBench [RECORDS]}.
 */
public final class DecodeBench {

    static final String SCHEMA = """
            {"type":"record","name":"Order","fields":[
              {"name":"order_id","type":"string"},{"name":"customer","type":"string"},{"name":"status","type":"string"},
              {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
              {"name":"currency","type":"string"},{"name":"items","type":"int"},
              {"name":"updated_at","type":{"type":"long","logicalType":"timestamp-millis"}},
              {"name":"day","type":{"type":"int","logicalType":"date"}},
              {"name":"ref","type":{"type":"string","logicalType":"uuid"}},
              {"name":"note","type":["null","string"],"default":null}]}""";

    private DecodeBench() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        Schema schema = new Schema.Parser().parse(SCHEMA);
        HttpServer registry = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        byte[] body = ("{\"schema\":\"" + SCHEMA.replace("\"", "\\\"").replace("\n", " ") + "\"}").getBytes(StandardCharsets.UTF_8);
        registry.createContext("/schemas/ids/1", ex -> {
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        registry.start();
        try {
            SourceRecord[] avro = new SourceRecord[n];
            SourceRecord[] json = new SourceRecord[n];
            for (int i = 0; i < n; i++) {
                GenericRecord r = new GenericData.Record(schema);
                r.put("order_id", "order-" + i);
                r.put("customer", "customer-" + (i % 20000));
                r.put("status", "paid");
                r.put("amount", new BigDecimal(String.format(Locale.ROOT, "%d.%02d", 10 + i % 900, i % 100)));
                r.put("currency", "EUR");
                r.put("items", 1 + i % 9);
                r.put("updated_at", Instant.parse("2024-01-01T00:00:00Z").plusSeconds(i));
                r.put("day", LocalDate.parse("2024-01-01"));
                r.put("ref", new UUID(i, i));
                r.put("note", i % 2 == 0 ? null : "note");
                byte[] key = ("order-" + i).getBytes(StandardCharsets.UTF_8);
                avro[i] = new SourceRecord("t", 0, i, 0, key, ConfluentFraming.frame(1, schema, r), new RecordHeaders());
                String js = String.format(Locale.ROOT, "{\"order_id\":\"order-%d\",\"customer\":\"customer-%d\","
                                + "\"status\":\"paid\",\"amount\":%d.%02d,\"currency\":\"EUR\",\"items\":%d,\"updated_at\":\"%s\","
                                + "\"day\":\"2024-01-01\",\"ref\":\"%s\",\"note\":%s}", i, i % 20000, 10 + i % 900, i % 100,
                        1 + i % 9, Instant.parse("2024-01-01T00:00:00Z").plusSeconds(i), new UUID(i, i),
                        i % 2 == 0 ? "null" : "\"note\"");
                json[i] = new SourceRecord("t", 0, i, 0, key, js.getBytes(StandardCharsets.UTF_8), new RecordHeaders());
            }
            RecordDecoder avroDecoder = new RecordDecoder(Format.STRING, Format.AVRO, "kafka_key", "value", List.of(),
                    new ConfluentAvro(new SchemaRegistryClient("http://127.0.0.1:" + registry.getAddress().getPort(),
                            Optional.empty(), Optional.empty(), Duration.ofSeconds(5))));
            RecordDecoder jsonDecoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
            System.out.printf("decode throughput, %d records, warm JVM (3 rounds each, alternating)%n", n);
            System.out.printf("%-6s %-26s %12s%n", "round", "format", "records/s");
            for (int round = 0; round < 4; round++) {
                double a = time(avroDecoder, avro);
                double j = time(jsonDecoder, json);
                if (round > 0) {
                    System.out.printf(Locale.ROOT, "%-6d %-26s %12.0f%n", round, "Avro (Confluent-framed)", n / a);
                    System.out.printf(Locale.ROOT, "%-6d %-26s %12.0f%n", round, "JSON (same fields)", n / j);
                }
            }
        } finally {
            registry.stop(0);
        }
    }

    private static double time(RecordDecoder decoder, SourceRecord[] records) {
        long started = System.nanoTime();
        long sink = 0;
        for (SourceRecord r : records) {
            sink += decoder.decode(r).values().size();
        }
        if (sink == 0) {
            throw new IllegalStateException();
        }
        return (System.nanoTime() - started) / 1e9;
    }
}
