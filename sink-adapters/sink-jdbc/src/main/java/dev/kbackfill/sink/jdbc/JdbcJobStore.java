package dev.kbackfill.sink.jdbc;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobLockFile;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.SinkException;

/**
 * A database's store of job state ({@link dev.kbackfill.core.sink.JobStore}'s role of {@link JdbcSink}):
 * {@code kbackfill_jobs} and {@code kbackfill_progress} beside the table ({@link JobTables}), read and written on the
 * sink's connection so that a batch's progress commits with its rows, and the job's lock: an advisory lock of the
 * database on a connection of its own, or a lock file beside a SQLite file.
 */
final class JdbcJobStore {

    /** What the store uses of its sink's connection. */
    interface Connections {
        /** The sink's connection, or null before it opened one. */
        Connection current();

        /** The sink's connection, opened now if it has none (a SQLite file is created when a run begins). */
        Connection currentOrConnect() throws SQLException;

        /** A connection of its own, set up as the sink's are. */
        Connection connect() throws SQLException;

        /** Rolls the sink's connection back after a failure. */
        void rollback();
    }

    private final JobTables tables;
    private final TableName table;
    private final Connections c;
    private final java.util.function.Supplier<Dialect> dialect;
    private final String target;
    private final Optional<Path> sqliteFile;

    /**
     * @param dialect    the sink's dialect (as tuned once connected)
     * @param target     the sink's target, for messages
     * @param sqliteFile the SQLite file, if the database is one
     */
    JdbcJobStore(JobTables tables, TableName table, Connections connections, java.util.function.Supplier<Dialect> dialect,
                 String target, Optional<Path> sqliteFile) {
        this.tables = tables;
        this.table = table;
        this.c = connections;
        this.dialect = dialect;
        this.target = target;
        this.sqliteFile = sqliteFile;
    }

    /** Brings existing job tables up to this version's columns (an earlier version's lack some); creates none. */
    void openTables() throws SQLException {
        Connection connection = c.current();
        if (tables.exists(connection)) {
            tables.create(connection); // adds what an earlier version's job tables lack
        }
        connection.commit();
    }

    AutoCloseable lock(String job) {
        if (dialect.get() instanceof SqliteDialect) {
            return sqliteFile.isEmpty() ? () -> { }
                    : JobLockFile.acquire(JobLockFile.beside(sqliteFile.get(), job), job, target);
        }
        try {
            Connection lockConnection = c.connect();
            lockConnection.setAutoCommit(true);
            if (!dialect.get().tryLock(lockConnection, job)) {
                lockConnection.close();
                throw new JobConflictException("job '" + job + "' is already running against " + target
                        + "; wait for it to finish (or stop it) before starting it again");
            }
            return () -> {
                try (lockConnection) {
                    dialect.get().unlock(lockConnection, job);
                }
            };
        } catch (SQLException e) {
            throw new SinkException("cannot lock job " + job + " in " + target + ": " + e.getMessage(), e);
        }
    }

    List<String> jobs() {
        Connection connection = c.current();
        try {
            if (connection == null || !tables.exists(connection)) {
                return List.of();
            }
            List<String> names = tables.names(connection);
            connection.commit();
            return names;
        } catch (SQLException e) {
            c.rollback();
            throw new SinkException("cannot list the jobs of " + target + ": " + e.getMessage(), e);
        }
    }

    Optional<JobState> load(String job) {
        Connection connection = c.current();
        try {
            if (connection == null || !tables.exists(connection)) {
                return Optional.empty();
            }
            Optional<JobState> state = tables.load(connection, job);
            connection.commit();
            return state;
        } catch (SQLException e) {
            c.rollback();
            throw new SinkException("cannot read the state of job " + job + " from " + target + ": "
                    + e.getMessage(), e);
        }
    }

    void begin(JobState state) {
        try {
            Connection connection = c.currentOrConnect();
            tables.create(connection);
            tables.begin(connection, state, table.toString());
            connection.commit();
        } catch (SQLException e) {
            c.rollback();
            throw new SinkException("cannot store the plan of job " + state.job() + " in " + target + ": "
                    + e.getMessage(), e);
        }
    }

    boolean reset(String job) {
        Connection connection = c.current();
        try {
            if (connection == null || !tables.exists(connection)) {
                return false;
            }
            boolean existed = tables.delete(connection, job);
            connection.commit();
            return existed;
        } catch (SQLException e) {
            c.rollback();
            throw new SinkException("cannot reset job " + job + " in " + target + ": " + e.getMessage(), e);
        }
    }
}
