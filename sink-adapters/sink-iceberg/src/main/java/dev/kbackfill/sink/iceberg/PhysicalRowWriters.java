package dev.kbackfill.sink.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.apache.avro.util.Utf8;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.parquet.InternalWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Type;

/**
 * Data files written from the sink's rows of physical values through Iceberg's Parquet writer of internal values
 * (timestamps as long microseconds, dates as int days: the physical values themselves), with the table's properties,
 * metrics settings and sort order, as Iceberg's generic writer factory writes them. Iceberg's generic writer needs a
 * {@code java.time} object per timestamp and row, made only to be turned back into microseconds: with a new table
 * of every key once that was a seventh of the writer threads' CPU. Data files only: the sink's delete files and
 * copies of rows read back go through Iceberg's generic writers.
 */
final class PhysicalRowWriters implements FileWriterFactory<StructLike> {

    private final Table table;
    private final Schema schema;
    private final java.util.Map<String, String> properties;

    /** Writers of {@code table}'s files of {@code schema}, with {@code properties} over the table's. */
    PhysicalRowWriters(Table table, Schema schema, java.util.Map<String, String> properties) {
        this.table = table;
        this.schema = schema;
        this.properties = properties;
    }

    @Override
    public DataWriter<StructLike> newDataWriter(EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
        try {
            return Parquet.writeData(file).forTable(table).schema(schema).withSpec(spec).withPartition(partition)
                    .withSortOrder(table.sortOrder()).setAll(properties).createWriterFunc(InternalWriter::createWriter)
                    .overwrite().build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public EqualityDeleteWriter<StructLike> newEqualityDeleteWriter(EncryptedOutputFile file, PartitionSpec spec,
                                                                    StructLike partition) {
        throw new UnsupportedOperationException("kbackfill writes no equality deletes");
    }

    @Override
    public PositionDeleteWriter<StructLike> newPositionDeleteWriter(EncryptedOutputFile file, PartitionSpec spec,
                                                                    StructLike partition) {
        throw new UnsupportedOperationException("position deletes are written by Iceberg's generic writers");
    }

    /** One row at a time of a schema's top-level columns, as internal values; reused row after row. */
    static final class Row implements StructLike {

        private final Type.TypeID[] types; // not the types: a call of typeId() per value would dispatch on its class
        private final Object[] values;
        private final boolean utf8;

        /** Rows whose strings stay strings: for partition transforms and comparisons. */
        Row(Schema schema) {
            this(schema, false);
        }

        /**
         * @param utf8 strings as UTF-8 bytes ({@link Utf8}), for Iceberg's Parquet writer: it writes a {@code String}
         *             as a byte buffer, and Parquet's dictionaries and statistics then compare and hash each value a
         *             byte at a time through the buffer (a fifth of the Parquet threads' CPU on a new table), where
         *             bytes of an array are read as such
         */
        Row(Schema schema, boolean utf8) {
            this.types = schema.columns().stream().map(c -> c.type().typeId()).toArray(Type.TypeID[]::new);
            this.values = new Object[types.length];
            this.utf8 = utf8;
        }

        /** This row holding {@code physical} (in the schema's column order), converted. */
        Row of(Object[] physical) {
            for (int i = 0; i < values.length; i++) {
                Object v = IcebergTypes.toInternal(physical[i], types[i]);
                values[i] = utf8 && v instanceof String s ? new Utf8(s) : v;
            }
            return this;
        }

        @Override
        public int size() {
            return values.length;
        }

        @Override
        public <T> T get(int pos, Class<T> javaClass) {
            return javaClass.cast(values[pos]);
        }

        @Override
        public <T> void set(int pos, T value) {
            values[pos] = value;
        }
    }
}
