package dev.kbackfill.sink.lake;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;

/**
 * A lake table's rows as the sinks build them from changes: arrays of physical values in the order of the table's
 * top-level columns, key values placed by column name whatever order a key's fields came in, a key as the list of
 * its physical values (equal for one identity: {@code 7} and {@code 7.00} in a string column are one key).
 */
public final class LakeRows {

    private final List<String> names;
    private final LakeType[] types;
    private final Object[] shownTypes;
    private final int[] keyOrdinals;
    /** The names of the key columns, in the order of {@link #keyOrdinals}. */
    private final List<String> keyNames;
    private final Map<String, Integer> ordinals = new HashMap<>();
    /** Value columns the table declares NOT NULL (Delta's non-nullable fields, Iceberg's required ones). */
    private final boolean[] required;

    /**
     * @param names       the table's top-level column names, in order
     * @param types       their lake types; null for a column of a type kbackfill does not write
     * @param shownTypes  their types as the format names them, for messages
     * @param keyOrdinals where the key columns sit
     */
    public LakeRows(List<String> names, LakeType[] types, Object[] shownTypes, int[] keyOrdinals) {
        this(names, types, shownTypes, keyOrdinals, new boolean[names.size()]);
    }

    /**
     * @param required which columns the table declares NOT NULL: a row that would leave one NULL is refused
     *                 ({@link ValueMismatch}: a poison record), as the format's own writers refuse it
     */
    public LakeRows(List<String> names, LakeType[] types, Object[] shownTypes, int[] keyOrdinals, boolean[] required) {
        this.required = required.clone();
        this.names = List.copyOf(names);
        this.types = types.clone();
        this.shownTypes = shownTypes.clone();
        this.keyOrdinals = keyOrdinals.clone();
        List<String> keys = new ArrayList<>(keyOrdinals.length);
        for (int o : keyOrdinals) {
            keys.add(names.get(o));
        }
        this.keyNames = List.copyOf(keys);
        for (int i = 0; i < names.size(); i++) {
            ordinals.put(names.get(i), i);
        }
    }

