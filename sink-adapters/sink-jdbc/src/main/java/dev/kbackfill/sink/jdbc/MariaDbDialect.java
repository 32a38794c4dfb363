package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;

/**
 * MySQL and MariaDB: {@code INSERT ... ON DUPLICATE KEY UPDATE c = IF(guard, VALUES(c), c)} with hand-built
 * multi-row {@code VALUES} (the driver would send a batch row by row), and {@code GET_LOCK}.
 *
 * <p>The update assigns left to right and later expressions see the new values, so the guard is evaluated once, by
 * the first assignment, into the session variable {@code @kbackfill_newer}, and every other assignment follows it;
 * the guard's own columns are assigned last.
 */
final class MariaDbDialect implements Dialect {

    /** Rows per statement: large enough to amortise round trips, far below the 65,535 placeholder limit. */
    private static final int ROWS = 500;

    @Override
    public String name() {
        return "mariadb";
    }

    @Override
    public java.util.Optional<String> shippedDriver() {
        return java.util.Optional.of("org.mariadb.jdbc.Driver");
    }

    @Override
    public String quote(String identifier) {
        return "`" + identifier.replace("`", "``") + "`";
    }

    /** The bytes of an index entry InnoDB allows (DYNAMIC rows, large prefixes): the whole primary key's. */
    private static final int INDEX_BYTES = 3072;

    /**
     * The collation of text compared byte for byte, without padding (a trailing space makes another value):
     * {@code utf8mb4_nopad_bin} on MariaDB, {@code utf8mb4_0900_bin} on MySQL 8 ({@link #connected}).
     */
    private volatile String binary = "utf8mb4_nopad_bin";

    @Override
    public void connected(Connection connection) throws SQLException {
        try (java.sql.Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("SELECT VERSION()")) {
            rs.next();
            binary = rs.getString(1).toLowerCase(java.util.Locale.ROOT).contains("mariadb") ? "utf8mb4_nopad_bin"
                    : "utf8mb4_0900_bin";
        }
    }

    /** The collation text key columns (and job names) are created with. */
    String binaryCollation() {
        return binary;
    }

    /**
     * Text keys in utf8mb4 with the byte-for-byte, no-pad collation, whatever the database's default (MariaDB's and
     * MySQL's default collations ignore case and accents and pad trailing spaces: distinct Kafka keys would be one
     * row), as long as the primary key may be: 3,072 bytes, four a character, shared by its text columns once each
     * other column's bytes are counted; binary keys likewise in bytes.
     */
    @Override
    public List<String> keyColumnTypes(List<ColumnType> types) {
        int fixed = 0;
        int variable = 0;
        for (ColumnType t : types) {
            if (t == ColumnType.STRING || t == ColumnType.BYTES || t == ColumnType.JSON) {
                variable++;
            } else {
                fixed += 16;
            }
        }
        int bytes = Math.max(4, (INDEX_BYTES - fixed) / Math.max(1, variable));
        return types.stream().map(t -> switch (t) {
            case STRING, JSON -> "VARCHAR(" + bytes / 4 + ") CHARACTER SET utf8mb4 COLLATE " + binary;
            case BYTES -> "VARBINARY(" + bytes + ")";
            default -> columnType(t, true);
        }).toList();
    }

