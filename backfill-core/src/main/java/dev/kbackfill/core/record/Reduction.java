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
     * A superseded record of a key, by its coordinates only (no values): what a run reads back when the sink refuses
     * the key's last record, so that the key keeps its last record the sink accepts, whatever the split into batches.
     *
     * @param field     the version field it was stamped with (a tombstone's comes from the records before it)
     * @param tombstone whether it was a delete
     */
    public record Earlier(int partition, long offset, long timestamp, long logTime, Comparable<?> field,
                          boolean tombstone) {
        static Earlier of(Change c) {
            return new Earlier(c.partition(), c.offset(), c.timestamp(), c.logTime(), c.versionField(), c.isTombstone());
        }

        /** Its version, as a change's ({@link Change#version()}). */
        public Version version() {
            return new Version(null, partition, offset, timestamp, logTime, field);
        }
    }

    /**
     * A batch being reduced as its records arrive: one change per key (in the order keys first appeared), and per
     * partition how many records a later one of their key superseded.
     */
    public static final class Pending {
        private final Map<KeyIdentity, Change> last;
        private final Map<Integer, Long> superseded = new HashMap<>();
        /** Per key, its superseded records' coordinates, where kept ({@link #Pending(boolean)}); else null. */
        private final Map<KeyIdentity, List<Earlier>> earlier;

        public Pending() {
            this(false);
        }

        /**
         * @param keepEarlier keep the coordinates of every superseded record per key ({@link #earlier()}), for a run
         *                    whose sink may refuse a key's last record without failing the run
         */
        public Pending(boolean keepEarlier) {
            this(keepEarlier, 0);
        }

        /**
         * @param expectedKeys the keys the batch will likely hold (the last batch's): the map is made that large at
         *                     once, not grown and rehashed through every power of two on the way
         */
        public Pending(boolean keepEarlier, int expectedKeys) {
            this.last = new LinkedHashMap<>(capacityFor(expectedKeys));
            this.earlier = keepEarlier ? new HashMap<>() : null;
        }

        public void add(Change c) {
            // one lookup per record; a replaced key keeps its first position
            KeyIdentity key = KeyIdentity.of(c.key());
            last.merge(key, c, (before, now) -> {
                boolean later = isLater(now, before);
                Change dropped = later ? before : now;
                superseded.merge(dropped.partition(), 1L, Long::sum);
                if (earlier != null) {
                    earlier.computeIfAbsent(key, k -> new ArrayList<>(2)).add(Earlier.of(dropped));
                }
                return later ? now : before;
            });
        }

        /** Per key with any, the coordinates of its superseded records (empty unless kept), in no order. */
        public Map<KeyIdentity, List<Earlier>> earlier() {
            return earlier == null ? Map.of() : earlier;
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

    /** A hash map's initial capacity that holds {@code entries} without a resize (at its default load factor). */
    public static int capacityFor(int entries) {
        return entries < 12 ? 16 : (int) Math.min(1 << 30, entries / 3L * 4 + 4);
    }

    /** Whether {@code a} supersedes {@code b} for the same key (records of one topic: a batch reads one). */
    public static boolean isLater(Change a, Change b) {
        return a.version().supersedes(b.version());
    }
}
