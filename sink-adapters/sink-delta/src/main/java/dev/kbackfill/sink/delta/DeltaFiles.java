package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.ParallelFiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import io.delta.kernel.DataWriteContext;
import io.delta.kernel.Scan;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;
import org.apache.hadoop.conf.Configuration;

/** Reading a data file's rows and writing rows as data files, shared by the sink and compaction. */
final class DeltaFiles {

    /** The table property naming the key columns of a table kbackfill created, comma-separated. */
    static final String KEY_COLUMNS_PROPERTY = "kbackfill.keyColumns";

    private DeltaFiles() {
    }

    /**
     * The Hadoop settings Kernel reads and writes with: those on the classpath ({@code core-site.xml}), and Parquet
     * compressed with Snappy unless they name a codec ({@code parquet.compression}). Kernel's writer leaves Parquet
     * uncompressed by default; Snappy, what Spark writes, made the benchmark's files 3x smaller at no measurable cost.
     */
    static Configuration hadoopConfiguration() {
        return hadoopConfiguration(java.util.Map.of());
    }

    /**
     * The Hadoop settings with the sink's own on top ({@code --sink-property}, {@code --sink-command-config}: the
     * filesystem's, such as {@code fs.s3a.endpoint}), and the Delta log on S3 written with conditional puts
     * ({@link ConditionalPutLogStore}) unless a log store is named for the scheme.
     */
    static Configuration hadoopConfiguration(java.util.Map<String, ?> settings) {
        Configuration conf = new Configuration();
        settings.forEach((k, v) -> conf.set(k, String.valueOf(v)));
        if (conf.get("parquet.compression") == null) {
            conf.set("parquet.compression", "SNAPPY");
        }
        for (String scheme : java.util.List.of("s3a", "s3")) {
            String key = "io.delta.kernel.logStore." + scheme + ".impl";
            if (conf.get(key) == null) {
                conf.set(key, ConditionalPutLogStore.class.getName());
            }
        }
        dev.kbackfill.sink.lake.FileSystemSchemes.s3AsS3a(conf);
        dev.kbackfill.sink.lake.LocalLakeFileSystem.use(conf); // local files' permissions without a chmod process
        return conf;
    }

    /** The scan's data files (scan file rows, as Kernel's scan lists them). */
    static List<Row> scanFiles(Engine engine, Scan scan) throws IOException {
        List<Row> files = new ArrayList<>();
        try (CloseableIterator<FilteredColumnarBatch> it = scan.getScanFiles(engine)) {
            while (it.hasNext()) {
                try (CloseableIterator<Row> rows = it.next().getRows()) {
                    rows.forEachRemaining(files::add);
                }
            }
        }
        return files;
    }

    /** A data file's rows in the table's logical schema (physical columns mapped back by Kernel). */
    static List<Object[]> read(Engine engine, Row scanState, Row scanFile, StructType schema) throws IOException {
        List<Object[]> rows = new ArrayList<>();
        scan(engine, scanState, scanFile, schema, (position, row) -> rows.add(row));
        return rows;
    }

    /** Receives a data file's live rows one by one, with their positions in the file. */
    interface RowConsumer {
        void accept(long position, Object[] row) throws IOException;
    }

    /**
     * Streams a data file's live rows (those its deletion vector does not mark) in the table's logical schema, each
     * with its position among the file's physical rows, as deletion vectors count them; nothing is kept.
     */
    static void scan(Engine engine, Row scanState, Row scanFile, StructType schema, RowConsumer consumer)
            throws IOException {
        scan(engine, scanState, scanFile, schema, null, null, consumer);
    }

