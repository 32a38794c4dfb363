package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;

/**
 * Standard SQL {@code MERGE} (H2 and other databases without a native upsert). Bound values are cast to the column
 * types, which H2 needs to type the source row. It has no job lock: run one copy of a job at a time.
 */
final class MergeDialect implements Dialect {

    private final java.util.function.Function<String, String> castType;

    /** @param castType the SQL type of a column by name, for the source row's casts */
    MergeDialect(java.util.function.Function<String, String> castType) {
        this.castType = castType;
    }

    @Override
    public String name() {
        return "merge";
    }

    /** H2 commits the open transaction before a DDL statement. */
    @Override
    public boolean transactionalDdl() {
        return false;
    }

    @Override
    public java.util.Optional<String> epochMicros(String expression) {
        return java.util.Optional.of("DATEDIFF(MICROSECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00', "
                + expression + ")");
    }

    /** H2's case-insensitive text type. */
    @Override
    public java.util.Optional<KeyComparison> keyComparison(Connection connection, TableName table, TableColumn column) {
        if (!column.typeName().toUpperCase(java.util.Locale.ROOT).contains("IGNORECASE")) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(new KeyComparison("type " + column.typeName() + ", which ignores case",
                "ALTER TABLE " + table.quoted(this) + " ALTER COLUMN " + quote(column.name()) + " SET DATA TYPE VARCHAR"));
    }

    @Override
    public String columnType(ColumnType type, boolean key) {
        return switch (type) {
            case STRING, JSON -> "VARCHAR";
            case LONG -> "BIGINT";
            case DOUBLE -> "DOUBLE PRECISION";
            case DECIMAL -> "NUMERIC(65, 30)";
            case BOOLEAN -> "BOOLEAN";
            case BYTES -> "VARBINARY";
            case TIMESTAMP -> "TIMESTAMP WITH TIME ZONE";
            case DATE -> "DATE";
            case TIME -> "TIME";
            case UUID -> "UUID";
        };
    }

    @Override
    public String textType() {
        return "CLOB";
    }

    @Override
    public String upsert(String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                         int rows) {
        String source = Sql.join(columns, c -> "CAST(? AS " + castType.apply(c) + ")");
        StringBuilder sql = new StringBuilder("MERGE INTO ").append(table).append(" t USING (VALUES (").append(source)
                .append(")) AS i (").append(Sql.join(columns, this::quote)).append(") ON ")
                .append(String.join(" AND ", keys.stream().map(k -> "t." + quote(k) + " = i." + quote(k)).toList()));
        List<String> updated = columns.stream().filter(c -> !keys.contains(c)).toList();
        if (mode != ConflictMode.INSERT_ONLY && !updated.isEmpty()) {
            sql.append(" WHEN MATCHED");
            if (mode == ConflictMode.NEWER_WINS) {
                sql.append(" AND ").append(guard.sql(this, "t.", "i.%s"));
            }
            sql.append(" THEN UPDATE SET ").append(Sql.join(updated, c -> quote(c) + " = i." + quote(c)));
        }
        sql.append(" WHEN NOT MATCHED THEN INSERT (").append(Sql.join(columns, this::quote)).append(") VALUES (")
                .append(Sql.join(columns, c -> "i." + quote(c))).append(")");
        return sql.toString();
    }

    /**
     * A job lock without a lock function: the job's row inserted into {@code kbackfill_locks} and left uncommitted on
     * the lock's own connection. A second run's insert of the same row waits on it and gives up after a second; the
     * row is never committed, so a process that dies (its connection closed) leaves no lock behind.
     */
    @Override
    public boolean tryLock(Connection connection, String job) throws SQLException {
        try (java.sql.Statement s = connection.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS kbackfill_locks (job VARCHAR(200) NOT NULL PRIMARY KEY)");
        }
        connection.setAutoCommit(false);
        try (java.sql.PreparedStatement ps = connection.prepareStatement("INSERT INTO kbackfill_locks (job) VALUES (?)")) {
            ps.setQueryTimeout(1);
            ps.setString(1, job);
            ps.executeUpdate();
            return true;
        } catch (SQLException held) {
            connection.rollback();
            return false;
        }
    }

    @Override
    public void unlock(Connection connection, String job) throws SQLException {
        connection.rollback();
    }
}
