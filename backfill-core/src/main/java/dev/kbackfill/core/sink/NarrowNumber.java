package dev.kbackfill.core.sink;

import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.ColumnType;

/**
 * The one rule for numbers in a column of limited range, whole numbers or binary floating point (every number column
 * but an exact decimal): a column of 8-, 16-, 24-, 32- or 64-bit integers holds the whole numbers in its range; a
 * 32- or 64-bit floating-point column holds a number that reads back as the same number (exactly, or as the same
 * shortest decimal: {@code 0.1} fits a 32-bit float, {@code 3.141592653589793} does not; a 64-bit one holds every
 * double, and a whole number or decimal only where the double it becomes reads back as it: not
 * {@code 9007199254740993}). A value that does not fit is never rounded or cut: where the job may change the table
 * ({@code --create-table}, {@code --evolve-schema}) and the target can, the column is widened before the batch that
 * carries the value to the narrowest type that holds it ({@link #widening}: the 64-bit type of its family, else an
 * exact decimal); anything else is a poison record.
 */
public enum NarrowNumber {
    INT8(Byte.MIN_VALUE, Byte.MAX_VALUE),
    INT16(Short.MIN_VALUE, Short.MAX_VALUE),
    INT24(-(1 << 23), (1 << 23) - 1),
    INT32(Integer.MIN_VALUE, Integer.MAX_VALUE),
    INT64(Long.MIN_VALUE, Long.MAX_VALUE),
    FLOAT32(0, 0),
    FLOAT64(0, 0);

    private final long min;
    private final long max;

    NarrowNumber(long min, long max) {
        this.min = min;
        this.max = max;
    }

    /** Whether this is an integer width (else floating point). */
    public boolean isInteger() {
        return this != FLOAT32 && this != FLOAT64;
    }

    /** The type a value this width cannot hold widens it to ({@link #widening}), as messages name it. */
    public static String named(ColumnType wider) {
        return switch (wider) {
            case LONG -> "a 64-bit integer";
            case DOUBLE -> "a 64-bit floating point";
            default -> "an exact decimal";
        };
    }

    /**
     * Whether a column of this width holds {@code value} as it is. Only numbers can fail: a value of another kind is
     * not this rule's to judge (the sink's conversion refuses text in a number column on its own).
     */
    public boolean holds(Object value) {
        if (!(value instanceof Number)) {
            return true;
        }
        if (isInteger()) {
            Long whole = whole(value);
            return whole != null && whole >= min && whole <= max;
        }
        if (value instanceof Float) {
            return true;
        }
        if (this == FLOAT64) {
            return holdsAsDouble(value);
        }
        if (value instanceof Double d) {
            return holdsAsFloat(d);
        }
        if (value instanceof Long || value instanceof Integer) {
            long l = ((Number) value).longValue();
            return (long) (float) l == l;
        }
        if (value instanceof BigDecimal d) {
            float f = d.floatValue();
            // the decimal as a float reads back as the same decimal, or it is a double that a float holds
            return Float.isFinite(f) && new BigDecimal(Float.toString(f)).compareTo(d) == 0
                    || holdsAsDouble(d) && holdsAsFloat(d.doubleValue());
        }
        return true;
    }

    /**
     * The type a column of this width must become to hold {@code value}, where it cannot: the 64-bit type of its
     * family ({@link ColumnType#LONG}, {@link ColumnType#DOUBLE}) where that holds it, else an exact
     * {@link ColumnType#DECIMAL}; empty where the value fits, or where no number column holds it (NaN, infinities in
     * an integer column).
     */
    public Optional<ColumnType> widening(Object value) {
        if (holds(value)) {
            return Optional.empty();
        }
        if (this != INT64 && this != FLOAT64 && (isInteger() ? INT64 : FLOAT64).holds(value)) {
            return Optional.of(isInteger() ? ColumnType.LONG : ColumnType.DOUBLE);
        }
        return decimal(value) == null ? Optional.empty() : Optional.of(ColumnType.DECIMAL);
    }

    /** Whether a value this width cannot hold would fit a wider number column: the column is worth widening for it. */
    public boolean widens(Object value) {
        return widening(value).isPresent();
    }

    /**
     * The type column {@code field} must become for the changes' values of it to fit ({@link #widening}): the
     * widest any of them needs, an exact decimal over a 64-bit type; empty where all fit.
     */
    public Optional<ColumnType> widening(List<Change> changes, String field) {
        Optional<ColumnType> widest = Optional.empty();
        for (Change c : changes) {
            if (c.values() == null) {
                continue;
            }
            Optional<ColumnType> w = widening(c.values().get(field));
            if (w.isPresent() && (widest.isEmpty() || w.get() == ColumnType.DECIMAL)) {
                widest = w;
            }
        }
        return widest;
    }

    /** Whether a change of {@code changes} carries a value of {@code field} that only a wider type holds. */
    public boolean needsWidening(List<Change> changes, String field) {
        return widening(changes, field).isPresent();
    }

    /** The number as an exact decimal (a double as its shortest decimal), or null for NaN, infinities and non-numbers. */
    public static BigDecimal decimal(Object value) {
        if (value instanceof BigDecimal d) {
            return d;
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return BigDecimal.valueOf(((Number) value).longValue());
        }
        if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            return Double.isFinite(d) ? new BigDecimal(value instanceof Float f ? Float.toString(f) : Double.toString(d))
                    : null;
        }
        return null;
    }

    /** Whether a double holds the number: reads back as it, exactly or as its shortest decimal. */
    private static boolean holdsAsDouble(Object value) {
        if (value instanceof Double || value instanceof Float) {
            return true;
        }
        if (value instanceof Long || value instanceof Integer) {
            long l = ((Number) value).longValue();
            return l != Long.MAX_VALUE && (long) (double) l == l; // (double) MAX_VALUE is 2^63, cast back to MAX_VALUE
        }
        if (value instanceof BigDecimal d) {
            double v = d.doubleValue();
            return Double.isFinite(v) && new BigDecimal(Double.toString(v)).compareTo(d) == 0;
        }
        return true;
    }

    private static boolean holdsAsFloat(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return true;
        }
        float f = (float) d;
        if (Float.isInfinite(f)) {
            return false;
        }
        // exactly (a float read as a double), or as the same shortest decimal (0.1 written into a float column)
        return f == d || new BigDecimal(Float.toString(f)).compareTo(new BigDecimal(Double.toString(d))) == 0;
    }

    /** A whole number as a long, or null for anything else (fractions, numbers beyond 64 bits, non-numbers). */
    private static Long whole(Object value) {
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof BigDecimal d) {
            try {
                return d.longValueExact();
            } catch (ArithmeticException e) {
                return null;
            }
        }
        if (value instanceof Double || value instanceof Float) {
            double v = ((Number) value).doubleValue();
            // a double that is a whole number within 64 bits (2.0); 2^63 itself is not
            return Double.isFinite(v) && v == Math.rint(v) && Math.abs(v) < 0x1p63 ? (Long) (long) v : null;
        }
        return null;
    }
}
