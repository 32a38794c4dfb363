package dev.kbackfill.core.record;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.core.registry.UnknownSchemaException;

/**
 * Protobuf in the Confluent wire format: a magic byte 0, the schema id as a 4-byte big-endian int, the message
 * indexes (a zigzag varint count, then that many zigzag varints: the path to the message type among the file's
 * top-level and then nested messages; a count of 0 is the short form of {@code [0]}, the first message), then the
 * Protobuf binary body. The schema ({@code .proto} source) and its imports come from the registry by id (cached).
 *
 * <p>A message's top-level fields become columns with real types: integers as whole numbers (unsigned ones as
 * their unsigned value), {@code float}/{@code double}, {@code bool}, {@code string}, {@code bytes}, enums as their
 * names, {@code google.protobuf.Timestamp} as an instant, the wrapper types ({@code Int64Value}, ...) as their
 * value, {@code confluent.type.Decimal} as an exact decimal, {@code google.type.Date} as a date and
 * {@code google.type.TimeOfDay} as a time. Each member of a {@code oneof} is a column, null unless it is the one
 * set. A field with presence (a message, a {@code oneof} member, proto3 {@code optional}, any proto2 field) that
 * is not set is null; a proto3 scalar without presence reads as its default, as in the language. Other messages
 * are JSON text, repeated fields JSON arrays and maps JSON objects.
 */
public final class ConfluentProtobuf implements SchemaDecoder {

    private static final JsonFactory JSON = new JsonFactory();

    private final SchemaRegistryClient registry;
    /** A schema id's file (or the reason it cannot be read). */
    private final Map<Integer, Object> files = new ConcurrentHashMap<>();
    /** A schema id and message-index path's message type, with its reader. */
    private final Map<List<Integer>, ProtobufReader> types = new ConcurrentHashMap<>();
    private final ThreadLocal<Columns.Builder> columns = ThreadLocal.withInitial(Columns.Builder::new);

    public ConfluentProtobuf(SchemaRegistryClient registry) {
        this.registry = registry;
    }

    @Override
    public Map<String, Object> columns(SourceRecord record, byte[] bytes, String single, String what) {
        int id = SchemaDecoder.schemaId(record, bytes, what, "Protobuf");
        CodedInputStream in = CodedInputStream.newInstance(bytes, FRAME, bytes.length - FRAME);
        List<Integer> path = new ArrayList<>(3);
        path.add(id);
        try {
            int count = in.readSInt32();
            if (count < 0 || count > 100) {
                throw new DecodeException(record, "the " + what + "'s message indexes are malformed (a count of "
                        + count + ")", null);
            }
            if (count == 0) {
                path.add(0);
            }
            for (int i = 0; i < count; i++) {
                path.add(in.readSInt32());
            }
        } catch (IOException e) {
            throw new DecodeException(record, "the " + what + " is truncated inside its message indexes", e);
        }
        ProtobufReader reader = type(record, what, path);
        Columns.Builder out = columns.get().clear();
        try {
            reader.read(in, out);
        } catch (IOException e) { // InvalidProtocolBufferException
            out.clear();
            throw new DecodeException(record, "the " + what + "'s body does not match message "
                    + reader.type().getFullName() + " of schema id " + id + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            out.clear();
            throw new DecodeException(record, "the " + what + " (message " + reader.type().getFullName()
                    + " of schema id " + id + ") cannot be read: " + e.getMessage(), e);
        }
        return out.build();
    }

    /**
     * The columns of a message protobuf-java has read: the same as {@link ProtobufReader} gives from its bytes (the
     * reference the reader is tested against).
     */
    static void columns(Message message, Columns.Builder out) {
        for (FieldDescriptor f : message.getDescriptorForType().getFields()) {
            out.put(f.getName(), column(message, f));
        }
    }

    /** The message type at {@code path} (schema id, then message indexes), with its reader. */
    private ProtobufReader type(SourceRecord record, String what, List<Integer> path) {
        ProtobufReader cached = types.get(path);
        if (cached != null) {
            return cached;
        }
        int id = path.get(0);
        Object file = files.computeIfAbsent(id, i -> {
            try {
                SchemaRegistryClient.RegisteredSchema schema = registry.schema(i, "PROTOBUF");
                return ProtoFiles.build("schema-" + i + ".proto", schema.text(), schema.references());
            } catch (IllegalArgumentException | UnknownSchemaException e) {
                return e; // the same answer for every record naming this id, without asking again
            }
        });
        if (file instanceof RuntimeException e) {
            throw new DecodeException(record, "the " + what + " names schema id " + id + ": " + e.getMessage(), e);
        }
        List<Descriptor> candidates = ((FileDescriptor) file).getMessageTypes();
        Descriptor type = null;
        for (int i = 1; i < path.size(); i++) {
            int index = path.get(i);
            if (index < 0 || index >= candidates.size()) {
                throw new DecodeException(record, "the " + what + "'s message indexes " + path.subList(1, path.size())
                        + " name no message of schema id " + id + " (" + (type == null ? "the file" : type.getFullName())
                        + " has " + candidates.size() + ")", null);
            }
            type = candidates.get(index);
            candidates = type.getNestedTypes();
        }
        ProtobufReader reader = new ProtobufReader(type);
        types.put(List.copyOf(path), reader);
        return reader;
    }

    /** A column value: null when a field with presence is not set, a typed scalar, or JSON text. */
    private static Object column(Message message, FieldDescriptor f) {
        if (f.isRepeated()) {
            return new JsonText(json(g -> write(g, message, f)));
        }
        if (f.hasPresence() && !message.hasField(f)) {
            return null;
        }
        Object v = message.getField(f);
        if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
            return messageColumn((Message) v);
        }
        return scalar(f, v);
    }

