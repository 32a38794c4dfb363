package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.NarrowNumber;

/**
 * What differs between databases: quoting, types, the upsert statement and the job lock. Everything else (the
 * transaction, progress tables, binding) is shared in {@link JdbcSink}. Each dialect is a small class whose SQL is
 * pinned in {@code src/test/resources/sql/<dialect>/}.
 */
interface Dialect extends Guard.Syntax {

    /** A short name: {@code postgresql}, {@code mariadb}, {@code sqlite}, {@code merge}. */
    String name();

    /** Quotes an identifier; standard SQL double quotes unless the database differs. */
    default String quote(String identifier) {
        return "\"" + identifier.replace("\"", "\"\"") + "\"";
    }

    /**
     * A text expression compared byte for byte, whatever the column's collation: topic names in the newer-wins guard
     * compare exactly and in ASCII order, as the version rule says (and a byte comparison is the cheapest one).
     */
    default String exactText(String expression) {
        return expression;
    }

    /**
     * A text expression compared by Unicode code point, whatever the column's character set and collation: a string
     * version field in the newer-wins guard, as {@link dev.kbackfill.core.version.Version#compareFields} compares it.
     */
    default String codePointText(String expression) {
        return exactText(expression);
    }

    /**
     * A timestamp column's value as whole microseconds since the epoch (how a timestamp version field compares), for a
     * row of another writer compared by its own column of the field; empty where the database cannot say it exactly.
     */
    default java.util.Optional<String> epochMicros(String expression) {
        return java.util.Optional.empty();
    }

    /**
     * What makes a lookup of stored versions a locking read: it waits for another writer's uncommitted change of
     * those rows (a delete by another job into the same table) and reads what that writer committed, so that a
     * batch never decides on a row another transaction is removing. Empty where transactions cannot interleave.
     */
    default String lockingRead() {
        return " FOR UPDATE";
    }

    /**
     * A statement taking the table's writer lock (the table's name its parameter), held until the transaction ends,
     * for concurrent writers that must see each other's deletes (see JdbcSink's lockWriters). Empty where none is
     * taken.
     */
    default java.util.Optional<String> writerLock() {
        return java.util.Optional.empty();
    }

    /** The column type for values of {@code type}; {@code key} for primary-key columns (some databases need a bounded type there). */
    String columnType(ColumnType type, boolean key);

    /**
     * The types of a primary key's columns a table kbackfill creates, in order: each compares values byte for byte (a
     * key is its bytes: no case, accent or trailing-space folding), sized to hold the longest keys the database can
     * index together. By default each key column's {@link #columnType}.
     */
    default List<String> keyColumnTypes(List<ColumnType> types) {
        return types.stream().map(t -> columnType(t, true)).toList();
    }

    /**
     * The bytes a primary key's values may take together where the database's index bounds them whatever the
     * columns' types (PostgreSQL's B-tree entry: 2,704 bytes); empty where the columns' declared lengths say it.
     */
    default java.util.OptionalInt maxKeyBytes() {
        return java.util.OptionalInt.empty();
    }

    /** A text column for names compared byte for byte (a job's name in the job tables), of up to {@code length} characters. */
    default String nameType(int length) {
        return "VARCHAR(" + length + ")";
    }

    /**
     * How a key column of an existing table compares values other than byte for byte (a collation that ignores case,
     * accents or trailing spaces, a non-deterministic one): two distinct Kafka keys would be one row there. Empty where
     * it compares bytes (or the column is not text).
     *
     * @param table  the table as read (the name as the database holds it)
     * @return what the column's comparison is, and the statement that makes it byte for byte
     */
    default java.util.Optional<KeyComparison> keyComparison(Connection connection, TableName table, TableColumn column)
            throws SQLException {
        return java.util.Optional.empty();
    }

    /**
     * A key column that folds distinct keys together.
     *
     * @param how what its collation does, for people ({@code collation utf8mb4_general_ci: ignores case and accents})
     * @param fix the statement that makes it compare bytes
     */
    record KeyComparison(String how, String fix) {
    }

    /** Called on every new connection, after {@link #sessionSetup()}: where the dialect learns what the server is. */
    default void connected(Connection connection) throws SQLException {
    }

