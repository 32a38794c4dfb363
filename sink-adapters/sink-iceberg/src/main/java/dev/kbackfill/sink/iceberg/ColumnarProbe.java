package dev.kbackfill.sink.iceberg;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.sink.lake.KeyFilter;
import dev.kbackfill.sink.lake.LakeValues;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * The probe's read of one data file through Parquet's column readers: the key columns of every row, the other probed
 * columns only for a row whose key the batch holds, values left in Parquet's pages until then. Iceberg's row readers
 * build a record of boxed values for every row of every candidate file, which was most of the CPU of a 1% touch of a
 * 10M-row table, where one row in a hundred is wanted.
 *
 * <p>It reads a file whole (one scan task), without equality deletes (position deletes are applied by position),
 * whose probed columns are all top-level primitives with field ids, of the types kbackfill writes other than decimal,
 * stored as Iceberg stores them. For any other file it reads nothing and says so, and the probe reads the file with
 * Iceberg's readers. Values come as {@link IcebergTypes#physical} makes them of Iceberg's internal values
 * (timestamps as microseconds, dates as days, floats as doubles, binary as a byte array of its own).
 */
final class ColumnarProbe {

    /** Receives a wanted row: its position in the file and its probed values, physical, in the order asked. */
    interface Hits {
        void hit(long position, Object[] values);
    }

    private ColumnarProbe() {
    }

