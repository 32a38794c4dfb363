package dev.kbackfill.sink.jdbc;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SinkTarget;

/** {@code --sink jdbc:...}: PostgreSQL, MySQL/MariaDB, SQLite, and databases with standard MERGE (H2). */
public final class JdbcSinkFactory implements SinkFactory {

    static final List<String> FORMS = List.of("jdbc:postgresql://HOST[:PORT]/DB", "jdbc:mariadb://HOST[:PORT]/DB",
            "jdbc:mysql://HOST[:PORT]/DB", "jdbc:sqlite:FILE", "jdbc:h2:...");

    @Override
    public String scheme() {
        return "jdbc";
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.NAMED_TABLES, Capability.KEEPS_LEDGER);
    }

    /** Per-partition sub-jobs, each a transaction of its own: one writer for SQLite (one per file), else 8. */
    @Override
    public OnSpark onSpark(SinkTarget target) {
        return new OnSpark.PartitionTasks(driver(target.url()).equals("sqlite") ? 1 : 8);
    }

    /** A database's rows have no files to rewrite: compact prunes a table's tombstone ledger only. */
    @Override
    public String compact(SinkSettings settings, Compaction compaction) {
        throw new dev.kbackfill.core.sink.SinkConfigException("invalid --sink '" + SinkFactory.redact(settings.url())
                + "': a database table has no files to compact; for a JDBC sink compact prunes the table's tombstone "
                + "ledger: pass --forget-deletes-before TIME --table TABLE");
    }

    /** The driver's kind: {@code postgresql}, {@code mariadb}, {@code sqlite}, ... (what follows {@code jdbc:}). */
    static String driver(String url) {
        String rest = url.substring("jdbc:".length());
        int colon = rest.indexOf(':');
        return colon < 0 ? rest : rest.substring(0, colon);
    }

    @Override
    public List<String> forms() {
        return FORMS;
    }

    /**
     * OpenLineage's names: {@code postgres://HOST:PORT} and {@code DATABASE.SCHEMA.TABLE} (schema {@code public}
     * unless the table names one), {@code mysql://HOST:PORT} and {@code DATABASE.TABLE} for MariaDB and MySQL;
     * {@code sqlite://FILE} and the table for a SQLite file; other databases {@code DRIVER://HOST:PORT} and the table
     * as given.
     */
    @Override
    public Dataset dataset(SinkSettings settings) {
        String url = settings.url();
        String driver = driver(url);
        if (driver.equals("sqlite")) {
            return new Dataset("sqlite://" + SinkConnection.sqliteFile(url).map(Object::toString).orElse(":memory:"),
                    settings.table());
        }
        java.net.URI uri;
        try {
            uri = java.net.URI.create(url.substring("jdbc:".length()).split("[;?]")[0]);
        } catch (IllegalArgumentException e) {
            return SinkFactory.super.dataset(settings);
        }
        if (uri.getHost() == null) {
            return SinkFactory.super.dataset(settings);
        }
        String database = uri.getPath() == null ? "" : uri.getPath().replaceFirst("^/", "");
        List<String> parts = List.of(settings.table().split("\\."));
        return switch (driver) {
            case "postgresql" -> new Dataset("postgres://" + uri.getHost() + ":" + (uri.getPort() < 0 ? 5432 : uri.getPort()),
                    database + "." + (parts.size() > 1 ? settings.table() : "public." + settings.table()));
            case "mariadb", "mysql" -> new Dataset("mysql://" + uri.getHost() + ":" + (uri.getPort() < 0 ? 3306
                    : uri.getPort()), (parts.size() > 1 ? "" : database + ".") + settings.table());
            default -> new Dataset(driver + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort()),
                    settings.table());
        };
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

    /** A shadow beside the table, published by renames in one transaction (PostgreSQL, SQLite) or statement (MariaDB). */
    @Override
    public dev.kbackfill.core.sink.Publication publication(SinkSettings settings) {
        Dialect dialect = dialect(settings);
        if (dialect instanceof MergeDialect) {
            throw new dev.kbackfill.core.sink.SinkConfigException("--publish-after-verify is not available on "
                    + driver(settings.url()) + " databases: it is built for PostgreSQL, MariaDB/MySQL and SQLite");
        }
        return new JdbcPublication(withDriverUrl(settings), dialect);
    }

    private static Dialect dialect(SinkSettings settings) {
        return switch (driver(settings.url())) {
            case "postgresql" -> new PostgresDialect();
            case "mariadb", "mysql" -> new MariaDbDialect();
            case "sqlite" -> new SqliteDialect();
            default -> new MergeDialect(c -> "VARCHAR");
        };
    }

    /** The settings with the URL the driver takes: the MariaDB driver speaks to MySQL when told it may. */
    private static SinkSettings withDriverUrl(SinkSettings settings) {
        String url = settings.url();
        if (!"mysql".equals(driver(url))) {
            return settings;
        }
        return settings.withUrl(url + (url.contains("?") ? "&" : "?") + "permitMysqlScheme");
    }
}