    /**
     * Streams the live rows whose key is wanted: the key columns are read first, each value once, and a row is
     * built only for a wanted key (a batch touching 1% of a table probes every row's key, not every row). Returns
     * the file's live rows.
     *
     * @param keyOrdinals the key columns' positions in {@code schema}; null: every row is wanted
     * @param wanted      whether a key (its values in key column order, bytes as ByteBuffer) is wanted
     */
    static long scan(Engine engine, Row scanState, Row scanFile, StructType schema, int[] keyOrdinals,
                     java.util.function.Predicate<List<Object>> wanted, RowConsumer consumer) throws IOException {
        FileStatus status = KernelInternals.status(scanFile);
        long position = 0;
        long live = 0;
        try (CloseableIterator<FileReadResult> it = engine.getParquetHandler().readParquetFiles(
                KernelInternals.iterator(List.of(status)), KernelInternals.physicalReadSchema(scanState), Optional.empty())) {
            while (it.hasNext()) {
                ColumnarBatch physical = it.next().getData();
                try (CloseableIterator<FilteredColumnarBatch> logical = Scan.transformPhysicalData(engine, scanState,
                        scanFile, KernelInternals.iterator(List.of(physical)))) {
                    while (logical.hasNext()) {
                        FilteredColumnarBatch fb = logical.next();
                        ColumnarBatch b = fb.getData();
                        int[] ordinals = new int[schema.length()];
                        for (int c = 0; c < schema.length(); c++) {
                            ordinals[c] = b.getSchema().indexOf(schema.at(c).getName());
                        }
                        io.delta.kernel.data.ColumnVector[] keys = null;
                        if (keyOrdinals != null) {
                            keys = new io.delta.kernel.data.ColumnVector[keyOrdinals.length];
                            for (int k = 0; k < keys.length; k++) {
                                keys[k] = b.getColumnVector(ordinals[keyOrdinals[k]]);
                            }
                        }
                        live += rows(b, fb.getSelectionVector().orElse(null), ordinals, keys, wanted, position,
                                consumer);
                    }
                }
                position += physical.getSize();
            }
        }
        return live;
    }

    /**
     * The live rows of one batch of a file, handed on where their key is wanted; returns how many were live. A method
     * of its own, small, so that the JIT compiles the per-row work once: inside {@link #scan} the loop made C2 compile
     * all of scan by on-stack replacement, four times (1.1 s of compiler time in a 7.6 s touch of a 2M-row table).
     */
    private static long rows(ColumnarBatch b, io.delta.kernel.data.ColumnVector selection, int[] ordinals,
                             io.delta.kernel.data.ColumnVector[] keys, java.util.function.Predicate<List<Object>> wanted,
                             long position, RowConsumer consumer) throws IOException {
        long live = 0;
        for (int r = 0; r < b.getSize(); r++) {
            if (selection != null && !selection.getBoolean(r)) {
                continue;
            }
            live++;
            if (keys != null && !wanted.test(key(keys, r))) {
                continue;
            }
            Object[] row = new Object[ordinals.length];
            for (int c = 0; c < ordinals.length; c++) {
                row[c] = ordinals[c] < 0 ? null : DeltaTypes.read(b.getColumnVector(ordinals[c]), r);
            }
            consumer.accept(position + r, row);
        }
        return live;
    }

