package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.NarrowNumber;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;

/**
 * The target table's schema as a job sees and changes it: the checks when the sink opens (metadata columns, primary
 * key, the topic column), the table created from the first batch with values, columns added for fields that appear
 * later and narrow number columns widened ({@link NarrowNumber}) where the job may change the table
 * ({@code --create-table}, {@code --evolve-schema}), and the version field's column.
 *
 * <p>Schema changes run in the batch's transaction where the database allows DDL there (PostgreSQL, SQLite): the
 * column appears with the rows that need it, or not at all. MariaDB and H2 commit each one on its own, before the
 * batch; a column added that way and never written is harmless (NULL in every row). Another writer of the job (a
 * Spark task) making the same change first is fine: the change is planned again from the table as it is then.
 */
final class TableSchema {

    private final SinkSettings settings;
    private final TableName tableName;
    private final Dialect baseDialect;
    private TargetTable table;
    private Dialect dialect;
    /** Fields already matched to a column (or refused), so each batch checks only new ones. */
    private final Set<String> checkedFields = new HashSet<>();
    /** Whether the open transaction holds a schema change (rolled back with it). */
    private boolean changed;

    TableSchema(SinkSettings settings, TableName tableName, Dialect dialect) {
        this.settings = settings;
        this.tableName = tableName;
        this.baseDialect = dialect;
        this.dialect = dialect;
    }

    /** The table as last read, or null before it exists. */
    TargetTable table() {
        return table;
    }

    /** The dialect for this table (H2's MERGE casts to the table's column types). */
    Dialect dialect() {
        return dialect;
    }

    /**
     * Reads the table when the sink opens and checks what the job's options need of it; returns the warnings to
     * show. A missing table is refused unless {@code --create-table}.
     */
    List<String> open(Connection c) throws SQLException {
        TargetTable t = TargetTable.read(c, tableName).orElse(null);
        if (t == null) {
            // reopened after a failure (a retry): a table created in a transaction that was lost is gone again
            table = null;
            dialect = baseDialect;
            if (!settings.createTable()) {
                throw new SinkConfigException("table " + tableName + " does not exist in "
                        + dev.kbackfill.core.sink.SinkFactory.redact(settings.url())
                        + "; create it, or pass --create-table to create it from the records");
            }
            return List.of();
        }
        use(t);
        checkMetadataColumns();
        List<String> warnings = new ArrayList<>(keyComparisons(c, settings, dialect, t));
        topicWarning().ifPresent(warnings::add);
        return warnings;
    }

    /**
     * Refuses a table whose key columns compare values other than byte for byte (distinct Kafka keys would share a
     * row, and a delete of one would remove the other's), naming the column, how it compares and the statement that
     * fixes it; with {@code --keys-distinct-in-collation} the user says the keys are distinct there, and it is a
     * warning.
     *
     * @return the warnings, where the user took that on
     */
    static List<String> keyComparisons(Connection c, SinkSettings settings, Dialect dialect, TargetTable t)
            throws SQLException {
        List<String> warnings = new ArrayList<>();
        for (String key : t.primaryKey) {
            Optional<TableColumn> column = t.column(key);
            if (column.isEmpty()) {
                continue;
            }
            Optional<Dialect.KeyComparison> k = dialect.keyComparison(c, t.name, column.get());
            if (k.isEmpty()) {
                continue;
            }
            String what = "key column " + column.get().name() + " of table " + t.name + " compares keys by "
                    + k.get().how() + ": distinct Kafka keys would be one row, and a delete of one would remove the "
                    + "other's";
            if (!settings.keysDistinctInCollation()) {
                throw new SinkConfigException(what + "; make it compare bytes (" + k.get().fix() + "), or pass "
                        + "--keys-distinct-in-collation if the keys are known to be distinct in it");
            }
            warnings.add(what + " (--keys-distinct-in-collation: taken as distinct there)");
        }
        return warnings;
    }

    private void use(TargetTable t) {
        this.table = t;
        if (baseDialect instanceof MergeDialect) {
            dialect = new MergeDialect(c -> t.column(c).map(TableColumn::castType).orElse("VARCHAR"));
        }
    }

    /**
     * The columns the modes need: a table without them is refused, naming each with the statement that adds it,
     * unless {@code --create-table} lets kbackfill add them at the first write (a table another writer keeps current
     * joins a backfill in one step).
     */
    private void checkMetadataColumns() {
        List<Column> missing = missingMetadataColumns();
        if (!missing.isEmpty() && !settings.createTable()) {
            throw new SinkConfigException("table " + tableName + " lacks the column(s) " + String.join(", ",
                    missing.stream().map(Column::name).toList()) + " that --on-conflict "
                    + settings.conflictMode().label() + " / --on-tombstone " + settings.tombstoneMode().label()
                    + (settings.versionField().isPresent() ? " / --version-field" : "") + " need; pass --create-table "
                    + "to let kbackfill add them, add them yourself (" + String.join("; ", missing.stream()
                    .map(this::addColumn).toList()) + "), or use --on-conflict overwrite");
        }
        if (table.primaryKey.isEmpty()) {
            throw new SinkConfigException("table " + tableName + " has no primary key: upserts need one on the key columns");
        }
    }

