package dev.kbackfill.core.record;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.version.Version;

/**
 * Reduces a batch to the final state of each key: the last record per key, value or tombstone, by the one version
 * rule ({@link Version#RULE}) that every sink's newer-wins guard uses too. Keys are compared by their
 * {@link KeyIdentity}, so a key written with its fields in another order is the same key.
 *
 * <p>Writing only the final state keeps write/delete/write of one key in order, and databases that refuse to touch
 * a row twice in one statement (PostgreSQL's ON CONFLICT, MERGE) never see a duplicate key.
 */
public final class Reduction {

    private Reduction() {
    }

    public static List<Change> lastPerKey(Collection<Change> changes) {
        Pending last = new Pending();
        changes.forEach(last::add);
        return last.changes();
    }

    /**
     * A batch being reduced as its records arrive: one change per key (in the order keys first appeared), and per
     * partition how many records a later one of their key superseded.
     */
    public static final class Pending {
        private final Map<KeyIdentity, Change> last = new LinkedHashMap<>();
        private final Map<Integer, Long> superseded = new HashMap<>();

        public void add(Change c) {
            // one lookup per record; a replaced key keeps its first position
            last.merge(KeyIdentity.of(c.key()), c, (before, now) -> {
                boolean later = isLater(now, before);
                superseded.merge((later ? before : now).partition(), 1L, Long::sum);
                return later ? now : before;
            });
        }

        /** Distinct keys so far. */
        public int size() {
            return last.size();
        }

        public List<Change> changes() {
            return new ArrayList<>(last.values());
        }

        /** Per partition, the records dropped for a later record of their key. */
        public Map<Integer, Long> superseded() {
            return Map.copyOf(superseded);
        }
    }

    /** Whether {@code a} supersedes {@code b} for the same key (records of one topic: a batch reads one). */
    public static boolean isLater(Change a, Change b) {
        return a.version().supersedes(b.version());
    }
}
