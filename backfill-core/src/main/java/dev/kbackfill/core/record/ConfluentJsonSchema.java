package dev.kbackfill.core.record;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.ethlo.time.ITU;
import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecificationVersion;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.core.registry.UnknownSchemaException;

/**
 * JSON in the Confluent wire format: a magic byte 0, the schema id as a 4-byte big-endian int, then JSON text. The
 * JSON Schema comes from the registry by id (cached), with its references ({@code $ref} by the name the reference
 * gives).
 *
 * <p>An object's top-level fields become columns typed by the schema's {@code properties} (local and referenced
 * {@code $ref}s followed): {@code integer} as whole numbers, {@code number} as exact decimals, {@code boolean},
 * {@code string}, and strings of format {@code date-time}, {@code date} and {@code uuid} as instants, dates and
 * UUIDs; the types Kafka Connect's JSON Schema converter marks ({@code org.apache.kafka.connect.data.Timestamp},
 * {@code Date}, {@code Time}, {@code Decimal}) as the values they stand for. Objects and arrays are JSON text; a
 * field the schema does not type is read as plain JSON is. A value of another type than its schema says is a
 * poison record. With {@code validate}, every record is first checked against its schema (networknt's
 * json-schema-validator; draft 7 unless the schema's {@code $schema} names another), a failure being a poison
 * record that names the first violation.
 */
public final class ConfluentJsonSchema implements SchemaDecoder {

    /** The base IRI a schema and its references are known under while validating (never fetched). */
    private static final String BASE = "https://schemas.kbackfill.invalid/";

    /** How a field is read. */
    enum Kind {
        INTEGER("an integer"), NUMBER("a number"), BOOLEAN("a boolean"), STRING("a string"),
        TIMESTAMP("a date-time string"), DATE("a date string"), UUID("a uuid string"),
        EPOCH_MILLIS("an integer (Connect Timestamp)"), EPOCH_DAYS("an integer (Connect Date)"),
        MILLIS_OF_DAY("an integer (Connect Time)"), JSON("JSON"), ANY("any JSON value");

        final String described;

        Kind(String described) {
            this.described = described;
        }
    }

    /** A schema id's field kinds, and its validator if asked for. */
    private record Typed(Map<String, Kind> fields, com.networknt.schema.Schema validator) {
    }

    private final SchemaRegistryClient registry;
    private final boolean validate;
    /** A schema id's {@link Typed}, or the reason it cannot be read. */
    private final Map<Integer, Object> schemas = new ConcurrentHashMap<>();
    private final ThreadLocal<Columns.Builder> columns = ThreadLocal.withInitial(Columns.Builder::new);

    public ConfluentJsonSchema(SchemaRegistryClient registry, boolean validate) {
        this.registry = registry;
        this.validate = validate;
    }

    @Override
    public boolean validates() {
        return validate;
    }

    @Override
    public Map<String, Object> columns(SourceRecord record, byte[] bytes, String single, String what) {
        int id = SchemaDecoder.schemaId(record, bytes, what, "JSON Schema");
        Object cached = schemas.computeIfAbsent(id, this::typed);
        if (cached instanceof RuntimeException e) {
            throw new DecodeException(record, "the " + what + " names schema id " + id + ": " + e.getMessage(), e);
        }
        Typed typed = (Typed) cached;
        if (typed.validator() != null) {
            validate(record, bytes, what, id, typed.validator());
        }
        Columns.Builder builder = columns.get();
        Map<String, Object> quick = quickColumns(bytes, FRAME, bytes.length - FRAME, typed.fields(), builder);
        return quick != null ? quick : parsedColumns(record, bytes, FRAME, bytes.length - FRAME, single, what, id,
                typed.fields(), builder);
    }

