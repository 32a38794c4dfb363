package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import dev.kbackfill.resolver.RequestException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** {@code --where} and the column mapping, applied by the decoder to real decoded records. */
class RecordFilterTest {

    private static SourceRecord record(String key, String value, String... headers) {
        RecordHeaders h = new RecordHeaders();
        for (int i = 0; i < headers.length; i += 2) {
            h.add(headers[i], headers[i + 1].getBytes(StandardCharsets.UTF_8));
        }
        return new SourceRecord("orders", 2, 41, 1_704_103_200_000L /* 2024-01-01T10:00:00Z */,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8), h);
    }

    private static RecordDecoder json(String where) {
        return new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of())
                .withShaping(RecordFilter.compile(where), ColumnMapping.none());
    }

    private static boolean keeps(String where, SourceRecord r) {
        return json(where).decodeKept(r).isPresent();
    }

    static final String ORDER = "{\"status\":\"packed\",\"amount\":12.50,\"n\":3,\"customer\":{\"name\":\"Ann\","
            + "\"tags\":[\"vip\"]},\"raw\":null}";

    @Test
    void expressionsSeeFieldsNestedFieldsHeadersTimeAndCoordinates() {
        SourceRecord r = record("o-1", ORDER, "tenant", "acme", "tenant", "globex");
        assertThat(keeps("value.status == 'packed' && partition == 2", r)).isTrue();
        assertThat(keeps("value.status == 'shipped'", r)).isFalse();
        assertThat(keeps("value.customer.name == 'Ann' && 'vip' in value.customer.tags", r)).isTrue();
        assertThat(keeps("value.amount > 12 && value.amount < 12.6 && value.n == 3.0", r)).as("numbers across kinds")
                .isTrue();
        assertThat(keeps("headers.tenant == 'globex'", r)).as("a header's last value").isTrue();
        assertThat(keeps("timestamp >= timestamp('2024-01-01T10:00:00Z') && offset == 41", r)).isTrue();
        assertThat(keeps("key == 'o-1'", r)).as("a string key is its text").isTrue();
        assertThat(keeps("value.raw == null && has(value.customer) && !has(value.missing)", r)).isTrue();
    }

    @Test
    void aStructuredKeyIsAMapAndAScalarValueItsScalar() {
        RecordDecoder d = new RecordDecoder(Format.JSON, Format.JSON, "kafka_key", "value", List.of())
                .withShaping(RecordFilter.compile("key.tenant == 'acme' && value == 7"), ColumnMapping.none());
        assertThat(d.decodeKept(record("{\"tenant\":\"acme\",\"id\":1}", "7"))).isPresent();
        assertThat(d.decodeKept(record("{\"tenant\":\"globex\",\"id\":1}", "7"))).isEmpty();
    }

    /** An object whose one field has the value column's name is an object, not that field's scalar. */
    @Test
    void anObjectWithOneFieldNamedLikeTheValueColumnIsAnObject() {
        RecordDecoder scalar = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of())
                .withShaping(RecordFilter.compile("value == 5"), ColumnMapping.none());
        assertThat(scalar.decodeKept(record("k", "5"))).isPresent();
        assertThat(scalar.decodeKept(record("k", "{\"value\":5}"))).as("a map is not 5").isEmpty();
        RecordDecoder field = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of())
                .withShaping(RecordFilter.compile("value.value == 5"), ColumnMapping.none());
        assertThat(field.decodeKept(record("k", "{\"value\":5}"))).isPresent();
    }

    @Test
    void aRecordTheExpressionCannotBeEvaluatedOnIsPoisonAndTombstonesSayHowToKeepThem() {
        assertThatThrownBy(() -> keeps("value.missing == 1", record("o-1", ORDER))).isInstanceOf(DecodeException.class)
                .hasMessageStartingWith("orders/2@41: --where cannot be evaluated on it: ")
                .hasMessageContaining("missing").hasMessageEndingWith("('has(value.f)' tells whether a field is there)");
        assertThatThrownBy(() -> keeps("value.status == 'packed'", record("o-1", null)))
                .isInstanceOf(DecodeException.class)
                .hasMessageEndingWith("(a tombstone, whose value is null: 'value == null || ...' keeps deletes)");
        assertThat(keeps("value == null || value.status == 'packed'", record("o-1", null))).isTrue();
    }

    @Test
    void aBadExpressionIsOneLineNamingWhereItIsWrong() {
        assertThatThrownBy(() -> RecordFilter.compile("value.status = 'x'")).isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid --where 'value.status = 'x'': at column 14: ")
                .hasMessageEndingWith("(a boolean CEL expression over key, value, headers, timestamp, partition and "
                        + "offset, e.g. value.status == 'packed' && partition == 0)");
        assertThatThrownBy(() -> RecordFilter.compile("valu.status == 'x'")).hasMessageContaining("at column 1: "
                + "undeclared reference to 'valu'");
        assertThatThrownBy(() -> RecordFilter.compile("partition + 1")).hasMessageContaining("at column 11: expected "
                + "type 'bool' but found 'int'");
    }

    @Test
    void aFilteredRecordStillDecodesWhenAskedAndKeyFieldsSeeTheRecordKey() {
        RecordDecoder d = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of("status"))
                .withShaping(RecordFilter.compile("key == 'o-1'"), ColumnMapping.none());
        assertThat(d.decodeKept(record("o-2", ORDER))).isEmpty();
        assertThat(d.decode(record("o-2", ORDER)).key()).containsEntry("status", "packed");
        assertThat(d.decodeKept(record("o-1", ORDER)).orElseThrow().key()).containsExactly(Map.entry("status", "packed"));
    }

    @Test
    void columnsRenamesAndHeaderColumnsShapeTheRow() {
        ColumnMapping mapping = new ColumnMapping(List.of("status", "n"), ColumnMapping.renames(List.of(
                "status=order_status", "kafka_key=order_id", "tenant=tenant_id")), List.of("tenant", "trace"));
        RecordDecoder d = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of())
                .withShaping(RecordFilter.compile("value.amount > 10"), mapping);
        Change c = d.decodeKept(record("o-1", ORDER, "tenant", "acme")).orElseThrow();
        assertThat(c.key()).containsExactly(Map.entry("order_id", "o-1"));
        assertThat(c.values().keySet()).containsExactly("order_status", "n", "tenant_id", "trace");
        assertThat(c.values()).containsEntry("order_status", "packed").containsEntry("n", 3L)
                .containsEntry("tenant_id", "acme").containsEntry("trace", null);
        assertThat(d.decodeKey(record("o-1", ORDER)).key()).as("the lazy key path renames too")
                .containsExactly(Map.entry("order_id", "o-1"));
        assertThat(d.decode(record("o-1", null)).values()).as("a tombstone stays one").isNull();
    }

    @Test
    void badMappingsAreRefused() {
        assertThatThrownBy(() -> ColumnMapping.renames(List.of("status"))).isInstanceOf(RequestException.class)
                .hasMessage("invalid --rename 'status': expected FIELD=COLUMN, e.g. order_status=status");
        assertThatThrownBy(() -> new ColumnMapping(List.of(), ColumnMapping.renames(List.of("a=x", "b=x")), List.of()))
                .hasMessage("invalid --rename: two fields renamed to 'x'");
        assertThatThrownBy(() -> ColumnMapping.renames(List.of("a=x", "a=y")))
                .hasMessage("invalid --rename 'a=y': field 'a' is renamed twice");
    }
}
