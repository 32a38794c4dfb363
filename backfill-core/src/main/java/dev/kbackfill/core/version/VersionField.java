package dev.kbackfill.core.version;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.resolver.RequestException;

/**
 * {@code --version-field FIELD[:TYPE]}: a value field that orders a key's versions before the log does (a CDC
 * topic's {@code source.lsn} or {@code ts_ms}, a row's {@code updated_at}): the version rule compares it first, then
 * the log as always ({@link Version#compare}). A dotted name reaches into nested objects ({@code source.lsn}).
 * Values are compared as their type:
 * <ul>
 *   <li>{@code integer} (the default): whole numbers (a JSON integer, an Avro int or long);</li>
 *   <li>{@code timestamp}: an ISO-8601 instant ({@code 2024-01-01T12:00:00.5Z}, an offset, or none for UTC), an Avro
 *       timestamp, or a whole number of epoch milliseconds; compared as epoch microseconds;</li>
 *   <li>{@code string}: text, compared by Unicode code point (what SQL's binary collations do with UTF-8; H2
 *       compares UTF-16 code units, which differs only between characters above U+FFFF and U+E000 to U+FFFF).</li>
 * </ul>
 * A record whose value lacks the field, or holds another type, is a poison record (under {@code --on-error}). A
 * tombstone carries no value: it takes the field of the nearest record before it in its partition, at most
 * {@value #TOMBSTONE_REACH} offsets back, that carries one ({@code FieldClock}, where records are read); with none there, it has no field and
 * is older than every version that has one.
 *
 * @param path the field's name, dots between nested names
 * @param type how its values compare
 */
public record VersionField(String path, Type type) {

    /** A nested value (object, array) of a record, carried as JSON text: a dotted path looks inside it. */
    public interface Nested {
        /** The value as JSON text. */
        String json();
    }

    /** How far back a tombstone looks for the field it takes (see the class comment). */
    public static final int TOMBSTONE_REACH = 1000;

    private static final ObjectMapper JSON = new ObjectMapper();

    public enum Type {
        INTEGER, TIMESTAMP, STRING;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public VersionField {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(type, "type");
    }

    /**
     * {@code FIELD} or {@code FIELD:TYPE}.
     *
     * @throws RequestException for anything else
     */
    public static VersionField parse(String text) {
        String t = text == null ? "" : text.strip();
        int colon = t.lastIndexOf(':');
        String name = colon < 0 ? t : t.substring(0, colon);
        String type = colon < 0 ? "integer" : t.substring(colon + 1);
        if (!name.matches("[^.:\\s][^:\\s]*") || name.endsWith(".") || name.contains("..")) {
            throw new RequestException("invalid --version-field '" + text + "': expected FIELD[:TYPE] with a field "
                    + "name (dots for nested fields: source.lsn) and TYPE integer (default), timestamp or string");
        }
        for (Type ty : Type.values()) {
            if (ty.label().equals(type)) {
                return new VersionField(name, ty);
            }
        }
        throw new RequestException("invalid --version-field '" + text + "': unknown type '" + type
                + "': expected integer (default), timestamp or string");
    }

    /** {@code FIELD:TYPE}, as the job's spec records it. */
    public String label() {
        return path + ":" + type.label();
    }

    /**
     * The field's value in {@code values} (a decoded record's columns), as it compares: a {@link Long} for integers
     * and timestamps (epoch microseconds), a {@link String} for strings.
     *
     * @throws IllegalArgumentException the field is missing, null, or of another type (the message says which)
     */
    public Comparable<?> valueOf(Map<String, Object> values) {
        Object v = lookUp(values);
        if (v == null) {
            throw new IllegalArgumentException("version field '" + path + "' is missing or null");
        }
        try {
            return switch (type) {
                case INTEGER -> integer(v);
                case TIMESTAMP -> micros(v);
                case STRING -> {
                    if (v instanceof String s) {
                        yield s;
                    }
                    throw new IllegalArgumentException("not a string");
                }
            };
        } catch (IllegalArgumentException | ArithmeticException | DateTimeParseException e) {
            throw new IllegalArgumentException("version field '" + path + "' holds " + describe(v) + ", not "
                    + (type == Type.INTEGER ? "a whole number" : type == Type.TIMESTAMP
                    ? "a timestamp (ISO-8601, or epoch milliseconds)" : "a string"), e);
        }
    }

    private Object lookUp(Map<String, Object> values) {
        if (values.containsKey(path)) {
            return values.get(path);
        }
        String[] parts = path.split("\\.");
        Object v = values.get(parts[0]);
        if (parts.length == 1 || v == null) {
            return v;
        }
        JsonNode node;
        if (v instanceof Nested text) {
            try {
                node = JSON.readTree(text.json());
            } catch (java.io.IOException e) {
                return null;
            }
        } else {
            return null;
        }
        for (int i = 1; i < parts.length && node != null; i++) {
            node = node.get(parts[i]);
        }
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isIntegralNumber()) {
            return node.canConvertToLong() ? (Object) node.longValue() : node.decimalValue();
        }
        if (node.isNumber()) {
            return node.decimalValue();
        }
        return node.isTextual() ? node.textValue() : node.toString();
    }

    private static Long integer(Object v) {
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigDecimal d) {
            return d.longValueExact();
        }
        if (v instanceof java.math.BigInteger b) {
            return b.longValueExact();
        }
        throw new IllegalArgumentException("not a whole number");
    }

    private static Long micros(Object v) {
        Instant i;
        if (v instanceof Instant instant) {
            i = instant;
        } else if (v instanceof LocalDateTime t) {
            i = t.toInstant(ZoneOffset.UTC);
        } else if (v instanceof OffsetDateTime t) {
            i = t.toInstant();
        } else if (v instanceof String s) {
            i = instant(s);
        } else {
            return Math.multiplyExact(integer(v), 1000L); // epoch milliseconds
        }
        return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1000);
    }

    private static Instant instant(String s) {
        try {
            return OffsetDateTime.parse(s).toInstant();
        } catch (DateTimeParseException e) {
            return LocalDateTime.parse(s).toInstant(ZoneOffset.UTC);
        }
    }

    private static String describe(Object v) {
        String text = String.valueOf(v);
        return (v instanceof String ? "'" + (text.length() > 40 ? text.substring(0, 40) + "..." : text) + "'"
                : text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }
}
