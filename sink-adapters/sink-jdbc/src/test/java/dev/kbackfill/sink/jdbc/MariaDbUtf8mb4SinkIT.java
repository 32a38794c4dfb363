package dev.kbackfill.sink.jdbc;

import dev.kbackfill.testservices.SharedMariaDb;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The contract's key cases on a MariaDB database whose default character set and collation are the ones a server
 * usually has ({@code utf8mb4}, {@code utf8mb4_general_ci}: case-, accent- and trailing-space-insensitive), beside
 * {@link MariaDbSinkIT}'s server default ({@code latin1_swedish_ci}): tables kbackfill creates there compare keys
 * byte for byte whatever the database's default.
 */
@Tag("mariadb")
class MariaDbUtf8mb4SinkIT extends JdbcSinkContract {

    private static String url;

    @BeforeAll
    static void database() throws Exception {
        url = SharedMariaDb.newDatabase("sink_contract_utf8mb4");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url); java.sql.Statement s = c.createStatement()) {
            s.execute("ALTER DATABASE sink_contract_utf8mb4 CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci");
        }
    }

    /** The cases about keys; the rest run on {@link MariaDbSinkIT}. */
    @Override
    protected boolean runs(String test) {
        return test.contains("Key") || test.contains("key");
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
    String floatType() {
        return "FLOAT";
    }

    @Override
    Dialect dialect() {
        return new MariaDbDialect();
    }

    @Override
    String foldingKeyType() {
        return "VARCHAR(50)"; // the database's default collation
    }

    @Override
    String boundedKeyType() {
        return "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin";
    }
}
