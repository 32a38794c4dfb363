package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;

/**
 * The tombstone ledger of a table, {@code TABLE_kbackfill_deletes}: for every key a hard delete removed under
 * newer-wins, the version of the tombstone, so that an older replay never brings the key back. Written in the
 * batch's transaction, consulted by every newer-wins write, pruned only by {@link #forgetBefore}.
 */
final class TombstoneLedger {

    /** When kbackfill recorded a delete (epoch milliseconds): what pruning goes by, not the tombstone's own time. */
    static final String RECORDED_AT = "kbackfill_recorded_at";

    private final TableName name;
    private final SinkSettings.MetadataColumns meta;
    private final VersionColumns versions;
    private final Binder binder;
    /** The table once it exists. */
    private TargetTable table;

    TombstoneLedger(TableName target, SinkSettings.MetadataColumns meta, VersionColumns versions, Binder binder) {
        this.name = target.sibling(nameFor(target.name()));
        this.meta = meta;
        this.versions = versions;
        this.binder = binder;
    }

    /** The ledger's name: {@code TABLE_kbackfill_deletes}, shortened where identifiers are short. */
    static String nameFor(String table) {
        String name = table + "_kbackfill_deletes";
        if (name.length() <= 63) {
            return name;
        }
        return table.substring(0, 40) + "_" + Integer.toHexString(table.hashCode()) + "_kbackfill_deletes";
    }

    TableName name() {
        return name;
    }

    /** The ledger table, where it exists. */
    Optional<TargetTable> table() {
        return Optional.ofNullable(table);
    }

    /**
     * Finds the ledger, if a run (this job's, or another's writing the same table) created it; a ledger from before
     * versions carried their log time gets the column (it is kbackfill's own table). Read again before every batch
     * while it does not exist, so that a ledger another job creates meanwhile is consulted.
     */
    void read(Connection c, Dialect d) throws SQLException {
        read(c, d, true);
    }

    /**
     * @param mayCommit false while the open transaction holds staged batches: a ledger that needs columns added (in a
     *                  commit of their own) is then left unread until a batch stages nothing before it
     */
    void read(Connection c, Dialect d, boolean mayCommit) throws SQLException {
        table = TargetTable.read(c, name).orElse(null);
        if (table != null && !mayCommit && (table.column(meta.logTime()).isEmpty() || table.column(RECORDED_AT).isEmpty())) {
            table = null;
            return;
        }
        if (table != null && table.column(meta.logTime()).isEmpty()) {
            TableColumn like = table.column(meta.timestamp()).orElseThrow();
            add(c, meta.logTime(), () -> TargetTable.addColumnLike(c, d, name, meta.logTime(), like));
        }
        if (table != null && table.column(RECORDED_AT).isEmpty()) {
            addRecordedAt(c, d);
        }
    }

    /** Adds the column of {@link #RECORDED_AT}, as {@link #read} does to a ledger without it. */
    void addRecordedAt(Connection c, Dialect d) throws SQLException {
        add(c, RECORDED_AT, () -> TargetTable.addColumns(c, d, name, List.of(recordedAt())));
    }

    /**
     * Adds a column of kbackfill's own to the ledger in a commit of its own. Another writer of the table (a Spark
     * task of the same job, another job) may add it at the same moment: its statement then fails here, and the
     * column it added is the one used.
     */
    private void add(Connection c, String column, Ddl ddl) throws SQLException {
        try {
            ddl.run();
            c.commit();
        } catch (SQLException e) {
            c.rollback();
            table = TargetTable.read(c, name).orElseThrow(() -> e);
            if (table.column(column).isEmpty()) {
                throw e;
            }
            return;
        }
        table = TargetTable.read(c, name).orElseThrow();
    }

    private interface Ddl {
        void run() throws SQLException;
    }

    private static Column recordedAt() {
        return new Column(RECORDED_AT, dev.kbackfill.core.record.ColumnType.LONG, true);
    }

    /** Whether the ledger exists, as last read, without {@code column}. */
    boolean lacks(String column) {
        return table != null && table.column(column).isEmpty();
    }

    /** Adds {@code column} to the ledger where it exists and lacks it (the version field's, kbackfill's own table). */
    void ensureColumn(Connection c, Dialect d, Column column) throws SQLException {
        if (lacks(column.name())) {
            add(c, column.name(), () -> TargetTable.addColumns(c, d, name, List.of(column)));
        }
    }

    /**
     * Creates the ledger before its first entry, in a transaction of its own (some databases commit DDL implicitly).
     */
    void create(Connection c, Dialect d, List<Column> keys) throws SQLException {
        TargetTable.createLedger(c, d, name, keys, List.of(recordedAt()), meta); // one statement: never seen half made
        c.commit();
        table = TargetTable.read(c, name).orElseThrow(
                () -> new SQLException("tombstone ledger " + name + " was created but cannot be read back"));
    }

    /** Records the deleted keys' versions, in the batch's transaction, newer versions only. */
    void record(Connection c, Dialect d, WriteBatch batch, List<Change> tombstones) throws SQLException, Binder.Mismatch {
        List<String> keys = batch.shape().keyColumns().stream().map(k -> table.column(k.name()).orElseThrow().name())
                .toList();
        List<String> metaColumns = versions.present(table);
        List<String> columns = new ArrayList<>(keys);
        columns.add(table.column(RECORDED_AT).orElseThrow().name());
        columns.addAll(metaColumns);
        String sql = d.upsert(name.quoted(d), keys, columns, versions.guard(table), ConflictMode.NEWER_WINS, 1);
        long now = System.currentTimeMillis();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (Change change : tombstones) {
                int index = 1;
                for (Column k : batch.shape().keyColumns()) {
                    binder.bind(ps, index++, change.key().get(k.name()), table.column(k.name()).orElseThrow());
                }
                ps.setLong(index++, now);
                versions.bind(ps, index, change, batch, table, metaColumns, false);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** The ledger as PostgreSQL's COPY path consults it, where it exists. */
    Optional<PostgresCopy.KeepOut> keepOut(Dialect d) {
        return table().map(t -> new PostgresCopy.KeepOut(name.quoted(d), versions.guard(t)));
    }

    /**
     * Forgets the deletes recorded before {@code before} (an entry from before the recording time was kept: by its
     * tombstone's timestamp); the caller commits. Returns how many.
     */
    long forgetBefore(Connection c, Dialect d, Instant before) throws SQLException {
        TargetTable found = TargetTable.read(c, name).orElse(null);
        if (found == null) {
            return 0;
        }
        TableColumn timestamp = found.column(meta.timestamp()).orElseThrow();
        Optional<TableColumn> recorded = found.column(RECORDED_AT);
        String where = recorded.map(r -> d.quote(r.name()) + " < ? OR (" + d.quote(r.name()) + " IS NULL AND "
                + d.quote(timestamp.name()) + " < ?)").orElse(d.quote(timestamp.name()) + " < ?");
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + name.quoted(d) + " WHERE " + where)) {
            int index = 1;
            if (recorded.isPresent()) {
                ps.setLong(index++, before.toEpochMilli());
            }
            binder.bindTimestamp(ps, index, before.toEpochMilli(), timestamp);
            return ps.executeUpdate();
        }
    }
}
