package dev.kbackfill.sink.iceberg;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.testservices.SharedS3;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink contract on an Iceberg table in a real S3 API (S3Proxy): a JDBC catalog (SQLite) whose warehouse is an
 * {@code s3a://} bucket, the files written through Hadoop's S3A, the job's lock a lease object beside the table.
 * Read back with Iceberg's generic reader through the same catalog.
 */
@Tag("iceberg")
@Tag("s3")
class IcebergSinkContractOnS3IT extends SinkContract {

    @TempDir
    Path dir;

    private String warehouse;

    @BeforeEach
    void newBucket() {
        warehouse = "s3a://" + SharedS3.standard().newBucket() + "/warehouse";
    }

    private String catalogUri() {
        return "jdbc:sqlite:" + dir.resolve("catalog.db");
    }

    private Map<String, Object> properties() {
        Map<String, Object> p = new HashMap<>(SharedS3.standard().s3aSettings());
        p.put("warehouse", warehouse);
        return p;
    }

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return new SinkSettings("iceberg:" + catalogUri() + "#lake.orders", "orders",
                Optional.empty(), Optional.empty(), conflict, tombstone, create, false,
                SinkSettings.MetadataColumns.DEFAULT, properties(), SinkSettings.Source.NONE, Map.of())
                .withVersionField(versionField);
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    @Override
    protected List<String> rows() throws Exception {
        Configuration conf = new Configuration();
        SharedS3.standard().s3aSettings().forEach(conf::set);
        JdbcCatalog catalog = new JdbcCatalog();
        catalog.setConf(conf);
        catalog.initialize(IcebergTables.DEFAULT_CATALOG, Map.of("uri", catalogUri(), "warehouse", warehouse));
        try {
            TableIdentifier id = TableIdentifier.of("lake", "orders");
            return catalog.tableExists(id) ? IcebergTableRows.contractRows(catalog.loadTable(id)) : List.of();
        } finally {
            catalog.close();
        }
    }
}
