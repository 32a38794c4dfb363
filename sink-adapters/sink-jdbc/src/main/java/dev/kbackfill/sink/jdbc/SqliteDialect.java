package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;

/**
 * SQLite: {@code INSERT ... ON CONFLICT}, WAL journal. Times are stored as ISO-8601 text, which sorts in time
 * order. The job lock is a file lock beside the database (see {@link JdbcSink}), so this dialect's is a no-op.
 */
final class SqliteDialect implements Dialect {

    @Override
    public String name() {
        return "sqlite";
    }

    @Override
    public java.util.Optional<String> shippedDriver() {
        return java.util.Optional.of("org.sqlite.JDBC");
    }

    /** SQLite stores every integer in up to 64 bits and every REAL as a double, whatever the declared type. */
    @Override
    public java.util.Optional<dev.kbackfill.core.sink.NarrowNumber> narrow(TableColumn column) {
        return java.util.Optional.empty();
    }

    @Override
    public String columnType(ColumnType type, boolean key) {
        return switch (type) {
            case STRING, TIMESTAMP, DATE, TIME, UUID, JSON -> "TEXT";
            case LONG -> "INTEGER";
            case BOOLEAN -> "BOOLEAN";
            case DOUBLE -> "NUMERIC"; // REAL affinity would turn a whole number a double rounds into that double
            case DECIMAL -> "NUMERIC";
            case BYTES -> "BLOB";
        };
    }

    /** A primary key column declared with a collation other than BINARY ({@code NOCASE}, {@code RTRIM}). */
    @Override
    public java.util.Optional<KeyComparison> keyComparison(Connection connection, TableName table, TableColumn column)
            throws java.sql.SQLException {
        try (java.sql.Statement s = connection.createStatement();
             java.sql.ResultSet indexes = s.executeQuery("PRAGMA index_list(" + quote(table.name()) + ")")) {
            java.util.List<String> pk = new java.util.ArrayList<>();
            while (indexes.next()) {
                if ("pk".equals(indexes.getString("origin"))) {
                    pk.add(indexes.getString("name"));
                }
            }
            for (String index : pk) {
                try (java.sql.Statement x = connection.createStatement();
                     java.sql.ResultSet cols = x.executeQuery("PRAGMA index_xinfo(" + quote(index) + ")")) {
                    while (cols.next()) {
                        String coll = cols.getString("coll");
                        if (column.name().equalsIgnoreCase(cols.getString("name")) && coll != null
                                && !coll.equalsIgnoreCase("BINARY")) {
                            return java.util.Optional.of(new KeyComparison("collation " + coll + ", which "
                                    + (coll.equalsIgnoreCase("RTRIM") ? "ignores trailing spaces" : "ignores case"),
                                    "recreate table " + table + " with " + column.name() + " COLLATE BINARY (SQLite "
                                            + "cannot change a column's collation in place)"));
                        }
                    }
                }
            }
        }
        return java.util.Optional.empty();
    }

    @Override
    public String textType() {
        return "TEXT";
    }

    @Override
    public String upsert(String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                         int rows) {
        return OnConflictUpsert.sql(this, table, keys, columns, guard, mode, "");
    }

    @Override
    public boolean tryLock(Connection connection, String job) {
        return true;
    }

    @Override
    public void unlock(Connection connection, String job) {
    }

    @Override
    public List<String> sessionSetup() {
        return List.of("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=10000");
    }

    @Override
    public String lockingRead() {
        return ""; // one writer at a time: a second transaction's write fails instead of interleaving
    }

    private static final java.util.regex.Pattern CREATE_TABLE = java.util.regex.Pattern.compile(
            "(?is)^(\\s*CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?)(\"(?:[^\"]|\"\")+\"|`[^`]+`|\\[[^\\]]+\\]|[^\\s(]+)");
    private static final java.util.regex.Pattern CREATE_INDEX = java.util.regex.Pattern.compile(
            "(?is)^(\\s*CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?)(\"(?:[^\"]|\"\")+\"|`[^`]+`|\\[[^\\]]+\\]|\\S+)(\\s+ON\\s+)(\"(?:[^\"]|\"\")+\"|`[^`]+`|\\[[^\\]]+\\]|[^\\s(]+)");

    /** The target's own {@code CREATE TABLE} and {@code CREATE INDEX} statements, made for the shadow. */
    @Override
    public java.util.List<String> createLike(java.sql.Connection c, TableName shadow, TableName target)
            throws java.sql.SQLException {
        java.util.List<String> statements = new java.util.ArrayList<>();
        try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT type, name, sql FROM sqlite_master WHERE "
                + "tbl_name = ? AND sql IS NOT NULL AND type IN ('table', 'index') ORDER BY type DESC")) {
            ps.setString(1, target.name());
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(1).equals("table")) {
                        java.util.regex.Matcher m = CREATE_TABLE.matcher(rs.getString(3));
                        if (!m.find()) {
                            throw new java.sql.SQLException("cannot read the definition of " + target + ": "
                                    + rs.getString(3));
                        }
                        statements.add(0, m.replaceFirst(java.util.regex.Matcher.quoteReplacement(m.group(1)
                                + shadow.quoted(this))));
                    } else {
                        java.util.regex.Matcher m = CREATE_INDEX.matcher(rs.getString(3));
                        if (m.find()) {
                            statements.add(m.replaceFirst(java.util.regex.Matcher.quoteReplacement(m.group(1)
                                    + quote(shadow.name() + "_" + rs.getString(2)) + m.group(3) + shadow.quoted(this))));
                        }
                    }
                }
            }
        }
        try (java.sql.Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
        return java.util.List.of("columns, keys and constraints (the target's CREATE TABLE)",
                (statements.size() - 1) + " index(es) (the target's CREATE INDEX)");
    }
}
