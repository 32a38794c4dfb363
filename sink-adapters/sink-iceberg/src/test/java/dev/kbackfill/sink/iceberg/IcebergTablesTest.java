package dev.kbackfill.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import org.junit.jupiter.api.Test;

class IcebergTablesTest {

    private static SinkSettings settings(String url) {
        return new SinkSettings(url, "orders", Optional.empty(), Optional.empty(), ConflictMode.NEWER_WINS,
                TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT);
    }

    /**
     * A Hadoop catalog commits a table's metadata by renaming a file in its warehouse, as a path table does: on an
     * object store that rename is not atomic, so two writers could both commit one version and one commit would be
     * lost. Refused before anything is read, like the path table on an object store.
     */
    @Test
    void aHadoopCatalogOnAnObjectStoreIsRefusedLikeAPathTableThere() {
        for (String url : List.of("iceberg:hadoop:s3a://bucket/warehouse#db.orders", "iceberg:hadoop:s3://b/w#db.orders",
                "iceberg:hadoop:gs://b/w#db.orders", "iceberg:s3a://bucket/lake/orders")) {
            assertThatThrownBy(() -> IcebergTables.open(IcebergTableRef.parse(url, "orders"), settings(url))).as(url)
                    .isInstanceOf(SinkConfigException.class)
                    .hasMessageContaining("renaming its metadata file, which an object store does not do atomically")
                    .hasMessageContaining("put the table in a catalog").hasMessageContaining("iceberg:jdbc:");
        }
    }
}
