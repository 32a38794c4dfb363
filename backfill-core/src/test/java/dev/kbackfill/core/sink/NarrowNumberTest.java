package dev.kbackfill.core.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.ColumnType;
import org.junit.jupiter.api.Test;

class NarrowNumberTest {

    private final Random random = new Random(20261202);

    @Test
    void anIntegerColumnHoldsExactlyTheWholeNumbersOfItsRangeAndWidensForTheRest() {
        for (NarrowNumber width : List.of(NarrowNumber.INT8, NarrowNumber.INT16, NarrowNumber.INT24, NarrowNumber.INT32)) {
            int bits = switch (width) {
                case INT8 -> 8;
                case INT16 -> 16;
                case INT24 -> 24;
                default -> 32;
            };
            long max = (1L << (bits - 1)) - 1;
            long min = -(1L << (bits - 1));
            for (long v : new long[] {min, max, 0, -1, 1}) {
                assertThat(width.holds(v)).as(width + " " + v).isTrue();
                assertThat(width.holds(BigDecimal.valueOf(v))).isTrue();
                assertThat(width.widens(v)).isFalse();
            }
            for (long v : new long[] {max + 1, min - 1, Long.MAX_VALUE, Long.MIN_VALUE}) {
                assertThat(width.holds(v)).as(width + " " + v).isFalse();
                assertThat(width.widens(v)).isTrue();
                assertThat(width.widens(new BigDecimal(v).setScale(2))).as("a whole decimal").isTrue();
            }
            for (int i = 0; i < 10_000; i++) {
                long v = random.nextLong() >> random.nextInt(64);
                assertThat(width.holds(v)).isEqualTo(v >= min && v <= max);
                assertThat(width.widens(v)).isEqualTo(v < min || v > max);
            }
            // not whole numbers, or beyond 64 bits: only an exact decimal holds them
            for (Object v : List.of(new BigDecimal("1.5"), new BigDecimal("1e30"), 2.5, 0.1f)) {
                assertThat(width.holds(v)).as(width + " " + v).isFalse();
                assertThat(width.widening(v)).as(width + " " + v).contains(ColumnType.DECIMAL);
            }
            assertThat(width.widening(max + 1)).contains(ColumnType.LONG);
            assertThat(width.holds(2.0)).as("a whole double").isTrue();
            assertThat(width.widening(Double.NaN)).as("no number column holds NaN as a whole number").isEmpty();
            assertThat(width.holds("text")).isTrue();
            assertThat(width.holds(null)).isTrue();
        }
    }

    @Test
    void aFloatColumnHoldsEveryFloatAndEveryNumberThatReadsBackAsTheSameNumber() {
        NarrowNumber f = NarrowNumber.FLOAT32;
        for (int i = 0; i < 10_000; i++) {
            float v = Float.intBitsToFloat(random.nextInt());
            if (Float.isNaN(v)) {
                continue;
            }
            assertThat(f.holds((double) v)).as("float %s read as a double", v).isTrue();
            assertThat(f.holds(v)).isTrue();
            if (Float.isFinite(v)) {
                assertThat(f.holds(new BigDecimal(Float.toString(v)))).as("float %s as its decimal", v).isTrue();
            }
        }
        for (String text : List.of("0.1", "0.5", "1e10", "-2.25", "123.456", "0")) {
            assertThat(f.holds(new BigDecimal(text))).as(text).isTrue();
            assertThat(f.holds(Double.parseDouble(text))).as(text).isTrue();
        }
        for (int i = 0; i < 10_000; i++) {
            double d = random.nextDouble() * Math.pow(10, random.nextInt(20) - 10);
            boolean asFloat = (double) (float) d == d
                    || new BigDecimal(Float.toString((float) d)).compareTo(new BigDecimal(Double.toString(d))) == 0;
            assertThat(f.holds(d)).isEqualTo(asFloat);
            assertThat(f.widens(d)).isEqualTo(!asFloat);
        }
        assertThat(f.holds(3.141592653589793)).isFalse();
        assertThat(f.widens(3.141592653589793)).isTrue();
        assertThat(f.holds(1e300)).as("beyond a float's range").isFalse();
        assertThat(f.holds(16_777_216L)).isTrue();
        assertThat(f.holds(16_777_217L)).as("a whole number a float rounds").isFalse();
        assertThat(f.holds(new BigDecimal("0.10000000000001"))).isFalse();
        assertThat(f.holds(Double.NaN)).isTrue();
        assertThat(f.holds(Double.POSITIVE_INFINITY)).isTrue();
    }

