package dev.kbackfill.sink.delta;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.sink.lake.NewTableColumns;
import io.delta.kernel.TableManager;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;

/**
 * The Delta table {@code --create-table} creates: its schema (the lake sinks' columns for a new table, in Delta's
 * types) and its properties (domain metadata, deletion vectors, the key columns, the user's over them), checked
 * before anything is read.
 */
final class DeltaTableCreation {

    private DeltaTableCreation() {
    }

    /** The schema of a table created from {@code batch}. */
    static StructType schema(WriteBatch batch, SinkSettings settings) {
        StructType schema = new StructType();
        for (NewTableColumns.NewColumn column : NewTableColumns.of(batch.shape(), settings)) {
            schema = schema.add(column.name(), DeltaTypes.of(column.type()), !column.required());
        }
        return schema;
    }

    /**
     * The new table's partitioning ({@code --partition-by}): columns of the first batch (or metadata columns), by
     * name whatever their case. Delta partitions by columns only: a transform (Iceberg's {@code day(ts)}) would need a
     * generated column, which Delta Kernel cannot write.
     */
    static io.delta.kernel.transaction.DataLayoutSpec layout(StructType schema, SinkSettings settings, String path) {
        if (settings.partitionBy().isEmpty()) {
            return io.delta.kernel.transaction.DataLayoutSpec.noDataLayout();
        }
        List<io.delta.kernel.expressions.Column> columns = new java.util.ArrayList<>();
        for (String p : settings.partitionBy()) {
            checkPartitionSpec(p, path);
            String column = null;
            for (String name : schema.fieldNames()) {
                if (name.equalsIgnoreCase(p)) {
                    column = name;
                }
            }
            if (column == null) {
                throw new SinkConfigException("invalid --partition-by '" + p + "': the first batch for the Delta table at "
                        + path + " has no column " + p + " (columns " + schema.fieldNames() + "); nothing was written");
            }
            columns.add(new io.delta.kernel.expressions.Column(column));
        }
        return io.delta.kernel.transaction.DataLayoutSpec.partitioned(columns);
    }

    /** Refuses a partition spec Delta cannot take (a transform), before anything is read. */
    static void checkPartitionSpec(String spec, String path) {
        if (!spec.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new SinkConfigException("invalid --partition-by '" + spec + "' for the Delta table at " + path
                    + ": Delta partitions by columns (--partition-by status,day); a transform such as day(ts) needs a "
                    + "generated column, which Delta Kernel cannot write (create the table with Spark, then run the "
                    + "job with --engine spark)");
        }
    }

    /** Refuses table properties Kernel would refuse when creating the table, before anything is read or written. */
    static void checkProperties(String path, SinkSettings settings, Engine engine, String engineInfo) {
        settings.partitionBy().forEach(p -> checkPartitionSpec(p, path));
        if (settings.tableProperties().isEmpty()) {
            return;
        }
        for (String key : new java.util.TreeSet<>(settings.tableProperties().keySet())) {
            if (key.equals("delta.enableRowTracking") && Boolean.parseBoolean(settings.tableProperties().get(key))) {
                throw new SinkConfigException("invalid --delta-table-property delta.enableRowTracking=true: kbackfill "
                        + "replaces rows by deleting and adding them, so row ids would not survive an update");
            }
            if (key.startsWith("kbackfill.")) {
                // kbackfill's own (the key columns it records): a user value would silently rekey the table
                throw new SinkConfigException("invalid --delta-table-property " + key + ": kbackfill.* properties are "
                        + "kbackfill's own record of the table (its key columns); leave them out");
            }
        }
        Map<String, String> properties = properties(List.of(), settings);
        String vectors = properties.get(DeletionVectors.ENABLE_PROPERTY);
        if (!vectors.equalsIgnoreCase("true") && !vectors.equalsIgnoreCase("false")) {
            // Kernel reads any other text as false
            throw new SinkConfigException("invalid --delta-table-property " + DeletionVectors.ENABLE_PROPERTY + "='"
                    + vectors + "': expected true or false");
        }
        try {
            // built, never committed: Kernel checks the properties here
            TableManager.buildCreateTableTransaction(path, new StructType().add("k", StringType.STRING), engineInfo)
                    .withTableProperties(properties).withMaxRetries(0).build(engine);
        } catch (io.delta.kernel.exceptions.KernelException | IllegalArgumentException e) {
            throw new SinkConfigException("invalid --delta-table-property for the Delta table at " + path + ": "
                    + e.getMessage());
        }
    }

    /**
     * A new table's properties: domain metadata (the job state lives there), deletion vectors, the key columns, then
     * the user's {@code --delta-table-property} over them (deletion vectors off for older readers, say).
     */
    static Map<String, String> properties(List<Column> keyColumns, SinkSettings settings) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("delta.feature.domainMetadata", "supported");
        properties.put(DeletionVectors.ENABLE_PROPERTY, "true");
        // columns mapped to physical names: the table can take a column a later record brings (Kernel changes a
        // schema only so); and number columns may widen for a value they cannot hold
        properties.put("delta.columnMapping.mode", "name");
        properties.put("delta.enableTypeWidening", "true");
        properties.put(DeltaFiles.KEY_COLUMNS_PROPERTY, String.join(",", keyColumns.stream().map(Column::name).toList()));
        properties.putAll(settings.tableProperties());
        return properties;
    }

}
