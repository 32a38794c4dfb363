package dev.kbackfill.sink.jdbc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Properties;

import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;

/**
 * The one connection a JDBC destination's roles share: the writer ({@link JdbcSink}) stages and commits its rows on
 * it, the job store ({@link JdbcJobStore}) reads and moves job state in the same transaction, the ledger's upkeep
 * and the verifier's reads use it. Connected on demand: a SQLite file is created only when a run begins. Connections
 * of their own (a job's lock) are made here too, set up alike.
 */
final class SinkConnection implements AutoCloseable {

    private final SinkSettings settings;
    private final String url;
    private final Dialect dialect;
    private final String target;
    private Connection connection;
    /** Whether this process created the SQLite file; and whether to delete it again when the connection closes. */
    private boolean createdFile;
    private boolean deleteOnClose;

    /**
     * @param dialect the database's dialect (its session setup, what it learns once connected)
     * @param target  the destination, for messages
     */
    SinkConnection(SinkSettings settings, Dialect dialect, String target) {
        this.settings = settings;
        this.url = dialect.tuneUrl(settings.url());
        this.dialect = dialect;
        this.target = target;
        warmUp(url, dialect);
    }

    /**
     * Whether {@link #warmUp} has had {@link DriverManager} load every driver, and SQLite's library, in this process (a
     * shipped driver is warmed once by {@link #driver}'s cache).
     */
    private static final java.util.concurrent.atomic.AtomicBoolean DRIVERS_WARMED =
            new java.util.concurrent.atomic.AtomicBoolean();
    private static final java.util.concurrent.atomic.AtomicBoolean SQLITE_WARMED =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Loads the JDBC driver (and SQLite's native library, from the copy {@link SqliteLibrary} keeps) on a thread of
     * their own, while the run asks the cluster for its plan: a short run's first connection into a new SQLite file then
     * took 25-30 ms where it took 140-170 ms after the plan (the whole 1,000-record run 2-3% shorter on two cores, where
     * the warm-up competes with the JIT). The driver kbackfill ships for the database is loaded by its name
     * ({@link #driver}); only another database's needs every driver {@link DriverManager} finds. Nothing is connected
     * or created here.
     */
    private static void warmUp(String url, Dialect dialect) {
        // once per process: a run makes several connections (writer, job store, publication), an engine many sinks
        Optional<String> shipped = dialect.shippedDriver();
        boolean drivers = shipped.isPresent() ? !DRIVERS.containsKey(shipped.get()) : !DRIVERS_WARMED.getAndSet(true);
        boolean sqlite = url.startsWith("jdbc:sqlite:") && !SQLITE_WARMED.getAndSet(true);
        if (!drivers && !sqlite) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                shipped.ifPresentOrElse(SinkConnection::driver, DriverManager::getDrivers);
                if (sqlite) {
                    SqliteLibrary.useCachedCopy();
                    org.sqlite.SQLiteJDBCLoader.initialize();
                }
            } catch (Exception | LinkageError e) {
                // the connection loads them itself, and reports what fails
            }
        }, "kbackfill-jdbc-warm-up");
        t.setDaemon(true);
        t.start();
    }

