package dev.kbackfill.sink.lake;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * The order of key values in both lake formats' statistics (Parquet's min/max): strings and bytes as unsigned bytes
 * (UTF-8), numbers as numbers, nulls first. Rows written sorted in this order give files narrow key ranges, which is
 * what lets a later batch skip most files.
 */
public final class KeyOrder {

    private KeyOrder() {
    }

    /** Sorts rows by the key columns at {@code keyOrdinals}, in order. */
    public static void sortByKey(List<Object[]> rows, int[] keyOrdinals) {
        rows.sort((x, y) -> {
            for (int o : keyOrdinals) {
                int c = compareValues(x[o], y[o]);
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        });
    }

    /** Key values in statistics order: strings and bytes as unsigned bytes (UTF-8), nulls first. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static int compareValues(Object x, Object y) {
        if (x instanceof String s && y instanceof String t) {
            return compareUtf8(s, t);
        }
        if (x instanceof ByteBuffer s && y instanceof ByteBuffer t) {
            return Arrays.compareUnsigned(s.array(), s.arrayOffset() + s.position(), s.arrayOffset() + s.limit(),
                    t.array(), t.arrayOffset() + t.position(), t.arrayOffset() + t.limit());
        }
        if (x instanceof byte[] s && y instanceof byte[] t) {
            return Arrays.compareUnsigned(s, t);
        }
        if (x instanceof Comparable cx && y != null) {
            return cx.compareTo(y);
        }
        return x == null ? (y == null ? 0 : -1) : 1;
    }

    /**
     * Compares strings in UTF-8 byte order, which is code point order, without encoding them: UTF-16 order differs
     * from it only between surrogates (supplementary characters) and U+E000..U+FFFF.
     */
    public static int compareUtf8(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                if (x >= 0xD800 && y >= 0xD800) {
                    return codePointRank(x) - codePointRank(y);
                }
                return x - y;
            }
        }
        return a.length() - b.length();
    }

    private static int codePointRank(char c) {
        return Character.isSurrogate(c) ? c + 0x2000 : c - 0x800;
    }
}
