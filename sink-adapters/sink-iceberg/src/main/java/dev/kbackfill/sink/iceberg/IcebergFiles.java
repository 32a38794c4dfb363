package dev.kbackfill.sink.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

import dev.kbackfill.sink.lake.KeyOrder;
import dev.kbackfill.sink.lake.LakeValues;
import dev.kbackfill.sink.lake.ParallelFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.io.RollingDataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * An Iceberg table's data files as the sink reads and writes them: probing the files that may hold a batch's keys
 * (their live rows, deletes applied, with their positions), reading rows back whole, writing new rows as data files
 * and the rows taken out as one position-delete file. Rows are arrays of physical values in the order of the table's
 * top-level columns.
 */
final class IcebergFiles {

    /** A live row of a data file that holds an incoming key: the file's task, the row's position, its values. */
    record Hit(FileScanTask task, long position, Object[] row) {
        String file() {
            return task.file().location();
        }
    }

    private final Table table;
    private final Schema schema;

    /** How the probe reads a file it can: in tests, each of the three, to compare them. */
    enum ProbeReader {
        /** Parquet's column readers ({@link ColumnarProbe}), else Iceberg's internal values. */
        COLUMNAR,
        /** Iceberg's row reader of internal values where {@link #liveRows} allows it, else its generic values. */
        INTERNAL,
        /** Iceberg's row reader of generic values. */
        GENERIC
    }

    private final ProbeReader probeReader;
    /** The data files the last probe read (for tests of its pruning). */
    int probedFiles;

    IcebergFiles(Table table) {
        this(table, ProbeReader.COLUMNAR);
    }

    IcebergFiles(Table table, ProbeReader probeReader) {
        this.table = table;
        this.schema = table.schema();
        this.probeReader = probeReader;
    }

    /**
     * The rows of one data file whose key is one of {@code filter}'s, live (deletes applied), each with the probed
     * columns ({@code targets}, read as {@code probed}) in a row as wide as the table: by the columnar reader where
     * it reads the file, else by Iceberg's generic reader.
     */
    private List<Hit> probeFile(FileScanTask task, List<Types.NestedField> probed, Schema projection, int[] targets,
                                int[] keyAt, dev.kbackfill.sink.lake.KeyFilter filter) {
        int width = schema.columns().size();
        List<Hit> hits = new ArrayList<>();
        try {
            if (probeReader == ProbeReader.COLUMNAR && ColumnarProbe.probe(table, task, probed, keyAt, filter,
                    (position, values) -> {
                        Object[] row = new Object[width];
                        for (int i = 0; i < targets.length; i++) {
                            row[targets[i]] = values[i];
                        }
                        hits.add(new Hit(task, position, row));
                    })) {
                return hits;
            }
        } catch (IOException | RuntimeException e) {
            throw failedRead(task, e);
        }
        List<Object> key = new ArrayList<>(keyAt.length);
        liveRows(task, projection, probeReader != ProbeReader.GENERIC, r -> {
            key.clear();
            for (int at : keyAt) {
                key.add(LakeValues.keyValue(IcebergTypes.physical(r.get(at))));
            }
            if (!filter.wants(key)) {
                return;
            }
            Object[] row = new Object[width];
            for (int i = 0; i < targets.length; i++) {
                row[targets[i]] = IcebergTypes.physical(r.get(i));
            }
            hits.add(new Hit(task, (Long) r.get(targets.length), row));
        });
        return hits;
    }

