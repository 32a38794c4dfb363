package dev.kbackfill.core.sink;

import dev.kbackfill.core.record.Change;

/**
 * The destination refuses one record of a batch (a value its column cannot hold, text PostgreSQL cannot store):
 * a poison record like one that cannot be decoded, subject to the same policy ({@code --on-error},
 * {@code --dead-letter}). Nothing of the batch was written; the run writes the batch again without it, or fails
 * naming it.
 */
public final class RecordRejectedException extends SinkException {

    private final transient Change change;
    private final String reason;

    /** @param reason why, naming the column or type, e.g. {@code value 'x' does not fit column amount} */
    public RecordRejectedException(Change change, String reason, Throwable cause) {
        super("partition " + change.partition() + " offset " + change.offset() + ": " + reason, cause);
        this.change = change;
        this.reason = reason;
    }

    public Change change() {
        return change;
    }

    /** Why, without the record's coordinates. */
    public String reason() {
        return reason;
    }
}
