package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import dev.kbackfill.core.registry.FakeRegistry;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.testservices.ConfluentFraming;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConfluentAvroTest {

    static final String SCHEMA = """
            {"type":"record","name":"Payment","namespace":"shop","fields":[
              {"name":"id","type":{"type":"string","logicalType":"uuid"}},
              {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
              {"name":"fee","type":["null",{"type":"fixed","name":"Fee","size":4,"logicalType":"decimal","precision":6,"scale":3}],"default":null},
              {"name":"paid_at","type":{"type":"long","logicalType":"timestamp-millis"}},
              {"name":"settled_at","type":["null",{"type":"long","logicalType":"timestamp-micros"}],"default":null},
              {"name":"day","type":{"type":"int","logicalType":"date"}},
              {"name":"cutoff","type":{"type":"int","logicalType":"time-millis"}},
              {"name":"count","type":"int"},
              {"name":"ratio","type":"float"},
              {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
              {"name":"raw","type":"bytes"},
              {"name":"note","type":["null","string"],"default":null},
              {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
                 {"name":"sku","type":"string"},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":8,"scale":2}},
                 {"name":"tag","type":["null","string"],"default":null}]}}},
              {"name":"attrs","type":{"type":"map","values":"long"}}
            ]}""";

    private final FakeRegistry registry = FakeRegistry.start();
    private final ConfluentAvro avro = new ConfluentAvro(new SchemaRegistryClient(registry.url(), Optional.empty(),
            Optional.empty(), Duration.ofSeconds(5)));
    private final Schema schema = new Schema.Parser().parse(SCHEMA);

    @AfterEach
    void stop() {
        registry.close();
    }

    private static SourceRecord record(byte[] value) {
        return new SourceRecord("payments", 1, 77, 0, "k".getBytes(), value, new RecordHeaders());
    }

    private GenericRecord payment() {
        GenericRecord line = new GenericData.Record(schema.getField("lines").schema().getElementType());
        line.put("sku", "a\"1");
        line.put("price", new BigDecimal("3.10"));
        line.put("tag", null);
        GenericRecord p = new GenericData.Record(schema);
        p.put("id", UUID.fromString("6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11"));
        p.put("amount", new BigDecimal("1234567890.05"));
        p.put("fee", new BigDecimal("0.125"));
        p.put("paid_at", Instant.parse("2024-01-01T10:15:30.123Z"));
        p.put("settled_at", Instant.parse("2024-01-02T00:00:00.000001Z"));
        p.put("day", LocalDate.parse("2024-01-01"));
        p.put("cutoff", LocalTime.parse("17:30:00.250"));
        p.put("count", 3);
        p.put("ratio", 0.5f);
        p.put("status", new GenericData.EnumSymbol(schema.getField("status").schema(), "PAID"));
        p.put("raw", ByteBuffer.wrap(new byte[] {1, 2, 3}));
        p.put("note", null);
        p.put("lines", List.of(line));
        p.put("attrs", Map.of("x", 1L));
        return p;
    }

    @Test
    void logicalTypesBecomeRealColumnValues() {
        registry.schema(42, SCHEMA, null);
        Map<String, Object> c = avro.columns(record(ConfluentFraming.frame(42, schema, payment())), ConfluentFraming
                .frame(42, schema, payment()), "value", "value");
        assertThat(c.get("id")).isEqualTo(UUID.fromString("6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11"));
        assertThat(c.get("amount")).isEqualTo(new BigDecimal("1234567890.05"));
        assertThat(c.get("fee")).isEqualTo(new BigDecimal("0.125"));
        assertThat(c.get("paid_at")).isEqualTo(Instant.parse("2024-01-01T10:15:30.123Z"));
        assertThat(c.get("settled_at")).isEqualTo(Instant.parse("2024-01-02T00:00:00.000001Z"));
        assertThat(c.get("day")).isEqualTo(LocalDate.parse("2024-01-01"));
        assertThat(c.get("cutoff")).isEqualTo(LocalTime.parse("17:30:00.250"));
        assertThat(c.get("count")).isEqualTo(3L);
        assertThat(c.get("ratio")).isEqualTo(0.5);
        assertThat(c.get("status")).isEqualTo("PAID");
        assertThat((byte[]) c.get("raw")).containsExactly(1, 2, 3);
        assertThat(c).containsEntry("note", null);
        assertThat(c.get("lines")).isEqualTo(new JsonText("[{\"sku\":\"a\\\"1\",\"price\":3.10,\"tag\":null}]"));
        assertThat(c.get("attrs")).isEqualTo(new JsonText("{\"x\":1}"));
        assertThat(RowShape.of(List.of(new Change(Map.of("k", "k"), c, 0, 0, 0))).valueColumns())
                .extracting(Column::type).containsExactly(ColumnType.UUID, ColumnType.DECIMAL, ColumnType.DECIMAL,
                        ColumnType.TIMESTAMP, ColumnType.TIMESTAMP, ColumnType.DATE, ColumnType.TIME, ColumnType.LONG,
                        ColumnType.DOUBLE, ColumnType.STRING, ColumnType.BYTES, ColumnType.STRING, ColumnType.JSON,
                        ColumnType.JSON);
    }

    @Test
    void aValueNoLogicalTypeCanHoldIsAPoisonRecordNotAFailureOfTheRun() {
        String flat = """
                {"type":"record","name":"P","fields":[{"name":"id","type":{"type":"string","logicalType":"uuid"}},
                 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}}]}""";
        registry.schema(7, flat, null);
        Schema plain = new Schema.Parser().parse(flat.replace(",\"logicalType\":\"uuid\"", "")
                .replace(",\"logicalType\":\"decimal\",\"precision\":12,\"scale\":2", ""));
        GenericRecord badUuid = new GenericData.Record(plain);
        badUuid.put("id", "not-a-uuid");
        badUuid.put("amount", ByteBuffer.wrap(new byte[] {1}));
        byte[] one = ConfluentFraming.frame(7, plain, badUuid);
        assertThatThrownBy(() -> avro.columns(record(one), one, "value", "value")).isInstanceOf(DecodeException.class)
                .hasMessage("payments/1@77: the value's body does not match schema id 7: Invalid UUID string: not-a-uuid");
        GenericRecord emptyDecimal = new GenericData.Record(plain);
        emptyDecimal.put("id", "6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11");
        emptyDecimal.put("amount", ByteBuffer.wrap(new byte[0]));
        byte[] two = ConfluentFraming.frame(7, plain, emptyDecimal);
        assertThatThrownBy(() -> avro.columns(record(two), two, "value", "value")).isInstanceOf(DecodeException.class)
                .hasMessage("payments/1@77: the value's body does not match schema id 7: Zero length BigInteger");
    }

    @Test
    void aPrimitiveSchemaIsOneColumn() {
        registry.schema(5, "\"string\"", null);
        byte[] framed = ConfluentFraming.frame(5, Schema.create(Schema.Type.STRING), "hello");
        assertThat(avro.columns(record(framed), framed, "kafka_key", "key")).containsExactly(Map.entry("kafka_key", "hello"));
    }

    @Test
    void poisonRecordsNameTheirCoordinatesAndTheProblem() {
        registry.schema(42, SCHEMA, null);
        byte[] good = ConfluentFraming.frame(42, schema, payment());
        byte[] badMagic = good.clone();
        badMagic[0] = 7;
        assertThatThrownBy(() -> avro.columns(record(badMagic), badMagic, "value", "value"))
                .isInstanceOf(DecodeException.class)
                .hasMessage("payments/1@77: the value starts with byte 0x07, not the magic byte 0 of Confluent-framed Avro");
        byte[] shortOne = {0, 0, 0};
        assertThatThrownBy(() -> avro.columns(record(shortOne), shortOne, "value", "value"))
                .isInstanceOf(DecodeException.class).hasMessageContaining("is truncated: 3 bytes");
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 6);
        assertThatThrownBy(() -> avro.columns(record(truncated), truncated, "value", "value"))
                .isInstanceOf(DecodeException.class).hasMessageContaining("'s body is truncated");
        byte[] unknown = good.clone();
        unknown[4] = 43;
        registry.answers.put("/schemas/ids/43", new FakeRegistry.Answer(404, "{\"error_code\":40403,\"message\":\"nope\"}"));
        assertThatThrownBy(() -> avro.columns(record(unknown), unknown, "value", "value"))
                .isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("payments/1@77: the value names schema id 43: the schema registry at ");
    }

    @Test
    void theRecordDecoderUsesAvroForKeysAndValues() {
        registry.schema(42, SCHEMA, null);
        registry.schema(6, "{\"type\":\"record\",\"name\":\"K\",\"fields\":[{\"name\":\"tenant\",\"type\":\"string\"},"
                + "{\"name\":\"n\",\"type\":\"long\"}]}", null);
        Schema keySchema = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"K\",\"fields\":[{\"name\":"
                + "\"tenant\",\"type\":\"string\"},{\"name\":\"n\",\"type\":\"long\"}]}");
        GenericRecord key = new GenericData.Record(keySchema);
        key.put("tenant", "t1");
        key.put("n", 9L);
        RecordDecoder d = new RecordDecoder(Format.AVRO, Format.AVRO, "kafka_key", "value", List.of(), avro);
        Change c = d.decode(new SourceRecord("payments", 0, 1, 0, ConfluentFraming.frame(6, keySchema, key),
                ConfluentFraming.frame(42, schema, payment()), new RecordHeaders()));
        assertThat(c.key()).containsExactly(Map.entry("tenant", "t1"), Map.entry("n", 9L));
        assertThat(c.values()).containsKey("amount");
    }
}
