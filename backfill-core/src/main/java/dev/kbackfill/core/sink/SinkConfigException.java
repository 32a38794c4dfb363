package dev.kbackfill.core.sink;

/**
 * The sink settings are wrong on their face or do not fit the destination (a malformed URL, a missing table
 * without {@code --create-table}, a value field with no column): bad input, exit 2, found before any write.
 */
public final class SinkConfigException extends SinkException {
    public SinkConfigException(String message) {
        super(message);
    }

    public SinkConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
