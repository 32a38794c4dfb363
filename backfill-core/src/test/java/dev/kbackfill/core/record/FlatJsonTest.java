package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The quick JSON reader against Jackson: on every document it reads, the same columns (same names in the same order,
 * same value types, decimals with the same scale); on anything it does not read, null, so Jackson decides. Random
 * flat documents, and the same documents broken byte by byte, over many seeds.
 */
class FlatJsonTest {

    private static final SourceRecord RECORD = new SourceRecord("t", 0, 0, 0, null, null, new RecordHeaders());

    /** What Jackson makes of the document, or the exception's class where it refuses it. */
    private static Object jackson(byte[] bytes) {
        try {
            Map<String, Object> columns = RecordDecoder.jsonColumns(RECORD, bytes, 0, bytes.length, "value", "value",
                    new Columns.Builder(), (name, p, t) -> RecordDecoder.value(p, t));
            return List.copyOf(columns.entrySet()).toString() + types(columns);
        } catch (DecodeException e) {
            return DecodeException.class;
        }
    }

    private static Object flat(byte[] bytes, Columns.Builder builder) {
        Map<String, Object> columns = FlatJson.columns(bytes, 0, bytes.length, builder);
        return columns == null ? null : List.copyOf(columns.entrySet()).toString() + types(columns);
    }

    /** Each value's class and, for a decimal, its scale: 1.50 and 1.5 are different columns. */
    private static String types(Map<String, Object> columns) {
        StringBuilder s = new StringBuilder();
        columns.forEach((k, v) -> s.append(' ').append(v == null ? "null" : v.getClass().getSimpleName())
                .append(v instanceof BigDecimal d ? "@" + d.scale() : ""));
        return s.toString();
    }

    @Test
    void everyDocumentTheQuickReaderReadsGivesJacksonsColumnsAndItReadsTheCommonShape() {
        int read = 0;
        int refused = 0;
        for (long seed = 0; seed < 300; seed++) {
            Random random = new Random(seed);
            Columns.Builder builder = new Columns.Builder(); // one per thread, reused as a run reuses it
            for (int d = 0; d < 200; d++) {
                String document = document(random);
                byte[] bytes = document.getBytes(StandardCharsets.UTF_8);
                if (random.nextInt(3) == 0) {
                    bytes = broken(bytes, random);
                }
                Object quick = flat(bytes, builder);
                Object expected = jackson(bytes);
                if (quick == null) {
                    refused++;
                    continue;
                }
                read++;
                assertThat(quick).as("seed %d: %s", seed, new String(bytes, StandardCharsets.ISO_8859_1))
                        .isEqualTo(expected);
            }
        }
        // most unbroken documents are of the shape it exists for; a test where it reads nothing would prove nothing
        assertThat(read).isGreaterThan(10_000);
        assertThat(refused).isGreaterThan(10_000);
    }

    @Test
    void aJsonSchemaDocumentReadQuicklyGetsTheColumnsJacksonsTypedReadingGives() {
        ConfluentJsonSchema.Kind[] kinds = ConfluentJsonSchema.Kind.values();
        int read = 0;
        for (long seed = 0; seed < 300; seed++) {
            Random random = new Random(seed);
            // each field name gets a kind from the schema, or none (any JSON value)
            Map<String, ConfluentJsonSchema.Kind> schema = new java.util.HashMap<>();
            for (String name : NAMES) {
                if (random.nextInt(4) > 0) {
                    schema.put(name, kinds[random.nextInt(kinds.length)]);
                }
            }
            Columns.Builder builder = new Columns.Builder();
            for (int d = 0; d < 200; d++) {
                String document = random.nextInt(4) == 0 ? typedDocument(random, schema) : document(random);
                byte[] bytes = document.getBytes(StandardCharsets.UTF_8);
                if (random.nextInt(4) == 0) {
                    bytes = broken(bytes, random);
                }
                Map<String, Object> quick = ConfluentJsonSchema.quickColumns(bytes, 0, bytes.length, schema, builder);
                if (quick == null) {
                    continue;
                }
                read++;
                Object expected;
                try {
                    Map<String, Object> parsed = ConfluentJsonSchema.parsedColumns(RECORD, bytes, 0, bytes.length,
                            "value", "value", 1, schema, new Columns.Builder());
                    expected = List.copyOf(parsed.entrySet()).toString() + types(parsed);
                } catch (DecodeException e) {
                    expected = DecodeException.class;
                }
                assertThat(List.copyOf(quick.entrySet()).toString() + types(quick))
                        .as("seed %d: %s with %s", seed, new String(bytes, StandardCharsets.ISO_8859_1), schema)
                        .isEqualTo(expected);
            }
        }
        assertThat(read).isGreaterThan(10_000);
    }

