package dev.kbackfill.spark;

import java.time.Instant;
import java.time.LocalDate;

import dev.kbackfill.sink.delta.DeltaEngineSupport;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * How the Spark engine's Delta writes map types: the Spark column types of tables it creates (from the lake types the
 * Delta sink creates them with), and Kernel's physical values as Spark's. Spark's column types become Kernel's as the
 * Delta sink reads any table's schema ({@link dev.kbackfill.sink.delta.DeltaEngineSupport#columnTypes}).
 */
final class SparkDeltaTypes {

    private SparkDeltaTypes() {
    }

    /** The Spark type of the column a lake table kbackfill creates gives values of {@code type}. */
    static DataType sparkType(dev.kbackfill.core.record.ColumnType type) {
        var lake = dev.kbackfill.sink.delta.DeltaEngineSupport.columnType(type);
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
