package dev.kbackfill.core.verify;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.DeserializationFeature;
import dev.kbackfill.core.record.JsonText;

/**
 * Whether a value a target holds is the value a decoded record gives its column: the one definition of value
 * equality of verification. A sink hands over what it read back in plain Java types (whole numbers, decimals,
 * floating point, booleans, text, bytes, {@link Instant}, {@link LocalDate}, {@link LocalTime}); this compares it
 * with the decoded value as the sink would have stored it:
 * <ul>
 *   <li>numbers by value ({@code 7}, {@code 7.00}); a stored single-precision float against the value rounded to
 *       one; a boolean stored as 0/1 (SQLite, MariaDB's TINYINT);</li>
 *   <li>text against a typed column by the text's meaning (an ISO time against a timestamp, a number against a
 *       numeric column, a UUID in any case), as the sink parses text it writes into such a column;</li>
 *   <li>JSON (nested values) structurally: key order, whitespace and number spelling do not count, as a
 *       {@code jsonb} column rewrites them;</li>
 *   <li>bytes by content; times to the millisecond where the stored side holds only milliseconds.</li>
 * </ul>
 */
public final class Values {

    // a stored text with anything after its JSON value is not that value: Jackson would read the value and stop
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private Values() {
    }

    /**
     * The columns whose stored value is not the one the key's last record gives them: the row is that record, so
     * every column the target holds is judged (the caller passes the value columns the job writes, not the key or
     * metadata columns), against the record's field of the column's name, or of its name in another case, and
     * against NULL where the record lacks the field. A field the target has no column for is not judged (a run skips
     * it under {@code --ignore-unknown-fields}).
     *
     * @param expected the decoded values of the key's last record (null for a delete: nothing to judge)
     * @param stored   the stored values by column name
     */
    public static List<String> differing(Map<String, Object> expected, Map<String, Object> stored) {
        List<String> differ = new ArrayList<>();
        if (expected == null) {
            return differ;
        }
        stored.forEach((column, value) -> {
            if (!same(field(expected, column), value)) {
                differ.add(column);
            }
        });
        return differ;
    }

