package dev.kbackfill.core.record;

import java.util.AbstractMap;
import java.util.Map;
import java.util.Set;

/**
 * A key or value that is not an object (a string, bytes, a JSON or Avro scalar) as its one column: told apart from
 * an object that happens to have one field of that column's name ({@code {"value":5}} is an object, {@code 5} is
 * not), as {@code --where} sees them.
 */
public final class ScalarColumn extends AbstractMap<String, Object> {

    private final String column;
    private final Object value;

    private ScalarColumn(String column, Object value) {
        this.column = column;
        this.value = value;
    }

    /** The scalar {@code value} as the one column {@code column}. */
    public static Map<String, Object> of(String column, Object value) {
        return new ScalarColumn(column, value);
    }

    /** Whether {@code columns} are a key's or value's that is not an object (not an object's fields). */
    public static boolean is(Map<String, Object> columns) {
        return columns instanceof ScalarColumn;
    }

    @Override
    public Object get(Object key) {
        return column.equals(key) ? value : null;
    }

    @Override
    public boolean containsKey(Object key) {
        return column.equals(key);
    }

    @Override
    public int size() {
        return 1;
    }

    @Override
    public Set<Entry<String, Object>> entrySet() {
        return Set.of(new SimpleImmutableEntry<>(column, value));
    }

    // AbstractMap keeps the views it makes in fields: a batch holds one key per pending record, so no view is kept
    @Override
    public Set<String> keySet() {
        return Set.of(column);
    }

    @Override
    public java.util.Collection<Object> values() {
        return java.util.Collections.singletonList(value);
    }

    @Override
    public void forEach(java.util.function.BiConsumer<? super String, ? super Object> action) {
        action.accept(column, value);
    }

    String column() {
        return column;
    }

    Object value() {
        return value;
    }
}