    /**
     * A flat document's columns ({@link FlatJson}), each read as its field's kind; or null where the document is not
     * flat or a field does not fit its kind, for {@link #parsedColumns} to read (and to say what the field holds).
     */
    static Map<String, Object> quickColumns(byte[] bytes, int offset, int length, Map<String, Kind> kinds,
                                            Columns.Builder builder) {
        Map<String, Object> flat = FlatJson.columns(bytes, offset, length, builder);
        if (!(flat instanceof Columns)) {
            // not flat; or a name given twice (the builder's other map), where each occurrence must fit its kind
            return null;
        }
        for (Map.Entry<String, Object> column : flat.entrySet()) {
            Object v = typed(column.getValue(), kinds.getOrDefault(column.getKey(), Kind.ANY));
            if (v == MISMATCH) {
                builder.clear();
                return null;
            }
            builder.put(column.getKey(), v);
        }
        return builder.build();
    }

    /** Any document's columns read by Jackson, each as its field's kind; a field that does not fit is poison. */
    static Map<String, Object> parsedColumns(SourceRecord record, byte[] bytes, int offset, int length, String single,
                                             String what, int id, Map<String, Kind> kinds, Columns.Builder builder) {
        return RecordDecoder.jsonColumns(record, bytes, offset, length, single, what, builder, (name, p, t) -> {
            Kind kind = kinds.getOrDefault(name, Kind.ANY);
            Object v = t == JsonToken.VALUE_NULL || kind == Kind.ANY || kind == Kind.JSON || t.isScalarValue()
                    ? typed(RecordDecoder.value(p, t), kind) : MISMATCH;
            if (v == MISMATCH) {
                throw new DecodeException(record, "the " + what + "'s field '" + name + "' is " + shown(p, t)
                        + ", not " + kind.described + " as schema id " + id + " says", null);
            }
            return v;
        });
    }

    private static void validate(SourceRecord record, byte[] bytes, String what, int id,
                                 com.networknt.schema.Schema validator) {
        List<com.networknt.schema.Error> errors;
        try {
            errors = validator.validate(new String(bytes, FRAME, bytes.length - FRAME, StandardCharsets.UTF_8),
                    InputFormat.JSON);
        } catch (RuntimeException e) {
            boolean unresolved = String.valueOf(e.getMessage()).contains("FileNotFoundException");
            throw new DecodeException(record, "the " + what + " cannot be validated against schema id " + id + ": "
                    + e.getMessage() + (unresolved ? " (a $ref resolves only to the schema's references in the "
                    + "registry; nothing is fetched from elsewhere)" : ""), e);
        }
        if (!errors.isEmpty()) {
            throw new DecodeException(record, "the " + what + " does not match schema id " + id + ": "
                    + errors.get(0).getInstanceLocation() + " " + errors.get(0).getMessage()
                    + (errors.size() > 1 ? " (and " + (errors.size() - 1) + " more)" : ""), null);
        }
    }

    private static final Object MISMATCH = new Object();

    /**
     * A value as {@link RecordDecoder#value} reads any JSON value (a string, a long or an exact decimal, a boolean,
     * null, JSON text), read as {@code kind}; or {@link #MISMATCH}. One definition for both ways a document is read.
     */
    static Object typed(Object plain, Kind kind) {
        if (plain == null) {
            return null;
        }
        switch (kind) {
            case ANY, JSON -> {
                return plain;
            }
            case INTEGER, EPOCH_MILLIS, EPOCH_DAYS, MILLIS_OF_DAY -> {
                Object whole = whole(plain);
                if (whole == MISMATCH || kind == Kind.INTEGER) {
                    return whole;
                }
                if (!(whole instanceof Long n)) {
                    return MISMATCH;
                }
                try {
                    return switch (kind) {
                        case EPOCH_MILLIS -> Instant.ofEpochMilli(n);
                        case EPOCH_DAYS -> LocalDate.ofEpochDay(n);
                        default -> LocalTime.ofNanoOfDay(Math.multiplyExact(n, 1_000_000L));
                    };
                } catch (java.time.DateTimeException | ArithmeticException e) {
                    return MISMATCH;
                }
            }
            case NUMBER -> {
                return plain instanceof Long n ? BigDecimal.valueOf(n) : plain instanceof BigDecimal ? plain : MISMATCH;
            }
            case BOOLEAN -> {
                return plain instanceof Boolean ? plain : MISMATCH;
            }
            default -> {
                if (!(plain instanceof String s)) {
                    return MISMATCH;
                }
                try {
                    return switch (kind) {
                        case TIMESTAMP -> ITU.parseDateTime(s).toInstant();
                        case DATE -> date(s);
                        case UUID -> java.util.UUID.fromString(s);
                        default -> s;
                    };
                } catch (java.time.DateTimeException | IllegalArgumentException e) {
                    return MISMATCH;
                }
            }
        }
    }

