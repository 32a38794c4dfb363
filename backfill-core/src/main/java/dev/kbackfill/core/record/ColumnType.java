package dev.kbackfill.core.record;

/**
 * The closed set of column types a decoded value maps to. Sinks map each to their own type (for example
 * {@code DECIMAL} to PostgreSQL's {@code numeric}); nested values are {@code JSON} text.
 */
public enum ColumnType {
    STRING, LONG, DOUBLE, DECIMAL, BOOLEAN, BYTES, TIMESTAMP, DATE, TIME, UUID, JSON;

    /**
     * The type that holds values of both, for a column that sees both: two kinds of number make an exact decimal
     * (a whole number and a double, each held as it is: no digit of {@code 12345678901234567} is lost to a double,
     * and a double is its shortest decimal), anything else is JSON text.
     */
    public ColumnType widen(ColumnType other) {
        if (this == other) {
            return this;
        }
        if (isNumeric() && other.isNumeric()) {
            return DECIMAL;
        }
        return JSON;
    }

    private boolean isNumeric() {
        return this == LONG || this == DOUBLE || this == DECIMAL;
    }
}
