package dev.kbackfill.sink.delta;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.apache.hadoop.conf.Configuration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.kbackfill.core.sink.Publication;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.transaction.DataLayoutSpec;
import io.delta.kernel.types.ArrayType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.MapType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;

/**
 * A rebuild of a Delta table published after verification. The run writes the shadow, a Delta table of its own at
 * {@code PATH_kbackfill_shadow} made with the table's columns and partitioning (and a record of the table's version it
 * was made from); verify reads the shadow; the publish is one commit on the table, on top of that version, that
 * removes every data file the table has and adds the shadow's rows, rewritten by the table's own writer (its column
 * mapping, partitioning, properties and protocol stay the table's), with the shadow's tombstone ledger and the
 * shadow's id (so that a publish repeated after a crash knows it happened). Delta refuses the commit where the table
 * moved since (another writer committed: nothing is published then); readers see the version before or the one
 * after. The table's history keeps the version before ({@code RESTORE TABLE ... TO VERSION AS OF} undoes the
 * publish); the shadow is deleted. The rows are copied once: a publish costs about as much as reading and writing the
 * table again.
 */
final class DeltaPublication implements Publication {

    static final String SHADOW = "_kbackfill_shadow";
    /** In the shadow: the table and its version the shadow was made from. */
    private static final String BASE = "kbackfill.shadow";
    /** In the table: the id of the shadow last published onto it. */
    private static final String PUBLISHED = "kbackfill.published";
    private static final String ENGINE_INFO = "kbackfill";
    private static final int ROWS_PER_FILE_BATCH = 50_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SinkSettings settings;
    private final String path;
    private final String shadowPath;
    private final Configuration hadoop;
    private final Engine engine;

    DeltaPublication(SinkSettings settings, String path) {
        this.settings = settings;
        this.path = path.replaceAll("/+$", "");
        this.shadowPath = this.path + SHADOW;
        this.hadoop = DeltaFiles.hadoopConfiguration(settings.clientConfig());
        this.engine = DefaultEngine.create(hadoop);
        load(this.path).ifPresent(t -> {
            List<String> unwritable = KernelInternals.unwritableFeatures(t);
            if (!unwritable.isEmpty()) {
                throw new SinkConfigException("--publish-after-verify cannot publish onto the Delta table at " + path
                        + ": it uses " + String.join(", ", unwritable) + ", which Delta Kernel cannot write");
            }
        });
    }

    @Override
    public SinkSettings shadow() {
        return settings.withUrl("delta:" + shadowPath);
    }

    @Override
    public String shown() {
        return shadowPath;
    }

    /**
     * Creates the shadow where the table exists and no shadow does (one left by a publish that stopped before
     * deleting it is deleted first): the table's columns (their names, types and nullability; physical names are the
     * shadow's own), its partition columns and key columns, and the table's version in the shadow's first commit.
     */
    @Override
    public List<String> prepare() {
        Optional<Snapshot> table = load(path);
        Optional<Snapshot> shadow = load(shadowPath);
        List<String> done = new ArrayList<>();
        if (shadow.isPresent()) {
            if (table.isEmpty() || !publishedFrom(table.get(), shadow.get())) {
                checkBase(shadow.get(), table); // refused before the rebuild goes on, not after it
                return List.of();
            }
            delete(shadowPath);
            done.add("the shadow the last rebuild published deleted");
        }
        if (table.isEmpty()) {
            return done;
        }
        Snapshot t = table.get();
        Map<String, String> properties = new LinkedHashMap<>(DeltaTableCreation.properties(List.of(), settings));
        properties.remove(DeltaFiles.KEY_COLUMNS_PROPERTY);
        Optional.ofNullable(t.getTableProperties().get(DeltaFiles.KEY_COLUMNS_PROPERTY))
                .ifPresent(k -> properties.put(DeltaFiles.KEY_COLUMNS_PROPERTY, k));
        List<String> partitions = t.getPartitionColumnNames();
        Transaction txn = TableManager.buildCreateTableTransaction(shadowPath, logical(t.getSchema()), ENGINE_INFO)
                .withTableProperties(properties)
                .withDataLayoutSpec(partitionedBy(partitions))
                .withMaxRetries(0).build(engine);
        txn.addDomainMetadata(BASE, JSON.createObjectNode().put("table", path).put("version", t.getVersion())
                .toString());
        List<String> hooks = warnings(DeltaTable.runHooks(engine, txn.commit(engine,
                CloseableIterable.emptyIterable()), shadowPath));
        done.add("a Delta table with the columns" + (partitions.isEmpty() ? "" : " and partitioning") + " of the "
                + "table's version " + t.getVersion() + ": the rebuild writes into it, the table stays as it is");
        done.addAll(hooks);
        return done;
    }

