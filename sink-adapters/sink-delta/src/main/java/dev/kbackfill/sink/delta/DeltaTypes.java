package dev.kbackfill.sink.delta;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Base64;

import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.record.JsonText;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.types.BinaryType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;

/**
 * Column types and values between kbackfill's decoded values and Delta. Timestamps are long microseconds (UTC),
 * dates int days. Decimals are {@code decimal(38,18)}: a value that would lose digits there is refused, never
 * rounded. Times, UUIDs and nested values are strings (Delta has no time type; nested values are JSON text).
 */
final class DeltaTypes {

    static final DecimalType DECIMAL = new DecimalType(38, 18);

    /** A value that does not fit its column. */
    static final class Mismatch extends Exception {
        Mismatch(String message) {
            super(message);
        }
    }

    private DeltaTypes() {
    }

    static DataType of(ColumnType type) {
        return switch (type) {
            case STRING, TIME, UUID, JSON -> StringType.STRING;
            case LONG -> LongType.LONG;
            case DOUBLE -> DoubleType.DOUBLE;
            case DECIMAL -> DECIMAL;
            case BOOLEAN -> BooleanType.BOOLEAN;
            case BYTES -> BinaryType.BINARY;
            case TIMESTAMP -> TimestampType.TIMESTAMP;
            case DATE -> DateType.DATE;
        };
    }

    /** A decoded value in the physical form of a column of {@code type}. */
    static Object physical(Object value, DataType type, String column) throws Mismatch {
        if (value == null) {
            return null;
        }
        try {
            if (type instanceof StringType) {
                if (value instanceof byte[] b) {
                    return Base64.getEncoder().encodeToString(b);
                }
                if (value instanceof BigDecimal d) {
                    return d.toPlainString();
                }
                return value instanceof JsonText j ? j.json() : value.toString();
            }
            if (type instanceof LongType || type instanceof IntegerType) {
                long v = value instanceof BigDecimal d ? d.longValueExact() : ((Long) value);
                return type instanceof IntegerType ? Math.toIntExact(v) : v;
            }
            if (type instanceof DoubleType || type instanceof FloatType) {
                return ((Number) value).doubleValue();
            }
            if (type instanceof DecimalType dt) {
                BigDecimal d = value instanceof BigDecimal b ? b : BigDecimal.valueOf(((Number) value).longValue());
                BigDecimal scaled = d.setScale(dt.getScale(), RoundingMode.UNNECESSARY);
                if (scaled.precision() > dt.getPrecision()) {
                    throw new Mismatch("value " + d.toPlainString() + " does not fit column " + column + " (" + dt + ")");
                }
                return scaled;
            }
            if (type instanceof BooleanType) {
                return (Boolean) value;
            }
            if (type instanceof BinaryType) {
                return (byte[]) value;
            }
            if (type instanceof TimestampType || type instanceof TimestampNTZType) {
                Instant i = value instanceof Instant in ? in : OffsetDateTime.parse(value.toString()).toInstant();
                return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
            }
            if (type instanceof DateType) {
                LocalDate d = value instanceof LocalDate ld ? ld : LocalDate.parse(value.toString());
                return (int) d.toEpochDay();
            }
        } catch (ClassCastException | ArithmeticException | DateTimeParseException e) {
            // fall through to the mismatch below
        }
        String shown = value instanceof JsonText j ? j.json() : String.valueOf(value);
        throw new Mismatch("value " + (value instanceof String ? "'" + shown + "'" : shown) + " does not fit column "
                + column + " (" + type + ")");
    }

    /** A value read from a vector, in physical form. */
    static Object read(ColumnVector v, int row) {
        if (v.isNullAt(row)) {
            return null;
        }
        DataType t = v.getDataType();
        if (t instanceof StringType) {
            return v.getString(row);
        }
        if (t instanceof LongType || t instanceof TimestampType || t instanceof TimestampNTZType) {
            return v.getLong(row);
        }
        if (t instanceof IntegerType || t instanceof DateType) {
            return v.getInt(row);
        }
        if (t instanceof DoubleType) {
            return v.getDouble(row);
        }
        if (t instanceof FloatType) {
            return (double) v.getFloat(row);
        }
        if (t instanceof DecimalType) {
            return v.getDecimal(row);
        }
        if (t instanceof BooleanType) {
            return v.getBoolean(row);
        }
        if (t instanceof BinaryType) {
            return v.getBinary(row);
        }
        throw new IllegalStateException("kbackfill does not read Delta columns of type " + t);
    }
}
