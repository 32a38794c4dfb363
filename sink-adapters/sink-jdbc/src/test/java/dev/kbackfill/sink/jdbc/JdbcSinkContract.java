package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

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
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Test;

/**
 * What every JDBC database must do, run against each real one by a subclass: upserts to the final state, the
 * conflict and tombstone modes, progress stored atomically with the rows, clear refusals, the job lock.
 */
abstract class JdbcSinkContract {

    private static final AtomicInteger TABLES = new AtomicInteger();
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    /** A JDBC URL of an empty database of this kind. */
    abstract String url();

    private final String table = "t" + TABLES.incrementAndGet() + "_" + getClass().getSimpleName().toLowerCase();

    Sink sink(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return sink(conflict, tombstone, create, false);
    }

    Sink sink(ConflictMode conflict, TombstoneMode tombstone, boolean create, boolean ignoreUnknown) {
        Sink s = SinkFactory.forSettings(new SinkSettings(url(), table, Optional.empty(), Optional.empty(), conflict,
                tombstone, create, ignoreUnknown, SinkSettings.MetadataColumns.DEFAULT));
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
        return new Change(Map.of("kafka_key", key), values, partition, offset, T0.plusSeconds(offset).toEpochMilli());
    }

    static Change tombstone(String key, int partition, long offset) {
        return new Change(Map.of("kafka_key", key), null, partition, offset, T0.plusSeconds(offset).toEpochMilli());
    }

    static WriteBatch batch(long sequence, Map<Integer, Long> next, Change... changes) {
        List<Change> reduced = Reduction.lastPerKey(List.of(changes));
        return new WriteBatch("job", 1, sequence, reduced, RowShape.of(reduced), next);
    }

