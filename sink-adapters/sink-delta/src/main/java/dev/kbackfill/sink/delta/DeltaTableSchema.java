package dev.kbackfill.sink.delta;

import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.sink.lake.NewTableColumns;
import io.delta.kernel.Snapshot;
import io.delta.kernel.types.StructType;

/**
 * The Delta table's schema as a job sees it: what an existing table must be for kbackfill to write it (features it
 * preserves, the metadata columns the options need) and the columns each batch needs. Delta Kernel 4.4 changes a
 * schema only on column-mapped tables, which it cannot write: a table kbackfill creates takes its columns from the
 * first batch with values ({@link DeltaTableCreation}), and a column it lacks, or one too narrow for a value, must be
 * changed outside kbackfill (Spark's {@code ALTER TABLE}); such a field is refused before anything of its batch is
 * written, such a value is a poison record.
 */
final class DeltaTableSchema {

    private final SinkSettings settings;
    private final String path;
    private final SinkSettings.MetadataColumns meta;

    /** The table property that enables the domain metadata feature. */
    static final String DOMAIN_METADATA = "delta.feature.domainMetadata";

    DeltaTableSchema(SinkSettings settings, String path) {
        this.settings = settings;
        this.path = path;
        this.meta = settings.metadata();
    }

    /** Checks an existing table when the sink opens; returns the warnings to show. */
    List<String> check(Snapshot snapshot) {
        List<String> warnings = new ArrayList<>();
        StructType schema = snapshot.getSchema();
        if (!KernelInternals.supportsDomainMetadata(snapshot)) {
            // tables Spark creates lack it: the job's progress must ride in the commits of its rows
            if (!settings.createTable()) {
                throw new SinkConfigException("the Delta table at " + path + " does not support domain metadata, where "
                        + "kbackfill keeps a job's progress in the same commit as its rows; enable it (in Spark: ALTER "
                        + "TABLE delta.`" + path + "` SET TBLPROPERTIES ('" + DOMAIN_METADATA + "' = 'supported')), or "
                        + "pass --create-table to let kbackfill enable it with its first commit");
            }
            warnings.add("the Delta table at " + path + " did not support domain metadata: kbackfill's first commit "
                    + "enables it (" + DOMAIN_METADATA + "), a writer feature of Delta Lake 3.0 and later (older writers can no longer write the table)");
        }
        List<String> sensitive = KernelInternals.rewriteSensitiveFeatures(snapshot);
        if (!sensitive.isEmpty() && settings.conflictMode() != ConflictMode.INSERT_ONLY
                && (sensitive.contains("rowTracking") || !DeletionVectors.enabled(snapshot))) {
            // replacing rows gives them new row ids; copying files drops row ids and clustering: refused, not done
            throw new SinkConfigException("the Delta table at " + path + " uses " + String.join(" and ", sensitive)
                    + ", which kbackfill does not preserve when it replaces rows" + (sensitive.contains("rowTracking")
                    ? " (updated rows would get new row ids)" : " without deletion vectors (copied files would lose "
                    + "their clustering)") + "; use --on-conflict insert-only, or a table without "
                    + String.join(" or ", sensitive));
        }
        if (!settings.tableProperties().isEmpty()) {
            warnings.add("--delta-table-property applies to a table --create-table creates; the Delta table at " + path
                    + " exists, so its properties stay as they are (ALTER TABLE .. SET TBLPROPERTIES in Spark changes them)");
        }
        if (settings.conflictMode() == ConflictMode.NEWER_WINS && schema.indexOf(meta.topic()) < 0) {
            warnings.add("the Delta table at " + path + " has no " + meta.topic() + " column (created by an earlier "
                    + "kbackfill): its rows are compared with incoming records as if from the same topic; write a "
                    + "second topic into it only after adding the column (e.g. ALTER TABLE .. ADD COLUMNS in Spark)");
        }
        List<String> missing = new ArrayList<>(settings.requiredMetadataColumns().stream()
                .filter(m -> schema.indexOf(m) < 0).toList());
        if (settings.conflictMode() == ConflictMode.NEWER_WINS && schema.indexOf(meta.logTime()) < 0
                && !missing.contains(meta.logTime())) {
            missing.add(meta.logTime()); // Delta Kernel cannot add it: --create-table does not help an existing table
        }
        if (settings.conflictMode() == ConflictMode.NEWER_WINS && settings.versionField().isPresent()
                && schema.indexOf(meta.version()) < 0 && !missing.contains(meta.version())) {
            missing.add(meta.version()); // likewise
        }
        if (!missing.isEmpty()) {
            List<String> add = new ArrayList<>();
            if (missing.contains(meta.logTime())) {
                add.add(meta.logTime() + " TIMESTAMP");
            }
            if (missing.contains(meta.version())) {
                add.add(meta.version() + " " + (NewTableColumns.versionIsText(settings) ? "STRING" : "BIGINT"));
            }
            throw new SinkConfigException("the Delta table at " + path + " lacks the column(s) " + String.join(", ", missing)
                    + " that --on-conflict " + settings.conflictMode().label() + " / --on-tombstone "
                    + settings.tombstoneMode().label() + (settings.versionField().isPresent() ? " / --version-field" : "")
                    + " need" + (add.isEmpty() ? "" : "; add them in Spark (ALTER TABLE delta.`" + path + "` ADD COLUMNS ("
                    + String.join(", ", add) + ")), or use --on-conflict overwrite"));
        }
        return warnings;
    }

    /** Refuses a key column the table lacks, and a value field without a column (unless --ignore-unknown-fields). */
    void check(StructType schema, WriteBatch batch) {
        for (Column k : batch.shape().keyColumns()) {
            if (schema.indexOf(k.name()) < 0) {
                throw new SinkConfigException("key column " + k.name() + " is not in the Delta table at " + path
                        + " (columns " + schema.fieldNames() + ")");
            }
        }
        for (Column v : batch.shape().valueColumns()) {
            if (schema.indexOf(v.name()) < 0 && !settings.ignoreUnknownFields()) {
                Change first = batch.firstCarrying(v.name());
                // Delta Kernel 4.4 changes a schema only with column mapping, and cannot write column-mapped tables
                throw new SinkConfigException("value field '" + v.name() + "' (first at partition " + first.partition()
                        + " offset " + first.offset() + ") has no column in the Delta table at " + path
                        + " (a table created by kbackfill takes its columns from the first batch, and Delta Kernel cannot "
                        + "add columns to it); add the column to the table (e.g. ALTER TABLE .. ADD COLUMNS in Spark), "
                        + "or pass --ignore-unknown-fields to skip such fields");
            }
        }
    }
}
