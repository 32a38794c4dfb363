package dev.kbackfill.core.sink;

import java.math.BigDecimal;
import java.util.List;

import dev.kbackfill.core.record.Change;

/**
 * The one rule for numbers in a column narrower than the 64-bit ones kbackfill creates: a column of 8-, 16-, 24- or
 * 32-bit integers holds the whole numbers in its range; a 32-bit floating-point column holds a number that reads back
 * as the same number (exactly, or as the same shortest decimal: {@code 0.1} fits, {@code 3.141592653589793} does
 * not). A value that does not fit is never rounded or cut: where the job may change the table ({@code --create-table},
 * {@code --evolve-schema}) and the target can, the column is widened to its 64-bit type of the same family before the
 * batch that carries the value ({@link #needsWidening}); anything else is a poison record.
 */
public enum NarrowNumber {
    INT8(Byte.MIN_VALUE, Byte.MAX_VALUE),
    INT16(Short.MIN_VALUE, Short.MAX_VALUE),
    INT24(-(1 << 23), (1 << 23) - 1),
    INT32(Integer.MIN_VALUE, Integer.MAX_VALUE),
    FLOAT32(0, 0);

    private final long min;
    private final long max;

    NarrowNumber(long min, long max) {
        this.min = min;
        this.max = max;
    }

    /** Whether this is an integer width (else 32-bit floating point). */
    public boolean isInteger() {
        return this != FLOAT32;
    }

    /** The wider type of the same family, as the messages name it. */
    public String wider() {
        return isInteger() ? "64-bit integer" : "64-bit floating point";
    }

    /**
     * Whether a column of this width holds {@code value} as it is. Only numbers can fail: a value of another kind is
     * not this rule's to judge (the sink's conversion refuses text in a number column on its own).
     */
    public boolean holds(Object value) {
        if (isInteger()) {
            Long whole = whole(value);
            return whole == null || (whole >= min && whole <= max);
        }
        if (value instanceof Float) {
            return true;
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
                    || Double.isFinite(d.doubleValue()) && holdsAsFloat(d.doubleValue())
                    && new BigDecimal(Double.toString(d.doubleValue())).compareTo(d) == 0;
        }
        return true;
    }

    /** Whether a value this width cannot hold would fit its 64-bit type: the column is worth widening for it. */
    public boolean widens(Object value) {
        if (holds(value)) {
            return false;
        }
        if (isInteger()) {
            return true; // whole() only answers for whole numbers within 64 bits
        }
        return value instanceof Double || value instanceof Long || value instanceof Integer
                || value instanceof BigDecimal d && Double.isFinite(d.doubleValue());
    }

    /** Whether a change of {@code changes} carries a value of {@code field} that only the wider type holds. */
    public boolean needsWidening(List<Change> changes, String field) {
        for (Change c : changes) {
            if (c.values() != null && widens(c.values().get(field))) {
                return true;
            }
        }
        return false;
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
        return null;
    }
}
