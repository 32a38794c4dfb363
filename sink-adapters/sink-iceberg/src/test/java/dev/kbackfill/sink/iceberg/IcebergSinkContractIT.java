package dev.kbackfill.sink.iceberg;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.WriteResult;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.junit.jupiter.api.Test;
import org.apache.iceberg.hadoop.HadoopTables;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink contract on a path (Hadoop) Iceberg table, {@code iceberg:PATH}, read back with Iceberg's generic reader;
 * then what is Iceberg's own: another writer committing between a batch's read and its commit, progress and the
 * ledger through snapshot expiry and rollback, the table kbackfill creates, what it refuses.
 */
@Tag("iceberg")
class IcebergSinkContractIT extends SinkContract {

    @TempDir
    Path dir;

    private String table() {
        return dir.resolve("orders").toString();
    }

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return new SinkSettings("iceberg:" + table(), "orders", Optional.empty(),
                Optional.empty(), conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT,
                Map.of(), SinkSettings.Source.NONE, Map.of()).withVersionField(versionField);
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    /** Rows of a lake table are written whole: another writer nulls kbackfill's columns. */
    @Override
    protected Sink newForeignSink(boolean keepOurColumns) {
        return keepOurColumns ? null : SinkFactory.forSettings(new SinkSettings("iceberg:" + table(), "orders",
                Optional.empty(), Optional.empty(), ConflictMode.OVERWRITE, TombstoneMode.DELETE, false, false,
                FOREIGN_METADATA, Map.of(), SinkSettings.Source.NONE, Map.of()));
    }

    @Override
    protected List<String> rows() throws Exception {
        HadoopTables tables = new HadoopTables(new Configuration());
        return tables.exists(table()) ? IcebergTableRows.contractRows(tables.load(table())) : List.of();
    }

    private Table loaded() {
        return new HadoopTables(new Configuration()).load(table());
    }

