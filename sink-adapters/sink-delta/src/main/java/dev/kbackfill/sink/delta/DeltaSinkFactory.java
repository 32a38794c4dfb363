package dev.kbackfill.sink.delta;

import java.util.List;

import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;

/** {@code --sink delta:PATH}: a Delta table at a local path or any Hadoop filesystem URI. */
public final class DeltaSinkFactory implements SinkFactory {

    @Override
    public boolean accepts(String url) {
        return dev.kbackfill.core.sink.SinkUrl.is(url, dev.kbackfill.core.sink.SinkUrl.Delta.class);
    }

    @Override
    public List<String> forms() {
        return List.of("delta:PATH", "delta:s3a://BUCKET/PATH");
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
        String path = ((dev.kbackfill.core.sink.SinkUrl.Delta) settings.sinkUrl()).location();
        if (path.isBlank()) {
            throw new SinkConfigException("invalid --sink '" + settings.url() + "': expected delta:PATH");
        }
        dev.kbackfill.sink.lake.FileSystemSchemes.require(path, DeltaFiles.hadoopConfiguration(settings.clientConfig()),
                settings.url(), forms());
        return new DeltaTable(settings, path);
    }
}
