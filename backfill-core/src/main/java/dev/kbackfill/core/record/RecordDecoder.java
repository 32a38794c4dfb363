package dev.kbackfill.core.record;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.kbackfill.resolver.RequestException;

/**
 * Turns a {@link SourceRecord} into a {@link Change}: key columns, value columns (or a tombstone) and the
 * record's coordinates.
 *
 * <p>JSON objects become one column per top-level field with a real type (text, whole numbers, exact decimals,
 * booleans); nested objects and arrays are JSON text. A key that is not a JSON object, and any {@code string} or
 * {@code bytes} key, is one column named {@code keyColumn}; likewise a value in {@code valueColumn}. With
 * {@code keyFields}, the primary key is those value fields instead of the record key.
 */
public final class RecordDecoder {

    static final ObjectMapper JSON = JsonMapper.builder(new Utf8JsonFactory())
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            // keep a decimal's scale: 12.30 stays 12.30
            .nodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
            .build();

    private final Format keyFormat;
    private final Format valueFormat;
    private final String keyColumn;
    private final String valueColumn;
    private final List<String> keyFields;
    /** The decoders of registry formats (Avro, Protobuf, JSON Schema), or null for formats without a schema. */
    private final SchemaDecoder keySchema;
    private final SchemaDecoder valueSchema;
    private final dev.kbackfill.core.version.VersionField versionField;
    /** {@code --where}, or null. */
    private final RecordFilter filter;
    /** {@code --columns}, {@code --rename}, {@code --header-columns}. */
    private final ColumnMapping mapping;
    /** Per decoding thread: collects a record's fields and shares field names between records of one shape. */
    private final ThreadLocal<Columns.Builder> builder = ThreadLocal.withInitial(Columns.Builder::new);
    /** Builds keys of {@code --key-fields}: every key then shares one shape (names) and holds its values only. */
    private final ThreadLocal<Columns.Builder> keyBuilder = ThreadLocal.withInitial(Columns.Builder::new);

    public Format keyFormat() {
        return keyFormat;
    }

    public Format valueFormat() {
        return valueFormat;
    }