    /** A flat document whose fields mostly hold what their kind wants (timestamps, dates, uuids, whole decimals). */
    private static String typedDocument(Random random, Map<String, ConfluentJsonSchema.Kind> schema) {
        StringBuilder s = new StringBuilder("{");
        for (int f = 0; f < 1 + random.nextInt(6); f++) {
            String name = NAMES[random.nextInt(NAMES.length)];
            String v = switch (schema.getOrDefault(name, ConfluentJsonSchema.Kind.ANY)) {
                case TIMESTAMP -> "\"2024-0" + (1 + random.nextInt(9)) + "-1" + random.nextInt(9) + "T10:00:0"
                        + random.nextInt(9) + (random.nextBoolean() ? "Z" : "+02:00") + "\"";
                case DATE -> "\"2024-02-" + (10 + random.nextInt(25)) + "\"";
                case UUID -> "\"" + new java.util.UUID(random.nextLong(), random.nextLong()) + "\"";
                case INTEGER, EPOCH_MILLIS, EPOCH_DAYS, MILLIS_OF_DAY -> List.of("5", "86399999", "86400000", "-1",
                        "1.0", "1.50", "0.0", "9999999999999", "100000000.000").get(random.nextInt(9));
                case BOOLEAN -> random.nextBoolean() ? "true" : "1";
                default -> value(random);
            };
            s.append(f > 0 ? "," : "").append('"').append(name).append("\":").append(v);
        }
        return s.append('}').toString();
    }

