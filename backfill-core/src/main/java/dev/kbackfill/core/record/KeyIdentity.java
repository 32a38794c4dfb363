package dev.kbackfill.core.record;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * A key's identity: its field names and typed values, independent of the order in which a producer wrote the
 * fields. {@code {"a":1,"b":2}} and {@code {"b":2,"a":1}} are one key. Reduction, the sinks' lookups of stored rows
 * and the tombstone ledger all compare keys through this, never through a map's iteration order.
 *
 * <p>Values are compared by content and type: bytes by content, whole numbers as longs however they were typed
 * ({@code 7}, {@code 7L}, {@code 7.00}), other decimals without trailing zeros ({@code 1.50} and {@code 1.5} are
 * one key, as a database's DECIMAL column makes them), UUIDs as their text, and text as text ({@code "1"} is not
 * {@code 1}).
 */
public final class KeyIdentity {

    private final List<Object> parts;
    private final int hash;

    private KeyIdentity(List<Object> parts) {
        this.parts = parts;
        this.hash = parts.hashCode();
    }

    /** The identity of a key given as column names and values, in any order. */
    public static KeyIdentity of(Map<String, Object> key) {
        if (key instanceof ScalarColumn one) { // the usual key: no entry, set or view made and kept for it
            return new KeyIdentity(List.of(one.column(), canonical(one.value())));
        }
        if (key.size() == 1) {
            Map.Entry<String, Object> only = key.entrySet().iterator().next();
            return new KeyIdentity(List.of(only.getKey(), canonical(only.getValue())));
        }
        // the fields by name (a key has a few: sorted in place, not through a TreeMap per record)
        Object[] parts = new Object[key.size() * 2];
        int[] n = {0};
        key.forEach((k, v) -> {
            int i = n[0];
            while (i > 0 && ((String) parts[i - 2]).compareTo(k) > 0) {
                parts[i] = parts[i - 2];
                parts[i + 1] = parts[i - 1];
                i -= 2;
            }
            parts[i] = k;
            parts[i + 1] = canonical(v);
            n[0] += 2;
        });
        return new KeyIdentity(java.util.Arrays.asList(parts));
    }

    /** The value as it takes part in a key's identity. */
    static Object canonical(Object v) {
        if (v == null) {
            return Null.NULL;
        }
        if (v instanceof byte[] b) {
            return ByteBuffer.wrap(b);
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigDecimal d) {
            BigDecimal stripped = d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros();
            if (stripped.scale() <= 0 && stripped.precision() - stripped.scale() < 19) {
                try {
                    return stripped.longValueExact(); // a whole number is one key however it was typed
                } catch (ArithmeticException e) {
                    return stripped;
                }
            }
            return stripped;
        }
        if (v instanceof java.util.UUID u) {
            return u.toString();
        }
        if (v instanceof Float f) {
            return f.doubleValue();
        }
        return v;
    }

    /** A null key field (List.of refuses nulls). */
    private enum Null { NULL }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyIdentity k && k.hash == hash && k.parts.equals(parts);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /**
     * The identity as text, equal exactly when the identities are equal (types told apart: the string "1" is not the
     * number 1): for engines that group keys by a serializable value.
     */
    public String text() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.size(); i += 2) {
            Object v = parts.get(i + 1);
            sb.append(parts.get(i)).append('\u0000');
            if (v instanceof ByteBuffer b) {
                byte[] bytes = new byte[b.remaining()];
                b.duplicate().get(bytes);
                sb.append("b:").append(java.util.Base64.getEncoder().encodeToString(bytes));
            } else if (v == Null.NULL) {
                sb.append("n:");
            } else {
                sb.append(v.getClass().getSimpleName()).append(':').append(v);
            }
            sb.append('\u0001');
        }
        return sb.toString();
    }

    /**
     * A 128-bit hash of the identity ({@link #text()}, MurmurHash3): equal identities hash alike, and two distinct
     * ones collide with a probability of about 2^-128, so that sets of many keys can be kept as hashes (the keys a
     * log holds after a range, {@link dev.kbackfill.core.live.KeyHashes}).
     *
     * @return the two halves, high first
     */
    public long[] hash128() {
        byte[] bytes = text().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return org.apache.commons.codec.digest.MurmurHash3.hash128x64(bytes, 0, bytes.length, 0);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < parts.size(); i += 2) {
            sb.append(i == 0 ? "" : ", ").append(parts.get(i)).append('=').append(Readable.value(parts.get(i + 1)));
        }
        return sb.append('}').toString();
    }
}