    /** The table's rows as {@code key=status/amount@partition:offset}, by key. */
    List<String> rows() throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url()); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kafka_key, status, amount, kafka_partition, kafka_offset FROM "
                     + table + " ORDER BY kafka_key")) {
            while (rs.next()) {
                BigDecimal amount = rs.getBigDecimal(3);
                rows.add(rs.getString(1) + "=" + rs.getString(2) + "/" + (amount == null ? null
                        : amount.stripTrailingZeros().toPlainString()) + "@" + rs.getInt(4) + ":" + rs.getLong(5));
            }
        }
        return rows;
    }

    private static JobState begin(Sink s) {
        JobState state = JobState.begin("job", "fingerprint", 1, plan());
        s.begin(state);
        return state;
    }

    @Test
    void upsertsLeaveTheLastStateOfEachKeyAndStoreProgressWithIt() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 3L), row("a", "created", "1.50", 0, 0), row("b", "created", "2", 0, 1),
                    row("a", "paid", "1.50", 0, 2)));
            s.write(batch(2, Map.of(0, 5L, 1, 1L), row("b", "paid", "2", 0, 4), row("c", "created", null, 1, 0)));
            assertThat(rows()).containsExactly("a=paid/1.5@0:2", "b=paid/2@0:4", "c=created/null@1:0");
            JobState stored = s.load("job").orElseThrow();
            assertThat(stored.nextOffsets()).containsEntry(0, 5L).containsEntry(1, 1L);
            assertThat(stored.plan()).isEqualTo(plan());
            assertThat(stored.complete()).isFalse();
        }
    }

    @Test
    void replayingTheSameBatchChangesNothing() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            WriteBatch b = batch(1, Map.of(0, 2L), row("a", "x", "1", 0, 0), row("b", "y", "2", 0, 1));
            s.write(b);
            List<String> once = rows();
            s.write(b);
            assertThat(rows()).isEqualTo(once);
        }
    }

    @Test
    void newerWinsNeverRegressesARowWrittenFromALaterRecord() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 51L), row("a", "new", "9", 0, 50), row("b", "new", "9", 1, 50)));
            // an older replay: same partition, lower offset; another partition, older timestamp
            s.write(batch(2, Map.of(0, 51L), row("a", "old", "1", 0, 10), row("b", "old", "1", 0, 20)));
            assertThat(rows()).containsExactly("a=new/9@0:50", "b=new/9@1:50");
            // a newer record does replace it
            s.write(batch(3, Map.of(0, 61L), row("a", "newer", "2", 0, 60)));
            assertThat(rows()).containsExactly("a=newer/2@0:60", "b=new/9@1:50");
        }
    }

    @Test
    void overwriteLetsTheLastWriteWin() throws Exception {
        try (Sink s = sink(ConflictMode.OVERWRITE, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 51L), row("a", "new", "9", 0, 50)));
            s.write(batch(2, Map.of(0, 51L), row("a", "old", "1", 0, 10)));
            assertThat(rows()).containsExactly("a=old/1@0:10");
        }
    }

    @Test
    void insertOnlyKeepsExistingRowsAndIgnoresTombstones() throws Exception {
        try (Sink s = sink(ConflictMode.INSERT_ONLY, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 2L), row("a", "first", "1", 0, 1)));
            s.write(batch(2, Map.of(0, 9L), row("a", "second", "2", 0, 5), row("b", "first", "3", 0, 6),
                    tombstone("a", 0, 8)));
            assertThat(rows()).containsExactly("a=first/1@0:1", "b=first/3@0:6");
        }
    }

    @Test
    void deleteTombstonesRemoveTheRowButNotANewerOne() throws Exception {
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
            s.write(batch(1, Map.of(0, 21L), row("a", "x", "1", 0, 10), tombstone("a", 0, 20)));
            s.write(batch(2, Map.of(0, 21L), row("a", "stale", "5", 0, 15)));
            assertThat(rows()).containsExactly("a=null/null@0:20");
            assertThat(deletedFlag("a")).isTrue();
            s.write(batch(3, Map.of(0, 31L), row("a", "back", "6", 0, 30)));
            assertThat(rows()).containsExactly("a=back/6@0:30");
            assertThat(deletedFlag("a")).isFalse();
        }
    }

    private boolean deletedFlag(String key) throws SQLException {
        try (Connection c = DriverManager.getConnection(url()); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kafka_deleted FROM " + table + " WHERE kafka_key = '" + key + "'")) {
            assertThat(rs.next()).isTrue();
            return rs.getBoolean(1);
        }
    }

    @Test
    void aTypeMismatchWritesNothingOfTheBatchAndKeepsProgress() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Change bad = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "amount", "not a number"), 0, 1, 0);
            Change fine = row("c", "z", "3", 0, 2);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 3L), fine, bad)))
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("type mismatch writing batch 2 (partition 0 offsets 1..2)")
                    .hasMessageContaining("value 'not a number' does not fit column amount")
                    .hasMessageContaining("nothing of this batch was written");
            assertThat(rows()).containsExactly("a=x/1@0:0");
            assertThat(s.load("job").orElseThrow().nextOffsets()).containsEntry(0, 1L);
        }
    }

    @Test
    void aMissingTableIsRefusedBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false))
                .isInstanceOf(SinkConfigException.class)
                .hasMessageContaining("table " + table + " does not exist")
                .hasMessageContaining("--create-table");
    }

    @Test
    void anExistingTableIsWrittenByColumnNameAndUnknownFieldsAreRefusedOrSkipped() throws Exception {
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (kafka_key VARCHAR(100) NOT NULL PRIMARY KEY, amount DECIMAL(10,2), "
                    + "status VARCHAR(20), kafka_partition INTEGER, kafka_offset BIGINT, kafka_timestamp "
                    + timestampType() + ")");
        }
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1.25", 0, 0)));
            assertThat(rows()).containsExactly("a=x/1.25@0:0");
            Change extra = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "coupon", "FREE"), 0, 1, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), extra)))
                    .isInstanceOf(SinkConfigException.class)
                    .hasMessage("value field 'coupon' (first at partition 0 offset 1) has no column in table " + table
                            + "; add the column, or pass --ignore-unknown-fields to skip such fields");
        }
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, true)) {
            Change extra = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "coupon", "FREE"), 0, 1, 0);
            s.write(batch(2, Map.of(0, 2L), extra));
            assertThat(rows()).containsExactly("a=x/1.25@0:0", "b=y/null@0:1");
        }
    }

    /** The type of a timestamp column in this database's DDL. */
    String timestampType() {
        return "TIMESTAMP";
    }

    @Test
    void aCreatedTableGrowsAColumnForAFieldFirstSeenLater() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Change later = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "coupon", "FREE"), 0, 1, 0);
            s.write(batch(2, Map.of(0, 2L), later));
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT coupon FROM " + table + " ORDER BY kafka_key")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isNull();
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("FREE");
            }
        }
    }

    @Test
    void aSecondRunOfTheSameJobIsRefusedWhileTheFirstHoldsIt() throws Exception {
        try (Sink first = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
             Sink second = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            AutoCloseable held = first.lock("job-" + table);
            assertThatThrownBy(() -> second.lock("job-" + table))
                    .isInstanceOf(JobConflictException.class)
                    .hasMessageContaining("job 'job-" + table + "' is already running");
            try (AutoCloseable other = second.lock("another-job-" + table)) {
                assertThat(other).isNotNull();
            }
            held.close();
            second.lock("job-" + table).close();
        }
    }

    @Test
    void resetForgetsTheJobButKeepsTheRows() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            assertThat(s.reset("job")).isTrue();
            assertThat(s.load("job")).isEmpty();
            assertThat(s.reset("job")).isFalse();
            assertThat(rows()).containsExactly("a=x/1@0:0");
        }
    }
}
