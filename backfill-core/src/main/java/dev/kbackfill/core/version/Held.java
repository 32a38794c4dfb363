package dev.kbackfill.core.version;

/**
 * What a target holds for a key, as the version rule sees it: nothing, a version kbackfill wrote (a row's, or a
 * delete's in a tombstone ledger), or a row another writer wrote, whose version is unknown (docs/semantics.md,
 * "Beside a live writer"). {@link Version#replaces} decides whether a record replaces it.
 */
public sealed interface Held {

    /** No row and no recorded delete. */
    Held NOTHING = new Nothing();

    /** What {@code version} says: nothing for null, else a version kbackfill wrote. */
    static Held of(Version version) {
        return version == null ? NOTHING : new Known(version);
    }

    /** No row and no recorded delete. */
    record Nothing() implements Held {
    }

    /** A row or a delete kbackfill wrote, at {@code version}. */
    record Known(Version version) implements Held {
        public Known {
            java.util.Objects.requireNonNull(version, "version");
        }
    }

    /**
     * A row without kbackfill's version: written by another writer (the live pipeline that keeps the table current),
     * or before kbackfill's columns existed. Its place in the log is unknown, never "older".
     *
     * @param field the row's own value of the job's version field ({@code --version-field}), where the row holds one
     *              in a column both writers fill (as {@link VersionField#valueOf} gives it: a {@link Long} or a
     *              {@link String}); null where it holds none, or the job has no version field
     */
    record Foreign(Comparable<?> field) implements Held {
    }
}
