package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.RecordRejectedException;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.version.Version;
import org.junit.jupiter.api.Test;

/**
 * The sink contract ({@link SinkContract}) on a JDBC database, run against each real one by a subclass, plus what
 * only tables have: existing tables matched by column name, created tables growing columns, keys of several columns,
 * the SQL guard checked against the version rule on the database itself.
 */
abstract class JdbcSinkContract extends SinkContract {

    private static final AtomicInteger TABLES = new AtomicInteger();

    /** A JDBC URL of an empty database of this kind. */
    abstract String url();

    final String table = "t" + TABLES.incrementAndGet() + "_" + getClass().getSimpleName().toLowerCase();

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return settings(conflict, tombstone, create, false);
    }

    private SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create, boolean ignoreUnknown) {
        return new SinkSettings(url(), table, Optional.empty(), Optional.empty(), conflict, tombstone, create,
                ignoreUnknown, SinkSettings.MetadataColumns.DEFAULT).withVersionField(versionField);
    }

    Sink newSink(ConflictMode conflict, TombstoneMode tombstone, boolean create, boolean ignoreUnknown) {
        return SinkFactory.forSettings(settings(conflict, tombstone, create, ignoreUnknown));
    }

    @Override
    protected Sink newForeignSink(boolean keepOurColumns) {
        SinkSettings settings = new SinkSettings(url(), table, Optional.empty(), Optional.empty(), ConflictMode.OVERWRITE,
                TombstoneMode.DELETE, false, false, FOREIGN_METADATA);
        return SinkFactory.forSettings(keepOurColumns ? settings.withMapping(new dev.kbackfill.core.record.ColumnMapping(
                List.of("status", "amount", "lsn"), Map.of(), List.of())) : settings);
    }

    /** An upsert of some columns leaves the others as they are. */
    @Override
    protected boolean keepsColumns() {
        return true;
    }

    /** The table's rows as {@code key=status/amount@partition:offset}, by key, soft-deleted ones marked. */
    @Override
    protected List<String> rows() throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url()); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM " + table + " ORDER BY kafka_key")) {
            boolean flagged = false;
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                flagged |= rs.getMetaData().getColumnName(i).equalsIgnoreCase("kafka_deleted");
            }
            while (rs.next()) {
                BigDecimal amount = rs.getBigDecimal("amount");
                rows.add(rs.getString("kafka_key") + "=" + rs.getString("status") + "/" + (amount == null ? null
                        : amount.stripTrailingZeros().toPlainString()) + "@" + rs.getInt("kafka_partition") + ":"
                        + rs.getLong("kafka_offset") + (flagged && rs.getBoolean("kafka_deleted") ? " deleted" : ""));
            }
        }
        return rows;
    }

    @Test
    void aMissingTableIsRefusedBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false).open())
                .isInstanceOf(SinkConfigException.class)
                .hasMessageContaining("table " + table + " does not exist")
                .hasMessageContaining("--create-table");
    }

    @Test
    void anExistingTableIsWrittenByColumnNameAndUnknownFieldsAreRefusedOrSkipped() throws Exception {
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (kafka_key " + textKeyType(100) + " NOT NULL PRIMARY KEY, amount DECIMAL(10,2), "
                    + "status VARCHAR(20), kafka_partition INTEGER, kafka_offset BIGINT, kafka_timestamp "
                    + timestampType() + ", kafka_log_time " + timestampType() + ")");
        }
        try (Opened s = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false)) {
            s.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 1, plan()));
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1.25", 0, 0)));
            assertThat(rows()).containsExactly("a=x/1.25@0:0");
            Change extra = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "coupon", "FREE"), 0, 1, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), extra)))
                    .isInstanceOf(SinkConfigException.class)
                    .hasMessage("value field 'coupon' (first at partition 0 offset 1) has no column in table " + table
                            + "; add the column, pass --evolve-schema to have it added, or --ignore-unknown-fields to "
                            + "skip such fields");
        }
        Sink skipping = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, true);
        skipping.open();
        try (Opened s = new Opened(skipping, skipping.jobStore().lock(job))) {
            Change extra = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "coupon", "FREE"), 0, 1, 0);
            s.write(batch(2, Map.of(0, 2L), extra));
            assertThat(rows()).containsExactly("a=x/1.25@0:0", "b=y/null@0:1");
        }
    }

    @Test
    void anExistingTableWithoutTheLogTimeColumnIsRefusedUnderNewerWinsUnlessKbackfillMayAddIt() throws Exception {
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (kafka_key " + textKeyType(100) + " NOT NULL PRIMARY KEY, status VARCHAR(20), "
                    + "kafka_partition INTEGER, kafka_offset BIGINT, kafka_timestamp " + timestampType() + ")");
        }
        try (Opened s = open(ConflictMode.OVERWRITE, TombstoneMode.DELETE, false)) {
            s.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 1, plan()));
            s.write(batch(1, Map.of(0, 6L), new Change(Map.of("kafka_key", "a"), Map.of("status", "stored"), 0, 5,
                    T0.plusSeconds(60).toEpochMilli())));
        }
        assertThatThrownBy(() -> newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false).open())
                .isInstanceOf(SinkConfigException.class)
                .hasMessageContaining("lacks the column(s) kafka_log_time")
                .hasMessageContaining("--create-table");
        try (Opened s = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            // the stored row (no log time) counts with its timestamp: an older record of another partition stays out
            WriteResult r = s.write(batch(2, Map.of(1, 1L), new Change(Map.of("kafka_key", "a"), Map.of("status", "old"),
                    1, 0, T0.toEpochMilli())));
            assertThat(r.keptOut()).containsEntry(1, 1L);
            s.write(batch(3, Map.of(1, 2L), new Change(Map.of("kafka_key", "a"), Map.of("status", "new"), 1, 1,
                    T0.plusSeconds(120).toEpochMilli())));
        }
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT status FROM " + table)) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("new");
        }
    }

    /** The type of a timestamp column in this database's DDL. */
    String timestampType() {
        return "TIMESTAMP";
    }

    @Test
    void aCreatedTableGrowsAColumnForAFieldFirstSeenLater() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            Sink s = o.sink;
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

    /**
     * Two writers of one job (Spark tasks) that opened the table before either changed it: the second one's change
     * fails because the first made it, and the second sees the column and writes its batch.
     */
    @Test
    void aColumnAnotherWriterAddedFirstIsSeenAndUsed() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            o.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            try (Sink other = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
                other.open(); // sees the table without the coupon column
                o.write(batch(2, Map.of(0, 2L), new Change(Map.of("kafka_key", "b"),
                        Map.of("status", "y", "coupon", "FREE"), 0, 1, 0)));
                other.write(batch(1, Map.of(1, 1L), new Change(Map.of("kafka_key", "c"),
                        Map.of("status", "z", "coupon", "HALF"), 1, 0, 0)));
            }
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT kafka_key, coupon FROM " + table + " ORDER BY kafka_key")) {
                List<String> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(rs.getString(1) + "=" + rs.getString(2));
                }
                assertThat(rows).containsExactly("a=null", "b=FREE", "c=HALF");
            }
        }
    }

    @Test
    void aKeyWrittenWithItsFieldsInTwoOrdersIsOneRow() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            Sink s = o.sink;
            s.write(batch(1, Map.of(0, 1L), compoundKeyed(true, "first", 0)));
            WriteResult r = s.write(batch(2, Map.of(0, 2L), compoundKeyed(false, "second", 1)));
            assertThat(r.upserted()).isEqualTo(1);
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT region, id, status FROM " + table)) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1) + "/" + rs.getLong(2) + "/" + rs.getString(3)).isEqualTo("eu/7/second");
                assertThat(rs.next()).isFalse();
            }
        }
    }

    /** Whether {@code guard}, its parameters bound to {@code incoming}, admits the one row of {@code table}. */
    private static boolean guardAdmits(Connection c, String table, Guard guard, Dialect d, Version incoming,
                                       boolean textField) throws java.sql.SQLException {
        String sql = "SELECT COUNT(*) FROM " + table + " WHERE " + guard.againstParameters(d);
        try (java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
            int index = 1;
            for (Guard.Parameter p : guard.parameters()) {
                switch (p) {
                    case TOPIC -> ps.setString(index++, incoming.topic());
                    case PARTITION -> ps.setLong(index++, incoming.partition());
                    case OFFSET -> ps.setLong(index++, incoming.offset());
                    case LOG_TIME -> ps.setLong(index++, incoming.logTime());
                    case VERSION -> bindField(ps, index++, incoming.field(), textField);
                }
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    private static void bindField(java.sql.PreparedStatement ps, int index, Comparable<?> field, boolean text)
            throws java.sql.SQLException {
        if (field == null) {
            ps.setNull(index, text ? java.sql.Types.VARCHAR : java.sql.Types.BIGINT);
        } else if (text) {
            ps.setString(index, (String) field);
        } else {
            ps.setLong(index, (Long) field);
        }
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    /**
     * The guard with a version field ({@code --version-field}) against the Java rule on random versions, with the
     * field as whole numbers and as text (compared by code units whatever the collation), NULL (none) older than
     * any value and equal to itself.
     */
    @Test
    void theSqlGuardWithAVersionFieldAgreesWithTheVersionRule() throws Exception {
        java.util.Random random = new java.util.Random(11);
        Dialect d = dialect();
        for (boolean text : new boolean[] {false, true}) {
            Guard guard = new Guard(Optional.of("kafka_topic"), "kafka_partition", "kafka_offset", "kafka_timestamp",
                    "kafka_log_time", Optional.of("kafka_version"), text);
            String name = table + (text ? "_vt" : "_vn");
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + name + " (id INTEGER NOT NULL PRIMARY KEY, kafka_topic VARCHAR(50), "
                        + "kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp BIGINT, kafka_log_time BIGINT, "
                        + "kafka_version " + (!text ? "BIGINT" : d instanceof MariaDbDialect
                        ? "VARCHAR(20) CHARACTER SET utf8mb4" : "VARCHAR(20)") + ")");
                // non-ASCII and supplementary characters too: compared by code point on every database (H2, which
                // compares UTF-16 units, agrees here: none lies in U+E000..U+FFFF)
                String[] strings = {"a", "B", "b", "ab", "\u00e9", "", "\u00e9a", "\ud83d\ude00", "\u4e2d"};
                for (int round = 0; round < 300; round++) {
                    Comparable<?> storedField = random.nextInt(4) == 0 ? null
                            : text ? strings[random.nextInt(strings.length)] : (Comparable<?>) (random.nextInt(3) - 1L);
                    Comparable<?> field = random.nextInt(4) == 0 ? null
                            : text ? strings[random.nextInt(strings.length)] : (Comparable<?>) (random.nextInt(3) - 1L);
                    Version stored = new Version("a", random.nextInt(2), random.nextInt(3), 1, 1 + random.nextInt(2),
                            storedField);
                    Version incoming = random.nextInt(6) == 0 ? stored : new Version("a", random.nextInt(2),
                            random.nextInt(3), 1, 1 + random.nextInt(2), field);
                    st.execute("DELETE FROM " + name);
                    try (java.sql.PreparedStatement insert = c.prepareStatement("INSERT INTO " + name
                            + " VALUES (1, 'a', ?, ?, 1, ?, ?)")) {
                        insert.setLong(1, stored.partition());
                        insert.setLong(2, stored.offset());
                        insert.setLong(3, stored.logTime());
                        bindField(insert, 4, storedField, text);
                        insert.executeUpdate();
                    }
                    assertThat(guardAdmits(c, name, guard, d, incoming, text)).as(incoming + " over " + stored)
                            .isEqualTo(incoming.supersedes(stored));
                }
            }
        }
    }

    /**
     * The guard's sort order (PostgreSQL's staged batches keep each key's first row by it) against the Java rule: of
     * random sets of versions of one key, with and without a version field (whole numbers, text), it puts first the
     * one that supersedes every other.
     */
    @Test
    void theGuardsNewestFirstOrderPutsFirstTheVersionTheRuleFindsNewest() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(dialect() instanceof PostgresDialect, "only PostgreSQL stages batches and sorts by it");
        java.util.Random random = new java.util.Random(13);
        Dialect d = dialect();
        String[] strings = {"a", "B", "b", "ab", "\u00e9", "", "\u00e9a", "\ud83d\ude00", "\u4e2d"};
        String[] topics = {"a", "b", "B"};
        for (int kind = 0; kind < 3; kind++) {
            boolean field = kind > 0;
            boolean text = kind == 2;
            Guard guard = new Guard(Optional.of("kafka_topic"), "kafka_partition", "kafka_offset", "kafka_timestamp",
                    "kafka_log_time", field ? Optional.of("kafka_version") : Optional.empty(), text);
            String name = table + "_order" + kind;
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + name + " (id INTEGER NOT NULL PRIMARY KEY, kafka_topic VARCHAR(50), "
                        + "kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp BIGINT, kafka_log_time BIGINT, "
                        + "kafka_version " + (text ? "VARCHAR(20)" : "BIGINT") + ")");
                for (int round = 0; round < 200; round++) {
                    st.execute("DELETE FROM " + name);
                    java.util.List<Version> versions = new java.util.ArrayList<>();
                    int n = 2 + random.nextInt(4);
                    while (versions.size() < n) {
                        Comparable<?> value = !field || random.nextInt(4) == 0 ? null
                                : text ? strings[random.nextInt(strings.length)] : (Comparable<?>) (random.nextInt(3) - 1L);
                        long ts = random.nextInt(3);
                        Version v = new Version(topics[random.nextInt(3)], random.nextInt(2), random.nextInt(3), ts,
                                ts + random.nextInt(2), value);
                        if (versions.stream().noneMatch(o -> o.topic().equals(v.topic()) && o.partition() == v.partition()
                                && o.offset() == v.offset())) {
                            versions.add(v);
                        }
                    }
                    try (java.sql.PreparedStatement insert = c.prepareStatement("INSERT INTO " + name
                            + " VALUES (?, ?, ?, ?, ?, ?, ?)")) {
                        for (int i = 0; i < n; i++) {
                            Version v = versions.get(i);
                            insert.setInt(1, i);
                            insert.setString(2, v.topic());
                            insert.setLong(3, v.partition());
                            insert.setLong(4, v.offset());
                            insert.setLong(5, v.timestamp());
                            insert.setLong(6, v.logTime());
                            bindField(insert, 7, v.field(), text);
                            insert.executeUpdate();
                        }
                    }
                    Version newest = versions.get(0);
                    for (Version v : versions) {
                        if (v.supersedes(newest)) {
                            newest = v;
                        }
                    }
                    try (ResultSet rs = st.executeQuery("SELECT id FROM " + name + " ORDER BY " + guard.newestFirst(d)
                            + " LIMIT 1")) {
                        rs.next();
                        assertThat(versions.get(rs.getInt(1))).as(versions.toString()).isEqualTo(newest);
                    }
                }
            }
        }
    }

    /**
     * Batches of one record each, all allowed to stay uncommitted: PostgreSQL commits the window before it takes the
     * 49th savepoint (a transaction of more than 64 subtransactions slows every other session), and loses nothing.
     */
    @Test
    void aWindowOfManySmallBatchesCommitsBeforeItsSavepointsOverflowTheDatabasesCache() throws Exception {
        try (Opened o = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            org.junit.jupiter.api.Assumptions.assumeTrue(o.sink.stagingRows() > 0, "only PostgreSQL's COPY path stages batches");
            List<Integer> commits = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                WriteResult r = o.sink.write(batch(i + 1, Map.of(0, i + 1L), row("k" + (i % 40), "s" + i, "1", 0, i))
                        .committing(false));
                if (!r.staged()) {
                    commits.add(i);
                }
            }
            assertThat(commits).isNotEmpty().allSatisfy(i -> assertThat(i).isLessThan(119));
            assertThat(commits.get(0)).isLessThanOrEqualTo(49);
            o.sink.write(batch(121, Map.of(0, 121L)));
            assertThat(rows()).hasSize(40).contains("k0=s80/1@0:80", "k39=s119/1@0:119");
            assertThat(o.sink.jobStore().load(job).orElseThrow().nextOffsets()).containsEntry(0, 121L);
        }
    }

    /**
     * A row of another writer (no offset: no version of kbackfill's) against the Java rule ({@link Version#replaces}):
     * kept, or replaced, as the batch says, and by the row's own column of the version field first where it holds one
     * (whole numbers in a number column, text in a text column, epoch milliseconds in a number column and, where the
     * database converts it exactly, a timestamp column), beside rows kbackfill wrote; random versions, fields and
     * policies.
     */
    @Test
    void theSqlGuardMeetsARowOfAnotherWriterAsTheRuleSays() throws Exception {
        java.util.Random random = new java.util.Random(52);
        Dialect d = dialect();
        String timestampType = d instanceof PostgresDialect ? "timestamptz" : d instanceof MariaDbDialect ? "DATETIME(6)"
                : d instanceof MergeDialect ? "TIMESTAMP WITH TIME ZONE" : null;
        List<Guard.FieldForm> forms = new ArrayList<>(List.of(Guard.FieldForm.NUMBER, Guard.FieldForm.TEXT,
                Guard.FieldForm.EPOCH_MILLIS));
        if (timestampType != null) {
            forms.add(Guard.FieldForm.TIMESTAMP);
        }
        String[] strings = {"a", "B", "b", "ab", "\u00e9", "", "\ud83d\ude00"};
        int kind = 0;
        for (Guard.FieldForm form : forms) {
            boolean text = form == Guard.FieldForm.TEXT;
            String name = table + "_fr" + kind++;
            String ownType = switch (form) {
                case NUMBER, EPOCH_MILLIS -> "BIGINT";
                case TEXT -> d instanceof MariaDbDialect ? "VARCHAR(20) CHARACTER SET utf8mb4" : "VARCHAR(20)";
                case TIMESTAMP -> timestampType;
            };
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
                if (d instanceof MariaDbDialect) {
                    st.execute("SET time_zone = '+00:00'");
                }
                st.execute("CREATE TABLE " + name + " (id INTEGER NOT NULL PRIMARY KEY, kafka_topic VARCHAR(50), "
                        + "kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp BIGINT, kafka_log_time BIGINT, "
                        + "kafka_version " + (text ? ownType : "BIGINT") + ", own " + ownType + ")");
                for (int round = 0; round < 250; round++) {
                    Version.ForeignRows rows = Version.ForeignRows.values()[random.nextInt(3)];
                    boolean byField = random.nextBoolean();
                    Guard guard = new Guard(Optional.of("kafka_topic"), "kafka_partition", "kafka_offset",
                            "kafka_timestamp", "kafka_log_time", Optional.of("kafka_version"), text)
                            .meeting(new Guard.Foreign(rows, byField ? Optional.of(new Guard.FieldColumn("own", form))
                                    : Optional.empty()));
                    // the field's value in the incoming record, and the row's own column (another writer's) or
                    // kafka_version (kbackfill's), as the rule compares them
                    long millis = 1_700_000_000_000L + random.nextInt(3);
                    Comparable<?> ownField = random.nextInt(4) == 0 ? null : text ? strings[random.nextInt(strings.length)]
                            : form == Guard.FieldForm.NUMBER ? (Comparable<?>) (random.nextInt(3) - 1L) : millis * 1000;
                    Comparable<?> incomingField = random.nextInt(5) == 0 ? null : text ? strings[random.nextInt(strings.length)]
                            : form == Guard.FieldForm.NUMBER ? (Comparable<?>) (random.nextInt(3) - 1L)
                            : (1_700_000_000_000L + random.nextInt(3)) * 1000 + random.nextInt(2) * 500;
                    boolean foreign = random.nextInt(3) != 0;
                    Version stored = new Version("a", random.nextInt(2), random.nextInt(3), 1, 1 + random.nextInt(2),
                            ownField);
                    Version incoming = new Version("a", random.nextInt(2), random.nextInt(3), 1, 1 + random.nextInt(2),
                            incomingField);
                    st.execute("DELETE FROM " + name);
                    try (java.sql.PreparedStatement insert = c.prepareStatement("INSERT INTO " + name
                            + " VALUES (1, 'a', ?, ?, 1, ?, ?, ?)")) {
                        if (foreign) {
                            insert.setNull(1, java.sql.Types.BIGINT);
                            insert.setNull(2, java.sql.Types.BIGINT);
                            insert.setNull(3, java.sql.Types.BIGINT);
                            bindField(insert, 4, null, text);
                        } else {
                            insert.setLong(1, stored.partition());
                            insert.setLong(2, stored.offset());
                            insert.setLong(3, stored.logTime());
                            bindField(insert, 4, ownField, text);
                        }
                        if (ownField == null) {
                            insert.setNull(5, text ? java.sql.Types.VARCHAR : form == Guard.FieldForm.TIMESTAMP
                                    ? java.sql.Types.TIMESTAMP : java.sql.Types.BIGINT);
                        } else if (form == Guard.FieldForm.TIMESTAMP) {
                            java.time.Instant at = java.time.Instant.ofEpochMilli((Long) ownField / 1000);
                            if (d instanceof MariaDbDialect) {
                                insert.setObject(5, java.time.LocalDateTime.ofInstant(at, java.time.ZoneOffset.UTC));
                            } else {
                                insert.setObject(5, java.time.OffsetDateTime.ofInstant(at, java.time.ZoneOffset.UTC));
                            }
                        } else if (form == Guard.FieldForm.EPOCH_MILLIS) {
                            insert.setLong(5, (Long) ownField / 1000);
                        } else {
                            bindField(insert, 5, ownField, text);
                        }
                        insert.executeUpdate();
                    }
                    dev.kbackfill.core.version.Held held = foreign
                            ? new dev.kbackfill.core.version.Held.Foreign(byField ? ownField : null)
                            : new dev.kbackfill.core.version.Held.Known(stored);
                    assertThat(guardAdmits(c, name, guard, d, incoming, text))
                            .as(form + " " + rows + (byField ? " by field" : "") + ": " + incoming + " over " + held)
                            .isEqualTo(incoming.replaces(held, rows));
                }
            }
        }
    }

    /**
     * A key column of this database that compares keys other than byte for byte (case-, accent- or trailing-space
     * insensitive), to create a table with; null where the database has none to test.
     */
    String foldingKeyType() {
        return null;
    }

    /**
     * A text key column of {@code length} characters that compares bytes, as a user makes it for an existing table
     * (MariaDB's server default collation would fold keys, and kbackfill would refuse the table).
     */
    String textKeyType(int length) {
        return "VARCHAR(" + length + ")";
    }

    /** A key column of 255 characters that compares bytes, as a table made by hand has it. */
    String boundedKeyType() {
        return "VARCHAR(255)";
    }

    /**
     * A key longer than its column holds is a poison record naming the record, the column and the lengths, not a
     * failed batch: written again without it, the batch's other records are written. SQLite, which does not enforce
     * declared lengths, takes it. A key longer than the database indexes (PostgreSQL's B-tree entry, whatever the
     * column's type) is one too.
     */
    @Test
    void aKeyLongerThanItsColumnHoldsIsAPoisonRecordAndTheRestOfItsBatchIsWritten() throws Exception {
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (kafka_key " + boundedKeyType() + " NOT NULL PRIMARY KEY, status "
                    + "VARCHAR(20), amount DECIMAL(10, 2), kafka_topic VARCHAR(100), kafka_partition BIGINT, "
                    + "kafka_offset BIGINT, kafka_timestamp " + timestampType() + ", kafka_log_time " + timestampType()
                    + ")");
        }
        boolean sqlite = dialect() instanceof SqliteDialect;
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            String longKey = "k".repeat(300);
            Change tooLong = row(longKey, "long", "1", 0, 0);
            WriteBatch b = batch(1, Map.of(0, 2L), tooLong, row("short", "ok", "1", 0, 1));
            if (sqlite) {
                s.write(b);
                assertThat(statuses()).containsEntry(longKey, "long").containsEntry("short", "ok");
                return;
            }
            assertThatThrownBy(() -> s.write(b)).isInstanceOf(RecordRejectedException.class)
                    .hasMessageContaining("is 300 characters long, and the column holds at most 255");
            assertThat(rows()).isEmpty();
            s.write(b.without(tooLong));
            assertThat(statuses()).containsOnly(Map.entry("short", "ok"));
        }
    }

    /**
     * A table whose key column folds keys together is refused when the sink opens, naming the column, how it compares
     * and the statement that fixes it; written, with a warning, where the user says the keys are distinct in it.
     */
    @Test
    void anExistingKeyColumnThatFoldsKeysTogetherIsRefusedUnlessTheUserSaysTheKeysAreDistinctInIt() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(foldingKeyType() != null, "no folding collation to test here");
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (kafka_key " + foldingKeyType() + " NOT NULL PRIMARY KEY, status "
                    + "VARCHAR(20), amount DECIMAL(10, 2), kafka_topic VARCHAR(100), kafka_partition BIGINT, "
                    + "kafka_offset BIGINT, kafka_timestamp " + timestampType() + ", kafka_log_time " + timestampType()
                    + ")");
        }
        Sink refused = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false);
        try {
            assertThatThrownBy(refused::open).isInstanceOf(SinkConfigException.class)
                    .hasMessageContaining("key column kafka_key of table " + table)
                    .hasMessageContaining("distinct Kafka keys would be one row")
                    .hasMessageContaining("--keys-distinct-in-collation");
        } finally {
            refused.close();
        }
        SinkSettings told = new SinkSettings(new dev.kbackfill.core.sink.SinkTarget(url(), table, Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false, Optional.empty(), Map.of(), Map.of(), false,
                List.of(), true), Optional.empty(), SinkSettings.MetadataColumns.DEFAULT, Map.of(),
                SinkSettings.Source.NONE, Optional.empty(), dev.kbackfill.core.record.ColumnMapping.none(), false);
        try (Sink s = SinkFactory.forSettings(told)) {
            s.open();
            assertThat(s.warnings()).anySatisfy(w -> assertThat(w).contains("--keys-distinct-in-collation"));
        }
    }

    @Test
    void theSqlGuardAgreesWithTheVersionRule() throws Exception {
        Guard guard = new Guard(Optional.of("kafka_topic"), "kafka_partition", "kafka_offset", "kafka_timestamp",
                "kafka_log_time");
        java.util.Random random = new java.util.Random(7);
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id INTEGER NOT NULL PRIMARY KEY, kafka_topic VARCHAR(50), "
                    + "kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp BIGINT, kafka_log_time BIGINT)");
            Dialect d = dialect();
            for (int round = 0; round < 400; round++) {
                // "B" and "a": topics compare exactly, in ASCII order, whatever the column's collation
                String[] topics = {"a", "b", "B"};
                String storedTopic = random.nextInt(4) == 0 ? null : topics[random.nextInt(3)];
                long storedTs = random.nextInt(3);
                // a stored row without log time (written before rows carried it) counts with its timestamp
                boolean storedLogTime = random.nextInt(4) != 0;
                long storedLt = storedLogTime ? storedTs + random.nextInt(2) : storedTs;
                Version stored = new Version(storedTopic, random.nextInt(2), random.nextInt(3), storedTs, storedLt);
                long ts = random.nextInt(3);
                Version incoming = random.nextInt(5) == 0 && storedTopic != null ? stored // the same version: kept out
                        : new Version(topics[random.nextInt(3)], random.nextInt(2), random.nextInt(3), ts,
                        ts + random.nextInt(2));
                st.execute("DELETE FROM " + table);
                st.execute("INSERT INTO " + table + " VALUES (1, " + (storedTopic == null ? "NULL" : "'" + storedTopic + "'")
                        + ", " + stored.partition() + ", " + stored.offset() + ", " + stored.timestamp() + ", "
                        + (storedLogTime ? String.valueOf(stored.logTime()) : "NULL") + ")");
                assertThat(guardAdmits(c, table, guard, d, incoming, false)).as(incoming + " over " + stored)
                        .isEqualTo(incoming.supersedes(stored));
            }
        }
    }

    @Test
    void aValueItsColumnCannotHoldIsRefusedNamingTheRecordTheTableAndTheColumn() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Change bad = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "amount", "not a number"), 0, 1, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 3L), bad)))
                    .isInstanceOf(RecordRejectedException.class)
                    .hasMessageStartingWith("partition 0 offset 1: table " + table + " cannot hold it: value 'not a "
                            + "number' does not fit column amount");
        }
    }

    /** A 32-bit floating-point column type in this database's DDL (MariaDB's REAL is a double). */
    String floatType() {
        return "REAL";
    }

    /** Whether this database has integer and float columns narrower than 64 bits (SQLite stores every number wide). */
    boolean narrowColumns() {
        return true;
    }

    private Sink evolving(boolean evolve) {
        return SinkFactory.forSettings(new SinkSettings(url(), table, Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, false, false, SinkSettings.MetadataColumns.DEFAULT)
                .withEvolveSchema(evolve));
    }

    private String qtyAndRatio(String key) throws SQLException {
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT qty, ratio FROM " + table + " WHERE kafka_key = '" + key + "'")) {
            return rs.next() ? rs.getLong(1) + "/" + rs.getDouble(2) : "none";
        }
    }

    @Test
    void aNumberANarrowColumnCannotHoldIsAPoisonRecordAndEvolveSchemaWidensTheColumnBeforeTheBatch() throws Exception {
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (kafka_key " + textKeyType(100) + " NOT NULL PRIMARY KEY, qty INTEGER NOT NULL, "
                    + "ratio " + floatType() + ", kafka_partition BIGINT, kafka_offset BIGINT, kafka_timestamp "
                    + timestampType() + ", kafka_log_time " + timestampType() + ", kafka_topic VARCHAR(100))");
        }
        Change fits = new Change(Map.of("kafka_key", "a"), Map.of("qty", 2_147_483_647L, "ratio", new BigDecimal("0.1")),
                0, 0, T0.toEpochMilli());
        Change big = new Change(Map.of("kafka_key", "b"), Map.of("qty", 3_000_000_000L, "ratio", 0.5), 0, 1,
                T0.toEpochMilli());
        Change precise = new Change(Map.of("kafka_key", "c"), Map.of("qty", 1L, "ratio", 3.141592653589793), 0, 2,
                T0.toEpochMilli());
        Sink plain = evolving(false);
        plain.open();
        try (Opened s = new Opened(plain, plain.jobStore().lock(job))) {
            s.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 1, plan()));
            s.write(batch(1, Map.of(0, 1L), fits)); // 0.1 reads back from a float column as 0.1: no widening
            if (!narrowColumns()) {
                s.write(batch(2, Map.of(0, 3L), big, precise));
                assertThat(qtyAndRatio("b")).isEqualTo("3000000000/0.5");
                assertThat(qtyAndRatio("c")).isEqualTo("1/3.141592653589793");
                return;
            }
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 2L), big)))
                    .isInstanceOf(RecordRejectedException.class)
                    .hasMessageStartingWith("partition 0 offset 1: table " + table + " cannot hold it: value 3000000000 "
                            + "does not fit column qty")
                    .hasMessageContaining("a 64-bit integer column would hold it (--evolve-schema widens the column)");
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 3L), precise)))
                    .isInstanceOf(RecordRejectedException.class)
                    .hasMessageContaining("value 3.141592653589793 does not fit column ratio")
                    .hasMessageContaining("a 64-bit floating point column would hold it");
            assertThat(qtyAndRatio("b")).isEqualTo("none");
        }
        Sink widening = evolving(true);
        widening.open();
        try (Opened s = new Opened(widening, widening.jobStore().lock(job))) {
            s.write(batch(2, Map.of(0, 3L), big, precise));
        }
        assertThat(qtyAndRatio("a")).isEqualTo("2147483647/" + (double) 0.1f);
        assertThat(qtyAndRatio("b")).isEqualTo("3000000000/0.5");
        assertThat(qtyAndRatio("c")).isEqualTo("1/3.141592653589793");
        try (Connection c = DriverManager.getConnection(url())) {
            TargetTable t = TargetTable.read(c, TableName.parse(table)).orElseThrow();
            assertThat(t.column("qty").orElseThrow().jdbcType()).isEqualTo(java.sql.Types.BIGINT);
            assertThat(t.column("qty").orElseThrow().nullable()).as("NOT NULL kept").isFalse();
            assertThat(dialect().narrow(t.column("ratio").orElseThrow())).contains(dev.kbackfill.core.sink.NarrowNumber.FLOAT64);
        }
    }

    /**
     * Whole numbers and doubles in one field: a table created from a first batch of whole numbers (and one of
     * doubles) holds a later fraction (and a whole number beyond a double's 53 bits) exactly, widened to an exact
     * decimal before the batch that carries it, as a table created from one batch of both is; without leave to
     * change the table, such a value is a poison record, never rounded.
     */
    @Test
    void aNumberItsColumnWouldRoundWidensItToAnExactDecimalOrIsRefused() throws Exception {
        Change whole = new Change(Map.of("kafka_key", "a"), Map.of("n", 9_007_199_254_740_993L, "r", 0.5), 0, 0,
                T0.toEpochMilli());
        Change fraction = new Change(Map.of("kafka_key", "b"), Map.of("n", 2.5, "r", 9_007_199_254_740_993L), 0, 1,
                T0.toEpochMilli());
        Sink created = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
        created.open();
        try (Opened s = new Opened(created, created.jobStore().lock(job))) {
            s.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 1, plan()));
            s.write(batch(1, Map.of(0, 1L), whole));
            s.write(batch(2, Map.of(0, 2L), fraction));
        }
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT kafka_key, n, r FROM " + table + " ORDER BY kafka_key")) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(rs.getString(1) + "=" + exact(rs.getString(2)) + "/" + exact(rs.getString(3)));
            }
            assertThat(rows).containsExactly("a=9007199254740993/0.5", "b=2.5/9007199254740993");
        }
        if (!narrowColumns()) {
            return; // SQLite stores each number as it is, whatever the column's declared type
        }
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("ALTER TABLE " + table + " ADD COLUMN q BIGINT");
        }
        Sink plain = evolving(false);
        plain.open();
        Change fractionAgain = new Change(Map.of("kafka_key", "c"), Map.of("q", 1.5), 0, 2, T0.toEpochMilli());
        try (Opened s = new Opened(plain, plain.jobStore().lock(job))) {
            assertThatThrownBy(() -> s.write(batch(3, Map.of(0, 3L), fractionAgain)))
                    .isInstanceOf(RecordRejectedException.class)
                    .hasMessageContaining("value 1.5 does not fit column q")
                    .hasMessageContaining("an exact decimal column would hold it (--evolve-schema widens the column)");
        }
    }

    /** A number as text, without the trailing zeros or exponent a database's decimal or double text adds. */
    private static String exact(String text) {
        return new BigDecimal(text).stripTrailingZeros().toPlainString();
    }

    @Test
    void aColumnAddedForABatchThatIsRolledBackGoesWithItWhereTheDatabaseHasTransactionalDdl() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            Change coupon = new Change(Map.of("kafka_key", "b"), Map.of("status", "y", "coupon", "FREE"), 0, 1, 0);
            Change bad = new Change(Map.of("kafka_key", "c"), Map.of("status", "z", "amount", "not a number"), 0, 2, 0);
            assertThatThrownBy(() -> s.write(batch(2, Map.of(0, 3L), coupon, bad)))
                    .isInstanceOf(RecordRejectedException.class);
            try (Connection c = DriverManager.getConnection(url())) {
                assertThat(TargetTable.read(c, TableName.parse(table)).orElseThrow().column("coupon").isPresent())
                        .as("the column of a rolled-back batch").isEqualTo(!dialect().transactionalDdl());
            }
            s.write(batch(2, Map.of(0, 3L), coupon)); // the run writes the batch again without the poison record
            try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT coupon FROM " + table + " WHERE kafka_key = 'b'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("FREE");
            }
        }
    }

    @Test
    void jobTablesOfAnEarlierVersionAreMigratedAndTheirJobsReadAsBoundToTheirTable() throws Exception {
        String text = textType();
        try (Connection c = DriverManager.getConnection(url()); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS kbackfill_jobs");
            st.execute("DROP TABLE IF EXISTS kbackfill_progress");
            st.execute("CREATE TABLE kbackfill_jobs (job VARCHAR(200) NOT NULL PRIMARY KEY, fingerprint VARCHAR(64) "
                    + "NOT NULL, run_number INTEGER NOT NULL, target_table VARCHAR(400) NOT NULL, plan " + text
                    + " NOT NULL, created_at VARCHAR(40) NOT NULL, updated_at VARCHAR(40) NOT NULL)");
            st.execute("CREATE TABLE kbackfill_progress (job VARCHAR(200) NOT NULL, partition_id INTEGER NOT NULL, "
                    + "next_offset BIGINT NOT NULL, end_offset BIGINT NOT NULL, PRIMARY KEY (job, partition_id))");
            try (java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO kbackfill_jobs VALUES (?, ?, 1, ?, ?, "
                    + "'2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')")) {
                ps.setString(1, "old");
                ps.setString(2, "0123456789abcdef");
                ps.setString(3, table);
                ps.setString(4, plan().toJson());
                ps.executeUpdate();
            }
            st.execute("INSERT INTO kbackfill_progress VALUES ('old', 0, 7, 1000)");
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
        try (Opened s = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) {
            dev.kbackfill.core.sink.JobState old = s.sink.jobStore().load("old").orElseThrow();
            assertThat(old.fingerprint()).isEqualTo("0123456789abcdef");
            assertThat(old.spec().parts()).isEqualTo(Map.of(dev.kbackfill.core.sink.JobSpec.DESTINATION, "table " + table));
            assertThat(old.nextOffsets()).containsEntry(0, 7L);
            // and a new job is stored with its spec in the migrated table
            dev.kbackfill.core.sink.JobSpec spec = new dev.kbackfill.core.sink.JobSpec(Map.of("topic", "orders"));
            s.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, spec, 1, plan()));
            assertThat(s.sink.jobStore().load(job).orElseThrow().spec()).isEqualTo(spec);
        }
    }

    /** The long text type of this database, for job tables made by hand. */
    String textType() {
        return "TEXT";
    }

    @Test
    void theSameUrlWithItsParametersInAnotherOrderIsTheSameTarget() {
        String base = url();
        if (!base.contains("?")) {
            base = base + "?a=1";
        }
        String[] parts = base.split("\\?", 2);
        String reordered = parts[0] + "?zz=1&" + parts[1];
        String ordered = parts[0] + "?" + parts[1] + "&zz=1";
        Sink a = SinkFactory.forSettings(new SinkSettings(reordered, table, Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT));
        Sink b = SinkFactory.forSettings(new SinkSettings(ordered, table, Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT));
        assertThat(a.target()).isEqualTo(b.target()).doesNotContain("secret");
    }

    /** This database's dialect, for SQL generated outside a sink. */
    abstract Dialect dialect();

    /** Whether two writers' transactions interleave here (SQLite has one writer at a time). */
    boolean concurrentWriters() {
        return true;
    }

    /**
     * Two writers of one table (Spark's tasks, a topic and its corrections): while one holds a key's older record
     * staged, uncommitted, the other makes the tombstone ledger with a newer delete of that key. The staged record
     * must not bring the key back when its window commits (it did, once, on Spark: the ledger was looked for only
     * when each batch began).
     */
    @Test
    void aLedgerAnotherWriterMakesWhileBatchesAreStagedKeepsTheOlderStagedRecordsOut() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            org.junit.jupiter.api.Assumptions.assumeTrue(s.sink.stagingRows() > 0, "only PostgreSQL's COPY path stages batches");
            s.write(batch(1, Map.of(0, 1L), row("a", "kept", "1", 0, 0))); // the table, and no ledger
            assertThat(s.write(batch(2, Map.of(0, 3L), row("x", "older", "1", 0, 1), row("y", "v", "1", 0, 2))
                    .committing(false)).staged()).isTrue();
            write(job + "-corrections", batchFrom(TOPIC, 1, Map.of(1, 51L), tombstone("x", 1, 50)));
            // a batch with a delete: the ledger, unknown to this sink, would be made, so the staged batches go first
            s.write(batch(3, Map.of(0, 5L), tombstone("a", 0, 3), row("z", "v", "1", 0, 4)));
            assertThat(rows()).containsExactly("y=v/1@0:2", "z=v/1@0:4");
        }
    }

    /**
     * The same with {@code --version-field} (three Spark tasks into one table): this writer sees the ledger before
     * its version column exists and stages records that lack the field (a version without the field is older than
     * any with one; the SPI takes them from a library caller, the command line makes them poison), while another adds
     * the column (in a commit of its own) and deletes one of those keys with the
     * field, earlier in the log. When the window commits, its guard must compare the field, not the log times, so the
     * key stays deleted (it came back once, on Spark: the window kept its first view of the ledger).
     */
    @Test
    void aLedgerSeenBeforeItsVersionColumnWasAddedStillKeepsStagedRecordsOutByTheField() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(supportsVersionField(), "the sink refuses --version-field");
        // a writer without the version field makes the table and the ledger, without the field's column
        write(job + "-plain", batch(1, Map.of(0, 2L), row("a", "kept", "1", 0, 0), tombstone("seed", 0, 1)));
        versionField = java.util.Optional.of(dev.kbackfill.core.version.VersionField.parse("lsn"));
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            org.junit.jupiter.api.Assumptions.assumeTrue(s.sink.stagingRows() > 0, "only PostgreSQL's COPY path stages batches");
            // this writer's view of the ledger lacks the version column: no record of it has asked for it yet
            s.write(batch(2, Map.of(0, 10L), row("w", "v", "1", 0, 9)));
            // staged: x and y without the field, later in the log than the delete below
            assertThat(s.write(batch(3, Map.of(0, 12L), row("x", "older", "1", 0, 10), row("y", "v", "1", 0, 11))
                    .committing(false)).staged()).isTrue();
            // another task: adds the field's column to the ledger and deletes x at field 10, earlier in the log
            write(job + "-other", batchFrom(TOPIC, 1, Map.of(1, 4L), tombstone("x", 1, 3).withVersionField(10L)));
            s.write(batch(4, Map.of(0, 13L), row("z", "v", "1", 0, 12).withVersionField(6L)));
            assertThat(rows()).containsExactly("a=kept/1@0:0", "w=v/1@0:9", "y=v/1@0:11", "z=v/1@0:12");
        }
    }

    /**
     * Two writers of one table (Spark's tasks) meet a ledger that lacks a column of kbackfill's own (made by an older
     * release, or seen between another writer's statements): both add it, and the one whose statement comes second
     * must use the column the first added, not stop the run (on Spark into MariaDB it failed a task with "Duplicate
     * column name 'kbackfill_recorded_at'").
     */
    @Test
    void aLedgerColumnAnotherWriterAddedFirstIsUsedNotAnError() throws Exception {
        SinkSettings.MetadataColumns meta = SinkSettings.MetadataColumns.DEFAULT;
        TableName target = TableName.parse(table);
        Binder binder = new Binder(dialect());
        TombstoneLedger ledger = new TombstoneLedger(target, meta, new VersionColumns(meta, binder), binder);
        try (Connection c = DriverManager.getConnection(url()); Connection other = DriverManager.getConnection(url())) {
            c.setAutoCommit(false);
            other.setAutoCommit(false);
            TargetTable.createLedger(c, dialect(), ledger.name(),
                    List.of(new Column("kafka_key", dev.kbackfill.core.record.ColumnType.STRING, false)), List.of(), meta);
            c.commit();
            ledger.read(c, dialect(), false); // as a writer with staged batches sees it: not yet usable
            assertThat(ledger.table()).isEmpty();
            c.commit(); // SQLite: one writer at a time
            // the other writer adds the column first; this one still believes it missing and adds it too
            TargetTable.addColumns(other, dialect(), ledger.name(),
                    List.of(new Column(TombstoneLedger.RECORDED_AT, dev.kbackfill.core.record.ColumnType.LONG, true)));
            other.commit();
            ledger.addRecordedAt(c, dialect());
            assertThat(ledger.table().orElseThrow().column(TombstoneLedger.RECORDED_AT)).isPresent();
            c.commit();
        }
    }

    /** One batch written by a run of {@code name} through a sink of its own (another writer of the same table). */
    private void write(String name, WriteBatch batch) throws Exception {
        Sink other = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
        try {
            other.open();
            try (AutoCloseable lock = other.jobStore().lock(name)) {
                other.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(name, "fingerprint", 1, plan()));
                other.write(new WriteBatch(name, 1, batch.sequence(), batch.changes(), batch.shape(),
                        batch.nextOffsets(), batch.topic()));
            }
        } finally {
            other.close();
        }
    }

    /**
     * Two jobs into one table (a topic and its corrections): while one deletes a key (the row removed, its version
     * in the ledger, not committed yet), the other writes an older record of that key. Once the delete commits, the
     * older record must not bring the key back, whichever way the two transactions interleave.
     */
    @Test
    void aDeleteCommittedByAnotherJobWhileABatchIsWrittenIsNeverResurrected() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(concurrentWriters());
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 3L), row("x", "v1", "1", 0, 1), tombstone("seed", 0, 2))); // the ledger exists
            olderRecordOfXWhileAnotherWriterDeletesIt(s, false);
            assertThat(rows()).noneMatch(r -> r.startsWith("x="));
        }
    }

    /**
     * The same where the key has no row to delete (its upsert then meets nothing of the delete's): another writer's
     * delete removes nothing and records its ledger entry, uncommitted, while this writer upserts an older record of
     * the key. At READ COMMITTED neither sees the other's work, and both commit: the key came back on Spark (three
     * tasks, one PostgreSQL table). Writers of a table take its writer lock before their first write of its rows, so
     * the upsert waits for the delete's commit and then sees its entry.
     */
    @Test
    void aDeleteAnotherWriterHasNotCommittedKeepsAKeyWithoutARowOut() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(dialect().writerLock().isPresent(), "a database with a writer lock");
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 3L), row("a", "v1", "1", 0, 1), tombstone("seed", 0, 2))); // the ledger exists
            assertThat(olderRecordOfXWhileAnotherWriterDeletesIt(s, true)).as("x has no row to delete").isZero();
            assertThat(rows()).containsExactly("a=v1/1@0:1");
        }
    }

    /**
     * Another writer deletes key x (its row removed, its version in the ledger) and leaves that open while this sink
     * writes an older record of x; after a while the delete commits and the write is awaited.
     *
     * @param locked whether the other writer first takes the table's writer lock, as a kbackfill writer's deletes do
     * @return how many rows the other writer's delete removed
     */
    private int olderRecordOfXWhileAnotherWriterDeletesIt(Opened s, boolean locked) throws Exception {
        java.time.Instant deletedAt = T0.plusSeconds(86_400 * 10);
        try (Connection other = DriverManager.getConnection(url())) {
            other.setAutoCommit(false);
            if (locked) {
                try (java.sql.PreparedStatement lock = other.prepareStatement(dialect().writerLock().orElseThrow())) {
                    lock.setString(1, TableName.parse(table).toString());
                    lock.execute();
                }
            }
            int removed;
            try (Statement st = other.createStatement()) {
                removed = st.executeUpdate("DELETE FROM " + table + " WHERE kafka_key = 'x'");
            }
            try (java.sql.PreparedStatement ps = other.prepareStatement("INSERT INTO " + TombstoneLedger.nameFor(table)
                    + " (kafka_key, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp, kafka_log_time) VALUES "
                    + "('x', 'corrections', 1, 50, ?, ?)")) {
                ps.setTimestamp(1, java.sql.Timestamp.from(deletedAt));
                ps.setTimestamp(2, java.sql.Timestamp.from(deletedAt));
                ps.executeUpdate();
            }
            java.util.concurrent.CompletableFuture<WriteResult> older = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> s.write(batch(2, Map.of(0, 4L), row("x", "older", "1", 0, 3))));
            Thread.sleep(1500); // the batch meets the open delete
            other.commit();
            older.get(60, java.util.concurrent.TimeUnit.SECONDS);
            return removed;
        }
    }
}
