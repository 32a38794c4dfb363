package dev.kbackfill.sink.delta;

import java.math.BigDecimal;
import java.util.List;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;

/**
 * Rows held as {@code Object[]} (values already in Delta's physical form: long micros for timestamps, int days for
 * dates) exposed as a Kernel {@link ColumnarBatch} for writing.
 */
final class RowsBatch implements ColumnarBatch {

    private final StructType schema;
    private final List<Object[]> rows;

    RowsBatch(StructType schema, List<Object[]> rows) {
        this.schema = schema;
        this.rows = rows;
    }

    @Override
    public StructType getSchema() {
        return schema;
    }

    @Override
    public int getSize() {
        return rows.size();
    }

    @Override
    public ColumnVector getColumnVector(int ordinal) {
        return new Vector(schema.at(ordinal).getDataType(), ordinal);
    }

    @Override
    public ColumnarBatch withDeletedColumnAt(int ordinal) {
        List<StructField> fields = new java.util.ArrayList<>(schema.fields());
        fields.remove(ordinal);
        List<Object[]> out = new java.util.ArrayList<>(rows.size());
        for (Object[] r : rows) {
            Object[] copy = new Object[r.length - 1];
            System.arraycopy(r, 0, copy, 0, ordinal);
            System.arraycopy(r, ordinal + 1, copy, ordinal, r.length - ordinal - 1);
            out.add(copy);
        }
        return new RowsBatch(new StructType(fields), out);
    }

    @Override
    public ColumnarBatch withNewColumn(int ordinal, StructField field, ColumnVector vector) {
        List<StructField> fields = new java.util.ArrayList<>(schema.fields());
        fields.add(ordinal, field);
        List<Object[]> out = new java.util.ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            Object[] r = rows.get(i);
            Object[] copy = new Object[r.length + 1];
            System.arraycopy(r, 0, copy, 0, ordinal);
            copy[ordinal] = DeltaTypes.read(vector, i);
            System.arraycopy(r, ordinal, copy, ordinal + 1, r.length - ordinal);
            out.add(copy);
        }
        return new RowsBatch(new StructType(fields), out);
    }

    @Override
    public ColumnarBatch withNewSchema(StructType newSchema) {
        return new RowsBatch(newSchema, rows);
    }

    private final class Vector implements ColumnVector {
        private final DataType type;
        private final int ordinal;

        Vector(DataType type, int ordinal) {
            this.type = type;
            this.ordinal = ordinal;
        }

        private Object at(int row) {
            return rows.get(row)[ordinal];
        }

        @Override
        public DataType getDataType() {
            return type;
        }

        @Override
        public int getSize() {
            return rows.size();
        }

        @Override
        public void close() {
        }

        @Override
        public boolean isNullAt(int row) {
            return at(row) == null;
        }

        @Override
        public boolean getBoolean(int row) {
            return (Boolean) at(row);
        }

        @Override
        public int getInt(int row) {
            return ((Number) at(row)).intValue();
        }

        @Override
        public long getLong(int row) {
            return ((Number) at(row)).longValue();
        }

        @Override
        public double getDouble(int row) {
            return ((Number) at(row)).doubleValue();
        }

        /** A float column's value (held as a double a float holds: {@link dev.kbackfill.core.sink.NarrowNumber}). */
        @Override
        public float getFloat(int row) {
            return ((Number) at(row)).floatValue();
        }

        @Override
        public byte[] getBinary(int row) {
            return (byte[]) at(row);
        }

        @Override
        public String getString(int row) {
            return (String) at(row);
        }

        @Override
        public BigDecimal getDecimal(int row) {
            return (BigDecimal) at(row);
        }
    }
}
