package dev.kbackfill.sink.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.sink.ConflictMode;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * PostgreSQL's bulk path: COPY a batch into a temporary staging table, take out of it the rows the tombstone ledger
 * keeps out, then one {@code INSERT .. SELECT .. ON CONFLICT .. WHERE guard .. RETURNING} into the target, whose
 * written rows are counted per source partition (the rest were kept out), all in the batch's transaction. Several
 * batches may stage into one transaction ({@link #stage}), upserted together ({@link #flush}) after each key's older
 * rows are taken out: the database reduces a key's repeats across batches, as a batch does within itself.
 * Measured against batched {@code INSERT .. ON CONFLICT} in docs/benchmarks.md.
 */
final class PostgresCopy {

    private static final String STAGING = "kbackfill_staging";
    /** Each key's newest staged row, where several batches staged rows. */
    private static final String NEWEST = "kbackfill_newest";

    private final Dialect d;
    /** The connection whose session holds the staging table, and what it was made for. */
    private Connection stagingConnection;
    private String stagingFor;

    PostgresCopy(Dialect dialect) {
        this.d = dialect;
    }

    /** Writes a batch's rows as CSV, one {@link CopyStream#endRow()} per row. */
    interface Body {
        void write(CopyStream out) throws SQLException, Binder.Mismatch;
    }

    /**
     * CSV text sent to the COPY as it is formatted, in chunks: PostgreSQL parses one chunk while the next is
     * formatted, and a batch is never held as one string.
     */
    static final class CopyStream {
        private static final int CHUNK = 1 << 16;
        private final CopyIn in;
        private final StringBuilder csv = new StringBuilder(CHUNK + 4096);

        private CopyStream(CopyIn in) {
            this.in = in;
        }

        /** Where the current row's fields go (see {@link #field}). */
        StringBuilder row() {
            return csv;
        }

        void endRow() throws SQLException {
            csv.append('\n');
            if (csv.length() >= CHUNK) {
                flush();
            }
        }

        private void flush() throws SQLException {
            byte[] bytes = csv.toString().getBytes(StandardCharsets.UTF_8);
            in.writeToCopy(bytes, 0, bytes.length);
            csv.setLength(0);
        }
    }

    /**
     * A table besides the target whose rows keep staged rows out: the target's tombstone ledger.
     *
     * @param table     the quoted table
     * @param guard     the version rule over its columns
     */
    record KeepOut(String table, Guard guard) {
    }

    /**
     * What the staging table holds for the next {@link #flush}: the statement's target and columns, and how many rows
     * each source partition staged.
     */
    private record Staged(String table, List<String> keys, List<String> columns, String signature, Guard guard,
                          ConflictMode mode, String partition, java.util.Map<Integer, Long> rows, int batches) {
    }

    private Staged staged;

    /** Whether rows are staged and not yet upserted. */
    boolean holdsRows() {
        return staged != null;
    }

    /**
     * Copies the rows {@code body} writes (of {@code columns}, whose types are {@code types}; {@code rows} of them per
     * source partition) into the staging table, in the open transaction, beside what earlier batches of the
     * transaction staged there. Rows of other columns or types are upserted first ({@link #flush}): the staging table
     * copies the target's column types, and a column widened since needs a new one.
     *
     * @return how many staged rows of earlier batches that upsert superseded or kept out
     */
    long stage(Connection c, String table, List<String> keys, List<String> columns, List<String> types, Guard guard,
               ConflictMode mode, String partition, java.util.Map<Integer, Long> rows,
               java.util.function.Supplier<List<KeepOut>> keepOut,
               java.util.Map<Integer, Long> keptOut, java.util.Map<Integer, Long> superseded, Body body)
            throws SQLException, Binder.Mismatch {
        String signature = table + columns + types;
        long flushed = 0;
        if (staged != null && (c != stagingConnection || !signature.equals(staged.signature()))) {
            flushed = flush(c, keepOut, keptOut, superseded);
        }
        try (Statement s = c.createStatement()) {
            // a temporary table lives as long as its session: a connection made after a failure (a database restart
            // between two batches, a retry) has none yet
            if (c != stagingConnection || !signature.equals(stagingFor)) {
                for (String temp : List.of(STAGING, NEWEST)) {
                    s.execute("DROP TABLE IF EXISTS pg_temp." + d.quote(temp));
                    s.execute("CREATE TEMP TABLE " + d.quote(temp) + " (LIKE " + table + " INCLUDING DEFAULTS) "
                            + "ON COMMIT DELETE ROWS");
                }
                stagingFor = signature;
                stagingConnection = c;
            }
            CopyIn in = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY " + d.quote(STAGING) + " ("
                    + Sql.join(columns, d::quote) + ") FROM STDIN WITH (FORMAT csv)");
            try {
                CopyStream out = new CopyStream(in);
                body.write(out);
                out.flush();
                in.endCopy();
            } finally {
                if (in.isActive()) {
                    in.cancelCopy(); // a row that could not be formatted: nothing of the batch is kept
                }
            }
        } catch (SQLException | Binder.Mismatch | RuntimeException e) {
            if (staged == null) {
                stagingFor = null; // the transaction rolls back, and the staging table's creation with it
            }
            throw e;
        }
        java.util.Map<Integer, Long> all = new java.util.HashMap<>(rows);
        if (staged != null) {
            staged.rows().forEach((p, n) -> all.merge(p, n, Long::sum));
        }
        staged = new Staged(table, keys, columns, signature, guard, mode, partition, all,
                staged == null ? 1 : staged.batches() + 1);
        return flushed;
    }

    /**
     * That a staged row ({@code s}) is not newer than a tombstone table's entry ({@code t}): the guard is not TRUE.
     * Not {@code NOT guard}: a staged row without the version field against an entry with one makes the guard's
     * comparisons NULL, and {@code NOT NULL} would keep a row the rule calls older. A version column the staged rows
     * were not copied with is NULL for each of them, as in the target: the staging table copies the target's
     * columns, and the ledger can have that column before the target does (a writer whose batch held only deletes
     * added it), so it is not named where it may not exist.
     */
    private String notNewer(Guard guard, List<String> columns) {
        return "(" + guard.sql(d, "t.", c -> guard.version().filter(c::equals).isEmpty()
                || columns.stream().anyMatch(c::equalsIgnoreCase) ? "s." + d.quote(c)
                : "CAST(NULL AS " + (guard.versionText() ? "TEXT" : "BIGINT") + ")") + ") IS NOT TRUE";
    }

    /**
     * Upserts what the staging table holds: where several batches staged rows, first takes out of it each row a later
     * staged row of its key supersedes (counted per partition in {@code superseded}), then removes those a
     * {@code keepOut} table holds a newer version of, upserts the rest, and counts per partition in {@code keptOut}
     * the rows that did not change the target: removed, or refused by the upsert's own guard (its {@code RETURNING},
     * counted per partition, says how many it wrote). No second lookup of the target's keys.
     *
     * @return how many staged rows were superseded or kept out
     */
    long flush(Connection c, java.util.function.Supplier<List<KeepOut>> keepOut, java.util.Map<Integer, Long> keptOut,
               java.util.Map<Integer, Long> superseded) throws SQLException {
        if (staged == null) {
            return 0;
        }
        Staged w = staged;
        staged = null;
        try (Statement s = c.createStatement()) {
            java.util.Map<Integer, Long> left = new java.util.HashMap<>(w.partition() == null ? java.util.Map.of() : w.rows());
            String columnList = Sql.join(w.columns(), d::quote);
            String match = String.join(" AND ", w.keys().stream().map(key -> "s." + d.quote(key) + " = t." + d.quote(key))
                    .toList());
            long out = 0;
            String source = STAGING;
            if (w.batches() > 1) {
                out += newestOfKeys(s, w, columnList, left, superseded);
                source = NEWEST;
            }
            // the tombstone tables as they stand now (another writer of the table may have made the ledger since
            // the batches were staged), and again after the upsert for what committed meanwhile
            List<KeepOut> before = keepOut.get();
            for (KeepOut k : before) {
                // removed rows stay counted in left: kept out
                s.execute("DELETE FROM pg_temp." + d.quote(source) + " s USING " + k.table() + " t WHERE " + match
                        + " AND " + notNewer(k.guard(), w.columns()));
            }
            String upsert = OnConflictUpsert.sql(d, w.table(), w.keys(), w.columns(), w.guard(), w.mode(),
                    " SELECT " + columnList + " FROM pg_temp." + d.quote(source));
            String partition = w.partition();
            if (partition == null) {
                s.execute(upsert); // a table without metadata columns: nothing to count by
            } else {
                // the written rows counted per partition in the database: a few rows back, not one per row written
                try (java.sql.ResultSet rs = s.executeQuery("WITH written AS (" + upsert + " RETURNING "
                        + d.quote(partition) + ") SELECT " + d.quote(partition) + ", count(*) FROM written GROUP BY 1")) {
                    while (rs.next()) {
                        left.merge(rs.getInt(1), -rs.getLong(2), Long::sum);
                    }
                }
            }
            // a delete another job committed while the upsert waited for it: its key is taken out again
            List<KeepOut> after = keepOut.get(); // the ledger read again, whatever the table's columns
            if (partition != null) {
                undoDeleted(s, w, source, match, after, left);
            }
            for (java.util.Map.Entry<Integer, Long> e : left.entrySet()) {
                if (e.getValue() > 0) {
                    keptOut.merge(e.getKey(), e.getValue(), Long::sum);
                    out += e.getValue();
                }
            }
            return out; // the staging table empties at the commit, or is made anew for other columns (stage)
        } catch (SQLException | RuntimeException e) {
            stagingFor = null; // the transaction rolls back, and the staging table's creation with it
            throw e;
        }
    }

    /**
     * Where several batches staged rows: keeps each key's newest staged row by the version rule (as a batch reduces
     * its records; a sort, a third of the time of deleting the older rows by a join of the staging table with
     * itself) in the table {@code NEWEST}, counting per partition the rows it superseded. Returns how many.
     */
    private long newestOfKeys(Statement s, Staged w, String columnList, java.util.Map<Integer, Long> left,
                              java.util.Map<Integer, Long> superseded) throws SQLException {
        String keyList = Sql.join(w.keys(), d::quote);
        s.execute("INSERT INTO pg_temp." + d.quote(NEWEST) + " (" + columnList + ") SELECT DISTINCT ON ("
                + keyList + ") " + columnList + " FROM pg_temp." + d.quote(STAGING) + " ORDER BY " + keyList
                + ", " + w.guard().newestFirst(d));
        if (w.partition() == null) {
            return 0;
        }
        java.util.Map<Integer, Long> older = new java.util.HashMap<>(w.rows());
        try (java.sql.ResultSet rs = s.executeQuery("SELECT " + d.quote(w.partition()) + ", count(*) FROM pg_temp."
                + d.quote(NEWEST) + " GROUP BY 1")) {
            while (rs.next()) {
                older.merge(rs.getInt(1), -rs.getLong(2), Long::sum);
            }
        }
        long out = 0;
        for (java.util.Map.Entry<Integer, Long> e : older.entrySet()) {
            if (e.getValue() > 0) {
                superseded.merge(e.getKey(), e.getValue(), Long::sum);
                left.merge(e.getKey(), -e.getValue(), Long::sum);
                out += e.getValue();
            }
        }
        return out;
    }

    /**
     * A delete another job had not committed when the ledger was consulted: the upsert waited for it (its row was
     * gone, the insert met the deleted row's index entry) and then brought the key back. This reads what committed
     * since, the delete's ledger entry with it, and takes out the rows this flush wrote that the entry is newer than
     * (without locking every staged key's row beforehand), counting them back into {@code left} per partition.
     */
    private void undoDeleted(Statement s, Staged w, String source, String match, List<KeepOut> keepOut,
                             java.util.Map<Integer, Long> left) throws SQLException {
        String partition = w.partition();
        for (KeepOut k : keepOut) {
            // the target rows that hold what this flush staged: the same key and version coordinates
            StringBuilder ours = new StringBuilder(String.join(" AND ", w.keys().stream()
                    .map(key -> "w." + d.quote(key) + " = s." + d.quote(key)).toList()));
            Guard guard = w.guard();
            for (String column : java.util.List.of(guard.partition(), guard.offset())) {
                ours.append(" AND w.").append(d.quote(column)).append(" = s.").append(d.quote(column));
            }
            guard.topic().ifPresent(column -> ours.append(" AND w.").append(d.quote(column))
                    .append(" IS NOT DISTINCT FROM s.").append(d.quote(column)));
            try (java.sql.ResultSet rs = s.executeQuery("WITH undone AS (DELETE FROM " + w.table() + " w USING pg_temp."
                    + d.quote(source) + " s, " + k.table() + " t WHERE " + ours + " AND " + match + " AND "
                    + notNewer(k.guard(), w.columns()) + " RETURNING w." + d.quote(partition) + ") SELECT "
                    + d.quote(partition) + ", count(*) FROM undone GROUP BY 1")) {
                while (rs.next()) {
                    left.merge(rs.getInt(1), rs.getLong(2), Long::sum);
                }
            }
        }
    }

    /**
     * After the transaction rolled back (to its start, or to a savepoint before a batch): what it had staged is gone
     * with it, or what was staged before the savepoint, {@code before}, is left.
     */
    void rolledBack(Snapshot before) {
        staged = before == null ? null : before.staged;
        if (before == null) {
            stagingFor = null;
        } else {
            stagingFor = before.stagingFor;
        }
    }

    /** What is staged now, to return to after a rollback to a savepoint taken with it. */
    Snapshot snapshot() {
        return new Snapshot(staged, stagingFor);
    }

    record Snapshot(Staged staged, String stagingFor) {
    }

    /** Appends one CSV field: quoted text, or nothing for NULL. */
    static void field(StringBuilder csv, String value, boolean first) {
        if (!first) {
            csv.append(',');
        }
        if (value != null) {
            csv.append('"').append(value.indexOf('"') < 0 ? value : value.replace("\"", "\"\"")).append('"');
        }
    }
}
