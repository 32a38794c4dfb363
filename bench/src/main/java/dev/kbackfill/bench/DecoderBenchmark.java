package dev.kbackfill.bench;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.record.ColumnMapping;
import dev.kbackfill.core.record.ConfluentAvro;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.RecordFilter;
import dev.kbackfill.core.record.SchemaDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.testservices.ConfluentFraming;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Decode throughput per format (JMH): the same order records as Confluent-framed Avro (with logical types),
 * Protobuf (Timestamp, Confluent's Decimal, google.type.Date), JSON Schema (typed by its schema, with and without
 * validation) and plain JSON (with and without a two-field {@code --where}), each decoded into columns by
 * kbackfill's RecordDecoder; the registry is a local HTTP server, asked once per schema. A score is records per
 * second on one thread. Run with {@code bench/run.sh 0 1 decode} (or {@code org.openjdk.jmh.Main DecoderBenchmark}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
public class DecoderBenchmark {

    /** Records per invocation: distinct records, so that no branch predictor or cache learns one record. */
    static final int RECORDS = 10_000;

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

    @Param({"avro", "protobuf", "json-schema", "json-schema-validated", "json", "json-where"})
    public String format;

    private LocalRegistry registry;
    private SourceRecord[] records;
    private RecordDecoder decoder;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        registry = new LocalRegistry().serve(1, "AVRO", SCHEMA).serve(2, "PROTOBUF", PROTO).serve(3, "JSON", JSON_SCHEMA);
        SchemaRegistryClient client = registry.start();
        Schema schema = new Schema.Parser().parse(SCHEMA);
        records = new SourceRecord[RECORDS];
        for (int i = 0; i < RECORDS; i++) {
            byte[] key = ("order-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value = switch (format) {
                case "avro" -> ConfluentFraming.frame(1, schema, avro(schema, i));
                case "protobuf" -> protobuf(i);
                case "json-schema", "json-schema-validated" -> {
                    byte[] js = json(i);
                    yield java.nio.ByteBuffer.allocate(5 + js.length).put((byte) 0).putInt(3).put(js).array();
                }
                default -> json(i);
            };
            records[i] = new SourceRecord("t", 0, i, 0, key, value, new RecordHeaders());
        }
        decoder = switch (format) {
            case "avro" -> new RecordDecoder(Format.STRING, Format.AVRO, "kafka_key", "value", List.of(),
                    new ConfluentAvro(client));
            case "protobuf" -> new RecordDecoder(Format.STRING, Format.PROTOBUF, "kafka_key", "value", List.of(), null,
                    SchemaDecoder.of(Format.PROTOBUF, client, false), null);
            case "json-schema", "json-schema-validated" -> new RecordDecoder(Format.STRING, Format.JSON_SCHEMA,
                    "kafka_key", "value", List.of(), null,
                    SchemaDecoder.of(Format.JSON_SCHEMA, client, format.endsWith("validated")), null);
            case "json" -> new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
            case "json-where" -> new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of())
                    .withShaping(RecordFilter.compile("value.status == 'paid' && value.items > 3"), ColumnMapping.none());
            default -> throw new IllegalArgumentException(format);
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        registry.close();
        System.out.printf("%n%s: peak RSS of this fork %s%n", format, peakRss());
    }

    /** Decodes every record (kept by {@code --where} or not), as a run does before it reduces. */
    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public void decode(Blackhole out) {
        for (SourceRecord r : records) {
            out.consume(decoder.decodeKept(r));
        }
    }

    private static GenericRecord avro(Schema schema, int i) {
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
        return r;
    }

    private static byte[] json(int i) {
        return String.format(Locale.ROOT, "{\"order_id\":\"order-%d\",\"customer\":\"customer-%d\","
                        + "\"status\":\"paid\",\"amount\":%d.%02d,\"currency\":\"EUR\",\"items\":%d,\"updated_at\":\"%s\","
                        + "\"day\":\"2024-01-01\",\"ref\":\"%s\",\"note\":%s}", i, i % 20000, 10 + i % 900, i % 100,
                1 + i % 9, Instant.parse("2024-01-01T00:00:00Z").plusSeconds(i), new UUID(i, i),
                i % 2 == 0 ? "null" : "\"note\"").getBytes(StandardCharsets.UTF_8);
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
}
