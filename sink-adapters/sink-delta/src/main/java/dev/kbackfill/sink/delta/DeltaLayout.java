package dev.kbackfill.sink.delta;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.ByteType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FieldMetadata;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.ShortType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;

/**
 * How a Delta table's logical rows become the data of its files, written by kbackfill itself where Kernel's own
 * transformation refuses (Kernel 4.4 writes no column-mapped table): the partition columns leave the data (their
 * values go in the file's directory and its add action), and every other column is written under its physical name
 * with its field id where the table maps columns ({@code delta.columnMapping.mode} name or id), as Delta's own writers
 * do. One layout per table schema.
 */
final class DeltaLayout {

    private static final String PHYSICAL_NAME = "delta.columnMapping.physicalName";
    private static final String COLUMN_ID = "delta.columnMapping.id";
    private static final String PARQUET_FIELD_ID = "parquet.field.id";

    private final StructType logical;
    private final List<String> partitionColumns;
    private final int[] partitionOrdinals;
    private final StructType physical;
    /** The logical column names of the physical columns, in order. */
    private final List<String> dataColumns;

    DeltaLayout(StructType logical, List<String> partitionColumns) {
        this.logical = logical;
        this.partitionColumns = List.copyOf(partitionColumns);
        this.partitionOrdinals = new int[partitionColumns.size()];
        for (int i = 0; i < partitionOrdinals.length; i++) {
            partitionOrdinals[i] = indexOfIgnoringCase(logical, partitionColumns.get(i));
        }
        StructType p = new StructType();
        List<String> data = new ArrayList<>();
        for (StructField f : logical.fields()) {
            if (partitionColumns.stream().noneMatch(f.getName()::equalsIgnoreCase)) {
                p = p.add(physical(f));
                data.add(f.getName());
            }
        }
        this.physical = p;
        this.dataColumns = List.copyOf(data);
    }

    /** Whether the table is partitioned. */
    boolean partitioned() {
        return partitionOrdinals.length > 0;
    }

    /** The partition columns' values of a logical row, as a list (equal for rows of one partition). */
    List<Object> partitionOf(Object[] row) {
        List<Object> values = new ArrayList<>(partitionOrdinals.length);
        for (int o : partitionOrdinals) {
            values.add(row[o]);
        }
        return values;
    }

    /** The partition values of a file whose rows have {@code values} ({@link #partitionOf}), by logical name. */
    Map<String, Literal> partitionValues(List<Object> values) {
        Map<String, Literal> literals = new LinkedHashMap<>();
        for (int i = 0; i < partitionOrdinals.length; i++) {
            StructField f = logical.at(partitionOrdinals[i]);
            literals.put(f.getName(), literal(values.get(i), f.getDataType()));
        }
        return literals;
    }

    /** The partition values of a logical batch whose rows all belong to one partition (a file's), from its first row. */
    Map<String, Literal> partitionValues(ColumnarBatch batch) {
        List<Object> values = new ArrayList<>();
        for (String column : partitionColumns) {
            int at = indexOfIgnoringCase(batch.getSchema(), column);
            values.add(batch.getSize() == 0 ? null : DeltaTypes.read(batch.getColumnVector(at), 0));
        }
        return partitionValues(values);
    }

    /** A logical batch (the table's columns by name) as the data of a file: partition columns out, physical names. */
    ColumnarBatch physical(ColumnarBatch logicalBatch) {
        int[] source = new int[dataColumns.size()];
        for (int i = 0; i < source.length; i++) {
            source[i] = indexOfIgnoringCase(logicalBatch.getSchema(), dataColumns.get(i));
            if (source[i] < 0) {
                throw new IllegalStateException("column " + dataColumns.get(i) + " missing from a batch of "
                        + logicalBatch.getSchema());
            }
        }
        return new Projected(logicalBatch, physical, source);
    }

