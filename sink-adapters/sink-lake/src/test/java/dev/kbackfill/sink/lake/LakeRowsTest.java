package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.sink.SinkSettings;
import org.junit.jupiter.api.Test;

class LakeRowsTest {

    private static final LakeType STRING = LakeType.of(LakeType.Kind.STRING);
    private static final LakeType LONG = LakeType.of(LakeType.Kind.LONG);

    /** Columns: region (key), id (key), amount, nested (a type kbackfill does not write), then the metadata. */
    private static LakeRows rows() {
        return new LakeRows(List.of("region", "id", "amount", "nested", "kafka_partition", "kafka_offset",
                "kafka_timestamp"), new LakeType[] {STRING, LONG, LakeType.DECIMAL, null, LONG, LONG,
                LakeType.of(LakeType.Kind.TIMESTAMP)}, new Object[] {"string", "long", "decimal(38,18)", "struct<a:int>",
                "long", "long", "timestamp"}, new int[] {0, 1});
    }

    private static Change change(Map<String, Object> key, Map<String, Object> values) {
        return new Change(key, values, 2, 40, 1_000);
    }

    @Test
    void keyFieldsLandInTheirColumnsWhateverTheirOrderAndOneIdentityIsOneKey() throws Exception {
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("id", 7L);
        a.put("region", new BigDecimal("7.00"));
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("region", new BigDecimal("7"));
        b.put("id", 7L);
        assertThat(rows().key(change(a, Map.of()))).isEqualTo(rows().key(change(b, Map.of()))).containsExactly("7", 7L);
    }

    @Test
    void aNewRowHoldsTheValuesByNameAndIsStampedWithItsCoordinates() throws Exception {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("amount", new BigDecimal("1.5"));
        values.put("not_a_column", "x");
        MetadataOrdinals ord = MetadataOrdinals.of(n -> List.of("region", "id", "amount", "nested", "kafka_partition",
                "kafka_offset", "kafka_timestamp").indexOf(n), SinkSettings.MetadataColumns.DEFAULT);
        Object[] row = rows().newRow(change(Map.of("region", "eu", "id", 1L), values), false, ord, "orders");
        assertThat(row).containsExactly("eu", 1L, new BigDecimal("1.500000000000000000"), null, 2L, 40L, 1_000_000L);
    }

    @Test
    void aRowThatLeavesANotNullColumnNullIsRefusedAsTheFormatsWritersRefuseIt() throws Exception {
        List<String> names = List.of("region", "id", "amount", "nested", "kafka_partition", "kafka_offset",
                "kafka_timestamp");
        LakeRows required = new LakeRows(names, new LakeType[] {STRING, LONG, LakeType.DECIMAL, null, LONG, LONG,
                LakeType.of(LakeType.Kind.TIMESTAMP)}, new Object[7], new int[] {0, 1},
                new boolean[] {true, true, true, false, true, true, true});
        MetadataOrdinals ord = MetadataOrdinals.of(names::indexOf, SinkSettings.MetadataColumns.DEFAULT);
        Map<String, Object> key = Map.of("region", "eu", "id", 1L);
        assertThat(required.newRow(change(key, Map.of("amount", BigDecimal.ONE)), false, ord, "orders")[2]).isNotNull();
        assertThatThrownBy(() -> required.newRow(change(key, Map.of()), false, ord, "orders"))
                .isInstanceOf(ValueMismatch.class).hasMessage("column amount is NOT NULL, and the record gives it no value");
    }

    @Test
    void aColumnOfATypeKbackfillDoesNotWriteIsRefusedOnlyWhenAValueIsForIt() throws Exception {
        Map<String, Object> nullNested = new LinkedHashMap<>();
        nullNested.put("nested", null);
        assertThat(rows().valueRow(change(Map.of("region", "eu", "id", 1L), nullNested))[3]).isNull();
        assertThatThrownBy(() -> rows().valueRow(change(Map.of("region", "eu", "id", 1L), Map.of("nested", "{}"))))
                .isInstanceOf(ValueMismatch.class).hasMessage("column nested is of type struct<a:int>, which kbackfill "
                        + "does not write");
    }

    @Test
    void aKeyWithoutAKeyColumnsFieldNamesTheRecordAndItsFields() {
        assertThatThrownBy(() -> rows().keyRow(change(Map.of("region", "eu"), Map.of())))
                .isInstanceOf(ValueMismatch.class)
                .hasMessage("the key at partition 2 offset 40 has no field id (fields [region])");
        assertThatThrownBy(() -> rows().valueRow(change(Map.of("region", "eu", "id", 1L), Map.of("amount", "x"))))
                .isInstanceOf(ValueMismatch.class).hasMessage("value 'x' does not fit column amount (decimal(38,18))");
    }
}