    /**
     * The width of a number column of limited range ({@link NarrowNumber}: integers of 8 to 64 bits, 32- and 64-bit
     * floating point), by its JDBC type; empty for every other column (exact decimals among them). Unsigned columns
     * are left to the database.
     */
    default java.util.Optional<NarrowNumber> narrow(TableColumn column) {
        if (column.typeName().toUpperCase(java.util.Locale.ROOT).contains("UNSIGNED")) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.ofNullable(switch (column.jdbcType()) {
            case java.sql.Types.TINYINT -> NarrowNumber.INT8;
            case java.sql.Types.SMALLINT -> NarrowNumber.INT16;
            case java.sql.Types.INTEGER -> NarrowNumber.INT32;
            case java.sql.Types.BIGINT -> NarrowNumber.INT64;
            case java.sql.Types.REAL -> NarrowNumber.FLOAT32;
            case java.sql.Types.DOUBLE, java.sql.Types.FLOAT -> NarrowNumber.FLOAT64;
            default -> null;
        });
    }

    /**
     * The statement that widens a number column to {@code to} ({@link NarrowNumber#widening}: the 64-bit type of its
     * family, or an exact decimal), keeping every value it holds (standard SQL).
     */
    default String widen(TableName table, TableColumn column, ColumnType to) {
        return "ALTER TABLE " + table.quoted(this) + " ALTER COLUMN " + quote(column.name()) + " SET DATA TYPE "
                + columnType(to, false);
    }

    /**
     * Whether schema changes (added or widened columns) can run in the batch's transaction, committed or rolled
     * back with its rows; where they cannot, each commits on its own before the batch.
     */
    default boolean transactionalDdl() {
        return true;
    }

    /** A type for long text (the stored plan). */
    String textType();

    /**
     * The statement that inserts one row, or updates the row of its key under {@code mode}.
     *
     * @param table     the quoted table name
     * @param keys      key column names (unquoted)
     * @param columns   every column written, keys first, metadata columns last (unquoted)
     * @param guard     the metadata columns the newer-wins guard compares
     * @param mode      the conflict mode
     * @param rows      rows per statement (multi-row VALUES), 1 for JDBC batching
     */
    String upsert(String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode, int rows);

    /** Rows per upsert statement: more than one where the driver would otherwise send batches row by row. */
    default int rowsPerStatement(int columns) {
        return 1;
    }

    /**
     * The statement that deletes the row of a key: {@code keys} parameters, then, under newer-wins, the
     * guard's partition, offset, partition, timestamp parameters.
     */
    default String delete(String table, List<String> keys, Guard guard, ConflictMode mode) {
        String where = Sql.join(keys, k -> quote(k) + " = ?").replace(", ", " AND ");
        if (mode == ConflictMode.NEWER_WINS) {
            where += " AND " + guard.againstParameters(this);
        }
        return "DELETE FROM " + table + " WHERE " + where;
    }

    /**
     * Takes a lock named for the job on {@code connection} without waiting, held until the connection closes or the
     * process dies. Returns false if another session holds it.
     */
    boolean tryLock(Connection connection, String job) throws SQLException;

    /** Releases {@link #tryLock}. */
    void unlock(Connection connection, String job) throws SQLException;

    /** Statements run once on every new connection (pragmas, session settings). */
    default List<String> sessionSetup() {
        return List.of();
    }

    /**
     * The class of the JDBC driver kbackfill ships for this database, if it ships one: connections are made with it
     * directly ({@link SinkConnection}), and with {@link java.sql.DriverManager} where it does not take the URL.
     */
    default java.util.Optional<String> shippedDriver() {
        return java.util.Optional.empty();
    }

    /** Settings added to the JDBC URL when absent (e.g. batch rewriting). */
    default String tuneUrl(String url) {
        return url;
    }

    /**
     * Creates {@code shadow} like {@code target} (its columns, keys and indexes, and what else the database copies),
     * for a rebuild published after verification; returns what was carried over, for people. By default the
     * database has no such step here.
     *
     * @throws dev.kbackfill.core.sink.SinkConfigException where it has none
     */
    default List<String> createLike(Connection c, TableName shadow, TableName target) throws SQLException {
        throw new dev.kbackfill.core.sink.SinkConfigException("--publish-after-verify is not available on " + name()
                + " databases: it is built for PostgreSQL, MariaDB/MySQL and SQLite");
    }

    /**
     * Renames tables, each pair {@code [from, to]} in order, atomically with the connection's transaction (or in one
     * statement where the database's DDL commits by itself).
     */
    default void renameAll(Connection c, List<TableName[]> renames) throws SQLException {
        try (java.sql.Statement s = c.createStatement()) {
            for (TableName[] r : renames) {
                s.execute("ALTER TABLE " + r[0].quoted(this) + " RENAME TO " + quote(r[1].name()));
            }
        }
    }
}
