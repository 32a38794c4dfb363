package dev.kbackfill.sink.jdbc;

import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** The contract again on PostgreSQL's batched INSERT path (the default is COPY into staging). */
@Tag("postgresql")
class PostgresBatchedSinkIT extends JdbcSinkContract {

    private static String url;

    @BeforeAll
    static void database() {
        System.setProperty("kbackfill.pg.batched", "true");
        url = SharedPostgres.newDatabase("sink_contract_batched");
    }

    @AfterAll
    static void back() {
        System.clearProperty("kbackfill.pg.batched");
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
}
