package dev.kbackfill.cli;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/** {@link ShapeProperty} on SQLite, PostgreSQL and MariaDB, each table created by the split write itself. */
@Tag("kafka")
class JdbcShapeIT {

    /** Every row of a table, by its kafka_key. */
    static Map<String, Map<String, String>> tableRows(String url, String table) throws Exception {
        Map<String, Map<String, String>> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            ResultSet tables = c.getMetaData().getTables(null, null, null, null);
            boolean exists = false;
            while (tables.next()) {
                exists |= tables.getString("TABLE_NAME").equalsIgnoreCase(table);
            }
            if (!exists) {
                return rows;
            }
            try (ResultSet rs = s.executeQuery("SELECT * FROM " + table)) {
                ResultSetMetaData md = rs.getMetaData();
                while (rs.next()) {
                    Map<String, String> row = new TreeMap<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        row.put(md.getColumnName(i).toLowerCase(Locale.ROOT), ShapeProperty.text(rs.getObject(i)));
                    }
                    rows.put(row.get("kafka_key"), row);
                }
            }
        }
        return rows;
    }

    @Nested
    class Sqlite extends ShapeProperty {
        @Override
        String sink(String name) {
            return "jdbc:sqlite:" + dir.resolve(name + ".db");
        }

        @Override
        Map<String, Map<String, String>> rows(String sink, String table) throws Exception {
            return tableRows(sink, table);
        }
    }

    @Nested
    @Tag("postgresql")
    class Postgres extends ShapeProperty {
        @Override
        String sink(String name) {
            return SharedPostgres.newDatabase("shape_" + name + "_" + System.nanoTime() % 100000);
        }

        @Override
        Map<String, Map<String, String>> rows(String sink, String table) throws Exception {
            return tableRows(sink, table);
        }
    }

    @Nested
    @Tag("mariadb")
    class MariaDb extends ShapeProperty {
        @Override
        String sink(String name) {
            return SharedMariaDb.newDatabase("shape_" + name + "_" + System.nanoTime() % 100000);
        }

        @Override
        Map<String, Map<String, String>> rows(String sink, String table) throws Exception {
            return tableRows(sink, table);
        }
    }
}
