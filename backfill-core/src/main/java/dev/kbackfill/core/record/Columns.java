package dev.kbackfill.core.record;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * A decoded record's columns, read-only, in field order: the names shared by every record of the same shape, the
 * values in an array. A batch holds one decoded record per key until it is written, and a {@code LinkedHashMap} of
 * ten fields costs about 400 bytes more than this per record (docs/benchmarks.md).
 */
public final class Columns extends AbstractMap<String, Object> {

    /** Field names in order, with their positions; one instance serves every record of one shape. */
    private static final class Names {
        final String[] names;
        final Map<String, Integer> index;
        /** The names as a read-only set in their order: every record's {@link #keySet()}. */
        final Set<String> keys;
        /** For names derived by {@link #without}: each name's position in the names it was derived from. */
        final int[] from;
        /** The last names derived from these by {@link #without}, and without which fields (a decoder asks for one). */
        private volatile Derived derived;

        Names(String[] names, Map<String, Integer> index) {
            this(names, index, null);
        }

        private Names(String[] names, Map<String, Integer> index, int[] from) {
            this.names = names;
            this.index = index;
            this.keys = java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(Arrays.asList(names)));
            this.from = from;
        }

        /** These names without {@code fields}, in order: the same instance for every record of this shape. */
        Names without(java.util.List<String> fields) {
            Derived d = derived;
            if (d != null && (d.fields == fields || d.fields.equals(fields))) {
                return d.names;
            }
            int[] kept = new int[names.length];
            int n = 0;
            for (int i = 0; i < names.length; i++) {
                if (!fields.contains(names[i])) {
                    kept[n++] = i;
                }
            }
            Names result = this;
            if (n < names.length) {
                String[] keptNames = new String[n];
                Map<String, Integer> keptIndex = new HashMap<>(n * 2);
                for (int i = 0; i < n; i++) {
                    keptNames[i] = names[kept[i]];
                    keptIndex.put(keptNames[i], i);
                }
                result = new Names(keptNames, keptIndex, Arrays.copyOf(kept, n));
            }
            derived = new Derived(fields, result);
            return result;
        }

        boolean sameAs(String[] other, int size) {
            if (names.length != size) {
                return false;
            }
            for (int i = 0; i < size; i++) {
                String a = names[i];
                String b = other[i];
                if (a != b && !a.equals(b)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Names derived from others, and without which fields. */
    private record Derived(java.util.List<String> fields, Names names) {
    }

    private final Names names;
    private final Object[] values;

    private Columns(Names names, Object[] values) {
        this.names = names;
        this.values = values;
    }

    @Override
    public int size() {
        return values.length;
    }

    /**
     * These columns without those of {@code fields} (a row's key fields, which its key columns hold), in order. Every
     * record of one shape gets the same shape back, so what is checked once per shape stays checked once; a
     * {@code LinkedHashMap} copy per record cost a run keyed by value fields a fifth more allocation and its
     * per-shape checks.
     */
    public Columns without(java.util.List<String> fields) {
        Names derived = names.without(fields);
        if (derived == names) {
            return this;
        }
        Object[] kept = new Object[derived.from.length];
        for (int i = 0; i < kept.length; i++) {
            kept[i] = values[derived.from[i]];
        }
        return new Columns(derived, kept);
    }

    /** What every record of this one's shape (the same field names in the same order) shares: for caching by shape. */
    Object shape() {
        return names;
    }

    @Override
    public boolean containsKey(Object key) {
        return names.index.containsKey(key);
    }

    @Override
    public Object get(Object key) {
        Integer i = names.index.get(key);
        return i == null ? null : values[i];
    }

    @Override
    public void forEach(BiConsumer<? super String, ? super Object> action) {
        for (int i = 0; i < values.length; i++) {
            action.accept(names.names[i], values[i]);
        }
    }

    /** The names, shared by every record of this shape (AbstractMap's would be a view kept per record). */
    @Override
    public Set<String> keySet() {
        return names.keys;
    }

    @Override
    public Set<Entry<String, Object>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Entry<String, Object>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < values.length;
                    }

                    @Override
                    public Entry<String, Object> next() {
                        if (next >= values.length) {
                            throw new NoSuchElementException();
                        }
                        int i = next++;
                        return new SimpleImmutableEntry<>(names.names[i], values[i]);
                    }
                };
            }

