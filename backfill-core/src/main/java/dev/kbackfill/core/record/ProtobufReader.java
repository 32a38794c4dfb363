package dev.kbackfill.core.record;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;

/**
 * Reads one message type's wire format straight into column values, field by field, without building a
 * {@link DynamicMessage} for the message itself: the columns {@link ConfluentProtobuf} documents, the same as reading
 * the message with protobuf-java and then its fields (proved by a randomized test against that path). The parsing
 * rules are protobuf's: a singular field seen twice keeps its last value (a message field merges), repeated fields
 * append and read packed and unpacked encodings alike, a value of the wrong wire type or an unknown field is skipped, a
 * oneof keeps its last member set, an unknown value of a closed (proto2) enum is left out, proto3 strings must be
 * UTF-8, and a proto2 required field must be there. Nested messages other than the well-known ones, repeated fields and
 * maps are rare in the hot path and go through {@link DynamicMessage} for their JSON text. Immutable: one per type,
 * shared by threads.
 */
final class ProtobufReader {

    /** A value left out (an unknown value of a closed enum). */
    private static final Object SKIP = new Object();

    private final Descriptor type;
    private final FieldDescriptor[] fields;
    /** Field number → position in {@link #fields}, for numbers up to {@link #byNumber}'s length; else searched. */
    private final int[] byNumber;
    /** The column of each field that is not set and has no presence (proto3 scalars): its default. */
    private final Object[] defaults;
    /** Per field, the positions of the other members of its oneof (real or synthetic), or null. */
    private final int[][] siblings;

    ProtobufReader(Descriptor type) {
        this.type = type;
        this.fields = type.getFields().toArray(FieldDescriptor[]::new);
        int max = 0;
        for (FieldDescriptor f : fields) {
            max = Math.max(max, f.getNumber());
        }
        this.byNumber = new int[Math.min(max, 4096) + 1];
        Arrays.fill(byNumber, -1);
        this.defaults = new Object[fields.length];
        this.siblings = new int[fields.length][];
        for (int i = 0; i < fields.length; i++) {
            FieldDescriptor f = fields[i];
            if (f.getNumber() < byNumber.length) {
                byNumber[f.getNumber()] = i;
            }
            if (!f.isRepeated() && !f.hasPresence()) {
                defaults[i] = ConfluentProtobuf.scalar(f, f.getDefaultValue());
            }
            OneofDescriptor oneof = f.getContainingOneof();
            if (oneof != null && oneof.getFieldCount() > 1) {
                int[] others = new int[oneof.getFieldCount() - 1];
                int k = 0;
                for (FieldDescriptor member : oneof.getFields()) {
                    if (member != f) {
                        others[k++] = member.getIndex();
                    }
                }
                siblings[i] = others;
            }
        }
    }

    Descriptor type() {
        return type;
    }

    private int index(int number) {
        if (number < byNumber.length) {
            return byNumber[number];
        }
        FieldDescriptor f = type.findFieldByNumber(number);
        return f == null ? -1 : f.getIndex();
    }

