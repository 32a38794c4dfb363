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
        Map<String, ColumnType> keys = new LinkedHashMap<>();
        Map<String, ColumnType> values = new LinkedHashMap<>();
        for (Change c : changes) {
            merge(keys, c.key());
            if (c.values() != null) {
                merge(values, c.values());
            }
        }
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

    private static void merge(Map<String, ColumnType> seen, Map<String, Object> row) {
        row.forEach((name, value) -> {
            ColumnType t = RecordDecoder.typeOf(value);
            if (!seen.containsKey(name)) {
                seen.put(name, t);
            } else if (t != null) {
                ColumnType before = seen.get(name);
                seen.put(name, before == null ? t : before.widen(t));
            }
        });
    }

    /** Every column: key columns first. */
    public List<Column> columns() {
        List<Column> all = new ArrayList<>(keyColumns);
        all.addAll(valueColumns);
        return all;
    }
}
