package dev.kbackfill.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;

/**
 * The SQL a wave runs against a Delta table, as text: the {@code MERGE} of its changes under the conflict and
 * tombstone modes, and the counts of what it kept out. The wave's changes are a view ({@code s}) of the table's
 * columns plus {@value #TOMBSTONE}; the table is {@code t}. Pure text, no Spark: every statement is pinned in
 * {@code src/test/resources/sql/delta/} so that a reviewer reads SQL, not Java.
 *
 * @param path        the table's location
 * @param columns     the table's columns, in its order, that the wave writes (the ones Delta computes left out)
 * @param versionText whether the version column holds text (compared as such) rather than a number
 * @param keys        the key columns
 * @param foreignRows what a row without kbackfill's version (another writer's) is to the wave's changes
 * @param ownField    the column that holds the version field in every row, another writer's too, and how, if any
 */
record DeltaMergeSql(String path, List<String> columns, boolean versionText, List<String> keys,
                     SinkSettings.MetadataColumns meta, ConflictMode conflict, TombstoneMode tombstones,
                     dev.kbackfill.core.version.Version.ForeignRows foreignRows,
                     java.util.Optional<java.util.Map.Entry<String, dev.kbackfill.core.version.Guard.FieldForm>> ownField) {

    /** The column of a wave's view that marks a tombstone. */
    static final String TOMBSTONE = "__kbackfill_tombstone";

    DeltaMergeSql {
        columns = List.copyOf(columns);
        keys = List.copyOf(keys);
    }

    /** Statements whose guard replaces rows of other writers (no live writer beside the wave). */
    DeltaMergeSql(String path, List<String> columns, boolean versionText, List<String> keys,
                  SinkSettings.MetadataColumns meta, ConflictMode conflict, TombstoneMode tombstones) {
        this(path, columns, versionText, keys, meta, conflict, tombstones,
                dev.kbackfill.core.version.Version.ForeignRows.REPLACED, java.util.Optional.empty());
    }

    /** The MERGE of the wave's changes in {@code view}. */
    String merge(String view) {
        boolean topicColumn = has(meta.topic());
        boolean versionColumn = has(meta.version());
        String guard = conflict == ConflictMode.NEWER_WINS
                ? " AND " + GuardSql.sparkSql(meta, topicColumn, versionColumn, versionColumn && versionText,
                foreignRows, ownField.map(java.util.Map.Entry::getKey),
                ownField.map(java.util.Map.Entry::getValue).orElse(dev.kbackfill.core.version.Guard.FieldForm.NUMBER), "t.", "s.")
                : "";
        String set = columns.stream().filter(c -> !keys.contains(c)).map(c -> "t." + q(c) + " = s." + q(c))
                .collect(Collectors.joining(", "));
        String insert = "INSERT (" + columns.stream().map(DeltaMergeSql::q).collect(Collectors.joining(", "))
                + ") VALUES (" + columns.stream().map(c -> "s." + q(c)).collect(Collectors.joining(", ")) + ")";
        String tomb = "s." + q(TOMBSTONE);
        StringBuilder sql = new StringBuilder("MERGE INTO ").append(table()).append(" AS t USING ").append(view)
                .append(" AS s ON ").append(on());
        if (conflict == ConflictMode.INSERT_ONLY) {
            sql.append(" WHEN NOT MATCHED AND NOT ").append(tomb).append(" THEN ").append(insert);
            return sql.toString();
        }
        if (tombstones == TombstoneMode.SOFT_DELETE) {
            List<String> marks = new ArrayList<>(List.of(meta.deleted()));
            for (String m : List.of(meta.topic(), meta.partition(), meta.offset(), meta.timestamp(), meta.logTime(),
                    meta.version())) {
                if (has(m)) {
                    marks.add(m);
                }
            }
            sql.append(" WHEN MATCHED AND ").append(tomb).append(guard).append(" THEN UPDATE SET ")
                    .append(marks.stream().map(c -> "t." + q(c) + " = s." + q(c)).collect(Collectors.joining(", ")));
        } else if (tombstones == TombstoneMode.DELETE) {
            sql.append(" WHEN MATCHED AND ").append(tomb).append(guard).append(" THEN DELETE");
        }
        sql.append(" WHEN MATCHED AND NOT ").append(tomb).append(guard).append(" THEN UPDATE SET ").append(set);
        sql.append(" WHEN NOT MATCHED");
        if (tombstones != TombstoneMode.SOFT_DELETE) {
            sql.append(" AND NOT ").append(tomb);
        }
        sql.append(" THEN ").append(insert);
        return sql.toString();
    }

    /**
     * What of the wave's changes an append into an empty table writes (what a MERGE would insert): every change but
     * tombstones, except soft-deleted tombstones outside insert-only, which become marked rows.
     */
    String appended() {
        return conflict == ConflictMode.INSERT_ONLY || tombstones != TombstoneMode.SOFT_DELETE
                ? "NOT " + q(TOMBSTONE) : "true";
    }

    /**
     * Per source partition ({@code p}, {@code n}), the changes in {@code view} whose version the key's row in
     * {@code target} (the table as it is before the MERGE) holds already: a replay.
     */
    String heldAlready(String view, String target) {
        return countAgainst(view, target, "JOIN", sameVersion() + " AND NOT s." + q(TOMBSTONE));
    }

    /**
     * Per source partition ({@code p}, {@code n}), the changes in {@code view} the MERGE kept out: after it, the key's
     * row in {@code target} does not hold the change's version (or, for a hard delete, the key still has a row).
     * Insert-only tombstones are ignored, not kept out.
     */
    String keptOut(String view, String target) {
        String present = "t." + q(keys.get(0)) + " IS NOT NULL";
        String same = sameVersion();
        String tomb = "s." + q(TOMBSTONE);
        String notApplied;
        if (conflict == ConflictMode.INSERT_ONLY) {
            notApplied = "NOT " + tomb + " AND NOT (" + present + " AND " + same + ")";
        } else if (tombstones == TombstoneMode.DELETE) {
            notApplied = "(" + tomb + " AND " + present + ") OR (NOT " + tomb + " AND NOT (" + present + " AND "
                    + same + "))";
        } else {
            notApplied = "NOT (" + present + " AND " + same + ")";
        }
        return countAgainst(view, target, "LEFT JOIN", notApplied);
    }

    private String countAgainst(String view, String target, String join, String where) {
        return "SELECT s." + q(meta.partition()) + " AS p, count(*) AS n FROM " + view + " s " + join + " " + target
                + " t ON " + on() + " WHERE " + where + " GROUP BY s." + q(meta.partition());
    }

    /** The key's row ({@code t}) holds the change's ({@code s}) version coordinates. */
    private String sameVersion() {
        return "t." + q(meta.partition()) + " <=> s." + q(meta.partition()) + " AND t." + q(meta.offset())
                + " <=> s." + q(meta.offset()) + (has(meta.topic()) ? " AND t." + q(meta.topic()) + " <=> s."
                + q(meta.topic()) : "");
    }

    private String on() {
        return keys.stream().map(k -> "t." + q(k) + " = s." + q(k)).collect(Collectors.joining(" AND "));
    }

    private String table() {
        return "delta.`" + path.replace("`", "``") + "`";
    }

    private boolean has(String column) {
        return columns.contains(column);
    }

    /** A Spark SQL identifier. */
    static String q(String identifier) {
        return "`" + identifier.replace("`", "``") + "`";
    }
}
