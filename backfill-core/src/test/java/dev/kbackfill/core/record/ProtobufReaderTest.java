package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import org.junit.jupiter.api.Test;

/**
 * The wire reader gives the columns protobuf-java's own parse gives, on seeded random messages of a schema with every
 * field kind (scalars of every type, enums, oneofs, proto3 optional, repeated, maps, nested and well-known
 * messages), proto3 and proto2, each message also read after a second one is appended to its encoding (protobuf's
 * merge: singular fields keep the last value, messages merge, repeated fields append, a oneof keeps the last member).
 */
class ProtobufReaderTest {

    static final String PROTO3 = ConfluentProtobufTest.ORDER.replace("import \"customer.proto\";\n", "")
            .replace("common.Customer customer = 16;", "Line first_line = 16;")
            .replace("  map<string, int64> attrs = 15;", "  map<string, int64> attrs = 15;\n  map<int32, Line> by_n = 18;\n"
                    + "  repeated Status statuses = 19;\n  repeated double ratios = 20;\n  sfixed64 sf = 21;\n"
                    + "  fixed32 f32 = 22;\n  sint32 s32 = 23;\n  repeated bytes blobs = 24;\n"
                    + "  repeated google.protobuf.Timestamp times = 25;\n  google.protobuf.StringValue label = 26;\n"
                    + "  optional int64 maybe_n = 27;");
    static final String PROTO2 = """
            syntax = "proto2";
            import "confluent/type/decimal.proto";
            message Price {
              optional string sku = 1;
              optional int32 n = 2 [default = 4];
              optional confluent.type.Decimal amount = 3;
              optional sint64 delta = 4;
              repeated int32 xs = 5;
              optional Kind kind = 6;
              enum Kind { A = 1; B = 2; }
              repeated Kind kinds = 7;
              oneof pick { string left = 8; Price right = 9; }
            }""";

    @Test
    void theReaderAgreesWithProtobufOnRandomMessages() throws Exception {
        for (String text : List.of(PROTO3, PROTO2)) {
            FileDescriptor file = ProtoFiles.build("t.proto", text, Map.of());
            Descriptor type = file.getMessageTypes().get(0);
            ProtobufReader reader = new ProtobufReader(type);
            for (long seed = 1; seed <= 300; seed++) {
                Random random = new Random(seed);
                DynamicMessage a = message(type, random, 0);
                DynamicMessage b = message(type, random, 0);
                byte[] one = a.toByteArray();
                byte[] two = a.toByteArray();
                two = concat(two, b.toByteArray());
                for (byte[] bytes : List.of(one, two)) {
                    Columns.Builder expected = new Columns.Builder();
                    ConfluentProtobuf.columns(DynamicMessage.parseFrom(type, bytes), expected);
                    Columns.Builder actual = new Columns.Builder();
                    reader.read(CodedInputStream.newInstance(bytes), actual);
                    assertThat(comparable(actual.build())).as(type.getName() + " seed " + seed + " " + a)
                            .isEqualTo(comparable(expected.build()));
                }
            }
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Columns with bytes as hex, so that maps compare by value. */
    private static Map<String, Object> comparable(Map<String, Object> columns) {
        Map<String, Object> out = new LinkedHashMap<>();
        columns.forEach((k, v) -> out.put(k, v instanceof byte[] b ? "0x" + HexFormat.of().formatHex(b) : v));
        return out;
    }

    static DynamicMessage message(Descriptor type, Random random, int depth) {
        DynamicMessage.Builder m = DynamicMessage.newBuilder(type);
        switch (type.getFullName()) {
            case "google.protobuf.Timestamp" -> {
                m.setField(type.findFieldByNumber(1), (long) random.nextInt(2_000_000_000));
                m.setField(type.findFieldByNumber(2), random.nextInt(1_000_000_000));
                return m.build();
            }
            case "google.type.Date" -> {
                m.setField(type.findFieldByNumber(1), 1 + random.nextInt(9999));
                m.setField(type.findFieldByNumber(2), 1 + random.nextInt(12));
                m.setField(type.findFieldByNumber(3), 1 + random.nextInt(28));
                return m.build();
            }
            default -> {
            }
        }
        for (FieldDescriptor f : type.getFields()) {
            if (f.isRepeated()) {
                int n = random.nextInt(4);
                for (int i = 0; i < n; i++) {
                    Object v = value(f, random, depth);
                    if (v != null) {
                        m.addRepeatedField(f, v);
                    }
                }
            } else if (random.nextInt(10) < 7) {
                Object v = value(f, random, depth);
                if (v != null) {
                    m.setField(f, v);
                }
            }
        }
        return m.build();
    }

    private static Object value(FieldDescriptor f, Random random, int depth) {
        return switch (f.getJavaType()) {
            case INT -> random.nextInt(3) == 0 ? random.nextInt(10) - 5 : random.nextInt();
            case LONG -> random.nextInt(3) == 0 ? (long) random.nextInt(10) - 5 : random.nextLong();
            case FLOAT -> random.nextFloat() * 100 - 50;
            case DOUBLE -> random.nextDouble() * 1e6 - 5e5;
            case BOOLEAN -> random.nextBoolean();
            case STRING -> List.of("", "a", "packed", "é\u00e8\u4e2d", "x\"y\\z", "🙂").get(random.nextInt(6));
            case BYTE_STRING -> {
                if (f.getContainingType().getFullName().equals("confluent.type.Decimal")) {
                    yield ByteString.copyFrom(BigInteger.valueOf(random.nextLong()).toByteArray());
                }
                byte[] b = new byte[random.nextInt(5)];
                random.nextBytes(b);
                yield ByteString.copyFrom(b);
            }
            case ENUM -> {
                List<EnumValueDescriptor> values = f.getEnumType().getValues();
                yield values.get(random.nextInt(values.size()));
            }
            case MESSAGE -> depth > 2 ? null : message(f.getMessageType(), random, depth + 1);
        };
    }
}
