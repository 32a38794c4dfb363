package dev.kbackfill.core.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;

import dev.kbackfill.core.registry.FakeRegistry;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The quick Avro reader against Avro's generic reader: random record schemas (every scalar type, logical types,
 * enums, fixed, unions, and sometimes a nested field that takes the schema off the quick path), random values, and
 * the same bodies broken byte by byte. For every body, the decoder with the quick reader and the decoder without it
 * give the same columns (names, order, value classes, decimal scales) or refuse it with the same error, and every
 * refusal is a poison record ({@link DecodeException}: an empty decimal, an invalid UUID, a time out of range).
 */
class FlatAvroTest {

    private static final GenericData RAW = new GenericData(); // writes values as they are encoded, no conversions

    @Test
    void theQuickReaderGivesWhatTheGenericReaderGivesOnRandomAndBrokenBodies() throws IOException {
        try (FakeRegistry registry = FakeRegistry.start()) {
            SchemaRegistryClient client = new SchemaRegistryClient(registry.url(), Optional.empty(), Optional.empty(),
                    Duration.ofSeconds(5));
            ConfluentAvro quick = new ConfluentAvro(client);
            ConfluentAvro generic = new ConfluentAvro(client, false);
            Random random = new Random(20261202L);
            int read = 0;
            int compared = 0;
            for (int id = 1; id <= 200; id++) {
                Schema schema = record(random, id);
                registry.schema(id, schema.toString(), null);
                FlatAvro flat = FlatAvro.of(schema, conversions());
                for (int n = 0; n < 150; n++) {
                    byte[] body = body(schema, random);
                    boolean broken = random.nextInt(3) == 0;
                    if (broken) {
                        body = broken(body, random);
                    }
                    byte[] value = ByteBuffer.allocate(5 + body.length).put((byte) 0).putInt(id).put(body).array();
                    SourceRecord record = new SourceRecord("t", 0, n, 0, null, value, new RecordHeaders());
                    Object expected = outcome(generic, record, value);
                    Object actual = outcome(quick, record, value);
                    if (expected instanceof String refusal) { // a refused body is a poison record, never a run failure
                        assertTrue(refusal.startsWith(DecodeException.class.getName()), refusal);
                    }
                    assertEquals(expected, actual, () -> "schema " + schema + ", body " + Arrays.toString(value));
                    compared++;
                    if (flat != null && flat.read(value, 5, new Columns.Builder()) != null) {
                        read++;
                    }
                }
            }
            assertEquals(30_000, compared);
            // the quick path is taken, not only agreed with: most unbroken bodies of flat schemas are its own
            assertTrue(read > 10_000, "the quick reader read only " + read + " bodies");
        }
    }

    @Test
    void aSchemaWithNestedValuesIsLeftToTheGenericReader() {
        Schema nested = new Schema.Parser().parse("""
                {"type":"record","name":"R","fields":[{"name":"a","type":"long"},
                 {"name":"tags","type":{"type":"array","items":"string"}}]}""");
        assertNull(FlatAvro.of(nested, conversions()));
        assertNull(FlatAvro.of(Schema.create(Schema.Type.STRING), conversions()));
    }

    /** What the decoder makes of a value: its columns with their classes, or the error's class and message. */
    private static Object outcome(ConfluentAvro decoder, SourceRecord record, byte[] value) {
        try {
            Map<String, Object> columns = decoder.columns(record, value, "value", "value");
            List<String> described = new ArrayList<>();
            columns.forEach((k, v) -> described.add(k + "=" + describe(v)));
            return described;
        } catch (RuntimeException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    private static String describe(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[] b) {
            return "bytes" + Arrays.toString(b);
        }
        if (v instanceof BigDecimal d) {
            return "decimal " + d.unscaledValue() + "e-" + d.scale();
        }
        if (v instanceof Double d) {
            return "double " + Double.doubleToRawLongBits(d);
        }
        return v.getClass().getSimpleName() + " " + v;
    }

    private static GenericData conversions() {
        GenericData data = new GenericData();
        data.addLogicalTypeConversion(new org.apache.avro.Conversions.DecimalConversion());
        data.addLogicalTypeConversion(new org.apache.avro.Conversions.UUIDConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.DateConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.TimeMillisConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.TimeMicrosConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.TimestampMillisConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.TimestampMicrosConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.LocalTimestampMillisConversion());
        data.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.LocalTimestampMicrosConversion());
        return data;
    }

    private static final String[] SCALARS = {
        "\"null\"", "\"boolean\"", "\"int\"", "\"long\"", "\"float\"", "\"double\"", "\"string\"", "\"bytes\"",
        "{\"type\":\"int\",\"logicalType\":\"date\"}", "{\"type\":\"int\",\"logicalType\":\"time-millis\"}",
        "{\"type\":\"long\",\"logicalType\":\"time-micros\"}", "{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}",
        "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}",
        "{\"type\":\"long\",\"logicalType\":\"local-timestamp-millis\"}",
        "{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}",
        "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\"}",
        "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":12,\"scale\":2}",
        "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":30,\"scale\":0}",
        "{\"type\":\"string\",\"logicalType\":\"uuid\"}", "{\"type\":\"string\",\"logicalType\":\"not-a-type\"}",
        "ENUM", "FIXED", "FIXED_DECIMAL",
    };

