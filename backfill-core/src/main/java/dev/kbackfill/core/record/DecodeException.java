package dev.kbackfill.core.record;

/** A record that cannot be decoded; the message names its coordinates. */
public final class DecodeException extends RuntimeException {
    private final SourceRecord record;

    public DecodeException(SourceRecord record, String message, Throwable cause) {
        super(record.coordinates() + ": " + message, cause);
        this.record = record;
    }

    public SourceRecord record() {
        return record;
    }
}
