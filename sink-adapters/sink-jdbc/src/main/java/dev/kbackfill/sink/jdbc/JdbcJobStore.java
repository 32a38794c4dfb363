package dev.kbackfill.sink.jdbc;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobLockFile;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;

/**
 * A database's store of job state, the {@link JobStore} of a JDBC destination: {@code kbackfill_jobs} and
 * {@code kbackfill_progress} beside the table ({@link JobTables}), read and written on the destination's one
 * connection ({@link SinkConnection}) so that a batch's progress commits with its rows ({@link #advance}, in the
 * writer's transaction), and the job's lock: an advisory lock of the database on a connection of its own, or a lock
 * file beside a SQLite file.
 */
final class JdbcJobStore implements JobStore {

    private final SinkConnection db;
    private final JobTables tables;
    private final TableName table;
    private final Dialect dialect;
    private final SinkSettings settings;
    private final String target;
    /** Whether {@link #begin} created the job tables (none were there): {@link #withdraw} drops them again. */
    private boolean createdTables;

    /**
     * @param db      the destination's connection, shared with its writer
     * @param dialect the database's dialect
     * @param target  the destination, for messages
     */
    JdbcJobStore(SinkConnection db, Dialect dialect, TableName table, SinkSettings settings, String target) {
        this.db = db;
        this.tables = new JobTables(dialect, table);
        this.table = table;
        this.dialect = dialect;
        this.settings = settings;
        this.target = target;
    }

    @Override
    public String store() {
        return SinkFactory.canonical(settings.url());
    }

    @Override
    public String destination() {
        return "table " + table;
    }

    /**
     * The table each destination names as this database resolves it: its schema (the connection's current one where
     * none is named) and its name as the table has it (a name the database folds, {@code ORDERS}, found as
     * {@code orders}), compared without regard to case where the database folds names.
     */
    @Override
    public boolean sameDestination(String a, String b) {
        if (a.equals(b)) {
            return true;
        }
        if (db.current() == null || !a.startsWith("table ") || !b.startsWith("table ")) {
            return false;
        }
        try {
            return resolved(a.substring(6)).equals(resolved(b.substring(6)));
        } catch (SQLException | SinkConfigException e) {
            return false;
        }
    }

    private String resolved(String name) throws SQLException {
        Connection connection = db.current();
        TableName t = TableName.parse(name);
        String current;
        try {
            current = connection.getSchema() != null ? connection.getSchema() : connection.getCatalog();
        } catch (java.sql.SQLFeatureNotSupportedException e) {
            current = null; // SQLite: its one schema, main
        }
        String schema = t.schema().orElse(current == null ? "main" : current);
        String found = TargetTable.read(connection, t).map(f -> f.name.name()).orElse(t.name());
        connection.rollback(); // a read: no transaction left open
        String qualified = schema + "." + found;
        // MariaDB on Linux keeps the case of database and table names; the others fold them
        return dialect instanceof MariaDbDialect ? qualified : qualified.toLowerCase(java.util.Locale.ROOT);
    }

    /** Connects to the database, which must exist, and brings its job tables up to this version's columns. */
    @Override
    public void openForJobs() {
        db.openExisting(" does not exist (a run creates it with its first job); check --sink");
        try {
            openTables();
        } catch (SQLException e) {
            close();
            throw new SinkException("cannot open " + target + ": " + e.getMessage(), e);
        }
    }

    /** Brings existing job tables up to this version's columns (an earlier version's lack some); creates none. */
    void openTables() throws SQLException {
        Connection connection = db.current();
        if (tables.exists(connection)) {
            tables.create(connection); // adds what an earlier version's job tables lack
        }
        connection.commit();
    }

    /**
     * Moves the job's progress to a batch's next offsets in {@code transaction}, the writer's open one: committed
     * with the batch's rows or not at all.
     */
    void advance(Connection transaction, String job, int run, java.util.Map<Integer, Long> nextOffsets)
            throws SQLException {
        tables.advance(transaction, job, run, nextOffsets);
    }

    @Override
    public AutoCloseable lock(String job) {
        if (dialect instanceof SqliteDialect) {
            Optional<Path> file = db.sqliteFile();
            return file.isEmpty() ? () -> { } : JobLockFile.acquire(JobLockFile.beside(file.get(), job), job, target);
        }
        try {
            Connection lockConnection = db.connect();
            lockConnection.setAutoCommit(true);
            if (!dialect.tryLock(lockConnection, job)) {
                lockConnection.close();
                throw new JobConflictException("job '" + job + "' is already running against " + target
                        + "; wait for it to finish (or stop it) before starting it again");
            }
            return () -> {
                try (lockConnection) {
                    dialect.unlock(lockConnection, job);
                }
            };
        } catch (SQLException e) {
            throw new SinkException("cannot lock job " + job + " in " + target + ": " + e.getMessage(), e);
        }
    }

    @Override
    public List<String> jobs() {
        Connection connection = db.current();
        try {
            if (connection == null || !tables.exists(connection)) {
                return List.of();
            }
            List<String> names = tables.names(connection);
            connection.commit();
            return names;
        } catch (SQLException e) {
            db.rollbackQuietly();
            throw new SinkException("cannot list the jobs of " + target + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Optional<JobState> load(String job) {
        Connection connection = db.current();
        try {
            if (connection == null || !tables.exists(connection)) {
                return Optional.empty();
            }
            Optional<JobState> state = tables.load(connection, job);
            connection.commit();
            return state;
        } catch (SQLException e) {
            db.rollbackQuietly();
            throw new SinkException("cannot read the state of job " + job + " from " + target + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void begin(JobState state) {
        try {
            Connection connection = db.currentOrConnect(); // a SQLite file created now, when the run begins
            createdTables |= !tables.exists(connection);
            tables.create(connection);
            tables.begin(connection, state, table.toString());
            connection.commit();
        } catch (SQLException e) {
            db.rollbackQuietly();
            throw new SinkException("cannot store the plan of job " + state.job() + " in " + target + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public boolean reset(String job) {
        Connection connection = db.current();
        try {
            if (connection == null || !tables.exists(connection)) {
                return false;
            }
            boolean existed = tables.delete(connection, job);
            connection.commit();
            return existed;
        } catch (SQLException e) {
            db.rollbackQuietly();
            throw new SinkException("cannot reset job " + job + " in " + target + ": " + e.getMessage(), e);
        }
    }

    /**
     * Forgets the job, and what its begin created in a SQLite file this process created: the job tables go, unless
     * another job has state in them since, and the file with them if nothing else was made in it. In a database server the job tables stay (empty): another job may be
     * beginning in them this moment.
     */
    @Override
    public void withdraw(String job) {
        reset(job);
        Connection connection = db.current();
        if (!createdTables || !db.createdFile() || connection == null) {
            return;
        }
        try {
            if (tables.names(connection).isEmpty()) {
                tables.drop(connection);
                connection.commit();
                createdTables = false;
                if (noTablesLeft(connection)) {
                    db.deleteCreatedFileOnClose(); // nothing else was made in it (a table --create-table made stays)
                }
            }
        } catch (SQLException e) {
            db.rollbackQuietly();
            throw new SinkException("cannot drop the job tables of " + target + ": " + e.getMessage(), e);
        }
    }

    private static boolean noTablesLeft(Connection sqlite) throws SQLException {
        try (java.sql.Statement s = sqlite.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM sqlite_master WHERE type = 'table'")) {
            return rs.next() && rs.getLong(1) == 0;
        }
    }

    /** Closes the destination's connection (a store opened alone has it to itself; a sink's closes it too). */
    @Override
    public void close() {
        db.close();
    }
}
