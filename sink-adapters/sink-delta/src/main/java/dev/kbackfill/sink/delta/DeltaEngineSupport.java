package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.ValueMismatch;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.version.Version;
import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.hook.PostCommitHook;
import io.delta.kernel.types.DataType;
import io.delta.kernel.utils.CloseableIterable;
import org.apache.hadoop.conf.Configuration;

/**
 * What an engine that writes a kbackfill Delta table's rows itself (the Spark engine's MERGE) needs to write them as
 * {@link DeltaTable} does: the tombstone ledger ({@link DeltaTombstones}: read it whole, record a write's deletes
 * before it), the physical form of values and the ledger's key text, the table's key columns, and the version of an
 * application's idempotent transactions.
 */
public final class DeltaEngineSupport {

    private DeltaEngineSupport() {
    }

    /**
     * What a table created from {@code batch}'s columns would lack (the key, a value column): empty where the batch
     * can create it, as the single-machine sink decides.
     */
    public static List<String> missingToCreate(dev.kbackfill.core.sink.WriteBatch batch,
                                               dev.kbackfill.core.sink.SinkSettings settings) {
        return dev.kbackfill.sink.lake.HeldBatches.missingToCreate(batch, settings);
    }

    /**
     * Refuses a write that leaves {@code left} of the table's columns out: a lake table's row is written whole.
     *
     * @throws dev.kbackfill.core.sink.SinkConfigException naming the columns
     */
    public static void requireWritten(List<String> left) {
        dev.kbackfill.sink.lake.KeyedBatch.requireWritten(left);
    }

    /** The lake type a table kbackfill creates gives a column of {@code type}, for an engine's own schema. */
    public static dev.kbackfill.sink.lake.LakeType columnType(dev.kbackfill.core.record.ColumnType type) {
        return dev.kbackfill.sink.lake.LakeType.forColumn(type);
    }

    /**
     * What an engine's commit throws when another writer committed since it read the table: the sink reads the table
     * again and retries, as after its own commits.
     */
    public static RuntimeException anotherWriterCommitted(String message, Throwable cause) {
        return new dev.kbackfill.sink.lake.LakeSink.Stale(message, cause);
    }

    private static Optional<Snapshot> snapshot(Engine engine, String path) {
        try {
            return Optional.of(TableManager.loadSnapshot(path).build(engine));
        } catch (TableNotFoundException e) {
            return Optional.empty();
        }
    }

    /** The key columns kbackfill created the table with, if it did. */
    public static Optional<List<String>> keyColumns(String path) {
        return snapshot(DefaultEngine.create(new Configuration()), path)
                .flatMap(s -> Optional.ofNullable(s.getTableProperties().get(DeltaFiles.KEY_COLUMNS_PROPERTY)))
                .map(v -> List.of(v.split(",")));
    }

    /**
     * The columns Delta's writer computes, which a writer must leave out of the rows it gives: a generated column with
     * its expression ({@code delta.generationExpression}), an identity column with an empty one. Top-level columns of
     * the table's latest version; none without a table.
     */
    public static Map<String, String> computedColumns(String path) {
        Map<String, String> computed = new java.util.LinkedHashMap<>();
        snapshot(DefaultEngine.create(new Configuration()), path).ifPresent(s -> {
            for (io.delta.kernel.types.StructField f : s.getSchema().fields()) {
                io.delta.kernel.types.FieldMetadata m = f.getMetadata();
                if (m.contains("delta.generationExpression")) {
                    computed.put(f.getName(), String.valueOf(m.get("delta.generationExpression")));
                } else if (m.contains("delta.identity.start")) {
                    computed.put(f.getName(), "");
                }
            }
        });
        return computed;
    }

    /** The table's CHECK constraints ({@code delta.constraints.NAME} properties): name to SQL expression. */
    public static Map<String, String> checkConstraints(String path) {
        Map<String, String> checks = new java.util.TreeMap<>();
        snapshot(DefaultEngine.create(new Configuration()), path).ifPresent(s -> s.getTableProperties().forEach((k, v) -> {
            if (k.startsWith("delta.constraints.")) {
                checks.put(k.substring("delta.constraints.".length()), v);
            }
        }));
        return checks;
    }

    /** The latest version committed by the idempotent writer {@code appId} ({@code txn} action), if any. */
    public static Optional<Long> transactionVersion(String path, String appId) {
        Engine engine = DefaultEngine.create(new Configuration());
        return snapshot(engine, path).flatMap(s -> s.getLatestTransactionVersion(engine, appId));
    }