    /**
     * A JSON Schema {@code date} ({@code yyyy-mm-dd}), as {@code LocalDate.parse} reads it: the common ten-character
     * form read directly (a fifth of a typed record's decoding went into the formatter), anything else through it.
     *
     * @throws java.time.DateTimeException where it is not a valid date, as {@code LocalDate.parse} would
     */
    static LocalDate date(String s) {
        if (s.length() == 10 && s.charAt(4) == '-' && s.charAt(7) == '-') {
            int year = digits(s, 0, 4);
            int month = digits(s, 5, 7);
            int day = digits(s, 8, 10);
            if (year >= 0 && month >= 0 && day >= 0) {
                return LocalDate.of(year, month, day);
            }
        }
        return LocalDate.parse(s);
    }

    /** The ASCII digits {@code s[from, to)} as a number, or -1 where one is not a digit. */
    private static int digits(String s, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    /** A whole number: an integer, or a number with no fraction (JSON Schema's integer includes 1.0). */
    private static Object whole(Object plain) {
        if (plain instanceof Long) {
            return plain;
        }
        if (plain instanceof BigDecimal d && (d.signum() == 0 || d.stripTrailingZeros().scale() <= 0)) {
            return RecordDecoder.scalarInteger(d.toBigInteger());
        }
        return MISMATCH;
    }

    private static String shown(JsonParser p, JsonToken t) throws IOException {
        return switch (t) {
            case VALUE_STRING -> '"' + p.getText() + '"';
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            default -> p.getText();
        };
    }

    /** A schema id's field kinds and validator, or the reason it cannot be read (kept: asked once per id). */
    private Object typed(int id) {
        try {
            SchemaRegistryClient.RegisteredSchema schema = registry.schema(id, "JSON");
            Map<String, JsonNode> documents = new HashMap<>();
            for (Map.Entry<String, String> ref : schema.references().entrySet()) {
                documents.put(ref.getKey(), parse(ref.getValue(), "the reference " + ref.getKey()));
            }
            JsonNode root = parse(schema.text(), "schema id " + id);
            Map<String, Kind> fields = new HashMap<>();
            JsonNode top = resolve(root, root, documents, 0);
            top.path("properties").fields().forEachRemaining(e -> fields.put(e.getKey(), kind(e.getValue(), root,
                    documents)));
            return new Typed(Map.copyOf(fields), validate ? validator(id, schema, root) : null);
        } catch (UnknownSchemaException | IllegalArgumentException e) {
            return e;
        }
    }

    private static JsonNode parse(String text, String what) {
        try {
            return RecordDecoder.JSON.readTree(text);
        } catch (IOException e) {
            throw new IllegalArgumentException(what + " is not JSON: " + e.getMessage(), e);
        }
    }

    /** The schema a {@code $ref} leads to (a pointer into its document, or a reference by name), else the node. */
    private static JsonNode resolve(JsonNode node, JsonNode root, Map<String, JsonNode> documents, int depth) {
        JsonNode ref = node.get("$ref");
        if (ref == null || !ref.isTextual() || depth > 16) {
            return node;
        }
        String target = ref.asText();
        int hash = target.indexOf('#');
        String document = hash < 0 ? target : target.substring(0, hash);
        String pointer = hash < 0 ? "" : target.substring(hash + 1);
        JsonNode in = document.isEmpty() ? root : documents.get(document);
        if (in == null) {
            return node; // not among the references: typed as plain JSON
        }
        JsonNode found = pointer.isEmpty() ? in : in.at(pointer);
        return found.isMissingNode() ? node : resolve(found, in, documents, depth + 1);
    }

    /** How a property's values are read, from its schema. */
    private static Kind kind(JsonNode property, JsonNode root, Map<String, JsonNode> documents) {
        JsonNode s = resolve(property, root, documents, 0);
        String connect = s.path("title").asText("");
        switch (connect) {
            case "org.apache.kafka.connect.data.Timestamp" -> {
                return Kind.EPOCH_MILLIS;
            }
            case "org.apache.kafka.connect.data.Date" -> {
                return Kind.EPOCH_DAYS;
            }
            case "org.apache.kafka.connect.data.Time" -> {
                return Kind.MILLIS_OF_DAY;
            }
            case "org.apache.kafka.connect.data.Decimal" -> {
                return Kind.NUMBER;
            }
            default -> {
            }
        }
        JsonNode type = s.get("type");
        String single = null;
        if (type != null && type.isTextual()) {
            single = type.asText();
        } else if (type != null && type.isArray()) {
            java.util.Set<String> types = new java.util.TreeSet<>();
            type.forEach(t -> types.add(t.asText()));
            types.remove("null");
            if (types.size() == 1) {
                single = types.iterator().next();
            } else if (types.equals(java.util.Set.of("integer", "number"))) {
                single = "number";
            } else {
                return Kind.ANY;
            }
        }
        if (single == null) {
            return s.has("properties") || s.has("items") ? Kind.JSON : Kind.ANY;
        }
        return switch (single) {
            case "integer" -> Kind.INTEGER;
            case "number" -> Kind.NUMBER;
            case "boolean" -> Kind.BOOLEAN;
            case "object", "array" -> Kind.JSON;
            case "string" -> switch (s.path("format").asText("")) {
                case "date-time" -> Kind.TIMESTAMP;
                case "date" -> Kind.DATE;
                case "uuid" -> Kind.UUID;
                default -> Kind.STRING;
            };
            default -> Kind.ANY;
        };
    }

    /** A validator of schema id {@code id}, its references known by name (and never fetched from elsewhere). */
    private static com.networknt.schema.Schema validator(int id, SchemaRegistryClient.RegisteredSchema schema,
                                                        JsonNode root) {
        String location = BASE + "schema-" + id + ".json";
        Map<String, String> known = new HashMap<>();
        String ownId = root.path("$id").asText(null);
        for (Map.Entry<String, String> ref : schema.references().entrySet()) {
            String name = ref.getKey();
            known.put(name, ref.getValue());
            known.put(resolveIri(location, name), ref.getValue());
            if (ownId != null) {
                known.put(resolveIri(ownId, name), ref.getValue());
            }
        }
        SpecificationVersion version = SpecificationVersion.DRAFT_7;
        String declared = root.path("$schema").asText(null);
        if (declared != null) {
            version = SpecificationVersion.fromDialectId(declared).orElse(SpecificationVersion.DRAFT_7);
        }
        try {
            // references resolve to what the registry gave, never to a fetch from wherever a $ref points
            com.networknt.schema.SchemaRegistry registry = com.networknt.schema.SchemaRegistry.withDefaultDialect(
                    version, b -> b.schemas(known).schemaLoader(l -> l.fetchRemoteResources(false)));
            return registry.getSchema(SchemaLocation.of(location), schema.text(), InputFormat.JSON);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("its JSON Schema cannot be used to validate: " + e.getMessage(), e);
        }
    }

    private static String resolveIri(String base, String name) {
        try {
            return URI.create(base).resolve(name).toString();
        } catch (IllegalArgumentException e) {
            return name;
        }
    }
}
