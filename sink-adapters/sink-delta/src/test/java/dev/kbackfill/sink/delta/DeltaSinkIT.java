package dev.kbackfill.sink.delta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.TopicInfo;
import io.delta.kernel.Operation;
import io.delta.kernel.TableManager;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.utils.CloseableIterable;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What only a Delta table has, on real tables in a temporary directory read back through Kernel's scan API: one
 * commit per batch, copy-on-write of the touched files only, compaction, keys filled by column name. The sink
 * contract runs in {@link DeltaSinkContractIT}.
 */
@Tag("delta")
class DeltaSinkIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    @TempDir
    Path dir;

    private String table() {
        return dir.resolve("orders").toString();
    }

    private Sink sink(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        Sink s = SinkFactory.forSettings(new SinkSettings("delta:" + table(), "orders", Optional.empty(), Optional.empty(),
                conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT));
        s.open();
        return s;
    }

    /** A NOT NULL value column of a table another engine made: a record without a value for it is refused. */
    @Test
    void aRecordThatLeavesANotNullColumnNullIsARefusedRecord() throws Exception {
        Engine engine = DefaultEngine.create(new Configuration());
        io.delta.kernel.types.StructType schema = new io.delta.kernel.types.StructType()
                .add("kafka_key", io.delta.kernel.types.StringType.STRING, false)
                .add("status", io.delta.kernel.types.StringType.STRING, false)
                .add("kafka_topic", io.delta.kernel.types.StringType.STRING, true)
                .add("kafka_partition", io.delta.kernel.types.LongType.LONG, true)
                .add("kafka_offset", io.delta.kernel.types.LongType.LONG, true)
                .add("kafka_timestamp", io.delta.kernel.types.TimestampType.TIMESTAMP, true)
                .add("kafka_log_time", io.delta.kernel.types.TimestampType.TIMESTAMP, true);
        TableManager.buildCreateTableTransaction(table(), schema, "test")
                .withTableProperties(Map.of("delta.feature.domainMetadata", "supported"))
                .build(engine).commit(engine, CloseableIterable.emptyIterable());
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            begin(s);
            assertThatThrownBy(() -> s.write(batch(1, Map.of(0, 1L), new Change(Map.of("kafka_key", "a"),
                    new LinkedHashMap<>(), 0, 0, T0.toEpochMilli())))).isInstanceOf(
                    dev.kbackfill.core.sink.RecordRejectedException.class)
                    .hasMessageContaining("column status is NOT NULL");
        }
    }

    /** A table partitioned by its key column: a batch probes only the files of its keys' partitions. */
    @Test
    void aBatchProbesOnlyThePartitionsOfItsKeysWhereTheTableIsPartitionedByTheKey() throws Exception {
        SinkSettings settings = new SinkSettings("delta:" + table(), "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT)
                .withPartitionBy(List.of("kafka_key"));
        DeltaTable deltaTable = new DeltaTable(settings, table());
        try (Sink s = new dev.kbackfill.sink.lake.LakeSink(settings, deltaTable)) {
            s.open();
            begin(s);
            List<Change> first = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                first.add(row("k" + i, "created", "1", 0, i));
            }
            s.write(batch(1, Map.of(0, 10L), first.toArray(Change[]::new)));
            s.write(batch(2, Map.of(0, 12L), row("k3", "paid", "1", 0, 10), tombstone("k7", 0, 11)));
            assertThat(deltaTable.probedFiles).as("the files of k3's and k7's partitions only").isEqualTo(2);
        }
        List<String> rows = DeltaSinkContractIT.rows(table());
        assertThat(rows).hasSize(9).contains("k3=paid/1@0:10").noneMatch(r -> r.startsWith("k7="));
    }

    /**
     * A table this sink created holds only rows it wrote: a batch's keys it never wrote are not looked for, though its
     * files' key bounds admit them; a key it wrote is; once another writer commits, every key is looked for again.
     */
    @Test
    void keysTheSinkNeverWroteIntoTheTableItCreatedAreNotProbedUntilAnotherWriterCommits() throws Exception {
        SinkSettings settings = new SinkSettings("delta:" + table(), "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT);
        DeltaTable deltaTable = new DeltaTable(settings, table());
        try (Sink s = new dev.kbackfill.sink.lake.LakeSink(settings, deltaTable)) {
            s.open();
            begin(s);
            s.write(batch(1, Map.of(0, 3L), row("k0", "created", "1", 0, 0), row("k4", "created", "1", 0, 1),
                    row("k8", "created", "1", 0, 2)));
            s.write(batch(2, Map.of(0, 5L), row("k1", "created", "1", 0, 3), row("k5", "created", "1", 0, 4)));
            assertThat(deltaTable.probedFiles).as("k1 and k5 were never written: no file read").isZero();
            s.write(batch(3, Map.of(0, 7L), row("k4", "paid", "2", 0, 5), row("k6", "created", "1", 0, 6)));
            assertThat(deltaTable.probedFiles).as("k4 was written: both files whose bounds admit it are read")
                    .isEqualTo(2);
            Engine engine = DefaultEngine.create(new Configuration());
            TableManager.loadSnapshot(table()).build(engine)
                    .buildUpdateTableTransaction("another", Operation.MANUAL_UPDATE)
                    .withTablePropertiesAdded(Map.of("owner", "another")).build(engine)
                    .commit(engine, CloseableIterable.emptyIterable());
            s.write(batch(4, Map.of(0, 9L), row("k2", "created", "1", 0, 7), row("k7", "created", "1", 0, 8)));
            assertThat(deltaTable.probedFiles).as("after another writer's commit, every file the bounds admit")
                    .isPositive();
        }
        assertThat(rows()).containsExactlyInAnyOrder("k0=created/1@0:0", "k1=created/1@0:3", "k2=created/1@0:7",
                "k4=paid/2@0:5", "k5=created/1@0:4", "k6=created/1@0:6", "k7=created/1@0:8", "k8=created/1@0:2");
    }

    static Plan plan() {
        return new Plan(BackfillRequest.builder("orders").from("earliest").to("latest").build(), T0, Optional.empty(),
                Optional.empty(), "cluster", "topic-id", TopicInfo.TimestampType.CREATE_TIME,
                List.of(new PartitionRange(0, 0, 100, 0, 100, Optional.empty(), List.of()),
                        new PartitionRange(1, 0, 100, 0, 100, Optional.empty(), List.of())), List.of());
    }

    static Change row(String key, String status, String amount, int partition, long offset) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("status", status);
        values.put("amount", amount == null ? null : new BigDecimal(amount));
        values.put("paid_at", T0.plusSeconds(offset));
        return new Change(Map.of("kafka_key", key), values, partition, offset, T0.plusSeconds(offset).toEpochMilli());
    }

    static Change tombstone(String key, int partition, long offset) {
        return new Change(Map.of("kafka_key", key), null, partition, offset, T0.plusSeconds(offset).toEpochMilli());
    }

    static WriteBatch batch(long sequence, Map<Integer, Long> next, Change... changes) {
        List<Change> reduced = Reduction.lastPerKey(List.of(changes));
        return new WriteBatch("job", 1, sequence, reduced, RowShape.of(reduced), next);
    }

    private List<String> rows() throws Exception {
        return DeltaSinkContractIT.rows(table());
    }

    private static void begin(Sink s) {
        s.jobStore().begin(JobState.begin("job", "fingerprint", 1, plan()));
    }

    private long dataFiles() throws Exception {
        try (Stream<Path> files = Files.list(Path.of(table()))) {
            return files.filter(p -> p.toString().endsWith(".parquet")).count();
        }
    }

    @Test
    void upsertsLeaveTheLastStateOfEachKeyAndTheProgressRidesInTheSameCommit() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            assertThat(s.jobStore().load("job")).isPresent(); // kept until the table's first commit
            s.write(batch(1, Map.of(0, 3L), row("a", "created", "1.50", 0, 0), row("b", "created", "2", 0, 1),
                    row("a", "paid", "1.50", 0, 2)));
            long version = DeltaTableRows.version(table());
            s.write(batch(2, Map.of(0, 5L, 1, 1L), row("b", "paid", "2", 0, 4), row("c", "created", null, 1, 0)));
            assertThat(DeltaTableRows.version(table())).isEqualTo(version + 1);
            assertThat(rows()).containsExactly("a=paid/1.5@0:2", "b=paid/2@0:4", "c=created/null@1:0");
            // Parquet compressed with Snappy, as Spark writes it (Kernel alone leaves it uncompressed)
            for (String file : DeltaTableRows.dataFiles(table()).keySet()) {
                try (ParquetFileReader footer = ParquetFileReader.open(HadoopInputFile.fromPath(
                        new org.apache.hadoop.fs.Path(file), new Configuration()))) {
                    assertThat(footer.getFooter().getBlocks().get(0).getColumns())
                            .allSatisfy(c -> assertThat(c.getCodec()).isEqualTo(CompressionCodecName.SNAPPY));
                }
            }
            JobState stored = s.jobStore().load("job").orElseThrow();
            assertThat(stored.nextOffsets()).containsEntry(0, 5L).containsEntry(1, 1L);
            assertThat(stored.plan()).isEqualTo(plan());
        }
        try (Sink reopened = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            assertThat(reopened.jobStore().load("job").orElseThrow().nextOffsets()).containsEntry(0, 5L);
        }
    }

    @Test
    void aBatchMarksTheRowsItReplacesInDeletionVectorsAndLeavesTheirFilesInPlace() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 10L), row("a", "x", "1", 0, 0), row("b", "x", "1", 0, 1), row("c", "x", "1", 0, 2),
                    row("d", "x", "1", 0, 3)));
            s.write(batch(2, Map.of(0, 20L), row("m", "x", "1", 0, 10), row("n", "x", "1", 0, 11)));
            Map<String, Long> before = DeltaTableRows.dataFiles(table());
            assertThat(before).hasSize(2).containsValues(0L);
            s.write(batch(3, Map.of(0, 30L), row("b", "y", "2", 0, 20), tombstone("d", 0, 21)));
            assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:20", "c=x/1@0:2", "m=x/1@0:10", "n=x/1@0:11");
            Map<String, Long> after = DeltaTableRows.dataFiles(table());
            // both files stay: the first with b and d marked deleted, the second untouched; the new b in a file of its own
            assertThat(after).hasSize(3).containsAllEntriesOf(Map.of(
                    before.keySet().stream().filter(f -> after.get(f) == 2L).findFirst().orElseThrow(), 2L));
            assertThat(after.keySet()).containsAll(before.keySet());
            assertThat(after.values()).containsExactlyInAnyOrder(2L, 0L, 0L);
            // a second batch touching the same file keeps the rows the first one marked
            s.write(batch(4, Map.of(0, 40L), row("c", "z", "3", 0, 30)));
            assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:20", "c=z/3@0:30", "m=x/1@0:10", "n=x/1@0:11");
            assertThat(DeltaTableRows.dataFiles(table()).values()).contains(3L);
            try (Stream<Path> files = Files.list(Path.of(table()))) {
                assertThat(files.filter(f -> f.getFileName().toString().startsWith("deletion_vector_"))).hasSize(2);
            }
            // the last row of the file goes: the file goes with it, no vector for it
            s.write(batch(5, Map.of(0, 50L), row("a", "w", "4", 0, 40)));
            assertThat(rows()).containsExactly("a=w/4@0:40", "b=y/2@0:20", "c=z/3@0:30", "m=x/1@0:10", "n=x/1@0:11");
            assertThat(DeltaTableRows.dataFiles(table()).values()).containsOnly(0L);
        }
    }

    /**
     * A file another writer added without statistics gets {@code numRecords} (the protocol wants it on every file
     * with a deletion vector) when a batch marks rows of it deleted: its row count, from the file itself.
     */
    @Test
    void aFileAddedWithoutStatisticsGetsItsRecordCountWithItsDeletionVector() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 10L), row("a", "x", "1", 0, 0), row("b", "x", "1", 0, 1), row("c", "x", "1", 0, 2)));
        }
        // as a writer without statistics would have added it
        Path log = Path.of(table(), "_delta_log");
        Path commit;
        try (Stream<Path> files = Files.list(log)) {
            commit = files.filter(f -> f.getFileName().toString().endsWith(".json")).sorted().reduce((x, y) -> y).orElseThrow();
        }
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> stripped = new ArrayList<>();
        for (String line : Files.readAllLines(commit)) {
            com.fasterxml.jackson.databind.node.ObjectNode action = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(line);
            if (action.has("add")) {
                ((com.fasterxml.jackson.databind.node.ObjectNode) action.get("add")).remove("stats");
            }
            stripped.add(json.writeValueAsString(action));
        }
        Files.write(commit, stripped);
        try (Stream<Path> files = Files.list(log)) {
            files.filter(f -> f.getFileName().toString().endsWith(".crc")).forEach(f -> f.toFile().delete());
        }
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            s.write(batch(2, Map.of(0, 20L), row("b", "y", "2", 0, 10)));
        }
        assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:10", "c=x/1@0:2");
        Path latest;
        try (Stream<Path> files = Files.list(log)) {
            latest = files.filter(f -> f.getFileName().toString().endsWith(".json")).sorted().reduce((x, y) -> y).orElseThrow();
        }
        List<String> adds = Files.readAllLines(latest).stream()
                .filter(l -> l.startsWith("{\"add\"") && l.contains("\"deletionVector\"")).toList();
        assertThat(adds).hasSize(1);
        com.fasterxml.jackson.databind.JsonNode add = json.readTree(adds.get(0)).get("add");
        assertThat(json.readTree(add.get("stats").asText()).get("numRecords").asLong()).isEqualTo(3);
    }

    /**
     * A table with row tracking: kbackfill replaces a row by deleting and adding it, so its row id would not survive;
     * writes that replace rows and compaction are refused (exit 2) before anything is written, insert-only is not,
     * and kbackfill does not create such a table.
     */
    @Test
    void aTableWithRowTrackingIsRefusedWhereItsRowIdsWouldNotSurvive() throws Exception {
        Engine engine = DefaultEngine.create(new Configuration());
        io.delta.kernel.types.StructType schema = new io.delta.kernel.types.StructType()
                .add("kafka_key", io.delta.kernel.types.StringType.STRING, false)
                .add("status", io.delta.kernel.types.StringType.STRING, true)
                .add("kafka_topic", io.delta.kernel.types.StringType.STRING, true)
                .add("kafka_partition", io.delta.kernel.types.LongType.LONG, true)
                .add("kafka_offset", io.delta.kernel.types.LongType.LONG, true)
                .add("kafka_timestamp", io.delta.kernel.types.TimestampType.TIMESTAMP, true)
                .add("kafka_log_time", io.delta.kernel.types.TimestampType.TIMESTAMP, true);
        TableManager.buildCreateTableTransaction(table(), schema, "test")
                .withTableProperties(Map.of("delta.enableRowTracking", "true", "kbackfill.keyColumns", "kafka_key"))
                .build(engine).commit(engine, CloseableIterable.emptyIterable());
        Sink newerWins = SinkFactory.forSettings(new SinkSettings("delta:" + table(), "orders", Optional.empty(),
                Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false,
                SinkSettings.MetadataColumns.DEFAULT));
        assertThatThrownBy(newerWins::open).isInstanceOf(SinkConfigException.class)
                .hasMessageContaining("uses rowTracking").hasMessageContaining("--on-conflict insert-only");
        newerWins.close();
        try (Sink insertOnly = sink(ConflictMode.INSERT_ONLY, TombstoneMode.DELETE, false)) {
            begin(insertOnly);
            insertOnly.write(batch(1, Map.of(0, 1L), new Change(Map.of("kafka_key", "a"), Map.of("status", "x"), 0, 0,
                    T0.toEpochMilli())));
        }
        assertThatThrownBy(() -> DeltaCompaction.compact(table(), Optional.empty(), 1000))
                .isInstanceOf(SinkConfigException.class).hasMessageContaining("uses rowTracking");
        SinkSettings creating = new SinkSettings("delta:" + dir.resolve("tracked"), "orders", Optional.empty(),
                Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false,
                SinkSettings.MetadataColumns.DEFAULT, Map.of(), SinkSettings.Source.NONE,
                Map.of("delta.enableRowTracking", "true"));
        try (Sink s = SinkFactory.forSettings(creating)) {
            assertThatThrownBy(s::open).isInstanceOf(SinkConfigException.class)
                    .hasMessageStartingWith("invalid --delta-table-property delta.enableRowTracking=true");
        }
    }

    @Test
    void softDeletesKeepTheStoredValuesOfARowMarkedInADeletionVector() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.SOFT_DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 10L), row("a", "x", "1", 0, 0), row("b", "x", "7", 0, 1)));
            s.write(batch(2, Map.of(0, 20L), tombstone("b", 0, 10)));
            assertThat(DeltaTableRows.rows(table())).hasSize(2).anySatisfy(r -> assertThat(r)
                    .containsEntry("kafka_key", "b").containsEntry("status", "x").containsEntry("kafka_deleted", true)
                    .containsEntry("kafka_offset", 10L));
            assertThat(DeltaTableRows.dataFiles(table()).values()).containsExactlyInAnyOrder(1L, 0L);
        }
    }

    @Test
    void tablePropertiesOfTheUserGoOverKbackfillsWhenItCreatesTheTable() throws Exception {
        SinkSettings plain = new SinkSettings("delta:" + table(), "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT);
        SinkSettings noVectors = new SinkSettings(plain.url(), plain.table(), plain.user(), plain.password(),
                plain.conflictMode(), plain.tombstoneMode(), true, false, plain.metadata(), Map.of(),
                SinkSettings.Source.NONE, Map.of("delta.enableDeletionVectors", "false", "team", "orders"));
        try (Sink s = SinkFactory.forSettings(noVectors)) {
            s.open();
            begin(s);
            s.write(batch(1, Map.of(0, 10L), row("a", "x", "1", 0, 0), row("b", "x", "1", 0, 1)));
            s.write(batch(2, Map.of(0, 20L), row("b", "y", "2", 0, 10)));
            assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:10");
            // no vectors: the file holding b was copied without it
            assertThat(DeltaTableRows.dataFiles(table()).values()).containsOnly(0L);
        }
        Engine engine = DefaultEngine.create(new Configuration());
        Map<String, String> properties = TableManager.loadSnapshot(table()).build(engine).getTableProperties();
        assertThat(properties).containsEntry("delta.enableDeletionVectors", "false").containsEntry("team", "orders")
                .containsKey("kbackfill.keyColumns");

        // refused before anything is written: a value Kernel would read as false, a key Kernel does not know
        Map<Map<String, String>, String> refused = Map.of(
                Map.of("delta.enableDeletionVectors", "maybe"), "invalid --delta-table-property delta.enableDeletionVectors='maybe'",
                Map.of("delta.noSuchProperty", "1"), "invalid --delta-table-property for the Delta table at",
                // kbackfill's own record of the key columns: a user value would rekey the table
                Map.of("kbackfill.keyColumns", "status"), "invalid --delta-table-property kbackfill.keyColumns: "
                        + "kbackfill.* properties are kbackfill's own");
        refused.forEach((given, message) -> {
            SinkSettings bad = new SinkSettings("delta:" + dir.resolve("other"), "orders", Optional.empty(),
                    Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false,
                    SinkSettings.MetadataColumns.DEFAULT, Map.of(), SinkSettings.Source.NONE, given);
            try (Sink s = SinkFactory.forSettings(bad)) {
                assertThatThrownBy(s::open).isInstanceOf(SinkConfigException.class).hasMessageStartingWith(message);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThat(dir.resolve("other")).doesNotExist();
    }

    @Test
    void withoutDeletionVectorsOnlyTheFilesHoldingTheBatchKeysAreCopied() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 10L), row("a", "x", "1", 0, 0), row("b", "x", "1", 0, 1), row("c", "x", "1", 0, 2)));
            s.write(batch(2, Map.of(0, 20L), row("m", "x", "1", 0, 10), row("n", "x", "1", 0, 11)));
            // as `ALTER TABLE .. SET TBLPROPERTIES ('delta.enableDeletionVectors' = false)` would: the sink's next
            // commit finds another writer's commit first, and plans again
            Engine engine = DefaultEngine.create(new Configuration());
            TableManager.loadSnapshot(table()).build(engine).buildUpdateTableTransaction("test", Operation.MANUAL_UPDATE)
                    .withTablePropertiesAdded(Map.of("delta.enableDeletionVectors", "false")).build(engine)
                    .commit(engine, CloseableIterable.emptyIterable());
            Map<String, Long> before = DeltaTableRows.dataFiles(table());
            s.write(batch(3, Map.of(0, 30L), row("b", "y", "2", 0, 20)));
            assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:20", "c=x/1@0:2", "m=x/1@0:10", "n=x/1@0:11");
            Map<String, Long> after = DeltaTableRows.dataFiles(table());
            // the file with m and n stays; the one with b is replaced by a copy of a and c, the new b in its own file
            assertThat(after).hasSize(3).doesNotContainValue(1L);
            assertThat(before.keySet().stream().filter(after::containsKey)).hasSize(1);
            assertThat(DeltaTableRows.rows(table())).hasSize(5);
        }
    }

    @Test
    void compactionRewritesFilesIntoKeySortedOnesWithoutADataChange() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 2L), row("d", "x", "1", 0, 0), row("a", "x", "1", 0, 1)));
            s.write(batch(2, Map.of(0, 4L), row("c", "x", "1", 0, 2), row("f", "x", "1", 0, 3)));
            s.write(batch(3, Map.of(0, 6L), row("b", "x", "1", 0, 4), row("e", "x", "1", 0, 5)));
            List<String> before = rows();
            DeltaCompaction.Result r = DeltaCompaction.compact(table(), Optional.empty(), 1000);
            assertThat(r.filesBefore()).isEqualTo(3);
            assertThat(r.filesWritten()).isEqualTo(1);
            assertThat(r.rows()).isEqualTo(6);
            assertThat(rows()).isEqualTo(before);
            String commit = Files.readString(Path.of(table(), "_delta_log", String.format("%020d.json", r.version())));
            assertThat(commit).contains("\"remove\"").contains("\"add\"").doesNotContain("\"dataChange\":true");
            assertThat(s.jobStore().load("job").orElseThrow().nextOffsets()).containsEntry(0, 6L);
            s.write(batch(4, Map.of(0, 8L), row("a", "y", "2", 0, 7)));
            assertThat(rows()).contains("a=y/2@0:7").hasSize(6);
            // the new "a" went to a file of its own, the old one is marked deleted: compaction folds both into one
            assertThat(DeltaTableRows.dataFiles(table()).values()).containsExactlyInAnyOrder(1L, 0L);
            DeltaCompaction.Result again = DeltaCompaction.compact(table(), Optional.empty(), 1000);
            assertThat(again.filesWritten()).isEqualTo(1);
            assertThat(DeltaTableRows.dataFiles(table()).values()).containsExactly(0L);
            assertThat(rows()).contains("a=y/2@0:7").hasSize(6);
            s.write(batch(5, Map.of(0, 10L)));
            // compacted, one file and no vector: nothing left to compact
            DeltaCompaction.Result third = DeltaCompaction.compact(table(), Optional.empty(), 1000);
            assertThat(third.filesBefore()).isEqualTo(1);
            assertThat(third.filesRewritten()).isZero();
        }
    }

    /**
     * A table kbackfill creates maps its columns, so a field first carried by a later batch becomes a column (a schema
     * change committed just before that batch), and a number column widens for a value it cannot hold (Delta's type
     * widening): as on the other sinks, on one machine.
     */
    @Test
    void aFieldFirstSeenLaterBecomesAColumnAndANumberColumnWidens() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            Map<String, Object> first = new LinkedHashMap<>();
            first.put("status", "x");
            first.put("n", 7L);
            s.write(batch(1, Map.of(0, 1L), new Change(Map.of("kafka_key", "a"), first, 0, 0, 0)));
            Map<String, Object> more = new LinkedHashMap<>();
            more.put("status", "y");
            more.put("n", new BigDecimal("2.5"));
            more.put("coupon", "FREE");
            s.write(batch(2, Map.of(0, 2L), new Change(Map.of("kafka_key", "b"), more, 0, 1, 0)));
        }
        Map<String, Map<String, Object>> rows = new java.util.TreeMap<>();
        for (Map<String, Object> r : DeltaTableRows.rows(table())) {
            rows.put((String) r.get("kafka_key"), r);
        }
        assertThat(rows.get("a")).containsEntry("coupon", null);
        assertThat((BigDecimal) rows.get("a").get("n")).isEqualByComparingTo("7");
        assertThat(rows.get("b")).containsEntry("coupon", "FREE");
        assertThat((BigDecimal) rows.get("b").get("n")).isEqualByComparingTo("2.5");
    }

    /** A table without column mapping cannot take a column through Delta Kernel: refused, naming the Spark statement. */
    @Test
    void aFieldFirstSeenLaterIsRefusedClearlyByATableWithoutColumnMapping() throws Exception {
        Sink s = SinkFactory.forSettings(new SinkSettings("delta:" + table(), "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT,
                Map.of(), SinkSettings.Source.NONE, Map.of("delta.columnMapping.mode", "none")));
        s.open();
        try (s) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Map<String, Object> more = new LinkedHashMap<>();
            more.put("status", "y");
            more.put("coupon", "FREE");
            Change c = new Change(Map.of("kafka_key", "b"), more, 0, 1, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), c)))
                    .isInstanceOf(SinkConfigException.class)
                    .hasMessageContaining("value field 'coupon' (first at partition 0 offset 1) has no column")
                    .hasMessageContaining("'delta.columnMapping.mode' = 'name'")
                    .hasMessageContaining("--ignore-unknown-fields");
        }
    }

    @Test
    void aNumberA32BitColumnCannotHoldIsAPoisonRecordSayingDeltaKernelCannotWidenTheColumn() throws Exception {
        Engine engine = DefaultEngine.create(new Configuration());
        io.delta.kernel.types.StructType schema = new io.delta.kernel.types.StructType()
                .add("kafka_key", io.delta.kernel.types.StringType.STRING, false)
                .add("qty", io.delta.kernel.types.IntegerType.INTEGER, true)
                .add("ratio", io.delta.kernel.types.FloatType.FLOAT, true)
                .add("kafka_topic", io.delta.kernel.types.StringType.STRING, true)
                .add("kafka_partition", io.delta.kernel.types.LongType.LONG, true)
                .add("kafka_offset", io.delta.kernel.types.LongType.LONG, true)
                .add("kafka_timestamp", io.delta.kernel.types.TimestampType.TIMESTAMP, true)
                .add("kafka_log_time", io.delta.kernel.types.TimestampType.TIMESTAMP, true);
        TableManager.buildCreateTableTransaction(table(), schema, "test")
                .withTableProperties(Map.of("kbackfill.keyColumns", "kafka_key"))
                .build(engine).commit(engine, CloseableIterable.emptyIterable());
        // a table made elsewhere (as Spark makes them) has no domain metadata for the job's state: refused, unless
        // kbackfill may change the table, which enables it with the job's first commit
        assertThatThrownBy(() -> sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false))
                .isInstanceOf(SinkConfigException.class).hasMessageContaining("does not support domain metadata")
                .hasMessageContaining("'delta.feature.domainMetadata' = 'supported'");
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            assertThat(s.warnings()).anyMatch(w -> w.contains("kbackfill's first commit enables it"));
            begin(s);
            s.write(batch(1, Map.of(0, 1L), new Change(Map.of("kafka_key", "a"),
                    Map.of("qty", 2_147_483_647L, "ratio", new BigDecimal("0.1")), 0, 0, T0.toEpochMilli())));
            long version = DeltaTableRows.version(table());
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), new Change(Map.of("kafka_key", "b"),
                    Map.of("qty", 3_000_000_000L), 0, 1, T0.toEpochMilli()))))
                    .isInstanceOf(dev.kbackfill.core.sink.RecordRejectedException.class)
                    .hasMessageContaining("value 3000000000 does not fit column qty (integer); a 64-bit integer "
                            + "column would hold it (Delta Kernel cannot widen a column");
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), new Change(Map.of("kafka_key", "c"),
                    Map.of("ratio", 3.141592653589793), 0, 1, T0.toEpochMilli()))))
                    .isInstanceOf(dev.kbackfill.core.sink.RecordRejectedException.class)
                    .hasMessageContaining("value 3.141592653589793 does not fit column ratio (float)");
            assertThat(DeltaTableRows.version(table())).isEqualTo(version);
        }
    }

    @Test
    void aMissingTableIsRefusedAndATypeMismatchCommitsNothing() throws Exception {
        assertThatThrownBy(() -> sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false))
                .isInstanceOf(SinkConfigException.class).hasMessageContaining("no Delta table at").hasMessageContaining("--create-table");
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            long version = DeltaTableRows.version(table());
            Map<String, Object> bad = new LinkedHashMap<>();
            bad.put("status", "y");
            bad.put("amount", "not a number");
            Change c = new Change(Map.of("kafka_key", "b"), bad, 0, 1, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), c)))
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("value 'not a number' does not fit column amount (Decimal(38, 18))");
            assertThat(DeltaTableRows.version(table())).isEqualTo(version);
            assertThat(s.jobStore().load("job").orElseThrow().nextOffsets()).containsEntry(0, 1L);
        }
    }

    @Test
    void oneWriterPerJobAndResetForgetsTheJob() throws Exception {
        try (Sink first = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
             Sink second = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            try (AutoCloseable lock = first.jobStore().lock("job")) {
                assertThatThrownBy(() -> second.jobStore().lock("job")).isInstanceOf(JobConflictException.class);
                begin(first);
                first.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            }
            assertThat(second.jobStore().reset("job")).isTrue();
            assertThat(second.jobStore().load("job")).isEmpty();
            assertThat(rows()).containsExactly("a=x/1@0:0");
        }
    }

    static WriteBatch batchFrom(String topic, long sequence, Map<Integer, Long> next, Change... changes) {
        List<Change> reduced = Reduction.lastPerKey(List.of(changes));
        return new WriteBatch("job", 1, sequence, reduced, RowShape.of(reduced), next, topic);
    }

    static Change rowAt(String key, String status, int partition, long offset, Instant time) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("status", status);
        values.put("amount", null);
        values.put("paid_at", time);
        return new Change(Map.of("kafka_key", key), values, partition, offset, time.toEpochMilli());
    }

    /**
     * Keys are rows by their identity, not by the physical value of the first one seen: {@code 7} and {@code 7.00}
     * are one key, one row of a string column; {@code "1"} and {@code 1}, two identities that a string column
     * holds as one row, leave that row the newer record's by the version rule, whatever their order in the batch.
     */
    @Test
    void keysThatAStringColumnHoldsAsOneValueAreOneRowTheNewerRecordsByTheRule() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), new Change(Map.of("id", "seed"), Map.of("status", "s"), 0, 0,
                    T0.toEpochMilli())));
            s.write(batch(2, Map.of(0, 2L), new Change(Map.of("id", 7L), Map.of("status", "seven"), 0, 1,
                    T0.plusSeconds(1).toEpochMilli())));
            s.write(batch(3, Map.of(0, 3L), new Change(Map.of("id", new BigDecimal("7.00")), Map.of("status",
                    "seven-again"), 0, 2, T0.plusSeconds(2).toEpochMilli())));
            // the newer of "1" and 1 comes first in the batch: the older must not overwrite it
            Change newer = new Change(Map.of("id", "1"), Map.of("status", "newer"), 1, 9, T0.plusSeconds(9).toEpochMilli());
            Change older = new Change(Map.of("id", 1L), Map.of("status", "older"), 0, 3, T0.plusSeconds(3).toEpochMilli());
            WriteResult r = s.write(new WriteBatch("job", 1, 4, List.of(newer, older), RowShape.of(List.of(newer, older)),
                    Map.of(0, 4L, 1, 10L)));
            assertThat(r.keptOut()).containsEntry(0, 1L);
            List<String> rows = new ArrayList<>();
            DeltaTableRows.rows(table()).forEach(row -> rows.add(row.get("id") + "=" + row.get("status")));
            assertThat(rows).containsExactlyInAnyOrder("seed=s", "7=seven-again", "1=newer");
        }
    }

    /**
     * A table whose ledger holds a compound key as ledgers did before keys were named (its values as a list, in the
     * order its batch gave the fields: id, region): an older record giving the fields in that order is still kept
     * out, by the sink and by the Spark engine's reading of the ledger, which names the key as today's entries do.
     */
    @Test
    void aDeleteTheLedgerHeldAsAListOfValuesStillKeepsAnOlderRecordOut() throws Exception {
        Map<String, Object> idFirst = new LinkedHashMap<>();
        idFirst.put("id", 7L);
        idFirst.put("region", "eu");
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), new Change(idFirst, Map.of("status", "first"), 0, 0, T0.toEpochMilli())));
        }
        Version deleted = new Version("orders", 0, 5, T0.toEpochMilli());
        // the entry of before, in place of the row's delete
        assertThat(DeltaEngineSupport.record(table(), Map.of("[7,\"eu\"]", deleted))).isEqualTo(1);
        assertThat(DeltaEngineSupport.read(table(), List.of("region", "id")))
                .as("read in the engine's key order, the list is taken in that order")
                .containsEntry("{\"id\":\"eu\",\"region\":7}", deleted);
        assertThat(DeltaEngineSupport.read(table(), List.of("id", "region")))
                .containsEntry(DeltaEngineSupport.keyText(List.of("region", "id"), List.of("eu", 7L)), deleted);
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            begin(s);
            WriteResult r = s.write(batch(2, Map.of(0, 4L),
                    new Change(idFirst, Map.of("status", "older"), 0, 3, T0.toEpochMilli())));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            List<String> rows = new ArrayList<>();
            DeltaTableRows.rows(table()).forEach(row -> rows.add(row.get("id") + "=" + row.get("status")));
            assertThat(rows).containsExactly("7=first");
        }
    }

    @Test
    void aKeyWrittenWithItsFieldsInTwoOrdersIsOneRowWithEachValueInItsOwnColumn() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            Map<String, Object> ab = new LinkedHashMap<>();
            ab.put("a", 1L);
            ab.put("b", 2L);
            Map<String, Object> ba = new LinkedHashMap<>();
            ba.put("b", 2L);
            ba.put("a", 1L);
            Map<String, Object> other = new LinkedHashMap<>();
            other.put("b", 1L);
            other.put("a", 2L);
            s.write(batch(1, Map.of(0, 1L), new Change(ab, Map.of("status", "first"), 0, 0, T0.toEpochMilli())));
            s.write(batch(2, Map.of(0, 3L), new Change(ba, Map.of("status", "second"), 0, 1, T0.toEpochMilli()),
                    new Change(other, Map.of("status", "other"), 0, 2, T0.toEpochMilli())));
            List<String> rows = new ArrayList<>();
            DeltaTableRows.rows(table()).forEach(r -> rows.add(r.get("a") + "," + r.get("b") + "=" + r.get("status")));
            assertThat(rows).containsExactlyInAnyOrder("1,2=second", "2,1=other");
        }
    }


}
