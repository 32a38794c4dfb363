package dev.kbackfill.sink.iceberg;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import dev.kbackfill.sink.lake.LakeType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Column types and values between the lake sinks' physical values (timestamps as long microseconds UTC, dates as int
 * days, bytes as arrays) and Iceberg's values: the internal ones its writer takes ({@link #toInternal}) and the
 * generic or internal ones its readers give ({@code OffsetDateTime}, {@code LocalDate}, {@code ByteBuffer}, ...).
 * Iceberg types the lake sinks have no value for (time, UUID, fixed, nested) have no lake type: such a column is
 * left null, and a field written into it is refused.
 */
final class IcebergTypes {

    private IcebergTypes() {
    }

    /** The Iceberg type of a column kbackfill creates. */
    static Type of(LakeType type) {
        return switch (type.kind()) {
            case STRING -> Types.StringType.get();
            case LONG -> Types.LongType.get();
            case INT -> Types.IntegerType.get();
            case DOUBLE -> Types.DoubleType.get();
            case FLOAT -> Types.FloatType.get();
            case DECIMAL -> Types.DecimalType.of(type.precision(), type.scale());
            case BOOLEAN -> Types.BooleanType.get();
            case BINARY -> Types.BinaryType.get();
            case TIMESTAMP -> Types.TimestampType.withZone();
            case DATE -> Types.DateType.get();
        };
    }

    /** The lake type of an Iceberg column, if kbackfill writes such columns. */
    static Optional<LakeType> lakeType(Type type) {
        return Optional.ofNullable(switch (type.typeId()) {
            case STRING -> LakeType.of(LakeType.Kind.STRING);
            case LONG -> LakeType.of(LakeType.Kind.LONG);
            case INTEGER -> LakeType.of(LakeType.Kind.INT);
            case DOUBLE -> LakeType.of(LakeType.Kind.DOUBLE);
            case FLOAT -> LakeType.of(LakeType.Kind.FLOAT);
            case DECIMAL -> new LakeType(LakeType.Kind.DECIMAL, ((Types.DecimalType) type).precision(),
                    ((Types.DecimalType) type).scale());
            case BOOLEAN -> LakeType.of(LakeType.Kind.BOOLEAN);
            case BINARY -> LakeType.of(LakeType.Kind.BINARY);
            case TIMESTAMP -> LakeType.of(LakeType.Kind.TIMESTAMP);
            case DATE -> LakeType.of(LakeType.Kind.DATE);
            default -> null;
        });
    }

    /**
     * A physical value as Iceberg's internal rows hold it in a column of {@code type}, which its Parquet writer
     * writes without a conversion: timestamps as long microseconds and dates as int days (as physical values already
     * are), floats as {@code Float}, bytes as a {@code ByteBuffer}; strings, decimals and booleans as they are.
     */
    static Object toInternal(Object physical, Type.TypeID type) {
        if (physical == null) {
            return null;
        }
        return switch (type) {
            case LONG, TIMESTAMP -> physical instanceof Long l ? l : (Object) ((Number) physical).longValue();
            case INTEGER, DATE -> physical instanceof Integer i ? i : (Object) ((Number) physical).intValue();
            case DOUBLE -> physical instanceof Double d ? d : (Object) ((Number) physical).doubleValue();
            case FLOAT -> ((Number) physical).floatValue();
            case BINARY -> physical instanceof ByteBuffer b ? b : ByteBuffer.wrap((byte[]) physical);
            default -> physical; // strings, decimals, booleans
        };
    }

    /** A generic (or internal) record's value in physical form: the inverse of {@link #toInternal}. */
    static Object physical(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof OffsetDateTime t) {
            Instant i = t.toInstant();
            return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
        }
        if (value instanceof LocalDateTime t) {
            Instant i = t.toInstant(ZoneOffset.UTC);
            return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
        }
        if (value instanceof LocalDate d) {
            return (int) d.toEpochDay();
        }
        if (value instanceof ByteBuffer b) {
            byte[] bytes = new byte[b.remaining()];
            b.duplicate().get(bytes);
            return bytes;
        }
        if (value instanceof Float f) {
            return f.doubleValue();
        }
        if (value instanceof CharSequence s) {
            return s.toString();
        }
        if (value instanceof BigDecimal || value instanceof Number || value instanceof Boolean) {
            return value;
        }
        return value.toString();
    }
}
