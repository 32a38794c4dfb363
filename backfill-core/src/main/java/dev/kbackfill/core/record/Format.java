package dev.kbackfill.core.record;

import java.util.Locale;

/** How key or value bytes are read: {@code --key-format}, {@code --value-format}. */
public enum Format {
    /** Raw bytes: one {@code BYTES} column. */
    BYTES("bytes"),
    /** UTF-8 text: one {@code STRING} column. */
    STRING("string"),
    /** A JSON document: an object's top-level fields become typed columns, anything else one JSON column. */
    JSON("json"),
    /** Confluent-framed Avro (magic byte, schema id, binary body) with schemas from a schema registry. */
    AVRO("avro"),
    /**
     * Confluent-framed Protobuf (magic byte, schema id, message indexes, binary body) with {@code .proto} schemas
     * and their imports from a schema registry.
     */
    PROTOBUF("protobuf"),
    /** Confluent-framed JSON (magic byte, schema id, JSON text) typed by its JSON Schema from a schema registry. */
    JSON_SCHEMA("json-schema");

    private final String label;

    Format(String label) {
        this.label = label;
    }

    /** The format as the command line spells it: {@code json}, {@code json-schema}. */
    public String label() {
        return label;
    }

    /** Whether records of this format name a writer schema that is fetched from a schema registry. */
    public boolean needsRegistry() {
        return this == AVRO || this == PROTOBUF || this == JSON_SCHEMA;
    }

    /** Whether a record of this format can have fields (a version field, key fields): a structured format. */
    public boolean hasFields() {
        return this != BYTES && this != STRING;
    }

    public static Format parse(String option, String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        for (Format f : values()) {
            if (f.label.equals(t)) {
                return f;
            }
        }
        if (t.equals("json_schema") || t.equals("jsonschema")) {
            return JSON_SCHEMA;
        }
        throw new dev.kbackfill.resolver.RequestException("invalid " + option + " '" + text
                + "': expected bytes, string, json, avro, protobuf or json-schema");
    }
}
