package dev.kbackfill.sink.lake;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Base64;

import dev.kbackfill.core.record.JsonText;

/**
 * Decoded values in the physical form a lake table's rows hold them: strings, {@code Long}/{@code Integer},
 * {@code Double}, {@code BigDecimal} at the column's scale, {@code Boolean}, {@code byte[]}, timestamps as long
 * microseconds since the epoch (UTC), dates as int days. A value that would lose digits is refused, never rounded;
 * times, UUIDs and nested values are text (nested values as JSON).
 */
public final class LakeValues {

    private LakeValues() {
    }

    /** A decoded value in the physical form of a column of {@code type}. */
    public static Object physical(Object value, LakeType type, String column) throws ValueMismatch {
        return physical(value, type, column, type);
    }

    /**
     * The same, naming the column's type in messages as the table format does ({@code shownType}: Delta's
     * {@code Decimal(38, 18)}, Iceberg's {@code decimal(38, 18)}).
     */
    public static Object physical(Object value, LakeType type, String column, Object shownType) throws ValueMismatch {
        if (value == null) {
            return null;
        }
        java.util.Optional<dev.kbackfill.core.sink.NarrowNumber> narrow = type.narrow();
        if (narrow.isPresent() && !narrow.get().holds(value)) {
            // never rounded nor cut: a poison record, or the column widened first to the 64-bit type of its family
            // (--evolve-schema, where the format can); no lake format widens a number column to a decimal
            java.util.Optional<dev.kbackfill.core.record.ColumnType> wider = narrow.get().widening(value);
            boolean sameFamily = wider.isPresent() && wider.get() != dev.kbackfill.core.record.ColumnType.DECIMAL;
            throw new ValueMismatch("value " + (value instanceof BigDecimal d ? d.toPlainString() : value)
                    + " does not fit column " + column + " (" + shownType + ")"
                    + wider.map(w -> "; " + dev.kbackfill.core.sink.NarrowNumber.named(w) + " column would hold it")
                    .orElse(""),
                    sameFamily ? narrow.get() : null);
        }
        try {
            switch (type.kind()) {
                case STRING:
                    if (value instanceof byte[] b) {
                        return Base64.getEncoder().encodeToString(b);
                    }
                    if (value instanceof BigDecimal d) {
                        return d.toPlainString();
                    }
                    return value instanceof JsonText j ? j.json() : value.toString();
                case LONG:
                case INT: {
                    // a whole double (2.0) is the whole number; anything else that is not a Long is refused below
                    long v = value instanceof Long l ? l : dev.kbackfill.core.sink.NarrowNumber.decimal(value).longValueExact();
                    return type.kind() == LakeType.Kind.INT ? (Object) Math.toIntExact(v) : (Object) v;
                }
                case DOUBLE:
                case FLOAT:
                    return ((Number) value).doubleValue();
                case DECIMAL: {
                    // a double as its shortest decimal, never cut to its whole part
                    BigDecimal d = dev.kbackfill.core.sink.NarrowNumber.decimal(value);
                    BigDecimal scaled = d.setScale(type.scale(), RoundingMode.UNNECESSARY);
                    if (scaled.precision() > type.precision()) {
                        throw new ValueMismatch("value " + d.toPlainString() + " does not fit column " + column + " ("
                                + shownType + ")");
                    }
                    return scaled;
                }
                case BOOLEAN:
                    return (Boolean) value;
                case BINARY:
                    return (byte[]) value;
                case TIMESTAMP: {
                    Instant i = value instanceof Instant in ? in : OffsetDateTime.parse(value.toString()).toInstant();
                    return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
                }
                case DATE: {
                    LocalDate d = value instanceof LocalDate ld ? ld : LocalDate.parse(value.toString());
                    return (int) d.toEpochDay();
                }
                default:
                    break;
            }
        } catch (ClassCastException | ArithmeticException | NullPointerException | DateTimeParseException e) {
            // fall through to the mismatch below
        }
        String shown = value instanceof JsonText j ? j.json() : String.valueOf(value);
        throw new ValueMismatch("value " + (value instanceof String ? "'" + shown + "'" : shown) + " does not fit column "
                + column + " (" + shownType + ")");
    }

    /**
     * Whether an expected value, converted as the sink writes it, is the stored one: byte arrays by content, decimals
     * by value whatever their scale, doubles bit for bit (NaN equal to NaN).
     */
    public static boolean samePhysical(Object expected, Object stored) {
        if (expected instanceof byte[] a && stored instanceof byte[] b) {
            return java.util.Arrays.equals(a, b);
        }
        if (expected instanceof java.math.BigDecimal a && stored instanceof java.math.BigDecimal b) {
            return a.compareTo(b) == 0;
        }
        if (expected instanceof Number a && stored instanceof Number b && (a instanceof Double || b instanceof Double)) {
            return Double.compare(a.doubleValue(), b.doubleValue()) == 0;
        }
        return java.util.Objects.equals(expected, stored);
    }

    /** A key column's value as keys compare: bytes as a ByteBuffer (equal by content), the rest as they are. */
    public static Object keyValue(Object v) {
        return v instanceof byte[] b ? java.nio.ByteBuffer.wrap(b) : v;
    }
}