    /**
     * The statistics columns a file of this layout can have: Kernel names every column of the table, partition
     * columns included, but a partition column is not in the file.
     */
    List<io.delta.kernel.expressions.Column> statisticsColumns(List<io.delta.kernel.expressions.Column> asked) {
        List<io.delta.kernel.expressions.Column> kept = new ArrayList<>();
        for (io.delta.kernel.expressions.Column c : asked) {
            String top = c.getNames()[0];
            if (physical.fieldNames().stream().anyMatch(top::equals)) {
                kept.add(c);
            }
        }
        return kept;
    }

    /** A column as a file holds it: its physical name and, where the table maps columns, its field id. */
    private static StructField physical(StructField f) {
        FieldMetadata m = f.getMetadata();
        if (!m.contains(PHYSICAL_NAME)) {
            return new StructField(f.getName(), f.getDataType(), f.isNullable());
        }
        FieldMetadata.Builder b = FieldMetadata.builder();
        if (m.contains(COLUMN_ID)) {
            b.putLong(PARQUET_FIELD_ID, m.getLong(COLUMN_ID));
        }
        return new StructField(m.getString(PHYSICAL_NAME), physicalType(f.getDataType()), f.isNullable(), b.build());
    }

    /** A nested type under physical names (a struct column of a table another engine made). */
    private static DataType physicalType(DataType type) {
        if (type instanceof StructType s) {
            StructType p = new StructType();
            for (StructField f : s.fields()) {
                p = p.add(physical(f));
            }
            return p;
        }
        return type;
    }

    private static int indexOfIgnoringCase(StructType schema, String name) {
        int exact = schema.indexOf(name);
        if (exact >= 0) {
            return exact;
        }
        for (int i = 0; i < schema.length(); i++) {
            if (schema.at(i).getName().equalsIgnoreCase(name)) {
                return i;
            }
        }
        return -1;
    }

    /** A partition value (in Delta's physical form: micros, days) as Kernel's literal of the column's type. */
    static Literal literal(Object v, DataType type) {
        if (v == null) {
            return Literal.ofNull(type);
        }
        if (type instanceof StringType) {
            return Literal.ofString(v.toString());
        }
        if (type instanceof LongType) {
            return Literal.ofLong(((Number) v).longValue());
        }
        if (type instanceof IntegerType) {
            return Literal.ofInt(((Number) v).intValue());
        }
        if (type instanceof ShortType) {
            return Literal.ofShort(((Number) v).shortValue());
        }
        if (type instanceof ByteType) {
            return Literal.ofByte(((Number) v).byteValue());
        }
        if (type instanceof BooleanType) {
            return Literal.ofBoolean((Boolean) v);
        }
        if (type instanceof DateType) {
            return Literal.ofDate(((Number) v).intValue());
        }
        if (type instanceof TimestampType) {
            return Literal.ofTimestamp(((Number) v).longValue());
        }
        if (type instanceof TimestampNTZType) {
            return Literal.ofTimestampNtz(((Number) v).longValue());
        }
        if (type instanceof DoubleType) {
            return Literal.ofDouble(((Number) v).doubleValue());
        }
        if (type instanceof FloatType) {
            return Literal.ofFloat(((Number) v).floatValue());
        }
        if (type instanceof DecimalType d) {
            return Literal.ofDecimal((BigDecimal) v, d.getPrecision(), d.getScale());
        }
        if (v instanceof byte[] b) {
            return Literal.ofBinary(b);
        }
        throw new IllegalArgumentException("no partition value of type " + type);
    }

    /** Some of a batch's columns, in another order, under another schema: a view, nothing copied. */
    private record Projected(ColumnarBatch batch, StructType schema, int[] source) implements ColumnarBatch {
        @Override
        public StructType getSchema() {
            return schema;
        }

        @Override
        public ColumnVector getColumnVector(int ordinal) {
            return batch.getColumnVector(source[ordinal]);
        }

        @Override
        public int getSize() {
            return batch.getSize();
        }
    }
}