    /**
     * The value a record gives a column: its field of the column's name, else of that name in another case (a
     * database folds names), else null (the record lacks it).
     */
    public static Object field(Map<String, Object> values, String column) {
        if (values.containsKey(column)) {
            return values.get(column);
        }
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (e.getKey().equalsIgnoreCase(column)) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * A stored value in a form its sink never writes into its column (SQLite, which types values and not columns:
     * the text {@code 'true'} in a BOOLEAN column, a blob in a TEXT column): not the same as any record's value,
     * whatever its text.
     */
    public record Unlike(Object stored, String how) {
        @Override
        public String toString() {
            return dev.kbackfill.core.record.Readable.value(stored) + " (" + how + ")";
        }
    }

    /** Whether {@code stored} is what a sink stores for the decoded value {@code expected}. */
    public static boolean same(Object expected, Object stored) {
        if (stored instanceof Unlike) {
            return false;
        }
        if (expected == null || stored == null) {
            return expected == null && stored == null;
        }
        if (expected instanceof JsonText || expected instanceof Map || expected instanceof List) {
            return sameJson(expected, stored);
        }
        if (expected instanceof Number a) {
            if (stored instanceof Number b) {
                return sameNumber(a, b);
            }
            if (stored instanceof Boolean b) {
                return sameNumber(a, b ? 1L : 0L);
            }
            return stored instanceof String s && numberOf(s) instanceof BigDecimal d && sameNumber(a, d);
        }
        if (expected instanceof Boolean b) {
            if (stored instanceof Boolean s) {
                return b.equals(s);
            }
            if (stored instanceof Number n) {
                return n.longValue() == (b ? 1 : 0) && new BigDecimal(n.toString()).stripTrailingZeros().scale() <= 0;
            }
            return stored instanceof String s && (s.equalsIgnoreCase(b.toString()) || s.equals(b ? "1" : "0"));
        }
        if (expected instanceof byte[] a) {
            if (stored instanceof byte[] s) {
                return Arrays.equals(a, s);
            }
            return stored instanceof String s && Arrays.equals(a, s.getBytes(StandardCharsets.UTF_8));
        }
        if (stored instanceof byte[] s) {
            return Arrays.equals(String.valueOf(expected).getBytes(StandardCharsets.UTF_8), s);
        }
        if (stored instanceof Instant || expected instanceof Instant) {
            Instant a = instant(expected);
            Instant b = instant(stored);
            return a != null && b != null && sameInstant(a, b);
        }
        if (stored instanceof LocalDate || expected instanceof LocalDate) {
            return String.valueOf(expected).equals(String.valueOf(stored));
        }
        if (stored instanceof LocalTime || expected instanceof LocalTime) {
            LocalTime a = time(expected);
            LocalTime b = time(stored);
            return a != null && a.equals(b);
        }
        if (stored instanceof Number n && expected instanceof String s) {
            return numberOf(s) instanceof BigDecimal d && sameNumber(d, n);
        }
        if (stored instanceof Boolean b && expected instanceof String s) {
            return s.equalsIgnoreCase(b.toString());
        }
        if (expected instanceof java.util.UUID || stored instanceof java.util.UUID) {
            return expected.toString().equalsIgnoreCase(stored.toString());
        }
        return expected.toString().equals(stored.toString());
    }

    private static boolean sameNumber(Number a, Number b) {
        if (a instanceof Float || b instanceof Float) {
            return Float.compare(a.floatValue(), b.floatValue()) == 0;
        }
        if (a instanceof Double || b instanceof Double) {
            return Double.compare(a.doubleValue(), b.doubleValue()) == 0
                    || (Double.isNaN(a.doubleValue()) && Double.isNaN(b.doubleValue()));
        }
        return decimal(a).compareTo(decimal(b)) == 0;
    }

    private static BigDecimal decimal(Number n) {
        if (n instanceof BigDecimal d) {
            return d;
        }
        if (n instanceof java.math.BigInteger i) {
            return new BigDecimal(i);
        }
        return BigDecimal.valueOf(n.longValue());
    }

    private static Object numberOf(String s) {
        try {
            return new BigDecimal(s.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Equal, or equal to the millisecond where the stored side holds milliseconds only and the expected one more (a
     * millisecond column keeps what it can of a finer time). A stored time finer than the expected one is another
     * time: the record did not say it.
     */
    private static boolean sameInstant(Instant expected, Instant stored) {
        if (expected.equals(stored)) {
            return true;
        }
        boolean coarse = stored.getNano() % 1_000_000 == 0 && expected.getNano() % 1_000_000 != 0;
        return coarse && expected.toEpochMilli() == stored.toEpochMilli();
    }

    private static Instant instant(Object v) {
        if (v instanceof Instant i) {
            return i;
        }
        if (v instanceof Number n) {
            return Instant.ofEpochMilli(n.longValue());
        }
        String s = v.toString().strip();
        try {
            return Instant.parse(s);
        } catch (java.time.format.DateTimeParseException e) {
            try {
                return OffsetDateTime.parse(s).toInstant();
            } catch (java.time.format.DateTimeParseException e2) {
                try {
                    return java.time.LocalDateTime.parse(s.replace(' ', 'T')).toInstant(java.time.ZoneOffset.UTC);
                } catch (java.time.format.DateTimeParseException e3) {
                    return null;
                }
            }
        }
    }

    private static LocalTime time(Object v) {
        if (v instanceof LocalTime t) {
            return t;
        }
        try {
            return LocalTime.parse(v.toString().strip());
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    private static boolean sameJson(Object expected, Object stored) {
        JsonNode a = tree(expected);
        JsonNode b = tree(stored);
        return a != null && b != null && sameTree(a, b);
    }

    private static JsonNode tree(Object v) {
        try {
            if (v instanceof JsonText t) {
                return JSON.readTree(t.json());
            }
            if (v instanceof String s) {
                return JSON.readTree(s);
            }
            if (v instanceof byte[] b) {
                return JSON.readTree(b);
            }
            return JSON.valueToTree(v);
        } catch (java.io.IOException | IllegalArgumentException e) {
            return null;
        }
    }

    private static boolean sameTree(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue()) == 0;
        }
        if (a.isObject() && b.isObject()) {
            if (a.size() != b.size()) {
                return false;
            }
            Iterator<Map.Entry<String, JsonNode>> fields = a.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                JsonNode other = b.get(f.getKey());
                if (other == null || !sameTree(f.getValue(), other)) {
                    return false;
                }
            }
            return true;
        }
        if (a.isArray() && b.isArray()) {
            if (a.size() != b.size()) {
                return false;
            }
            for (int i = 0; i < a.size(); i++) {
                if (!sameTree(a.get(i), b.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }
}
