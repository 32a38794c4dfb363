package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class RecordDecoderTest {

    private static SourceRecord record(String key, String value) {
        return new SourceRecord("orders", 2, 41, 1_700_000_000_000L,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8), new RecordHeaders());
    }

    private final RecordDecoder json = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());

    @Test
    void aNumberNoDecimalCanHoldIsAPoisonRecordNotAFailureOfTheRun() {
        // valid JSON whose exponent BigDecimal cannot take: Jackson throws NumberFormatException, which used to
        // escape the decoder, so --on-error skip and --dead-letter could not keep the record aside
        assertThatThrownBy(() -> json.decode(record("o-1", "{\"n\":-2e060403833019796}")))
                .isInstanceOf(DecodeException.class)
                .hasMessageContaining("orders/2@41")
                .hasMessageContaining("number that cannot be read exactly");
    }

    @Test
    void aJsonObjectBecomesTypedColumnsAndNestedValuesJsonText() {
        Change c = json.decode(record("o-1", "{\"id\":7,\"amount\":12.30,\"paid\":true,\"note\":\"x\",\"none\":null,"
                + "\"items\":[{\"sku\":\"a\"}],\"big\":123456789012345678901234567890}"));
        assertThat(c.key()).containsEntry("kafka_key", "o-1");
        assertThat(c.values().get("id")).isEqualTo(7L);
        assertThat(c.values().get("amount")).isEqualTo(new BigDecimal("12.30"));
        assertThat(c.values().get("paid")).isEqualTo(true);
        assertThat(c.values().get("note")).isEqualTo("x");
        assertThat(c.values()).containsKey("none");
        assertThat(c.values().get("none")).isNull();
        assertThat(c.values().get("items")).isEqualTo(new JsonText("[{\"sku\":\"a\"}]"));
        assertThat(c.values().get("big")).isEqualTo(new BigDecimal("123456789012345678901234567890"));
        assertThat(c.partition()).isEqualTo(2);
        assertThat(c.offset()).isEqualTo(41);
        assertThat(c.timestamp()).isEqualTo(1_700_000_000_000L);
    }

    @Test
    void aJsonScalarGoesIntoTheValueColumn() {
        assertThat(json.decode(record("k", "42")).values()).containsEntry("value", 42L);
    }

    @Test
    void aNullValueIsATombstone() {
        Change c = json.decode(record("k", null));
        assertThat(c.isTombstone()).isTrue();
        assertThat(c.key()).containsEntry("kafka_key", "k");
    }

    @Test
    void aJsonObjectKeyGivesOneColumnPerField() {
        RecordDecoder d = new RecordDecoder(Format.JSON, Format.JSON, "kafka_key", "value", List.of());
        assertThat(d.decode(record("{\"tenant\":\"t1\",\"id\":5}", "{\"a\":1}")).key())
                .containsExactly(java.util.Map.entry("tenant", "t1"), java.util.Map.entry("id", 5L));
    }

    @Test
    void keyFieldsTakeTheKeyFromTheValue() {
        RecordDecoder d = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of("id"));
        Change c = d.decode(record(null, "{\"id\":5,\"a\":1}"));
        assertThat(c.key()).containsExactly(java.util.Map.entry("id", 5L));
        assertThat(c.values()).containsOnlyKeys("a");
        assertThatThrownBy(() -> d.decode(record(null, "{\"a\":1}")))
                .isInstanceOf(DecodeException.class).hasMessage("orders/2@41: key field 'id' is missing or null");
    }

    /**
     * A record keyed by value fields keeps its other fields as columns of its shape, not as a copy of its own: two
     * records of one shape share the shape of what is left, and the key fields are gone from it.
     */
    @Test
    void recordsKeyedByValueFieldsShareTheShapeOfTheFieldsLeft() {
        RecordDecoder d = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of("day", "id"));
        Change a = d.decode(record(null, "{\"id\":5,\"a\":1,\"day\":\"2024-01-01\",\"b\":\"x\"}"));
        Change b = d.decode(record(null, "{\"id\":6,\"a\":2,\"day\":\"2024-01-02\",\"b\":\"y\"}"));
        assertThat(a.key()).containsExactly(java.util.Map.entry("day", "2024-01-01"), java.util.Map.entry("id", 5L));
        assertThat(a.values()).containsExactly(java.util.Map.entry("a", 1L), java.util.Map.entry("b", "x"));
        assertThat(b.values()).containsExactly(java.util.Map.entry("a", 2L), java.util.Map.entry("b", "y"));
        assertThat(a.values()).isInstanceOf(Columns.class);
        assertThat(((Columns) a.values()).shape()).isSameAs(((Columns) b.values()).shape());
    }

    @Test
    void aRecordWithoutAKeyCannotBeKeyedByIt() {
        assertThatThrownBy(() -> json.decode(record(null, "{}")))
                .isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@41: the record has no key").hasMessageContaining("--key-fields");
    }

    @Test
    void malformedJsonNamesTheRecord() {
        assertThatThrownBy(() -> json.decode(record("k", "{not json")))
                .isInstanceOf(DecodeException.class).hasMessageStartingWith("orders/2@41: the value is not JSON");
    }

    @Test
    void recordsOfDifferentShapesKeepTheirOwnFieldsInOrder() {
        Change a = json.decode(record("a", "{\"x\":1,\"y\":\"s\"}"));
        Change b = json.decode(record("b", "{\"y\":\"t\",\"z\":false}"));
        Change c = json.decode(record("c", "{\"x\":2,\"y\":\"u\"}"));
        assertThat(a.values()).containsExactly(java.util.Map.entry("x", 1L), java.util.Map.entry("y", "s"));
        assertThat(b.values()).containsExactly(java.util.Map.entry("y", "t"), java.util.Map.entry("z", false));
        assertThat(c.values()).containsExactly(java.util.Map.entry("x", 2L), java.util.Map.entry("y", "u"));
        assertThat(c.values()).doesNotContainKey("z").isEqualTo(java.util.Map.of("x", 2L, "y", "u"));
        assertThat(a.values().get("z")).isNull();
    }

    @Test
    void aFieldGivenTwiceKeepsItsFirstPlaceAndLastValue() {
        assertThat(json.decode(record("k", "{\"a\":1,\"b\":2,\"a\":3}")).values())
                .containsExactly(java.util.Map.entry("a", 3L), java.util.Map.entry("b", 2L));
    }

    @Test
    void aRecordThatFailsHalfWayLeavesNothingForTheNext() {
        assertThatThrownBy(() -> json.decode(record("k", "{\"a\":1,\"b\":")))
                .isInstanceOf(DecodeException.class).hasMessageStartingWith("orders/2@41: the value is not JSON");
        assertThatThrownBy(() -> json.decode(record("k", "")))
                .isInstanceOf(DecodeException.class).hasMessage("orders/2@41: the value is empty, not JSON");
        assertThat(json.decode(record("k", "{\"c\":1}")).values()).containsExactly(java.util.Map.entry("c", 1L));
    }

    @Test
    void bytesThatAreNotUtf8AreRefusedAsStrings() {
        SourceRecord r = new SourceRecord("orders", 0, 1, 0, new byte[] {(byte) 0xff, (byte) 0xfe}, null,
                new RecordHeaders());
        assertThatThrownBy(() -> json.decode(r)).isInstanceOf(DecodeException.class)
                .hasMessage("orders/0@1: the key is not UTF-8 text; use --key-format bytes");
        RecordDecoder bytes = new RecordDecoder(Format.BYTES, Format.BYTES, "kafka_key", "value", List.of());
        assertThat((byte[]) bytes.decode(r).key().get("kafka_key")).containsExactly((byte) 0xff, (byte) 0xfe);
    }

    @Test
    void rowShapesWidenNumbersAndFallBackToJsonText() {
        Change a = json.decode(record("a", "{\"n\":1,\"m\":\"x\",\"only_null\":null}"));
        Change b = json.decode(record("b", "{\"n\":1.5,\"m\":2}"));
        RowShape shape = RowShape.of(List.of(a, b));
        assertThat(shape.keyColumns()).containsExactly(new Column("kafka_key", ColumnType.STRING, false));
        assertThat(shape.valueColumns()).containsExactly(new Column("n", ColumnType.DECIMAL, true),
                new Column("m", ColumnType.JSON, true), new Column("only_null", ColumnType.STRING, true));
    }

    private static RecordDecoder mapped(ColumnMapping mapping) {
        return new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of()).withShaping(null, mapping);
    }

    @Test
    void aMappingIntoAColumnTheRowFillsItselfIsRefusedBeforeAnythingIsRead() {
        for (String reserved : List.of("kafka_key", "kafka_offset", "KAFKA_TOPIC", "kafka_deleted")) {
            assertThatThrownBy(() -> mapped(new ColumnMapping(List.of(), java.util.Map.of("a", reserved), List.of())))
                    .isInstanceOf(dev.kbackfill.resolver.RequestException.class)
                    .hasMessageStartingWith("invalid --rename 'a=" + reserved + "'");
            assertThatThrownBy(() -> mapped(new ColumnMapping(List.of(), java.util.Map.of(), List.of(reserved))))
                    .hasMessageStartingWith("invalid --header-columns '" + reserved + "'");
        }
        assertThatThrownBy(() -> new ColumnMapping(List.of(), java.util.Map.of("a", "src"), List.of("src")))
                .hasMessageContaining("field 'a' is renamed to the same column 'src'");
        // renaming the key column itself is fine
        Change c = mapped(new ColumnMapping(List.of(), java.util.Map.of("kafka_key", "order_id"), List.of()))
                .decode(record("o-1", "{\"a\":1}"));
        assertThat(c.key()).containsOnlyKeys("order_id");
    }

    @Test
    void fieldsAMappingWouldWriteIntoOneColumnArePoisonRecordsNamingTheRecord() {
        RecordDecoder rename = mapped(new ColumnMapping(List.of(), java.util.Map.of("a", "b"), List.of()));
        assertThat(rename.decode(record("k", "{\"a\":1,\"c\":2}")).values()).containsEntry("b", 1L);
        assertThatThrownBy(() -> rename.decode(record("k", "{\"a\":1,\"b\":2}")))
                .isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@41: --rename a=b writes field 'a' into column 'b', which field 'b'");
        assertThatThrownBy(() -> rename.decode(record("k", "{\"b\":2,\"a\":1}"))).as("whatever the field order")
                .hasMessageStartingWith("orders/2@41: --rename a=b writes field 'a' into column 'b'");
        // b renamed away, or left out by --columns: no collision
        assertThat(mapped(new ColumnMapping(List.of(), java.util.Map.of("a", "b", "b", "c"), List.of()))
                .decode(record("k", "{\"a\":1,\"b\":2}")).values()).isEqualTo(java.util.Map.of("b", 1L, "c", 2L));
        assertThat(mapped(new ColumnMapping(List.of("a"), java.util.Map.of("a", "b"), List.of()))
                .decode(record("k", "{\"a\":1,\"b\":2}")).values()).isEqualTo(java.util.Map.of("b", 1L));
        RecordDecoder header = mapped(new ColumnMapping(List.of(), java.util.Map.of(), List.of("a")));
        assertThatThrownBy(() -> header.decode(record("k", "{\"a\":1}")))
                .hasMessageStartingWith("orders/2@41: --header-columns a writes header 'a' into column 'a'");
    }

    @Test
    void valueFieldsThatWouldShareAColumnArePoisonRecordsWhateverTheMapping() {
        assertThatThrownBy(() -> json.decode(record("k", "{\"status\":1,\"Status\":2}")))
                .isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@41: value fields 'status' and 'Status' would be one column")
                .hasMessageContaining("--rename Status=NAME");
        for (String field : List.of("kafka_offset", "KAFKA_PARTITION")) {
            assertThatThrownBy(() -> json.decode(record("k", "{\"" + field + "\":1}")))
                    .hasMessageStartingWith("orders/2@41: value field '" + field + "' has the name of a column kbackfill "
                            + "fills itself");
        }
        // the key column's own field in the value (a table another writer keeps has it): the key, where it agrees
        assertThat(json.decode(record("7", "{\"kafka_key\":7,\"n\":1}")).key()).isEqualTo(java.util.Map.of("kafka_key", "7"));
        assertThatThrownBy(() -> json.decode(record("k", "{\"kafka_key\":1}")))
                .isInstanceOf(DecodeException.class)
                .hasMessageContaining("value field 'kafka_key' holds 1, and the key's column kafka_key holds 'k': one "
                        + "column cannot hold both");
        RecordDecoder objectKeyed = new RecordDecoder(Format.JSON, Format.JSON, "kafka_key", "value", List.of());
        assertThatThrownBy(() -> objectKeyed.decode(record("{\"id\":1}", "{\"id\":2}")))
                .isInstanceOf(DecodeException.class).hasMessageContaining("value field 'id' holds 2");
        // an object key's field repeated in the value is the usual case, not a collision
        RecordDecoder objectKey = new RecordDecoder(Format.JSON, Format.JSON, "kafka_key", "value", List.of());
        assertThat(objectKey.decode(record("{\"id\":7}", "{\"id\":7,\"n\":1}")).values()).containsKey("id");
    }

    @Test
    void aKeysFieldInTheValueIsComparedForEveryRecordOfEveryShapeAsWhenEachPairWasFoundPerRecord() {
        // 300 seeds: object keys and values of random shapes (field names differing in case among them), in runs of
        // one shape and alternating, each record refused exactly where a pair of names equal but for case disagrees,
        // naming the first such pair in the key's order, then the value's
        List<String> names = List.of("id", "ID", "Id", "n", "N", "x");
        for (long seed = 0; seed < 300; seed++) {
            java.util.Random random = new java.util.Random(seed);
            RecordDecoder decoder = new RecordDecoder(Format.JSON, Format.JSON, "kafka_key", "value", List.of());
            List<List<String>> keyShapes = List.of(pick(random, names, 1), pick(random, names, 2));
            List<List<String>> valueShapes = List.of(pick(random, names, 2), pick(random, names, 3));
            for (int n = 0; n < 40; n++) {
                List<String> keyFields = keyShapes.get(n % 7 < 4 ? 0 : 1);
                List<String> valueFields = valueShapes.get(random.nextInt(3) == 0 ? 1 : 0);
                java.util.Map<String, Integer> key = new java.util.LinkedHashMap<>();
                keyFields.forEach(f -> key.put(f, random.nextInt(2)));
                java.util.Map<String, Integer> value = new java.util.LinkedHashMap<>();
                valueFields.forEach(f -> value.put(f, random.nextInt(2)));
                String expected = null;
                for (String k : key.keySet()) {
                    for (String f : value.keySet()) {
                        if (expected == null && f.equalsIgnoreCase(k) && !key.get(k).equals(value.get(f))) {
                            expected = "value field '" + f + "' holds " + value.get(f) + ", and the key's column " + k
                                    + " holds " + key.get(k) + ":";
                        }
                    }
                }
                String keyJson = json(key);
                String valueJson = json(value);
                String as = "seed " + seed + ", record " + n + ": " + keyJson + " " + valueJson;
                try {
                    decoder.decode(record(keyJson, valueJson));
                    assertThat(expected).as(as).isNull();
                } catch (DecodeException e) {
                    if (expected != null) {
                        assertThat(e.getMessage()).as(as).contains(expected);
                    } else {
                        // another rule's refusal (two value fields one column apart but for case), never this one's
                        assertThat(e.getMessage()).as(as).doesNotContain("cannot hold both");
                    }
                }
            }
        }
    }

    private static List<String> pick(java.util.Random random, List<String> names, int count) {
        List<String> shuffled = new java.util.ArrayList<>(names);
        java.util.Collections.shuffle(shuffled, random);
        return List.copyOf(shuffled.subList(0, count));
    }

    private static String json(java.util.Map<String, Integer> fields) {
        StringBuilder b = new StringBuilder("{");
        fields.forEach((k, v) -> b.append(b.length() > 1 ? "," : "").append('"').append(k).append("\":").append(v));
        return b.append('}').toString();
    }

    @Test
    void theFieldsAMappingNamesThatNoRecordCarriedAreToldApart() {
        RecordDecoder d = mapped(new ColumnMapping(List.of("a", "amout"), java.util.Map.of("zz", "z"), List.of("src")));
        d.decode(record("k", "{\"a\":1}"));
        assertThat(d.unseenMappedFields()).containsExactlyInAnyOrder("amout", "zz", "src");
        assertThat(d.mapping().optionsNaming("amout")).isEqualTo("--columns");
        assertThat(d.mapping().optionsNaming("src")).isEqualTo("--header-columns");
    }
}