    @Test
    void aSixtyFourBitIntegerColumnHoldsWholeNumbersOnlyAndWidensToAnExactDecimal() {
        NarrowNumber w = NarrowNumber.INT64;
        for (Object v : List.of(Long.MAX_VALUE, Long.MIN_VALUE, 0L, new BigDecimal("9007199254740993"), 4.0)) {
            assertThat(w.holds(v)).as("%s", v).isTrue();
        }
        for (Object v : List.of(new BigDecimal("2.5"), 2.5, new BigDecimal("9223372036854775808"), 0x1p63)) {
            assertThat(w.holds(v)).as("%s", v).isFalse();
            assertThat(w.widening(v)).as("%s", v).contains(ColumnType.DECIMAL);
        }
    }

    @Test
    void aDoubleColumnHoldsEveryDoubleAndOnlyTheNumbersADoubleReadsBackAs() {
        NarrowNumber d = NarrowNumber.FLOAT64;
        for (int i = 0; i < 10_000; i++) {
            double v = Double.longBitsToDouble(random.nextLong());
            assertThat(d.holds(v)).isTrue();
            if (Double.isFinite(v)) {
                assertThat(d.holds(new BigDecimal(Double.toString(v)))).as("%s as its decimal", v).isTrue();
            }
            long l = random.nextLong() >> random.nextInt(64);
            assertThat(d.holds(l)).as("%s", l).isEqualTo(new BigDecimal(l).compareTo(new BigDecimal((double) l)) == 0);
        }
        assertThat(d.holds(9_007_199_254_740_992L)).isTrue();
        assertThat(d.holds(9_007_199_254_740_993L)).as("2^53 + 1 is rounded by a double").isFalse();
        assertThat(d.widening(9_007_199_254_740_993L)).contains(ColumnType.DECIMAL);
        assertThat(d.holds(new BigDecimal("12345678901234567.5"))).isFalse();
        assertThat(d.holds(new BigDecimal("0.1"))).as("0.1 reads back from a double as 0.1").isTrue();
        assertThat(d.holds(Long.MAX_VALUE)).isFalse();
        assertThat(NarrowNumber.FLOAT32.widening(3.141592653589793)).contains(ColumnType.DOUBLE);
        assertThat(NarrowNumber.FLOAT32.widening(9_007_199_254_740_993L)).contains(ColumnType.DECIMAL);
    }

    @Test
    void aBatchWidensAColumnToTheWidestTypeAnyOfItsValuesNeeds() {
        Change big = new Change(Map.of("k", 1L), Map.of("n", 5_000_000_000L), 0, 0, 0);
        Change fraction = new Change(Map.of("k", 2L), Map.of("n", new BigDecimal("2.5")), 0, 1, 0);
        assertThat(NarrowNumber.INT32.widening(List.of(big), "n")).contains(ColumnType.LONG);
        assertThat(NarrowNumber.INT32.widening(List.of(big, fraction), "n")).contains(ColumnType.DECIMAL);
        assertThat(NarrowNumber.INT32.widening(List.of(fraction, big), "n")).contains(ColumnType.DECIMAL);
    }

    @Test
    void twoKindsOfNumberInOneFieldMakeAnExactDecimalColumn() {
        assertThat(ColumnType.LONG.widen(ColumnType.DOUBLE)).isEqualTo(ColumnType.DECIMAL);
        assertThat(ColumnType.DOUBLE.widen(ColumnType.DECIMAL)).isEqualTo(ColumnType.DECIMAL);
        assertThat(ColumnType.LONG.widen(ColumnType.DECIMAL)).isEqualTo(ColumnType.DECIMAL);
        assertThat(ColumnType.DOUBLE.widen(ColumnType.DOUBLE)).isEqualTo(ColumnType.DOUBLE);
        assertThat(ColumnType.LONG.widen(ColumnType.STRING)).isEqualTo(ColumnType.JSON);
    }

    @Test
    void aBatchNeedsWideningWhenOneOfItsChangesCarriesAValueOnlyTheWiderTypeHolds() {
        Change small = new Change(Map.of("k", 1L), Map.of("n", 5L), 0, 0, 0);
        Change big = new Change(Map.of("k", 2L), Map.of("n", 5_000_000_000L), 0, 1, 0);
        Change tombstone = new Change(Map.of("k", 3L), null, 0, 2, 0);
        assertThat(NarrowNumber.INT32.needsWidening(List.of(small, tombstone), "n")).isFalse();
        assertThat(NarrowNumber.INT32.needsWidening(List.of(small, big, tombstone), "n")).isTrue();
        assertThat(NarrowNumber.INT32.needsWidening(List.of(small, big), "other")).isFalse();
    }
}
