package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;

/** PostgreSQL: {@code INSERT ... ON CONFLICT}, batches rewritten into multi-row inserts by the driver, advisory locks. */
final class PostgresDialect implements Dialect {

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    public java.util.Optional<String> shippedDriver() {
        return java.util.Optional.of("org.postgresql.Driver");
    }

    /** A transaction-scoped advisory lock, in kbackfill's class of them, keyed by the table's name. */
    @Override
    public java.util.Optional<String> writerLock() {
        return java.util.Optional.of("SELECT pg_advisory_xact_lock(hashtext('kbackfill'), hashtext(?))");
    }

    @Override
    public String columnType(ColumnType type, boolean key) {
        return switch (type) {
            case STRING -> "text";
            case LONG -> "bigint";
            case DOUBLE -> "double precision";
            case DECIMAL -> "numeric";
            case BOOLEAN -> "boolean";
            case BYTES -> "bytea";
            case TIMESTAMP -> "timestamptz";
            case DATE -> "date";
            case TIME -> "time";
            case UUID -> "uuid";
            case JSON -> "jsonb";
        };
    }

    /**
     * To a decimal through each value's text, the shortest that reads back as the same double: PostgreSQL's own
     * double-to-numeric cast keeps 15 digits only.
     */
    @Override
    public String widen(TableName table, TableColumn column, ColumnType to) {
        String type = columnType(to, false);
        return "ALTER TABLE " + table.quoted(this) + " ALTER COLUMN " + quote(column.name()) + " TYPE " + type
                + (to == ColumnType.DECIMAL ? " USING " + quote(column.name()) + "::text::" + type : "");
    }

    /** A text key column of a non-deterministic collation (ICU's case- or accent-insensitive ones). */
    @Override
    public java.util.Optional<KeyComparison> keyComparison(Connection connection, TableName table, TableColumn column)
            throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT c.collname, c.collisdeterministic FROM "
                + "pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation WHERE a.attrelid = ?::regclass "
                + "AND a.attname = ?")) {
            ps.setString(1, table.quoted(this));
            ps.setString(2, column.name());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || rs.getBoolean(2)) {
                    return java.util.Optional.empty();
                }
                return java.util.Optional.of(new KeyComparison("collation " + rs.getString(1) + ", which is not "
                        + "deterministic (values it calls equal may differ)", "ALTER TABLE " + table.quoted(this)
                        + " ALTER COLUMN " + quote(column.name()) + " TYPE " + column.typeName() + " COLLATE \"C\""));
            }
        }
    }

    @Override
    public java.util.Optional<String> epochMicros(String expression) {
        return java.util.Optional.of("CAST(EXTRACT(EPOCH FROM " + expression + ") * 1000000 AS bigint)");
    }

    /** A B-tree entry holds 2,704 bytes, its header and each value's length included. */
    @Override
    public java.util.OptionalInt maxKeyBytes() {
        return java.util.OptionalInt.of(2_680);
    }

    @Override
    public String exactText(String expression) {
        return expression + " COLLATE \"C\"";
    }

    @Override
    public String textType() {
        return "text";
    }

    @Override
    public String upsert(String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                         int rows) {
        return OnConflictUpsert.sql(this, table, keys, columns, guard, mode, "");
    }

    @Override
    public boolean tryLock(Connection connection, String job) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            ps.setLong(1, lockKey(job));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    public void unlock(Connection connection, String job) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, lockKey(job));
            ps.execute();
        }
    }

    private static long lockKey(String job) {
        long h = 1125899906842597L;
        for (char c : ("kbackfill:" + job).toCharArray()) {
            h = 31 * h + c;
        }
        return h;
    }

    @Override
    public String tuneUrl(String url) {
        return url.contains("reWriteBatchedInserts") ? url
                : url + (url.contains("?") ? "&" : "?") + "reWriteBatchedInserts=true";
    }

    /** {@code LIKE ... INCLUDING ALL} (defaults, constraints, indexes, comments, storage), then the target's grants. */
    @Override
    public java.util.List<String> createLike(java.sql.Connection c, TableName shadow, TableName target)
            throws java.sql.SQLException {
        java.util.List<String> done = new java.util.ArrayList<>();
        try (java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + shadow.quoted(this) + " (LIKE " + target.quoted(this) + " INCLUDING ALL)");
            done.add("columns, defaults, constraints, indexes and comments (LIKE " + target + " INCLUDING ALL)");
        }
        java.util.List<String> grants = new java.util.ArrayList<>();
        try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT grantee, privilege_type FROM "
                + "information_schema.role_table_grants WHERE table_schema = COALESCE(?, current_schema()) "
                + "AND table_name = ? AND grantee <> current_user")) {
            ps.setString(1, target.schema().orElse(null));
            ps.setString(2, target.name());
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String grantee = rs.getString(1);
                    grants.add("GRANT " + rs.getString(2) + " ON " + shadow.quoted(this) + " TO "
                            + (grantee.equals("PUBLIC") ? "PUBLIC" : quote(grantee)));
                }
            }
        }
        try (java.sql.Statement s = c.createStatement()) {
            for (String g : grants) {
                s.execute(g);
            }
        }
        done.add(grants.isEmpty() ? "no grants to other roles" : grants.size() + " grant(s) to other roles");
        return done;
    }
}