    /**
     * The live rows of {@code base} holding one of {@code keys}, read with the key and metadata columns only, from
     * the files whose bounds for the first key column admit some key; one file per core at a time.
     */
    List<Hit> probe(Snapshot base, int[] keyOrdinals, int[] metadataOrdinals, Set<List<Object>> keys) {
        List<Types.NestedField> columns = schema.columns();
        java.util.SortedSet<Integer> read = new TreeSet<>();
        for (int o : keyOrdinals) {
            read.add(o);
        }
        for (int o : metadataOrdinals) {
            read.add(o);
        }
        List<Types.NestedField> probed = read.stream().map(columns::get).toList();
        Schema projection = withPosition(new Schema(probed));
        int[] targets = read.stream().mapToInt(Integer::intValue).toArray();
        // where each key column is in the projection: a row is built only for a key of the batch
        int[] keyAt = new int[keyOrdinals.length];
        for (int k = 0; k < keyOrdinals.length; k++) {
            keyAt[k] = java.util.Arrays.binarySearch(targets, keyOrdinals[k]);
        }
        Types.NestedField first = columns.get(keyOrdinals[0]);
        TreeSet<Object> firstKeys = null;
        if (prunable(first.type())) {
            firstKeys = new TreeSet<>(KeyOrder::compareValues);
            for (List<Object> k : keys) {
                firstKeys.add(k.get(0));
            }
        }
        dev.kbackfill.sink.lake.KeyFilter filter = dev.kbackfill.sink.lake.KeyFilter.of(keys);
        KeyPartitions partitions = new KeyPartitions(keyOrdinals, keys);
        List<Callable<List<Hit>>> reads = new ArrayList<>();
        org.apache.iceberg.TableScan scan = table.newScan().useSnapshot(base.snapshotId());
        if (firstKeys != null) {
            // a scan plans its files without their column statistics unless asked: without these bounds every file of
            // a table whose partitions the key does not decide was read, batch after batch
            scan = scan.includeColumnStats(List.of(first.name()));
        }
        try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
            for (FileScanTask task : tasks) {
                if (!partitions.mayHold(task) || firstKeys != null && !mayHold(task.file(), first, firstKeys)) {
                    continue;
                }
                reads.add(() -> probeFile(task, probed, projection, targets, keyAt, filter));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        probedFiles = reads.size();
        List<Hit> hits = new ArrayList<>();
        try {
            for (List<Hit> h : ParallelFiles.each(reads, Runtime.getRuntime().availableProcessors())) {
                hits.addAll(h);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return hits;
    }

    /**
     * The partitions a batch's keys can be in, per spec whose every field derives from key columns (identity, bucket or
     * truncate of a key column): a file of another partition of such a spec holds none of the keys, and is not read.
     * Under a spec with a field of another column, any partition may hold a key (a status that moves): every file is
     * a candidate, pruned by its key bounds only.
     */
    private final class KeyPartitions {
        private final int[] keyOrdinals;
        private final Set<List<Object>> keys;
        private final Map<Integer, java.util.Optional<Set<StructLike>>> bySpec = new HashMap<>();

        KeyPartitions(int[] keyOrdinals, Set<List<Object>> keys) {
            this.keyOrdinals = keyOrdinals;
            this.keys = keys;
        }

        boolean mayHold(FileScanTask task) {
            PartitionSpec spec = task.spec();
            if (spec.isUnpartitioned()) {
                return true;
            }
            java.util.Optional<Set<StructLike>> of = bySpec.computeIfAbsent(spec.specId(), id -> partitionsOf(spec));
            return of.isEmpty() || of.get().contains(task.file().partition());
        }

        private java.util.Optional<Set<StructLike>> partitionsOf(PartitionSpec spec) {
            List<Types.NestedField> columns = schema.columns();
            Set<Integer> keyIds = new java.util.HashSet<>();
            for (int o : keyOrdinals) {
                keyIds.add(columns.get(o).fieldId());
            }
            if (!spec.fields().stream().allMatch(f -> keyIds.contains(f.sourceId()))) {
                return java.util.Optional.empty();
            }
            Set<StructLike> partitions = org.apache.iceberg.util.StructLikeSet.create(spec.partitionType());
            PartitionKey partition = new PartitionKey(spec, schema);
            PhysicalRowWriters.Row internal = new PhysicalRowWriters.Row(schema);
            Object[] row = new Object[columns.size()];
            try {
                for (List<Object> key : keys) {
                    for (int k = 0; k < keyOrdinals.length; k++) {
                        row[keyOrdinals[k]] = key.get(k);
                    }
                    partition.partition(internal.of(row));
                    partitions.add(partition.copy());
                }
            } catch (RuntimeException e) {
                return java.util.Optional.empty(); // a key value the transform does not take as it is: no pruning
            }
            return java.util.Optional.of(partitions);
        }
    }

    /** The whole rows at the hits' positions, read again from their files (a soft delete keeps the stored values). */
    Map<Hit, Object[]> readWhole(Collection<Hit> wanted) {
        Map<String, Map<Long, Hit>> byFile = new LinkedHashMap<>();
        for (Hit h : wanted) {
            byFile.computeIfAbsent(h.file(), f -> new HashMap<>()).put(h.position(), h);
        }
        Schema projection = withPosition(schema);
        int width = schema.columns().size();
        Map<Hit, Object[]> rows = new LinkedHashMap<>();
        for (Map<Long, Hit> positions : byFile.values()) {
            FileScanTask task = positions.values().iterator().next().task();
            liveRows(task, projection, false, r -> {
                Hit h = positions.get((Long) r.get(width));
                if (h != null) {
                    Object[] row = new Object[width];
                    for (int i = 0; i < width; i++) {
                        row[i] = IcebergTypes.physical(r.get(i));
                    }
                    rows.put(h, row);
                }
            });
        }
        if (rows.size() != wanted.size()) {
            throw new org.apache.iceberg.exceptions.ValidationException("a data file of %s changed while it was read "
                    + "(%s of %s rows to soft-delete found again)", table.name(), rows.size(), wanted.size());
        }
        return rows;
    }

    /**
     * The key column whose values are distinct in every file written of rows that hold each key once, if there is
     * one: the key's one column, or its one column that is not the source of an identity partition field (each file
     * is in one partition, so such a column has one value in it and the key's other column tells its rows apart: a
     * key of (day, order_id) in a table partitioned by day). Empty where two or more columns vary.
     */
    static java.util.Optional<String> distinctInEveryFile(Schema schema, PartitionSpec spec, int[] keyOrdinals) {
        java.util.Set<Integer> onePerFile = new java.util.HashSet<>();
        for (org.apache.iceberg.PartitionField field : spec.fields()) {
            if (field.transform().isIdentity()) {
                onePerFile.add(field.sourceId());
            }
        }
        List<String> varying = new ArrayList<>();
        for (int ordinal : keyOrdinals) {
            Types.NestedField column = schema.columns().get(ordinal);
            if (!onePerFile.contains(column.fieldId())) {
                varying.add(column.name());
            }
        }
        return varying.size() == 1 ? java.util.Optional.of(varying.get(0)) : java.util.Optional.empty();
    }

    /**
     * Writes rows (sorted by key) as new data files of the table, rolled at the table's target file size, each file in
     * the partition of its rows under the table's current spec: per partition, up to one Parquet writer per core, each
     * a contiguous run of its rows, so that the files of a partition cover disjoint key ranges.
     *
     * @param keyOrdinals the key's columns. The rows hold each key once, so a key column whose values are distinct in
     *                    every file ({@link #distinctInEveryFile}) is written without a dictionary (Parquet would build
     *                    one for each file's first page only to give it up), unless the table's properties say
     *                    otherwise for that column
     */
    List<DataFile> writeRows(List<Object[]> rows, int[] keyOrdinals) throws IOException {
        if (rows.isEmpty()) {
            return List.of();
        }
        PartitionSpec spec = table.spec();
        Map<String, String> properties = new HashMap<>();
        distinctInEveryFile(schema, spec, keyOrdinals).ifPresent(column -> {
            String dictionary = org.apache.iceberg.TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + column;
            if (!table.properties().containsKey(dictionary)) {
                properties.put(dictionary, "false");
            }
        });
        String operation = UUID.randomUUID().toString();
        List<Callable<List<DataFile>>> chunks = new ArrayList<>();
        int[] writerId = {0};
        for (Map.Entry<StructLike, List<Object[]>> partition : byPartition(spec, rows).entrySet()) {
            List<Object[]> in = partition.getValue();
            int writers = (int) Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(),
                    in.size() / ParallelFiles.ROWS_PER_WRITER));
            for (int w = 0; w < writers; w++) {
                List<Object[]> chunk = in.subList(in.size() * w / writers, in.size() * (w + 1) / writers);
                int id = writerId[0]++;
                chunks.add(() -> writeChunk(chunk, id, operation, spec, partition.getKey(), properties));
            }
        }
        List<DataFile> files = new ArrayList<>();
        for (List<DataFile> written : ParallelFiles.each(chunks, Runtime.getRuntime().availableProcessors())) {
            files.addAll(written);
        }
        return files;
    }

    /**
     * Rows by their partition under {@code spec}, each partition's rows in their order; one group (keyed by null) for
     * an unpartitioned spec.
     */
    private Map<StructLike, List<Object[]>> byPartition(PartitionSpec spec, List<Object[]> rows) {
        if (spec.isUnpartitioned()) {
            Map<StructLike, List<Object[]>> one = new HashMap<>();
            one.put(null, rows);
            return one;
        }
        Map<StructLike, List<Object[]>> groups = org.apache.iceberg.util.StructLikeMap.create(spec.partitionType());
        PartitionKey key = new PartitionKey(spec, schema);
        PhysicalRowWriters.Row internal = new PhysicalRowWriters.Row(schema);
        for (Object[] row : rows) {
            key.partition(internal.of(row));
            List<Object[]> group = groups.get(key);
            if (group == null) {
                group = new ArrayList<>();
                groups.put(key.copy(), group); // the key object is reused row after row
            }
            group.add(row);
        }
        return groups;
    }

    private List<DataFile> writeChunk(List<Object[]> rows, int writerId, String operation, PartitionSpec spec,
                                      StructLike partition, Map<String, String> properties) throws IOException {
        OutputFileFactory files = OutputFileFactory.builderFor(table, writerId, System.currentTimeMillis())
                .format(FileFormat.PARQUET).operationId(operation).build();
        RollingDataWriter<org.apache.iceberg.StructLike> writer = new RollingDataWriter<>(
                new PhysicalRowWriters(table, schema, properties), files, table.io(), targetFileSize(), spec,
                partition);
        try (writer) {
            PhysicalRowWriters.Row r = new PhysicalRowWriters.Row(schema, true);
            for (Object[] row : rows) {
                writer.write(r.of(row)); // Parquet's writer copies the values out before the next row
            }
        }
        return writer.result().dataFiles();
    }

    /**
     * The position-delete files a batch commits, and the ones they replace.
     *
     * @param added   one file per data file the batch takes rows out of
     * @param removed the file-scoped delete files of those data files that the added ones include
     */
    record Deletes(List<DeleteFile> added, List<DeleteFile> removed) {
    }

    /**
     * Writes the rows taken out as position deletes scoped to one data file each (Iceberg's {@code file} delete
     * granularity: a reader matches a delete file to its data file exactly), each holding the data file's earlier
     * file-scoped position deletes too, which the commit then removes: a data file carries at most one delete file
     * of kbackfill's, however many batches touched it. Positions sorted, as the spec asks.
     */
    Deletes writeDeletes(List<Hit> takenOut) throws IOException {
        if (takenOut.isEmpty()) {
            return new Deletes(List.of(), List.of());
        }
        Map<String, List<Hit>> byFile = new LinkedHashMap<>();
        for (Hit h : takenOut) {
            byFile.computeIfAbsent(h.file(), f -> new ArrayList<>()).add(h);
        }
        List<DeleteFile> added = new ArrayList<>();
        List<DeleteFile> removed = new ArrayList<>();
        OutputFileFactory files = outputFiles();
        GenericFileWriterFactory writers = writers();
        for (Map.Entry<String, List<Hit>> e : byFile.entrySet()) {
            String dataFile = e.getKey();
            java.util.TreeSet<Long> positions = new java.util.TreeSet<>();
            e.getValue().forEach(h -> positions.add(h.position()));
            for (DeleteFile earlier : e.getValue().get(0).task().deletes()) {
                if (earlier.content() == org.apache.iceberg.FileContent.POSITION_DELETES
                        && !org.apache.iceberg.util.ContentFileUtil.isDV(earlier)
                        && dataFile.equals(org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(earlier))) {
                    positions.addAll(positionsIn(earlier, dataFile));
                    removed.add(earlier);
                }
            }
            // beside its data file: the same spec and partition, whatever spec the table has now
            FileScanTask task = e.getValue().get(0).task();
            PartitionSpec spec = task.spec();
            StructLike partition = spec.isUnpartitioned() ? null : task.file().partition();
            PositionDeleteWriter<Record> writer = writers.newPositionDeleteWriter(spec.isUnpartitioned()
                    ? files.newOutputFile() : files.newOutputFile(spec, partition), spec, partition);
            try (writer) {
                PositionDelete<Record> delete = PositionDelete.create();
                for (long position : positions) {
                    writer.write(delete.set(dataFile, position));
                }
            }
            added.add(writer.toDeleteFile());
        }
        return new Deletes(added, removed);
    }

    /** The positions a position-delete file marks in {@code dataFile}. */
    private List<Long> positionsIn(DeleteFile deletes, String dataFile) throws IOException {
        Schema pathPos = org.apache.iceberg.io.DeleteSchemaUtil.pathPosSchema();
        List<Long> positions = new ArrayList<>();
        try (CloseableIterable<Record> rows = Parquet.read(table.io().newInputFile(deletes.location()))
                .project(pathPos).createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(pathPos, fileSchema))
                .build()) {
            for (Record r : rows) {
                if (dataFile.contentEquals((CharSequence) r.get(0))) {
                    positions.add((Long) r.get(1));
                }
            }
        } catch (IOException | RuntimeException e) {
            throw dev.kbackfill.sink.lake.LakeDamage.inFile(deletes.location(), "delete file", e);
        }
        return positions;
    }

