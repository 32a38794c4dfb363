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
import dev.kbackfill.core.record.SchemaDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.testservices.ConfluentFraming;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Decode throughput, side by side: the same order records as Confluent-framed Avro (with logical types), Protobuf
 * (Timestamp, Confluent's Decimal, google.type.Date), JSON Schema (typed by its schema, with and without validation)
 * and plain JSON, decoded into columns by kbackfill's RecordDecoder in one warm JVM, with the process's peak RSS.
 * Usage: {@code DecodeBench [RECORDS]}.
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

    static final String PROTO = """
            syntax = "proto3";
            import "google/protobuf/timestamp.proto";
            import "confluent/type/decimal.proto";
            import "google/type/date.proto";
            message Order {
              string order_id = 1; string customer = 2; string status = 3; confluent.type.Decimal amount = 4;
              string currency = 5; int32 items = 6; google.protobuf.Timestamp updated_at = 7; google.type.Date day = 8;
              string ref = 9; optional string note = 10;
            }""";

    static final String JSON_SCHEMA = """
            {"type":"object","properties":{"order_id":{"type":"string"},"customer":{"type":"string"},
             "status":{"type":"string","enum":["new","paid"]},"amount":{"type":"number","minimum":0},
             "currency":{"type":"string"},"items":{"type":"integer"},
             "updated_at":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},
             "ref":{"type":"string","format":"uuid"},"note":{"type":["string","null"]}},
             "required":["order_id","amount"]}""";

    private DecodeBench() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        Schema schema = new Schema.Parser().parse(SCHEMA);
        HttpServer registry = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        serve(registry, 1, "AVRO", SCHEMA);
        serve(registry, 2, "PROTOBUF", PROTO);
        serve(registry, 3, "JSON", JSON_SCHEMA);
        registry.start();
        try {
            SourceRecord[] avro = new SourceRecord[n];
            SourceRecord[] json = new SourceRecord[n];
            SourceRecord[] protobuf = new SourceRecord[n];
            SourceRecord[] jsonSchema = new SourceRecord[n];
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
                byte[] js3 = js.getBytes(StandardCharsets.UTF_8);
                jsonSchema[i] = new SourceRecord("t", 0, i, 0, key, java.nio.ByteBuffer.allocate(5 + js3.length)
                        .put((byte) 0).putInt(3).put(js3).array(), new RecordHeaders());
                protobuf[i] = new SourceRecord("t", 0, i, 0, key, protobuf(i), new RecordHeaders());
            }
            RecordDecoder avroDecoder = new RecordDecoder(Format.STRING, Format.AVRO, "kafka_key", "value", List.of(),
                    new ConfluentAvro(new SchemaRegistryClient("http://127.0.0.1:" + registry.getAddress().getPort(),
                            Optional.empty(), Optional.empty(), Duration.ofSeconds(5))));
            RecordDecoder jsonDecoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
            SchemaRegistryClient client = new SchemaRegistryClient("http://127.0.0.1:" + registry.getAddress().getPort(),
                    Optional.empty(), Optional.empty(), Duration.ofSeconds(5));
            RecordDecoder protobufDecoder = new RecordDecoder(Format.STRING, Format.PROTOBUF, "kafka_key", "value",
                    List.of(), null, SchemaDecoder.of(Format.PROTOBUF, client, false), null);
            RecordDecoder jsonSchemaDecoder = new RecordDecoder(Format.STRING, Format.JSON_SCHEMA, "kafka_key", "value",
                    List.of(), null, SchemaDecoder.of(Format.JSON_SCHEMA, client, false), null);
            RecordDecoder validatingDecoder = new RecordDecoder(Format.STRING, Format.JSON_SCHEMA, "kafka_key", "value",
                    List.of(), null, SchemaDecoder.of(Format.JSON_SCHEMA, client, true), null);
            RecordDecoder filteringDecoder = jsonDecoder.withShaping(dev.kbackfill.core.record.RecordFilter.compile(
                    "value.status == 'paid' && value.items > 3"), dev.kbackfill.core.record.ColumnMapping.none());
            System.out.printf("decode throughput, %d records, warm JVM (3 rounds each, alternating)%n", n);
            System.out.printf("%-6s %-34s %12s%n", "round", "format", "records/s");
            for (int round = 0; round < 4; round++) {
                double a = time(avroDecoder, avro);
                double p = time(protobufDecoder, protobuf);
                double s = time(jsonSchemaDecoder, jsonSchema);
                double v = time(validatingDecoder, jsonSchema);
                double j = time(jsonDecoder, json);
                double w = timeKept(filteringDecoder, json);
                if (round > 0) {
                    System.out.printf(Locale.ROOT, "%-6d %-34s %12.0f%n", round, "Avro (Confluent-framed)", n / a);
                    System.out.printf(Locale.ROOT, "%-6d %-34s %12.0f%n", round, "Protobuf (Confluent-framed)", n / p);
                    System.out.printf(Locale.ROOT, "%-6d %-34s %12.0f%n", round, "JSON Schema (typed by schema)", n / s);
                    System.out.printf(Locale.ROOT, "%-6d %-34s %12.0f%n", round, "JSON Schema, --validate", n / v);
                    System.out.printf(Locale.ROOT, "%-6d %-34s %12.0f%n", round, "JSON (same fields)", n / j);
                    System.out.printf(Locale.ROOT, "%-6d %-34s %12.0f%n", round, "JSON, --where on two fields", n / w);
                }
            }
            System.out.printf(Locale.ROOT, "peak RSS %s (-Xmx %d MB; the records themselves are held in memory)%n",
                    peakRss(), Runtime.getRuntime().maxMemory() >> 20);
        } finally {
            registry.stop(0);
        }
    }

    private static void serve(HttpServer registry, int id, String type, String schema) {
        byte[] body = ("{\"schemaType\":\"" + type + "\",\"schema\":\"" + schema.replace("\"", "\\\"")
                .replace("\n", "\\n") + "\"}").getBytes(StandardCharsets.UTF_8);
        registry.createContext("/schemas/ids/" + id, ex -> {
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
    }

    /** Order {@code i} in Confluent's Protobuf framing (message indexes [0]), written field by field. */
    private static byte[] protobuf(int i) {
        BigDecimal amount = new BigDecimal(String.format(Locale.ROOT, "%d.%02d", 10 + i % 900, i % 100));
        long seconds = Instant.parse("2024-01-01T00:00:00Z").getEpochSecond() + i;
        return ConfluentFraming.protobuf(2, new int[] {0}, ConfluentFraming.protobufMessage(out -> {
            out.writeString(1, "order-" + i);
            out.writeString(2, "customer-" + (i % 20000));
            out.writeString(3, "paid");
            out.writeByteArray(4, ConfluentFraming.protobufMessage(d -> {
                d.writeByteArray(1, amount.unscaledValue().toByteArray());
                d.writeInt32(3, 2);
            }));
            out.writeString(5, "EUR");
            out.writeInt32(6, 1 + i % 9);
            out.writeByteArray(7, ConfluentFraming.protobufMessage(t -> t.writeInt64(1, seconds)));
            out.writeByteArray(8, ConfluentFraming.protobufMessage(d -> {
                d.writeInt32(1, 2024);
                d.writeInt32(2, 1);
                d.writeInt32(3, 1);
            }));
            out.writeString(9, new UUID(i, i).toString());
            if (i % 2 != 0) {
                out.writeString(10, "note");
            }
        }));
    }

    static String peakRss() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return line.substring(6).strip();
                }
            }
        } catch (java.io.IOException e) {
            // not Linux
        }
        return "unknown";
    }

    private static double timeKept(RecordDecoder decoder, SourceRecord[] records) {
        long started = System.nanoTime();
        long kept = 0;
        for (SourceRecord r : records) {
            kept += decoder.decodeKept(r).isPresent() ? 1 : 0;
        }
        if (kept == 0) {
            throw new IllegalStateException();
        }
        return (System.nanoTime() - started) / 1e9;
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