    /** A set message field's column: a well-known type's value, else JSON text of its fields. */
    static Object messageColumn(Message m) {
        Object known = wellKnown(m);
        return known != NOT_KNOWN ? known : new JsonText(json(g -> writeMessage(g, m)));
    }

    /**
     * A repeated field's column from its elements as {@link ProtobufReader} collects them (scalars as column values,
     * messages and map entries as their encoded bytes): a JSON array, or an object for a map.
     */
    static JsonText repeated(FieldDescriptor f, List<Object> elements) throws IOException {
        Descriptor element = f.getJavaType() == FieldDescriptor.JavaType.MESSAGE ? f.getMessageType() : null;
        List<Object> decoded = new ArrayList<>(elements.size());
        for (Object e : elements) {
            decoded.add(element == null ? e : DynamicMessage.parseFrom(element, (ByteString) e));
        }
        return new JsonText(json(g -> {
            if (f.isMapField()) {
                FieldDescriptor key = element.findFieldByNumber(1);
                FieldDescriptor value = element.findFieldByNumber(2);
                g.writeStartObject();
                for (Object e : decoded) {
                    writeEntry(g, (Message) e, key, value);
                }
                g.writeEndObject();
                return;
            }
            g.writeStartArray();
            for (Object e : decoded) {
                if (element != null) {
                    writeMessage(g, (Message) e);
                } else {
                    writeScalar(g, e);
                }
            }
            g.writeEndArray();
        }));
    }

    private static final Object NOT_KNOWN = new Object();

    /**
     * The value of a well-known message type: Timestamp, the wrappers, Confluent's Decimal, Date and TimeOfDay; or
     * {@link #NOT_KNOWN}.
     */
    private static Object wellKnown(Message m) {
        Descriptor d = m.getDescriptorForType();
        String name = d.getFullName();
        switch (name) {
            case "google.protobuf.Timestamp" -> {
                long seconds = (Long) m.getField(d.findFieldByNumber(1));
                int nanos = (Integer) m.getField(d.findFieldByNumber(2));
                return Instant.ofEpochSecond(seconds, nanos);
            }
            case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
                    "google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
                    "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue" -> {
                FieldDescriptor value = d.findFieldByNumber(1);
                return scalar(value, m.getField(value));
            }
            case "confluent.type.Decimal" -> {
                ByteString unscaled = (ByteString) m.getField(d.findFieldByNumber(1));
                int scale = (Integer) m.getField(d.findFieldByNumber(3));
                return unscaled.isEmpty() ? BigDecimal.ZERO.setScale(scale)
                        : new BigDecimal(new BigInteger(unscaled.toByteArray()), scale);
            }
            case "google.type.Date" -> {
                try {
                    return LocalDate.of((Integer) m.getField(d.findFieldByNumber(1)),
                            (Integer) m.getField(d.findFieldByNumber(2)), (Integer) m.getField(d.findFieldByNumber(3)));
                } catch (DateTimeException e) {
                    throw new IllegalArgumentException("a google.type.Date is not a full date: " + e.getMessage(), e);
                }
            }
            case "google.type.TimeOfDay" -> {
                try {
                    return LocalTime.of((Integer) m.getField(d.findFieldByNumber(1)),
                            (Integer) m.getField(d.findFieldByNumber(2)), (Integer) m.getField(d.findFieldByNumber(3)),
                            (Integer) m.getField(d.findFieldByNumber(4)));
                } catch (DateTimeException e) {
                    throw new IllegalArgumentException("a google.type.TimeOfDay is not a time: " + e.getMessage(), e);
                }
            }
            default -> {
                return NOT_KNOWN;
            }
        }
    }

