package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.version.Version;

/**
 * Reads what a table (the target, or its tombstone ledger) holds for the keys of a batch: per key, the version of
 * the record that wrote it and whether it is live. The sink decides with the one version rule which changes the
 * target keeps out, and counts them; the SQL guard in the statements enforces the same rule once more.
 *
 * <p>Keys are matched by {@link KeyIdentity} of the values read back (integers as longs, decimals without trailing
 * zeros, times as instants, UUIDs as text). A key whose stored form does not read back equal (an exotic key type)
 * is taken as absent here; the SQL guard still decides it correctly, only the count of kept-out rows misses it.
 */
final class StoredVersions {

    /**
     * @param version the version of the record that wrote the key; null for a row no backfill wrote
     * @param live    whether the key holds a value (false: soft-deleted, or a tombstone ledger entry)
     */
    /**
     * @param finer the metadata columns holding a time finer than the whole milliseconds a run writes (moved by
     *              hand): what verification calls different
     */
    record Stored(Version version, boolean live, Map<String, Object> values, List<String> finer) {
        Stored(Version version, boolean live) {
            this(version, live, Map.of(), List.of());
        }
    }

    private StoredVersions() {
    }

    /** Rows a lookup statement asks for at most: well below every driver's parameter limit. */
    private static final int PARAMETERS = 900;

    /**
     * @param table     the quoted table to read
     * @param keys      the key columns, by field name, as the table has them
     * @param meta      the metadata columns as the table has them (topic may be absent)
     * @param deleted   the soft-delete column, if the table has one
     * @param liveRows  whether rows without a deleted flag are live (the target) or deletions (the ledger)
     */
    static Map<KeyIdentity, Stored> lookup(Connection c, Dialect d, Binder binder, String table,
                                          LinkedHashMap<String, TableColumn> keys, Optional<TableColumn> topic,
                                          TableColumn partition, TableColumn offset, TableColumn timestamp,
                                          Optional<TableColumn> logTime, Optional<TableColumn> version,
                                          Optional<TableColumn> deleted,
                                          boolean liveRows, List<Change> changes)
            throws SQLException, Binder.Mismatch {
        return lookup(c, d, binder, table, keys, topic, Optional.of(partition), Optional.of(offset),
                Optional.of(timestamp), logTime, version, deleted, liveRows, changes, new LinkedHashMap<>(), true);
    }

