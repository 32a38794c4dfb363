package dev.kbackfill.core.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.apache.avro.Conversion;
import org.apache.avro.Conversions;
import org.apache.avro.LogicalType;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;

/**
 * The quick reader of the common Avro value: a record of scalar fields (primitives, their logical types, enums,
 * fixed, and unions of those), read from its binary body straight into columns, without the generic reader's
 * record, {@code Utf8} and boxed values in between. The result is exactly what {@link ConfluentAvro#plain} makes of
 * the generic reader's record: the same logical-type conversions (the {@link GenericData}'s own), the same value
 * classes. A schema of another shape gets no quick reader ({@link #of} returns null), and a body this reader finds
 * malformed in any way returns null from {@link #read}: the generic reader then reads it from the start and decides
 * the error. Immutable: one per schema, shared by threads.
 */
final class FlatAvro {

    private enum Kind {
        NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, ENUM, FIXED, UNION
    }

    /** How one value is read: its kind, its logical conversion (or null), and what the kind needs. */
    private record Reader(Kind kind, Schema schema, LogicalType logical, Conversion<?> conversion,
                          List<String> symbols, Reader[] branches) {
    }

    private final String[] names;
    private final Reader[] fields;

    private FlatAvro(String[] names, Reader[] fields) {
        this.names = names;
        this.fields = fields;
    }

    /** The quick reader of records of {@code schema}, or null when it is not a record of scalar fields. */
    static FlatAvro of(Schema schema, GenericData data) {
        if (schema.getType() != Schema.Type.RECORD) {
            return null;
        }
        List<Schema.Field> list = schema.getFields();
        String[] names = new String[list.size()];
        Reader[] fields = new Reader[list.size()];
        for (int i = 0; i < list.size(); i++) {
            names[i] = list.get(i).name();
            fields[i] = reader(list.get(i).schema(), data, true);
            if (fields[i] == null) {
                return null;
            }
        }
        return new FlatAvro(names, fields);
    }

    private static Reader reader(Schema s, GenericData data, boolean unionAllowed) {
        LogicalType logical = s.getLogicalType();
        Conversion<?> conversion = logical == null ? null : data.getConversionFor(logical);
        return switch (s.getType()) {
            case NULL -> new Reader(Kind.NULL, s, null, null, null, null);
            case BOOLEAN -> new Reader(Kind.BOOLEAN, s, logical, conversion, null, null);
            case INT -> new Reader(Kind.INT, s, logical, conversion, null, null);
            case LONG -> new Reader(Kind.LONG, s, logical, conversion, null, null);
            case FLOAT -> new Reader(Kind.FLOAT, s, logical, conversion, null, null);
            case DOUBLE -> new Reader(Kind.DOUBLE, s, logical, conversion, null, null);
            case STRING -> new Reader(Kind.STRING, s, logical, conversion, null, null);
            case BYTES -> new Reader(Kind.BYTES, s, logical, conversion, null, null);
            case FIXED -> new Reader(Kind.FIXED, s, logical, conversion, null, null);
            case ENUM -> logical == null ? new Reader(Kind.ENUM, s, null, null, s.getEnumSymbols(), null) : null;
            case UNION -> {
                if (!unionAllowed || logical != null) {
                    yield null;
                }
                List<Schema> types = s.getTypes();
                Reader[] branches = new Reader[types.size()];
                for (int i = 0; i < branches.length; i++) {
                    branches[i] = reader(types.get(i), data, false);
                    if (branches[i] == null) {
                        yield null;
                    }
                }
                yield new Reader(Kind.UNION, s, null, null, null, branches);
            }
            default -> null; // records, arrays and maps: nested values, the generic reader's
        };
    }

    /**
     * The record at {@code offset} of {@code bytes} as columns, or null when the body is not one this reader reads
     * to its end without a doubt (the generic reader then decides). Bytes after the record are ignored, as the generic
     * reader ignores them.
     */
    Map<String, Object> read(byte[] bytes, int offset, Columns.Builder columns) {
        Cursor in = new Cursor(bytes, offset);
        try {
            for (int i = 0; i < fields.length; i++) {
                Object v = value(fields[i], in);
                if (v == MALFORMED) {
                    columns.clear();
                    return null;
                }
                columns.put(names[i], v);
            }
        } catch (RuntimeException e) { // a conversion that refuses its value, a body cut short: the generic reader's
            columns.clear();
            return null;
        }
        return columns.build();
    }

    private static final Object MALFORMED = new Object();