    /**
     * A batch orders a compound key as its records do: a key first written as (region, id) and then as (id, region)
     * is found again, though the sink knows every row of the table it created is its own and skips the keys it never
     * wrote. It was a second row when those keys were held in the batch's order.
     */
    @Test
    void aKeyWrittenWithItsFieldsInTwoOrdersIsOneRow() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 1L), compoundKeyed(true, "first", 0)));
            WriteResult r = o.write(batch(2, Map.of(0, 2L), compoundKeyed(false, "second", 1)));
            assertThat(r.upserted()).isEqualTo(1);
        }
        List<String> rows = new java.util.ArrayList<>();
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> read =
                     org.apache.iceberg.data.IcebergGenerics.read(loaded()).build()) {
            read.forEach(r -> rows.add(r.getField("region") + "/" + r.getField("id") + "/" + r.getField("status")));
        }
        assertThat(rows).containsExactly("eu/7/second");
    }

    /**
     * Another writer upserts a row for {@code key} stamped as if written from {@code offset}, as Iceberg's Flink and
     * Kafka Connect upserts do: an equality delete on the key and the new row in one commit.
     */
    private void foreignUpsert(String key, String status, long offset) throws Exception {
        Table t = loaded();
        org.apache.iceberg.Schema keyOnly = t.schema().select("kafka_key");
        org.apache.iceberg.data.GenericFileWriterFactory writers = new org.apache.iceberg.data.GenericFileWriterFactory
                .Builder(t).equalityFieldIds(new int[] {t.schema().findField("kafka_key").fieldId()})
                .equalityDeleteRowSchema(keyOnly).build();
        org.apache.iceberg.deletes.EqualityDeleteWriter<org.apache.iceberg.data.Record> deletes = writers
                .newEqualityDeleteWriter(org.apache.iceberg.io.OutputFileFactory.builderFor(t, 7, 7).build()
                        .newOutputFile(), t.spec(), null);
        try (deletes) {
            GenericRecord k = GenericRecord.create(keyOnly);
            k.setField("kafka_key", key);
            deletes.write(k);
        }
        foreignAppend(key, status, offset, deletes.toDeleteFile());
    }

    /** Another writer (Spark, say) appends a row for {@code key} stamped as if written from {@code offset}. */
    private void foreignAppend(String key, String status, long offset) throws Exception {
        foreignAppend(key, status, offset, null);
    }

    private void foreignAppend(String key, String status, long offset, org.apache.iceberg.DeleteFile delete)
            throws Exception {
        Table t = loaded();
        GenericRecord r = GenericRecord.create(t.schema());
        r.setField("kafka_key", key);
        r.setField("status", status);
        r.setField("kafka_topic", TOPIC);
        r.setField("kafka_partition", 0L);
        r.setField("kafka_offset", offset);
        r.setField("kafka_timestamp", java.time.OffsetDateTime.ofInstant(T0.plusSeconds(offset), java.time.ZoneOffset.UTC));
        r.setField("kafka_log_time", java.time.OffsetDateTime.ofInstant(T0.plusSeconds(offset), java.time.ZoneOffset.UTC));
        org.apache.iceberg.io.OutputFile out = t.io().newOutputFile(t.location() + "/data/foreign-" + offset + ".parquet");
        org.apache.iceberg.io.DataWriter<org.apache.iceberg.data.Record> w = org.apache.iceberg.parquet.Parquet
                .writeData(out).schema(t.schema()).createWriterFunc(org.apache.iceberg.data.parquet.GenericParquetWriter::create)
                .withSpec(t.spec()).overwrite().build();
        try (w) {
            w.write(r);
        }
        if (delete == null) {
            t.newAppend().appendFile(w.toDataFile()).commit();
        } else {
            t.newRowDelta().addDeletes(delete).addRows(w.toDataFile()).commit();
        }
    }

    @Test
    void anotherWritersCommitBetweenReadAndCommitIsSeenNeverOverwrittenNorDuplicated() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 2L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1)));
            // the sink's view of the table is now stale: another writer commits a newer "a" and a new "c"
            foreignUpsert("a", "foreign", 500);
            foreignAppend("c", "foreign", 501);
            WriteResult r = o.write(batch(2, Map.of(0, 5L), row("a", "paid", "2", 0, 2), row("b", "paid", "2", 0, 3),
                    row("c", "paid", "2", 0, 4)));
            assertThat(r.keptOut()).containsEntry(0, 2L); // a and c: the table holds newer versions
            assertThat(rows()).containsExactly("a=foreign/null@0:500", "b=paid/2@0:3", "c=foreign/null@0:501");
            assertThat(o.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 5L);
        }
    }

    @Test
    void progressAndTheLedgerSurviveTheExpiryOfEverySnapshotKbackfillWrote() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 3L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1),
                    tombstone("b", 0, 2)));
        }
        foreignAppend("z", "foreign", 900);
        Table t = loaded();
        t.expireSnapshots().retainLast(1).expireOlderThan(System.currentTimeMillis() + 1).commit();
        assertThat(loaded().snapshots()).hasSize(1);
        assertThat(loaded().currentSnapshot().summary()).doesNotContainKey("kbackfill.job." + job);
        try (Opened o = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            assertThat(o.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 3L);
            // an older replay of the deleted key stays out: the ledger outlived its snapshot
            WriteResult r = o.write(batch(2, Map.of(0, 4L), row("b", "replayed", "9", 0, 1)));
            assertThat(r.keptOut()).containsEntry(0, 1L);
        }
        assertThat(rows()).containsExactly("a=created/1@0:0", "z=foreign/null@0:900");
    }

    @Test
    void aTableRolledBackPastABatchHoldsTheProgressOfTheSnapshotItIsAt() throws Exception {
        long first;
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 1L), row("a", "created", "1", 0, 0)));
            first = loaded().currentSnapshot().snapshotId();
            o.write(batch(2, Map.of(0, 2L), row("a", "paid", "2", 0, 1)));
        }
        loaded().manageSnapshots().rollbackTo(first).commit();
        try (Opened o = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            assertThat(o.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 1L);
        }
        assertThat(rows()).containsExactly("a=created/1@0:0");
    }

    @Test
    void aCreatedTableIsFormatTwoMergeOnReadKeyedByItsIdentifierFieldsWithProgressInTheSnapshotSummary()
            throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 2L), row("a", "created", "1", 0, 0), row("a", "paid", "2", 0, 1)));
        }
        Table t = loaded();
        assertThat(((org.apache.iceberg.HasTableOperations) t).operations().current().formatVersion()).isEqualTo(2);
        assertThat(t.schema().identifierFieldNames()).containsExactly("kafka_key");
        assertThat(t.schema().findField("kafka_key").isRequired()).isTrue();
        assertThat(t.properties()).containsEntry("write.update.mode", "merge-on-read");
        assertThat(t.currentSnapshot().summary().get("kbackfill.job." + job)).contains("\"nextOffsets\"");
    }

    @Test
    void aNumberA32BitColumnCannotHoldIsAPoisonRecordAndEvolveSchemaWidensTheColumnWithoutRewritingData()
            throws Exception {
        org.apache.iceberg.types.Types.NestedField[] fields = {
            org.apache.iceberg.types.Types.NestedField.required(1, "kafka_key", org.apache.iceberg.types.Types.StringType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(2, "qty", org.apache.iceberg.types.Types.IntegerType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(3, "ratio", org.apache.iceberg.types.Types.FloatType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(4, "kafka_topic", org.apache.iceberg.types.Types.StringType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(5, "kafka_partition", org.apache.iceberg.types.Types.LongType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(6, "kafka_offset", org.apache.iceberg.types.Types.LongType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(7, "kafka_timestamp", org.apache.iceberg.types.Types.TimestampType.withZone()),
            org.apache.iceberg.types.Types.NestedField.optional(8, "kafka_log_time", org.apache.iceberg.types.Types.TimestampType.withZone())};
        new HadoopTables(new Configuration()).create(new org.apache.iceberg.Schema(List.of(fields), java.util.Set.of(1)),
                org.apache.iceberg.PartitionSpec.unpartitioned(), Map.of("format-version", "2"), table());
        dev.kbackfill.core.record.Change fits = new dev.kbackfill.core.record.Change(Map.of("kafka_key", "a"),
                Map.of("qty", 2_147_483_647L, "ratio", new java.math.BigDecimal("0.1")), 0, 0, T0.toEpochMilli());
        dev.kbackfill.core.record.Change big = new dev.kbackfill.core.record.Change(Map.of("kafka_key", "b"),
                Map.of("qty", 3_000_000_000L, "ratio", 0.5), 0, 1, T0.toEpochMilli());
        dev.kbackfill.core.record.Change precise = new dev.kbackfill.core.record.Change(Map.of("kafka_key", "c"),
                Map.of("qty", 1L, "ratio", 3.141592653589793), 0, 2, T0.toEpochMilli());
        try (Opened o = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            o.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 1, plan()));
            o.write(batch(1, Map.of(0, 1L), fits));
            assertThatThrownBy(() -> o.write(batch(2, Map.of(0, 2L), big)))
                    .isInstanceOf(dev.kbackfill.core.sink.RecordRejectedException.class)
                    .hasMessageContaining("value 3000000000 does not fit column qty (int); a 64-bit integer column "
                            + "would hold it (--evolve-schema widens the column)");
            assertThatThrownBy(() -> o.write(batch(2, Map.of(0, 3L), precise)))
                    .isInstanceOf(dev.kbackfill.core.sink.RecordRejectedException.class)
                    .hasMessageContaining("value 3.141592653589793 does not fit column ratio (float)");
        }
        Sink evolving = SinkFactory.forSettings(new SinkSettings("iceberg:" + table(), "orders", Optional.empty(),
                Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false,
                SinkSettings.MetadataColumns.DEFAULT, Map.of(), SinkSettings.Source.NONE, Map.of()).withEvolveSchema(true));
        evolving.open();
        String firstFile;
        try (Opened o = new Opened(evolving, evolving.jobStore().lock(job))) {
            firstFile = loaded().currentSnapshot().addedDataFiles(loaded().io()).iterator().next().location();
            o.write(batch(2, Map.of(0, 3L), big, precise));
        }
        Table t = loaded();
        assertThat(t.schema().findField("qty").type()).isEqualTo(org.apache.iceberg.types.Types.LongType.get());
        assertThat(t.schema().findField("ratio").type()).isEqualTo(org.apache.iceberg.types.Types.DoubleType.get());
        Map<String, String> read = new java.util.TreeMap<>();
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> rows =
                     org.apache.iceberg.data.IcebergGenerics.read(t).build()) {
            rows.forEach(r -> read.put((String) r.getField("kafka_key"), r.getField("qty") + "/" + r.getField("ratio")));
        }
        // the row written before the change is read from its file through the wider types
        assertThat(read).containsExactly(Map.entry("a", "2147483647/" + (double) 0.1f), Map.entry("b", "3000000000/0.5"),
                Map.entry("c", "1/3.141592653589793"));
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks = t.newScan().planFiles()) {
            assertThat(tasks).extracting(task -> task.file().location()).contains(firstFile);
        }
    }

    /**
     * A table whose partition spec another engine evolves between batches (unpartitioned, then by status, then by a
     * bucket of the key instead): each batch writes its rows under the spec of the moment, and deletes a replaced row
     * beside its data file, under that file's spec; every key ends as one row, and a compaction repartitions the
     * rows under the current spec without changing them.
     */
    @Test
    void aPartitionSpecEvolvedBetweenBatchesKeepsEveryKeyOneRow() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 3L), row("a", "created", "1", 0, 0), row("b", "created", "2", 0, 1),
                    row("c", "created", "3", 0, 2)));
            loaded().updateSpec().addField("status").commit();
            o.sink.write(batch(2, Map.of(0, 6L), row("a", "paid", "1", 0, 3), row("d", "created", "4", 0, 4),
                    tombstone("c", 0, 5)));
            assertThat(rows()).containsExactly("a=paid/1@0:3", "b=created/2@0:1", "d=created/4@0:4");
            loaded().updateSpec().removeField("status").addField(org.apache.iceberg.expressions.Expressions
                    .bucket("kafka_key", 4)).commit();
            o.sink.write(batch(3, Map.of(0, 9L), row("a", "shipped", "1", 0, 6), row("d", "paid", "4", 0, 7),
                    row("e", "created", "5", 0, 8)));
            List<String> last = List.of("a=shipped/1@0:6", "b=created/2@0:1", "d=paid/4@0:7", "e=created/5@0:8");
            assertThat(rows()).containsExactlyElementsOf(last);
            java.util.Set<Integer> specs = new java.util.HashSet<>();
            try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks = loaded().newScan()
                    .planFiles()) {
                for (org.apache.iceberg.FileScanTask task : tasks) {
                    specs.add(task.spec().specId());
                    task.deletes().forEach(d -> assertThat(d.specId()).as("a delete file under its data file's spec")
                            .isEqualTo(task.file().specId()));
                }
            }
            assertThat(specs).as("files of all three specs").hasSize(3);
        }
        IcebergCompaction.compact(new SinkSettings("iceberg:" + table(), "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false, SinkSettings.MetadataColumns.DEFAULT));
        assertThat(rows()).containsExactly("a=shipped/1@0:6", "b=created/2@0:1", "d=paid/4@0:7", "e=created/5@0:8");
    }

    @Test
    void aLedgerFileRemovedByAnOrphanCleanupStopsTheNextBatchRatherThanForgetTheDeletes() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 3L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1),
                    tombstone("b", 0, 2)));
        }
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir.resolve("orders/metadata/kbackfill"))) {
            for (Path f : files.filter(java.nio.file.Files::isRegularFile).toList()) {
                java.nio.file.Files.delete(f);
            }
        }
        try (Opened o = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            assertThatThrownBy(() -> o.write(batch(2, Map.of(0, 4L), row("b", "replayed", "9", 0, 1))))
                    .isInstanceOf(SinkException.class).hasMessageContaining("tombstone ledger file")
                    .hasMessageContaining("is missing").hasMessageContaining("nothing is written");
        }
        assertThat(rows()).containsExactly("a=created/1@0:0");
    }

    /**
     * Each way a file of the table can be missing or cut short: a run's batch and verify's lookup each fail with one
     * line naming the file, what it is to the table and what is wrong, as a failure no retry mends.
     */
    @Test
    void aMissingOrCutShortFileOfTheTableIsNamedInOneLineAndNotRetried() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 2L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1)));
            o.write(batch(2, Map.of(0, 3L), row("a", "paid", "2", 0, 2)));
        }
        Path table = dir.resolve("orders");
        Path base = dir.resolve("base");
        copy(table, base);
        Table t = loaded();
        String dataFile;
        String deleteFile;
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks = t.newScan().planFiles()) {
            org.apache.iceberg.FileScanTask withDeletes = java.util.stream.StreamSupport.stream(tasks.spliterator(), false)
                    .filter(k -> !k.deletes().isEmpty()).findFirst().orElseThrow();
            dataFile = withDeletes.file().location();
            deleteFile = withDeletes.deletes().get(0).location();
        }
        String manifest = t.currentSnapshot().dataManifests(t.io()).get(0).path();
        String manifestList = t.currentSnapshot().manifestListLocation();
        String metadata = ((org.apache.iceberg.HasTableOperations) t).operations().current().metadataFileLocation();
        record Damage(String file, String role, boolean cut, String says) {
        }
        List<Damage> damages = List.of(new Damage(dataFile, "data file", false, "is missing"),
                new Damage(dataFile, "data file", true, "is cut short or corrupt"),
                new Damage(deleteFile, "delete file", false, "is missing"),
                new Damage(deleteFile, "delete file", true, "is cut short or corrupt"),
                new Damage(manifest, "manifest", false, "is missing"),
                new Damage(manifest, "manifest", true, "is cut short or corrupt"),
                new Damage(manifestList, "manifest list", false, "is missing"),
                new Damage(metadata, "metadata file", true, "is cut short or corrupt"));
        for (Damage d : damages) {
            deleteTree(table);
            copy(base, table);
            Path file = Path.of(java.net.URI.create(d.file().startsWith("file:") ? d.file() : "file://" + d.file()));
            java.nio.file.Files.deleteIfExists(file.resolveSibling("." + file.getFileName() + ".crc"));
            if (d.cut()) {
                try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(file,
                        java.nio.file.StandardOpenOption.WRITE)) {
                    c.truncate(Math.min(40, c.size() / 2));
                }
            } else {
                java.nio.file.Files.delete(file);
            }
            String expected = d.role() + " " + d.file() + " " + d.says();
            Change replayed = row("b", "replayed", "9", 0, 1);
            Sink s = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false);
            try {
                Throwable failed = org.assertj.core.api.Assertions.catchThrowable(() -> {
                    s.open();
                    try (AutoCloseable lock = s.jobStore().lock(job)) {
                        s.write(batch(3, Map.of(0, 4L), replayed));
                        s.verifier().lookup(List.of(replayed), "orders", Change::values);
                    }
                });
                assertThat(failed).as(d.toString()).isInstanceOf(dev.kbackfill.core.sink.TableDamagedException.class)
                        .hasMessageContaining("Iceberg table " + table).hasMessageContaining(expected)
                        .hasMessageNotContaining("\n");
                assertThat(dev.kbackfill.core.run.Transient.is(failed)).as(d.toString()).isFalse();
            } finally {
                s.close();
            }
            if (!d.role().equals("metadata file") && !d.role().equals("manifest list")) {
                // the table opens: verify's lookup meets the file too
                Sink v = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false);
                try {
                    v.open();
                    assertThatThrownBy(() -> v.verifier().lookup(List.of(replayed), "orders", Change::values))
                            .as(d.toString()).isInstanceOf(dev.kbackfill.core.sink.TableDamagedException.class)
                            .hasMessageContaining(expected);
                } finally {
                    v.close();
                }
            }
        }
    }

    private static void copy(Path from, Path to) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (java.nio.file.Files.isDirectory(f)) {
                    java.nio.file.Files.createDirectories(target);
                } else {
                    java.nio.file.Files.copy(f, target);
                }
            }
        }
    }

    private static void deleteTree(Path root) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(root)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(f);
            }
        }
    }

    @Test
    void aHadoopCatalogTableIsNamedByTheUrlAndHoldsTheJobsProgress() throws Exception {
        String warehouse = dir.resolve("warehouse").toString();
        Sink s = SinkFactory.forSettings(new SinkSettings("iceberg:hadoop:" + warehouse + "#sales.orders", "ignored",
                Optional.empty(), Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false,
                SinkSettings.MetadataColumns.DEFAULT, Map.of(), SinkSettings.Source.NONE, Map.of()));
        s.open();
        try (AutoCloseable lock = s.jobStore().lock(job)) {
            s.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 1, plan()));
            s.write(batch(1, Map.of(0, 2L), row("a", "created", "1", 0, 0), row("b", "paid", "2", 0, 1)));
        } finally {
            s.close();
        }
        Table t = new org.apache.iceberg.hadoop.HadoopCatalog(new Configuration(), warehouse)
                .loadTable(org.apache.iceberg.catalog.TableIdentifier.of("sales", "orders"));
        assertThat(IcebergTableRows.contractRows(t)).containsExactly("a=created/1@0:0", "b=paid/2@0:1");
        assertThat(new TableState(t).job(job).orElseThrow().nextOffsets()).containsEntry(0, 2L);
    }

    @Test
    void compactionDropsTheDeleteFilesAndPacksSmallFilesKeepingEveryRowAndTheJobsProgress() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 3L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1),
                    row("c", "created", "1", 0, 2)));
            o.write(batch(2, Map.of(0, 5L), row("a", "paid", "2", 0, 3), tombstone("b", 0, 4)));
            o.write(batch(3, Map.of(0, 6L), row("d", "created", "1", 0, 5)));
        }
        List<String> before = rows();
        Table t = loaded();
        assertThat(t.currentSnapshot().deleteManifests(t.io())).isNotEmpty();
        SinkSettings settings = new SinkSettings("iceberg:" + table(), "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false, SinkSettings.MetadataColumns.DEFAULT);
        IcebergCompaction.Result r = IcebergCompaction.compact(settings);
        assertThat(r.dataFilesRewritten()).isEqualTo(3);
        assertThat(r.deleteFilesRemoved()).isEqualTo(1);
        assertThat(r.rows()).isEqualTo(3);
        assertThat(r.filesWritten()).isEqualTo(1);
        assertThat(rows()).isEqualTo(before).containsExactly("a=paid/2@0:3", "c=created/1@0:2", "d=created/1@0:5");
        t = loaded();
        assertThat(t.currentSnapshot().operation()).isEqualTo("replace");
        long deleteFiles = 0;
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks = t.newScan().planFiles()) {
            for (org.apache.iceberg.FileScanTask task : tasks) {
                deleteFiles += task.deletes().size();
            }
        }
        assertThat(deleteFiles).isZero();
        try (Opened o = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            assertThat(o.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 6L);
            // the ledger still keeps the deleted key out
            assertThat(o.write(batch(4, Map.of(0, 7L), row("b", "replayed", "9", 0, 1))).keptOut()).containsEntry(0, 1L);
        }
        // nothing left to do: one file, no deletes
        assertThat(IcebergCompaction.compact(settings).dataFilesRewritten()).isZero();
    }

    @Test
    void aDataFileTouchedByManyBatchesCarriesOneDeleteFileScopedToIt() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 4L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1),
                    row("c", "created", "1", 0, 2), row("d", "created", "1", 0, 3)));
            o.write(batch(2, Map.of(0, 5L), row("a", "paid", "2", 0, 4)));
            o.write(batch(3, Map.of(0, 6L), tombstone("b", 0, 5)));
            o.write(batch(4, Map.of(0, 7L), row("c", "paid", "2", 0, 6)));
        }
        assertThat(rows()).containsExactly("a=paid/2@0:4", "c=paid/2@0:6", "d=created/1@0:3");
        Table t = loaded();
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks = t.newScan().planFiles()) {
            for (org.apache.iceberg.FileScanTask task : tasks) {
                assertThat(task.deletes()).as(task.file().location()).hasSizeLessThanOrEqualTo(1);
                for (org.apache.iceberg.DeleteFile d : task.deletes()) {
                    assertThat(org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(d))
                            .isEqualTo(task.file().location());
                    if (task.file().recordCount() == 4) {
                        assertThat(d.recordCount()).isEqualTo(3); // a, b and c of the first file, merged
                    }
                }
            }
        }
    }

    @Test
    void theProbeFindsTheSameRowsInIcebergsInternalValuesAsInItsGenericOnes() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 4L), row("a", "created", "1", 0, 0), row("b", "created", "1", 0, 1),
                    row("c", "created", "1", 0, 2), row("d", "created", "1", 0, 3)));
            o.write(batch(2, Map.of(0, 6L), row("a", "paid", "2", 0, 4), tombstone("d", 0, 5))); // position deletes
        }
        Table t = loaded();
        List<org.apache.iceberg.types.Types.NestedField> columns = t.schema().columns();
        int[] key = {columns.indexOf(t.schema().findField("kafka_key"))};
        int[] metadata = java.util.stream.IntStream.range(0, columns.size())
                .filter(i -> columns.get(i).name().startsWith("kafka_") && i != key[0]).toArray();
        assertThat(metadata).hasSizeGreaterThanOrEqualTo(5); // topic, partition, offset, timestamp, log time
        java.util.Set<List<Object>> keys = java.util.Set.of(List.of("a"), List.of("c"), List.of("d"), List.of("x"));
        Map<IcebergFiles.ProbeReader, List<String>> found = ColumnarProbeTest.byEachReader(t, key, metadata, keys);
        List<String> internal = found.get(IcebergFiles.ProbeReader.INTERNAL);
        List<String> generic = found.get(IcebergFiles.ProbeReader.GENERIC);
        List<String> columnar = found.get(IcebergFiles.ProbeReader.COLUMNAR);
        assertThat(internal).hasSize(2).isEqualTo(generic).isEqualTo(columnar); // a's new row and c; d was deleted
        assertThat(internal.toString()).contains("1704067204000000"); // a's timestamp as microseconds (T0 + 4 s)
    }
}
