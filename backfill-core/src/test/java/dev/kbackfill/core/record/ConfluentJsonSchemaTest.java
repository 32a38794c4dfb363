package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import dev.kbackfill.core.registry.FakeRegistry;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConfluentJsonSchemaTest {

    static final String ORDER = """
            {"$schema":"http://json-schema.org/draft-07/schema#","title":"Order","type":"object",
             "properties":{
              "id":{"type":"string","format":"uuid"},
              "qty":{"type":"integer"},
              "price":{"type":"number"},
              "paid":{"type":"boolean"},
              "placed_at":{"type":"string","format":"date-time"},
              "day":{"type":"string","format":"date"},
              "note":{"type":["string","null"]},
              "customer":{"$ref":"customer.json"},
              "lines":{"type":"array","items":{"type":"string"}},
              "ts":{"type":"integer","title":"org.apache.kafka.connect.data.Timestamp","connect.type":"int64"},
              "size":{"$ref":"#/definitions/size"}
             },
             "required":["id","qty"],
             "definitions":{"size":{"type":"integer","minimum":0}}}""";
    static final String CUSTOMER = """
            {"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}""";
    static final String REFS = "[{\"name\":\"customer.json\",\"subject\":\"customer-json\",\"version\":1}]";

    private final FakeRegistry registry = FakeRegistry.start();
    private final SchemaRegistryClient client = new SchemaRegistryClient(registry.url(), Optional.empty(),
            Optional.empty(), Duration.ofSeconds(5));

    @AfterEach
    void stop() {
        registry.close();
    }

    static byte[] framed(int id, String json) {
        return dev.kbackfill.testservices.ConfluentFraming.jsonSchema(id, json);
    }

    private static Map<String, Object> decode(ConfluentJsonSchema d, byte[] framed) {
        return d.columns(new SourceRecord("orders", 2, 5, 0, "k".getBytes(), framed, new RecordHeaders()), framed,
                "value", "value");
    }

    private void serve() {
        registry.schema(9, "JSON", ORDER, REFS);
        registry.version("customer-json", 1, "JSON", CUSTOMER);
    }

    @Test
    void aDateIsReadAsLocalDateParseReadsIt() {
        java.util.Random random = new java.util.Random(7);
        String chars = "0123456789-+ x";
        for (int n = 0; n < 200_000; n++) {
            String s;
            if (random.nextBoolean()) { // mostly well-formed, some impossible dates (month 13, February 30)
                s = String.format(java.util.Locale.ROOT, "%04d-%02d-%02d", random.nextInt(10_000), random.nextInt(14),
                        random.nextInt(33));
            } else {
                StringBuilder b = new StringBuilder();
                for (int k = 0; k < 8 + random.nextInt(5); k++) {
                    b.append(chars.charAt(random.nextInt(chars.length())));
                }
                s = b.toString();
            }
            Object expected;
            try {
                expected = java.time.LocalDate.parse(s);
            } catch (java.time.DateTimeException e) {
                expected = "invalid";
            }
            Object actual;
            try {
                actual = ConfluentJsonSchema.date(s);
            } catch (java.time.DateTimeException e) {
                actual = "invalid";
            }
            org.assertj.core.api.Assertions.assertThat(actual).as(s).isEqualTo(expected);
        }
    }

    @Test
    void propertiesAreTypedByTheSchema() {
        serve();
        Map<String, Object> c = decode(new ConfluentJsonSchema(client, false), framed(9, """
                {"id":"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11","qty":3.0,"price":10,"paid":true,
                 "placed_at":"2024-01-01T10:15:30.123+01:00","day":"2024-01-02","note":null,
                 "customer":{"name":"Ann"},"lines":["a"],"ts":1704103530123,"size":5,"extra":1.5,"n":7}"""));
        assertThat(c.get("id")).isEqualTo(UUID.fromString("6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11"));
        assertThat(c.get("qty")).as("1.0 is an integer in JSON Schema").isEqualTo(3L);
        assertThat(c.get("price")).as("a number is exact, even when written whole").isEqualTo(new BigDecimal("10"));
        assertThat(c.get("paid")).isEqualTo(true);
        assertThat(c.get("placed_at")).isEqualTo(Instant.parse("2024-01-01T09:15:30.123Z"));
        assertThat(c.get("day")).isEqualTo(LocalDate.parse("2024-01-02"));
        assertThat(c).containsEntry("note", null);
        assertThat(c.get("customer")).isEqualTo(new JsonText("{\"name\":\"Ann\"}"));
        assertThat(c.get("lines")).isEqualTo(new JsonText("[\"a\"]"));
        assertThat(c.get("ts")).as("Connect's Timestamp").isEqualTo(Instant.ofEpochMilli(1704103530123L));
        assertThat(c.get("size")).as("through a local $ref").isEqualTo(5L);
        assertThat(c.get("extra")).as("not in the schema: plain JSON").isEqualTo(new BigDecimal("1.5"));
        assertThat(c.get("n")).isEqualTo(7L);
        assertThat(RowShape.of(List.of(new Change(Map.of("k", "k"), c, 0, 0, 0))).valueColumns())
                .extracting(Column::type).containsExactly(ColumnType.UUID, ColumnType.LONG, ColumnType.DECIMAL,
                        ColumnType.BOOLEAN, ColumnType.TIMESTAMP, ColumnType.DATE, ColumnType.STRING, ColumnType.JSON,
                        ColumnType.JSON, ColumnType.TIMESTAMP, ColumnType.LONG, ColumnType.DECIMAL, ColumnType.LONG);
    }

    @Test
    void aValueOfAnotherTypeThanItsSchemaSaysIsAPoisonRecord() {
        serve();
        ConfluentJsonSchema d = new ConfluentJsonSchema(client, false);
        assertThatThrownBy(() -> decode(d, framed(9, "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\",\"qty\":\"three\"}")))
                .isInstanceOf(DecodeException.class)
                .hasMessage("orders/2@5: the value's field 'qty' is \"three\", not an integer as schema id 9 says");
        assertThatThrownBy(() -> decode(d, framed(9, "{\"placed_at\":\"yesterday\"}")))
                .isInstanceOf(DecodeException.class)
                .hasMessage("orders/2@5: the value's field 'placed_at' is \"yesterday\", not a date-time string as "
                        + "schema id 9 says");
        assertThatThrownBy(() -> decode(d, framed(9, "{\"qty\":1.5}"))).isInstanceOf(DecodeException.class)
                .hasMessageContaining("field 'qty' is 1.5, not an integer");
        assertThatThrownBy(() -> decode(d, framed(9, "{\"qty\":"))).isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@5: the value is not JSON: ");
        registry.schema(10, "PROTOBUF", "syntax = \"proto3\"; message A {}", null);
        assertThatThrownBy(() -> decode(d, framed(10, "{}"))).isInstanceOf(DecodeException.class)
                .hasMessage("orders/2@5: the value names schema id 10: schema id 10 is Protobuf, not JSON Schema");
    }

    @Test
    void validationMakesRecordsThatBreakTheSchemaPoisonReferencesIncluded() {
        serve();
        String negative = "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\",\"qty\":1,\"size\":-1}";
        String nameless = "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\",\"qty\":1,\"customer\":{}}";
        String missing = "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\"}";
        ConfluentJsonSchema lenient = new ConfluentJsonSchema(client, false);
        assertThat(decode(lenient, framed(9, negative))).containsEntry("size", -1L);
        assertThat(decode(lenient, framed(9, nameless))).containsEntry("customer", new JsonText("{}"));
        ConfluentJsonSchema strict = new ConfluentJsonSchema(client, true);
        assertThat(strict.validates()).isTrue();
        assertThatThrownBy(() -> decode(strict, framed(9, negative))).isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@5: the value does not match schema id 9: ")
                .hasMessageContaining("size").hasMessageContaining("0");
        assertThatThrownBy(() -> decode(strict, framed(9, nameless))).as("the reference is checked too")
                .isInstanceOf(DecodeException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> decode(strict, framed(9, missing))).isInstanceOf(DecodeException.class)
                .hasMessageContaining("qty");
        assertThat(decode(strict, framed(9, "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\",\"qty\":2,"
                + "\"customer\":{\"name\":\"A\"}}"))).containsEntry("qty", 2L);
    }

    @Test
    void aReferenceOutsideTheRegistryIsNeverFetched() {
        registry.schema(12, "JSON", "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":"
                + "\"https://schemas.example.invalid/a.json\"}}}", null);
        ConfluentJsonSchema lenient = new ConfluentJsonSchema(client, false);
        assertThat(decode(lenient, framed(12, "{\"a\":{\"b\":1}}"))).as("typed as plain JSON")
                .containsEntry("a", new JsonText("{\"b\":1}"));
        ConfluentJsonSchema strict = new ConfluentJsonSchema(client, true);
        assertThatThrownBy(() -> decode(strict, framed(12, "{\"a\":{\"b\":1}}"))).isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@5: the value cannot be validated against schema id 12: ")
                .hasMessageContaining("https://schemas.example.invalid/a.json")
                .hasMessageEndingWith("(a $ref resolves only to the schema's references in the registry; nothing is "
                        + "fetched from elsewhere)");
    }

    @Test
    void aScalarDocumentIsOneColumn() {
        registry.schema(11, "JSON", "{\"type\":\"string\"}", null);
        assertThat(decode(new ConfluentJsonSchema(client, false), framed(11, "\"hello\"")))
                .containsExactly(Map.entry("value", "hello"));
    }
}