    /** What {@link #copyLive} wrote: the new data files and the rows in them. */
    record Copy(List<DataFile> files, long rows) {
    }

    /**
     * Copies the tasks' live rows (deletes applied), file after file, into new data files, each row in its partition
     * under the table's current spec (a file written under an earlier spec is repartitioned); streamed, a writer open
     * per partition met.
     */
    Copy copyLive(List<FileScanTask> tasks) throws IOException {
        PartitionSpec spec = table.spec();
        org.apache.iceberg.io.FanoutDataWriter<Record> writer = new org.apache.iceberg.io.FanoutDataWriter<>(writers(),
                outputFiles(), table.io(), targetFileSize());
        PartitionKey key = spec.isUnpartitioned() ? null : new PartitionKey(spec, schema);
        org.apache.iceberg.data.InternalRecordWrapper internal = new org.apache.iceberg.data.InternalRecordWrapper(
                schema.asStruct());
        long[] rows = {0};
        try (writer) {
            for (FileScanTask task : tasks) {
                liveRows(task, schema, false, r -> {
                    Record copy = r.copy();
                    if (key != null) {
                        key.partition(internal.wrap(copy));
                    }
                    writer.write(copy, spec, key);
                    rows[0]++;
                });
            }
        }
        return new Copy(writer.result().dataFiles(), rows[0]);
    }

