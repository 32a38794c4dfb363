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

    /**
     * Two databases of one server each holding a table of one name (two jobs' job tables, two targets): each is read
     * as its own, not as the other's (MariaDB's metadata answers for every database unless asked for one).
     */
    @org.junit.jupiter.api.Test
    void aTableOfTheSameNameInAnotherDatabaseIsNotTakenForThisOne() throws Exception {
        String other = SharedMariaDb.newDatabase("sink_contract_other");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(other); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE same_name (a VARCHAR(10) PRIMARY KEY, only_there BIGINT)");
        }
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url)) {
            org.assertj.core.api.Assertions.assertThat(TargetTable.read(c, TableName.parse("same_name"))).isEmpty();
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("CREATE TABLE same_name (b VARCHAR(10) PRIMARY KEY)");
            }
            TargetTable here = TargetTable.read(c, TableName.parse("same_name")).orElseThrow();
            org.assertj.core.api.Assertions.assertThat(here.column("only_there")).isEmpty();
            org.assertj.core.api.Assertions.assertThat(here.primaryKey).containsExactly("b");
        }
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
    String textKeyType(int length) {
        return "VARCHAR(" + length + ") CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin";
    }

    @Override
    String foldingKeyType() {
        return "VARCHAR(50) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci";
    }

    @Override
    String boundedKeyType() {
        return "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin";
    }
}