    @Test
    void aValueThatRecursAtItsFieldIsOneStringAndOthersAreTheirOwn() {
        Columns.Builder builder = new Columns.Builder();
        List<Map<String, Object>> read = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            // a constant, an id of the same length each time, a value that starts to recur after 200 records
            String document = "{\"currency\":\"EUR\",\"id\":\"order-" + (1000 + i) + "\",\"status\":\""
                    + (i < 200 ? "s" + (1000 + i) : "paid") + "\"}";
            read.add(FlatJson.columns(document.getBytes(StandardCharsets.UTF_8), 0, document.length(), builder));
        }
        for (int i = 1; i < 300; i++) {
            assertThat(read.get(i).get("currency")).isSameAs(read.get(0).get("currency"));
            assertThat(read.get(i).get("id")).isEqualTo("order-" + (1000 + i));
            assertThat(read.get(i).get("status")).isEqualTo(i < 200 ? "s" + (1000 + i) : "paid");
        }
        // after 200 new values in a row the field is compared once in 64 records, so the recurring one is caught
        // within 64 records and shared from then on
        assertThat(read.get(299).get("status")).isSameAs(read.get(264).get("status"));
    }

    @Test
    void numbersKeepTheirTypeAndScale() {
        Columns.Builder builder = new Columns.Builder();
        for (String n : List.of("0", "-0", "7", "-12", "123456789012345678", "0.5", "-0.0", "12.30", "1.000",
                "-999999999999999.999")) {
            byte[] bytes = ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8);
            assertThat(flat(bytes, builder)).as(n).isNotNull().isEqualTo(jackson(bytes));
        }
        // not read here: Jackson decides (a long that does not fit, an exponent, a leading zero, a bare sign)
        for (String n : List.of("1234567890123456789", "1e5", "1.5E-3", "01", "-", "1.", ".5", "+1", "NaN")) {
            assertThat(flat(("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8), builder)).as(n).isNull();
        }
    }

    @Test
    void escapesOtherCharactersAndNestedValuesAreLeftToJackson() {
        Columns.Builder builder = new Columns.Builder();
        for (String doc : List.of("{\"a\":\"x\\\"y\"}", "{\"a\":\"caf\u00e9\"}", "{\"a\":{\"b\":1}}", "{\"a\":[1]}",
                "[1,2]", "\"text\"", "12", "", "   ", "{\"a\":1,}", "{\"a\" 1}", "{'a':1}", "{a:1}",
                "{\"a\":\"tab\there\"}", "\ufeff{\"a\":1}", "{\"a\":1", "{\"a\":tru}", "{\"a\":nulls}")) {
            assertThat(flat(doc.getBytes(StandardCharsets.UTF_8), builder)).as(doc).isNull();
        }
    }

    @Test
    void theMapperCopiesItsUtf8Factory() {
        assertThat(RecordDecoder.JSON.copy().getFactory()).isInstanceOf(Utf8JsonFactory.class);
    }

    @Test
    void whatFollowsTheClosingBraceIsNotReadAsJacksonDoesNot() {
        byte[] bytes = "{\"a\":1} trailing".getBytes(StandardCharsets.UTF_8);
        assertThat(flat(bytes, new Columns.Builder())).isNotNull().isEqualTo(jackson(bytes));
    }

    private static final String[] NAMES = {"id", "order_id", "amount", "status", "a", "", "note", "x y", "id"};

    /** A flat object most of the time; sometimes a value or a whole document of another kind. */
    private static String document(Random random) {
        if (random.nextInt(20) == 0) {
            return List.of("[1]", "\"s\"", "7", "null", "{}", " { } ", "").get(random.nextInt(7));
        }
        StringBuilder s = new StringBuilder(space(random)).append('{');
        int fields = random.nextInt(8);
        for (int f = 0; f < fields; f++) {
            if (f > 0) {
                s.append(space(random)).append(',');
            }
            s.append(space(random)).append('"').append(NAMES[random.nextInt(NAMES.length)]).append('"')
                    .append(space(random)).append(':').append(space(random)).append(value(random));
        }
        return s.append(space(random)).append('}').append(space(random)).toString();
    }

    private static String value(Random random) {
        return switch (random.nextInt(12)) {
            case 0 -> "true";
            case 1 -> "false";
            case 2 -> "null";
            case 3 -> Long.toString(random.nextLong() >> random.nextInt(64));
            case 4 -> (random.nextBoolean() ? "-" : "") + random.nextInt(100_000) + "." + digits(random, 1 + random.nextInt(6));
            case 5 -> digits(random, 1 + random.nextInt(25)); // leading zeros, and longer than a long
            case 6 -> random.nextInt(1000) + (random.nextBoolean() ? "e" : "E") + (random.nextBoolean() ? "-" : "") + random.nextInt(30);
            case 7 -> "\"" + "plain text, 2024-01-01T00:00:00Z".substring(0, random.nextInt(33)) + "\"";
            case 8 -> "\"" + List.of("\\n", "\\\"", "\\u00e9", "\u00e9", "\u20ac", "\t", "~\u007f").get(random.nextInt(7)) + "\"";
            case 9 -> "{\"n\":" + random.nextInt(9) + "}";
            case 10 -> "[" + random.nextInt(9) + ",\"a\"]";
            default -> "\"" + random.nextInt() + "\"";
        };
    }

    private static String digits(Random random, int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append((char) ('0' + random.nextInt(10)));
        }
        return s.toString();
    }

    private static String space(Random random) {
        return List.of("", "", "", " ", "\n", "\t ", "\r\n").get(random.nextInt(7));
    }

    /** The document with one byte dropped, changed, or added, or cut short. */
    private static byte[] broken(byte[] bytes, Random random) {
        if (bytes.length == 0) {
            return new byte[] {'{'};
        }
        int at = random.nextInt(bytes.length);
        List<Byte> out = new ArrayList<>();
        for (byte b : bytes) {
            out.add(b);
        }
        byte[] noise = {'"', ',', ':', '{', '}', '[', '-', '.', '0', '9', 'e', ' ', '\\', 't', 0, (byte) 0xC3};
        switch (random.nextInt(4)) {
            case 0 -> out.remove(at);
            case 1 -> out.set(at, noise[random.nextInt(noise.length)]);
            case 2 -> out.add(at, noise[random.nextInt(noise.length)]);
            default -> out.subList(at, out.size()).clear();
        }
        byte[] result = new byte[out.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = out.get(i);
        }
        return result;
    }
}
