package dev.kbackfill.sink.iceberg;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.NarrowNumber;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.sink.lake.LakeType;
import dev.kbackfill.sink.lake.NewTableColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg table's schema as a job sees and changes it: what an existing table must be for kbackfill to write it
 * (Parquet, the metadata columns the options need; any partition spec), the table created from the first batch
 * (format v2, merge-on-read, the key as identifier fields, partitioned as {@code --partition-by} says), and, where the job may change the table
 * ({@code --create-table}, {@code --evolve-schema}), a nullable column for a field first seen later and a 32-bit
 * column widened to 64 bits (int to long, float to double: the promotions Iceberg allows) for a value only the wider
 * type holds ({@link NarrowNumber}). Iceberg reads files written before by column id, so neither rewrites data.
 */
final class IcebergTableSchema {

    private final SinkSettings settings;
    private final IcebergTableRef ref;
    private final SinkSettings.MetadataColumns meta;

    IcebergTableSchema(SinkSettings settings, IcebergTableRef ref) {
        this.settings = settings;
        this.ref = ref;
        this.meta = settings.metadata();
    }

    /** Checks an existing table when the sink opens; returns the warnings to show. */
    List<String> check(Table t) {
        String format = t.properties().getOrDefault("write.format.default", "parquet");
        if (!format.equalsIgnoreCase("parquet")) {
            throw new SinkConfigException("the Iceberg table " + ref.shown() + " writes " + format + " files "
                    + "(write.format.default); kbackfill reads and writes Parquet data files only");
        }
        Schema schema = t.schema();
        List<String> missing = new ArrayList<>(settings.requiredMetadataColumns().stream()
                .filter(m -> schema.findField(m) == null).toList());
        if (settings.conflictMode() == ConflictMode.NEWER_WINS && schema.findField(meta.logTime()) == null
                && !missing.contains(meta.logTime())) {
            missing.add(meta.logTime());
        }
        if (settings.conflictMode() == ConflictMode.NEWER_WINS && settings.versionField().isPresent()
                && schema.findField(meta.version()) == null && !missing.contains(meta.version())) {
            missing.add(meta.version());
        }
        if (!missing.isEmpty() && !settings.createTable()) {
            throw new SinkConfigException("the Iceberg table " + ref.shown() + " lacks the column(s) "
                    + String.join(", ", missing) + " that --on-conflict " + settings.conflictMode().label()
                    + " / --on-tombstone " + settings.tombstoneMode().label()
                    + (settings.versionField().isPresent() ? " / --version-field" : "") + " need; pass --create-table "
                    + "to let kbackfill add them, add them in Spark (ALTER TABLE " + ref.shown() + " ADD COLUMNS ("
                    + String.join(", ", missing.stream().map(m -> m + " " + sparkType(m)).toList())
                    + ")), or use --on-conflict overwrite");
        }
        if (!settings.tableProperties().isEmpty()) {
            return List.of("--table-property applies to a table --create-table creates; the Iceberg table "
                    + ref.shown() + " exists, so its properties stay as they are");
        }
        return List.of();
    }

    /** Creates the table from the first batch's columns (the key as identifier fields), format v2, merge-on-read. */
    Table create(IcebergTables tables, WriteBatch batch) {
        List<Types.NestedField> fields = new ArrayList<>();
        Set<Integer> identifiers = new LinkedHashSet<>();
        int id = 1;
        for (NewTableColumns.NewColumn c : NewTableColumns.of(batch.shape(), settings)) {
            fields.add(c.required() ? Types.NestedField.required(id, c.name(), IcebergTypes.of(c.type()))
                    : Types.NestedField.optional(id, c.name(), IcebergTypes.of(c.type())));
            if (c.key()) {
                identifiers.add(id);
            }
            id++;
        }
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("format-version", "2");
        properties.put("write.format.default", "parquet");
        // other writers (Spark's MERGE, UPDATE, DELETE) replace rows as kbackfill does: with delete files
        properties.put("write.delete.mode", "merge-on-read");
        properties.put("write.update.mode", "merge-on-read");
        properties.put("write.merge.mode", "merge-on-read");
        // a snapshot per batch: keep the table's metadata files from piling up (the snapshots stay until expired)
        properties.put("write.metadata.delete-after-commit.enabled", "true");
        properties.putAll(settings.tableProperties());
        Schema schema = new Schema(fields, identifiers);
        return tables.create(schema, IcebergPartitioning.spec(schema, settings.partitionBy(), ref.shown()), properties);
    }

