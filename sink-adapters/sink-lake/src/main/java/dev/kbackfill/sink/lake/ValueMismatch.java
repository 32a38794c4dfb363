package dev.kbackfill.sink.lake;

import java.util.Optional;

import dev.kbackfill.core.sink.NarrowNumber;

/** A value that does not fit its column (a decimal with too many digits, text in a number column). */
public final class ValueMismatch extends Exception {

    private final NarrowNumber narrow;

    public ValueMismatch(String message) {
        this(message, null);
    }

    /** A number a narrow column cannot hold but its 64-bit type would ({@link NarrowNumber}). */
    public ValueMismatch(String message, NarrowNumber narrow) {
        super(message);
        this.narrow = narrow;
    }

    /** The narrow width the value does not fit, where a wider column of its family would hold it. */
    public Optional<NarrowNumber> widens() {
        return Optional.ofNullable(narrow);
    }
}
