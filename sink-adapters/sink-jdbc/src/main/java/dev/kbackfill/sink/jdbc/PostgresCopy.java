package dev.kbackfill.sink.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import dev.kbackfill.core.sink.ConflictMode;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * PostgreSQL's bulk path: COPY a batch into a temporary staging table, take out of it the rows the tombstone ledger
 * keeps out, then one {@code INSERT .. SELECT .. ON CONFLICT .. WHERE guard .. RETURNING} into the target, whose
 * written rows are counted per source partition (the rest were kept out), all in the batch's transaction.
 * Measured against batched {@code INSERT .. ON CONFLICT} in docs/benchmarks.md.
 */
final class PostgresCopy {

    private static final String STAGING = "kbackfill_staging";

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
     * Copies the rows {@code body} writes (of {@code columns}, whose types are {@code types}; {@code staged} of them per
     * source partition), removes
     * those a {@code keepOut} table holds a newer version of, upserts the rest into {@code table}, and counts per
     * partition in {@code keptOut} the rows that did not change the target: removed, or refused by the upsert's own
     * guard (its {@code RETURNING}, counted per partition, says how many it wrote). No second lookup of the target's
     * keys.
     *
     * @return how many staged rows were kept out
     */
    long upsert(Connection c, String table, List<String> keys, List<String> columns, List<String> types, Guard guard,
                ConflictMode mode, String partition, java.util.Map<Integer, Long> staged, List<KeepOut> keepOut,
                java.util.Map<Integer, Long> keptOut, Body body) throws SQLException, Binder.Mismatch {
        // the staging table copies the target's column types: a column widened since needs a new one
        String signature = table + columns + types;
        try (Statement s = c.createStatement()) {
            // a temporary table lives as long as its session: a connection made after a failure (a database restart
            // between two batches, a retry) has none yet
            if (c != stagingConnection || !signature.equals(stagingFor)) {
                s.execute("DROP TABLE IF EXISTS pg_temp." + d.quote(STAGING));
                s.execute("CREATE TEMP TABLE " + d.quote(STAGING) + " (LIKE " + table + " INCLUDING DEFAULTS) "
                        + "ON COMMIT DELETE ROWS");
                stagingFor = signature;
                stagingConnection = c;
            }
            String columnList = Sql.join(columns, d::quote);
            CopyIn in = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY " + d.quote(STAGING) + " ("
                    + columnList + ") FROM STDIN WITH (FORMAT csv)");
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
            java.util.Map<Integer, Long> left = new java.util.HashMap<>(staged);
            String match = String.join(" AND ", keys.stream().map(key -> "s." + d.quote(key) + " = t." + d.quote(key))
                    .toList());
            for (KeepOut k : keepOut) {
                // removed rows stay counted in left: kept out
                s.execute("DELETE FROM pg_temp." + d.quote(STAGING) + " s USING " + k.table() + " t WHERE " + match
                        + " AND NOT " + k.guard().sql(d, "t.", "s.%s"));
            }
            String upsert = OnConflictUpsert.sql(d, table, keys, columns, guard, mode,
                    " SELECT " + columnList + " FROM " + d.quote(STAGING));
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
            // A delete another job had not committed when the ledger was consulted: the upsert waited for it (its
            // row was gone, the insert met the deleted row's index entry) and then brought the key back. This
            // statement reads what committed since, the delete's ledger entry with it, and takes out the rows this
            // batch wrote that the entry is newer than (without locking every staged key's row beforehand)
            for (KeepOut k : keepOut) {
                if (partition == null) {
                    break;
                }
                // the target rows that hold what this batch staged: the same key and version coordinates
                StringBuilder ours = new StringBuilder(String.join(" AND ", keys.stream()
                        .map(key -> "w." + d.quote(key) + " = s." + d.quote(key)).toList()));
                for (String column : java.util.List.of(guard.partition(), guard.offset())) {
                    ours.append(" AND w.").append(d.quote(column)).append(" = s.").append(d.quote(column));
                }
                guard.topic().ifPresent(column -> ours.append(" AND w.").append(d.quote(column))
                        .append(" IS NOT DISTINCT FROM s.").append(d.quote(column)));
                String ledger = match;
                try (java.sql.ResultSet rs = s.executeQuery("WITH undone AS (DELETE FROM " + table + " w USING pg_temp."
                        + d.quote(STAGING) + " s, " + k.table() + " t WHERE " + ours + " AND " + ledger + " AND NOT "
                        + k.guard().sql(d, "t.", "s.%s") + " RETURNING w." + d.quote(partition) + ") SELECT "
                        + d.quote(partition) + ", count(*) FROM undone GROUP BY 1")) {
                    while (rs.next()) {
                        left.merge(rs.getInt(1), rs.getLong(2), Long::sum);
                    }
                }
            }
            long out = 0;
            for (java.util.Map.Entry<Integer, Long> e : left.entrySet()) {
                if (e.getValue() > 0) {
                    keptOut.merge(e.getKey(), e.getValue(), Long::sum);
                    out += e.getValue();
                }
            }
            return out;
        } catch (SQLException | Binder.Mismatch | RuntimeException e) {
            stagingFor = null; // the transaction rolls back, and the staging table's creation with it
            throw e;
        }
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
