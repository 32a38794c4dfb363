package dev.kbackfill.sink.delta;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/** The sink contract on a real Delta table, read back through Kernel's own scan (DeltaTableRows). */
@Tag("delta")
class DeltaSinkContractIT extends SinkContract {

    @TempDir
    Path dir;

    String table() {
        return dir.resolve("orders").toString();
    }

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return new SinkSettings("delta:" + table(), "orders", Optional.empty(), Optional.empty(),
                conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT).withVersionField(versionField)
                .withPartitionBy(partitionBy());
    }

    /** Rows of a lake table are written whole: another writer nulls kbackfill's columns. */
    @Override
    protected Sink newForeignSink(boolean keepOurColumns) {
        return keepOurColumns ? null : SinkFactory.forSettings(new SinkSettings("delta:" + table(), "orders",
                Optional.empty(), Optional.empty(), ConflictMode.OVERWRITE, TombstoneMode.DELETE, false, false,
                FOREIGN_METADATA));
    }

    /** How the tables this contract creates are partitioned: not at all here. */
    List<String> partitionBy() {
        return List.of();
    }

    /**
     * The contract on a table partitioned by {@code status}, a value that moves between a key's versions: a key
     * whose partition changes ends as one row, its old row taken out of its old partition.
     */
    @Tag("delta")
    static class PartitionedIT extends DeltaSinkContractIT {
        @Override
        List<String> partitionBy() {
            return List.of("status");
        }

        @Override
        protected Optional<String> partitionedByAValue() {
            return Optional.of("status");
        }

        /** Compaction rewrites each partition's rows into its own key-sorted files; the rows stay as they were. */
        @org.junit.jupiter.api.Test
        void compactionKeepsEachRowInItsPartition() throws Exception {
            try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
                s.write(batch(1, Map.of(0, 3L), row("a", "created", "1", 0, 0), row("b", "created", "2", 0, 1),
                        row("c", "paid", "3", 0, 2)));
                s.write(batch(2, Map.of(0, 5L), row("a", "paid", "1", 0, 3), tombstone("c", 0, 4)));
            }
            List<String> before = rows();
            DeltaCompaction.Result r = DeltaCompaction.compact(table(), Optional.empty(), 1_000);
            org.assertj.core.api.Assertions.assertThat(r.filesWritten()).as("one file per partition").isEqualTo(2);
            org.assertj.core.api.Assertions.assertThat(rows()).isEqualTo(before)
                    .containsExactly("a=paid/1@0:3", "b=created/2@0:1");
        }
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    @Override
    protected List<String> rows() throws Exception {
        return dir.resolve("orders").toFile().exists() ? rows(table()) : List.of();
    }

    /** A Delta table's rows in the contract's form, read with Kernel's scan. */
    static List<String> rows(String table) throws Exception {
        return rows(table, Map.of());
    }

    /** The same for a table whose filesystem needs {@code storage} settings. */
    static List<String> rows(String table, Map<String, ?> storage) throws Exception {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> r : DeltaTableRows.rows(table, storage)) {
            BigDecimal amount = (BigDecimal) r.get("amount");
            out.add(r.get("kafka_key") + "=" + r.get("status") + "/" + (amount == null ? null
                    : amount.stripTrailingZeros().toPlainString()) + "@" + r.get("kafka_partition") + ":"
                    + r.get("kafka_offset") + (Boolean.TRUE.equals(r.get("kafka_deleted")) ? " deleted" : ""));
        }
        out.sort(null);
        return out;
    }
}
