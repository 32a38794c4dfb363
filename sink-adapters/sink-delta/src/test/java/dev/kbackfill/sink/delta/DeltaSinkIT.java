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
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Delta sink on real Delta tables in a temporary directory, read back through Kernel's scan API. */
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
        List<String> out = new ArrayList<>();
        for (Map<String, Object> r : DeltaTableRows.rows(table())) {
            BigDecimal amount = (BigDecimal) r.get("amount");
            out.add(r.get("kafka_key") + "=" + r.get("status") + "/" + (amount == null ? null
                    : amount.stripTrailingZeros().toPlainString()) + "@" + r.get("kafka_partition") + ":"
                    + r.get("kafka_offset") + (Boolean.TRUE.equals(r.get("kafka_deleted")) ? " deleted" : ""));
        }
        out.sort(null);
        return out;
    }

    private static void begin(Sink s) {
        s.begin(JobState.begin("job", "fingerprint", 1, plan()));
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
            assertThat(s.load("job")).isPresent(); // kept until the table's first commit
            s.write(batch(1, Map.of(0, 3L), row("a", "created", "1.50", 0, 0), row("b", "created", "2", 0, 1),
                    row("a", "paid", "1.50", 0, 2)));
            long version = DeltaTableRows.version(table());
            s.write(batch(2, Map.of(0, 5L, 1, 1L), row("b", "paid", "2", 0, 4), row("c", "created", null, 1, 0)));
            assertThat(DeltaTableRows.version(table())).isEqualTo(version + 1);
            assertThat(rows()).containsExactly("a=paid/1.5@0:2", "b=paid/2@0:4", "c=created/null@1:0");
            JobState stored = s.load("job").orElseThrow();
            assertThat(stored.nextOffsets()).containsEntry(0, 5L).containsEntry(1, 1L);
            assertThat(stored.plan()).isEqualTo(plan());
        }
        try (Sink reopened = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            assertThat(reopened.load("job").orElseThrow().nextOffsets()).containsEntry(0, 5L);
        }
    }

    @Test
    void copyOnWriteRewritesOnlyTheFilesHoldingTheBatchKeys() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 10L), row("a", "x", "1", 0, 0), row("b", "x", "1", 0, 1), row("c", "x", "1", 0, 2)));
            s.write(batch(2, Map.of(0, 20L), row("m", "x", "1", 0, 10), row("n", "x", "1", 0, 11)));
            assertThat(dataFiles()).isEqualTo(2);
            s.write(batch(3, Map.of(0, 30L), row("b", "y", "2", 0, 20)));
            assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:20", "c=x/1@0:2", "m=x/1@0:10", "n=x/1@0:11");
            // the file with m and n was not read into the commit: the table has its old file and one rewritten
            assertThat(DeltaTableRows.rows(table())).hasSize(5);
        }
    }

    @Test
    void newerWinsNeverRegressesAndOverwriteDoes() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 51L), row("a", "new", "9", 0, 50), row("b", "new", "9", 1, 50)));
            s.write(batch(2, Map.of(0, 51L), row("a", "old", "1", 0, 10), row("b", "old", "1", 0, 20)));
            assertThat(rows()).containsExactly("a=new/9@0:50", "b=new/9@1:50");
        }
        try (Sink s = sink(ConflictMode.OVERWRITE, TombstoneMode.DELETE, false)) {
            s.write(batch(3, Map.of(0, 51L), row("a", "old", "1", 0, 10)));
            assertThat(rows()).containsExactly("a=old/1@0:10", "b=new/9@1:50");
        }
    }

    @Test
    void insertOnlyKeepsExistingRows() throws Exception {
        try (Sink s = sink(ConflictMode.INSERT_ONLY, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 2L), row("a", "first", "1", 0, 1)));
            s.write(batch(2, Map.of(0, 9L), row("a", "second", "2", 0, 5), row("b", "first", "3", 0, 6), tombstone("a", 0, 8)));
            assertThat(rows()).containsExactly("a=first/1@0:1", "b=first/3@0:6");
        }
    }

    @Test
    void tombstonesDeleteOrSoftDelete() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 51L), row("a", "x", "1", 0, 10), row("b", "x", "1", 0, 50)));
            s.write(batch(2, Map.of(0, 51L), tombstone("a", 0, 20), tombstone("b", 0, 30)));
            assertThat(rows()).containsExactly("b=x/1@0:50");
        }
    }

    @Test
    void softDeleteKeepsTheVersionSoAnOlderReplayCannotResurrectTheKey() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.SOFT_DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 11L), row("a", "x", "1", 0, 10)));
            s.write(batch(2, Map.of(0, 21L), tombstone("a", 0, 20)));
            assertThat(rows()).containsExactly("a=x/1@0:20 deleted");
            s.write(batch(3, Map.of(0, 21L), row("a", "stale", "5", 0, 15)));
            assertThat(rows()).containsExactly("a=x/1@0:20 deleted");
            s.write(batch(4, Map.of(0, 31L), row("a", "back", "6", 0, 30)));
            assertThat(rows()).containsExactly("a=back/6@0:30");
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
            assertThat(s.load("job").orElseThrow().nextOffsets()).containsEntry(0, 6L);
            s.write(batch(4, Map.of(0, 8L), row("a", "y", "2", 0, 7)));
            assertThat(rows()).contains("a=y/2@0:7").hasSize(6);
            // copy-on-write replaced the one compacted file (it held "a"): nothing left to compact
            DeltaCompaction.Result again = DeltaCompaction.compact(table(), Optional.empty(), 1000);
            assertThat(again.filesBefore()).isEqualTo(1);
            assertThat(again.filesRewritten()).isZero();
        }
    }

    @Test
    void aFieldFirstSeenLaterIsRefusedClearly() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Map<String, Object> more = new LinkedHashMap<>();
            more.put("status", "y");
            more.put("coupon", "FREE");
            Change c = new Change(Map.of("kafka_key", "b"), more, 0, 1, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), c)))
                    .isInstanceOf(SinkConfigException.class)
                    .hasMessageContaining("value field 'coupon' (first at partition 0 offset 1) has no column")
                    .hasMessageContaining("--ignore-unknown-fields");
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
            assertThat(s.load("job").orElseThrow().nextOffsets()).containsEntry(0, 1L);
        }
    }

    @Test
    void oneWriterPerJobAndResetForgetsTheJob() throws Exception {
        try (Sink first = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
             Sink second = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            try (AutoCloseable lock = first.lock("job")) {
                assertThatThrownBy(() -> second.lock("job")).isInstanceOf(JobConflictException.class);
                begin(first);
                first.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            }
            assertThat(second.reset("job")).isTrue();
            assertThat(second.load("job")).isEmpty();
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

    @Test
    void aReplayOlderThanADeleteNeverBringsTheKeyBack() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 3L), row("gone", "x", "1", 0, 1), row("kept", "x", "1", 0, 2)));
            s.write(batch(2, Map.of(0, 10L), tombstone("gone", 0, 9), tombstone("never", 0, 8)));
            assertThat(rows()).containsExactly("kept=x/1@0:2");
            WriteResult r = s.write(batch(3, Map.of(0, 10L), row("gone", "stale", "5", 0, 4),
                    row("never", "stale", "5", 0, 3), row("kept", "y", "2", 0, 5)));
            assertThat(rows()).containsExactly("kept=y/2@0:5");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 2L));
            assertThat(r.upserted()).isEqualTo(1);
        }
        // the ledger is in the table's log: another sink (another run, another job) sees it
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            s.begin(JobState.begin("job2", "fingerprint", 1, plan()));
            WriteResult r = s.write(new WriteBatch("job2", 1, 1, List.of(row("gone", "stale", "5", 0, 4)),
                    RowShape.of(List.of(row("gone", "stale", "5", 0, 4))), Map.of(0, 5L)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("kept=y/2@0:5");
            s.write(new WriteBatch("job2", 1, 2, List.of(row("gone", "again", "7", 0, 19)),
                    RowShape.of(List.of(row("gone", "again", "7", 0, 19))), Map.of(0, 20L)));
            assertThat(rows()).containsExactly("gone=again/7@0:19", "kept=y/2@0:5");
        }
    }

    @Test
    void aNewerRecordFromAnotherTopicWinsOverAnOlderOneWithAHigherOffset() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batchFrom("orders-v1", 1, Map.of(0, 1000L), rowAt("a", "v1", 0, 900, T0),
                    rowAt("b", "v1", 0, 901, T0.plusSeconds(86_400 * 40))));
            WriteResult r = s.write(batchFrom("orders-v2", 2, Map.of(0, 5L), rowAt("a", "v2", 0, 3, T0.plusSeconds(86_400 * 31)),
                    rowAt("b", "v2-older", 0, 4, T0.plusSeconds(86_400 * 31))));
            assertThat(rows()).containsExactly("a=v2/null@0:3", "b=v1/null@0:901");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(r.upserted()).isEqualTo(1);
            assertThat(DeltaTableRows.rows(table())).extracting(m -> m.get("kafka_topic"))
                    .containsExactlyInAnyOrder("orders-v2", "orders-v1");
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

    @Test
    void insertOnlyNeverTouchesARowEvenASoftDeletedOne() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.SOFT_DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 1)));
            s.write(batch(2, Map.of(0, 3L), tombstone("a", 0, 2)));
        }
        try (Sink s = sink(ConflictMode.INSERT_ONLY, TombstoneMode.SOFT_DELETE, false)) {
            s.begin(JobState.begin("job2", "fingerprint", 1, plan()));
            WriteResult r = s.write(new WriteBatch("job2", 1, 1, List.of(row("a", "new", "2", 0, 50), row("b", "new", "2", 0, 51)),
                    RowShape.of(List.of(row("a", "new", "2", 0, 50))), Map.of(0, 52L)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("a=x/1@0:2 deleted", "b=new/2@0:51");
        }
    }
}
