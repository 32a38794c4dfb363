package dev.kbackfill.sink.jdbc;

import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.sink.ConflictMode;

/** {@code INSERT ... ON CONFLICT (keys) DO UPDATE SET ... WHERE guard}, shared by PostgreSQL and SQLite. */
final class OnConflictUpsert {

    private OnConflictUpsert() {
    }

    static String sql(Dialect d, String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                      String valuesSuffix) {
        StringBuilder sql = new StringBuilder("INSERT INTO ").append(table).append(" (")
                .append(Sql.join(columns, d::quote)).append(")")
                .append(valuesSuffix.isEmpty() ? " VALUES (" + Sql.placeholders(columns.size()) + ")" : valuesSuffix)
                .append(" ON CONFLICT (").append(Sql.join(keys, d::quote)).append(")");
        List<String> updated = columns.stream().filter(c -> !keys.contains(c)).toList();
        if (mode == ConflictMode.INSERT_ONLY || updated.isEmpty()) {
            return sql.append(" DO NOTHING").toString();
        }
        sql.append(" DO UPDATE SET ").append(Sql.join(updated, c -> d.quote(c) + " = EXCLUDED." + d.quote(c)));
        if (mode == ConflictMode.NEWER_WINS) {
            sql.append(" WHERE ").append(guard.sql(d, table + ".", "EXCLUDED.%s"));
        }
        return sql.toString();
    }
}
