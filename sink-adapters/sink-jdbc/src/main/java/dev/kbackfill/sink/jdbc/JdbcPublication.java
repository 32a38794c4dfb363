package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.core.sink.Publication;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;

/**
 * A rebuild of a table published after verification: the run writes {@code TABLE_kbackfill_shadow} (created like the
 * table), verify reads it, and the publish renames, in one transaction (PostgreSQL, SQLite) or one
 * {@code RENAME TABLE} (MariaDB, MySQL): the table to {@code TABLE_kbackfill_previous} (an older one of that name
 * dropped first), the shadow to the table, and their tombstone ledgers alike; the job that built the shadow is
 * forgotten with it, so that the same command rebuilds again.
 */
final class JdbcPublication implements Publication {

    static final String SHADOW = "_kbackfill_shadow";
    static final String PREVIOUS = "_kbackfill_previous";

    private final SinkSettings settings;
    private final Dialect dialect;
    private final TableName target;
    private final TableName shadow;
    private final TableName previous;
    private final SinkConnection connection;

    JdbcPublication(SinkSettings settings, Dialect dialect) {
        this.settings = settings;
        this.dialect = dialect;
        this.target = TableName.parse(settings.table());
        this.shadow = target.sibling(suffixed(target.name(), SHADOW));
        this.previous = target.sibling(suffixed(target.name(), PREVIOUS));
        this.connection = new SinkConnection(settings, dialect, settings.url() + ", table " + target);
    }

    /** {@code name + suffix}, shortened with a hash of the name where an identifier would be too long. */
    static String suffixed(String name, String suffix) {
        String full = name + suffix;
        return full.length() <= 63 ? full : name.substring(0, 30) + "_" + Integer.toHexString(name.hashCode()) + suffix;
    }

    @Override
    public SinkSettings shadow() {
        return settings.withTable(shadow.toString());
    }

    @Override
    public List<String> prepare() {
        try {
            Connection c = connection.currentOrConnect();
            if (exists(c, shadow) || !exists(c, target)) {
                c.rollback();
                return List.of();
            }
            List<String> done = dialect.createLike(c, shadow, target);
            c.commit();
            return done;
        } catch (SQLException e) {
            connection.rollbackQuietly();
            throw new SinkException("cannot create the shadow " + shadow + " like " + target + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean shadowExists() {
        try {
            Connection c = connection.currentOrConnect();
            boolean exists = exists(c, shadow);
            c.rollback();
            return exists;
        } catch (SQLException e) {
            throw new SinkException("cannot look for the shadow " + shadow + ": " + e.getMessage(), e);
        }
    }

    @Override
    public List<String> publish(String job) {
        List<String> done = new ArrayList<>();
        try {
            Connection c = connection.currentOrConnect();
            if (!exists(c, shadow)) {
                throw new SinkException("no shadow " + shadow + " to publish");
            }
            TableName previousLedger = target.sibling(TombstoneLedger.nameFor(previous.name()));
            TableName targetLedger = target.sibling(TombstoneLedger.nameFor(target.name()));
            TableName shadowLedger = target.sibling(TombstoneLedger.nameFor(shadow.name()));
            try (Statement s = c.createStatement()) {
                for (TableName old : List.of(previous, previousLedger)) {
                    if (exists(c, old)) {
                        s.execute("DROP TABLE " + old.quoted(dialect));
                        done.add("dropped the earlier " + old);
                    }
                }
            }
            List<TableName[]> renames = new ArrayList<>();
            if (exists(c, target)) {
                renames.add(new TableName[] {target, previous});
                done.add("kept the table it replaced as " + previous);
            }
            if (exists(c, targetLedger)) {
                renames.add(new TableName[] {targetLedger, previousLedger});
            }
            renames.add(new TableName[] {shadow, target});
            if (exists(c, shadowLedger)) {
                renames.add(new TableName[] {shadowLedger, targetLedger});
            }
            // the job first: where DDL commits by itself (MariaDB), a crash before the renames leaves the full shadow
            // and no job, and the same command rebuilds into it again (idempotent upserts), verifies and publishes
            new JobTables(dialect, target).delete(c, job);
            dialect.renameAll(c, renames);
            c.commit();
            done.add(0, "published " + shadow + " as " + target);
            return done;
        } catch (SQLException e) {
            connection.rollbackQuietly();
            throw new SinkException("cannot publish " + shadow + " as " + target + " (nothing was changed): "
                    + e.getMessage(), e);
        }
    }

    private static boolean exists(Connection c, TableName table) throws SQLException {
        return TargetTable.read(c, table).isPresent();
    }

    @Override
    public void close() {
        connection.close();
    }
}