    @Override
    public boolean shadowExists() {
        return load(shadowPath).isPresent();
    }

    @Override
    public List<String> publish(String job) {
        Snapshot shadow = load(shadowPath).orElseThrow(() -> new SinkException("no shadow at " + shadowPath
                + " to publish"));
        Optional<Snapshot> table = load(path);
        if (table.isPresent() && publishedFrom(table.get(), shadow)) {
            delete(shadowPath);
            return List.of("the shadow was published already (the table's version " + table.get().getVersion()
                    + "); deleted the shadow at " + shadowPath);
        }
        checkBase(shadow, table);
        Transaction txn = transaction(shadow, table);
        StructType schema = txn.getSchema(engine);
        List<Row> actions = new ArrayList<>();
        long[] rows = {0};
        try {
            if (table.isPresent()) {
                for (Row f : DeltaFiles.scanFiles(engine, table.get().getScanBuilder().build())) {
                    actions.add(KernelInternals.removeAction(f, true));
                }
            }
            int removed = actions.size();
            actions.addAll(copy(shadow, txn, schema, rows));
            domains(txn, shadow, table, job);
            TransactionCommitResult result = txn.commit(engine, CloseableIterable.inMemoryIterable(
                    KernelInternals.iterator(actions)));
            List<String> hooks = warnings(DeltaTable.runHooks(engine, result, path));
            List<String> done = new ArrayList<>();
            done.add(table.map(t -> "replaced the " + removed + " data file(s) of the Delta table at " + path
                    + " with the shadow's " + rows[0] + " rows (" + (actions.size() - removed) + " file(s)) in one "
                    + "commit, version " + result.getVersion() + " (RESTORE TABLE ... TO VERSION AS OF "
                    + t.getVersion() + " undoes it)").orElse("created the Delta table at " + path + " with the "
                    + "shadow's " + rows[0] + " rows in one commit, version " + result.getVersion()));
            done.addAll(hooks);
            done.add(delete(shadowPath) ? "deleted the shadow at " + shadowPath : "the shadow at " + shadowPath
                    + " was gone already");
            return done;
        } catch (io.delta.kernel.exceptions.ConcurrentWriteException
                 | io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException
                 | io.delta.kernel.exceptions.TableAlreadyExistsException e) {
            throw new SinkException("another writer committed to the Delta table at " + path + " while the shadow "
                    + "was being published; nothing was published (the shadow is kept: the same command publishes it "
                    + "where the table is as the shadow was made from, or delete the shadow and rebuild)", e);
        } catch (IOException e) {
            throw new SinkException("cannot publish the shadow at " + shadowPath + " onto " + path + " (nothing was "
                    + "published): " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a publish that would drop a commit the shadow does not hold: the table must be at the version the shadow
     * was made from (or absent, where the shadow was begun without a table).
     */
    private void checkBase(Snapshot shadow, Optional<Snapshot> table) {
        Optional<Long> base = shadow.getDomainMetadata(BASE).map(DeltaPublication::read)
                .map(n -> n.path("version").asLong());
        String again = "; nothing was published: delete the shadow at " + shadowPath + " and run the rebuild again";
        if (base.isEmpty() && table.isPresent()) {
            throw new SinkException("a Delta table was created at " + path + " after its rebuild began in a shadow "
                    + "with no table to replace; publishing would drop its version " + table.get().getVersion() + again);
        }
        if (base.isPresent() && table.isEmpty()) {
            throw new SinkException("the Delta table at " + path + " is gone since its shadow was made from its version "
                    + base.get() + again);
        }
        if (base.isPresent() && table.get().getVersion() != base.get()) {
            throw new SinkException("the Delta table at " + path + " changed since its shadow was made from its version "
                    + base.get() + " (it is at version " + table.get().getVersion() + " now): publishing would drop "
                    + "those commits" + again);
        }
    }

    /**
     * The publishing commit: on the table's version (columns the shadow gained added, domain metadata enabled where
     * the table lacks it), or, without a table, the table created as the shadow is (its columns, partitioning and
     * properties).
     */
    private Transaction transaction(Snapshot shadow, Optional<Snapshot> table) {
        if (table.isEmpty()) {
            Map<String, String> properties = new LinkedHashMap<>(shadow.getTableProperties());
            properties.keySet().removeIf(k -> k.startsWith("delta.columnMapping.maxColumnId"));
            properties.put(DeltaTableSchema.DOMAIN_METADATA, "supported"); // a feature, not in the configuration
            List<String> partitions = shadow.getPartitionColumnNames();
            return TableManager.buildCreateTableTransaction(path, logical(shadow.getSchema()), ENGINE_INFO)
                    .withTableProperties(properties)
                    .withDataLayoutSpec(partitionedBy(partitions))
                    .withMaxRetries(0).build(engine);
        }
        Snapshot t = table.get();
        var builder = t.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).withMaxRetries(0);
        StructType schema = t.getSchema();
        StructType merged = schema;
        for (StructField f : shadow.getSchema().fields()) {
            Optional<StructField> mine = field(schema, f.getName());
            if (mine.isEmpty()) {
                merged = merged.add(new StructField(f.getName(), logicalType(f.getDataType()), true));
            } else if (!logicalType(mine.get().getDataType()).equivalent(logicalType(f.getDataType()))) {
                throw new SinkException("cannot publish the shadow at " + shadowPath + " onto " + path + ": its column "
                        + f.getName() + " is " + f.getDataType() + ", the table's " + mine.get().getDataType()
                        + "; nothing was published");
            }
        }
        for (StructField f : schema.fields()) {
            if (!f.isNullable() && field(shadow.getSchema(), f.getName()).isEmpty()) {
                throw new SinkException("cannot publish the shadow at " + shadowPath + " onto " + path + ": it has no "
                        + "column " + f.getName() + ", which the table requires; nothing was published");
            }
        }
        if (merged != schema) {
            builder = builder.withUpdatedSchema(merged);
        }
        if (!KernelInternals.supportsDomainMetadata(t)) {
            builder = builder.withTablePropertiesAdded(Map.of(DeltaTableSchema.DOMAIN_METADATA, "supported"));
        }
        return builder.build(engine);
    }

    /** The shadow's rows rewritten by the publishing commit's writer, one task per shadow file, one per core at once. */
    private List<Row> copy(Snapshot shadow, Transaction txn, StructType schema, long[] rows) throws IOException {
        Scan scan = shadow.getScanBuilder().build();
        Row scanState = scan.getScanState(engine);
        StructType from = shadow.getSchema();
        int[] source = new int[schema.length()];
        for (int i = 0; i < source.length; i++) {
            String name = schema.at(i).getName();
            source[i] = -1;
            for (int j = 0; j < from.length(); j++) {
                if (from.at(j).getName().equalsIgnoreCase(name)) {
                    source[i] = j;
                }
            }
        }
        java.util.concurrent.atomic.AtomicLong copied = new java.util.concurrent.atomic.AtomicLong();
        List<Callable<List<Row>>> tasks = new ArrayList<>();
        for (Row f : DeltaFiles.scanFiles(engine, scan)) {
            tasks.add(() -> {
                List<Object[]> read = DeltaFiles.read(engine, scanState, f, from);
                List<Object[]> mapped = new ArrayList<>(read.size());
                for (Object[] r : read) {
                    Object[] m = new Object[source.length];
                    for (int i = 0; i < source.length; i++) {
                        m[i] = source[i] < 0 ? null : r[source[i]];
                    }
                    mapped.add(m);
                }
                copied.addAndGet(mapped.size());
                return mapped.isEmpty() ? List.of() : DeltaFiles.write(engine, txn, schema, mapped,
                        ROWS_PER_FILE_BATCH);
            });
        }
        List<Row> adds = DeltaFiles.inParallel(tasks, Runtime.getRuntime().availableProcessors());
        rows[0] = copied.get();
        return adds;
    }

    /**
     * The table's domains after the publish: the shadow's tombstone ledger in place of the table's, the job that
     * built the shadow forgotten where the table held it too, and the shadow's id.
     */
    private void domains(Transaction txn, Snapshot shadow, Optional<Snapshot> table, String job) {
        Map<String, String> ledger = new LinkedHashMap<>();
        for (String d : KernelInternals.domains(shadow)) {
            if (d.startsWith(DeltaTombstones.PREFIX)) {
                ledger.put(d, shadow.getDomainMetadata(d).orElseThrow());
            }
        }
        if (table.isPresent()) {
            for (String d : KernelInternals.domains(table.get())) {
                if (d.startsWith(DeltaTombstones.PREFIX) && !ledger.containsKey(d) || d.equals(DeltaTable.domain(job))) {
                    txn.removeDomainMetadata(d);
                }
            }
        }
        ledger.forEach(txn::addDomainMetadata);
        txn.addDomainMetadata(PUBLISHED, JSON.createObjectNode().put("shadow", KernelInternals.tableId(shadow))
                .put("publishedAt", System.currentTimeMillis()).toString());
    }

    /** Whether {@code shadow} is the one last published onto {@code table}. */
    private static boolean publishedFrom(Snapshot table, Snapshot shadow) {
        return table.getDomainMetadata(PUBLISHED).map(DeltaPublication::read)
                .map(n -> n.path("shadow").asText().equals(KernelInternals.tableId(shadow))).orElse(false);
    }

    private Optional<Snapshot> load(String at) {
        try {
            return Optional.of(DeltaDamage.FORMAT.reading(at, () -> TableManager.loadSnapshot(at).build(engine)));
        } catch (TableNotFoundException e) {
            return Optional.empty();
        }
    }

    /**
     * Deletes the shadow's folder; whether there was one. Its log goes newest version first (the hint and checksums
     * before), then its data files, then its first commit: stopped anywhere (a SIGKILL), what is left is the shadow
     * at an older version, which holds its id, so the next rebuild knows it was published and deletes it again.
     */
    private boolean delete(String at) {
        try {
            org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path(at);
            org.apache.hadoop.fs.FileSystem fs = root.getFileSystem(hadoop);
            if (!fs.exists(root)) {
                return false;
            }
            org.apache.hadoop.fs.Path log = new org.apache.hadoop.fs.Path(root, "_delta_log");
            if (fs.exists(log)) {
                List<org.apache.hadoop.fs.FileStatus> entries = new ArrayList<>(List.of(fs.listStatus(log)));
                entries.sort(java.util.Comparator.comparingInt(DeltaPublication::deleteOrder)
                        .thenComparing(e -> e.getPath().getName(), java.util.Comparator.reverseOrder()));
                for (org.apache.hadoop.fs.FileStatus e : entries) {
                    if (deleteOrder(e) < Integer.MAX_VALUE) {
                        fs.delete(e.getPath(), true);
                    }
                }
            }
            for (org.apache.hadoop.fs.FileStatus e : fs.listStatus(root)) {
                if (!e.getPath().getName().equals("_delta_log")) {
                    fs.delete(e.getPath(), true);
                }
            }
            fs.delete(log, true);
            return fs.delete(root, true) || !fs.exists(root);
        } catch (IOException e) {
            throw new SinkException("cannot delete the shadow at " + at + ": " + e.getMessage() + " (the publish "
                    + "stands; the next rebuild deletes it, or delete it by hand)", e);
        }
    }

    /** When a log entry is deleted: hints first, then versions newest first, other entries, the first commit never. */
    private static int deleteOrder(org.apache.hadoop.fs.FileStatus entry) {
        String name = entry.getPath().getName();
        if (name.equals("_last_checkpoint") || name.endsWith(".crc")) {
            return 0;
        }
        if (name.matches("\\d{20}\\..*")) {
            return name.equals("00000000000000000000.json") ? Integer.MAX_VALUE : 1;
        }
        return 2;
    }

    private static List<String> warnings(List<String> failed) {
        return failed.stream().map(f -> "warning: " + f).toList();
    }

    @Override
    public void close() {
        // the engine holds nothing open between calls
    }

    private static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new SinkException("unreadable kbackfill domain metadata: " + json, e);
        }
    }

    private static DataLayoutSpec partitionedBy(List<String> columns) {
        return columns.isEmpty() ? DataLayoutSpec.noDataLayout()
                : DataLayoutSpec.partitioned(columns.stream().map(io.delta.kernel.expressions.Column::new).toList());
    }

    private static Optional<StructField> field(StructType schema, String name) {
        return schema.fields().stream().filter(f -> f.getName().equalsIgnoreCase(name)).findFirst();
    }

    /** A schema without the table's own column metadata (physical names, ids, type changes). */
    static StructType logical(StructType schema) {
        StructType out = new StructType();
        for (StructField f : schema.fields()) {
            out = out.add(new StructField(f.getName(), logicalType(f.getDataType()), f.isNullable()));
        }
        return out;
    }

    private static DataType logicalType(DataType type) {
        if (type instanceof StructType s) {
            return logical(s);
        }
        if (type instanceof ArrayType a) {
            return new ArrayType(logicalType(a.getElementType()), a.containsNull());
        }
        if (type instanceof MapType m) {
            return new MapType(logicalType(m.getKeyType()), logicalType(m.getValueType()), m.isValueContainsNull());
        }
        return type;
    }
}