    /** Reads the message from {@code in} into {@code out}, a column per field in declaration order. */
    void read(CodedInputStream in, Columns.Builder out) throws IOException {
        int n = fields.length;
        Object[] values = new Object[n];
        boolean[] set = new boolean[n];
        ByteString[] messages = null;
        List<Object>[] lists = null;
        while (true) {
            int tag = in.readTag();
            if (tag == 0) {
                break;
            }
            int i = index(WireFormat.getTagFieldNumber(tag));
            if (i < 0) {
                in.skipField(tag);
                continue;
            }
            FieldDescriptor f = fields[i];
            int wire = WireFormat.getTagWireType(tag);
            int expected = f.getLiteType().getWireType();
            if (f.isRepeated()) {
                if (lists == null) {
                    @SuppressWarnings("unchecked")
                    List<Object>[] made = new List[n];
                    lists = made;
                }
                if (lists[i] == null) {
                    lists[i] = new ArrayList<>();
                }
                readRepeated(in, f, tag, lists[i]);
                continue;
            }
            if (wire != expected) {
                in.skipField(tag);
                continue;
            }
            if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                if (messages == null) {
                    messages = new ByteString[n];
                }
                ByteString b = in.readBytes();
                // a message seen twice merges: parsing the two encodings one after the other does just that
                messages[i] = set[i] && messages[i] != null ? messages[i].concat(b) : b;
            } else {
                Object v = scalar(in, f);
                if (v == SKIP) {
                    continue;
                }
                values[i] = v;
            }
            set[i] = true;
            if (siblings[i] != null) {
                for (int other : siblings[i]) {
                    set[other] = false;
                    values[other] = null;
                    if (messages != null) {
                        messages[other] = null;
                    }
                }
            }
        }
        columns(values, set, messages, lists, out);
    }

    /** One element, or a packed run of them, of a repeated field into {@code list}; a wire type it is not, skipped. */
    private void readRepeated(CodedInputStream in, FieldDescriptor f, int tag, List<Object> list) throws IOException {
        int wire = WireFormat.getTagWireType(tag);
        if (wire == WireFormat.WIRETYPE_LENGTH_DELIMITED && f.isPackable()) {
            int limit = in.pushLimit(in.readRawVarint32());
            while (in.getBytesUntilLimit() > 0) {
                Object v = scalar(in, f);
                if (v != SKIP) {
                    list.add(v);
                }
            }
            in.popLimit(limit);
        } else if (wire == f.getLiteType().getWireType()) {
            Object v = f.getJavaType() == FieldDescriptor.JavaType.MESSAGE ? in.readBytes() : scalar(in, f);
            if (v != SKIP) {
                list.add(v);
            }
        } else {
            in.skipField(tag);
        }
    }

    /** The fields read into {@code out}, a column each in declaration order: a required one missing is an error. */
    private void columns(Object[] values, boolean[] set, ByteString[] messages, List<Object>[] lists,
                         Columns.Builder out) throws IOException {
        int n = fields.length;
        for (int i = 0; i < n; i++) {
            if (fields[i].isRequired() && !set[i]) {
                throw new InvalidProtocolBufferException("Message missing required fields: " + fields[i].getName());
            }
        }
        for (int i = 0; i < n; i++) {
            FieldDescriptor f = fields[i];
            Object column;
            if (f.isRepeated()) {
                column = ConfluentProtobuf.repeated(f, lists == null || lists[i] == null ? List.of() : lists[i]);
            } else if (!set[i]) {
                column = f.hasPresence() ? null : defaults[i];
            } else if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                column = message(f.getMessageType(), messages[i]);
            } else {
                column = values[i];
            }
            out.put(f.getName(), column);
        }
    }

    /** A set message field's column: the well-known types as their values, any other as JSON text. */
    static Object message(Descriptor type, ByteString bytes) throws IOException {
        if (type.getFullName().equals("google.protobuf.Timestamp")) {
            CodedInputStream in = bytes.newCodedInput();
            long seconds = 0;
            int nanos = 0;
            while (true) {
                int tag = in.readTag();
                if (tag == 0) {
                    break;
                }
                if (tag == (1 << 3 | WireFormat.WIRETYPE_VARINT)) {
                    seconds = in.readInt64();
                } else if (tag == (2 << 3 | WireFormat.WIRETYPE_VARINT)) {
                    nanos = in.readInt32();
                } else {
                    in.skipField(tag);
                }
            }
            return Instant.ofEpochSecond(seconds, nanos);
        }
        return ConfluentProtobuf.messageColumn(DynamicMessage.parseFrom(type, bytes));
    }

    /** One scalar value read from the wire, as its column holds it (or {@link #SKIP}). */
    private static Object scalar(CodedInputStream in, FieldDescriptor f) throws IOException {
        return switch (f.getType()) {
            case INT32 -> (long) in.readInt32();
            case SINT32 -> (long) in.readSInt32();
            case SFIXED32 -> (long) in.readSFixed32();
            case UINT32 -> Integer.toUnsignedLong(in.readUInt32());
            case FIXED32 -> Integer.toUnsignedLong(in.readFixed32());
            case INT64 -> in.readInt64();
            case SINT64 -> in.readSInt64();
            case SFIXED64 -> in.readSFixed64();
            case UINT64 -> ConfluentProtobuf.unsigned(in.readUInt64());
            case FIXED64 -> ConfluentProtobuf.unsigned(in.readFixed64());
            case FLOAT -> (double) in.readFloat();
            case DOUBLE -> in.readDouble();
            case BOOL -> in.readBool();
            case STRING -> f.needsUtf8Check() ? in.readStringRequireUtf8() : in.readString();
            case BYTES -> in.readByteArray();
            case ENUM -> {
                int number = in.readEnum();
                EnumDescriptor e = f.getEnumType();
                EnumValueDescriptor v = e.findValueByNumber(number);
                if (v == null) {
                    if (e.isClosed()) {
                        yield SKIP; // protobuf keeps it among the unknown fields, not in the field
                    }
                    v = e.findValueByNumberCreatingIfUnknown(number);
                }
                yield v.getName();
            }
            default -> throw new IllegalStateException("not a scalar: " + f.getType());
        };
    }
}