    /**
     * Brings the table to what the batch needs, where the job may change it: a nullable column for each value field
     * it lacks, and each 32-bit column widened that must hold a value of the batch only 64 bits hold, in one schema
     * update just before the batch. Another writer making the same change first is fine.
     */
    void evolve(Table t, WriteBatch batch) {
        if (!settings.addsColumns()) {
            return;
        }
        List<Column> missing = new ArrayList<>();
        if (settings.createTable()) {
            // a table another writer made: the columns the modes need (the topic's too), nullable
            List<String> needed = new ArrayList<>(settings.requiredMetadataColumns());
            if (settings.conflictMode() == ConflictMode.NEWER_WINS) {
                needed.add(meta.topic());
            }
            for (String m : needed) {
                if (t.schema().findField(m) == null) {
                    missing.add(new Column(m, metadataType(m), true));
                }
            }
        }
        Map<String, Type> widened = new LinkedHashMap<>();
        for (Column v : batch.shape().valueColumns()) {
            Types.NestedField field = t.schema().findField(v.name());
            if (field == null) {
                missing.add(v);
            } else {
                wider(field.type()).filter(w -> narrow(field.type()).needsWidening(batch.changes(), v.name()))
                        .ifPresent(w -> widened.put(field.name(), w));
            }
        }
        if (missing.isEmpty() && widened.isEmpty()) {
            return;
        }
        try {
            UpdateSchema update = t.updateSchema();
            for (Column v : missing) {
                update.addColumn(v.name(), IcebergTypes.of(LakeType.forColumn(v.type())));
            }
            widened.forEach((name, type) -> update.updateColumn(name, type.asPrimitiveType()));
            update.commit();
        } catch (IllegalArgumentException | CommitFailedException e) {
            t.refresh(); // another writer made them first: use theirs
            boolean done = missing.stream().allMatch(v -> t.schema().findField(v.name()) != null)
                    && widened.entrySet().stream().allMatch(w -> t.schema().findField(w.getKey()).type().equals(w.getValue()));
            if (!done) {
                throw new SinkException("cannot " + (missing.isEmpty() ? "" : "add the columns " + missing.stream()
                        .map(Column::name).toList() + (widened.isEmpty() ? "" : " and ")) + (widened.isEmpty() ? ""
                        : "widen the columns " + widened.keySet()) + " of the Iceberg table " + ref.shown() + ": "
                        + e.getMessage(), e);
            }
        }
        t.refresh();
    }

    /** A metadata column's type as kbackfill creates it. */
    private dev.kbackfill.core.record.ColumnType metadataType(String column) {
        if (column.equals(meta.timestamp()) || column.equals(meta.logTime())) {
            return dev.kbackfill.core.record.ColumnType.TIMESTAMP;
        }
        if (column.equals(meta.deleted())) {
            return dev.kbackfill.core.record.ColumnType.BOOLEAN;
        }
        if (column.equals(meta.topic()) || column.equals(meta.version())
                && dev.kbackfill.sink.lake.NewTableColumns.versionIsText(settings)) {
            return dev.kbackfill.core.record.ColumnType.STRING;
        }
        return dev.kbackfill.core.record.ColumnType.LONG;
    }

    /** A metadata column's type as Spark SQL names it, for the statement that adds it. */
    private String sparkType(String column) {
        return switch (metadataType(column)) {
            case TIMESTAMP -> "TIMESTAMP";
            case BOOLEAN -> "BOOLEAN";
            case STRING -> "STRING";
            default -> "BIGINT";
        };
    }

    /** The 64-bit type a 32-bit number column widens to. */
    private static Optional<Type> wider(Type type) {
        return Optional.ofNullable(switch (type.typeId()) {
            case INTEGER -> Types.LongType.get();
            case FLOAT -> Types.DoubleType.get();
            default -> null;
        });
    }

    private static NarrowNumber narrow(Type type) {
        return type.typeId() == Type.TypeID.INTEGER ? NarrowNumber.INT32 : NarrowNumber.FLOAT32;
    }

    /** Refuses a key column the table lacks, and a value field without a column (unless --ignore-unknown-fields). */
    void check(Schema schema, WriteBatch batch) {
        for (Column k : batch.shape().keyColumns()) {
            if (schema.findField(k.name()) == null) {
                throw new SinkConfigException("key column " + k.name() + " is not in the Iceberg table " + ref.shown()
                        + " (columns " + schema.columns().stream().map(Types.NestedField::name).toList() + ")");
            }
        }
        for (Column v : batch.shape().valueColumns()) {
            if (schema.findField(v.name()) == null && !settings.ignoreUnknownFields()) {
                Change first = batch.firstCarrying(v.name());
                throw new SinkConfigException("value field '" + v.name() + "' (first at partition " + first.partition()
                        + " offset " + first.offset() + ") has no column in the Iceberg table " + ref.shown()
                        + "; add the column (ALTER TABLE .. ADD COLUMNS in Spark), pass --evolve-schema to have it "
                        + "added, or --ignore-unknown-fields to skip such fields");
            }
        }
    }
}
