package dev.kbackfill.sink.jdbc;

import java.util.List;

import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;

/** {@code --sink jdbc:...}: PostgreSQL, MySQL/MariaDB, SQLite, and databases with standard MERGE (H2). */
public final class JdbcSinkFactory implements SinkFactory {

    static final List<String> FORMS = List.of("jdbc:postgresql://HOST[:PORT]/DB", "jdbc:mariadb://HOST[:PORT]/DB",
            "jdbc:mysql://HOST[:PORT]/DB", "jdbc:sqlite:FILE", "jdbc:h2:...");

    @Override
    public boolean accepts(String url) {
        return dev.kbackfill.core.sink.SinkUrl.is(url, dev.kbackfill.core.sink.SinkUrl.Jdbc.class);
    }

    @Override
    public List<String> forms() {
        return FORMS;
    }

    @Override
    public Sink create(SinkSettings settings) {
        String url = settings.url();
        Dialect dialect;
        switch (((dev.kbackfill.core.sink.SinkUrl.Jdbc) settings.sinkUrl()).driver()) {
            case "postgresql" -> dialect = new PostgresDialect();
            case "mariadb" -> dialect = new MariaDbDialect();
            case "mysql" -> {
                // the MariaDB driver speaks to MySQL too when told it may take a jdbc:mysql URL
                url = url + (url.contains("?") ? "&" : "?") + "permitMysqlScheme";
                dialect = new MariaDbDialect();
            }
            case "sqlite" -> dialect = new SqliteDialect();
            default -> dialect = new MergeDialect(c -> "VARCHAR");
        }
        SinkSettings s = url.equals(settings.url()) ? settings : settings.withUrl(url);
        return new JdbcSink(s, dialect);
    }
}
