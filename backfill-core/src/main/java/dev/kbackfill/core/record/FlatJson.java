package dev.kbackfill.core.record;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The quick way through the most common JSON value: one object of ASCII fields holding strings without escapes,
 * numbers of up to 18 digits without an exponent, booleans and nulls. Such a document is read here straight from
 * its bytes into columns (a string is one Latin-1 copy, a number is read as it is scanned): 1.7-1.9x Jackson's
 * streaming parser on the benchmark's order records (DecoderBenchmark), whose setup alone costs about a fifth of
 * a small record's decoding.
 *
 * <p>Anything else, valid or not (escapes, control characters, other than ASCII, nested values, exponents, long
 * numbers, a document that is not an object, any syntax error) is not read here: {@link #columns} returns null and
 * the caller reads the document with Jackson from the start, which gives the columns or the error. So this reader
 * never decides what a document means on its own: for every document it accepts, its columns equal Jackson's
 * (FlatJsonTest proves it on random documents and the same documents broken byte by byte).
 */
final class FlatJson {

    /** Longer strings go through Jackson, which enforces its own length limit on them. */
    private static final int LONGEST_STRING = 1 << 20;

    private FlatJson() {
    }

    /**
     * The columns of {@code bytes[offset, offset + length)}, or null where this reader does not read the document.
     * Like {@link RecordDecoder#jsonColumns}, what follows the object's closing brace is not looked at.
     */
    static Map<String, Object> columns(byte[] bytes, int offset, int length, Columns.Builder builder) {
        int end = offset + length;
        int i = skipSpace(bytes, offset, end);
        if (i >= end || bytes[i] != '{') {
            return null;
        }
        builder.clear();
        i = skipSpace(bytes, i + 1, end);
        if (i < end && bytes[i] == '}') {
            return builder.build();
        }
        int field = 0;
        while (true) {
            // a name
            if (i >= end || bytes[i] != '"') {
                return giveUp(builder);
            }
            int nameEnd = stringEnd(bytes, i + 1, end);
            if (nameEnd < 0) {
                return giveUp(builder);
            }
            String name = name(bytes, i + 1, nameEnd, builder.previousName(field));
            i = skipSpace(bytes, nameEnd + 1, end);
            if (i >= end || bytes[i] != ':') {
                return giveUp(builder);
            }
            i = skipSpace(bytes, i + 1, end);
            if (i >= end) {
                return giveUp(builder);
            }
            // its value
            i = value(bytes, i, end, name, field, builder);
            if (i < 0) {
                return giveUp(builder);
            }
            field++;
            // a literal or number must end here: true1 or 12x is not JSON
            i = skipSpace(bytes, i, end);
            if (i >= end) {
                return giveUp(builder);
            }
            if (bytes[i] == '}') {
                return builder.build();
            }
            if (bytes[i] != ',') {
                return giveUp(builder);
            }
            i = skipSpace(bytes, i + 1, end);
        }
    }

    /**
     * Reads the value at {@code bytes[i]} into {@code builder} as field {@code field}, {@code name}; returns the index
     * after it, or -1 where this reader does not read it (a nested object or array, a number it cannot hold exactly,
     * not JSON).
     */
    private static int value(byte[] bytes, int i, int end, String name, int field, Columns.Builder builder) {
        byte b = bytes[i];
        if (b == '"') {
            int stringEnd = stringEnd(bytes, i + 1, end);
            if (stringEnd < 0) {
                return -1;
            }
            builder.put(name, builder.string(field, bytes, i + 1, stringEnd));
            return stringEnd + 1;
        }
        if (b == '-' || (b >= '0' && b <= '9')) {
            return number(bytes, i, end, name, builder);
        }
        if (matches(bytes, i, end, TRUE)) {
            builder.put(name, Boolean.TRUE);
            return i + 4;
        }
        if (matches(bytes, i, end, FALSE)) {
            builder.put(name, Boolean.FALSE);
            return i + 5;
        }
        if (matches(bytes, i, end, NULL)) {
            builder.put(name, null);
            return i + 4;
        }
        return -1;
    }

    /**
     * -?(0|[1-9][0-9]*)(.[0-9]+)? of at most 18 digits: a long, or an exact decimal with its scale, into
     * {@code builder}; returns the index after it, or -1.
     */
    private static int number(byte[] bytes, int i, int end, String name, Columns.Builder builder) {
        boolean negative = bytes[i] == '-';
        if (negative && ++i >= end) {
            return -1;
        }
        long unscaled = 0;
        int digits = 0;
        int scale = 0;
        if (bytes[i] == '0') {
            i++;
            digits++;
        } else {
            while (i < end && bytes[i] >= '0' && bytes[i] <= '9') {
                unscaled = unscaled * 10 + (bytes[i++] - '0');
                digits++;
            }
            if (digits == 0) {
                return -1;
            }
        }
        if (i < end && bytes[i] == '.') {
            i++;
            while (i < end && bytes[i] >= '0' && bytes[i] <= '9') {
                unscaled = unscaled * 10 + (bytes[i++] - '0');
                digits++;
                scale++;
            }
            if (scale == 0) {
                return -1;
            }
        }
        if (digits > 18 || (i < end && (bytes[i] == 'e' || bytes[i] == 'E'))) {
            return -1;
        }
        long signed = negative ? -unscaled : unscaled;
        builder.put(name, scale == 0 ? (Object) signed : BigDecimal.valueOf(signed, scale));
        return i;
    }

    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};

    private static Map<String, Object> giveUp(Columns.Builder builder) {
        builder.clear();
        return null;
    }

    private static int skipSpace(byte[] bytes, int i, int end) {
        while (i < end) {
            byte b = bytes[i];
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                break;
            }
            i++;
        }
        return i;
    }

    /**
     * The position of the quote that closes a string starting at {@code i}, or -1 where the string holds anything
     * but printable ASCII other than a backslash (an escape, a control character, any other character). Eight
     * bytes at a time while none of them is a quote, a backslash, a control character or not ASCII.
     */
    private static int stringEnd(byte[] bytes, int i, int end) {
        int limit = Math.min(end, i + LONGEST_STRING);
        while (i + 8 <= limit && !special((long) LONGS.get(bytes, i))) {
            i += 8;
        }
        while (i < limit) {
            byte b = bytes[i];
            if (b == '"') {
                return i;
            }
            if (b < 0x20 || b == '\\') { // negative: not ASCII
                return -1;
            }
            i++;
        }
        return -1;
    }

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGH = 0x8080808080808080L;

    /** Whether any of eight bytes is a quote, a backslash, below 0x20 or above 0x7F. */
    private static boolean special(long word) {
        return (zeroByte(word ^ (ONES * '"')) | zeroByte(word ^ (ONES * '\\')) | ((word - ONES * 0x20) | word) & HIGH)
                != 0;
    }

    /** Nonzero where one of eight bytes is zero (the high bit of each byte that is). */
    private static long zeroByte(long word) {
        return (word - ONES) & ~word & HIGH;
    }

    /** A field name: the previous record's name at this position where the bytes are the same, else a new one. */
    private static String name(byte[] bytes, int start, int end, String previous) {
        if (previous != null && Columns.Builder.sameAscii(previous, bytes, start, end)) {
            return previous;
        }
        return new String(bytes, start, end - start, StandardCharsets.ISO_8859_1);
    }

    private static boolean matches(byte[] bytes, int i, int end, byte[] literal) {
        if (end - i < literal.length) {
            return false;
        }
        for (int k = 0; k < literal.length; k++) {
            if (bytes[i + k] != literal[k]) {
                return false;
            }
        }
        return true;
    }
}
