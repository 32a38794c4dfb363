package dev.kbackfill.sink.jdbc;

import dev.kbackfill.testservices.SharedMariaDb;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

@Tag("mariadb")
class MariaDbSinkIT extends JdbcSinkContract {

    private static String url;

    @BeforeAll
    static void database() {
        url = SharedMariaDb.newDatabase("sink_contract");
    }

    @Override
    String url() {
        return url;
    }

    @Override
    String timestampType() {
        return "DATETIME(6)";
    }

    @Override
    Dialect dialect() {
        return new MariaDbDialect();
    }
}
