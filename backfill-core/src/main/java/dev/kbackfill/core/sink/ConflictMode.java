package dev.kbackfill.core.sink;

import java.util.Locale;

import dev.kbackfill.resolver.RequestException;

/** What a write does when the key already has a row ({@code --on-conflict}). */
public enum ConflictMode {
    /**
     * Update only when the incoming record is not older than the stored one: a higher or equal offset of the same
     * partition, else a later or equal timestamp. A replay of old data never regresses a newer row. The default.
     */
    NEWER_WINS,
    /** Last write wins. */
    OVERWRITE,
    /** Only new keys are written; existing rows are kept. */
    INSERT_ONLY;

    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static ConflictMode parse(String text) {
        for (ConflictMode m : values()) {
            if (m.label().equalsIgnoreCase(text.strip())) {
                return m;
            }
        }
        throw new RequestException("invalid --on-conflict '" + text + "': expected newer-wins, overwrite or insert-only");
    }
}