    /** Whether the table holds any data file (a table kbackfill just created holds none). */
    public static boolean hasData(String path) {
        Engine engine = DefaultEngine.create(new Configuration());
        Optional<Snapshot> snapshot = snapshot(engine, path);
        if (snapshot.isEmpty()) {
            return false;
        }
        try (io.delta.kernel.utils.CloseableIterator<io.delta.kernel.data.FilteredColumnarBatch> files =
                     snapshot.get().getScanBuilder().build().getScanFiles(engine)) {
            while (files.hasNext()) {
                try (io.delta.kernel.utils.CloseableIterator<io.delta.kernel.data.Row> rows = files.next().getRows()) {
                    if (rows.hasNext()) {
                        return true;
                    }
                }
            }
            return false;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The key as ledger text ({@link dev.kbackfill.sink.lake.TombstoneLedger#keyText}), from the values of the key
     * columns {@code columns}, in their order, in their physical form ({@link #physical}).
     */
    public static String keyText(List<String> columns, List<Object> physicalKey) {
        return DeltaTombstones.keyText(columns, physicalKey.stream()
                .map(v -> v instanceof byte[] b ? (Object) java.nio.ByteBuffer.wrap(b) : v).toList());
    }

    /**
     * Kernel's types of the columns of a schema written as the Delta protocol writes one ({@code schemaString}: what
     * Spark's {@code StructType.json()} gives): the engine's table schema read as this sink reads any table's, so
     * that its values take the physical form {@link #physical} gives them here.
     */
    public static List<DataType> columnTypes(String schemaJson) {
        List<DataType> types = new java.util.ArrayList<>();
        KernelInternals.schema(schemaJson).fields().forEach(f -> types.add(f.getDataType()));
        return types;
    }

    /**
     * A decoded value in the physical form of a Delta column of {@code type}, as {@link DeltaTable} writes it
     * (timestamps long microseconds, dates int days, decimals scaled to 18 digits, binary a ByteBuffer).
     *
     * @throws IllegalArgumentException when the value does not fit the column
     */
    public static Object physical(Object value, DataType type, String column) {
        try {
            return DeltaTypes.physical(value, type, column);
        } catch (ValueMismatch e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * Every key the table's ledger holds, as {@link #keyText} gives it for the key columns {@code keys}, with the
     * version of the tombstone that deleted it; empty without a table. An entry a ledger of before recorded for
     * several columns (their values in the order the writer took them) is read in the order of {@code keys}, as this
     * engine wrote them; where it and today's entry of the key are both held, the newer counts.
     */
    public static Map<String, Version> read(String path, List<String> keys) {
        // no table, no deletes
        Map<String, Version> held = new HashMap<>();
        snapshot(DefaultEngine.create(new Configuration()), path).map(s -> new DeltaTombstones(s).all())
                .orElseGet(HashMap::new).forEach((text, v) -> held.merge(DeltaTombstones.fromLegacy(text, keys), v,
                        (a, b) -> Version.compare(a, b) >= 0 ? a : b));
        return held;
    }

    /**
     * Records deletes in the ledger, each kept only where it is newer than what the ledger holds for its key, in one
     * commit of the changed buckets (none when nothing changes). Idempotent: recording the same deletes again changes
     * nothing.
     *
     * @return how many keys changed
     */
    public static int record(String path, Map<String, Version> deletes) {
        if (deletes.isEmpty()) {
            return 0;
        }
        Engine engine = DefaultEngine.create(new Configuration());
        Snapshot snapshot = TableManager.loadSnapshot(path).build(engine);
        DeltaTombstones ledger = new DeltaTombstones(snapshot);
        int changed = 0;
        for (Map.Entry<String, Version> e : deletes.entrySet()) {
            Version held = ledger.deleted(e.getKey());
            if (held == null || Version.compare(e.getValue(), held) > 0) {
                ledger.record(e.getKey(), e.getValue());
                changed++;
            }
        }
        if (changed == 0) {
            return 0;
        }
        List<String> unwritable = KernelInternals.unwritableFeatures(snapshot);
        if (!unwritable.isEmpty()) { // a table whose rows Spark's Delta writes: so is the ledger
            DeltaStateCommits.required(path, unwritable).commit(path, snapshot.getVersion(), ledger.domains(),
                    java.util.Set.of(), Optional.empty());
            return changed;
        }
        Transaction txn = snapshot.buildUpdateTableTransaction("kbackfill", Operation.MANUAL_UPDATE)
                .withMaxRetries(0).build(engine);
        ledger.addTo(txn);
        TransactionCommitResult result = txn.commit(engine, CloseableIterable.emptyIterable());
        for (PostCommitHook hook : result.getPostCommitHooks()) {
            try {
                hook.threadSafeInvoke(engine);
            } catch (IOException | RuntimeException ignored) {
                // the commit stands; the next commit's hooks try again
            }
        }
        return changed;
    }
}
