package dev.kbackfill.core.sink;

/**
 * The destination refused or failed: unreachable, a missing table, a type mismatch. The message names the table,
 * the column or the record coordinates involved. Whatever batch was being written was rolled back.
 */
public class SinkException extends RuntimeException {
    public SinkException(String message) {
        super(message);
    }

    public SinkException(String message, Throwable cause) {
        super(message, cause);
    }
}
