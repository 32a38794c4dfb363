package dev.kbackfill.core.record;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The columns a set of changes needs: key columns in key order, then every value column seen, with the type
 * that holds all of its values. A column seen only as null is a nullable {@code STRING}.
 *
 * @param keyColumns   the primary key
 * @param valueColumns the other columns
 */
public record RowShape(List<Column> keyColumns, List<Column> valueColumns) {

    public RowShape {
        keyColumns = List.copyOf(keyColumns);
        valueColumns = List.copyOf(valueColumns);
    }

    public static RowShape of(Collection<Change> changes) {
        Accumulator a = new Accumulator();
        changes.forEach(a::add);
        return a.shape();
    }

    /**
     * Builds a shape change by change, and from shapes built apart (an engine's tasks each see a part of a run's
     * changes): the same columns and types as {@link #of} over all of them, whatever the split.
     */
    public static final class Accumulator implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        /** Type per column in order of appearance; null while the column was seen only as null. */
        private final LinkedHashMap<String, ColumnType> keys = new LinkedHashMap<>();
        private final LinkedHashMap<String, ColumnType> values = new LinkedHashMap<>();

        public Accumulator add(Change c) {
            c.key().forEach((name, value) -> noteKey(keys, name, RecordDecoder.typeOf(value)));
            if (c.values() != null) {
                c.values().forEach((name, value) -> note(values, name, RecordDecoder.typeOf(value)));
            }
            return this;
        }

        /** Adds what {@code other} saw after what this one saw. */
        public Accumulator merge(Accumulator other) {
            other.keys.forEach((name, type) -> noteKey(keys, name, type));
            other.values.forEach((name, type) -> note(values, name, type));
            return this;
        }

        /**
         * A key field's type: as a value's, except that text and another scalar type make a text column, not a JSON
         * one. A key column holds its keys as their values (a table made later, or by hand, says nothing of JSON), so
         * text seen with numbers makes a text column, and the numbers (another key than their text) poison records
         * ({@link KeyTypes}).
         */
        private static void noteKey(Map<String, ColumnType> seen, String name, ColumnType t) {
            ColumnType before = seen.get(name);
            if (before != null && t != null && before != t && (before == ColumnType.STRING || t == ColumnType.STRING)
                    && before != ColumnType.JSON && t != ColumnType.JSON) {
                seen.put(name, ColumnType.STRING);
                return;
            }
            note(seen, name, t);
        }

        private static void note(Map<String, ColumnType> seen, String name, ColumnType t) {
            // one lookup for the common case, a column seen before with the same type: every field of every record
            ColumnType before = seen.get(name);
            if (before == null) {
                if (t != null || !seen.containsKey(name)) {
                    seen.put(name, t);
                }
            } else if (t != null && t != before) {
                seen.put(name, before.widen(t));
            }
        }

        public RowShape shape() {
            List<Column> keyColumns = new ArrayList<>();
            keys.forEach((name, type) -> keyColumns.add(new Column(name, type == null ? ColumnType.STRING : type, false)));
            List<Column> valueColumns = new ArrayList<>();
            values.forEach((name, type) -> {
                if (!keys.containsKey(name)) {
                    valueColumns.add(new Column(name, type == null ? ColumnType.STRING : type, true));
                }
            });
            return new RowShape(keyColumns, valueColumns);
        }
    }

    /** Every column: key columns first. */
    public List<Column> columns() {
        List<Column> all = new ArrayList<>(keyColumns);
        all.addAll(valueColumns);
        return all;
    }
}
