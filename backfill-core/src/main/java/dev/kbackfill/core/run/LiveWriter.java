package dev.kbackfill.core.run;

import java.util.Locale;

import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.RequestException;

/**
 * {@code --live-writer}: whether another writer (the streaming pipeline that keeps the target current) writes the
 * target beside the backfill, under newer-wins. Beside one, rows without kbackfill's version are the live writer's,
 * whose place in the log is unknown: a run then reads the log after its range and writes a record only where it is
 * its key's last in the log (docs/semantics.md, "Beside a live writer").
 */
public enum LiveWriter {
    /** Beside a live writer exactly when the target holds a row without kbackfill's version when the run starts. */
    AUTO,
    /** Beside a live writer, whatever the target holds now (one that has not written yet, a new table). */
    YES,
    /** No other writer: a row without kbackfill's version was written before, and a newer record replaces it. */
    NO;

    /** How it is written on the command line and in a job's document. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * {@code auto}, {@code yes} or {@code no}.
     *
     * @throws RequestException for anything else
     */
    public static LiveWriter parse(String text) {
        for (LiveWriter w : values()) {
            if (w.label().equals(text == null ? "" : text.strip().toLowerCase(Locale.ROOT))) {
                return w;
            }
        }
        throw new RequestException("invalid --live-writer '" + text + "': expected auto (the default: beside a live "
                + "writer where the target holds rows kbackfill did not write), yes or no");
    }

    /**
     * What a row without kbackfill's version is to a run's records ({@link Version#replaces}).
     *
     * @param targetHoldsForeignRows whether the target holds such a row now (asked only for {@link #AUTO})
     */
    public Version.ForeignRows foreignRows(java.util.function.BooleanSupplier targetHoldsForeignRows) {
        return switch (this) {
            case YES -> Version.ForeignRows.NEWEST_IN_LOG;
            case NO -> Version.ForeignRows.REPLACED;
            case AUTO -> targetHoldsForeignRows.getAsBoolean() ? Version.ForeignRows.NEWEST_IN_LOG
                    : Version.ForeignRows.KEPT;
        };
    }
}
