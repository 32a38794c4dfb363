package dev.kbackfill.sink.jdbc;

import java.util.List;

import dev.kbackfill.core.sink.JobStore;
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
        Dialect dialect = dialect(settings);
        return new JdbcSink(withDriverUrl(settings), dialect);
    }

    /** Only the store of the database's jobs, on a connection of its own: no table is read. */
    @Override
    public JobStore createJobStore(SinkSettings settings) {
        Dialect dialect = dialect(settings);
        SinkSettings s = withDriverUrl(settings);
        TableName table = TableName.parse(s.table());
        String target = SinkFactory.canonical(s.url()) + ", table " + table;
        return new JdbcJobStore(new SinkConnection(s, dialect, target), dialect, table, s, target);
    }

    private static Dialect dialect(SinkSettings settings) {
        return switch (((dev.kbackfill.core.sink.SinkUrl.Jdbc) settings.sinkUrl()).driver()) {
            case "postgresql" -> new PostgresDialect();
            case "mariadb", "mysql" -> new MariaDbDialect();
            case "sqlite" -> new SqliteDialect();
            default -> new MergeDialect(c -> "VARCHAR");
        };
    }

    /** The settings with the URL the driver takes: the MariaDB driver speaks to MySQL when told it may. */
    private static SinkSettings withDriverUrl(SinkSettings settings) {
        String url = settings.url();
        if (!"mysql".equals(((dev.kbackfill.core.sink.SinkUrl.Jdbc) settings.sinkUrl()).driver())) {
            return settings;
        }
        return settings.withUrl(url + (url.contains("?") ? "&" : "?") + "permitMysqlScheme");
    }
}
