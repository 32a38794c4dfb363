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
                out.put(renames.getOrDefault(k, k), v);
            }
        });
        for (String h : headerColumns) {
            Header last = headers == null ? null : headers.lastHeader(h);
            out.put(renames.getOrDefault(h, h), last == null || last.value() == null ? null
                    : new String(last.value(), StandardCharsets.UTF_8));
        }
        return out;
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
