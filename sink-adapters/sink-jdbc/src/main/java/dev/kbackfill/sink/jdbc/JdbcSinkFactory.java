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
        return url.startsWith("jdbc:");
    }

    @Override
    public List<String> forms() {
        return FORMS;
    }

    @Override
    public Sink create(SinkSettings settings) {
        String url = settings.url();
        Dialect dialect;
        if (url.startsWith("jdbc:postgresql:")) {
            dialect = new PostgresDialect();
        } else if (url.startsWith("jdbc:mariadb:")) {
            dialect = new MariaDbDialect();
        } else if (url.startsWith("jdbc:mysql:")) {
            // the MariaDB driver speaks to MySQL too when told it may take a jdbc:mysql URL
            url = url + (url.contains("?") ? "&" : "?") + "permitMysqlScheme";
            dialect = new MariaDbDialect();
        } else if (url.startsWith("jdbc:sqlite:")) {
            dialect = new SqliteDialect();
        } else {
            dialect = new MergeDialect(c -> "VARCHAR");
        }
        SinkSettings s = url.equals(settings.url()) ? settings : settings.withUrl(url);
        return new JdbcSink(s, dialect);
    }
}
