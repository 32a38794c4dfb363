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

    /** Refuses table properties Kernel would refuse when creating the table, before anything is read or written. */
    static void checkProperties(String path, SinkSettings settings, Engine engine, String engineInfo) {
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
        properties.put(DeltaFiles.KEY_COLUMNS_PROPERTY, String.join(",", keyColumns.stream().map(Column::name).toList()));
        properties.putAll(settings.tableProperties());
        return properties;
    }

}
