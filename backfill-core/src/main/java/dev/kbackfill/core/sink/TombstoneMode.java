package dev.kbackfill.core.sink;

import java.util.Locale;

import dev.kbackfill.resolver.RequestException;

/** What a tombstone (a record with a null value) does ({@code --on-tombstone}). */
public enum TombstoneMode {
    /** Delete the key's row (subject to the conflict mode's guard). The default. */
    DELETE,
    /** Keep the row, marked deleted with the tombstone's coordinates, so an older replay cannot resurrect it. */
    SOFT_DELETE,
    /** Skip tombstones; they are counted as filtered. */
    IGNORE;

    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static TombstoneMode parse(String text) {
        for (TombstoneMode m : values()) {
            if (m.label().equalsIgnoreCase(text.strip())) {
                return m;
            }
        }
        throw new RequestException("invalid --on-tombstone '" + text + "': expected delete, soft-delete or ignore");
    }
}
