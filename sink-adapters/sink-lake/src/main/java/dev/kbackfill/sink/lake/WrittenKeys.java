package dev.kbackfill.sink.lake;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The keys a sink wrote into a table that was empty when it began, for as long as it is the table's only writer: a
 * Bloom filter (32 bits a key, about two false positives in ten million) that tells a key it certainly never wrote,
 * so that a batch of new keys into a table this run is filling needs no probe of the files written so far (a probe
 * that random keys would make read every file, batch after batch). Bounded: past {@code capacity} keys it is full and
 * answers "maybe" for every key, which is where the sinks probe as before.
 */
public final class WrittenKeys {

    private static final int BITS_PER_KEY = 32;
    private static final int HASHES = 22;

    private final long[] bits;
    private final long size;
    private final long capacity;
    private long keys;

    /** A filter for up to {@code capacity} keys ({@code capacity * 4} bytes). */
    public WrittenKeys(long capacity) {
        this.capacity = capacity;
        this.size = Math.max(64, capacity * BITS_PER_KEY);
        this.bits = new long[Math.toIntExact((size + 63) / 64)];
    }

    /** A filter sized for a heap: at most a sixteenth of it, and no more than 64 MB (16M keys). */
    public static WrittenKeys forHeap(long maxHeapBytes) {
        long bytes = Math.min(64L << 20, maxHeapBytes / 16);
        return new WrittenKeys(bytes / (BITS_PER_KEY / 8));
    }

    /** Whether the filter holds as many keys as it was sized for: then every key may have been written. */
    public boolean full() {
        return keys >= capacity;
    }

    /** Records a written key (its physical values). */
    public void add(List<Object> key) {
        long h1 = hash(key, 0x9E3779B97F4A7C15L);
        long h2 = hash(key, 0xC2B2AE3D27D4EB4FL) | 1;
        for (int i = 0; i < HASHES; i++) {
            long bit = Math.floorMod(h1 + i * h2, size);
            bits[(int) (bit >>> 6)] |= 1L << (bit & 63);
        }
        keys++;
    }

    /** False only for a key certainly never added. */
    public boolean mayContain(List<Object> key) {
        if (full()) {
            return true;
        }
        long h1 = hash(key, 0x9E3779B97F4A7C15L);
        long h2 = hash(key, 0xC2B2AE3D27D4EB4FL) | 1;
        for (int i = 0; i < HASHES; i++) {
            long bit = Math.floorMod(h1 + i * h2, size);
            if ((bits[(int) (bit >>> 6)] & (1L << (bit & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    private static long hash(List<Object> key, long seed) {
        long h = seed;
        for (Object v : key) {
            h = mix(h ^ valueHash(v, seed));
        }
        return h;
    }

    private static long valueHash(Object v, long seed) {
        if (v == null) {
            return seed;
        }
        if (v instanceof CharSequence s) {
            long h = seed ^ 0xCBF29CE484222325L;
            for (int i = 0; i < s.length(); i++) {
                h = (h ^ s.charAt(i)) * 0x100000001B3L;
            }
            return mix(h);
        }
        if (v instanceof Number n && !(v instanceof java.math.BigDecimal)) {
            return mix(seed + n.longValue());
        }
        if (v instanceof ByteBuffer b) {
            long h = seed ^ 0xCBF29CE484222325L;
            for (int i = b.position(); i < b.limit(); i++) {
                h = (h ^ (b.get(i) & 0xFF)) * 0x100000001B3L;
            }
            return mix(h);
        }
        return mix(seed + v.hashCode());
    }

    /** splitmix64's finaliser. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