    /** The table's target size of a data file ({@code write.target-file-size-bytes}). */
    long targetFileSize() {
        return Long.parseLong(table.properties().getOrDefault(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
                String.valueOf(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT)));
    }

    private GenericFileWriterFactory writers() {
        return new GenericFileWriterFactory.Builder(table).dataFileFormat(FileFormat.PARQUET)
                .deleteFileFormat(FileFormat.PARQUET).build();
    }

    private OutputFileFactory outputFiles() {
        return OutputFileFactory.builderFor(table, 0, System.currentTimeMillis()).format(FileFormat.PARQUET)
                .operationId(UUID.randomUUID().toString()).build();
    }

    /**
     * The task's live rows (the table's position and equality deletes applied) in {@code projection}. With
     * {@code internalAllowed}, values may come in Iceberg's internal representation (timestamps as microseconds, dates as
     * days: what {@link IcebergTypes#physical} makes of either), which spares the probe a {@code java.time} object per
     * value and row; not where equality deletes apply, whose filter compares generic values, nor for columns of types
     * kbackfill does not write.
     */
    private void liveRows(FileScanTask task, Schema projection, boolean internalAllowed, Consumer<Record> out) {
        if (task.file().format() != FileFormat.PARQUET) {
            throw new org.apache.iceberg.exceptions.ValidationException("data file %s of %s is %s; kbackfill reads "
                    + "Parquet data files only", task.file().location(), table.name(), task.file().format());
        }
        try {
            liveRowsOf(task, projection, internalAllowed, out);
        } catch (RuntimeException e) {
            throw failedRead(task, e);
        }
    }