    /**
     * The columns that are neither key columns nor ones {@code writes} (the job's value columns and its metadata
     * columns): a whole row written into such a table would leave them NULL.
     */
    public List<String> columnsNotWritten(java.util.function.Predicate<String> writes) {
        List<String> left = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            boolean key = false;
            for (int k : keyOrdinals) {
                key |= k == i;
            }
            if (!key && !writes.test(names.get(i))) {
                left.add(names.get(i));
            }
        }
        return left;
    }

    /** A row holding the change's key only. */
    public Object[] keyRow(Change c) throws ValueMismatch {
        Object[] row = new Object[names.size()];
        for (int ord : keyOrdinals) {
            String name = names.get(ord);
            if (!c.key().containsKey(name)) {
                throw new ValueMismatch("the key at partition " + c.partition() + " offset " + c.offset()
                        + " has no field " + name + " (fields " + c.key().keySet() + ")");
            }
            Object value = c.key().get(name);
            if (value instanceof BigDecimal d && types[ord] != null && types[ord].kind() == LakeType.Kind.STRING) {
                // one key identity, one text: 7 and 7.00 are the same key (KeyIdentity), so the same row
                value = d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros();
            }
            row[ord] = physical(value, ord);
        }
        return row;
    }

    /** A row holding the change's key and its values, each in the column of its name (fields without one are left out). */
    public Object[] valueRow(Change c) throws ValueMismatch {
        Object[] row = keyRow(c);
        for (Map.Entry<String, Object> v : c.values().entrySet()) {
            Integer ord = ordinals.get(v.getKey());
            if (ord != null && !c.key().containsKey(v.getKey())) {
                row[ord] = physical(v.getValue(), ord);
            }
        }
        return row;
    }

    /**
     * The row a change adds to the table: its values, or where {@code deleted} (a soft delete of a key the table has
     * no row for) its key only, marked deleted; stamped with its coordinates.
     */
    public Object[] newRow(Change c, boolean deleted, MetadataOrdinals ord, String topic) throws ValueMismatch {
        Object[] row = deleted ? keyRow(c) : valueRow(c);
        for (int i = 0; i < row.length; i++) {
            if (required[i] && row[i] == null && !ord.isMetadata(i)) {
                throw new ValueMismatch("column " + names.get(i) + " is NOT NULL, and the record "
                        + (deleted ? "(a soft delete of a key the table has no row for) " : "") + "gives it no value");
            }
        }
        if (ord.deleted() >= 0) {
            row[ord.deleted()] = deleted;
        }
        ord.stamp(row, c, topic);
        return row;
    }

    /**
     * Refuses a key whose values would lose their identity in the table's key columns ({@link
     * dev.kbackfill.core.record.KeyTypes}): text in a number column other than the number's own text, and, where keys
     * come typed, text in a number column or a number in a text column.
     */
    public void checkKeyTypes(Change c, boolean typedKeys) throws ValueMismatch {
        for (int ord : keyOrdinals) {
            LakeType t = types[ord];
            if (t == null) {
                continue;
            }
            dev.kbackfill.core.record.KeyTypes.Kind kind = switch (t.kind()) {
                case LONG, INT, DOUBLE, FLOAT, DECIMAL -> dev.kbackfill.core.record.KeyTypes.Kind.NUMBER;
                case STRING -> dev.kbackfill.core.record.KeyTypes.Kind.TEXT;
                default -> dev.kbackfill.core.record.KeyTypes.Kind.OTHER;
            };
            java.util.Optional<String> conflict = dev.kbackfill.core.record.KeyTypes.conflict(c.key().get(names.get(ord)),
                    kind, names.get(ord), String.valueOf(shownTypes[ord]), typedKeys);
            if (conflict.isPresent()) {
                throw new ValueMismatch(conflict.get());
            }
        }
    }

    /** The change's key as the table holds it. */
    public List<Object> key(Change c) throws ValueMismatch {
        return keyOf(keyRow(c), keyOrdinals);
    }

    /** A key ({@link #key}) as the tombstone ledger holds it: its values named by the table's key columns. */
    public TombstoneLedger.Key ledgerKey(List<Object> key) {
        return TombstoneLedger.Key.of(keyNames, key);
    }

    /** A value as the table's column of that name holds it (the conversion a written row makes). */
    public Object physicalOf(String column, Object value) throws ValueMismatch {
        Integer ord = ordinals.get(column);
        if (ord == null) {
            throw new ValueMismatch("no column " + column);
        }
        return physical(value, ord);
    }

    /**
     * A stored row's own value of the job's version field, as the version rule compares it: the column the job writes
     * a top-level field into, where the table has it and its type holds the field's values (whole numbers in an
     * integer column, text in a string column, timestamps in a timestamp column, or epoch milliseconds in an integer
     * column); null otherwise, or where the row holds none. What orders a row of another writer against a record
     * ({@link dev.kbackfill.core.version.Held.Foreign}).
     */
    public Comparable<?> ownVersionField(Object[] row, java.util.Optional<dev.kbackfill.core.version.VersionField> field,
                                         dev.kbackfill.core.record.ColumnMapping mapping) {
        int ord = ownVersionFieldOrdinal(field, mapping);
        if (ord < 0 || row[ord] == null) {
            return null;
        }
        Object v = row[ord];
        LakeType.Kind kind = types[ord].kind();
        boolean integer = kind == LakeType.Kind.LONG || kind == LakeType.Kind.INT;
        return switch (field.get().type()) {
            case INTEGER -> integer ? (Comparable<?>) ((Number) v).longValue() : null;
            case STRING -> kind == LakeType.Kind.STRING ? (Comparable<?>) v.toString() : null;
            case TIMESTAMP -> kind == LakeType.Kind.TIMESTAMP ? (Comparable<?>) ((Number) v).longValue()
                    : integer ? (Comparable<?>) Math.multiplyExact(((Number) v).longValue(), 1000L) : null;
        };
    }

    /**
     * Where the column {@link #ownVersionField} reads sits (a probe of the table's rows reads it with the key), or -1
     * where the table has none the field's values fit.
     */
    public int ownVersionFieldOrdinal(java.util.Optional<dev.kbackfill.core.version.VersionField> field,
                                      dev.kbackfill.core.record.ColumnMapping mapping) {
        if (field.isEmpty() || field.get().path().contains(".")) {
            return -1;
        }
        Integer ord = ordinals.get(mapping.columnOf(field.get().path()));
        if (ord == null || types[ord] == null) {
            return -1;
        }
        LakeType.Kind kind = types[ord].kind();
        boolean integer = kind == LakeType.Kind.LONG || kind == LakeType.Kind.INT;
        boolean fits = switch (field.get().type()) {
            case INTEGER -> integer;
            case STRING -> kind == LakeType.Kind.STRING;
            case TIMESTAMP -> integer || kind == LakeType.Kind.TIMESTAMP;
        };
        return fits ? ord : -1;
    }

    /** The key of a row. */
    public static List<Object> keyOf(Object[] row, int[] keyOrdinals) {
        List<Object> k = new ArrayList<>(keyOrdinals.length);
        for (int o : keyOrdinals) {
            k.add(LakeValues.keyValue(row[o]));
        }
        return k;
    }

    private Object physical(Object value, int ord) throws ValueMismatch {
        if (types[ord] == null) {
            if (value == null) {
                return null;
            }
            throw new ValueMismatch("column " + names.get(ord) + " is of type " + shownTypes[ord]
                    + ", which kbackfill does not write");
        }
        return LakeValues.physical(value, types[ord], names.get(ord), shownTypes[ord]);
    }
}
