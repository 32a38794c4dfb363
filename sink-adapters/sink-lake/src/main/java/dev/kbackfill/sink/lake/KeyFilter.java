package dev.kbackfill.sink.lake;

import java.util.List;
import java.util.Set;

/**
 * A batch's keys in a few bits each, asked before the batch's own key set by a probe that looks at the key of every
 * row of every candidate file. A touch of 1% of a table finds a key of the batch in one row of a hundred; for the
 * other 99 a lookup in a hash set of the batch's keys costs a cache miss or two (its table and its entries are spread
 * over megabytes: a third of the probe's CPU over 10M rows). This filter is one 64-bit word per lookup in an array of
 * about 2 bytes a key (a blocked Bloom filter: four bits of one word per key), small enough to stay in a core's cache.
 *
 * <p>No false negatives: a key's hash is {@link List#hashCode()}, which equal keys share (as they share their values'
 * hash codes); about 2% of the other keys pass, and the set decides them ({@link #wants}).
 */
public final class KeyFilter {

    private static final int MAX_WORDS = 1 << 22;

    private final Set<? extends List<?>> keys;
    private final long[] words;
    private final int mask;

    private KeyFilter(Set<? extends List<?>> keys, int wordCount) {
        this.keys = keys;
        this.words = new long[wordCount];
        this.mask = wordCount - 1;
    }

    /** A filter of the batch's {@code keys} (physical values, as the probe builds a row's key), kept to decide. */
    public static KeyFilter of(Set<? extends List<?>> keys) {
        // 16 to 32 bits a key: the power of two of words at or above a word per four keys (at most 32 MB)
        int wanted = (int) Math.min(MAX_WORDS, Math.max(1, ((long) keys.size() + 3) / 4));
        int count = Integer.highestOneBit(wanted);
        KeyFilter f = new KeyFilter(keys, count < wanted ? count << 1 : count);
        for (List<?> k : keys) {
            long z = mix(k.hashCode());
            f.words[f.index(z)] |= bits(z);
        }
        return f;
    }

    /** Whether {@code key} is one of the batch's: the filter first, then, for a key it lets pass, the set. */
    public boolean wants(List<?> key) {
        return mayContain(key) && keys.contains(key);
    }

    /** False only for a key certainly not among the filter's keys. */
    public boolean mayContain(List<?> key) {
        return mayContainHash(key.hashCode());
    }

    /**
     * {@link #mayContain} for a key known by its {@link List#hashCode()} alone (a reader that can hash a value before
     * it builds one: for one string column, {@code 31 + text.hashCode()}).
     */
    public boolean mayContainHash(int listHash) {
        long z = mix(listHash);
        long b = bits(z);
        return (words[index(z)] & b) == b;
    }

    /** The number of 64-bit words (for tests). */
    int words() {
        return words.length;
    }

    private int index(long z) {
        return (int) (z >>> 32) & mask;
    }

    /** Four bits of a word, from four 6-bit pieces of the hash's low half. */
    private static long bits(long z) {
        return 1L << (z & 63) | 1L << ((z >>> 6) & 63) | 1L << ((z >>> 12) & 63) | 1L << ((z >>> 18) & 63);
    }

    /** splitmix64's finaliser: spreads a 32-bit hash code over 64 bits. */
    private static long mix(int hash) {
        long z = hash * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
