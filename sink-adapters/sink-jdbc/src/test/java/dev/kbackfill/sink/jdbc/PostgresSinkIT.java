package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("postgresql")
class PostgresSinkIT extends JdbcSinkContract {

    private static String url;

    @BeforeAll
    static void database() {
        url = SharedPostgres.newDatabase("sink_contract");
    }

    @Override
    String url() {
        return url;
    }

    @Override
    String timestampType() {
        return "timestamptz";
    }

    @Override
    Dialect dialect() {
        return new PostgresDialect();
    }

    /**
     * A retry closes the sink and opens it again on a new connection (after a database restart, say): the COPY
     * path's staging table is temporary, so it lived in the old session only and is made again.
     */
    @Test
    void aSinkOpenedAgainAfterAFailureMakesItsStagingTableAgain() throws Exception {
        Sink sink = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
        sink.open();
        try (Opened s = new Opened(sink, sink.jobStore().lock(job))) {
            s.sink.jobStore().begin(JobState.begin(job, "fingerprint", 1, plan()));
            s.write(batch(1, Map.of(0, 1L), row("a", "x", "1", 0, 0)));
            s.sink.close(); // what a retry does before it opens the sink again
            s.sink.open();
            s.write(batch(2, Map.of(0, 2L), row("b", "y", "2", 0, 1)));
        }
        assertThat(rows()).containsExactly("a=x/1@0:0", "b=y/2@0:1");
    }

    /** ICU's case-insensitive, non-deterministic collation (PostgreSQL 12+ built with ICU). */
    @Override
    String foldingKeyType() {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url()); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE COLLATION IF NOT EXISTS kbackfill_ci (provider = icu, locale = 'und-u-ks-level2', "
                    + "deterministic = false)");
            return "text COLLATE kbackfill_ci";
        } catch (java.sql.SQLException e) {
            return null; // a server built without ICU
        }
    }
}
