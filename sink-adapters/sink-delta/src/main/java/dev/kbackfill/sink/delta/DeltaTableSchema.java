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
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.NarrowNumber;
import dev.kbackfill.sink.lake.LakeType;
import io.delta.kernel.Snapshot;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import java.util.Optional;

/**
 * The Delta table's schema as a job sees it: what an existing table must be for kbackfill to write it (features it
 * can write and preserves, the metadata columns the options need) and the columns each batch needs. Delta Kernel 4.4
 * changes a schema only on column-mapped tables, which kbackfill writes itself ({@link DeltaLayout}): the tables it
 * creates map columns and allow type widening ({@link DeltaTableCreation}), so a field that appears later becomes a
 * column and a number column widens as on the other sinks ({@link #evolved}); on a table without column mapping such
 * a field is refused before anything of its batch is written, naming the Spark statement that enables it.
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
        List<String> unwritable = KernelInternals.unwritableFeatures(snapshot);
        if (!unwritable.isEmpty() && !settings.engineWrites()) {
            // Kernel would refuse the first commit: refused here, before anything is read
            throw new SinkConfigException("the Delta table at " + path + " uses the table feature(s) "
                    + String.join(", ", unwritable) + ", which Delta Kernel cannot write (generated columns, CHECK "
                    + "constraints and identity columns are computed and checked by Spark's writer); kbackfill writes "
                    + "such tables only with Spark's own MERGE: run the job with --engine spark");
        }
        if (!unwritable.isEmpty() && !KernelInternals.supportsDomainMetadata(snapshot)) {
            // the first commit cannot enable it either: Kernel cannot commit to the table
            throw new SinkConfigException("the Delta table at " + path + " does not support domain metadata, where "
                    + "kbackfill keeps a job's progress in the same commit as its rows; enable it in Spark: ALTER "
                    + "TABLE delta.`" + path + "` SET TBLPROPERTIES ('" + DOMAIN_METADATA + "' = 'supported')");
        }
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
            // Delta Kernel cannot add them to a table without column mapping: --create-table does not either
            List<String> add = new ArrayList<>();
            for (String m : missing) {
                add.add(m + " " + (m.equals(meta.timestamp()) || m.equals(meta.logTime()) ? "TIMESTAMP"
                        : m.equals(meta.deleted()) ? "BOOLEAN"
                        : m.equals(meta.version()) && NewTableColumns.versionIsText(settings) ? "STRING" : "BIGINT"));
            }
            throw new SinkConfigException("the Delta table at " + path + " lacks the column(s) " + String.join(", ", missing)
                    + " that --on-conflict " + settings.conflictMode().label() + " / --on-tombstone "
                    + settings.tombstoneMode().label() + (settings.versionField().isPresent() ? " / --version-field" : "")
                    + " need; add them in Spark (ALTER TABLE delta.`" + path + "` ADD COLUMNS (" + String.join(", ", add)
                    + ")), or use --on-conflict overwrite");
        }
        return warnings;
    }

    /**
     * The schema the table needs for the batch, where it differs and the job may change the table
     * ({@code --create-table}, {@code --evolve-schema}): a nullable column appended for each value field it has no
     * column for, and a number column widened for a value it cannot hold ({@link NarrowNumber#widening}) where Delta
     * allows the change (integers to longs and decimals, floats to doubles: the table's type widening). Delta Kernel
     * changes a schema only on a column-mapped table; for one without, such a field is refused by {@link #check}.
     */
    Optional<StructType> evolved(Snapshot snapshot, WriteBatch batch) {
        if (!settings.addsColumns() || !KernelInternals.mapsColumns(snapshot)) {
            return Optional.empty();
        }
        StructType schema = snapshot.getSchema();
        boolean widens = KernelInternals.widensTypes(snapshot);
        StructType next = new StructType();
        boolean changed = false;
        for (StructField f : schema.fields()) {
            StructField kept = f;
            LakeType type = DeltaTypes.lakeTypeOrNull(f.getDataType());
            if (widens && type != null && type.narrow().isPresent() && !meta.contains(f.getName())) {
                Optional<ColumnType> to = type.narrow().get().widening(batch.changes(), f.getName());
                DataType wider = to.map(DeltaTableSchema::deltaType).orElse(null);
                if (wider != null && widenable(f.getDataType(), wider)) {
                    kept = new StructField(f.getName(), wider, f.isNullable(), f.getMetadata());
                    changed = true;
                }
            }
            next = next.add(kept);
        }
        for (Column v : batch.shape().valueColumns()) {
            if (indexOfIgnoringCase(schema, v.name()) < 0) {
                next = next.add(v.name(), DeltaTypes.of(LakeType.forColumn(v.type())), true);
                changed = true;
            }
        }
        return changed ? Optional.of(next) : Optional.empty();
    }

    private static DataType deltaType(ColumnType t) {
        return switch (t) {
            case LONG -> io.delta.kernel.types.LongType.LONG;
            case DOUBLE -> io.delta.kernel.types.DoubleType.DOUBLE;
            default -> DeltaTypes.of(LakeType.DECIMAL);
        };
    }

    /** The widenings Delta's type widening allows that kbackfill makes: integers up, floats to doubles. */
    private static boolean widenable(DataType from, DataType to) {
        boolean integer = from instanceof io.delta.kernel.types.IntegerType || from instanceof io.delta.kernel.types.ShortType
                || from instanceof io.delta.kernel.types.ByteType;
        if (to instanceof io.delta.kernel.types.LongType) {
            return integer;
        }
        if (to instanceof io.delta.kernel.types.DoubleType) {
            return from instanceof io.delta.kernel.types.FloatType;
        }
        return to instanceof io.delta.kernel.types.DecimalType && (integer || from instanceof io.delta.kernel.types.LongType);
    }

    private static int indexOfIgnoringCase(StructType schema, String name) {
        for (int i = 0; i < schema.length(); i++) {
            if (schema.at(i).getName().equalsIgnoreCase(name)) {
                return i;
            }
        }
        return -1;
    }

    /** Refuses a key column the table lacks, and a value field without a column (unless --ignore-unknown-fields). */
    void check(Snapshot snapshot, WriteBatch batch) {
        StructType schema = snapshot.getSchema();
        for (Column k : batch.shape().keyColumns()) {
            if (schema.indexOf(k.name()) < 0) {
                throw new SinkConfigException("key column " + k.name() + " is not in the Delta table at " + path
                        + " (columns " + schema.fieldNames() + ")");
            }
        }
        for (Column v : batch.shape().valueColumns()) {
            if (schema.indexOf(v.name()) < 0 && !settings.ignoreUnknownFields()) {
                Change first = batch.firstCarrying(v.name());
                String where = "value field '" + v.name() + "' (first at partition " + first.partition() + " offset "
                        + first.offset() + ") has no column in the Delta table at " + path;
                if (settings.addsColumns()) {
                    // Delta Kernel changes a schema only on a column-mapped table
                    throw new SinkConfigException(where + ", and Delta Kernel adds a column only to a table with "
                            + "column mapping; enable it (in Spark: ALTER TABLE delta.`" + path + "` SET TBLPROPERTIES "
                            + "('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
                            + "'delta.minWriterVersion' = '5')) and rerun, or add the column there, or pass "
                            + "--ignore-unknown-fields to skip such fields");
                }
                throw new SinkConfigException(where + "; pass --evolve-schema to have it added (a table with column "
                        + "mapping), add it to the table (e.g. ALTER TABLE .. ADD COLUMNS in Spark), or pass "
                        + "--ignore-unknown-fields to skip such fields");
            }
        }
    }
}
