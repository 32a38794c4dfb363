package dev.kbackfill.core.read;

/** Reading a range failed; the message names the partition and offsets. */
public final class ReadException extends RuntimeException {
    public ReadException(String message, Throwable cause) {
        super(message, cause);
    }
}
