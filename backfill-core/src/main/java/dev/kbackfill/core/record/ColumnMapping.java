package dev.kbackfill.core.record;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.kbackfill.resolver.RequestException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Which fields of a record become which columns: {@code --columns} (only these value fields, the key's always),
 * {@code --rename FIELD=COLUMN} (a key or value field under another column name) and {@code --header-columns}
 * (headers as text columns, named by the header, null where a record lacks it). Applied to every decoded record
 * after {@code --where} and {@code --version-field} have read the record's own field names.
 *
 * @param columns       the value fields to keep, in any order (empty: all)
 * @param renames       field name → column name
 * @param headerColumns headers whose last value becomes a text column
 */
public record ColumnMapping(List<String> columns, Map<String, String> renames, List<String> headerColumns)
        implements java.io.Serializable {

    public ColumnMapping {
        columns = List.copyOf(columns);
        renames = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(renames));
        headerColumns = List.copyOf(headerColumns);
        Set<String> targets = new HashSet<>();
        for (String c : renames.values()) {
            if (!targets.add(c)) {
                throw new RequestException("invalid --rename: two fields renamed to '" + c + "'");
            }
        }
        for (String h : headerColumns) {
            if (h.isBlank()) {
                throw new RequestException("invalid --header-columns: an empty header name");
            }
            String column = renames.getOrDefault(h, h);
            for (Map.Entry<String, String> r : renames.entrySet()) {
                if (!r.getKey().equals(h) && r.getValue().equalsIgnoreCase(column)) {
                    throw new RequestException("invalid --header-columns '" + h + "': field '" + r.getKey() + "' is "
                            + "renamed to the same column '" + column + "'; rename the header with --rename " + h
                            + "=NAME");
                }
            }
        }
    }

    /**
     * Refuses, before anything is read, a mapping that writes a field or header into a column the row fills
     * otherwise: the key column of a key that is not an object, or a metadata column.
     *
     * @param reserved the names of those columns
     * @throws RequestException naming the option, the column and the fix
     */
    public void checkReserved(java.util.Collection<String> reserved) {
        renames.forEach((field, column) -> {
            for (String r : reserved) {
                if (r.equalsIgnoreCase(column)) {
                    throw new RequestException("invalid --rename '" + field + "=" + column + "': " + r + " is a "
                            + "column kbackfill fills itself (the key or a record's coordinates); choose another name");
                }
            }
        });
        for (String h : headerColumns) {
            String column = columnOf(h);
            for (String r : reserved) {
                if (r.equalsIgnoreCase(column)) {
                    throw new RequestException("invalid --header-columns '" + h + "': " + r + " is a column kbackfill "
                            + "fills itself (the key or a record's coordinates); write the header under another name "
                            + "with --rename " + h + "=NAME");
                }
            }
        }
    }

    /** The fields and headers this mapping names ({@code --columns}, {@code --rename}, {@code --header-columns}). */
    public java.util.Set<String> named() {
        java.util.Set<String> named = new java.util.LinkedHashSet<>(columns);
        named.addAll(renames.keySet());
        named.addAll(headerColumns);
        return named;
    }

    /** The options that name {@code field}, for messages: {@code --columns}, {@code --rename}, {@code --header-columns}. */
    public String optionsNaming(String field) {
        List<String> options = new ArrayList<>();
        if (columns.contains(field)) {
            options.add("--columns");
        }
        if (renames.containsKey(field)) {
            options.add("--rename");
        }
        if (headerColumns.contains(field)) {
            options.add("--header-columns");
        }
        return String.join(" and ", options);
    }

    /**
     * Two of a record's fields (or a field and a header) that this mapping would write into one column: found when
     * such a record comes, it is a poison record once the job has written, and bad input in a job's first batch.
     */
    public static final class Collision extends RuntimeException {
        Collision(String message) {
            super(message);
        }
    }

    /** No mapping: every field under its own name, no header columns. */
    public static ColumnMapping none() {
        return new ColumnMapping(List.of(), Map.of(), List.of());
    }

    /**
     * Whether the job writes {@code column}, a value column of its target: every one without {@code --columns};
     * with it, only the columns of the fields it names and the header columns (under their {@code --rename} names),
     * the target's other columns being left as they are. Column names compare without regard to case, as
     * databases compare them.
     */
    public boolean writes(String column) {
        if (columns.isEmpty()) {
            return true;
        }
        for (String field : columns) {
            if (columnOf(field).equalsIgnoreCase(column)) {
                return true;
            }
        }
        for (String header : headerColumns) {
            if (columnOf(header).equalsIgnoreCase(column)) {
                return true;
            }
        }
        return false;
    }

    /** The column a field (or header) goes to: its {@code --rename} name, or its own. */
    public String columnOf(String field) {
        return renames.getOrDefault(field, field);
    }

    public boolean isNone() {
        return columns.isEmpty() && renames.isEmpty() && headerColumns.isEmpty();
    }

    /**
     * Parses {@code --rename} arguments: {@code FIELD=COLUMN}, each once.
     *
     * @throws RequestException naming a malformed one
     */
    public static Map<String, String> renames(List<String> args) {
        Map<String, String> renames = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0 || eq == a.length() - 1) {
                throw new RequestException("invalid --rename '" + a + "': expected FIELD=COLUMN, e.g. "
                        + "order_status=status");
            }
            String field = a.substring(0, eq).strip();
            if (renames.put(field, a.substring(eq + 1).strip()) != null) {
                throw new RequestException("invalid --rename '" + a + "': field '" + field + "' is renamed twice");
            }
        }
        return renames;
    }

    /** The key's columns under their mapped names. */
    Map<String, Object> key(Map<String, Object> key) {
        if (renames.isEmpty()) {
            return key;
        }
        Map<String, Object> out = new LinkedHashMap<>(key.size() * 2);
        key.forEach((k, v) -> out.put(renames.getOrDefault(k, k), v));
        return out;
    }

    /** A value's columns: the chosen fields under their mapped names, then the header columns; null stays null. */
    Map<String, Object> values(Map<String, Object> values, Headers headers) {
        if (values == null || isNone()) {
            return values;
        }
        Map<String, Object> out = new LinkedHashMap<>(values.size() * 2);
        values.forEach((k, v) -> {
            if (columns.isEmpty() || columns.contains(k)) {
                String column = renames.getOrDefault(k, k);
                if (out.containsKey(column)) {
                    String moved = renamed(column, values);
                    throw new Collision("--rename " + moved + "=" + column + " writes field '" + moved + "' into column '"
                            + column + "', which field '" + column + "' of the same record fills too; rename that "
                            + "one as well, or leave one out with --columns");
                }
                out.put(column, v);
            }
        });
        for (String h : headerColumns) {
            String column = renames.getOrDefault(h, h);
            if (out.containsKey(column)) {
                throw new Collision("--header-columns " + h + " writes header '" + h + "' into column '" + column
                        + "', which a value field of the same record fills; write the header under another name "
                        + "with --rename " + h + "=NAME");
            }
            Header last = headers == null ? null : headers.lastHeader(h);
            out.put(column, last == null || last.value() == null ? null
                    : new String(last.value(), StandardCharsets.UTF_8));
        }
        return out;
    }

    /** The field that {@code --rename} sends to {@code column}, among {@code values}' fields. */
    private String renamed(String column, Map<String, Object> values) {
        for (Map.Entry<String, String> r : renames.entrySet()) {
            if (r.getValue().equals(column) && values.containsKey(r.getKey())) {
                return r.getKey();
            }
        }
        return column;
    }

    /** For the job's spec: a stable text, or empty for no mapping. */
    public String spec() {
        if (isNone()) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        if (!columns.isEmpty()) {
            parts.add("columns=" + String.join(",", columns));
        }
        if (!renames.isEmpty()) {
            List<String> r = new ArrayList<>();
            renames.forEach((f, c) -> r.add(f + "=" + c));
            parts.add("rename=" + String.join(",", r));
        }
        if (!headerColumns.isEmpty()) {
            parts.add("header-columns=" + String.join(",", headerColumns));
        }
        return String.join(";", parts);
    }
}