    /** A random record schema: mostly scalar fields, some unions, and now and then a nested field. */
    private static Schema record(Random random, int id) {
        StringBuilder fields = new StringBuilder();
        int count = 1 + random.nextInt(12);
        for (int i = 0; i < count; i++) {
            String type;
            int shape = random.nextInt(20);
            if (shape == 0) {
                type = "{\"type\":\"array\",\"items\":\"long\"}";
            } else if (shape < 5) {
                String a = scalar(random, id, i, "u");
                type = a.equals("\"null\"") ? "[\"null\",\"long\",\"string\"]"
                        : random.nextBoolean() ? "[\"null\"," + a + "]" : "[" + a + ",\"null\"]";
            } else {
                type = scalar(random, id, i, "s");
            }
            fields.append(i == 0 ? "" : ",").append("{\"name\":\"f").append(i).append("\",\"type\":").append(type)
                    .append('}');
        }
        return new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"R" + id + "\",\"fields\":[" + fields + "]}");
    }

    private static String scalar(Random random, int id, int field, String tag) {
        String s = SCALARS[random.nextInt(SCALARS.length)];
        return switch (s) {
            case "ENUM" -> "{\"type\":\"enum\",\"name\":\"E" + id + tag + field + "\",\"symbols\":[\"A\",\"B\",\"C\"]}";
            case "FIXED" -> "{\"type\":\"fixed\",\"name\":\"X" + id + tag + field + "\",\"size\":" + (1 + random.nextInt(9)) + "}";
            case "FIXED_DECIMAL" -> { // 1 to 12 bytes, at the most digits each size holds: quick path and not
                int size = 1 + random.nextInt(12);
                int precision = new int[] {2, 4, 6, 9, 11, 14, 16, 18, 21, 23, 26, 28}[size - 1];
                yield "{\"type\":\"fixed\",\"name\":\"D" + id + tag + field + "\",\"size\":" + size
                        + ",\"logicalType\":\"decimal\",\"precision\":" + precision + ",\"scale\":"
                        + random.nextInt(Math.min(precision, 4) + 1) + "}";
            }
            default -> s;
        };
    }

    /** A random value of the schema, written as Avro's binary encoding. */
    private static byte[] body(Schema schema, Random random) throws IOException {
        GenericRecord r = new GenericData.Record(schema);
        for (Schema.Field f : schema.getFields()) {
            r.put(f.pos(), value(f.schema(), random));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(schema, RAW).write(r, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    private static Object value(Schema s, Random random) {
        return switch (s.getType()) {
            case NULL -> null;
            case BOOLEAN -> random.nextBoolean();
            case INT -> random.nextInt(4) == 0 ? random.nextInt() : random.nextInt(20000) - 10000;
            case LONG -> random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(4) == 0 ? 1_700_000_000_000L
                    + random.nextInt() : (long) random.nextInt(1000);
            case FLOAT -> random.nextInt(10) == 0 ? Float.NaN : random.nextFloat() * 1000 - 500;
            case DOUBLE -> random.nextInt(10) == 0 ? Double.NEGATIVE_INFINITY : random.nextGaussian() * 1e6;
            case STRING -> "uuid".equals(s.getProp("logicalType")) && random.nextInt(5) != 0
                    ? UUID.randomUUID().toString() : text(random);
            case BYTES -> {
                byte[] b = new byte[random.nextInt(5) == 0 ? 0 : 1 + random.nextInt(12)];
                random.nextBytes(b);
                yield ByteBuffer.wrap(b);
            }
            case FIXED -> {
                byte[] b = new byte[s.getFixedSize()];
                random.nextBytes(b);
                yield new GenericData.Fixed(s, b);
            }
            case ENUM -> new GenericData.EnumSymbol(s, s.getEnumSymbols().get(random.nextInt(3)));
            case UNION -> {
                Schema branch = s.getTypes().get(random.nextInt(s.getTypes().size()));
                yield value(branch, random);
            }
            case ARRAY -> List.of(random.nextLong(), 7L);
            default -> throw new IllegalArgumentException(s.toString());
        };
    }

    private static String text(Random random) {
        String[] pieces = {"a", "order-17", "é", "日本", "\u0000", "x y", "😀", "\"", "", "1234567890"};
        StringBuilder sb = new StringBuilder();
        int n = random.nextInt(6);
        for (int i = 0; i < n; i++) {
            sb.append(pieces[random.nextInt(pieces.length)]);
        }
        return new String(sb.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    }

    /** The body cut short, lengthened, or with a byte changed. */
    private static byte[] broken(byte[] body, Random random) {
        return switch (random.nextInt(3)) {
            case 0 -> Arrays.copyOf(body, body.length == 0 ? 0 : random.nextInt(body.length));
            case 1 -> {
                byte[] longer = Arrays.copyOf(body, body.length + 1 + random.nextInt(4));
                for (int i = body.length; i < longer.length; i++) {
                    longer[i] = (byte) random.nextInt(256);
                }
                yield longer;
            }
            default -> {
                byte[] changed = body.clone();
                if (changed.length > 0) {
                    changed[random.nextInt(changed.length)] = (byte) random.nextInt(256);
                }
                yield changed;
            }
        };
    }
}
