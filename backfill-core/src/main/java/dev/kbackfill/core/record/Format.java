package dev.kbackfill.core.record;

import java.util.Locale;

/** How key or value bytes are read: {@code --key-format}, {@code --value-format}. */
public enum Format {
    /** Raw bytes: one {@code BYTES} column. */
    BYTES,
    /** UTF-8 text: one {@code STRING} column. */
    STRING,
    /** A JSON document: an object's top-level fields become typed columns, anything else one JSON column. */
    JSON,
    /** Confluent-framed Avro (magic byte, schema id, binary body) with schemas from a schema registry. */
    AVRO;

    /** The format as the command line spells it: {@code json}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Format parse(String option, String text) {
        try {
            return valueOf(text.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new dev.kbackfill.resolver.RequestException("invalid " + option + " '" + text
                    + "': expected bytes, string, json or avro");
        }
    }
}