    public RecordDecoder(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                         List<String> keyFields) {
        this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, null);
    }

    /** @param avro the Avro decoder, required when either format is {@link Format#AVRO} */
    public RecordDecoder(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                         List<String> keyFields, ConfluentAvro avro) {
        this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, avro, null);
    }

    /** @param versionField the value field that orders versions first ({@code --version-field}), or null */
    public RecordDecoder(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                         List<String> keyFields, ConfluentAvro avro, dev.kbackfill.core.version.VersionField versionField) {
        this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, keyFormat == Format.AVRO ? avro : null,
                valueFormat == Format.AVRO ? avro : null, versionField);
    }

    /**
     * @param keySchema    the decoder of the key's registry format ({@link SchemaDecoder#of}), required when
     *                     {@code keyFormat} {@link Format#needsRegistry() needs a registry}, else null
     * @param valueSchema  likewise for the value
     * @param versionField the value field that orders versions first ({@code --version-field}), or null
     */
    public RecordDecoder(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                         List<String> keyFields, SchemaDecoder keySchema, SchemaDecoder valueSchema,
                         dev.kbackfill.core.version.VersionField versionField) {
        this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, keySchema, valueSchema, versionField, null,
                ColumnMapping.none());
    }

    private RecordDecoder(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                          List<String> keyFields, SchemaDecoder keySchema, SchemaDecoder valueSchema,
                          dev.kbackfill.core.version.VersionField versionField, RecordFilter filter,
                          ColumnMapping mapping) {
        if (keyFormat.needsRegistry() && keySchema == null || valueFormat.needsRegistry() && valueSchema == null) {
            throw new IllegalArgumentException("the " + (keyFormat.needsRegistry() && keySchema == null ? keyFormat
                    : valueFormat).label() + " format needs a schema registry");
        }
        this.keySchema = keySchema;
        this.valueSchema = valueSchema;
        this.keyFormat = Objects.requireNonNull(keyFormat);
        this.valueFormat = Objects.requireNonNull(valueFormat);
        this.keyColumn = Objects.requireNonNull(keyColumn);
        this.valueColumn = Objects.requireNonNull(valueColumn);
        this.keyFields = List.copyOf(keyFields);
        this.versionField = versionField;
        this.filter = filter;
        this.mapping = Objects.requireNonNull(mapping);
        this.unseen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        this.unseen.addAll(mapping.named());
        java.util.List<String> reserved = new java.util.ArrayList<>(RESERVED);
        reserved.add(keyColumn);
        mapping.checkReserved(reserved);
    }

    /**
     * This decoder with a record filter ({@code --where}, or null for none) and a column mapping; a new decoder, this
     * one unchanged.
     */
    public RecordDecoder withShaping(RecordFilter filter, ColumnMapping mapping) {
        return new RecordDecoder(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, keySchema, valueSchema,
                versionField, filter, mapping);
    }

    /** The record filter ({@code --where}), if any: a run decodes every record whole to apply it. */
    public java.util.Optional<RecordFilter> filter() {
        return java.util.Optional.ofNullable(filter);
    }

    /**
     * The key's columns where they are known before any record is read: the {@code keyFields}' columns, or the one
     * column of a key that is no object ({@code bytes}, {@code string}); empty where records tell (an object key).
     */
    public java.util.Optional<List<String>> keyColumns() {
        if (!keyFields.isEmpty()) {
            return java.util.Optional.of(keyFields.stream().map(mapping::columnOf).toList());
        }
        return keyFormat == Format.BYTES || keyFormat == Format.STRING
                ? java.util.Optional.of(List.of(mapping.columnOf(keyColumn))) : java.util.Optional.empty();
    }

    /** The column mapping. */
    public ColumnMapping mapping() {
        return mapping;
    }

    /**
     * The key's or value's format as a job's spec records it: its label, and {@code +validated} when records are
     * checked against their schema (which changes which records are poison, so a job's output).
     */
    public String formatSpec(boolean key) {
        Format f = key ? keyFormat : valueFormat;
        SchemaDecoder schema = key ? keySchema : valueSchema;
        return f.label() + (schema != null && schema.validates() ? "+validated" : "");
    }

    /** The version field this decoder reads into every change that has a value, if any. */
    public java.util.Optional<dev.kbackfill.core.version.VersionField> versionField() {
        return java.util.Optional.ofNullable(versionField);
    }

    /** Whether the primary key comes from the record key alone (no {@code --key-fields}), so it decodes apart. */
    public boolean keyedByRecordKey() {
        return keyFields.isEmpty();
    }

    /**
     * The record with only its key decoded (see {@link Change#undecoded}); {@link #decode} does the rest. Only
     * when {@link #keyedByRecordKey()}.
     *
     * @throws DecodeException naming the record's coordinates
     */
    public Change decodeKey(SourceRecord record) {
        if (!keyFields.isEmpty()) {
            throw new IllegalStateException("the key comes from value fields " + keyFields);
        }
        return Change.undecoded(mapping.key(recordKey(record)), record);
    }

    /**
     * A record's primary key as {@link #decode} gives it (named as {@code --rename} maps it), its value decoded only
     * where the key comes from value fields; nothing else of the record is checked or remembered (no filter, no
     * mapping of its values, no field names noted): for reading the keys of a log and nothing more.
     *
     * @throws DecodeException naming the record's coordinates
     */
    public Map<String, Object> keyOf(SourceRecord record) {
        if (keyFields.isEmpty()) {
            return mapping.key(recordKey(record));
        }
        Map<String, Object> values = record.value() == null ? null
                : columns(record, record.value(), valueFormat, valueColumn, "value");
        Map<String, Object> source = values != null ? values
                : record.key() == null ? Map.of() : columns(record, record.key(), keyFormat, keyColumn, "key");
        return mapping.key(fieldsKey(record, source, ""));
    }

    /**
     * The key of {@code --key-fields} from {@code source}, in their order: as {@link Columns} of one shape for every
     * record (a batch holds a key per row until it is written: a {@code LinkedHashMap} of two fields took about 220
     * bytes, these about 70).
     *
     * @param tombstone what to add to the message of a missing field
     */
    private Map<String, Object> fieldsKey(SourceRecord record, Map<String, Object> source, String tombstone) {
        Columns.Builder key = keyBuilder.get();
        for (String field : keyFields) {
            Object v = source.get(field);
            if (v == null) {
                key.clear();
                throw new DecodeException(record, "key field '" + field + "' is missing or null" + tombstone, null);
            }
            key.put(field, v);
        }
        return key.build();
    }

    /** The primary key when it is the record key (no {@code --key-fields}). */
    private Map<String, Object> recordKey(SourceRecord record) {
        if (record.key() == null) {
            throw new DecodeException(record, "the record has no key, and the primary key is the record key; "
                    + "name value fields with --key-fields to key by them", null);
        }
        return columns(record, record.key(), keyFormat, keyColumn, "key");
    }

    /**
     * The record decoded, whether or not {@code --where} keeps it.
     *
     * @throws DecodeException naming the record's coordinates
     */
    public Change decode(SourceRecord record) {
        return decode(record, false);
    }

    /**
     * The record decoded, or empty when {@code --where} leaves it out.
     *
     * @throws DecodeException naming the record's coordinates (also when the filter cannot be evaluated on it)
     */
    public java.util.Optional<Change> decodeKept(SourceRecord record) {
        return java.util.Optional.ofNullable(decode(record, true));
    }

    private Change decode(SourceRecord record, boolean filtering) {
        Map<String, Object> values = record.value() == null ? null
                : columns(record, record.value(), valueFormat, valueColumn, "value");
        Comparable<?> version = null;
        if (versionField != null && values != null) {
            try {
                version = versionField.valueOf(values);
            } catch (IllegalArgumentException e) {
                throw new DecodeException(record, e.getMessage(), null);
            }
        }
        Map<String, Object> key;
        if (keyFields.isEmpty()) {
            key = recordKey(record);
            if (filtering && filter != null && !filter.keeps(record, key, values, keyColumn, valueColumn)) {
                return null;
            }
        } else {
            // the record key is read only where something needs it: a tombstone's key fields, or the filter
            boolean filters = filtering && filter != null;
            Map<String, Object> recordKey = record.key() == null || (values != null && !filters) ? null
                    : columns(record, record.key(), keyFormat, keyColumn, "key");
            if (filters && !filter.keeps(record, recordKey, values, keyColumn, valueColumn)) {
                return null;
            }
            Map<String, Object> source = values;
            if (source == null) {
                source = recordKey == null ? Map.of() : recordKey;
            }
            key = fieldsKey(record, source,
                    values == null ? " (a tombstone: the key fields are looked up in the record key)" : "");
            if (values instanceof Columns c) {
                values = c.without(keyFields);
            } else if (values != null) {
                values = new LinkedHashMap<>(values);
                keyFields.forEach(values::remove);
            }
        }
        if (!unseen.isEmpty() && values != null) {
            values.keySet().forEach(unseen::remove);
            mapping.headerColumns().forEach(h -> {
                if (record.headers() != null && record.headers().lastHeader(h) != null) {
                    unseen.remove(h);
                }
            });
            if (!namesChecked) {
                seen.addAll(values.keySet());
                if (record.headers() != null) {
                    record.headers().forEach(h -> seenHeaders.add(h.key()));
                }
            }
        }
        Map<String, Object> columns;
        try {
            columns = mapping.values(values, record.headers());
        } catch (ColumnMapping.Collision e) {
            // a property of this record (the fields it carries), found when it comes, maybe after batches committed:
            // a poison record, never "bad input" after the fact
            throw new DecodeException(record, e.getMessage() + " (a record this mapping cannot write: --on-error skip "
                    + "or --dead-letter keep it aside; a mapping that writes it is another job, --job NAME, or this one "
                    + "reset)", e);
        }
        Map<String, Object> mappedKey = mapping.key(key);
        checkKeyFields(record, mappedKey, columns);
        checkColumns(record, mappedKey, columns);
        return new Change(mappedKey, columns, record.partition(), record.offset(), record.timestamp(),
                record.logTime(), record, version);
    }

    /** The fields and headers the mapping names that no record decoded so far carried (a typo in an option?). */
    private final java.util.Set<String> unseen;
    /** The fields and headers records carried until {@link #checkMappedNames()}, while some mapped name is unseen. */
    private final java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.Set<String> seenHeaders = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile boolean namesChecked;

    /**
     * Refuses a name of {@code --columns}, {@code --rename} or {@code --header-columns} that no record decoded so far
     * carried and that is a near miss (one edit in names of four letters or more, two in names of six or more; short
     * names such as {@code n} and {@code s} are too close to tell) of a field (or, for a header,
     * a header) they did carry: a misspelling, which
     * would otherwise drop a field, ignore a rename or fill a column with NULL. Called once, after the first batch
     * is decoded and before anything is written; a name that is no near miss may be a field later records carry,
     * and is only warned about at the end ({@link #unseenMappedFields()}).
     *
     * @throws RequestException naming the option, the name and the field meant
     */
    public void checkMappedNames() {
        namesChecked = true;
        try {
            for (String name : new java.util.TreeSet<>(unseen)) {
                boolean header = mapping.headerColumns().contains(name);
                // a header name is a near miss of a header, a field's of a field; one edit, or two in long names
                for (String carried : new java.util.TreeSet<>(header ? seenHeaders : seen)) {
                    int d = dev.kbackfill.resolver.EditDistance.atMost2(name, carried);
                    int shorter = Math.min(name.length(), carried.length());
                    if (!carried.equals(name) && (d == 1 && shorter >= 4 || d == 2 && shorter >= 6)) {
                        throw new RequestException(mapping.optionsNaming(name) + " name" + (mapping.optionsNaming(name)
                                .contains(" and ") ? "" : "s") + " " + (header ? "header" : "field") + " '" + name
                                + "', which no record of the first batch carries; did you mean '" + carried
                                + "'? (nothing was written)");
                    }
                }
            }
        } finally {
            seen.clear();
            seenHeaders.clear();
        }
    }


    /**
     * The fields and headers that {@code --columns}, {@code --rename} and {@code --header-columns} name and that no
     * record decoded by this decoder carried: each a warning for people, most often a misspelt name.
     */
    public java.util.Set<String> unseenMappedFields() {
        return java.util.Set.copyOf(unseen);
    }

    /** The record shape whose columns were last found free of collisions, on this decoding thread. */
    private final ThreadLocal<Object> checkedShape = new ThreadLocal<>();

    /**
     * A value that also carries a key column's field ({@code {"order_id": 7}} in the value of key {@code 7} written
     * to {@code --key-column order_id}, as a table another writer keeps current has it): the field is the key, and
     * the row's key column holds it (sinks write key columns from the key); a value that says another key than the
     * record's is a poison record, naming both, since one column cannot hold two values. Compared as text ({@code 7}
     * and {@code "7"} agree).
     */
    private void checkKeyFields(SourceRecord record, Map<String, Object> key, Map<String, Object> values) {
        if (values == null || values.isEmpty()) {
            return;
        }
        if (!(values instanceof Columns)) { // values of no known shape (Jackson's nested JSON): each pair, each record
            for (String k : key.keySet()) {
                for (String field : values.keySet()) {
                    if (field.equalsIgnoreCase(k)) {
                        checkKeyField(record, key, k, values, field);
                    }
                }
            }
            return;
        }
        KeyFieldPairs pairs = keyFieldPairs.get();
        if (pairs == null || !pairs.fits(key, values)) {
            pairs = KeyFieldPairs.of(key, values);
            keyFieldPairs.set(pairs);
        }
        for (int i = 0; i < pairs.keyColumns.length; i++) {
            checkKeyField(record, key, pairs.keyColumns[i], values, pairs.valueFields[i]);
        }
    }

    private static void checkKeyField(SourceRecord record, Map<String, Object> key, String keyColumn,
                                      Map<String, Object> values, String field) {
        Object v = values.get(field);
        Object k = key.get(keyColumn);
        if (!asText(v).equals(asText(k))) {
            throw new DecodeException(record, "value field '" + field + "' holds " + shown(v) + ", and the key's "
                    + "column " + keyColumn + " holds " + shown(k) + ": one column cannot hold both; write the field "
                    + "under another name with --rename " + field + "=NAME, or leave it out with --columns", null);
        }
    }

    /** The pairs of the last shapes of key and value this thread saw, found once per pair of shapes. */
    private final ThreadLocal<KeyFieldPairs> keyFieldPairs = new ThreadLocal<>();

    /**
     * The key columns and value fields whose names are equal but for case, for one pair of a key's and a value's
     * shapes ({@link Columns#shape()}; a key of another kind, a scalar's one column, by its names): what
     * {@link #checkKeyFields} compares record by record. Finding them compared every key column with every field per
     * record, 1.5 s of a 10M-record run keyed by value fields.
     */
    private record KeyFieldPairs(Object keyShape, java.util.Set<String> keyNames, Object valueShape,
                                 String[] keyColumns, String[] valueFields) {

        static KeyFieldPairs of(Map<String, Object> key, Map<String, Object> values) {
            List<String> keyColumns = new java.util.ArrayList<>();
            List<String> valueFields = new java.util.ArrayList<>();
            for (String k : key.keySet()) {
                for (String field : values.keySet()) {
                    if (field.equalsIgnoreCase(k)) {
                        keyColumns.add(k);
                        valueFields.add(field);
                    }
                }
            }
            Object keyShape = key instanceof Columns c ? c.shape() : null;
            return new KeyFieldPairs(keyShape, keyShape == null ? java.util.Set.copyOf(key.keySet()) : null,
                    values instanceof Columns c ? c.shape() : null, keyColumns.toArray(String[]::new),
                    valueFields.toArray(String[]::new));
        }

        /** Whether these are the pairs of the key's and the values' shapes. */
        boolean fits(Map<String, Object> key, Map<String, Object> values) {
            if (!(values instanceof Columns c) || c.shape() != valueShape) {
                return false;
            }
            if (keyShape != null) {
                return key instanceof Columns k && k.shape() == keyShape;
            }
            return !(key instanceof Columns) && keyNames.equals(key.keySet());
        }
    }

    private static String asText(Object v) {
        if (v instanceof java.math.BigDecimal d) {
            return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
        }
        if (v instanceof byte[] b) {
            return java.util.Base64.getEncoder().encodeToString(b);
        }
        return String.valueOf(v);
    }

    private static String shown(Object v) {
        String t = asText(v);
        return v instanceof String ? "'" + (t.length() > 40 ? t.substring(0, 40) + "..." : t) + "'"
                : t.length() > 40 ? t.substring(0, 40) + "..." : t;
    }

    /**
     * Refuses a record whose value fields would share a column with each other or with a column the row fills
     * otherwise: two fields whose names differ only in case (one column in a database), or a field named like a
     * metadata column or like the key column of a key that is not an object. A poison record (a property of the
     * record's fields, which may first come after batches committed), naming the record, the field and the option
     * that fixes it; checked once per record shape.
     */
    private void checkColumns(SourceRecord record, Map<String, Object> key, Map<String, Object> values) {
        if (values == null || values.isEmpty()) {
            return;
        }
        Object shape = values instanceof Columns c ? c.shape() : null;
        if (shape != null && shape == checkedShape.get()) {
            return;
        }
        Map<String, String> lower = new java.util.HashMap<>(values.size() * 2);
        for (String field : values.keySet()) {
            String before = lower.put(field.toLowerCase(java.util.Locale.ROOT), field);
            if (before != null) {
                throw new DecodeException(record, "value fields '" + before + "' and '" + field
                        + "' would be one column (names compare without regard to case); write one under another "
                        + "name with --rename " + field + "=NAME, or leave it out with --columns", null);
            }
            if (RESERVED.contains(field.toLowerCase(java.util.Locale.ROOT))) {
                throw new DecodeException(record, "value field '" + field + "' has the name of a "
                        + "column kbackfill fills itself (a record's coordinates); write it under another name with "
                        + "--rename " + field + "=NAME, or leave it out with --columns", null);
            }
        }
        checkedShape.set(shape);
    }

    /** The metadata columns' names, lower case: no value field may take one. */
    private static final java.util.Set<String> RESERVED = reserved();

    private static java.util.Set<String> reserved() {
        dev.kbackfill.core.sink.SinkSettings.MetadataColumns m = dev.kbackfill.core.sink.SinkSettings.MetadataColumns.DEFAULT;
        java.util.Set<String> names = new java.util.HashSet<>();
        for (String n : List.of(m.partition(), m.offset(), m.timestamp(), m.deleted(), m.topic(), m.logTime(), m.version())) {
            names.add(n.toLowerCase(java.util.Locale.ROOT));
        }
        return java.util.Set.copyOf(names);
    }

    private Map<String, Object> columns(SourceRecord record, byte[] bytes, Format format, String single,
                                        String what) {
        return switch (format) {
            case BYTES -> ScalarColumn.of(single, bytes);
            case AVRO, PROTOBUF, JSON_SCHEMA -> (what.equals("key") ? keySchema : valueSchema)
                    .columns(record, bytes, single, what);
            case STRING -> ScalarColumn.of(single, utf8(record, bytes, what));
            case JSON -> json(record, bytes, single, what);
        };
    }

    /**
     * One column per top-level field, read in one streaming pass (no tree per record): a flat object of plain
     * fields by {@link FlatJson}, anything else by Jackson.
     */
    Map<String, Object> json(SourceRecord record, byte[] bytes, String single, String what) {
        Columns.Builder columns = builder.get();
        Map<String, Object> flat = FlatJson.columns(bytes, 0, bytes.length, columns);
        if (flat != null) {
            return flat;
        }
        return jsonColumns(record, bytes, 0, bytes.length, single, what, columns, (name, p, t) -> value(p, t));
    }

    /** How the value of one top-level field is read, at its first token. */
    interface FieldReader {
        Object read(String name, JsonParser p, JsonToken t) throws IOException;
    }

    /**
     * The columns of a JSON document in {@code bytes[offset, offset + length)}: an object's top-level fields, each
     * read by {@code fields}, or anything else as the one column {@code single}.
     */
    static Map<String, Object> jsonColumns(SourceRecord record, byte[] bytes, int offset, int length, String single,
                                           String what, Columns.Builder builder, FieldReader fields) {
        try (JsonParser p = ((Utf8JsonFactory) JSON.getFactory()).utf8Parser(bytes, offset, length,
                builder.jsonBuffers)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new DecodeException(record, "the " + what + " is empty, not JSON", null);
            }
            if (t != JsonToken.START_OBJECT) {
                return ScalarColumn.of(single, value(p, t));
            }
            Columns.Builder columns = builder.clear();
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                columns.put(name, fields.read(name, p, p.nextToken()));
            }
            if (t != JsonToken.END_OBJECT) {
                throw new DecodeException(record, "the " + what + " is not JSON: unexpected " + t, null);
            }
            return columns.build();
        } catch (JsonProcessingException e) {
            throw new DecodeException(record, "the " + what + " is not JSON: " + e.getOriginalMessage(), e);
        } catch (NumberFormatException | ArithmeticException e) {
            // valid JSON, but a number no exact decimal holds (an exponent of more than ten digits): a poison
            // record, not a failure of the run
            throw new DecodeException(record, "the " + what + " holds a number that cannot be read exactly: "
                    + e.getMessage(), e);
        } catch (IOException e) {
            throw new DecodeException(record, "the " + what + " cannot be read: " + e.getMessage(), e);
        }
    }

    /** The value at the parser's current token: a typed scalar, or JSON text for an object or array. */
    static Object value(JsonParser p, JsonToken t) throws IOException {
        if (t == null) {
            throw new JsonParseException(p, "unexpected end of input");
        }
        return switch (t) {
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                    ? scalarInteger(p.getBigIntegerValue()) : (Object) p.getLongValue();
            case VALUE_NUMBER_FLOAT -> p.getDecimalValue();
            case VALUE_TRUE -> Boolean.TRUE;
            case VALUE_FALSE -> Boolean.FALSE;
            case VALUE_NULL -> null;
            case START_OBJECT, START_ARRAY -> new JsonText(JSON.readTree(p).toString());
            default -> throw new JsonParseException(p, "unexpected " + t);
        };
    }

    /** A whole number: a long where it fits, else an exact decimal. */
    static Object scalarInteger(BigInteger big) {
        return big.bitLength() < 64 ? (Object) big.longValue() : new BigDecimal(big);
    }

    private static String utf8(SourceRecord record, byte[] bytes, String what) {
        boolean ascii = true;
        for (byte b : bytes) {
            if (b < 0) {
                ascii = false;
                break;
            }
        }
        if (ascii) {
            return new String(bytes, StandardCharsets.ISO_8859_1); // a copy, where a decoder is set up every time
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new DecodeException(record, "the " + what + " is not UTF-8 text; use --" + what + "-format bytes", e);
        }
    }

    /** The column type of a decoded value, or null for null. */
    public static ColumnType typeOf(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof String) {
            return ColumnType.STRING;
        }
        if (value instanceof Long || value instanceof Integer) {
            return ColumnType.LONG;
        }
        if (value instanceof BigDecimal) {
            return ColumnType.DECIMAL;
        }
        if (value instanceof Double || value instanceof Float) {
            return ColumnType.DOUBLE;
        }
        if (value instanceof Boolean) {
            return ColumnType.BOOLEAN;
        }
        if (value instanceof byte[]) {
            return ColumnType.BYTES;
        }
        if (value instanceof JsonText) {
            return ColumnType.JSON;
        }
        if (value instanceof java.time.Instant) {
            return ColumnType.TIMESTAMP;
        }
        if (value instanceof java.time.LocalDate) {
            return ColumnType.DATE;
        }
        if (value instanceof java.time.LocalTime) {
            return ColumnType.TIME;
        }
        if (value instanceof java.util.UUID) {
            return ColumnType.UUID;
        }
        throw new IllegalArgumentException("no column type for " + value.getClass().getName());
    }
}
