package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.RecordRejectedException;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Maintenance;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.StagingWindow;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.version.Held;
import dev.kbackfill.core.version.Version;

/**
 * Writes keyed changes into one table of a JDBC database and the job's progress into {@code kbackfill_jobs} and
 * {@code kbackfill_progress} beside it, one transaction per batch.
 */
public final class JdbcSink implements Sink {

    private final SinkSettings settings;
    private final TableName tableName;
    private final Dialect baseDialect;
    private final Binder binder;
    /** The destination's one connection, shared with its job store. */
    private final SinkConnection db;
    /** The table's schema: read, checked, created and changed there. */
    private final TableSchema schema;
    /** The job state beside the table, on this sink's connection. */
    private final JdbcJobStore jobStore;
    /** The tombstone ledger beside the table (hard deletes under newer-wins). */
    private final TombstoneLedger ledger;
    private final VersionColumns versions;
    private final List<String> warnings = new ArrayList<>();
    /** PostgreSQL's COPY path, when chosen; null for batched statements. */
    private final PostgresCopy copy;
    /** Batches staged uncommitted in the open transaction, what they did so far; null when none. */
    private StagingWindow window;

    /**
     * How many changes batches may stage in one transaction on PostgreSQL's COPY path under newer-wins, so that the
     * database reduces a key's repeats across batches before upserting ({@code -Dkbackfill.pg.stagingRows}, 0 to
     * commit every batch). A million rows: a window larger than a small heap's batches, a transaction of seconds.
     */
    private static final long STAGING_ROWS = Long.getLong("kbackfill.pg.stagingRows", 1_000_000L);

    /** What the batches staged in the open transaction did, returned with the batch that commits them. */

    /**
     * The savepoints a window may take: each is a subtransaction, and a transaction of more than 64 that wrote makes
     * every other session's snapshots slower while it is open (PostgreSQL's subtransaction cache overflows), so a
     * window commits before that, however few changes it holds (batches of a few records).
     */
    private static final int MAX_SAVEPOINTS = 48;

    JdbcSink(SinkSettings settings, Dialect dialect) {
        this.settings = settings;
        this.baseDialect = dialect;
        this.tableName = TableName.parse(settings.table());
        this.schema = new TableSchema(settings, tableName, dialect);
        this.db = new SinkConnection(settings, dialect, target());
        this.jobStore = new JdbcJobStore(db, dialect, tableName, settings, target());
        this.binder = new Binder(dialect);
        this.versions = new VersionColumns(settings.metadata(), binder);
        this.ledger = new TombstoneLedger(tableName, settings.metadata(), versions, binder);
        this.copy = dialect instanceof PostgresDialect && !Boolean.getBoolean("kbackfill.pg.batched")
                ? new PostgresCopy(dialect) : null;
    }

    /** Its ledger's upkeep, on the destination's connection. */
    @Override
    public Maintenance maintenance() {
        return new LedgerUpkeep(db, ledger, dialect(), target());
    }

    /** Its jobs' state, beside its data, on the same connection: a batch's progress commits with its rows. */
    @Override
    public JobStore jobStore() {
        return jobStore;
    }

    @Override
    public String target() {
        return SinkFactory.canonical(settings.url()) + ", table " + tableName;
    }

    /**
     * Sized from the heap: a batch that spans repeats of a key writes it once, so larger batches write fewer rows,
     * as far as memory allows ({@link Sink#heapSizedBatchRows}).
     */
    @Override
    public int defaultBatchRows() {
        return Sink.heapSizedBatchRows(Runtime.getRuntime().maxMemory());
    }

