package dev.kbackfill.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink contract on partitioned Iceberg tables: by a value that moves between a key's versions (identity of
 * {@code status}: a key whose partition changes ends as one row, its old row deleted in its old partition), by a
 * bucket of the key (a batch probes only its keys' partitions), and by the day of the record's time.
 */
@Tag("iceberg")
abstract class IcebergPartitionedContractIT extends SinkContract {

    abstract static class Partitioned extends IcebergPartitionedContractIT {
        @TempDir
        Path dir;

        abstract List<String> partitionBy();

        String table() {
            return dir.resolve("orders").toString();
        }

        @Override
        protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
            return new SinkSettings("iceberg:" + table(), "orders", Optional.empty(),
                    Optional.empty(), conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT,
                    Map.of(), SinkSettings.Source.NONE, Map.of()).withVersionField(versionField)
                    .withPartitionBy(partitionBy());
        }

        @Override
        protected boolean supportsVersionField() {
            return true;
        }

        Table loaded() {
            return new HadoopTables(new Configuration()).load(table());
        }

        @Override
        protected List<String> rows() throws Exception {
            HadoopTables tables = new HadoopTables(new Configuration());
            if (!tables.exists(table())) {
                return List.of();
            }
            Table t = tables.load(table());
            assertThat(t.spec().isPartitioned()).as("the table is partitioned as asked").isTrue();
            return IcebergTableRows.contractRows(t);
        }
    }

    @Tag("iceberg")
    static class ByStatusIT extends Partitioned {
        @Override
        List<String> partitionBy() {
            return List.of("status");
        }

        @Override
        protected Optional<String> partitionedByAValue() {
            return Optional.of("status");
        }

        @Test
        void aKeyWhoseStatusMovesEndsAsOneRowInItsNewPartition() throws Exception {
            try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
                s.write(batch(1, Map.of(0, 2L), row("a", "created", "1", 0, 0), row("b", "created", "2", 0, 1)));
                s.write(batch(2, Map.of(0, 4L), row("a", "paid", "1", 0, 2), row("b", "shipped", "2", 0, 3)));
                assertThat(rows()).containsExactly("a=paid/1@0:2", "b=shipped/2@0:3");
                try (CloseableIterable<FileScanTask> tasks = loaded().newScan().planFiles()) {
                    for (FileScanTask t : tasks) {
                        String status = t.file().partition().get(0, String.class);
                        assertThat(t.file().location()).contains("status=" + status);
                        if (status.equals("created")) {
                            assertThat(t.deletes()).as("the old rows deleted in their old partition").hasSize(1);
                        }
                    }
                }
            }
        }

        /**
         * A partition the key does not decide (a status here, a day in the common case) cannot be skipped by its value,
         * only by its files' key bounds: a batch reads the files whose bounds admit one of its keys, and no other.
         */
        @Test
        void aBatchProbesOnlyTheFilesWhoseKeyBoundsAdmitItsKeys() throws Exception {
            try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
                List<dev.kbackfill.core.record.Change> rows = new java.util.ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    rows.add(row(String.format("k%02d", i), i < 20 ? "created" : "paid", "1", 0, i));
                }
                s.write(batch(1, Map.of(0, 40L), rows.toArray(dev.kbackfill.core.record.Change[]::new)));
            }
            Table t = loaded();
            IcebergFiles files = new IcebergFiles(t);
            int[] key = {t.schema().columns().indexOf(t.schema().findField("kafka_key"))};
            assertThat(files.probe(t.currentSnapshot(), key, new int[0], java.util.Set.of(List.of("k07")))).hasSize(1);
            assertThat(files.probedFiles).as("the file of k00..k19 only, of two").isEqualTo(1);
            assertThat(files.probe(t.currentSnapshot(), key, new int[0], java.util.Set.of(List.of("k07"), List.of("k33"))))
                    .hasSize(2);
            assertThat(files.probedFiles).isEqualTo(2);
            assertThat(files.probe(t.currentSnapshot(), key, new int[0], java.util.Set.of(List.of("k9")))).isEmpty();
            assertThat(files.probedFiles).as("a key beyond every file's bounds reads none").isZero();
        }
    }

    @Tag("iceberg")
    static class ByKeyBucketIT extends Partitioned {
        @Override
        List<String> partitionBy() {
            return List.of("bucket(4, kafka_key)");
        }

        /** A key of two fields has no kafka_key to bucket by: its batches wait for one, as they should. */
        @Override
        protected boolean runs(String test) {
            return !test.equals("aDeleteOfACompoundKeyHoldsWhateverTheOrderOfItsFields");
        }

        @Test
        void aBatchProbesOnlyThePartitionsOfItsKeys() throws Exception {
            try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
                List<dev.kbackfill.core.record.Change> rows = new java.util.ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    rows.add(row("k" + i, "created", "1", 0, i));
                }
                s.write(batch(1, Map.of(0, 40L), rows.toArray(dev.kbackfill.core.record.Change[]::new)));
            }
            Table t = loaded();
            java.util.Set<Object> buckets = new java.util.HashSet<>();
            try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
                tasks.forEach(task -> buckets.add(task.file().partition().get(0, Integer.class)));
            }
            assertThat(buckets).as("one file per bucket").hasSize(4);
            IcebergFiles files = new IcebergFiles(t);
            int[] key = {t.schema().columns().indexOf(t.schema().findField("kafka_key"))};
            List<IcebergFiles.Hit> hits = files.probe(t.currentSnapshot(), key, new int[0],
                    java.util.Set.of(List.of("k7")));
            assertThat(hits).hasSize(1);
            assertThat(files.probedFiles).as("the file of k7's bucket only").isEqualTo(1);
        }
    }

    @Tag("iceberg")
    static class ByDayIT extends Partitioned {
        @Override
        List<String> partitionBy() {
            return List.of("day(kafka_timestamp)");
        }
    }
}