    /**
     * Reads {@code task}'s live rows whose key {@code filter} {@link KeyFilter#wants wants}.
     *
     * @param fields the probed columns, in the order of the values handed to {@code hits}
     * @param keyAt  where the key columns are among {@code fields}, in key order
     * @param filter the batch's keys: a row's one string key column is hashed from its bytes and turned away by the
     *               filter before it becomes a string
     * @return false, having read no row, for a file this reader does not read
     */
    static boolean probe(Table table, FileScanTask task, List<Types.NestedField> fields, int[] keyAt,
                         KeyFilter filter, Hits hits) throws IOException {
        DataFile file = task.file();
        if (file.format() != FileFormat.PARQUET || task.start() != 0 || task.length() != file.fileSizeInBytes()) {
            return false;
        }
        for (DeleteFile d : task.deletes()) {
            if (d.content() == FileContent.EQUALITY_DELETES) {
                return false;
            }
        }
        int n = fields.size();
        Kind[] kinds = new Kind[n];
        for (int i = 0; i < n; i++) {
            kinds[i] = Kind.of(fields.get(i).type());
            if (kinds[i] == null) {
                return false;
            }
        }
        org.apache.iceberg.io.InputFile input = table.io().newInputFile(file.location(), file.fileSizeInBytes());
        // options of its own (they hold the reader's decompressors, which a reader releases when it closes), without
        // a Hadoop configuration: the default options build one per file, parsing its XML resources
        ParquetReadOptions options = ParquetReadOptions.builder(new PlainParquetConfiguration()).build();
        try (ParquetFileReader reader = ParquetFileReader.open(new Input(input), options)) {
            MessageType fileSchema = reader.getFooter().getFileMetaData().getSchema();
            List<org.apache.parquet.schema.Type> requested = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                org.apache.parquet.schema.Type column = byId(fileSchema, fields.get(i).fieldId());
                if (column == null || !column.isPrimitive()
                        || column.isRepetition(org.apache.parquet.schema.Type.Repetition.REPEATED)
                        || !kinds[i].stores(column.asPrimitiveType())) {
                    return false;
                }
                requested.add(column);
            }
            MessageType projection = new MessageType(fileSchema.getName(), requested);
            ColumnDescriptor[] columns = new ColumnDescriptor[n];
            for (int i = 0; i < n; i++) {
                columns[i] = projection.getColumnDescription(new String[] {requested.get(i).getName()});
            }
            reader.setRequestedSchema(projection);
            PositionDeleteIndex deleted = null;
            if (!task.deletes().isEmpty()) {
                GenericDeleteFilter deletes = new GenericDeleteFilter(table.io(), task, table.schema(),
                        new Schema(fields));
                if (deletes.hasPosDeletes()) {
                    deleted = deletes.deletedRowPositions();
                }
            }
            Scan scan = new Scan(columns, kinds, keyAt, filter, deleted, hits);
            String createdBy = reader.getFooter().getFileMetaData().getCreatedBy();
            GroupConverter ignored = ignoring(projection);
            long base = 0;
            PageReadStore group;
            while ((group = reader.readNextRowGroup()) != null) {
                ColumnReadStoreImpl store = new ColumnReadStoreImpl(group, ignored, projection, createdBy);
                ColumnReader[] readers = new ColumnReader[n];
                for (int i = 0; i < n; i++) {
                    readers[i] = store.getColumnReader(columns[i]);
                }
                long rows = group.getRowCount();
                scan.rows(readers, base, rows);
                base += rows;
            }
        }
        return true;
    }

    /**
     * The rows of a file's row groups, one call per row: a method of its own, small, so that the JIT compiles the
     * per-row work once and quickly. Inside one large method with the file's setup, the loop was compiled four times
     * over (on-stack replacement at two tiers, then whole), C2 alone spending 1.4 s of a 1% touch's 8 s on it.
     */
    private static final class Scan {
        private final ColumnDescriptor[] columns;
        private final Kind[] kinds;
        private final int[] keyAt;
        private final boolean[] isKey;
        private final boolean oneText;
        private final KeyFilter filter;
        private final PositionDeleteIndex deleted;
        private final Hits hits;
        private final Object[] values;
        private final List<Object> key;
        private ColumnReader[] readers;

        Scan(ColumnDescriptor[] columns, Kind[] kinds, int[] keyAt, KeyFilter filter, PositionDeleteIndex deleted,
             Hits hits) {
            this.columns = columns;
            this.kinds = kinds;
            this.keyAt = keyAt;
            this.isKey = new boolean[columns.length];
            for (int k : keyAt) {
                isKey[k] = true;
            }
            this.oneText = keyAt.length == 1 && kinds[keyAt[0]] == Kind.STRING;
            this.filter = filter;
            this.deleted = deleted;
            this.hits = hits;
            this.values = new Object[columns.length];
            this.key = new ArrayList<>(keyAt.length);
        }

        /** The {@code count} rows of a row group read by {@code readers}, its first at {@code base} in the file. */
        void rows(ColumnReader[] readers, long base, long count) {
            this.readers = readers;
            for (long r = 0; r < count; r++) {
                row(base + r);
            }
        }

        private void row(long position) {
            boolean live = deleted == null || !deleted.isDeleted(position);
            boolean hit = live && (oneText ? textKeyWanted() : keyWanted());
            for (int i = 0; i < readers.length; i++) {
                ColumnReader c = readers[i];
                if (hit && !isKey[i]) {
                    values[i] = kinds[i].read(c, columns[i]);
                } else if (!(live && isKey[i]) && c.getCurrentDefinitionLevel() == columns[i].getMaxDefinitionLevel()) {
                    c.skip();
                }
                c.consume();
            }
            if (hit) {
                hits.hit(position, values.clone());
            }
        }

        /** The common key, one string: most rows are turned away on a hash of their bytes. */
        private boolean textKeyWanted() {
            int k = keyAt[0];
            if (readers[k].getCurrentDefinitionLevel() != columns[k].getMaxDefinitionLevel()) {
                return keyWanted(); // a null key
            }
            Binary text = readers[k].getBinary();
            long h = asciiHash(text);
            if (h != NOT_ASCII && !filter.mayContainHash(31 + (int) h)) {
                return false;
            }
            values[k] = text.toStringUsingUTF8();
            key.clear();
            key.add(values[k]);
            return filter.wants(key);
        }

        private boolean keyWanted() {
            key.clear();
            for (int k : keyAt) {
                values[k] = kinds[k].read(readers[k], columns[k]);
                key.add(LakeValues.keyValue(values[k]));
            }
            return filter.wants(key);
        }
    }

    private static final long NOT_ASCII = Long.MIN_VALUE;

    /**
     * {@link String#hashCode()} of the text of these UTF-8 bytes where they are all ASCII (each byte then one char of
     * the same value), else {@link #NOT_ASCII}.
     */
    static long asciiHash(Binary text) {
        java.nio.ByteBuffer b = text.toByteBuffer();
        int h = 0;
        for (int i = b.position(); i < b.limit(); i++) {
            byte c = b.get(i);
            if (c < 0) {
                return NOT_ASCII;
            }
            h = 31 * h + c;
        }
        return h;
    }

    private static org.apache.parquet.schema.Type byId(MessageType schema, int fieldId) {
        for (org.apache.parquet.schema.Type t : schema.getFields()) {
            if (t.getId() != null && t.getId().intValue() == fieldId) {
                return t;
            }
        }
        return null;
    }

    /** The column readers need a converter for each column; the probe reads values itself and converts none. */
    private static GroupConverter ignoring(org.apache.parquet.schema.GroupType type) {
        return new GroupConverter() {
            @Override
            public Converter getConverter(int fieldIndex) {
                org.apache.parquet.schema.Type t = type.getType(fieldIndex);
                return t.isPrimitive() ? new PrimitiveConverter() {
                } : ignoring(t.asGroupType());
            }

            @Override
            public void start() {
            }

            @Override
            public void end() {
            }
        };
    }

    /** The column types this reader reads, each with how Iceberg stores it and its physical value. */
    private enum Kind {
        STRING, BINARY, LONG, INT, DOUBLE, FLOAT, BOOLEAN, TIMESTAMP, DATE;

        static Kind of(Type type) {
            return switch (type.typeId()) {
                case STRING -> STRING;
                case BINARY -> BINARY;
                case LONG -> LONG;
                case INTEGER -> INT;
                case DOUBLE -> DOUBLE;
                case FLOAT -> FLOAT;
                case BOOLEAN -> BOOLEAN;
                case TIMESTAMP -> TIMESTAMP; // microseconds (nanosecond timestamps are another type)
                case DATE -> DATE;
                default -> null; // decimals, nested and other types: Iceberg's readers
            };
        }

        /** Whether a file's column holds this kind as Iceberg writes it (not, say, an int promoted to long). */
        boolean stores(PrimitiveType p) {
            LogicalTypeAnnotation a = p.getLogicalTypeAnnotation();
            return switch (this) {
                case STRING -> p.getPrimitiveTypeName() == PrimitiveTypeName.BINARY
                        && (a == null || a instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation);
                case BINARY -> p.getPrimitiveTypeName() == PrimitiveTypeName.BINARY && a == null;
                case LONG -> p.getPrimitiveTypeName() == PrimitiveTypeName.INT64 && (a == null
                        || a instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && i.getBitWidth() == 64 && i.isSigned());
                case INT -> p.getPrimitiveTypeName() == PrimitiveTypeName.INT32 && (a == null
                        || a instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && i.getBitWidth() == 32 && i.isSigned());
                case DOUBLE -> p.getPrimitiveTypeName() == PrimitiveTypeName.DOUBLE && a == null;
                case FLOAT -> p.getPrimitiveTypeName() == PrimitiveTypeName.FLOAT && a == null;
                case BOOLEAN -> p.getPrimitiveTypeName() == PrimitiveTypeName.BOOLEAN && a == null;
                case TIMESTAMP -> p.getPrimitiveTypeName() == PrimitiveTypeName.INT64
                        && a instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation t
                        && t.getUnit() == LogicalTypeAnnotation.TimeUnit.MICROS;
                case DATE -> p.getPrimitiveTypeName() == PrimitiveTypeName.INT32
                        && a instanceof LogicalTypeAnnotation.DateLogicalTypeAnnotation;
            };
        }

        /** The current value of {@code c}, physical (null where the row has none); the caller consumes it. */
        Object read(ColumnReader c, ColumnDescriptor column) {
            if (c.getCurrentDefinitionLevel() < column.getMaxDefinitionLevel()) {
                return null;
            }
            return switch (this) {
                case STRING -> c.getBinary().toStringUsingUTF8();
                case BINARY -> {
                    Binary b = c.getBinary();
                    byte[] bytes = new byte[b.length()];
                    b.toByteBuffer().duplicate().get(bytes); // a copy: a dictionary's value is shared by rows
                    yield bytes;
                }
                case LONG, TIMESTAMP -> c.getLong();
                case INT, DATE -> c.getInteger();
                case DOUBLE -> c.getDouble();
                case FLOAT -> (double) c.getFloat();
                case BOOLEAN -> c.getBoolean();
            };
        }
    }

    /** An Iceberg file as Parquet's reader opens it (Iceberg's own adapter is not public). */
    private record Input(org.apache.iceberg.io.InputFile file) implements org.apache.parquet.io.InputFile {
        @Override
        public long getLength() {
            return file.getLength();
        }

        @Override
        public SeekableInputStream newStream() {
            org.apache.iceberg.io.SeekableInputStream in = file.newStream();
            return new DelegatingSeekableInputStream(in) {
                @Override
                public long getPos() throws IOException {
                    return in.getPos();
                }

                @Override
                public void seek(long newPos) throws IOException {
                    in.seek(newPos);
                }
            };
        }
    }
}
