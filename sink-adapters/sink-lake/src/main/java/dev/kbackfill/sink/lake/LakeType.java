package dev.kbackfill.sink.lake;

/**
 * A lake table column's type as both lake formats store it, for turning decoded values into the physical values
 * rows hold: strings, 64- and 32-bit integers, doubles (and floats), decimals of a precision and scale, booleans,
 * binary, timestamps (long microseconds, UTC) and dates (int days).
 *
 * @param kind      the kind of value
 * @param precision a decimal's precision (0 otherwise)
 * @param scale     a decimal's scale (0 otherwise)
 */
public record LakeType(Kind kind, int precision, int scale) {

    /** The kinds of column both formats have. */
    public enum Kind { STRING, LONG, INT, DOUBLE, FLOAT, DECIMAL, BOOLEAN, BINARY, TIMESTAMP, DATE }

    /** The decimal type kbackfill creates columns with: every decoded decimal up to 20 integer digits fits. */
    public static final LakeType DECIMAL = new LakeType(Kind.DECIMAL, 38, 18);

    /** A type other than a decimal. */
    public static LakeType of(Kind kind) {
        return new LakeType(kind, 0, 0);
    }

    /** The column type a lake table kbackfill creates gives values of {@code type}. */
    public static LakeType forColumn(dev.kbackfill.core.record.ColumnType type) {
        return switch (type) {
            case STRING, TIME, UUID, JSON -> of(Kind.STRING);
            case LONG -> of(Kind.LONG);
            case DOUBLE -> of(Kind.DOUBLE);
            case DECIMAL -> DECIMAL;
            case BOOLEAN -> of(Kind.BOOLEAN);
            case BYTES -> of(Kind.BINARY);
            case TIMESTAMP -> of(Kind.TIMESTAMP);
            case DATE -> of(Kind.DATE);
        };
    }

    /**
     * The width of a number column of limited range ({@link dev.kbackfill.core.sink.NarrowNumber}: 32- and 64-bit
     * integers and floating point); empty for decimals and non-numbers.
     */
    public java.util.Optional<dev.kbackfill.core.sink.NarrowNumber> narrow() {
        return java.util.Optional.ofNullable(switch (kind) {
            case INT -> dev.kbackfill.core.sink.NarrowNumber.INT32;
            case LONG -> dev.kbackfill.core.sink.NarrowNumber.INT64;
            case FLOAT -> dev.kbackfill.core.sink.NarrowNumber.FLOAT32;
            case DOUBLE -> dev.kbackfill.core.sink.NarrowNumber.FLOAT64;
            default -> null;
        });
    }

    @Override
    public String toString() {
        return kind == Kind.DECIMAL ? "decimal(" + precision + "," + scale + ")" : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
