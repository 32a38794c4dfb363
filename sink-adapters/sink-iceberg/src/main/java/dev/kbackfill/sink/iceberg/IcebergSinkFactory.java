package dev.kbackfill.sink.iceberg;

import java.util.List;
import java.util.Set;

import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SinkTarget;

/**
 * {@code --sink iceberg:PATH} (a path table), {@code iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE},
 * {@code iceberg:hadoop:WAREHOUSE#NAMESPACE.TABLE}, {@code iceberg:rest:URI#NAMESPACE.TABLE} (catalog tables).
 */
public final class IcebergSinkFactory implements SinkFactory {

    @Override
    public String scheme() {
        return "iceberg";
    }

    @Override
    public Set<Capability> capabilities() {
        return dev.kbackfill.sink.lake.LakeSink.CAPABILITIES;
    }

    /**
     * Not on Spark: per-partition tasks would be concurrent committers to one table, each refused by the others'
     * commits; a MERGE per wave needs Iceberg's Spark runtime in the engine, which it does not ship.
     */
    @Override
    public OnSpark onSpark(SinkTarget target) {
        return new OnSpark.Refused("--engine spark does not write Iceberg tables yet: run it with --engine local "
                + "(one process reads every partition and commits one snapshot per batch)");
    }

    /** Rewrites the data files with deletes without their deleted rows, small files packed, in one replace snapshot. */
    @Override
    public String compact(SinkSettings settings, Compaction compaction) {
        if (compaction.keyColumns().isPresent()) {
            throw new dev.kbackfill.core.sink.SinkConfigException("--key-columns is for Delta tables: an Iceberg "
                    + "table's key is its identifier fields");
        }
        IcebergCompaction.Result r = IcebergCompaction.compact(settings);
        if (r.dataFilesRewritten() == 0) {
            return String.format("%s: %d data file(s), none with deletes or small enough to pack, nothing to compact",
                    settings.url(), r.dataFilesBefore());
        }
        return String.format("%s: rewrote %d data files and dropped %d delete files (%d live rows) into %d file(s), "
                + "snapshot %d (replace: no new data)", settings.url(), r.dataFilesRewritten(), r.deleteFilesRemoved(),
                r.rows(), r.filesWritten(), r.snapshotId());
    }

    @Override
    public List<String> forms() {
        return IcebergTableRef.FORMS;
    }

    /**
     * A path table by its folder ({@code file} and the path, {@code s3://BUCKET} and the prefix); a catalog's table
     * by the catalog (its URI, JDBC URL or warehouse, without credentials) and {@code NAMESPACE.TABLE}.
     */
    @Override
    public Dataset dataset(SinkSettings settings) {
        IcebergTableRef ref = IcebergTableRef.parse(settings.url(), settings.table());
        return ref.isPath() ? SinkFactory.atLocation(ref.location())
                : new Dataset(SinkFactory.redact(ref.location()), String.join(".", ref.namespace()) + "." + ref.table());
    }

    @Override
    public Sink create(SinkSettings settings) {
        return new dev.kbackfill.sink.lake.LakeSink(settings, table(settings));
    }

    /** Only the store of the table's jobs: its snapshots' summaries. */
    @Override
    public dev.kbackfill.core.sink.JobStore createJobStore(SinkSettings settings) {
        return new dev.kbackfill.sink.lake.LakeJobStore(table(settings));
    }

    private static IcebergTable table(SinkSettings settings) {
        return new IcebergTable(settings, IcebergTableRef.parse(settings.url(), settings.table()));
    }

    /** A branch of the table, emptied, written and verified, then fast-forwarded onto main. */
    @Override
    public dev.kbackfill.core.sink.Publication publication(SinkSettings settings) {
        return new IcebergPublication(settings);
    }
}
