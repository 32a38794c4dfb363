package dev.kbackfill.sink.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.sink.JobLockFile;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.RecordRejectedException;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.sink.lake.KeyOrder;
import dev.kbackfill.sink.lake.KeyedBatch;
import dev.kbackfill.sink.lake.LakeRows;
import dev.kbackfill.sink.lake.LakeType;
import dev.kbackfill.sink.lake.MetadataOrdinals;
import dev.kbackfill.sink.lake.LakeSink;
import dev.kbackfill.sink.lake.TombstoneLedger;
import dev.kbackfill.sink.lake.ValueMismatch;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Types;

/**
 * Keyed upserts into an Iceberg table with Iceberg Java. Each batch: find the data files that may hold the batch's
 * keys (the first key column's bounds), read their key and metadata columns with the table's deletes applied, keeping
 * only the rows of incoming keys, decide each key by the one version rule ({@link KeyedBatch}), and commit in
 * <em>one</em> snapshot the batch's rows as new data files sorted by key, position deletes for the rows they
 * replace or delete (one file per data file, merged with that file's earlier ones), the job's state and the tombstone ledger's index in the snapshot summary ({@link TableState}).
 * A crash leaves either the whole batch with its progress or neither.
 *
 * <p>Rows are replaced with position deletes (format v2, merge-on-read): a batch writes what it changes, never the
 * files it touches, and memory follows the batch, not the table. Another writer's commit between this sink's read and
 * its commit is checked by Iceberg's validations (no conflicting data or delete files since the snapshot read): a
 * commit that still fits is retried by Iceberg, one that does not is refused and the batch planned again from the
 * table as it is then; nothing is lost either way.
 */
final class IcebergTable implements LakeSink.Table {

    private final SinkSettings settings;
    private final IcebergTableRef ref;
    private final SinkSettings.MetadataColumns meta;
    /** The table's schema: checked, created and changed there. */
    private final IcebergTableSchema tableSchema;
    private IcebergTables tables;
    private Table table;
    /** The job's lease on a table in an object store while this sink holds it; checked before every commit. */
    private volatile dev.kbackfill.sink.lake.ObjectStoreLease lease;
    private final List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The keys this sink wrote since the table was empty, while every commit since was its own. */
    private final dev.kbackfill.sink.lake.OwnWrites own = dev.kbackfill.sink.lake.OwnWrites.forThisHeap();

    IcebergTable(SinkSettings settings, IcebergTableRef ref) {
        this.settings = settings;
        this.ref = ref;
        this.meta = settings.metadata();
        this.tableSchema = new IcebergTableSchema(settings, ref);
    }

    @Override
    public String target() {
        return "iceberg:" + ref.shown();
    }

    @Override
    public String shown() {
        return "the Iceberg table " + ref.shown();
    }

    /** The job's state lives in the table itself: another table holds no state of the job. */
    @Override
    public String destination() {
        return "the Iceberg table";
    }

    /** Every batch is one snapshot with a delete file: fewer, larger batches keep the table's metadata small. */
    @Override
    public int defaultBatchRows() {
        return 250_000;
    }

    @Override
    public void connect() {
        if (tables == null) {
            tables = IcebergTables.open(ref, settings);
        }
    }

    @Override
    public boolean exists() {
        return table().isPresent();
    }

    @Override
    public List<String> check() {
        return tableSchema.check(table().orElseThrow());
    }

    /**
     * Whether a data file holds a row without an offset (or the table no offset column, and a row), from the files'
     * null counts: a file without them may, and counts as one that does.
     */
    @Override
    public boolean holdsForeignRows() {
        return IcebergDamage.FORMAT.reading(ref.shown(), this::holdsRowsWithoutOffset);
    }

