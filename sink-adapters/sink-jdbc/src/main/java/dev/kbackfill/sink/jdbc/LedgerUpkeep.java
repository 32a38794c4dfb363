package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;

import dev.kbackfill.core.sink.Maintenance;
import dev.kbackfill.core.sink.SinkException;

/** A database destination's upkeep ({@code kbackfill compact}): pruning its tombstone ledger, on its connection. */
final class LedgerUpkeep implements Maintenance {

    private final SinkConnection db;
    private final TombstoneLedger ledger;
    private final Dialect dialect;
    private final String target;

    LedgerUpkeep(SinkConnection db, TombstoneLedger ledger, Dialect dialect, String target) {
        this.db = db;
        this.ledger = ledger;
        this.dialect = dialect;
        this.target = target;
    }

    @Override
    public long forgetDeletesBefore(Instant before) {
        Connection connection = db.current();
        if (connection == null) {
            return 0; // a SQLite file no run created: no ledger
        }
        try {
            long n = ledger.forgetBefore(connection, dialect, before);
            connection.commit();
            return n;
        } catch (SQLException e) {
            db.rollbackQuietly();
            throw new SinkException("cannot prune the tombstone ledger " + ledger.name() + " in " + target + ": "
                    + e.getMessage(), e);
        }
    }
}