    /** A scalar field's value with its column type. */
    static Object scalar(FieldDescriptor f, Object v) {
        return switch (f.getType()) {
            case INT32, SINT32, SFIXED32 -> ((Integer) v).longValue();
            case UINT32, FIXED32 -> Integer.toUnsignedLong((Integer) v);
            case INT64, SINT64, SFIXED64 -> v;
            case UINT64, FIXED64 -> unsigned((Long) v);
            case FLOAT -> ((Float) v).doubleValue();
            case DOUBLE, BOOL, STRING -> v;
            case BYTES -> ((ByteString) v).toByteArray();
            case ENUM -> ((EnumValueDescriptor) v).getName();
            default -> throw new IllegalStateException("not a scalar: " + f.getType());
        };
    }

    /** An unsigned 64-bit value: a long where it fits, else an exact decimal. */
    static Object unsigned(long v) {
        return v >= 0 ? (Object) v : new BigDecimal(Long.toUnsignedString(v));
    }

    private interface Writing {
        void write(JsonGenerator g) throws IOException;
    }

    private static String json(Writing writing) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            writing.write(g);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    /** A message as a JSON object of all its fields, by the same rules as columns. */
    private static void writeMessage(JsonGenerator g, Message m) throws IOException {
        Object known = wellKnown(m);
        if (known != NOT_KNOWN) {
            writeScalar(g, known);
            return;
        }
        g.writeStartObject();
        for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
            g.writeFieldName(f.getName());
            if (f.isRepeated()) {
                write(g, m, f);
            } else if (f.hasPresence() && !m.hasField(f)) {
                g.writeNull();
            } else if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                writeMessage(g, (Message) m.getField(f));
            } else {
                writeScalar(g, scalar(f, m.getField(f)));
            }
        }
        g.writeEndObject();
    }

    /** A repeated field: a JSON array, or an object for a map (keys as text). */
    private static void write(JsonGenerator g, Message m, FieldDescriptor f) throws IOException {
        int n = m.getRepeatedFieldCount(f);
        if (f.isMapField()) {
            FieldDescriptor key = f.getMessageType().findFieldByNumber(1);
            FieldDescriptor value = f.getMessageType().findFieldByNumber(2);
            g.writeStartObject();
            for (int i = 0; i < n; i++) {
                writeEntry(g, (Message) m.getRepeatedField(f, i), key, value);
            }
            g.writeEndObject();
            return;
        }
        g.writeStartArray();
        for (int i = 0; i < n; i++) {
            Object v = m.getRepeatedField(f, i);
            if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                writeMessage(g, (Message) v);
            } else {
                writeScalar(g, scalar(f, v));
            }
        }
        g.writeEndArray();
    }

    /** One map entry as a JSON member: its key as text. */
    private static void writeEntry(JsonGenerator g, Message entry, FieldDescriptor key, FieldDescriptor value)
            throws IOException {
        g.writeFieldName(String.valueOf(scalar(key, entry.getField(key))));
        if (value.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
            writeMessage(g, (Message) entry.getField(value));
        } else {
            writeScalar(g, scalar(value, entry.getField(value)));
        }
    }

    private static void writeScalar(JsonGenerator g, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof Long l) {
            g.writeNumber(l);
        } else if (v instanceof Double d) {
            g.writeNumber(d);
        } else if (v instanceof BigDecimal d) {
            g.writeNumber(d);
        } else if (v instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (v instanceof byte[] b) {
            g.writeString(Base64.getEncoder().encodeToString(b));
        } else {
            g.writeString(v.toString()); // text, enum names, instants, dates and times (ISO-8601)
        }
    }
}
