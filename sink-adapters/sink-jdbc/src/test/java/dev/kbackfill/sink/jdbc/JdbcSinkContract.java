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
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.RecordRejectedException;
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
                    .isInstanceOfSatisfying(RecordRejectedException.class, e -> assertThat(e.change()).isEqualTo(bad))
                    .hasMessageContaining("partition 0 offset 1: table " + table + " cannot hold it")
                    .hasMessageContaining("value 'not a number' does not fit column amount")
                    .hasMessageContaining("nothing of its batch was written");
            assertThat(rows()).containsExactly("a=x/1@0:0");
            assertThat(s.load("job").orElseThrow().nextOffsets()).containsEntry(0, 1L);
            // the same batch without the refused record goes through
            s.write(batch(2, Map.of(0, 3L), fine));
            assertThat(rows()).containsExactly("a=x/1@0:0", "c=z/3@0:2");
            assertThat(s.load("job").orElseThrow().nextOffsets()).containsEntry(0, 3L);
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

    static WriteBatch batchFrom(String topic, long sequence, Map<Integer, Long> next, Change... changes) {
        List<Change> reduced = Reduction.lastPerKey(List.of(changes));
        return new WriteBatch("job", 1, sequence, reduced, RowShape.of(reduced), next, topic);
    }

    static Change rowAt(String key, String status, int partition, long offset, Instant time) {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("status", status);
        values.put("amount", null);
        return new Change(Map.of("kafka_key", key), values, partition, offset, time.toEpochMilli());
    }

    @Test
    void aReplayOlderThanADeleteNeverBringsTheKeyBack() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 3L), row("gone", "x", "1", 0, 1), row("kept", "x", "1", 0, 2)));
            // the delete of a key, and the delete of a key the table never held: both are versions
            s.write(batch(2, Map.of(0, 10L), tombstone("gone", 0, 9), tombstone("never", 0, 8)));
            assertThat(rows()).containsExactly("kept=x/1@0:2");
            // a second job replays an older range: neither deleted key comes back, and both count as kept out
            WriteResult r = s.write(batch(3, Map.of(0, 10L), row("gone", "stale", "5", 0, 4),
                    row("never", "stale", "5", 0, 3), row("kept", "y", "2", 0, 5)));
            assertThat(rows()).containsExactly("kept=y/2@0:5");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 2L));
            assertThat(r.upserted()).isEqualTo(1);
            // a record newer than the delete does bring it back
            s.write(batch(4, Map.of(0, 20L), row("gone", "again", "7", 0, 19)));
            assertThat(rows()).containsExactly("gone=again/7@0:19", "kept=y/2@0:5");
            // and readers of the table never see the ledger as rows of the table
            assertThat(rows()).noneMatch(r2 -> r2.startsWith("never"));
        }
    }

    @Test
    void rowsTheTargetKeepsOutAreCountedApartFromRowsWritten() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 51L), row("a", "new", "9", 0, 50), row("b", "new", "9", 1, 50)));
            WriteResult r = s.write(batch(2, Map.of(0, 51L), row("a", "old", "1", 0, 10), row("b", "old", "1", 0, 20),
                    row("c", "fresh", "1", 0, 30)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 2L));
            assertThat(r.upserted()).isEqualTo(1);
            assertThat(rows()).containsExactly("a=new/9@0:50", "b=new/9@1:50", "c=fresh/1@0:30");
        }
    }

    @Test
    void insertOnlyCountsExistingKeysAsKeptOut() throws Exception {
        try (Sink s = sink(ConflictMode.INSERT_ONLY, TombstoneMode.DELETE, true)) {
            begin(s);
            s.write(batch(1, Map.of(0, 2L), row("a", "first", "1", 0, 1)));
            WriteResult r = s.write(batch(2, Map.of(0, 9L), row("a", "second", "2", 0, 5), row("b", "first", "3", 0, 6)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("a=first/1@0:1", "b=first/3@0:6");
        }
    }

    @Test
    void aNewerRecordFromAnotherTopicWinsOverAnOlderOneWithAHigherOffset() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            // orders-v1 at high offsets in January, then orders-v2 starting again at offset 0 in February
            s.write(batchFrom("orders-v1", 1, Map.of(0, 1000L), rowAt("a", "v1", 0, 900, T0),
                    rowAt("b", "v1", 0, 901, T0.plusSeconds(86_400 * 40))));
            WriteResult r = s.write(batchFrom("orders-v2", 2, Map.of(0, 5L), rowAt("a", "v2", 0, 3, T0.plusSeconds(86_400 * 31)),
                    rowAt("b", "v2-older", 0, 4, T0.plusSeconds(86_400 * 31))));
            assertThat(rows()).containsExactly("a=v2/null@0:3", "b=v1/null@0:901");
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            // within orders-v2 the offset decides, whatever the timestamps
            s.write(batchFrom("orders-v2", 3, Map.of(0, 6L), rowAt("a", "v2-later", 0, 5, T0)));
            assertThat(rows()).containsExactly("a=v2-later/null@0:5", "b=v1/null@0:901");
        }
    }

    @Test
    void equalTimestampsAcrossPartitionsAreDecidedByTheFixedTieBreakWhateverTheOrder() throws Exception {
        Instant t = T0.plusSeconds(100);
        for (boolean highFirst : List.of(true, false)) {
            try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
                begin(s);
                String key = "tie" + highFirst;
                Change p0 = rowAt(key, "p0", 0, 70, t);
                Change p1 = rowAt(key, "p1", 1, 7, t);
                s.write(batch(1, Map.of(0, 71L, 1, 8L), highFirst ? p1 : p0));
                s.write(batch(2, Map.of(0, 71L, 1, 8L), highFirst ? p0 : p1));
                assertThat(rows()).contains(key + "=p1/null@1:7");
            }
        }
    }

    @Test
    void aKeyWrittenWithItsFieldsInTwoOrdersIsOneRow() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            begin(s);
            Map<String, Object> ab = new LinkedHashMap<>();
            ab.put("region", "eu");
            ab.put("id", 7L);
            Map<String, Object> ba = new LinkedHashMap<>();
            ba.put("id", 7L);
            ba.put("region", "eu");
            s.write(batch(1, Map.of(0, 1L), new Change(ab, Map.of("status", "first"), 0, 0, T0.toEpochMilli())));
            WriteResult r = s.write(batch(2, Map.of(0, 2L), new Change(ba, Map.of("status", "second"), 0, 1,
                    T0.toEpochMilli())));
            assertThat(r.upserted()).isEqualTo(1);
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT region, id, status FROM " + table)) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1) + "/" + rs.getLong(2) + "/" + rs.getString(3)).isEqualTo("eu/7/second");
                assertThat(rs.next()).isFalse();
            }
        }
    }

    @Test
    void aJobStoredForOneTableIsBoundToIt() throws Exception {
        try (Sink s = sink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            JobSpec spec = new JobSpec(Map.of(JobSpec.DESTINATION, s.destination()));
            s.begin(JobState.begin("bound", spec, 1, plan()));
            assertThat(s.load("bound").orElseThrow().spec()).isEqualTo(spec);
            assertThat(s.destination()).isEqualTo("table " + table);
        }
    }

    @Test
    void theSqlGuardAgreesWithTheVersionRule() throws Exception {
        Guard guard = new Guard(Optional.of("kafka_topic"), "kafka_partition", "kafka_offset", "kafka_timestamp");
        java.util.Random random = new java.util.Random(7);
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id INTEGER NOT NULL PRIMARY KEY, kafka_topic VARCHAR(50), "
                    + "kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp BIGINT)");
            Dialect d = new SqliteDialect(); // standard quoting
            for (int round = 0; round < 150; round++) {
                String storedTopic = random.nextInt(4) == 0 ? null : random.nextBoolean() ? "a" : "b";
                Version stored = new Version(storedTopic, random.nextInt(2), random.nextInt(3), random.nextInt(3));
                Version incoming = new Version(random.nextBoolean() ? "a" : "b", random.nextInt(2), random.nextInt(3),
                        random.nextInt(3));
                st.execute("DELETE FROM " + table);
                st.execute("INSERT INTO " + table + " VALUES (1, " + (storedTopic == null ? "NULL" : "'" + storedTopic + "'")
                        + ", " + stored.partition() + ", " + stored.offset() + ", " + stored.timestamp() + ")");
                String sql = "SELECT COUNT(*) FROM " + table + " WHERE " + guard.againstParameters(quoting(d));
                try (java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
                    int index = 1;
                    for (Guard.Parameter p : guard.parameters()) {
                        switch (p) {
                            case TOPIC -> ps.setString(index++, incoming.topic());
                            case PARTITION -> ps.setLong(index++, incoming.partition());
                            case OFFSET -> ps.setLong(index++, incoming.offset());
                            case TIMESTAMP -> ps.setLong(index++, incoming.timestamp());
                        }
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getInt(1) == 1).as(incoming + " over " + stored)
                                .isEqualTo(incoming.supersedes(stored));
                    }
                }
            }
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
            begin(s);
            WriteResult r = s.write(batch(1, Map.of(0, 52L), row("a", "new", "2", 0, 50), row("b", "new", "2", 0, 51)));
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
            assertThat(rows()).containsExactly("a=x/1@0:2", "b=new/2@0:51");
            assertThat(deletedFlag("a")).isTrue();
        }
    }

    /** A dialect for this database's quoting: MariaDB quotes with backticks. */
    Dialect quoting(Dialect standard) {
        return standard;
    }
}