    /**
     * A text key column whose collation is not a binary, no-pad one: MariaDB's and MySQL's {@code _ci} collations fold
     * case and accents, their {@code _bin} ones (but MySQL's {@code utf8mb4_0900_bin}) pad trailing spaces.
     */
    @Override
    public java.util.Optional<KeyComparison> keyComparison(Connection connection, TableName table, TableColumn column)
            throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT COLLATION_NAME, COLUMN_TYPE FROM "
                + "information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? "
                + "AND COLUMN_NAME = ?")) {
            ps.setString(1, table.schema().orElse(null));
            ps.setString(2, table.name());
            ps.setString(3, column.name());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || rs.getString(1) == null) {
                    return java.util.Optional.empty(); // not text
                }
                String collation = rs.getString(1).toLowerCase(java.util.Locale.ROOT);
                if (collation.endsWith("_nopad_bin") || collation.equals("utf8mb4_0900_bin") || collation.equals("binary")) {
                    return java.util.Optional.empty();
                }
                String how = "collation " + collation + (collation.endsWith("_bin") ? ", which ignores trailing spaces"
                        : ", which ignores case" + (collation.contains("_as_") ? "" : " and accents")
                        + " (and trailing spaces)");
                String type = rs.getString(2).replaceAll("(?i)\\s+(character set|collate)\\s+\\S+", "");
                return java.util.Optional.of(new KeyComparison(how, "ALTER TABLE " + table.quoted(this) + " MODIFY "
                        + quote(column.name()) + " " + type + " CHARACTER SET utf8mb4 COLLATE " + binary + " NOT NULL"));
            }
        }
    }

    @Override
    public String nameType(int length) {
        return "VARCHAR(" + length + ") CHARACTER SET utf8mb4 COLLATE " + binary;
    }

    @Override
    public String columnType(ColumnType type, boolean key) {
        return switch (type) {
            case STRING -> key ? "VARCHAR(768) CHARACTER SET utf8mb4 COLLATE " + binary : "LONGTEXT CHARACTER SET utf8mb4";
            case LONG -> "BIGINT";
            case DOUBLE -> "DOUBLE";
            case DECIMAL -> "DECIMAL(65,30)";
            case BOOLEAN -> "BOOLEAN";
            case BYTES -> key ? "VARBINARY(255)" : "LONGBLOB";
            case TIMESTAMP -> "DATETIME(6)";
            case DATE -> "DATE";
            case TIME -> "TIME(6)";
            case UUID -> "CHAR(36)";
            case JSON -> "LONGTEXT CHARACTER SET utf8mb4";
        };
    }

    /** MEDIUMINT reports itself as an INTEGER: 24 bits. */
    @Override
    public java.util.Optional<dev.kbackfill.core.sink.NarrowNumber> narrow(TableColumn column) {
        if (column.typeName().toUpperCase(java.util.Locale.ROOT).equals("MEDIUMINT")) {
            return java.util.Optional.of(dev.kbackfill.core.sink.NarrowNumber.INT24);
        }
        return Dialect.super.narrow(column);
    }

    /** {@code MODIFY COLUMN} restates the column: its NOT NULL is kept (a default or comment is not). */
    @Override
    public String widen(TableName table, TableColumn column, ColumnType to) {
        return "ALTER TABLE " + table.quoted(this) + " MODIFY COLUMN " + quote(column.name()) + " "
                + columnType(to, false) + (column.nullable() ? " NULL" : " NOT NULL");
    }

    /** MariaDB commits before and after every DDL statement. */
    @Override
    public boolean transactionalDdl() {
        return false;
    }

    /** DATETIME values as kbackfill writes them: UTC. */
    @Override
    public java.util.Optional<String> epochMicros(String expression) {
        return java.util.Optional.of("TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + expression + ")");
    }

    @Override
    public String exactText(String expression) {
        return "BINARY " + expression;
    }

    /** Both sides in UTF-8 first (a latin1 column's bytes are not a parameter's), then byte order: code points. */
    @Override
    public String codePointText(String expression) {
        return "CONVERT(" + expression + " USING utf8mb4) COLLATE utf8mb4_bin";
    }

    @Override
    public String textType() {
        return "LONGTEXT CHARACTER SET utf8mb4";
    }

    @Override
    public int rowsPerStatement(int columns) {
        return Math.max(1, Math.min(ROWS, 60_000 / Math.max(1, columns)));
    }

    @Override
    public String upsert(String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                         int rows) {
        String row = "(" + Sql.placeholders(columns.size()) + ")";
        StringBuilder sql = new StringBuilder(mode == ConflictMode.INSERT_ONLY ? "INSERT IGNORE INTO " : "INSERT INTO ")
                .append(table).append(" (").append(Sql.join(columns, this::quote)).append(") VALUES ")
                .append(String.join(", ", Collections.nCopies(rows, row)));
        if (mode == ConflictMode.INSERT_ONLY) {
            return sql.toString();
        }
        List<String> updated = new ArrayList<>(columns.stream().filter(c -> !keys.contains(c)).toList());
        // the guard's columns last: version field, log time, timestamp, offset, partition, topic
        for (String c : List.of(guard.version().orElse(""), guard.logTime(), guard.timestamp(), guard.offset(),
                guard.partition(), guard.topic().orElse(""))) {
            if (updated.remove(c)) {
                updated.add(c);
            }
        }
        if (updated.isEmpty()) {
            return sql.toString().replaceFirst("^INSERT INTO", "INSERT IGNORE INTO");
        }
        // assignments run left to right and later ones see the new values: the guard is decided once, on the stored
        // row, by the first assignment, and the others follow that decision
        String condition = guard.sql(this, "", "VALUES(%s)");
        List<String> assignments = new ArrayList<>();
        for (String c : updated) {
            String value = "VALUES(" + quote(c) + ")";
            if (mode != ConflictMode.NEWER_WINS) {
                assignments.add(quote(c) + " = " + value);
            } else if (assignments.isEmpty()) {
                assignments.add(quote(c) + " = IF((@kbackfill_newer := " + condition + "), " + value + ", " + quote(c) + ")");
            } else {
                assignments.add(quote(c) + " = IF(@kbackfill_newer, " + value + ", " + quote(c) + ")");
            }
        }
        sql.append(" ON DUPLICATE KEY UPDATE ").append(String.join(", ", assignments));
        return sql.toString();
    }

    @Override
    public boolean tryLock(Connection connection, String job) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT GET_LOCK(?, 0)")) {
            ps.setString(1, lockName(job));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Override
    public void unlock(Connection connection, String job) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT RELEASE_LOCK(?)")) {
            ps.setString(1, lockName(job));
            ps.execute();
        }
    }

    private static String lockName(String job) {
        String name = "kbackfill:" + job;
        return name.length() <= 64 ? name : name.substring(0, 48) + Integer.toHexString(name.hashCode());
    }

    /** {@code CREATE TABLE ... LIKE}: columns and indexes; grants are kept by table name, so the published table has them. */
    @Override
    public java.util.List<String> createLike(java.sql.Connection c, TableName shadow, TableName target)
            throws java.sql.SQLException {
        try (java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + shadow.quoted(this) + " LIKE " + target.quoted(this));
        }
        return java.util.List.of("columns and indexes (CREATE TABLE ... LIKE " + target + ")",
                "grants stay with the table name " + target + ", so the published table has them");
    }

    /** One {@code RENAME TABLE}: atomic, though MariaDB commits DDL by itself. */
    @Override
    public void renameAll(java.sql.Connection c, java.util.List<TableName[]> renames) throws java.sql.SQLException {
        if (renames.isEmpty()) {
            return;
        }
        StringBuilder sql = new StringBuilder("RENAME TABLE ");
        for (int i = 0; i < renames.size(); i++) {
            sql.append(i == 0 ? "" : ", ").append(renames.get(i)[0].quoted(this)).append(" TO ")
                    .append(renames.get(i)[1].quoted(this));
        }
        try (java.sql.Statement s = c.createStatement()) {
            s.execute(sql.toString());
        }
    }
}
