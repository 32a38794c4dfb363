package dev.kbackfill.sink.delta;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.SinkConfigException;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.hook.PostCommitHook;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;

/**
 * Rewrites a table's data files into key-sorted ones in one commit whose removes and adds say
 * {@code dataChange=false}: the rows do not change, so streaming readers do not read them again; rows marked in
 * deletion vectors are left out, so the vectors go too. Its commit is refused, not lost, when a run commits
 * meanwhile (on S3 a conditional put; elsewhere the log store refuses a version that exists). It reads the whole
 * table into memory: for tables that fit the heap.
 */
public final class DeltaCompaction {

    /** What a compaction did. */
    public record Result(int filesBefore, int filesRewritten, int filesWritten, long rows, long version) {
    }

    private DeltaCompaction() {
    }

    /**
     * @param keyColumns the key columns; defaults to those recorded when kbackfill created the table
     * @param rowsPerFile rows per written file batch
     */
    public static Result compact(String path, Optional<List<String>> keyColumns, int rowsPerFile) throws IOException {
        return compact(path, java.util.Map.of(), keyColumns, rowsPerFile);
    }

    /**
     * @param storage    the filesystem's settings ({@code --sink-property}, {@code --sink-command-config})
     * @param keyColumns the key columns; defaults to those recorded when kbackfill created the table
     * @param rowsPerFile rows per written file batch
     */
    public static Result compact(String path, java.util.Map<String, ?> storage, Optional<List<String>> keyColumns,
                                 int rowsPerFile) throws IOException {
        Engine engine = DefaultEngine.create(DeltaFiles.hadoopConfiguration(storage));
        Snapshot snapshot;
        try {
            snapshot = TableManager.loadSnapshot(path).build(engine);
        } catch (TableNotFoundException e) {
            throw new SinkConfigException("no Delta table at " + path);
        }
        List<String> unwritable = KernelInternals.unwritableFeatures(snapshot);
        if (!unwritable.isEmpty()) {
            throw new SinkConfigException("the Delta table at " + path + " uses " + String.join(", ", unwritable)
                    + ", which Delta Kernel cannot write: use the table's own OPTIMIZE (in Spark) to compact it");
        }
        List<String> sensitive = KernelInternals.rewriteSensitiveFeatures(snapshot);
        if (!sensitive.isEmpty()) {
            throw new SinkConfigException("the Delta table at " + path + " uses " + String.join(" and ", sensitive)
                    + ": compaction rewrites its files into key-sorted ones and would drop that (row ids, clustering); "
                    + "use the table's own OPTIMIZE instead");
        }
        StructType schema = snapshot.getSchema();
        List<String> keys = keyColumns.orElseGet(() -> Optional.ofNullable(snapshot.getTableProperties()
                .get(DeltaFiles.KEY_COLUMNS_PROPERTY)).map(v -> Arrays.asList(v.split(","))).orElseThrow(
                () -> new SinkConfigException("the Delta table at " + path + " does not record its key columns (it was "
                        + "not created by kbackfill): name them with --key-columns")));
        int[] ordinals = keys.stream().mapToInt(k -> {
            int o = schema.indexOf(k);
            if (o < 0) {
                throw new SinkConfigException("key column " + k + " is not in the Delta table at " + path);
            }
            return o;
        }).toArray();
        Scan scan = snapshot.getScanBuilder().build();
        Row scanState = scan.getScanState(engine);
        List<Row> files = DeltaFiles.scanFiles(engine, scan);
        if (files.size() == 0 || files.size() == 1 && KernelInternals.deletedRows(files.get(0)) == 0) {
            return new Result(files.size(), 0, 0, 0, snapshot.getVersion());
        }
        List<Object[]> rows = new ArrayList<>();
        List<Row> actions = new ArrayList<>();
        for (Row f : files) {
            rows.addAll(DeltaFiles.read(engine, scanState, f, schema));
            actions.add(KernelInternals.removeAction(f, false));
        }
        dev.kbackfill.sink.lake.KeyOrder.sortByKey(rows, ordinals);
        Transaction txn = snapshot.buildUpdateTableTransaction("kbackfill", Operation.MANUAL_UPDATE)
                .withMaxRetries(0).build(engine);
        List<Row> adds = DeltaFiles.write(engine, txn, schema, rows, rowsPerFile);
        adds.forEach(a -> actions.add(NoDataChange.of(a)));
        io.delta.kernel.TransactionCommitResult result;
        try {
            result = txn.commit(engine, CloseableIterable.inMemoryIterable(KernelInternals.iterator(actions)));
        } catch (io.delta.kernel.exceptions.ConcurrentWriteException
                 | io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException e) {
            // a run (or another compaction) committed since this one read the table: its rows would be lost
            throw new dev.kbackfill.core.sink.SinkException("another writer committed to " + path + " while it was "
                    + "being compacted; nothing was committed (the rewritten files are unreferenced); compact again", e);
        }
        for (PostCommitHook hook : result.getPostCommitHooks()) {
            hook.threadSafeInvoke(engine);
        }
        return new Result(files.size(), files.size(), adds.size(), rows.size(), result.getVersion());
    }
}