    /**
     * A read of {@code task} that failed, naming the file where a file is what is wrong: the one the failure names, else
     * the first whose length is not the one the table's metadata records (Parquet's own failures name no file), else
     * the data file.
     */
    private RuntimeException failedRead(FileScanTask task, Exception e) {
        java.util.Optional<String> named = dev.kbackfill.sink.lake.LakeDamage.fileOf(e);
        if (named.isPresent() && named.get().equals(task.file().location())) {
            return dev.kbackfill.sink.lake.LakeDamage.inFile(task.file().location(), "data file", e);
        }
        for (DeleteFile d : task.deletes()) {
            if (named.isPresent() && named.get().equals(d.location())) {
                return dev.kbackfill.sink.lake.LakeDamage.inFile(d.location(), "delete file", e);
            }
        }
        if (!lengthAsRecorded(task.file())) {
            return dev.kbackfill.sink.lake.LakeDamage.inFile(task.file().location(), "data file", e);
        }
        for (DeleteFile d : task.deletes()) {
            if (!lengthAsRecorded(d)) {
                return dev.kbackfill.sink.lake.LakeDamage.inFile(d.location(), "delete file", e);
            }
        }
        return dev.kbackfill.sink.lake.LakeDamage.inFile(task.file().location(), "data file", e);
    }