    /**
     * The same, also reading {@code values} (by field name), without the locking read where {@code locking} is
     * false (verification); a table without version columns ({@code partition} empty) gives rows without versions.
     */
    static Map<KeyIdentity, Stored> lookup(Connection c, Dialect d, Binder binder, String table,
                                          LinkedHashMap<String, TableColumn> keys, Optional<TableColumn> topic,
                                          Optional<TableColumn> partition, Optional<TableColumn> offset,
                                          Optional<TableColumn> timestamp,
                                          Optional<TableColumn> logTime, Optional<TableColumn> version,
                                          Optional<TableColumn> deleted,
                                          boolean liveRows, List<Change> changes,
                                          LinkedHashMap<String, TableColumn> values, boolean locking)
            throws SQLException, Binder.Mismatch {
        Map<KeyIdentity, Stored> found = new HashMap<>();
        if (changes.isEmpty()) {
            return found;
        }
        List<String> fields = new ArrayList<>(keys.keySet());
        List<TableColumn> keyColumns = new ArrayList<>(keys.values());
        StringBuilder select = new StringBuilder("SELECT ");
        keyColumns.forEach(k -> select.append(d.quote(k.name())).append(", "));
        boolean versioned = partition.isPresent() && offset.isPresent() && timestamp.isPresent();
        values.values().forEach(v -> select.append(d.quote(v.name())).append(", "));
        select.append(topic.map(t -> d.quote(t.name())).orElse("NULL")).append(", ")
                .append(versioned ? d.quote(partition.get().name()) : "NULL")
                .append(", ").append(versioned ? d.quote(offset.get().name()) : "NULL")
                .append(", ").append(versioned ? d.quote(timestamp.get().name()) : "NULL")
                .append(", ").append(deleted.map(t -> d.quote(t.name())).orElse("NULL"))
                .append(", ").append(logTime.map(t -> d.quote(t.name())).orElse("NULL"))
                .append(", ").append(version.map(t -> d.quote(t.name())).orElse("NULL"))
                .append(" FROM ").append(table).append(" WHERE ");
        String keyList = keyColumns.size() == 1 ? d.quote(keyColumns.get(0).name())
                : "(" + Sql.join(keyColumns.stream().map(TableColumn::name).toList(), d::quote) + ")";
        String tuple = keyColumns.size() == 1 ? "?" : "(" + Sql.placeholders(keyColumns.size()) + ")";
        int perQuery = Math.max(1, PARAMETERS / keyColumns.size());
        for (int from = 0; from < changes.size(); from += perQuery) {
            List<Change> chunk = changes.subList(from, Math.min(changes.size(), from + perQuery));
            String sql = select + keyList + " IN (" + String.join(", ", java.util.Collections.nCopies(chunk.size(), tuple))
                    + ")" + (locking ? d.lockingRead() : "");
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int index = 1;
                for (Change change : chunk) {
                    for (int k = 0; k < fields.size(); k++) {
                        binder.bind(ps, index++, change.key().get(fields.get(k)), keyColumns.get(k));
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        readRow(rs, fields, values, d, timestamp, logTime, version, liveRows, found);
                    }
                }
            }
        }
        return found;
    }

    /**
     * One row of a lookup into {@code found}: its key, its values, and its version (none for a row no backfill wrote;
     * a row written before rows carried their log time counts with its timestamp, as the guard does).
     */
    private static void readRow(ResultSet rs, List<String> fields, LinkedHashMap<String, TableColumn> values, Dialect d,
                                Optional<TableColumn> timestamp, Optional<TableColumn> logTime,
                                Optional<TableColumn> version, boolean liveRows, Map<KeyIdentity, Stored> found)
            throws SQLException {
        Map<String, Object> key = new LinkedHashMap<>();
        for (int k = 0; k < fields.size(); k++) {
            key.put(fields.get(k), keyValue(rs, k + 1, d));
        }
        Map<String, Object> stored = new LinkedHashMap<>();
        int col = fields.size() + 1;
        for (Map.Entry<String, TableColumn> v : values.entrySet()) {
            stored.put(v.getKey(), plainValue(rs, col++, v.getValue(), d));
        }
        String storedTopic = rs.getString(col);
        long p = rs.getLong(col + 1);
        long o = rs.getLong(col + 2);
        boolean noVersion = rs.wasNull(); // a row no backfill wrote: it holds no version
        List<String> finer = new java.util.ArrayList<>();
        Instant tsAt = noVersion ? null : instant(rs, col + 3, timestamp.get(), d);
        long ts = tsAt == null ? noVersion ? 0 : Long.MIN_VALUE : tsAt.toEpochMilli();
        if (tsAt != null && tsAt.getNano() % 1_000_000 != 0) {
            finer.add(timestamp.get().name());
        }
        boolean flag = rs.getBoolean(col + 4);
        boolean live = liveRows && !flag;
        Instant ltAt = noVersion || logTime.isEmpty() ? null : instant(rs, col + 5, logTime.get(), d);
        long lt = ltAt == null ? ts : ltAt.toEpochMilli();
        if (ltAt != null && ltAt.getNano() % 1_000_000 != 0) {
            finer.add(logTime.get().name());
        }
        Comparable<?> field = null;
        if (version.isPresent() && !noVersion) {
            if (VersionColumns.isText(version.get())) {
                field = rs.getString(col + 6);
            } else {
                long f = rs.getLong(col + 6);
                field = rs.wasNull() ? null : f;
            }
        }
        found.put(KeyIdentity.of(key), new Stored(noVersion ? null : new Version(storedTopic, (int) p, o, ts, lt, field),
                live, stored, finer));
    }

    /** A stored key value in the form a decoded key value takes ({@link KeyIdentity} normalises the rest). */
    private static Object keyValue(ResultSet rs, int index, Dialect d) throws SQLException {
        Object v = rs.getObject(index);
        if (v == null) {
            return null;
        }
        if (v instanceof java.sql.Timestamp t) {
            return d instanceof MariaDbDialect ? t.toLocalDateTime().toInstant(ZoneOffset.UTC) : t.toInstant();
        }
        if (v instanceof LocalDateTime ldt) {
            return ldt.toInstant(ZoneOffset.UTC);
        }
        if (v instanceof OffsetDateTime odt) {
            return odt.toInstant();
        }
        if (v instanceof java.sql.Date date) {
            return date.toLocalDate();
        }
        if (v instanceof java.util.UUID u) {
            return u.toString();
        }
        if (v instanceof java.math.BigInteger b) {
            return new java.math.BigDecimal(b);
        }
        return v;
    }

    /**
     * A stored value in plain Java types for verification ({@link dev.kbackfill.core.verify.Values}): whole numbers,
     * decimals, doubles, booleans, text, bytes, instants (a timestamp column, whatever the database), dates, times.
     */
    static Object plainValue(ResultSet rs, int index, TableColumn column, Dialect d) throws SQLException {
        switch (column.jdbcType()) {
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> {
                return instant(rs, index, column, d); // as precise as the column: a finer time is another time
            }
            case Types.REAL -> {
                float f = rs.getFloat(index);
                return rs.wasNull() ? null : (Object) f;
            }
            case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> {
                return rs.getBytes(index);
            }
            default -> {
                Object v = rs.getObject(index);
                if (v == null) {
                    return null;
                }
                if (d instanceof SqliteDialect) {
                    java.util.Optional<dev.kbackfill.core.verify.Values.Unlike> unlike = unlikeInSqlite(v, column);
                    if (unlike.isPresent()) {
                        return unlike.get();
                    }
                }
                if (v instanceof java.sql.Date date) {
                    return date.toLocalDate();
                }
                if (v instanceof java.sql.Time t) {
                    return t.toLocalTime();
                }
                if (v instanceof java.sql.Clob clob) {
                    return clob.getSubString(1, (int) clob.length());
                }
                if (v instanceof Number || v instanceof Boolean || v instanceof String || v instanceof byte[]) {
                    return v;
                }
                return rs.getString(index); // json, jsonb, uuid and other driver objects: their text
            }
        }
    }

    /**
     * A value SQLite holds in a storage class the sink never writes into this column: a BOOLEAN column holding text or
     * a blob (the sink writes 0 and 1), a text column holding a blob (SQLite keeps whatever it is given, so a hand can put
     * {@code 'true'} into a BOOLEAN column, or {@code X''} where {@code ''} was).
     */
    private static java.util.Optional<dev.kbackfill.core.verify.Values.Unlike> unlikeInSqlite(Object v, TableColumn column) {
        String declared = column.typeName().toUpperCase(java.util.Locale.ROOT);
        // SQLite's driver reports a BOOLEAN column by its declared name only (its type is NUMERIC)
        int type = declared.contains("BOOL") ? Types.BOOLEAN : declared.contains("TEXT") || declared.contains("CHAR")
                || declared.contains("CLOB") ? Types.VARCHAR : column.jdbcType();
        String kind = switch (type) {
            case Types.BOOLEAN, Types.BIT -> v instanceof String ? "text" : v instanceof byte[] ? "a blob" : null;
            case Types.VARCHAR, Types.CHAR, Types.LONGVARCHAR, Types.CLOB, Types.NVARCHAR, Types.NCHAR ->
                    v instanceof byte[] ? "a blob" : null;
            default -> null;
        };
        return kind == null ? java.util.Optional.empty() : java.util.Optional.of(new dev.kbackfill.core.verify.Values
                .Unlike(v, kind + " in a " + column.typeName() + " column"));
    }

    /** The stored record timestamp in epoch milliseconds, from whatever type the column has. */
    static long epochMillis(ResultSet rs, int index, TableColumn column, Dialect d) throws SQLException {
        Instant at = instant(rs, index, column, d);
        return at == null ? Long.MIN_VALUE : at.toEpochMilli();
    }

    /** A stored time as precisely as its column holds it (a whole-number column: milliseconds), or null. */
    static Instant instant(ResultSet rs, int index, TableColumn column, Dialect d) throws SQLException {
        switch (column.jdbcType()) {
            case Types.BIGINT, Types.INTEGER, Types.NUMERIC, Types.DECIMAL -> {
                long v = rs.getLong(index);
                return rs.wasNull() ? null : Instant.ofEpochMilli(v);
            }
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> {
                if (d instanceof SqliteDialect) {
                    return parseText(rs.getString(index));
                }
                if (d instanceof MariaDbDialect) {
                    LocalDateTime t = rs.getObject(index, LocalDateTime.class);
                    return t == null ? null : t.toInstant(ZoneOffset.UTC);
                }
                OffsetDateTime t = rs.getObject(index, OffsetDateTime.class);
                return t == null ? null : t.toInstant();
            }
            default -> {
                return parseText(rs.getString(index));
            }
        }
    }

    private static Instant parseText(String text) {
        if (text == null) {
            return null;
        }
        try {
            return Instant.from(Binder.TEXT_TIME.parse(text));
        } catch (java.time.format.DateTimeParseException e) {
            return Instant.parse(text);
        }
    }

    /** The newer of two stored versions of a key, by the version rule; a row without version is the older. */
    static Stored newer(Stored a, Stored b) {
        if (a == null || a.version() == null) {
            return b == null ? a : b;
        }
        if (b == null || b.version() == null) {
            return a;
        }
        return Version.compare(a.version(), b.version()) >= 0 ? a : b;
    }
}
