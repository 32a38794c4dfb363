package dev.kbackfill.sink.lake;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Whether every row of a lake table is one this sink wrote, and with which keys: from a commit on the table while it
 * held no row, for as long as each commit since is this sink's, made on the version its commit before made. Then a
 * batch's keys this sink certainly never wrote ({@link WrittenKeys}) have no row to find, and need no probe: on a new
 * table, the probe of the files written so far, which a run's random keys would make read every file, batch after
 * batch. A version is what the format calls one (Iceberg's snapshot id, Delta's version number); the sink says
 * which its commits were made on and made.
 */
public final class OwnWrites {

    private final long maxHeapBytes;
    /** The keys written while every row is this sink's; null when that is not known. */
    private WrittenKeys written;
    /** The version this sink's last commit made. */
    private Object last;

    /** Written keys sized for a heap of {@code maxHeapBytes} ({@link WrittenKeys#forHeap}). */
    public OwnWrites(long maxHeapBytes) {
        this.maxHeapBytes = maxHeapBytes;
    }

    /** For this JVM's heap. */
    public static OwnWrites forThisHeap() {
        return new OwnWrites(Runtime.getRuntime().maxMemory());
    }

    /**
     * The keys among {@code keys} a batch planned on version {@code base} must look for in the table: those this sink
     * may have written where {@code base} is the version its last commit made and every row is its own, else all.
     *
     * @param keyOrdinals the table's columns of the keys' values, in the keys' order (a batch orders a compound key
     *                    as its records do; a key is known whatever the order it came in)
     */
    public Set<List<Object>> toProbe(Object base, Set<List<Object>> keys, int[] keyOrdinals) {
        if (written == null || base == null || !base.equals(last)) {
            return keys;
        }
        List<List<Object>> all = List.copyOf(keys);
        boolean[] may = written.mayContainAll(hashes(all, keyOrdinals));
        Set<List<Object>> maybe = new HashSet<>();
        for (int i = 0; i < may.length; i++) {
            if (may[i]) {
                maybe.add(all.get(i));
            }
        }
        return maybe;
    }

    /**
     * Keeps the written keys after a commit of this sink's that wrote {@code keys} (none for a commit of state only).
     *
     * @param base      the version the commit was made on (null: the table had none)
     * @param fromEmpty whether {@code base} held no row (no version yet, or a table this sink just created empty)
     * @param onBase    whether the commit's version directly follows {@code base}: no other commit came between
     * @param made      the version the commit made (null where the sink cannot tell: nothing is known after it)
     * @param keyOrdinals as for {@link #toProbe}
     */
    public void committed(Object base, boolean fromEmpty, boolean onBase, Object made, Collection<List<Object>> keys,
                          int[] keyOrdinals) {
        if (made == null || !onBase) {
            written = null;
        } else if (written == null && fromEmpty) {
            written = WrittenKeys.forHeap(maxHeapBytes);
        } else if (written != null && !Objects.equals(base, last)) {
            written = null; // a commit of another's (or one not counted here) came between this sink's two
        }
        if (written != null) {
            written.addAll(hashes(keys, keyOrdinals));
        }
        last = made;
    }

    /** The keys' hashes ({@link WrittenKeys#hash}), each key's values in table order, in the keys' order. */
    private static long[] hashes(Collection<List<Object>> keys, int[] keyOrdinals) {
        int[] order = tableOrder(keyOrdinals);
        long[] hashes = new long[keys.size()];
        int i = 0;
        for (List<Object> k : keys) {
            hashes[i++] = WrittenKeys.hash(inOrder(k, order));
        }
        return hashes;
    }

    /** The positions of a key's values in the order of their columns in the table; null where that is the keys' own. */
    private static int[] tableOrder(int[] keyOrdinals) {
        for (int i = 1; i < keyOrdinals.length; i++) {
            if (keyOrdinals[i - 1] > keyOrdinals[i]) {
                Integer[] order = new Integer[keyOrdinals.length];
                for (int j = 0; j < order.length; j++) {
                    order[j] = j;
                }
                java.util.Arrays.sort(order, java.util.Comparator.comparingInt(j -> keyOrdinals[j]));
                return java.util.Arrays.stream(order).mapToInt(Integer::intValue).toArray();
            }
        }
        return null;
    }

    private static List<Object> inOrder(List<Object> key, int[] order) {
        if (order == null) {
            return key;
        }
        Object[] values = new Object[order.length];
        for (int i = 0; i < order.length; i++) {
            values[i] = key.get(order[i]);
        }
        return java.util.Arrays.asList(values);
    }

    /** Forgets what was written: a commit this sink cannot follow was made (by an engine in its name, say). */
    public void forget() {
        written = null;
        last = null;
    }
}
