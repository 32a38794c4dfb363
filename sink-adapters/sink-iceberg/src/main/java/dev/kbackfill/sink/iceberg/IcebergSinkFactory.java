package dev.kbackfill.sink.iceberg;

import java.util.List;

import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;

/**
 * {@code --sink iceberg:PATH} (a path table), {@code iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE},
 * {@code iceberg:hadoop:WAREHOUSE#NAMESPACE.TABLE}, {@code iceberg:rest:URI#NAMESPACE.TABLE} (catalog tables).
 */
public final class IcebergSinkFactory implements SinkFactory {

    @Override
    public boolean accepts(String url) {
        return dev.kbackfill.core.sink.SinkUrl.is(url, dev.kbackfill.core.sink.SinkUrl.Iceberg.class);
    }

    @Override
    public List<String> forms() {
        return IcebergTableRef.FORMS;
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
}
