package dev.kbackfill.core.record;

import java.nio.ByteBuffer;
import java.util.Map;

import dev.kbackfill.core.registry.SchemaRegistryClient;

/**
 * Decodes keys or values in the Confluent wire format (a magic byte 0 and the writer schema's id as a 4-byte
 * big-endian int before the body) into columns, with the writer schema from a schema registry.
 */
public interface SchemaDecoder {

    /**
     * The columns of one framed key or value: a record's top-level fields, or one column {@code single}.
     *
     * @param what {@code key} or {@code value}, for messages
     * @throws DecodeException for bytes that are not framed in this format, name an unknown schema id, or do not
     *                         match their schema
     */
    Map<String, Object> columns(SourceRecord record, byte[] bytes, String single, String what);

    /** Whether records are checked against their schema beyond what decoding needs (JSON Schema's validation). */
    default boolean validates() {
        return false;
    }

    /**
     * The decoder of a registry format.
     *
     * @param validate check each JSON Schema record against its schema (only {@link Format#JSON_SCHEMA})
     * @throws IllegalArgumentException for a format that needs no registry
     */
    static SchemaDecoder of(Format format, SchemaRegistryClient registry, boolean validate) {
        return switch (format) {
            case AVRO -> new ConfluentAvro(registry);
            case PROTOBUF -> new ConfluentProtobuf(registry);
            case JSON_SCHEMA -> new ConfluentJsonSchema(registry, validate);
            default -> throw new IllegalArgumentException(format.label() + " needs no schema registry");
        };
    }

    /** Bytes before a Confluent-framed body: the magic byte and the schema id. */
    int FRAME = 5;

    /**
     * The schema id of a Confluent-framed key or value.
     *
     * @param format the format's name for messages, e.g. {@code Avro}
     * @throws DecodeException when the bytes are too short or do not start with the magic byte
     */
    static int schemaId(SourceRecord record, byte[] bytes, String what, String format) {
        if (bytes.length < FRAME) {
            throw new DecodeException(record, "the " + what + " is truncated: " + bytes.length
                    + " bytes, Confluent-framed " + format + " needs at least " + FRAME, null);
        }
        if (bytes[0] != 0) {
            throw new DecodeException(record, String.format("the %s starts with byte 0x%02x, not the magic byte 0 of "
                    + "Confluent-framed %s", what, bytes[0], format), null);
        }
        return ByteBuffer.wrap(bytes, 1, 4).getInt();
    }
}
