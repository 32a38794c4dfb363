package dev.kbackfill.core.verify;

import java.util.Locale;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.version.Version;

/**
 * The class a key of a verified range falls in: what the range says its final state is (the change that the one
 * version rule keeps for it, value or delete) against what the target holds.
 */
public enum Verdict {
    /** The target holds the range's final state: its value at its version, or no row where it ends in a delete. */
    MATCHING,
    /** The range ends in a value; the target has no row (and no newer delete). */
    MISSING,
    /** The range ends in a delete; the target has a live row that is not newer. */
    EXTRA,
    /** The target holds an older version than the range's last. */
    STALE,
    /**
     * The target holds a newer version (a value or a delete) than the range's last: what newer-wins keeps when
     * another run or job wrote later records of the key. Reported apart; not a disagreement.
     */
    NEWER,
    /**
     * The target claims a newer version than the range's last whose record the log no longer holds (retention
     * deleted it, compaction removed it, or its topic is gone): what the row holds cannot be checked. Not a newer
     * version verify has seen, so not agreement.
     */
    UNCONFIRMED,
    /**
     * The target holds the range's last version with other values (corruption, a row changed by hand), or, where
     * it keeps no versions, other values than the range's last.
     */
    DIFFERENT;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether a key in this class means the target does not hold the range's final state. */
    public boolean disagrees() {
        return this == MISSING || this == EXTRA || this == STALE || this == DIFFERENT || this == UNCONFIRMED;
    }

    /**
     * Judges one key.
     *
     * @param expected the range's final change of the key
     * @param version  its version (its coordinates in the range's topic)
     * @param held     what the target holds for the key, or null for nothing (no row, no delete recorded)
     */
    public static Verdict judge(Change expected, Version version, TargetRow held) {
        if (held != null && held.live()) {
            if (held.duplicated()) {
                return DIFFERENT; // the key is held twice: no single row is the range's final state
            }
            Version stored = held.version();
            if (expected.isTombstone()) {
                return stored != null && Version.compare(stored, version) > 0 ? NEWER : EXTRA;
            }
            if (stored == null) {
                return held.differing().isEmpty() ? MATCHING : DIFFERENT;
            }
            int c = Version.compare(stored, version);
            if (c != 0) {
                return c < 0 ? STALE : NEWER;
            }
            // the same version by the rule, which does not order by a record's own timestamp: a row must hold it too
            return held.differing().isEmpty() && stored.timestamp() == version.timestamp() ? MATCHING : DIFFERENT;
        }
        if (expected.isTombstone()) {
            return MATCHING; // no live row: deleted, whichever delete the target recorded
        }
        Version deleted = held == null ? null : held.deletedAt();
        return deleted != null && Version.compare(deleted, version) > 0 ? NEWER : MISSING;
    }
}
