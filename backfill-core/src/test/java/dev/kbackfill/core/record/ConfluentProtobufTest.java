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

import dev.kbackfill.core.registry.FakeRegistry;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.testservices.ConfluentFraming;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Protobuf records framed as Confluent's serializer frames them, written here field by field with protobuf's
 * {@link CodedOutputStream} (independently of the schema parser under test), read back through a registry.
 */
class ConfluentProtobufTest {

    static final String ORDER = """
            syntax = "proto3";
            package shop;
            import "google/protobuf/timestamp.proto";
            import "google/protobuf/wrappers.proto";
            import "customer.proto";
            import "google/type/date.proto";

            message Order {
              string id = 1;
              int32 qty = 2;
              uint64 big = 3;
              double price = 4;
              float ratio = 5;
              bool paid = 6;
              bytes raw = 7;
              Status status = 8;
              google.protobuf.Timestamp placed_at = 9;
              google.protobuf.Int64Value maybe = 10;
              optional string note = 11;
              oneof payment {
                string card = 12;
                string iban = 13;
              }
              repeated Line lines = 14;
              map<string, int64> attrs = 15;
              common.Customer customer = 16;
              google.type.Date day = 17;
              message Line { string sku = 1; int64 n = 2; }
              enum Status { NEW = 0; PAID = 1; }
            }

            message Refund {
              string id = 1;
              Order.Line line = 2;
            }
            """;
    static final String CUSTOMER = """
            syntax = "proto3";
            package common;
            message Customer { string name = 1; repeated string tags = 2; }
            """;
    static final String REFS = "[{\"name\":\"customer.proto\",\"subject\":\"customer\",\"version\":1}]";

    private final FakeRegistry registry = FakeRegistry.start();
    private final ConfluentProtobuf protobuf = new ConfluentProtobuf(new SchemaRegistryClient(registry.url(),
            Optional.empty(), Optional.empty(), Duration.ofSeconds(5)));

    @AfterEach
    void stop() {
        registry.close();
    }

    static byte[] message(ConfluentFraming.ProtobufBody body) {
        return ConfluentFraming.protobufMessage(body);
    }

    static byte[] framed(int id, int[] indexes, byte[] body) {
        return ConfluentFraming.protobuf(id, indexes, body);
    }

    private static SourceRecord record(byte[] value) {
        return new SourceRecord("orders", 1, 77, 0, "k".getBytes(), value, new RecordHeaders());
    }

    private Map<String, Object> decode(byte[] framed) {
        return protobuf.columns(record(framed), framed, "value", "value");
    }

    private void serve() {
        registry.schema(21, "PROTOBUF", ORDER, REFS);
        registry.version("customer", 1, "PROTOBUF", CUSTOMER);
    }

    static final byte[] ORDER_BODY = message(out -> {
        out.writeString(1, "o-1");
        out.writeInt32(2, -3);
        out.writeUInt64(3, -1L);
        out.writeDouble(4, 9.5);
        out.writeFloat(5, 0.5f);
        out.writeBool(6, true);
        out.writeByteArray(7, new byte[] {1, 2, 3});
        out.writeEnum(8, 1);
        out.writeByteArray(9, message(t -> {
            t.writeInt64(1, 1704103530L);
            t.writeInt32(2, 123_000_000);
        }));
        out.writeString(12, "visa");
        out.writeByteArray(14, message(l -> {
            l.writeString(1, "a\"1");
            l.writeInt64(2, 2);
        }));
        out.writeByteArray(14, message(l -> l.writeString(1, "b")));
        out.writeByteArray(15, message(e -> {
            e.writeString(1, "x");
            e.writeInt64(2, 1);
        }));
        out.writeByteArray(16, message(c -> {
            c.writeString(1, "Ann");
            c.writeString(2, "vip");
        }));
        out.writeByteArray(17, message(d -> {
            d.writeInt32(1, 2024);
            d.writeInt32(2, 2);
            d.writeInt32(3, 29);
        }));
    });

