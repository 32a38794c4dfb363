package dev.kbackfill.sink.delta;

import java.util.List;
import java.util.Set;

import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SinkTarget;

/** {@code --sink delta:PATH}: a Delta table at a local path or any Hadoop filesystem URI. */
public final class DeltaSinkFactory implements SinkFactory {

    @Override
    public String scheme() {
        return "delta";
    }

    @Override
    public Set<Capability> capabilities() {
        return dev.kbackfill.sink.lake.LakeSink.CAPABILITIES;
    }

    /** One Delta MERGE per wave by Spark's Delta support: the table takes one committer per wave. */
    @Override
    public OnSpark onSpark(SinkTarget target) {
        return new OnSpark.DeltaMerge(location(target.url()));
    }

    /** Rewrites the table's files into key-sorted ones, in one commit marked {@code dataChange=false}. */
    @Override
    public String compact(SinkSettings settings, Compaction compaction) {
        DeltaCompaction.Result r;
        try {
            r = DeltaCompaction.compact(location(settings.url()), settings.clientConfig(), compaction.keyColumns(),
                    compaction.rowsPerFile());
        } catch (java.io.IOException e) {
            throw new dev.kbackfill.core.sink.SinkException("cannot compact " + settings.url() + ": " + e.getMessage(),
                    e);
        }
        if (r.filesRewritten() == 0) {
            return String.format("%s: %d data file(s), nothing to compact", settings.url(), r.filesBefore());
        }
        return String.format("%s: rewrote %d files (%d rows) into %d key-sorted file(s), version %d, dataChange=false",
                settings.url(), r.filesRewritten(), r.rows(), r.filesWritten(), r.version());
    }

    /** The table's location: what follows {@code delta:}, a path or a filesystem URI. */
    public static String location(String url) {
        return url.substring("delta:".length());
    }

    @Override
    public List<String> forms() {
        return List.of("delta:PATH", "delta:s3a://BUCKET/PATH");
    }

    /** The table's folder: {@code file} and its path, or {@code s3://BUCKET} and its prefix. */
    @Override
    public Dataset dataset(SinkSettings settings) {
        return SinkFactory.atLocation(location(settings.url()));
    }

    @Override
    public Sink create(SinkSettings settings) {
        return new dev.kbackfill.sink.lake.LakeSink(settings, table(settings));
    }

    /** Only the store of the table's jobs: its transaction ids. */
    @Override
    public dev.kbackfill.core.sink.JobStore createJobStore(SinkSettings settings) {
        return new dev.kbackfill.sink.lake.LakeJobStore(table(settings));
    }

    private DeltaTable table(SinkSettings settings) {
        String path = location(settings.url());
        if (path.isBlank()) {
            throw new SinkConfigException("invalid --sink '" + settings.url() + "': expected delta:PATH");
        }
        dev.kbackfill.sink.lake.FileSystemSchemes.require(path, DeltaFiles.hadoopConfiguration(settings.clientConfig()),
                settings.url(), forms());
        return new DeltaTable(settings, path);
    }

    /**
     * A shadow Delta table beside the table ({@code PATH_kbackfill_shadow}), published by one commit on the table
     * that replaces its files with the shadow's rows ({@link DeltaPublication}).
     */
    @Override
    public dev.kbackfill.core.sink.Publication publication(SinkSettings settings) {
        String path = location(settings.url());
        if (path.isBlank()) {
            throw new SinkConfigException("invalid --sink '" + settings.url() + "': expected delta:PATH");
        }
        dev.kbackfill.sink.lake.FileSystemSchemes.require(path, DeltaFiles.hadoopConfiguration(settings.clientConfig()),
                settings.url(), forms());
        return new DeltaPublication(settings, path);
    }
}
