package dev.kbackfill.core.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.JsonText;
import org.junit.jupiter.api.Test;

/** Value equality as verification applies it to values read back from targets. */
class ValuesTest {

    @Test
    void numbersCompareByValueWhateverTheirType() {
        assertThat(Values.same(7L, new BigDecimal("7.00"))).isTrue();
        assertThat(Values.same(new BigDecimal("1.5"), new BigDecimal("1.50"))).isTrue();
        assertThat(Values.same(0.1, 0.1)).isTrue();
        assertThat(Values.same(0.1, 0.1f)).isTrue(); // a REAL column holds the value rounded to a float
        assertThat(Values.same(7L, 8L)).isFalse();
        assertThat(Values.same(new BigDecimal("1.5"), new BigDecimal("1.51"))).isFalse();
        assertThat(Values.same(7L, "7")).isTrue(); // a number written into a text column
    }

    @Test
    void booleansStoredAsZeroAndOneAreBooleans() {
        assertThat(Values.same(true, 1)).isTrue();
        assertThat(Values.same(false, 0L)).isTrue();
        assertThat(Values.same(true, 0)).isFalse();
        assertThat(Values.same(true, true)).isTrue();
    }

    @Test
    void jsonComparesStructurally() {
        assertThat(Values.same(new JsonText("{\"a\":1,\"b\":[1,2]}"), "{\"b\": [1, 2.0], \"a\": 1}")).isTrue();
        assertThat(Values.same(new JsonText("{\"a\":1}"), "{\"a\":2}")).isFalse();
        assertThat(Values.same(new JsonText("{\"a\":1}"), "{\"a\":1,\"c\":null}")).isFalse();
        assertThat(Values.same(new JsonText("{\"a\":1}"), "{\"a\":1}x")).as("text after the JSON value").isFalse();
        assertThat(Values.same(new JsonText("[1]"), "[1] [2]")).isFalse();
        assertThat(Values.same(Map.of("a", List.of(1, 2)), "{\"a\":[1,2]}")).isTrue();
    }

    @Test
    void everyStoredColumnIsJudgedAndOneWhoseFieldTheRecordLacksMustBeNull() {
        Map<String, Object> stored = new java.util.LinkedHashMap<>();
        stored.put("status", "c");
        stored.put("coupon", "X"); // left by an older record, or set by hand
        assertThat(Values.differing(Map.of("status", "c"), stored)).containsExactly("coupon");
        stored.put("coupon", null);
        assertThat(Values.differing(Map.of("status", "c"), stored)).isEmpty();
        assertThat(Values.differing(Map.of("Status", "c"), Map.of("status", "c"))).as("a folded column name").isEmpty();
        assertThat(Values.differing(Map.of("status", "c", "note", "n"), Map.of("status", "c")))
                .as("a field without a column is not judged").isEmpty();
        assertThat(Values.differing(null, stored)).as("a delete").isEmpty();
    }

    @Test
    void timesCompareByTheirMeaning() {
        Instant t = Instant.parse("2024-01-01T10:00:00.123Z");
        assertThat(Values.same(t, Instant.parse("2024-01-01T10:00:00.123Z"))).isTrue();
        assertThat(Values.same("2024-01-01T11:00:00.123+01:00", t)).isTrue();
        assertThat(Values.same(Instant.parse("2024-01-01T10:00:00.123456Z"), t)).isTrue(); // a millisecond column
        // a stored time finer than the record's is not the record's: a whole millisecond expected is not a wildcard
        assertThat(Values.same(t, Instant.parse("2024-01-01T10:00:00.123456Z"))).isFalse();
        assertThat(Values.same("2024-01-01T10:00:00.123Z", Instant.parse("2024-01-01T10:00:00.123001Z"))).isFalse();
        assertThat(Values.same(t, t.plusMillis(1))).isFalse();
        assertThat(Values.same(LocalDate.of(2024, 1, 2), LocalDate.of(2024, 1, 2))).isTrue();
        assertThat(Values.same("2024-01-02", LocalDate.of(2024, 1, 2))).isTrue();
    }

    @Test
    void textAndBytesCompareByContent() {
        assertThat(Values.same("a", "a")).isTrue();
        assertThat(Values.same("a", "A")).isFalse();
        assertThat(Values.same(new byte[] {1, 2}, new byte[] {1, 2})).isTrue();
        assertThat(Values.same(new byte[] {1, 2}, new byte[] {1, 3})).isFalse();
        assertThat(Values.same(null, null)).isTrue();
        assertThat(Values.same("a", null)).isFalse();
    }

    @Test
    void onlyFieldsTheTargetHasAreJudged() {
        assertThat(Values.differing(Map.of("a", 1L, "b", "x"), Map.of("a", 2L))).containsExactly("a");
        assertThat(Values.differing(Map.of("a", 1L, "b", "x"), Map.of("a", 1L))).isEmpty();
    }
}