    /** The drivers kbackfill ships, made once each by class name; empty where the class is missing. */
    private static final java.util.Map<String, Optional<Driver>> DRIVERS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The driver of the class {@code className}, made once per process; empty where it is not on the classpath. */
    static Optional<Driver> driver(String className) {
        return DRIVERS.computeIfAbsent(className, n -> {
            try {
                return Optional.of((Driver) Class.forName(n, true, SinkConnection.class.getClassLoader())
                        .getConstructor().newInstance());
            } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
                return Optional.empty(); // DriverManager finds what there is, and says when nothing takes the URL
            }
        });
    }

    /**
     * A connection made by the driver kbackfill ships for the database, without {@link DriverManager}: the manager's
     * first use reads every jar's services files for drivers (with all 180 jars on the class path: 50-70 ms, holding
     * the class path's lock, which a cron run's cluster client waited on meanwhile). Null where the dialect ships
     * none, its class is missing, or the driver does not take the URL ({@code jdbc:mysql:} without MariaDB's
     * {@code permitMysqlScheme}): {@link DriverManager} then finds one.
     */
    private Connection connectByShippedDriver(Properties props) throws SQLException {
        Optional<Driver> shipped = dialect.shippedDriver().flatMap(SinkConnection::driver);
        return shipped.isPresent() ? shipped.get().connect(url, props) : null;
    }

    /** The connection, or null before one was made (or after {@link #close()}). */
    Connection current() {
        return connection;
    }

    /** The connection, made now if there is none (a SQLite file is created then). */
    Connection currentOrConnect() throws SQLException {
        if (connection == null) {
            createdFile |= sqliteFileMissing();
            connection = connect();
        }
        return connection;
    }

    /** Makes the connection: the database must be reachable (a SQLite file is created if missing). */
    Connection open() throws SQLException {
        close();
        createdFile |= sqliteFileMissing();
        connection = connect();
        return connection;
    }

    /** Whether this process created the SQLite file it is connected to. */
    boolean createdFile() {
        return createdFile;
    }

    /**
     * Deletes the SQLite file when the connection closes, if this process created it: what a refused first run
     * created goes again (the caller made sure that nothing in it is kept).
     */
    void deleteCreatedFileOnClose() {
        deleteOnClose = createdFile;
    }

    /**
     * Makes the connection to a database that must exist (a SQLite file is not created); {@code missing} ends the
     * message when it does not.
     */
    void openExisting(String missing) {
        checkSqliteFile();
        if (sqliteFileMissing()) {
            throw new SinkConfigException("no such database: " + sqliteFile(settings.url()).orElseThrow() + missing);
        }
        try {
            open();
        } catch (SQLException e) {
            close();
            throw new SinkException("cannot open " + target + ": " + e.getMessage(), e);
        }
    }

    /** A connection of its own, set up as the shared one is (in a transaction, the dialect's session settings). */
    Connection connect() throws SQLException {
        Properties props = new Properties();
        settings.user().ifPresent(u -> props.setProperty("user", u));
        settings.password().ifPresent(p -> props.setProperty("password", p));
        Connection c;
        try {
            c = connectByShippedDriver(props);
            if (c == null) {
                c = DriverManager.getConnection(url, props);
            }
        } catch (SQLException e) {
            if ("08001".equals(e.getSQLState()) && e.getMessage() != null && e.getMessage().startsWith("No suitable driver")) {
                throw new SinkConfigException("invalid --sink '" + SinkFactory.redact(settings.url())
                        + "': no JDBC driver for it; expected " + String.join(", ", JdbcSinkFactory.FORMS));
            }
            throw new SinkException("cannot connect to " + SinkFactory.redact(settings.url()) + ": " + e.getMessage(), e);
        }
        try (Statement s = c.createStatement()) {
            for (String setup : dialect.sessionSetup()) {
                s.execute(setup);
            }
        }
        dialect.connected(c);
        c.setAutoCommit(false);
        return c;
    }

    /** Rolls the open transaction back, if there is a connection; a failure to do so is left to the caller's error. */
    void rollbackQuietly() {
        try {
            if (connection != null) {
                connection.rollback();
            }
        } catch (SQLException ignored) {
            // the original failure is what matters
        }
    }

    /**
     * A SQLite sink must be a file that outlives the run, in a folder that exists: an in-memory database forgets
     * everything (rows and progress) when the run ends, and a missing folder would be created by the job's lock file.
     * Refused before anything is created.
     */
    void checkSqliteFile() {
        if (!(dialect instanceof SqliteDialect)) {
            return;
        }
        String shown = SinkFactory.redact(settings.url());
        Optional<Path> file = sqliteFile(settings.url());
        if (file.isEmpty()) {
            throw new SinkConfigException("invalid --sink '" + shown + "': an in-memory SQLite database keeps nothing "
                    + "(rows, progress) when the run ends; expected jdbc:sqlite:FILE, e.g. jdbc:sqlite:orders.db");
        }
        Path f = file.get();
        if (Files.isDirectory(f)) {
            throw new SinkConfigException("invalid --sink '" + shown + "': " + f + " is a directory, not a database file; "
                    + "expected jdbc:sqlite:FILE, e.g. jdbc:sqlite:" + f.resolve("kbackfill.db"));
        }
        Path folder = f.getParent();
        if (folder != null && !Files.isDirectory(folder)) {
            throw new SinkConfigException("invalid --sink '" + shown + "': folder " + folder + " does not exist; create "
                    + "it first (kbackfill creates the database file, not its folder)");
        }
    }

    /** Whether the database is a SQLite file not created yet. */
    boolean sqliteFileMissing() {
        return dialect instanceof SqliteDialect && sqliteFile(settings.url()).map(f -> !Files.exists(f)).orElse(false);
    }

    /** The SQLite file, if the database is one. */
    Optional<Path> sqliteFile() {
        return dialect instanceof SqliteDialect ? sqliteFile(settings.url()) : Optional.empty();
    }

    static Optional<Path> sqliteFile(String url) {
        String rest = url.substring("jdbc:sqlite:".length());
        int q = rest.indexOf('?');
        if (q >= 0) {
            rest = rest.substring(0, q);
        }
        if (rest.startsWith("file:")) {
            rest = rest.substring("file:".length());
        }
        if (rest.isEmpty() || rest.equals(":memory:") || rest.contains("mode=memory")) {
            return Optional.empty();
        }
        return Optional.of(Path.of(rest).toAbsolutePath());
    }

    /** Rolls back what is open and closes the connection; connected again on demand. */
    @Override
    public void close() {
        if (connection != null) {
            try {
                connection.rollback();
                connection.close();
            } catch (SQLException ignored) {
                // closing after a failure
            }
            connection = null;
        }
        if (deleteOnClose) {
            deleteOnClose = false;
            createdFile = false;
            sqliteFile().ifPresent(f -> {
                for (String suffix : new String[] {"", "-journal", "-wal", "-shm"}) {
                    try {
                        Files.deleteIfExists(Path.of(f + suffix));
                    } catch (java.io.IOException ignored) {
                        // left as it is: an empty database
                    }
                }
            });
        }
    }
}
