package dev.kbackfill.sink.delta;


import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.sink.lake.LakeType;
import dev.kbackfill.sink.lake.LakeValues;
import dev.kbackfill.sink.lake.ValueMismatch;
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

    static final DecimalType DECIMAL = new DecimalType(LakeType.DECIMAL.precision(), LakeType.DECIMAL.scale());

    private DeltaTypes() {
    }

    static DataType of(ColumnType type) {
        return of(LakeType.forColumn(type));
    }

    /** A decoded value in the physical form of a column of {@code type}. */
    static Object physical(Object value, DataType type, String column) throws ValueMismatch {
        LakeType lake = lakeTypeOrNull(type);
        if (lake == null) {
            throw new ValueMismatch("value " + value + " does not fit column " + column + " (" + type + ")");
        }
        return LakeValues.physical(value, lake, column, type);
    }

    /** The lake type of a Delta column type, or null for one kbackfill does not write (nested types). */
    static LakeType lakeTypeOrNull(DataType type) {
        try {
            return lakeType(type);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The lake type of a Delta column type; nested types have none. */
    static LakeType lakeType(DataType type) {
        if (type instanceof StringType) {
            return LakeType.of(LakeType.Kind.STRING);
        }
        if (type instanceof LongType) {
            return LakeType.of(LakeType.Kind.LONG);
        }
        if (type instanceof IntegerType) {
            return LakeType.of(LakeType.Kind.INT);
        }
        if (type instanceof DoubleType) {
            return LakeType.of(LakeType.Kind.DOUBLE);
        }
        if (type instanceof FloatType) {
            return LakeType.of(LakeType.Kind.FLOAT);
        }
        if (type instanceof DecimalType dt) {
            return new LakeType(LakeType.Kind.DECIMAL, dt.getPrecision(), dt.getScale());
        }
        if (type instanceof BooleanType) {
            return LakeType.of(LakeType.Kind.BOOLEAN);
        }
        if (type instanceof BinaryType) {
            return LakeType.of(LakeType.Kind.BINARY);
        }
        if (type instanceof TimestampType || type instanceof TimestampNTZType) {
            return LakeType.of(LakeType.Kind.TIMESTAMP);
        }
        if (type instanceof DateType) {
            return LakeType.of(LakeType.Kind.DATE);
        }
        throw new IllegalArgumentException("kbackfill does not write Delta columns of type " + type);
    }

    /** The Delta column type of a lake type. */
    static DataType of(LakeType type) {
        return switch (type.kind()) {
            case STRING -> StringType.STRING;
            case LONG -> LongType.LONG;
            case INT -> IntegerType.INTEGER;
            case DOUBLE -> DoubleType.DOUBLE;
            case FLOAT -> FloatType.FLOAT;
            case DECIMAL -> new DecimalType(type.precision(), type.scale());
            case BOOLEAN -> BooleanType.BOOLEAN;
            case BINARY -> BinaryType.BINARY;
            case TIMESTAMP -> TimestampType.TIMESTAMP;
            case DATE -> DateType.DATE;
        };
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
