package dev.kbackfill.sink.lake;

/** A value that does not fit its column (a decimal with too many digits, text in a number column). */
public final class ValueMismatch extends Exception {
    public ValueMismatch(String message) {
        super(message);
    }
}