    /** The rows a data file holds, deleted or not (its Parquet footer's count). */
    static long physicalRows(org.apache.hadoop.conf.Configuration hadoop, String path) {
        try (org.apache.parquet.hadoop.ParquetFileReader reader = org.apache.parquet.hadoop.ParquetFileReader.open(
                org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(path), hadoop))) {
            return reader.getRecordCount();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot read the footer of " + path, e);
        }
    }

    /** A row's key as {@link DeltaTable#keyOf} builds it from a row. */
    private static List<Object> key(io.delta.kernel.data.ColumnVector[] keys, int r) {
        if (keys.length == 1) {
            return java.util.Collections.singletonList(dev.kbackfill.sink.lake.LakeValues.keyValue(DeltaTypes.read(keys[0], r)));
        }
        List<Object> k = new ArrayList<>(keys.length);
        for (io.delta.kernel.data.ColumnVector v : keys) {
            k.add(dev.kbackfill.sink.lake.LakeValues.keyValue(DeltaTypes.read(v, r)));
        }
        return k;
    }

    /**
     * Copies a data file's live rows, except those at the dropped positions, into new data files of the
     * transaction's table (in the file's own partition), batch by batch as Parquet reads them (no row is decoded or
     * held beyond one batch): the copy-on-write of a file some of whose rows a batch replaces, for tables without
     * deletion vectors.
     */
    static List<Row> copyExcept(Engine engine, Transaction txn, Row scanState, Row scanFile,
                                java.util.function.LongPredicate dropped) throws IOException {
        CloseableIterator<FileReadResult> files = engine.getParquetHandler().readParquetFiles(
                KernelInternals.iterator(List.of(KernelInternals.status(scanFile))),
                KernelInternals.physicalReadSchema(scanState), Optional.empty());
        CloseableIterator<FilteredColumnarBatch> kept = new CloseableIterator<>() {
            private long position;

            @Override
            public boolean hasNext() {
                return files.hasNext();
            }

            @Override
            public FilteredColumnarBatch next() {
                ColumnarBatch physical = files.next().getData();
                FilteredColumnarBatch logical;
                try (CloseableIterator<FilteredColumnarBatch> one = Scan.transformPhysicalData(engine, scanState,
                        scanFile, KernelInternals.iterator(List.of(physical)))) {
                    logical = one.next();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                boolean[] selected = new boolean[physical.getSize()];
                for (int r = 0; r < selected.length; r++) {
                    selected[r] = !dropped.test(position + r) && (logical.getSelectionVector().isEmpty()
                            || logical.getSelectionVector().get().getBoolean(r));
                }
                position += selected.length;
                return new FilteredColumnarBatch(logical.getData(), Optional.of(new Selection(selected)));
            }

            @Override
            public void close() throws IOException {
                files.close();
            }
        };
        if (!kept.hasNext()) {
            kept.close();
            return new ArrayList<>();
        }
        // the file's rows are of one partition: its values, from the first batch, and that batch written first
        FilteredColumnarBatch first = kept.next();
        DeltaLayout layout = layout(engine, txn);
        CloseableIterator<FilteredColumnarBatch> all = new CloseableIterator<>() {
            private boolean firstTaken;

            @Override
            public boolean hasNext() {
                return !firstTaken || kept.hasNext();
            }

            @Override
            public FilteredColumnarBatch next() {
                if (!firstTaken) {
                    firstTaken = true;
                    return first;
                }
                return kept.next();
            }

            @Override
            public void close() throws IOException {
                kept.close();
            }
        };
        return writeBatches(engine, txn, layout, layout.partitionValues(first.getData()), all);
    }

    /** The layout of the transaction's table: its schema (as this transaction leaves it) and partition columns. */
    static DeltaLayout layout(Engine engine, Transaction txn) {
        return new DeltaLayout(txn.getSchema(engine), txn.getPartitionColumns(engine));
    }

    /** A selection vector over a batch's rows. */
    private record Selection(boolean[] selected) implements io.delta.kernel.data.ColumnVector {
        @Override
        public io.delta.kernel.types.DataType getDataType() {
            return io.delta.kernel.types.BooleanType.BOOLEAN;
        }

        @Override
        public int getSize() {
            return selected.length;
        }

        @Override
        public void close() {
        }

        @Override
        public boolean isNullAt(int rowId) {
            return false;
        }

        @Override
        public boolean getBoolean(int rowId) {
            return selected[rowId];
        }
    }

    /**
     * Writes rows (in the order given, each in its partition) as data files of the transaction's table; returns
     * their add actions. Large sets are cut into contiguous runs written in parallel, one file each or more (Kernel's
     * Parquet writer runs at about 100k rows/s on one core here, and by then the reader is done), so key ranges stay
     * disjoint.
     */
    static List<Row> write(Engine engine, Transaction txn, StructType schema, List<Object[]> rows, int rowsPerBatch)
            throws IOException {
        DeltaLayout layout = layout(engine, txn);
        if (layout.partitioned()) {
            // one partition's rows per file, each partition's in the order given
            Map<List<Object>, List<Object[]>> byPartition = new java.util.LinkedHashMap<>();
            for (Object[] row : rows) {
                byPartition.computeIfAbsent(layout.partitionOf(row), p -> new ArrayList<>()).add(row);
            }
            List<Callable<List<Row>>> parts = new ArrayList<>();
            byPartition.forEach((values, part) -> parts.add(() -> writeRun(engine, txn, schema, layout,
                    layout.partitionValues(values), part, rowsPerBatch)));
            return inParallel(parts, Math.min(Runtime.getRuntime().availableProcessors(), Math.max(1, parts.size())));
        }
        int writers = Math.min(Runtime.getRuntime().availableProcessors(), rows.size() / ParallelFiles.ROWS_PER_WRITER);
        if (writers <= 1) {
            return writeRun(engine, txn, schema, layout, Map.of(), rows, rowsPerBatch);
        }
        List<Callable<List<Row>>> runs = new ArrayList<>();
        int size = (rows.size() + writers - 1) / writers;
        for (int from = 0; from < rows.size(); from += size) {
            List<Object[]> run = rows.subList(from, Math.min(rows.size(), from + size));
            runs.add(() -> writeRun(engine, txn, schema, layout, Map.of(), run, rowsPerBatch));
        }
        return inParallel(runs, writers);
    }

    /** Runs writing tasks on up to {@code threads} threads; their add actions in the tasks' order. */
    static List<Row> inParallel(List<Callable<List<Row>>> tasks, int threads) throws IOException {
        List<Row> actions = new ArrayList<>();
        ParallelFiles.each(tasks, threads).forEach(actions::addAll);
        return actions;
    }

    private static List<Row> writeRun(Engine engine, Transaction txn, StructType schema, DeltaLayout layout,
                                      Map<String, io.delta.kernel.expressions.Literal> partition, List<Object[]> rows,
                                      int rowsPerBatch) throws IOException {
        if (rows.isEmpty()) {
            return new ArrayList<>();
        }
        List<FilteredColumnarBatch> logical = new ArrayList<>();
        for (int from = 0; from < rows.size(); from += rowsPerBatch) {
            logical.add(new FilteredColumnarBatch(new RowsBatch(schema,
                    rows.subList(from, Math.min(rows.size(), from + rowsPerBatch))), Optional.empty()));
        }
        return writeBatches(engine, txn, layout, partition, KernelInternals.iterator(logical));
    }

    /**
     * Writes logical batches (their selected rows, all of one partition) as data files of the transaction's table,
     * in the data layout the table asks for ({@link DeltaLayout}); their add actions.
     */
    private static List<Row> writeBatches(Engine engine, Transaction txn, DeltaLayout layout,
                                          Map<String, io.delta.kernel.expressions.Literal> partition,
                                          CloseableIterator<FilteredColumnarBatch> logical) throws IOException {
        List<Row> actions = new ArrayList<>();
        Row txnState = txn.getTransactionState(engine);
        DataWriteContext context = Transaction.getWriteContext(engine, txnState, partition);
        try (logical;
             CloseableIterator<FilteredColumnarBatch> physical = logical.map(b -> new FilteredColumnarBatch(
                     layout.physical(b.getData()), b.getSelectionVector()));
             CloseableIterator<DataFileStatus> written = engine.getParquetHandler().writeParquetFiles(
                     context.getTargetDirectory(), physical, layout.statisticsColumns(context.getStatisticsColumns()));
             CloseableIterator<Row> adds = Transaction.generateAppendActions(engine, txnState, written, context)) {
            while (adds.hasNext()) {
                actions.add(adds.next());
            }
        }
        return actions;
    }
}
