package dev.kbackfill.sink.lake;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The keys a sink wrote into a table that was empty when it began, for as long as it is the table's only writer: a
 * set of 32-bit fingerprints of the keys' 64-bit hashes (open addressing, at most three quarters full, about 5 bytes a
 * key) that tells a key it certainly never wrote, so that a batch of new keys into a table this run is filling needs
 * no probe of the files written so far (a probe that random keys would make read every file, batch after batch).
 * A key never written passes only if its fingerprint equals one met on its way through the table: a few in a billion.
 * Each key costs one hash and, mostly, one cache line (a Bloom filter of the same accuracy costs some twenty lines a
 * key, and that was a tenth of a new table's CPU). Bounded: past {@code capacity} keys it is full and answers "maybe"
 * for every key, which is where the sinks probe as before.
 */
public final class WrittenKeys {

    private static final long SEED = 0x9E3779B97F4A7C15L;

    private final int[] slots;
    private final int mask;
    private final long capacity;
    private long keys;

    /** A set for up to {@code capacity} keys (a power of two of 4-byte slots, at least {@code capacity * 4 / 3}). */
    public WrittenKeys(long capacity) {
        long wanted = Math.max(8, (capacity * 4 + 2) / 3);
        long size = Long.highestOneBit(wanted) < wanted ? Long.highestOneBit(wanted) << 1 : wanted;
        this.slots = new int[Math.toIntExact(size)];
        this.mask = slots.length - 1;
        this.capacity = capacity;
    }

    /** A set sized for a heap: at most a sixteenth of it, and no more than 64 MB (12M keys). */
    public static WrittenKeys forHeap(long maxHeapBytes) {
        long bytes = Long.highestOneBit(Math.max(64, Math.min(64L << 20, maxHeapBytes / 16)));
        return new WrittenKeys(bytes / 4 * 3 / 4);
    }

    /** Whether the set holds as many keys as it was sized for: then every key may have been written. */
    public boolean full() {
        return keys >= capacity;
    }

    /** Records a written key (its physical values). */
    public void add(List<Object> key) {
        add(hash(key));
    }

    /**
     * Records written keys by their {@link #hash}es, in the order of the table's pages rather than the keys' own: a
     * batch of keys then sweeps the table once (one random cache line and TLB miss per key into a table of 64 MB was
     * a third of a new table's writer thread).
     */
    public void addAll(long[] hashes) {
        if (full()) {
            return; // no sweep for a set that takes no more keys
        }
        for (int i : byPage(hashes)) {
            add(hashes[i]);
        }
    }

    /** Whether each key of {@code hashes} ({@link #hash}) may have been added ({@link #mayContain}), in one sweep. */
    public boolean[] mayContainAll(long[] hashes) {
        boolean[] may = new boolean[hashes.length];
        if (full()) {
            java.util.Arrays.fill(may, true); // every key may have been written: no sweep
            return may;
        }
        for (int i : byPage(hashes)) {
            may[i] = mayContain(hashes[i]);
        }
        return may;
    }

    /** The positions of {@code hashes} in the order of the pages of their first slots (a counting sort). */
    private int[] byPage(long[] hashes) {
        int shift = Math.max(0, Integer.numberOfTrailingZeros(slots.length) - 12); // 4,096 runs (of 16 KB at 64 MB)
        int[] start = new int[(slots.length >>> shift) + 1];
        for (long h : hashes) {
            start[(index(h) >>> shift) + 1]++;
        }
        for (int b = 1; b < start.length; b++) {
            start[b] += start[b - 1];
        }
        int[] order = new int[hashes.length];
        for (int i = 0; i < hashes.length; i++) {
            order[start[index(hashes[i]) >>> shift]++] = i;
        }
        return order;
    }

    private void add(long h) {
        if (full()) {
            return;
        }
        int fingerprint = fingerprint(h);
        int i = index(h);
        while (slots[i] != 0) {
            if (slots[i] == fingerprint) {
                return; // this key again, or one that shares its place and fingerprint: either way it passes
            }
            i = (i + 1) & mask;
        }
        slots[i] = fingerprint;
        keys++;
    }

    /** False only for a key certainly never added. */
    public boolean mayContain(List<Object> key) {
        return mayContain(hash(key));
    }

    private boolean mayContain(long h) {
        if (full()) {
            return true;
        }
        int fingerprint = fingerprint(h);
        for (int i = index(h); slots[i] != 0; i = (i + 1) & mask) {
            if (slots[i] == fingerprint) {
                return true;
            }
        }
        return false;
    }

    /** The hash's low half, never 0 (which marks an empty slot). */
    private static int fingerprint(long h) {
        int f = (int) h;
        return f == 0 ? 1 : f;
    }

    /** The slot a hash starts at: its high half, independent of the fingerprint. */
    private int index(long h) {
        return (int) (h >>> 32) & mask;
    }

    /** A key's 64-bit hash: its fingerprint and its first slot. */
    public static long hash(List<Object> key) {
        long h = SEED;
        for (Object v : key) {
            h = mix(h ^ valueHash(v));
        }
        return h;
    }

    private static long valueHash(Object v) {
        if (v == null) {
            return SEED;
        }
        if (v instanceof CharSequence s) {
            long h = SEED ^ 0xCBF29CE484222325L;
            for (int i = 0; i < s.length(); i++) {
                h = (h ^ s.charAt(i)) * 0x100000001B3L;
            }
            return mix(h);
        }
        if (v instanceof Number n && !(v instanceof java.math.BigDecimal)) {
            return mix(SEED + n.longValue());
        }
        if (v instanceof ByteBuffer b) {
            long h = SEED ^ 0xCBF29CE484222325L;
            for (int i = b.position(); i < b.limit(); i++) {
                h = (h ^ (b.get(i) & 0xFF)) * 0x100000001B3L;
            }
            return mix(h);
        }
        return mix(SEED + v.hashCode());
    }

    /** splitmix64's finaliser. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