    /**
     * Connects and checks the table, writing nothing: the job tables are created by the first {@link JdbcJobStore#begin}, a
     * missing SQLite file only then, so that a run refused before it begins (bad input, a stale plan) leaves no
     * trace. Job tables of an earlier version get their new columns here.
     */
    @Override
    public void open() {
        db.checkSqliteFile();
        try {
            if (db.sqliteFileMissing()) {
                if (!settings.createTable()) {
                    throw new SinkConfigException("table " + tableName + " does not exist in " + SinkFactory.redact(
                            settings.url()) + " (no such file); create it, or pass --create-table to create it from the records");
                }
                return; // connected by begin(): opening would create the file
            }
            Connection connection = db.open();
            warnings.addAll(schema.open(connection));
            if (settings.conflictMode() == ConflictMode.NEWER_WINS) {
                ledger.read(connection, dialect()); // the only mode that consults it
            }
            jobStore.openTables();
        } catch (SQLException e) {
            close();
            throw new SinkException("cannot open " + target() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Connects without touching the job tables (an earlier version's are not upgraded here). */
    @Override
    public void openForVerify() {
        db.openExisting(" does not exist: nothing to verify; check --sink");
    }

    @Override
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    /** Reads the table and its ledger back without writing; the table must exist. */
    @Override
    public dev.kbackfill.core.verify.TargetLookup verifier() {
        try {
            if (connection() == null) {
                throw new SinkConfigException("table " + tableName + " does not exist in " + SinkFactory.redact(
                        settings.url()) + " (no such file): nothing to verify");
            }
            TargetTable t = TargetTable.read(connection(), tableName).orElseThrow(() -> new SinkConfigException("table "
                    + tableName + " does not exist in " + SinkFactory.redact(settings.url()) + ": nothing to verify"));
            // a key collation that folds distinct keys together is refused here as when a run opens
            warnings.addAll(TableSchema.keyComparisons(connection(), settings, dialect(), t));
            Optional<TargetTable> deletes = TargetTable.read(connection(), ledger.name());
            connection().rollback();
            Dialect d = baseDialect instanceof MergeDialect
                    ? new MergeDialect(c -> t.column(c).map(TableColumn::castType).orElse("VARCHAR")) : dialect();
            return new JdbcTargetLookup(connection(), d, binder, tableName, t, ledger.name(), deletes, settings);
        } catch (SQLException e) {
            throw new SinkException("cannot read " + target() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean destinationExists() {
        return table() != null;
    }

    /**
     * Whether a row of the table has no offset (or the table no offset column, and a row): written by another writer
     * or before kbackfill's columns existed. One statement that stops at the first such row; on a table kbackfill
     * alone writes it reads the offset column through.
     */
    @Override
    public boolean holdsForeignRows() {
        if (settings.conflictMode() != ConflictMode.NEWER_WINS || connection() == null) {
            return false;
        }
        try {
            // opened for a run, the table as read; for verification, read now
            TargetTable t = table() != null ? table() : TargetTable.read(connection(), tableName).orElse(null);
            if (t == null) {
                return false;
            }
            Optional<TableColumn> offset = t.column(settings.metadata().offset());
            return holdsRowWithout(offset);
        } catch (SQLException e) {
            throw new SinkException("cannot read " + target() + ": " + e.getMessage(), e);
        }
    }

    private boolean holdsRowWithout(Optional<TableColumn> offset) {
        String sql = "SELECT 1 FROM " + tableName.quoted(dialect())
                + offset.map(o -> " WHERE " + dialect().quote(o.name()) + " IS NULL").orElse("");
        try (PreparedStatement ps = connection().prepareStatement(sql)) {
            ps.setMaxRows(1);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next();
            } finally {
                connection().rollback(); // a read: no transaction left open before the run's first batch
            }
        } catch (SQLException e) {
            throw new SinkException("cannot read " + target() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public long stagingRows() {
        return copy != null && settings.conflictMode() == ConflictMode.NEWER_WINS ? STAGING_ROWS : 0;
    }

    /**
     * Writes a batch in phases, its rows and its progress in one transaction: {@link #prepare} (the window, the
     * table's columns, the tombstone ledger), {@link #decide} (which changes replace what is stored), {@link #apply}
     * (upserts, deletes, the ledger), {@link #advance} (the job's progress) and {@link #commit} (or the batch stays
     * staged in the window). A failure rolls back to where the batch began: the batches staged before it stay where a
     * record the table cannot hold is refused, everything else is rolled back.
     */
    @Override
    public WriteResult write(WriteBatch batch) {
        began = Staged.NONE;
        try {
            prepare(batch);
            Decided decided = decide(batch);
            Applied applied = apply(batch, decided);
            advance(batch);
            StagingWindow w = window == null ? new StagingWindow(stagingRows()) : window;
            w.add(applied.upserted(), applied.deleted(), applied.ignored(), decided.keptOut(), applied.superseded());
            window = w;
            return commit(batch, w, applied.deleted());
        } catch (RecordRejectedException e) {
            if (began.savepoint() != null && rollbackTo(began.savepoint(), began.snapshot())) {
                throw e; // the batch is written again without the record: what was staged before it stays
            }
            rollback();
            throw e;
        } catch (Binder.Mismatch e) {
            rollback();
            throw new SinkException("type mismatch writing " + coordinates(batch) + " into table " + tableName + ": "
                    + e.getMessage() + "; nothing of this batch" + began.andBefore() + " was written", e);
        } catch (SQLException e) {
            rollback();
            throw new SinkException("writing " + coordinates(batch) + " into " + target() + " failed: "
                    + e.getMessage() + " (SQL state " + e.getSQLState() + "); nothing of this batch"
                    + began.andBefore() + " was written", e);
        } catch (RuntimeException e) {
            rollback();
            throw e;
        }
    }

    /**
     * Where the batch being written began, in a transaction that holds staged batches: a savepoint and what the COPY
     * path held then; none where the batch began a transaction (or the staged batches were committed before it).
     */
    private Staged began = Staged.NONE;

    /** A place in the open transaction to roll back to: a savepoint and what the COPY path held there. */
    private record Staged(java.sql.Savepoint savepoint, PostgresCopy.Snapshot snapshot) {
        static final Staged NONE = new Staged(null, null);

        String andBefore() {
            return savepoint == null ? "" : " or of the batches staged before it";
        }
    }

    /**
     * The transaction the batch is written in: the window's staged batches committed first where the batch needs a
     * commit of its own before its rows, else a savepoint where it joins them; the table's columns and the tombstone
     * ledger as the batch needs them.
     */
    private void prepare(WriteBatch batch) throws SQLException, Binder.Mismatch {
        if (window != null && mayCommitBefore(batch)) {
            commitWindowEarly();
        } else if (window != null) {
            // a record of this batch the table cannot hold rolls back to here: the batches staged before it stay
            began = new Staged(connection().setSavepoint(), copy.snapshot());
            window.savepoint();
        }
        schema.prepare(connection(), batch, began.savepoint() != null);
        checkKeyLengths(batch);
        if (ledger.table().isEmpty() && settings.conflictMode() == ConflictMode.NEWER_WINS) {
            // another job writing this table may have created it since (one of an earlier version, that needs
            // its columns added in a commit of their own, waits for a batch that stages nothing before it)
            ledger.read(connection(), dialect(), began.savepoint() == null);
            if (began.savepoint() != null && mayCommitBefore(batch)) {
                commitWindowEarly(); // a ledger another job made meanwhile, without this job's version column
                began = Staged.NONE;
            }
        }
        ensureLedger(batch);
        ensureLedgerVersionColumn(batch);
    }

    /** The batch's upserts and deletes that replace what is stored, and per partition those kept out. */
    private record Decided(List<Change> upserts, List<Change> tombstones, Map<Integer, Long> keptOut) {
    }

    /**
     * Which of the batch's changes replace what the table holds (the version rule, in the database's own statements
     * where it can): PostgreSQL's COPY path decides its staged upserts at the flush instead, in one statement.
     */
    private Decided decide(WriteBatch batch) throws SQLException, Binder.Mismatch {
        List<Change> upserts = new ArrayList<>();
        List<Change> tombstones = new ArrayList<>();
        for (Change c : batch.changes()) {
            (c.isTombstone() ? tombstones : upserts).add(c);
        }
        Map<Integer, Long> keptOut = new java.util.TreeMap<>();
        if (!tombstones.isEmpty() || (copy == null && !upserts.isEmpty())) {
            // before deciding against what is stored: the COPY path writes its upserts at the flush, which locks
            lockWriters();
        }
        if (copy == null) {
            upserts = decide(batch, upserts, keptOut);
        }
        tombstones = decide(batch, tombstones, keptOut);
        return new Decided(upserts, tombstones, keptOut);
    }

    /** What applying a batch did: rows upserted, deleted, ignored, and per partition those superseded. */
    private record Applied(long upserted, long deleted, long ignored, Map<Integer, Long> superseded) {
    }

    /** Upserts the decided rows and applies the tombstones as the mode says, recording deletes in the ledger. */
    private Applied apply(WriteBatch batch, Decided decided) throws SQLException, Binder.Mismatch {
        Map<Integer, Long> superseded = new java.util.TreeMap<>();
        long upserted = decided.upserts().size() - writeUpserts(batch, decided.upserts(), decided.keptOut(),
                superseded);
        List<Change> tombstones = decided.tombstones();
        if (tombstones.isEmpty()) {
            return new Applied(upserted, 0, 0, superseded);
        }
        if (settings.conflictMode() == ConflictMode.INSERT_ONLY || settings.tombstoneMode() == TombstoneMode.IGNORE) {
            return new Applied(upserted, 0, tombstones.size(), superseded);
        }
        if (settings.tombstoneMode() == TombstoneMode.SOFT_DELETE) {
            writeSoftDeletes(batch, tombstones);
        } else {
            writeDeletes(batch, tombstones);
            if (ledger.table().isPresent() && settings.conflictMode() == ConflictMode.NEWER_WINS) {
                ledger.record(connection(), dialect(), batch, tombstones);
            }
        }
        return new Applied(upserted, tombstones.size(), 0, superseded);
    }

    /** The job's progress, in the batch's transaction. */
    private void advance(WriteBatch batch) throws SQLException {
        jobStore.advance(connection(), batch.job(), batch.run(), batch.nextOffsets());
    }

    /**
     * Commits the window with the batch, or leaves the batch staged where the window stays open; a batch that
     * deleted holds the table's writer lock ({@link #lockWriters}) and commits, not to keep other writers waiting for
     * the rest of the window.
     */
    private WriteResult commit(WriteBatch batch, StagingWindow w, long deleted) throws SQLException, Binder.Mismatch {
        if (w.staysOpenAfter(batch, copy != null && copy.holdsRows(), MAX_SAVEPOINTS, deleted)) {
            return WriteResult.STAGED; // committed, or rolled back, with a later batch
        }
        flushWindow();
        // the rows are written and locked (or the database's writer lock held): what the live writer applied
        // before now is in the log already, and what it applies after waits for this commit
        batch.recheckBeforeCommit();
        connection().commit();
        schema.committed();
        window = null;
        return w.result();
    }

    /**
     * Whether writing the batch may commit on its own before its rows (the tombstone ledger created, a column added
     * to it): staged rows would be lost by that commit, so they are upserted first.
     */
    private boolean mayCommitBefore(WriteBatch batch) {
        if (settings.conflictMode() != ConflictMode.NEWER_WINS) {
            return false;
        }
        Optional<Column> version = schema.versionColumn(batch);
        if (version.isPresent() && ledger.lacks(version.get().name())) {
            return true; // ensureLedgerVersionColumn
        }
        return ledger.table().isEmpty() && settings.tombstoneMode() == TombstoneMode.DELETE
                && batch.changes().stream().anyMatch(Change::isTombstone); // ensureLedger
    }

    /**
     * The tombstone ledger, or a column of it, is made in a transaction of its own: the staged batches are upserted
     * and committed with their progress first (the result of the batch being written still counts them).
     */
    private void commitWindowEarly() throws SQLException {
        flushWindow();
        connection().commit();
        schema.committed();
        window.committedEarly();
    }

    /** Upserts what the open transaction staged, its counts into the window's. */
    private void flushWindow() throws SQLException {
        if (copy != null && window != null) {
            if (copy.holdsRows()) {
                lockWriters();
            }
            window.unstaged(copy.flush(connection(), this::currentKeepOut, window.keptOut(), window.superseded()));
        }
    }

    /**
     * Concurrent writers of one table (Spark's tasks, a topic and its corrections) must each see the other's deletes.
     * At READ COMMITTED neither sees the other's uncommitted work: a delete that finds no row to remove (the other's
     * insert of the key not committed yet) and an upsert whose checks of the tombstone ledger ran before the delete
     * committed both commit, and the deleted key is back (seen on Spark: three tasks, one PostgreSQL table). On
     * PostgreSQL each transaction therefore takes the table's writer lock (a transaction-scoped advisory lock) before
     * its first write of the target's rows under newer-wins with deletes, and holds it to its commit: the later
     * writer's statements see the earlier one's commit. Taken before any row lock of the transaction, so two writers
     * never wait for each other both ways; taking it again in the same transaction is free.
     */
    private void lockWriters() throws SQLException {
        Optional<String> lock = dialect().writerLock();
        if (lock.isEmpty() || settings.conflictMode() != ConflictMode.NEWER_WINS
                || settings.tombstoneMode() != TombstoneMode.DELETE) {
            return;
        }
        try (PreparedStatement ps = connection().prepareStatement(lock.get())) {
            ps.setString(1, tableName.toString());
            ps.execute();
        }
    }

    /**
     * Rolls back to the savepoint before a batch, keeping what was staged before it.
     *
     * @return false where that failed (the whole transaction is then rolled back)
     */
    private boolean rollbackTo(java.sql.Savepoint savepoint, PostgresCopy.Snapshot staged) {
        try {
            connection().rollback(savepoint);
            copy.rolledBack(staged);
            schema.rolledBackToSavepoint(connection());
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * A key longer than its column holds, or than the database can index together (PostgreSQL's B-tree entry), is a
     * poison record, refused for the one record that carries it rather than failing its batch with the database's
     * error.
     */
    private void checkKeyLengths(WriteBatch batch) {
        if (table() == null) {
            return;
        }
        java.util.OptionalInt max = dialect().maxKeyBytes();
        List<Column> keyFields = batch.shape().keyColumns();
        List<TableColumn> keyColumns = keyFields.stream().map(k -> table().column(k.name()).orElseThrow()).toList();
        for (Change c : batch.changes()) {
            for (int i = 0; i < keyFields.size(); i++) {
                try {
                    binder.checkKey(c.key().get(keyFields.get(i).name()), keyColumns.get(i), settings.typedKeys());
                } catch (Binder.Mismatch e) {
                    throw refused(c, e);
                }
            }
            if (max.isEmpty()) {
                continue;
            }
            int bytes = 0;
            for (Object v : c.key().values()) {
                bytes += v instanceof byte[] b ? b.length : v == null ? 0
                        : String.valueOf(v).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            }
            if (bytes > max.getAsInt()) {
                throw refused(c, new Binder.Mismatch("its key is " + bytes + " bytes long, and " + dialect().name()
                        + " indexes keys of at most " + max.getAsInt() + " bytes"));
            }
        }
    }

    /** A change whose value the table cannot hold: a poison record, named, nothing of its batch written. */
    private RecordRejectedException refused(Change c, Binder.Mismatch e) {
        return new RecordRejectedException(c, "table " + tableName + " cannot hold it: " + e.getMessage()
                + (e instanceof Binder.TooNarrow && !settings.addsColumns() ? " (--evolve-schema widens the column)" : "")
                + "; nothing of its batch was written", e);
    }

    /**
     * The changes the target takes, by the one version rule: under newer-wins those that replace what the table holds
     * for their key and are newer than its tombstone ledger's entry ({@link Version#replaces}: a row of another writer
     * as the batch says, by its own column of the version field first), under insert-only those whose key has no row;
     * the others are counted per partition in {@code keptOut}. The statements' SQL guard enforces the same rule again.
     */
    private List<Change> decide(WriteBatch batch, List<Change> changes, Map<Integer, Long> keptOut)
            throws SQLException, Binder.Mismatch {
        ConflictMode mode = settings.conflictMode();
        if (mode == ConflictMode.OVERWRITE || changes.isEmpty()) {
            return changes;
        }
        Optional<Guard.FieldColumn> field = mode == ConflictMode.NEWER_WINS
                ? VersionColumns.fieldColumn(table(), settings.versionField(), settings.mapping(), dialect()) : Optional.empty();
        Map<KeyIdentity, StoredVersions.Stored> rows = stored(table(), tableName, batch, changes, true, field);
        Map<KeyIdentity, StoredVersions.Stored> deletes = mode == ConflictMode.NEWER_WINS && ledger.table().isPresent()
                ? stored(ledger.table().get(), ledger.name(), batch, changes, false, Optional.empty()) : Map.of();
        if (rows.isEmpty() && deletes.isEmpty()) {
            return changes;
        }
        List<Change> taken = new ArrayList<>(changes.size());
        for (Change c : changes) {
            KeyIdentity key = KeyIdentity.of(c.key());
            StoredVersions.Stored row = rows.get(key);
            boolean keep;
            if (mode == ConflictMode.NEWER_WINS) {
                Version incoming = batch.version(c);
                StoredVersions.Stored deleted = deletes.get(key);
                keep = incoming.replaces(held(row, field), batch.foreignRows())
                        && incoming.replaces(held(deleted, Optional.empty()), batch.foreignRows());
            } else {
                // insert-only: only keys the table has no row for (a soft-deleted row is a row: it is never touched)
                keep = row == null || c.isTombstone();
            }
            if (keep) {
                taken.add(c);
            } else {
                keptOut.merge(c.partition(), 1L, Long::sum);
            }
        }
        return taken;
    }

    /**
     * What a stored row (or ledger entry) is to the version rule: nothing, a version kbackfill wrote, or a row of
     * another writer with its own value of the version field, where {@code field} is the column that holds it.
     */
    private Held held(StoredVersions.Stored stored, Optional<Guard.FieldColumn> field) {
        if (stored == null) {
            return Held.NOTHING;
        }
        if (stored.version() != null) {
            return new Held.Known(stored.version());
        }
        Comparable<?> own = null;
        if (field.isPresent() && settings.versionField().isPresent()) {
            Object v = stored.values().get(field.get().column());
            if (v != null) {
                try {
                    own = settings.versionField().get().valueOf(Map.of(settings.versionField().get().path(), v));
                } catch (IllegalArgumentException | ArithmeticException e) {
                    own = null; // a value the SQL guard compares as it is; the statement decides
                }
            }
        }
        return new Held.Foreign(own);
    }

    private Map<KeyIdentity, StoredVersions.Stored> stored(TargetTable t, TableName name, WriteBatch batch,
                                                          List<Change> changes, boolean liveRows,
                                                          Optional<Guard.FieldColumn> field)
            throws SQLException, Binder.Mismatch {
        SinkSettings.MetadataColumns meta = settings.metadata();
        java.util.LinkedHashMap<String, TableColumn> keys = new java.util.LinkedHashMap<>();
        for (Column k : batch.shape().keyColumns()) {
            keys.put(k.name(), t.column(k.name()).orElseThrow());
        }
        Optional<TableColumn> partition = t.column(meta.partition());
        Optional<TableColumn> offset = t.column(meta.offset());
        Optional<TableColumn> timestamp = t.column(meta.timestamp());
        if (partition.isEmpty() || offset.isEmpty() || timestamp.isEmpty()) {
            return new java.util.HashMap<>(); // overwrite-only table: no versions to compare
        }
        java.util.LinkedHashMap<String, TableColumn> values = new java.util.LinkedHashMap<>();
        field.ifPresent(f -> values.put(f.column(), t.column(f.column()).orElseThrow()));
        return StoredVersions.lookup(connection(), dialect(), binder, name.quoted(dialect()), keys, t.column(meta.topic()),
                partition, offset, timestamp, t.column(meta.logTime()), t.column(meta.version()),
                liveRows ? t.column(meta.deleted()) : Optional.empty(),
                liveRows, changes, values, true);
    }

    /**
     * The guard of a batch's statements: the table's version columns, a row of another writer met as the batch says
     * (by its own column of the version field first, where it has one).
     */
    private Guard guard(WriteBatch batch) {
        return versions.guard(table(), batch.foreignRows(), settings.versionField(), settings.mapping(), dialect());
    }

    /** Creates the tombstone ledger before the first hard delete under newer-wins. */
    private void ensureLedger(WriteBatch batch) throws SQLException {
        if (ledger.table().isPresent() || settings.conflictMode() != ConflictMode.NEWER_WINS
                || settings.tombstoneMode() != TombstoneMode.DELETE || batch.changes().stream().noneMatch(Change::isTombstone)) {
            return;
        }
        try {
            ledger.create(connection(), dialect(), batch.shape().keyColumns());
        } catch (SQLException e) {
            // another writer of the job (a Spark task) created it first: use theirs
            rollback();
            ledger.read(connection(), dialect());
            if (ledger.table().isEmpty()) {
                throw e;
            }
        }
    }

    /** The ledger's version column, where the job orders by a version field (see {@link #ensureVersionColumn}). */
    private void ensureLedgerVersionColumn(WriteBatch batch) throws SQLException {
        Optional<Column> column = schema.versionColumn(batch);
        if (column.isPresent()) {
            ledger.ensureColumn(connection(), dialect(), column.get());
        }
    }

    private List<String> keyColumns(WriteBatch batch) {
        return batch.shape().keyColumns().stream().map(c -> table().column(c.name()).orElseThrow().name()).toList();
    }

    /**
     * Upserts the changes; returns how many the target kept out on the way. PostgreSQL's COPY path stages them, to be
     * decided and upserted by {@link #flushWindow}.
     */
    private long writeUpserts(WriteBatch batch, List<Change> upserts, Map<Integer, Long> keptOut,
                              Map<Integer, Long> superseded) throws SQLException, Binder.Mismatch {
        if (upserts.isEmpty()) {
            return 0;
        }
        SinkSettings.MetadataColumns meta = settings.metadata();
        List<String> keys = keyColumns(batch);
        Map<String, TableColumn> valueColumns = valueColumns(batch, keys);
        List<String> columns = new ArrayList<>(keys);
        valueColumns.values().forEach(c -> columns.add(c.name()));
        List<String> metaColumns = versions.present(table());
        columns.addAll(metaColumns);
        Guard guard = guard(batch);
        if (copy != null) {
            List<Column> keyFields = batch.shape().keyColumns();
            TableColumn[] keyTypes = keyFields.stream().map(k -> table().column(k.name()).orElseThrow()).toArray(TableColumn[]::new);
            Map<Integer, Long> staged = new java.util.HashMap<>();
            upserts.forEach(c -> staged.merge(c.partition(), 1L, Long::sum));
            String partitionColumn = table().column(meta.partition()).map(TableColumn::name).orElse(null);
            List<String> types = columns.stream().map(n -> table().column(n).map(TableColumn::castType).orElse("")).toList();
            // each metadata column's table column and what it holds, told once for the batch's rows
            TableColumn[] metaTypes = metaColumns.stream().map(n -> table().column(n).orElseThrow()).toArray(TableColumn[]::new);
            VersionColumns.Kind[] metaKinds = metaColumns.stream().map(versions::kind).toArray(VersionColumns.Kind[]::new);
            // upserted when the batch, or a later one of the same transaction, commits (flushWindow)
            return copy.stage(connection(), tableName.quoted(dialect()), keys, columns, types, guard, settings.conflictMode(),
                    partitionColumn, partitionColumn == null ? Map.of() : staged, this::currentKeepOut, keptOut, superseded,
                    out -> {
                StringBuilder csv = out.row();
                for (Change c : upserts) {
                    try {
                        for (int i = 0; i < keyTypes.length; i++) {
                            PostgresCopy.field(csv, binder.copyText(c.key().get(keyFields.get(i).name()), keyTypes[i]), i == 0);
                        }
                        for (Map.Entry<String, TableColumn> v : valueColumns.entrySet()) {
                            PostgresCopy.field(csv, binder.copyText(value(c, v), v.getValue()), false);
                        }
                        for (int i = 0; i < metaTypes.length; i++) {
                            PostgresCopy.field(csv, versions.copyText(c, batch, metaTypes[i], metaKinds[i], false), false);
                        }
                    } catch (Binder.Mismatch e) {
                        throw refused(c, e);
                    }
                    out.endRow();
                }
            });
        }
        // One row per statement: a single JDBC batch of every row. Several rows per statement (multi-row VALUES,
        // for drivers that would send a batch row by row): slices of that many rows.
        int perStatement = dialect().rowsPerStatement(columns.size());
        int sliceSize = perStatement == 1 ? upserts.size() : perStatement;
        for (int from = 0; from < upserts.size(); from += sliceSize) {
            List<Change> slice = upserts.subList(from, Math.min(upserts.size(), from + sliceSize));
            int rows = perStatement == 1 ? 1 : slice.size();
            String sql = dialect().upsert(tableName.quoted(dialect()), keys, columns, guard, settings.conflictMode(), rows);
            try (PreparedStatement ps = connection().prepareStatement(sql)) {
                int index = 1;
                for (Change c : slice) {
                    try {
                        index = bindKey(ps, index, c, batch);
                        for (Map.Entry<String, TableColumn> v : valueColumns.entrySet()) {
                            binder.bind(ps, index++, value(c, v), v.getValue());
                        }
                        index = versions.bind(ps, index, c, batch, table(), metaColumns, false);
                    } catch (Binder.Mismatch e) {
                        throw refused(c, e);
                    }
                    if (perStatement == 1) {
                        ps.addBatch();
                        index = 1;
                    }
                }
                if (perStatement == 1) {
                    ps.executeBatch();
                } else {
                    ps.executeUpdate();
                }
            }
        }
        return 0;
    }

    /**
     * The value columns a row is written to, by the field each holds: every column of the table the job writes
     * ({@link SinkSettings#writesValueColumn}) but the key, whether or not the batch's records carry its field, so
     * that a row is its key's last record whatever the batch (a field that record lacks is NULL, never an older
     * record's value left in place). A column is matched to the batch's field of its name, or of its name in
     * another case; one no record of the batch carries is looked up under its own name, and found in none.
     */
    private Map<String, TableColumn> valueColumns(WriteBatch batch, List<String> keys) {
        Map<String, String> fields = new java.util.HashMap<>();
        for (Column v : batch.shape().valueColumns()) {
            table().column(v.name()).ifPresent(col -> fields.merge(col.name(), v.name(),
                    (a, b) -> a.equals(col.name()) ? a : b)); // the field of the column's own spelling first
        }
        Map<String, TableColumn> columns = new LinkedHashMap<>();
        for (TableColumn col : table().columns()) {
            if (keys.stream().noneMatch(col.name()::equalsIgnoreCase) && settings.writesValueColumn(col.name())) {
                columns.put(fields.getOrDefault(col.name(), col.name()), col);
            }
        }
        return columns;
    }

    /**
     * The change's value for a column of {@link #valueColumns}: its field's, or NULL where it lacks the field; a
     * column that holds no NULL refuses such a record (a poison record naming the column) rather than failing the
     * batch.
     */
    private static Object value(Change c, Map.Entry<String, TableColumn> column) throws Binder.Mismatch {
        Object v = c.values().get(column.getKey());
        if (v == null && !column.getValue().nullable()) {
            throw new Binder.Mismatch("column " + column.getValue().name() + " is NOT NULL, and the record "
                    + (c.values().containsKey(column.getKey()) ? "holds null for it" : "has no field " + column.getKey())
                    + " (a row is the key's last record: a field it lacks is NULL; --columns names the columns the "
                    + "job writes, leaving the others as they are)");
        }
        return v;
    }

    /**
     * The tombstone ledger as it stands when staged rows are upserted: looked for again while unknown, since another
     * writer of the table (a Spark task, another job) may have made it after this sink's batches were staged, and its
     * deletes must keep the staged rows they are newer than out (read without committing: the transaction holds them).
     */
    private List<PostgresCopy.KeepOut> currentKeepOut() {
        // also where the ledger was seen before its version column was added (another writer adds it in a commit of
        // its own after making the ledger): its deletes carry the field, and the guard must compare it
        boolean lacksVersion = settings.versionField().isPresent() && ledger.lacks(settings.metadata().version());
        if ((ledger.table().isEmpty() || lacksVersion) && settings.conflictMode() == ConflictMode.NEWER_WINS) {
            try {
                ledger.read(connection(), dialect(), false);
            } catch (SQLException e) {
                throw new SinkException("cannot read the tombstone ledger " + ledger.name() + ": " + e.getMessage(), e);
            }
        }
        return keepOut();
    }

    /** The tombstone ledger, where newer-wins consults it on PostgreSQL's COPY path. */
    private List<PostgresCopy.KeepOut> keepOut() {
        if (settings.conflictMode() != ConflictMode.NEWER_WINS) {
            return List.of();
        }
        return ledger.keepOut(dialect()).stream().toList();
    }

    private void writeSoftDeletes(WriteBatch batch, List<Change> tombstones) throws SQLException, Binder.Mismatch {
        List<String> keys = keyColumns(batch);
        List<String> metaColumns = versions.present(table());
        List<String> columns = new ArrayList<>(keys);
        columns.addAll(metaColumns);
        String sql = dialect().upsert(tableName.quoted(dialect()), keys, columns, guard(batch), settings.conflictMode(), 1);
        try (PreparedStatement ps = connection().prepareStatement(sql)) {
            for (Change c : tombstones) {
                try {
                    int index = bindKey(ps, 1, c, batch);
                    versions.bind(ps, index, c, batch, table(), metaColumns, true);
                } catch (Binder.Mismatch e) {
                    throw refused(c, e);
                }
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private void writeDeletes(WriteBatch batch, List<Change> tombstones) throws SQLException, Binder.Mismatch {
        List<String> keys = keyColumns(batch);
        Guard guard = guard(batch);
        String sql = dialect().delete(tableName.quoted(dialect()), keys, guard, settings.conflictMode());
        List<Guard.Parameter> guarded = settings.conflictMode() == ConflictMode.NEWER_WINS ? guard.parameters() : List.of();
        try (PreparedStatement ps = connection().prepareStatement(sql)) {
            for (Change c : tombstones) {
                try {
                    versions.bindGuard(ps, bindKey(ps, 1, c, batch), guarded, c, batch, table());
                } catch (Binder.Mismatch e) {
                    throw refused(c, e);
                }
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private int bindKey(PreparedStatement ps, int index, Change c, WriteBatch batch) throws SQLException, Binder.Mismatch {
        for (Column k : batch.shape().keyColumns()) {
            binder.bind(ps, index++, c.key().get(k.name()), table().column(k.name()).orElseThrow());
        }
        return index;
    }

    private static String coordinates(WriteBatch batch) {
        Map<Integer, long[]> ranges = new java.util.TreeMap<>();
        for (Change c : batch.changes()) {
            ranges.merge(c.partition(), new long[] {c.offset(), c.offset()},
                    (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
        }
        if (ranges.isEmpty()) {
            return "batch " + batch.sequence() + " (progress only)";
        }
        List<String> parts = new ArrayList<>();
        ranges.forEach((p, r) -> parts.add("partition " + p + " offsets " + r[0] + ".." + r[1]));
        return "batch " + batch.sequence() + " (" + String.join(", ", parts) + ")";
    }

    private void rollback() {
        // what the open transaction staged is gone with it; counts of batches committed early stay
        window = window != null && window.holdsCommittedCounts() ? window : null;
        if (copy != null) {
            copy.rolledBack(null);
        }
        try {
            if (connection() != null) {
                connection().rollback();
                schema.rolledBack(connection());
            }
        } catch (SQLException ignored) {
            // the original failure is what matters
        }
    }

    @Override
    public void close() {
        window = null; // a window a failed run left open is rolled back with the connection
        if (copy != null) {
            copy.rolledBack(null);
        }
        db.close();
    }

    private Dialect dialect() {
        return schema.dialect();
    }

    /** The destination's connection: null before {@link #open()} (or before a new SQLite file's job begins). */
    private Connection connection() {
        return db.current();
    }

    private TargetTable table() {
        return schema.table();
    }

    /** For tests: the dialect's name. */
    String dialectName() {
        return dialect().name().toLowerCase(Locale.ROOT);
    }
}
