package dev.kbackfill.core.read;

/** Reading a range failed; the message names the partition and offsets. */
public final class ReadException extends RuntimeException {

    private final boolean stalled;

    public ReadException(String message, Throwable cause) {
        this(message, cause, false);
    }

    private ReadException(String message, Throwable cause, boolean stalled) {
        super(message, cause);
        this.stalled = stalled;
    }

    /** No partition moved for the stall timeout: the broker did not answer, which may pass. */
    static ReadException stalled(String message) {
        return new ReadException(message, null, true);
    }

    /** Whether the reader stalled (rather than met deleted or missing offsets). */
    public boolean stalled() {
        return stalled;
    }
}
