package dev.kbackfill.spark;

import java.time.Instant;
import java.time.LocalDate;

import dev.kbackfill.sink.delta.DeltaEngineSupport;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/** How the Spark engine's Delta writes map types: the column types of tables it creates, Spark's to Kernel's, Kernel's values to Spark's. */
final class SparkDeltaTypes {

    private SparkDeltaTypes() {
    }

    /** The Spark type of the column a lake table kbackfill creates gives values of {@code type}. */
    static DataType sparkType(dev.kbackfill.core.record.ColumnType type) {
        dev.kbackfill.sink.lake.LakeType lake = dev.kbackfill.sink.lake.LakeType.forColumn(type);
        return switch (lake.kind()) {
            case STRING -> DataTypes.StringType;
            case LONG -> DataTypes.LongType;
            case INT -> DataTypes.IntegerType;
            case DOUBLE -> DataTypes.DoubleType;
            case FLOAT -> DataTypes.FloatType;
            case DECIMAL -> DataTypes.createDecimalType(lake.precision(), lake.scale());
            case BOOLEAN -> DataTypes.BooleanType;
            case BINARY -> DataTypes.BinaryType;
            case TIMESTAMP -> DataTypes.TimestampType;
            case DATE -> DataTypes.DateType;
        };
    }

    /** Delta Kernel's type for a Spark column type: the physical form of values is Kernel's ({@link DeltaEngineSupport}). */
    static io.delta.kernel.types.DataType kernelType(DataType t) {
        if (t instanceof StringType) {
            return io.delta.kernel.types.StringType.STRING;
        }
        if (t instanceof LongType) {
            return io.delta.kernel.types.LongType.LONG;
        }
        if (t instanceof IntegerType) {
            return io.delta.kernel.types.IntegerType.INTEGER;
        }
        if (t instanceof DoubleType) {
            return io.delta.kernel.types.DoubleType.DOUBLE;
        }
        if (t instanceof FloatType) {
            return io.delta.kernel.types.FloatType.FLOAT;
        }
        if (t instanceof DecimalType d) {
            return new io.delta.kernel.types.DecimalType(d.precision(), d.scale());
        }
        if (t instanceof BooleanType) {
            return io.delta.kernel.types.BooleanType.BOOLEAN;
        }
        if (t instanceof BinaryType) {
            return io.delta.kernel.types.BinaryType.BINARY;
        }
        if (t instanceof TimestampType) {
            return io.delta.kernel.types.TimestampType.TIMESTAMP;
        }
        if (t instanceof TimestampNTZType) {
            return io.delta.kernel.types.TimestampNTZType.TIMESTAMP_NTZ;
        }
        if (t instanceof DateType) {
            return io.delta.kernel.types.DateType.DATE;
        }
        throw new IllegalStateException("kbackfill does not write Delta columns of type " + t.simpleString());
    }

    /** A physical value (Kernel's form) as Spark's external type for the column. */
    static Object spark(Object physical, DataType t) {
        if (physical == null) {
            return null;
        }
        if (t instanceof TimestampType) {
            long micros = (Long) physical;
            return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
        }
        if (t instanceof TimestampNTZType) {
            long micros = (Long) physical;
            return java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                    (int) Math.floorMod(micros, 1_000_000L) * 1000, java.time.ZoneOffset.UTC);
        }
        if (t instanceof DateType) {
            return LocalDate.ofEpochDay((Integer) physical);
        }
        if (t instanceof FloatType) {
            return ((Number) physical).floatValue();
        }
        return physical;
    }
}
