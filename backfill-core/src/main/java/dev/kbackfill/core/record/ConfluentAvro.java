package dev.kbackfill.core.record;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.core.registry.UnknownSchemaException;
import org.apache.avro.Conversions;
import org.apache.avro.Schema;
import org.apache.avro.data.TimeConversions;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericFixed;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;

/**
 * Avro in the Confluent wire format: a magic byte 0, the writer schema's id as a 4-byte big-endian int, then the
 * Avro binary body. The writer schema comes from the registry by id (cached). A record's top-level fields become
 * columns with real types: decimals exact ({@link BigDecimal}), timestamps ({@link Instant}), dates, times, UUIDs;
 * a union with null is simply nullable. Nested records, arrays and maps are JSON text with untagged unions, bytes
 * as base64 and decimals as exact numbers (Avro's own JSON encoding tags unions and mangles both).
 */
public final class ConfluentAvro implements SchemaDecoder {

    private static final JsonFactory JSON = new JsonFactory();

    private final SchemaRegistryClient registry;
    private final GenericData data = new GenericData();
    /** Per decoding thread (a run decodes keys on its reader thread and values on its writer thread). */
    private final ThreadLocal<PerThread> perThread = ThreadLocal.withInitial(PerThread::new);

    private static final class PerThread {
        final Map<Integer, GenericDatumReader<Object>> readers = new HashMap<>();
        /** Per schema id, its quick reader (empty: the schema is not a record of scalar fields). */
        final Map<Integer, java.util.Optional<FlatAvro>> quick = new HashMap<>();
        final Columns.Builder columns = new Columns.Builder();
        BinaryDecoder reuse;
    }

    /** Whether records of scalar fields are read by {@link FlatAvro} (the generic reader otherwise, and always on doubt). */
    private final boolean quick;

    public ConfluentAvro(SchemaRegistryClient registry) {
        this(registry, true);
    }

    /** With {@code quick} false, every value is read by Avro's generic reader (the quick reader's test compares). */
    ConfluentAvro(SchemaRegistryClient registry, boolean quick) {
        this.registry = registry;
        this.quick = quick;
        data.addLogicalTypeConversion(new Conversions.DecimalConversion());
        data.addLogicalTypeConversion(new Conversions.UUIDConversion());
        data.addLogicalTypeConversion(new TimeConversions.DateConversion());
        data.addLogicalTypeConversion(new TimeConversions.TimeMillisConversion());
        data.addLogicalTypeConversion(new TimeConversions.TimeMicrosConversion());
        data.addLogicalTypeConversion(new TimeConversions.TimestampMillisConversion());
        data.addLogicalTypeConversion(new TimeConversions.TimestampMicrosConversion());
        data.addLogicalTypeConversion(new TimeConversions.LocalTimestampMillisConversion());
        data.addLogicalTypeConversion(new TimeConversions.LocalTimestampMicrosConversion());
    }

    @Override
    public Map<String, Object> columns(SourceRecord record, byte[] bytes, String single, String what) {
        int id = SchemaDecoder.schemaId(record, bytes, what, "Avro");
        PerThread state = perThread.get();
        GenericDatumReader<Object> reader;
        try {
            reader = state.readers.computeIfAbsent(id, i -> {
                Schema schema = registry.avroSchema(i);
                return new GenericDatumReader<>(schema, schema, data);
            });
        } catch (UnknownSchemaException e) {
            throw new DecodeException(record, "the " + what + " names schema id " + id + ": " + e.getMessage(), e);
        }
        if (quick) {
            FlatAvro flat = state.quick.computeIfAbsent(id, i -> java.util.Optional.ofNullable(
                    FlatAvro.of(reader.getSchema(), data))).orElse(null);
            Map<String, Object> columns = flat == null ? null : flat.read(bytes, 5, state.columns);
            if (columns != null) {
                return columns;
            }
        }
        Object datum;
        try {
            state.reuse = DecoderFactory.get().binaryDecoder(bytes, 5, bytes.length - 5, state.reuse);
            datum = reader.read(null, state.reuse);
        } catch (java.io.EOFException e) {
            throw new DecodeException(record, "the " + what + "'s body is truncated: it ends before the fields of schema id "
                    + id + " do", e);
        } catch (IOException | RuntimeException e) {
            // whatever the reader or a logical type's conversion throws is about this body (one schema, read as it was
            // written): an empty decimal, an invalid UUID, a time out of range, a length past every limit are poison
            // records, never a failure of the run
            throw new DecodeException(record, "the " + what + "'s body does not match schema id " + id + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        }
        if (datum instanceof IndexedRecord r) {
            Columns.Builder columns = state.columns.clear();
            for (Schema.Field f : r.getSchema().getFields()) {
                columns.put(f.name(), plain(r.get(f.pos())));
            }
            return columns.build();
        }
        return ScalarColumn.of(single, plain(datum));
    }

    /** A column value: a scalar with its real type, or JSON text for nested values. */
    static Object plain(Object v) {
        if (v == null || v instanceof String || v instanceof Long || v instanceof Double || v instanceof Boolean
                || v instanceof BigDecimal || v instanceof Instant || v instanceof LocalDate || v instanceof LocalTime
                || v instanceof UUID) {
            return v;
        }
        if (v instanceof CharSequence || v instanceof GenericEnumSymbol<?>) {
            return v.toString();
        }
        if (v instanceof Integer i) {
            return i.longValue();
        }
        if (v instanceof Float f) {
            return f.doubleValue();
        }
        if (v instanceof ByteBuffer b) {
            byte[] copy = new byte[b.remaining()];
            b.duplicate().get(copy);
            return copy;
        }
        if (v instanceof GenericFixed f) {
            return f.bytes().clone();
        }
        if (v instanceof LocalDateTime t) {
            return t.toString();
        }
        return new JsonText(json(v));
    }

    private static String json(Object v) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            write(g, v);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toString();
    }

    private static void write(JsonGenerator g, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof IndexedRecord r) {
            g.writeStartObject();
            for (Schema.Field f : r.getSchema().getFields()) {
                g.writeFieldName(f.name());
                write(g, r.get(f.pos()));
            }
            g.writeEndObject();
        } else if (v instanceof Map<?, ?> m) {
            g.writeStartObject();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                g.writeFieldName(e.getKey().toString());
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (v instanceof Collection<?> c) {
            g.writeStartArray();
            for (Object o : c) {
                write(g, o);
            }
            g.writeEndArray();
        } else if (v instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (v instanceof Integer || v instanceof Long) {
            g.writeNumber(((Number) v).longValue());
        } else if (v instanceof Float || v instanceof Double) {
            g.writeNumber(((Number) v).doubleValue());
        } else if (v instanceof BigDecimal d) {
            g.writeNumber(d);
        } else if (v instanceof ByteBuffer || v instanceof GenericFixed) {
            g.writeString(Base64.getEncoder().encodeToString((byte[]) plain(v)));
        } else {
            g.writeString(v.toString()); // text, enums, UUIDs, dates, times, instants (ISO-8601)
        }
    }
}
