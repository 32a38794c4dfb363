package dev.kbackfill.sink.jdbc;

import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

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
}
