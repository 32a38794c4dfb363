package dev.kbackfill.core.run;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

import dev.kbackfill.core.read.ReadException;
import dev.kbackfill.core.registry.TransientRegistryException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Which failures are worth retrying: a database connection lost or refused, a server shutting down, a broker or
 * registry that does not answer now. Everything else (bad data, bad settings, a job conflict, data loss) fails at
 * once: retrying would not change the answer.
 */
public final class Transient {

    private Transient() {
    }

    /** Whether {@code error}, or a cause of it, is transient. */
    public static boolean is(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof dev.kbackfill.core.sink.TableDamagedException) {
                return false; // a file cut short ends in an end of file, which a retry reads again
            }
            if (t instanceof SQLTransientException || t instanceof SQLRecoverableException
                    || t instanceof RetriableException || t instanceof TransientRegistryException
                    || t instanceof java.net.ConnectException || t instanceof java.net.SocketException
                    || t instanceof java.net.SocketTimeoutException || t instanceof java.io.EOFException
                    || t instanceof Reported) {
                return true;
            }
            if (t instanceof SQLException sql && (transientState(sql.getSQLState()) || notAcceptingNow(sql))) {
                return true;
            }
            if (t instanceof ReadException read && read.stalled()) {
                return true; // the broker did not answer for the stall timeout
            }
        }
        return false;
    }

    /** A failure that another process (an engine's driver) found transient and reported as such. */
    public static final class Reported extends RuntimeException {
        public Reported(String message) {
            super(message);
        }
    }

    /**
     * PostgreSQL's refusal of a connection to a database that allows none for now (55000, "database ... is not
     * currently accepting connections": a restore, an upgrade, {@code ALLOW_CONNECTIONS false} for maintenance), which
     * a retry outlives; other failures of state 55000 are not transient.
     */
    static boolean notAcceptingNow(SQLException e) {
        return "55000".equals(e.getSQLState()) && String.valueOf(e.getMessage()).contains("not currently accepting "
                + "connections");
    }

    /**
     * SQL states of connection failures (class 08), of a server shutting down or restarting (PostgreSQL 57P01-03),
     * and of transactions to run again (40001 serialization, 40P01 deadlock; MySQL 40001 deadlock, HY000 lost
     * connection is not specific enough and is left out).
     */
    static boolean transientState(String state) {
        return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
                || state.equals("57P03") || state.equals("40001") || state.equals("40P01"));
    }
}