    @Test
    void fieldsBecomeTypedColumnsInDeclarationOrder() {
        serve();
        Map<String, Object> c = decode(framed(21, new int[] {0}, ORDER_BODY));
        assertThat(c.keySet()).containsExactly("id", "qty", "big", "price", "ratio", "paid", "raw", "status",
                "placed_at", "maybe", "note", "card", "iban", "lines", "attrs", "customer", "day");
        assertThat(c.get("id")).isEqualTo("o-1");
        assertThat(c.get("qty")).isEqualTo(-3L);
        assertThat(c.get("big")).as("uint64 read unsigned").isEqualTo(new BigDecimal("18446744073709551615"));
        assertThat(c.get("price")).isEqualTo(9.5);
        assertThat(c.get("ratio")).isEqualTo(0.5);
        assertThat(c.get("paid")).isEqualTo(true);
        assertThat((byte[]) c.get("raw")).containsExactly(1, 2, 3);
        assertThat(c.get("status")).isEqualTo("PAID");
        assertThat(c.get("placed_at")).isEqualTo(Instant.parse("2024-01-01T10:05:30.123Z"));
        assertThat(c).containsEntry("maybe", null).containsEntry("note", null).containsEntry("iban", null);
        assertThat(c.get("card")).isEqualTo("visa");
        assertThat(c.get("lines")).isEqualTo(new JsonText("[{\"sku\":\"a\\\"1\",\"n\":2},{\"sku\":\"b\",\"n\":0}]"));
        assertThat(c.get("attrs")).isEqualTo(new JsonText("{\"x\":1}"));
        assertThat(c.get("customer")).isEqualTo(new JsonText("{\"name\":\"Ann\",\"tags\":[\"vip\"]}"));
        assertThat(c.get("day")).isEqualTo(LocalDate.parse("2024-02-29"));
        assertThat(RowShape.of(List.of(new Change(Map.of("k", "k"), c, 0, 0, 0))).valueColumns())
                .extracting(Column::type).containsExactly(ColumnType.STRING, ColumnType.LONG, ColumnType.DECIMAL,
                        ColumnType.DOUBLE, ColumnType.DOUBLE, ColumnType.BOOLEAN, ColumnType.BYTES, ColumnType.STRING,
                        ColumnType.TIMESTAMP, ColumnType.STRING, ColumnType.STRING, ColumnType.STRING,
                        ColumnType.STRING, ColumnType.JSON, ColumnType.JSON, ColumnType.JSON, ColumnType.DATE);
    }

    @Test
    void unsetFieldsAreNullWithPresenceAndDefaultsWithout() {
        serve();
        Map<String, Object> c = decode(framed(21, new int[] {0}, message(out -> {
            out.writeString(11, "");           // proto3 optional, set to its default: present
            out.writeByteArray(10, message(w -> w.writeInt64(1, 7)));
        })));
        assertThat(c.get("id")).isEqualTo("");
        assertThat(c.get("qty")).isEqualTo(0L);
        assertThat(c.get("paid")).isEqualTo(false);
        assertThat(c.get("status")).isEqualTo("NEW");
        assertThat(c.get("note")).isEqualTo("");
        assertThat(c.get("maybe")).as("a wrapper is its value").isEqualTo(7L);
        assertThat(c).containsEntry("placed_at", null).containsEntry("customer", null).containsEntry("card", null);
        assertThat(c.get("lines")).isEqualTo(new JsonText("[]"));
        assertThat(c.get("attrs")).isEqualTo(new JsonText("{}"));
    }

    @Test
    void messageIndexesPickTheMessageTypeNestedOnesIncluded() {
        serve();
        byte[] line = message(l -> {
            l.writeString(1, "s");
            l.writeInt64(2, 5);
        });
        assertThat(decode(framed(21, new int[] {0, 0}, line))).containsExactly(Map.entry("sku", "s"), Map.entry("n", 5L));
        Map<String, Object> refund = decode(framed(21, new int[] {1}, message(r -> {
            r.writeString(1, "r-1");
            r.writeByteArray(2, line);
        })));
        assertThat(refund).containsExactly(Map.entry("id", "r-1"), Map.entry("line", new JsonText("{\"sku\":\"s\",\"n\":5}")));
        assertThat(registry.requests).as("one schema fetch per id, one per reference")
                .containsExactly("/schemas/ids/21", "/subjects/customer/versions/1");
    }

