package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import dev.kbackfill.core.sink.SinkSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JDBC driver each database's dialect names: made by name, without DriverManager reading every jar for drivers. */
class ShippedDriverTest {

    @Test
    void eachDialectNamesADriverTheServicesFilesOfferThatTakesItsUrls() {
        List<String> offered = ServiceLoader.load(Driver.class).stream().map(p -> p.type().getName()).toList();
        Map<Dialect, String> urls = Map.of(new SqliteDialect(), "jdbc:sqlite:/tmp/k.db",
                new PostgresDialect(), "jdbc:postgresql://db:5432/app", new MariaDbDialect(), "jdbc:mariadb://db/app");
        urls.forEach((dialect, url) -> {
            String name = dialect.shippedDriver().orElseThrow();
            assertThat(offered).as(dialect.name()).contains(name);
            Driver driver = SinkConnection.driver(name).orElseThrow();
            assertThat(SinkConnection.driver(name)).containsSame(driver); // made once
            try {
                assertThat(driver.acceptsURL(url)).as(url).isTrue();
            } catch (java.sql.SQLException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(new MergeDialect(c -> "VARCHAR").shippedDriver()).isEmpty();
        assertThat(SinkConnection.driver("org.example.NoSuchDriver")).isEmpty();
    }

    @Test
    void aSqliteConnectionIsMadeByTheShippedDriverAndSetUpAsEveryOther(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("k.db");
        SinkSettings settings = new SinkSettings("jdbc:sqlite:" + file, "t", java.util.Optional.empty(),
                java.util.Optional.empty(), dev.kbackfill.core.sink.ConflictMode.NEWER_WINS,
                dev.kbackfill.core.sink.TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT);
        try (SinkConnection connection = new SinkConnection(settings, new SqliteDialect(), "test")) {
            Connection c = connection.connect();
            assertThat(c.getClass().getName()).startsWith("org.sqlite.");
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("PRAGMA journal_mode")) {
                r.next();
                assertThat(r.getString(1)).isEqualToIgnoringCase("wal"); // the dialect's session setup ran
            }
            c.close();
        }
        assertThat(Files.exists(file)).isTrue();
    }
}