    private static Object value(Reader r, Cursor in) {
        switch (r.kind) {
            case NULL:
                return null;
            case BOOLEAN:
                return in.has(1) ? converted(r, (in.bytes[in.pos++] & 0xff) == 1) : MALFORMED;
            case INT: {
                long n = in.readInt();
                return n == Long.MIN_VALUE ? MALFORMED : converted(r, (int) n);
            }
            case LONG:
                return in.readLong() ? converted(r, in.longValue) : MALFORMED;
            case FLOAT:
                return in.has(4) ? converted(r, Float.intBitsToFloat((int) in.littleEndian(4))) : MALFORMED;
            case DOUBLE:
                return in.has(8) ? converted(r, Double.longBitsToDouble(in.littleEndian(8))) : MALFORMED;
            case STRING: {
                int length = in.length();
                return length < 0 ? MALFORMED : converted(r, in.string(length));
            }
            case BYTES: {
                int length = in.length();
                if (length < 0) {
                    return MALFORMED;
                }
                byte[] b = java.util.Arrays.copyOfRange(in.bytes, in.pos, in.pos + length);
                in.pos += length;
                return converted(r, ByteBuffer.wrap(b)); // plain() copies a buffer out: bytes, or a decimal
            }
            case FIXED: {
                int size = r.schema.getFixedSize();
                if (!in.has(size)) {
                    return MALFORMED;
                }
                byte[] b = java.util.Arrays.copyOfRange(in.bytes, in.pos, in.pos + size);
                in.pos += size;
                return converted(r, new GenericData.Fixed(r.schema, b));
            }
            case ENUM: {
                long index = in.readInt();
                return index < 0 || index >= r.symbols.size() ? MALFORMED : r.symbols.get((int) index);
            }
            case UNION: {
                long index = in.readInt();
                return index < 0 || index >= r.branches.length ? MALFORMED : value(r.branches[(int) index], in);
            }
            default:
                return MALFORMED;
        }
    }

    /** The value as the generic reader gives it (its logical type's conversion applied), made plain. */
    private static Object converted(Reader r, Object raw) {
        return ConfluentAvro.plain(r.conversion == null ? raw
                : Conversions.convertToLogicalType(raw, r.schema, r.logical, r.conversion));
    }

    /** A position in a body, read as Avro's binary encoding reads it. */
    private static final class Cursor {
        final byte[] bytes;
        int pos;
        long longValue;

        Cursor(byte[] bytes, int pos) {
            this.bytes = bytes;
            this.pos = pos;
        }

        boolean has(int n) {
            return n >= 0 && pos + n <= bytes.length;
        }

        /** A zig-zag varint of at most five bytes, as Avro reads one; Long.MIN_VALUE when malformed. */
        long readInt() {
            int n = 0;
            for (int shift = 0; shift < 35; shift += 7) {
                if (pos >= bytes.length) {
                    return Long.MIN_VALUE;
                }
                int b = bytes[pos++] & 0xff;
                n ^= (b & 0x7f) << shift;
                if (b <= 0x7f) {
                    return (n >>> 1) ^ -(n & 1);
                }
            }
            return Long.MIN_VALUE; // a sixth byte: Avro's "Invalid int encoding"
        }

        /** A zig-zag varint of at most ten bytes into {@link #longValue}; false when malformed. */
        boolean readLong() {
            long n = 0;
            for (int shift = 0; shift < 70; shift += 7) {
                if (pos >= bytes.length) {
                    return false;
                }
                int b = bytes[pos++] & 0xff;
                n ^= (long) (b & 0x7f) << shift;
                if (b <= 0x7f) {
                    longValue = (n >>> 1) ^ -(n & 1);
                    return true;
                }
            }
            return false; // an eleventh byte: Avro's "Invalid long encoding"
        }

        /** A length (of a string or bytes) that the body holds, or -1. */
        int length() {
            if (!readLong() || longValue < 0 || longValue > bytes.length - pos) {
                return -1;
            }
            return (int) longValue;
        }

        long littleEndian(int n) {
            long v = 0;
            for (int i = 0; i < n; i++) {
                v |= (long) (bytes[pos + i] & 0xff) << (8 * i);
            }
            pos += n;
            return v;
        }

        String string(int length) {
            int end = pos + length;
            for (int i = pos; i < end; i++) {
                if (bytes[i] < 0) {
                    String s = new String(bytes, pos, length, StandardCharsets.UTF_8);
                    pos = end;
                    return s;
                }
            }
            @SuppressWarnings("deprecation") // ASCII: one byte, one char
            String s = new String(bytes, 0, pos, length);
            pos = end;
            return s;
        }
    }
}