    @Test
    void confluentDecimalsAndProto2FieldsAreRead() {
        registry.schema(3, "PROTOBUF", """
                syntax = "proto2";
                import "confluent/type/decimal.proto";
                message Price {
                  required string sku = 1;
                  optional int32 n = 2 [default = 4];
                  optional confluent.type.Decimal amount = 3;
                  optional sint64 delta = 4;
                }""", null);
        Map<String, Object> c = decode(framed(3, new int[] {0}, message(out -> {
            out.writeString(1, "x");
            out.writeByteArray(3, message(d -> {
                d.writeByteArray(1, new java.math.BigInteger("-123456789").toByteArray());
                d.writeUInt32(2, 12);
                d.writeInt32(3, 4);
            }));
            out.writeSInt64(4, -9);
        })));
        assertThat(c.keySet()).containsExactly("sku", "n", "amount", "delta");
        assertThat(c).containsEntry("sku", "x").containsEntry("n", null)
                .containsEntry("amount", new BigDecimal("-12345.6789")).containsEntry("delta", -9L);
    }

    @Test
    void poisonRecordsNameTheirCoordinatesAndTheProblem() {
        serve();
        byte[] good = framed(21, new int[] {0}, ORDER_BODY);
        byte[] badMagic = good.clone();
        badMagic[0] = 7;
        assertThatThrownBy(() -> decode(badMagic)).isInstanceOf(DecodeException.class)
                .hasMessage("orders/1@77: the value starts with byte 0x07, not the magic byte 0 of Confluent-framed Protobuf");
        assertThatThrownBy(() -> decode(framed(21, new int[] {2}, ORDER_BODY))).isInstanceOf(DecodeException.class)
                .hasMessage("orders/1@77: the value's message indexes [2] name no message of schema id 21 (the file has 2)");
        assertThatThrownBy(() -> decode(framed(21, new int[] {0}, new byte[] {(byte) 0xff, (byte) 0xff})))
                .isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/1@77: the value's body does not match message shop.Order of schema id 21:");
        registry.answers.put("/schemas/ids/22", new FakeRegistry.Answer(404, "{\"error_code\":40403,\"message\":\"no\"}"));
        assertThatThrownBy(() -> decode(framed(22, new int[] {0}, ORDER_BODY))).isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/1@77: the value names schema id 22: the schema registry at ");
        registry.schema(23, "PROTOBUF", "syntax = \"proto3\"; import \"other.proto\"; message A { other.B b = 1; }", null);
        assertThatThrownBy(() -> decode(framed(23, new int[] {0}, new byte[0]))).isInstanceOf(DecodeException.class)
                .hasMessage("orders/1@77: the value names schema id 23: schema-23.proto imports \"other.proto\", which is "
                        + "neither among the schema's references in the registry nor a well-known type");
        registry.schema(24, "AVRO", "\"string\"", null);
        assertThatThrownBy(() -> decode(framed(24, new int[] {0}, new byte[0]))).isInstanceOf(DecodeException.class)
                .hasMessage("orders/1@77: the value names schema id 24: schema id 24 is Avro, not Protobuf");
    }

    @Test
    void theRecordDecoderReadsProtobufKeysAndValues() {
        serve();
        registry.schema(30, "PROTOBUF", "syntax = \"proto3\"; message Key { string tenant = 1; int64 n = 2; }", null);
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url(), Optional.empty(), Optional.empty(),
                Duration.ofSeconds(5));
        RecordDecoder d = new RecordDecoder(Format.PROTOBUF, Format.PROTOBUF, "kafka_key", "value", List.of(),
                SchemaDecoder.of(Format.PROTOBUF, client, false), SchemaDecoder.of(Format.PROTOBUF, client, false), null);
        byte[] key = framed(30, new int[] {0}, message(k -> {
            k.writeString(1, "t1");
            k.writeInt64(2, 9);
        }));
        Change c = d.decode(new SourceRecord("orders", 0, 1, 0, key, framed(21, new int[] {0}, ORDER_BODY),
                new RecordHeaders()));
        assertThat(c.key()).containsExactly(Map.entry("tenant", "t1"), Map.entry("n", 9L));
        assertThat(c.values()).containsEntry("status", "PAID");
    }
}