    private boolean holdsRowsWithoutOffset() {
        Optional<Table> t = table();
        if (t.isEmpty() || ref.head(t.get()) == null) {
            return false;
        }
        Types.NestedField offset = t.get().schema().findField(meta.offset());
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks = t.get().newScan()
                .useSnapshot(ref.head(t.get()).snapshotId()).includeColumnStats().planFiles()) {
            for (org.apache.iceberg.FileScanTask task : tasks) {
                org.apache.iceberg.DataFile f = task.file();
                if (offset == null ? f.recordCount() > 0 : f.nullValueCounts() == null
                        || f.nullValueCounts().getOrDefault(offset.fieldId(), 1L) > 0) {
                    return true;
                }
            }
            return false;
        } catch (java.io.IOException e) {
            throw new dev.kbackfill.core.sink.SinkException("cannot read the files of " + ref.shown() + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void checkCreation() {
        // the table's properties are checked by Iceberg when the first batch creates it; its partitioning here
        IcebergPartitioning.check(settings.partitionBy(), ref.shown());
    }

    private Optional<Table> table() {
        if (table == null) {
            table = IcebergDamage.FORMAT.reading(ref.shown(), () -> tables.load().orElse(null));
        }
        return Optional.ofNullable(table);
    }

    @Override
    public AutoCloseable lock(String job) {
        Optional<Path> local = tables.localDirectory();
        if (local.isPresent()) {
            return JobLockFile.acquire(JobLockFile.beside(local.get(), job), job, target());
        }
        AutoCloseable taken = tables.lease(job);
        if (taken instanceof dev.kbackfill.sink.lake.ObjectStoreLease l) {
            lease = l;
        }
        return () -> {
            lease = null;
            taken.close();
        };
    }

    private void checkLease() {
        dev.kbackfill.sink.lake.ObjectStoreLease held = lease;
        if (held != null) {
            held.check();
        }
    }

    @Override
    public Optional<JobState> stored(String job) {
        return IcebergDamage.FORMAT.reading(ref.shown(), () -> table().flatMap(t -> new TableState(t, ref.head(t)).job(job)));
    }

    @Override
    public List<String> jobs() {
        return IcebergDamage.FORMAT.reading(ref.shown(), () -> table().map(t -> new TableState(t, ref.head(t)).jobs()).orElse(List.of()));
    }

    @Override
    public void commitStates(Map<String, JobState> states) {
        Map<String, String> values = new LinkedHashMap<>();
        states.forEach((job, state) -> values.put(TableState.jobKey(job), state == null ? "" : JobStateJson.write(state)));
        commitState(table().orElseThrow(), values);
    }

    @Override
    public long forgetDeletesBefore(long millis) {
        return IcebergDamage.FORMAT.reading(ref.shown(), () -> forgetDeletesOnce(millis));
    }

    private long forgetDeletesOnce(long millis) {
        Table t = table().orElseThrow();
        TableState state = new TableState(t, ref.head(t));
        TombstoneLedger ledger = state.ledger();
        long forgotten = ledger.forgetBefore(millis);
        if (forgotten > 0) {
            commitState(t, Map.of(TableState.DELETES, state.writeLedger(ledger).orElseThrow()));
        }
        return forgotten;
    }

    /** Reads the table's current snapshot back, probing only the files that may hold the range's keys. */
    @Override
    public dev.kbackfill.core.verify.TargetLookup verifier() {
        Table t = table().orElseThrow(() -> new SinkConfigException("no Iceberg table " + ref.shown()
                + ": nothing to verify"));
        return new IcebergTargetLookup(t, ref.head(t), settings, ref.shown());
    }

    @Override
    public void refresh() {
        if (table != null) {
            IcebergDamage.FORMAT.reading(ref.shown(), () -> {
                table.refresh();
                return null;
            });
        }
        own.forget();
    }

    /**
     * Sets the state committed in snapshot {@code id} as table properties too (read where that snapshot expired); not
     * for a branch's commits: a shadow branch lives until its publish, and the properties are the whole table's.
     */
    private void tagProperties(Transaction txn, Map<String, String> values, long id) {
        if (ref.branch().isPresent()) {
            return;
        }
        org.apache.iceberg.UpdateProperties props = txn.updateProperties();
        values.forEach((k, v) -> TableState.setProperty(props, k, v, id));
        props.commit();
    }

    /** Commits a snapshot that changes no rows, only kbackfill's state (a job begun or reset, the ledger pruned). */
    private void commitState(Table t, Map<String, String> values) {
        IcebergDamage.FORMAT.reading(ref.shown(), () -> {
            commitStateOnce(t, values);
            return null;
        });
    }

    private void commitStateOnce(Table t, Map<String, String> values) {
        Long base = ref.head(t) == null ? null : ref.head(t).snapshotId();
        Transaction txn = t.newTransaction();
        SnapshotUpdate<?> append = txn.newAppend();
        values.forEach(append::set);
        ref.branch().ifPresent(append::toBranch);
        append.commit();
        long id = ref.head(txn.table()).snapshotId();
        tagProperties(txn, values, id);
        checkLease();
        txn.commitTransaction();
        committed(t, base, List.of(), new int[0]);
    }

    // The loops over a batch's keys and hits are methods of their own: inside writeOnce, a method run once per batch,
    // they made the JIT compile all of it again and again (on-stack replacement: 1.2 s of C2 time in a 2M-key run).

    private static Map<List<Object>, KeyedBatch.Stored<IcebergFiles.Hit>> byKey(List<IcebergFiles.Hit> hits,
                                                                              int[] keyOrdinals) {
        Map<List<Object>, KeyedBatch.Stored<IcebergFiles.Hit>> found = new HashMap<>();
        for (IcebergFiles.Hit h : hits) {
            found.put(keyOf(h.row(), keyOrdinals), new KeyedBatch.Stored<>(h.row(), h));
        }
        return found;
    }

    /**
     * Follows {@link #own} after a commit of this sink's on {@code base} (null: the table had no snapshot) that wrote
     * {@code keys} (their columns {@code keyOrdinals}, in the keys' order).
     */
    private void committed(Table t, Long base, java.util.Collection<List<Object>> keys, int[] keyOrdinals) {
        Snapshot now = ref.head(t);
        own.committed(base, base == null, now != null && java.util.Objects.equals(now.parentId(), base),
                now == null ? null : now.snapshotId(), keys, keyOrdinals);
    }

    @Override
    public WriteResult write(WriteBatch batch, JobState after) {
        try {
            return writeOnce(batch, after);
        } catch (ValidationException | CommitFailedException e) {
            RuntimeException damaged = IcebergDamage.FORMAT.named(ref.shown(), e);
            if (damaged != e) {
                throw damaged;
            }
            // another writer committed rows or deletes this batch's plan did not see
            throw new LakeSink.Stale(e.getMessage(), e);
        } catch (RuntimeException e) {
            throw IcebergDamage.FORMAT.named(ref.shown(), e);
        }
    }

    /**
     * The table as the batch writes it: created from the batch where absent, else read again (another engine may
     * have changed its schema or partition spec since the last batch; a commit of rows in between would fail this
     * batch's validation anyway), evolved and checked against the batch.
     */
    private Table tableFor(WriteBatch batch) {
        Table t = table().orElse(null);
        if (t == null) {
            t = table = tableSchema.create(tables, batch);
        } else {
            t.refresh();
        }
        tableSchema.evolve(t, batch);
        return t;
    }

    /** The table's rows as the lake seam reads and writes them: names, types, key ordinals, required columns. */
    private static LakeRows lakeRows(List<Types.NestedField> columns, int[] keyOrdinals) {
        LakeType[] types = new LakeType[columns.size()];
        for (int i = 0; i < types.length; i++) {
            types[i] = IcebergTypes.lakeType(columns.get(i).type()).orElse(null);
        }
        boolean[] required = new boolean[columns.size()];
        for (int i = 0; i < required.length; i++) {
            required[i] = columns.get(i).isRequired();
        }
        return new LakeRows(columns.stream().map(Types.NestedField::name).toList(), types,
                columns.stream().map(Types.NestedField::type).toArray(), keyOrdinals, required);
    }

    private WriteResult writeOnce(WriteBatch batch, JobState after) {
        Table t = tableFor(batch);
        Schema schema = t.schema();
        List<Types.NestedField> columns = schema.columns();
        tableSchema.check(schema, batch);
        Map<String, String> summary = new LinkedHashMap<>();
        summary.put(TableState.jobKey(batch.job()), JobStateJson.write(after));
        if (batch.changes().isEmpty()) {
            commitState(t, summary);
            return new WriteResult(0, 0, 0, Map.of());
        }
        int[] keyOrdinals = batch.shape().keyColumns().stream().mapToInt(k -> ordinal(columns, k.name())).toArray();
        LakeRows lakeRows = lakeRows(columns, keyOrdinals);
        MetadataOrdinals ord = MetadataOrdinals.of(name -> ordinal(columns, name), meta);
        Map<Integer, Long> collided = new TreeMap<>();
        TableState tableState = new TableState(t, ref.head(t));
        TombstoneLedger ledger = tableState.ledger();
        KeyedBatch<IcebergFiles.Hit> decisions = new KeyedBatch<>(settings, ord, ledger, lakeRows, this::refused);
        Map<List<Object>, Change> incoming = decisions.byKey(batch, collided);
        Snapshot base = ref.head(t);
        IcebergFiles files = new IcebergFiles(t);
        // where every row of the table is one this sink wrote, keys it never wrote have none
        java.util.Set<List<Object>> probed = base == null ? incoming.keySet()
                : own.toProbe(base.snapshotId(), incoming.keySet(), keyOrdinals);
        List<IcebergFiles.Hit> hits = base == null || probed.isEmpty() ? List.of()
                : files.probe(base, keyOrdinals, java.util.stream.IntStream.concat(java.util.Arrays.stream(ord.present()),
                        java.util.stream.IntStream.of(lakeRows.ownVersionFieldOrdinal(settings.versionField(),
                                settings.mapping())).filter(o -> o >= 0)).distinct().toArray(), probed);
        Map<List<Object>, KeyedBatch.Stored<IcebergFiles.Hit>> found = byKey(hits, keyOrdinals);
        List<Object[]> newRows = new ArrayList<>();
        List<IcebergFiles.Hit> takenOut = new ArrayList<>();
        Map<IcebergFiles.Hit, Change> softDeleted = new LinkedHashMap<>();
        WriteResult result = decisions.decide(batch, incoming, found,
                collided, new KeyedBatch.Effects<>() {
                    @Override
                    public void takeOut(IcebergFiles.Hit where) {
                        takenOut.add(where);
                    }

                    @Override
                    public void softDelete(IcebergFiles.Hit where, Change c) {
                        softDeleted.put(where, c); // marked once the stored values are read
                    }
                }, newRows);
        if (!softDeleted.isEmpty()) {
            for (Map.Entry<IcebergFiles.Hit, Object[]> e : files.readWhole(softDeleted.keySet()).entrySet()) {
                Object[] row = e.getValue();
                row[ord.deleted()] = true;
                ord.stamp(row, softDeleted.get(e.getKey()), batch.topic());
                newRows.add(row);
                takenOut.add(e.getKey());
            }
        }
        tableState.writeLedger(ledger).ifPresent(index -> summary.put(TableState.DELETES, index));
        KeyOrder.sortByKey(newRows, keyOrdinals);
        commit(batch, t, base, files, newRows, takenOut, summary, incoming.keySet(), keyOrdinals);
        return result;
    }

    /**
     * Commits the batch's rows, its deletes and the job's state in one snapshot, validated against {@code base}: the
     * rows this batch decided on are the rows of {@code base}, so a commit in between that adds rows or deletes fails
     * validation, and the batch is planned again.
     */
    private void commit(WriteBatch batch, Table t, Snapshot base, IcebergFiles files, List<Object[]> newRows,
                        List<IcebergFiles.Hit> takenOut, Map<String, String> summary,
                        java.util.Set<List<Object>> keys, int[] keyOrdinals) {
        try {
            List<DataFile> data = files.writeRows(newRows, keyOrdinals);
            IcebergFiles.Deletes deletes = files.writeDeletes(takenOut);
            Transaction txn = t.newTransaction();
            RowDelta delta = txn.newRowDelta();
            data.forEach(delta::addRows);
            deletes.added().forEach(delta::addDeletes);
            deletes.removed().forEach(delta::removeDeletes);
            if (base != null) {
                delta.validateFromSnapshot(base.snapshotId());
                delta.validateNoConflictingDataFiles();
                delta.validateNoConflictingDeleteFiles();
                delta.validateDeletedFiles();
                delta.validateDataFilesExist(takenOut.stream().map(IcebergFiles.Hit::file).distinct().toList());
            }
            summary.forEach(delta::set);
            ref.branch().ifPresent(delta::toBranch);
            delta.commit();
            long id = ref.head(txn.table()).snapshotId();
            tagProperties(txn, summary, id);
            checkLease();
            txn.commitTransaction();
            committed(t, base == null ? null : base.snapshotId(), keys, keyOrdinals);
        } catch (IOException e) {
            throw new SinkException("writing batch " + batch.sequence() + " into " + ref.shown() + " failed: "
                    + e.getMessage() + "; nothing of this batch was committed", e);
        } catch (UncheckedIOException e) {
            throw new SinkException("writing batch " + batch.sequence() + " into " + ref.shown() + " failed: "
                    + e.getCause().getMessage() + "; nothing of this batch was committed", e);
        }
    }

    private static int ordinal(List<Types.NestedField> columns, String name) {
        for (int i = 0; i < columns.size(); i++) {
            if (columns.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    static List<Object> keyOf(Object[] row, int[] keyOrdinals) {
        return LakeRows.keyOf(row, keyOrdinals);
    }

    private RecordRejectedException refused(Change c, ValueMismatch e) {
        return new RecordRejectedException(c, "the Iceberg table " + ref.shown() + " cannot hold it: " + e.getMessage()
                + (e.widens().isPresent() && !settings.addsColumns() ? " (--evolve-schema widens the column)" : "")
                + "; nothing of its batch was written", e);
    }

    @Override
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    @Override
    public void close() {
        if (tables != null) {
            tables.close();
        }
        tables = null;
        table = null;
    }
}
