package dev.kbackfill.sink.jdbc;

import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import dev.kbackfill.core.sink.ConflictMode;
import org.postgresql.PGConnection;

/**
 * PostgreSQL's bulk path: COPY a batch into a temporary staging table, then one
 * {@code INSERT .. SELECT .. ON CONFLICT .. WHERE guard} into the target, in the batch's transaction. Measured
 * against batched {@code INSERT .. ON CONFLICT} in docs/benchmarks.md.
 */
final class PostgresCopy {

    private static final String STAGING = "kbackfill_staging";

    private final Dialect d;
    private String stagingFor;

    PostgresCopy(Dialect dialect) {
        this.d = dialect;
    }

    /** Copies {@code csv} (rows of {@code columns}) and upserts it into {@code table}. */
    void upsert(Connection c, String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                String csv) throws SQLException {
        String signature = table + columns;
        try (Statement s = c.createStatement()) {
            if (!signature.equals(stagingFor)) {
                s.execute("DROP TABLE IF EXISTS pg_temp." + d.quote(STAGING));
                s.execute("CREATE TEMP TABLE " + d.quote(STAGING) + " (LIKE " + table + " INCLUDING DEFAULTS) "
                        + "ON COMMIT DELETE ROWS");
                stagingFor = signature;
            }
            String columnList = Sql.join(columns, d::quote);
            try {
                c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY " + d.quote(STAGING) + " (" + columnList
                        + ") FROM STDIN WITH (FORMAT csv)", new StringReader(csv));
            } catch (java.io.IOException e) {
                throw new SQLException("COPY into the staging table failed: " + e.getMessage(), e);
            }
            s.execute(OnConflictUpsert.sql(d, table, keys, columns, guard, mode,
                    " SELECT " + columnList + " FROM " + d.quote(STAGING)));
        } catch (SQLException e) {
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