            @Override
            public int size() {
                return values.length;
            }
        };
    }

    /**
     * Collects one record's fields in order; reuses the names of the previous record when its shape is the same
     * (a decoder sees the same fields record after record). Not thread-safe: one builder per decoding thread.
     */
    public static final class Builder {
        private String[] pendingNames = new String[16];
        private Object[] pendingValues = new Object[16];
        private int size;
        private Names last;
        /** The JSON parser's buffers, kept from record to record on this builder's thread. */
        final com.fasterxml.jackson.core.util.BufferRecycler jsonBuffers =
                new com.fasterxml.jackson.core.util.BufferRecycler();

        /** Adds a field; a name given twice keeps its first position and its last value, as a JSON reader does. */
        public Builder put(String name, Object value) {
            if (size == pendingNames.length) {
                pendingNames = Arrays.copyOf(pendingNames, size * 2);
                pendingValues = Arrays.copyOf(pendingValues, size * 2);
            }
            pendingNames[size] = name;
            pendingValues[size] = value;
            size++;
            return this;
        }

        /** The name of field {@code position} in the shape built last, or null: a reader reuses it where it recurs. */
        String previousName(int position) {
            return last == null || position >= last.names.length ? null : last.names[position];
        }

        /** Per field position, the string value read there last, and how many strings in a row were new there. */
        private String[] lastStrings = new String[16];
        private int[] newStrings = new int[16];

        /**
         * The string {@code bytes[start, end)} (ASCII) read at field {@code position}: the one read there last where
         * it is the same, else a new one. An enum-like field (a status, a currency, a constant) then holds one copy
         * for a whole batch instead of one per record: a third of a decoded order record's memory. A field whose
         * values keep changing is compared only once in 64 records after 16 new ones in a row, so unique values
         * cost almost nothing more.
         */
        String string(int position, byte[] bytes, int start, int end) {
            if (position >= lastStrings.length) {
                lastStrings = Arrays.copyOf(lastStrings, Math.max(position + 1, lastStrings.length * 2));
                newStrings = Arrays.copyOf(newStrings, lastStrings.length);
            }
            String last = lastStrings[position];
            int misses = newStrings[position];
            if (last != null && (misses < 16 || (misses & 63) == 0) && sameAscii(last, bytes, start, end)) {
                newStrings[position] = 0;
                return last;
            }
            String s = new String(bytes, start, end - start, java.nio.charset.StandardCharsets.ISO_8859_1);
            lastStrings[position] = s;
            newStrings[position] = misses == Integer.MAX_VALUE ? 16 : misses + 1;
            return s;
        }

        /** Whether {@code s} is the ASCII text {@code bytes[start, end)}: how a reader reuses a name or value. */
        static boolean sameAscii(String s, byte[] bytes, int start, int end) {
            if (s.length() != end - start) {
                return false;
            }
            for (int k = 0; k < s.length(); k++) {
                if (s.charAt(k) != bytes[start + k]) {
                    return false;
                }
            }
            return true;
        }

        /** Forgets the fields added since the last build (a record that failed to decode half way). */
        public Builder clear() {
            Arrays.fill(pendingValues, 0, size, null);
            size = 0;
            return this;
        }

        /** The fields added since the last build, as a map; the builder is empty afterwards. */
        public Map<String, Object> build() {
            try {
                if (last == null || !last.sameAs(pendingNames, size)) {
                    Map<String, Integer> index = new HashMap<>(size * 2);
                    for (int i = 0; i < size; i++) {
                        if (index.putIfAbsent(pendingNames[i], i) != null) {
                            return duplicatedNames();
                        }
                    }
                    last = new Names(Arrays.copyOf(pendingNames, size), index);
                }
                return new Columns(last, Arrays.copyOf(pendingValues, size));
            } finally {
                clear();
            }
        }

        private Map<String, Object> duplicatedNames() {
            Map<String, Object> map = new LinkedHashMap<>();
            for (int i = 0; i < size; i++) {
                map.put(pendingNames[i], pendingValues[i]);
            }
            return map;
        }
    }
}