    /**
     * Rows carry their topic so that the version rule can tell two topics' offsets apart: a table created by an
     * earlier version gets the column at the first write where the user lets kbackfill shape the table
     * (--create-table); otherwise rows without it are compared as if from the incoming topic, which is right for a
     * table one topic fills, and a warning says so.
     */
    private Optional<String> topicWarning() {
        String topicColumn = settings.metadata().topic();
        if (settings.conflictMode() != ConflictMode.NEWER_WINS || table.column(topicColumn).isPresent()
                || settings.createTable()) {
            return Optional.empty(); // with --create-table the first write adds it
        }
        return Optional.of("table " + tableName + " has no " + topicColumn + " column: its rows are compared with "
                + "incoming records as if from the same topic; before writing a second topic into it, add the "
                + "column (text), or pass --create-table to let kbackfill add it");
    }

    /**
     * Brings the table to what the batch needs before its rows are written, in the connection's open transaction:
     * creates it, adds and widens columns where the job may, and refuses a key that does not match the primary key
     * or a field without a column (unless {@code --ignore-unknown-fields}).
     */
    void prepare(Connection c, WriteBatch batch) throws SQLException {
        prepare(c, batch, false);
    }

    /**
     * @param holding whether the open transaction holds batches staged before this one: a change another writer made
     *                first then fails the batch (rolling back would take the staged batches with it unseen)
     */
    void prepare(Connection c, WriteBatch batch, boolean holding) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                prepareOnce(c, batch);
                return;
            } catch (SQLException e) {
                if (holding) {
                    throw e;
                }
                // another writer of the job (a Spark task) changed the table first: see theirs and plan again,
                // whether or not a change of ours had run before the one that failed
                c.rollback();
                reread(c);
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    /** After the batch's transaction committed. */
    void committed() {
        changed = false;
    }

    /** After the batch's transaction rolled back: a schema change made in it is gone, so the table is read again. */
    void rolledBack(Connection c) throws SQLException {
        if (changed) {
            reread(c);
        }
    }

    /**
     * After a rollback to a savepoint before a batch (the batches staged before it stay): the table as the open
     * transaction sees it again, a change the batch made gone.
     */
    void rolledBackToSavepoint(Connection c) throws SQLException {
        checkedFields.clear();
        table = null;
        TargetTable.read(c, tableName).ifPresent(this::use);
    }

    /** Forgets what was known of the table and reads it as it is now (outside any transaction of ours). */
    private void reread(Connection c) throws SQLException {
        changed = false;
        checkedFields.clear();
        table = null;
        TargetTable.read(c, tableName).ifPresent(this::use);
        c.rollback();
    }

    /**
     * The metadata columns the modes need that the table lacks ({@link SinkSettings#requiredMetadataColumns}), typed
     * as kbackfill creates them (the log time as the timestamp column where that exists; the version field's column
     * at the first batch that carries the field).
     */
    private List<Column> missingMetadataColumns() {
        SinkSettings.MetadataColumns meta = settings.metadata();
        List<Column> missing = new ArrayList<>();
        for (String name : settings.requiredMetadataColumns()) {
            if (table.column(name).isPresent() || name.equals(meta.version())) {
                continue;
            }
            ColumnType type = name.equals(meta.timestamp()) || name.equals(meta.logTime()) ? ColumnType.TIMESTAMP
                    : name.equals(meta.deleted()) ? ColumnType.BOOLEAN : ColumnType.LONG;
            missing.add(new Column(name, type, true));
        }
        return missing;
    }

    private void prepareOnce(Connection c, WriteBatch batch) throws SQLException {
        SinkSettings.MetadataColumns meta = settings.metadata();
        if (table != null && settings.createTable()) {
            // a table another writer made: the columns the modes need, in the batch's transaction where DDL may be
            List<String> add = new ArrayList<>();
            for (Column m : missingMetadataColumns()) {
                if (!m.name().equals(meta.logTime()) || table.column(meta.timestamp()).isEmpty()) {
                    add.add(addColumn(m));
                }
            }
            ddl(c, add);
        }
        if (table != null && settings.createTable() && table.column(meta.topic()).isEmpty()) {
            ddl(c, List.of(addColumn(new Column(meta.topic(), ColumnType.STRING, true))));
        }
        if (table != null && settings.createTable() && table.column(meta.logTime()).isEmpty()
                && table.column(meta.timestamp()).isPresent()) {
            // of the timestamp column's type, so that a row written before it (NULL) compares by its timestamp
            ddl(c, List.of(TargetTable.addColumnLike(dialect, tableName, meta.logTime(), table.column(meta.timestamp()).get())));
        }
        if (table == null && batch.shape().keyColumns().isEmpty()) {
            return; // progress only (every record filtered out): the table is created by the first batch with rows
        }
        if (table == null) {
            ddl(c, List.of(TargetTable.create(dialect, tableName, batch.shape().keyColumns(), batch.shape().valueColumns(),
                    meta, settings.tombstoneMode() == TombstoneMode.SOFT_DELETE)));
            checkedFields.addAll(batch.shape().columns().stream().map(Column::name).toList());
        }
        checkKey(batch);
        List<String> changes = new ArrayList<>();
        List<String> added = new ArrayList<>();
        for (Column value : batch.shape().valueColumns()) {
            Optional<TableColumn> column = table.column(value.name());
            if (column.isPresent()) {
                widening(batch, value.name(), column.get()).ifPresent(changes::add);
            } else if (!checkedFields.contains(value.name())) {
                if (settings.addsColumns()) {
                    changes.add(addColumn(value));
                    added.add(value.name());
                } else if (!settings.ignoreUnknownFields()) {
                    Change first = batch.firstCarrying(value.name());
                    throw new SinkConfigException("value field '" + value.name() + "' (first at partition "
                            + first.partition() + " offset " + first.offset() + ") has no column in table " + tableName
                            + "; add the column, pass --evolve-schema to have it added, or --ignore-unknown-fields to "
                            + "skip such fields");
                } else {
                    checkedFields.add(value.name());
                }
            }
        }
        ddl(c, changes);
        ensureVersionColumn(c, batch);
    }

    private void checkKey(WriteBatch batch) {
        for (Column key : batch.shape().keyColumns()) {
            if (checkedFields.contains(key.name())) {
                continue;
            }
            boolean inKey = table.primaryKey.stream().anyMatch(k -> k.equalsIgnoreCase(key.name()));
            if (!inKey || table.primaryKey.size() != batch.shape().keyColumns().size()) {
                throw new SinkConfigException("the record key maps to column(s) " + batch.shape().keyColumns().stream()
                        .map(Column::name).toList() + " but the primary key of table " + tableName + " is "
                        + table.primaryKey + "; key by value fields with --key-fields, or name the key column with "
                        + "--key-column");
            }
            checkedFields.add(key.name());
        }
    }

    /**
     * The statement that widens a number column for a value of the batch it cannot hold (to its 64-bit type, or an
     * exact decimal: {@link NarrowNumber#widening}), where the job may change the table; without that, such a value
     * is a poison record when it is bound.
     */
    private Optional<String> widening(WriteBatch batch, String field, TableColumn column) {
        Optional<NarrowNumber> width = dialect.narrow(column);
        if (width.isEmpty() || !settings.addsColumns()) {
            return Optional.empty();
        }
        return width.get().widening(batch.changes(), field).map(to -> dialect.widen(tableName, column, to));
    }

    /**
     * A job that orders versions by a value field ({@code --version-field}) keeps each row's field in the version
     * column: added under {@code --create-table} (whole numbers, or text for a string field), else required before
     * anything is written.
     */
    private void ensureVersionColumn(Connection c, WriteBatch batch) throws SQLException {
        Optional<Column> column = versionColumn(batch);
        if (column.isEmpty() || settings.conflictMode() != ConflictMode.NEWER_WINS) {
            return;
        }
        if (table.column(column.get().name()).isEmpty()) {
            if (!settings.createTable()) {
                throw new SinkConfigException("the job orders versions by --version-field, and table " + tableName
                        + " has no column " + column.get().name() + " to keep them in: add it ("
                        + dialect.columnType(column.get().type(), false) + ", NULL allowed) or pass --create-table, "
                        + "which adds it");
            }
            ddl(c, List.of(addColumn(column.get())));
        }
    }

    /** The version field's column, typed by the values a batch carries (text, or whole numbers), if it carries any. */
    Optional<Column> versionColumn(WriteBatch batch) {
        return batch.changes().stream().filter(ch -> ch.versionField() != null).findFirst()
                .map(ch -> new Column(settings.metadata().version(), ch.versionField() instanceof String
                        ? ColumnType.STRING : ColumnType.LONG, true));
    }

    private String addColumn(Column column) {
        return TargetTable.addColumn(dialect, tableName, column);
    }

    /**
     * Runs schema changes: in the open transaction where the database allows it, else each committed on its own;
     * then reads the table again.
     */
    private void ddl(Connection c, List<String> statements) throws SQLException {
        if (statements.isEmpty()) {
            return;
        }
        try (Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
                if (dialect.transactionalDdl()) {
                    changed = true;
                } else {
                    c.commit();
                }
            }
        }
        use(TargetTable.read(c, tableName).orElseThrow(
                () -> new SQLException("table " + tableName + " was changed but cannot be read back")));
    }
}
