package dev.kbackfill.sink.delta;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.testservices.SharedS3;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

/**
 * The sink contract on a Delta table in a real S3 API (S3Proxy), through Hadoop's S3A: commits are conditional puts,
 * the job's lock is a lease object. Read back through Kernel's scan.
 */
@Tag("delta")
@Tag("s3")
class DeltaSinkContractOnS3IT extends SinkContract {

    private String table;

    @BeforeEach
    void newBucket() {
        table = "s3a://" + SharedS3.standard().newBucket() + "/lake/orders";
    }

    static Map<String, String> storage() {
        return SharedS3.standard().s3aSettings();
    }

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return new SinkSettings("delta:" + table, "orders", Optional.empty(), Optional.empty(),
                conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT, new java.util.HashMap<String, Object>(storage()),
                SinkSettings.Source.NONE, Map.of()).withVersionField(versionField);
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    @Override
    protected List<String> rows() throws Exception {
        try {
            DeltaTableRows.version(table, storage());
        } catch (io.delta.kernel.exceptions.TableNotFoundException e) {
            return List.of();
        }
        return DeltaSinkContractIT.rows(table, storage());
    }
}
