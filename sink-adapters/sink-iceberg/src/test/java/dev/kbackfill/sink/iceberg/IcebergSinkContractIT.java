package dev.kbackfill.sink.iceberg;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.hadoop.HadoopTables;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/** The sink contract on a path (Hadoop) Iceberg table, {@code iceberg:PATH}, read back with Iceberg's generic reader. */
@Tag("iceberg")
class IcebergSinkContractIT extends SinkContract {

    @TempDir
    Path dir;

    private String table() {
        return dir.resolve("orders").toString();
    }

    @Override
    protected Sink newSink(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return SinkFactory.forSettings(new SinkSettings("iceberg:" + table(), "orders", Optional.empty(),
                Optional.empty(), conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT,
                Map.of(), SinkSettings.Source.NONE, Map.of()).withVersionField(versionField));
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    @Override
    protected List<String> rows() throws Exception {
        HadoopTables tables = new HadoopTables(new Configuration());
        return tables.exists(table()) ? IcebergTableRows.contractRows(tables.load(table())) : List.of();
    }
}