    /** Whether the file is there with the length the table's metadata records for it (false: not there, or unknown). */
    private boolean lengthAsRecorded(org.apache.iceberg.ContentFile<?> file) {
        try {
            return table.io().newInputFile(file.location()).getLength() == file.fileSizeInBytes();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void liveRowsOf(FileScanTask task, Schema projection, boolean internalAllowed, Consumer<Record> out) {
        GenericDeleteFilter deletes = new GenericDeleteFilter(table.io(), task, schema, projection);
        Schema required = deletes.requiredSchema();
        // the two representations give the same physical values for the columns kbackfill writes (lake types)
        boolean internal = internalAllowed && task.deletes().stream()
                .noneMatch(d -> d.content() == org.apache.iceberg.FileContent.EQUALITY_DELETES)
                && required.columns().stream().allMatch(f -> MetadataColumns.isMetadataColumn(f.fieldId())
                || IcebergTypes.lakeType(f.type()).isPresent());
        CloseableIterable<Record> records = Parquet.read(table.io().newInputFile(task.file().location()))
                .project(required).split(task.start(), task.length())
                .createReaderFunc(fileSchema -> internal ? org.apache.iceberg.data.parquet.InternalReader
                        .<Record>create(required, fileSchema) : GenericParquetReaders.buildReader(required, fileSchema))
                .build();
        // the filter's rows are in the required schema, which starts with the projection's columns
        try (CloseableIterable<Record> live = deletes.filter(records)) {
            int[] at = projection.columns().stream().mapToInt(f -> indexOf(required, f.fieldId())).toArray();
            for (Record r : live) {
                if (isIdentity(at)) {
                    out.accept(r);
                } else {
                    GenericRecord p = GenericRecord.create(projection);
                    for (int i = 0; i < at.length; i++) {
                        p.set(i, r.get(at[i]));
                    }
                    out.accept(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean isIdentity(int[] at) {
        for (int i = 0; i < at.length; i++) {
            if (at[i] != i) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(Schema schema, int fieldId) {
        List<Types.NestedField> fields = schema.columns();
        for (int i = 0; i < fields.size(); i++) {
            if (fields.get(i).fieldId() == fieldId) {
                return i;
            }
        }
        throw new IllegalStateException("field " + fieldId + " missing from " + schema);
    }

    private static Schema withPosition(Schema s) {
        return TypeUtil.join(s, new Schema(MetadataColumns.ROW_POSITION));
    }

    private static boolean prunable(Type type) {
        return type.typeId() == Type.TypeID.STRING || type.typeId() == Type.TypeID.LONG
                || type.typeId() == Type.TypeID.INTEGER;
    }

    /**
     * Whether a data file's bounds for the first key column admit one of the keys. Iceberg's bounds hold whatever
     * their truncation: a truncated lower bound is a prefix (no larger than any value), a truncated upper bound is
     * rounded up.
     */
    private static boolean mayHold(DataFile file, Types.NestedField column, TreeSet<Object> keys) {
        Map<Integer, ByteBuffer> lower = file.lowerBounds();
        Map<Integer, ByteBuffer> upper = file.upperBounds();
        if (lower == null || upper == null || !lower.containsKey(column.fieldId()) || !upper.containsKey(column.fieldId())) {
            return true;
        }
        Object lo = LakeValues.keyValue(IcebergTypes.physical(Conversions.fromByteBuffer(column.type(),
                lower.get(column.fieldId()))));
        Object hi = LakeValues.keyValue(IcebergTypes.physical(Conversions.fromByteBuffer(column.type(),
                upper.get(column.fieldId()))));
        Object firstAtLeast = keys.ceiling(lo);
        return firstAtLeast != null && KeyOrder.compareValues(firstAtLeast, hi) <= 0;
    }
}
