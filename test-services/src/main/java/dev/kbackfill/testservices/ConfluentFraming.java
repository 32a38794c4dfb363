package dev.kbackfill.testservices;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

import org.apache.avro.Conversions;
import org.apache.avro.Schema;
import org.apache.avro.data.TimeConversions;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

/**
 * Frames records the way Confluent's serializers do: magic byte 0, the schema id as a big-endian int, then the body.
 * Avro: the binary body, logical-type values (BigDecimal, Instant, LocalDate, LocalTime, UUID) written through Avro's
 * conversions, as the serializers do with {@code avro.use.logical.type.converters}. Protobuf: the message indexes,
 * then a body written field by field with protobuf's own encoder (independently of any schema parser). JSON Schema:
 * the JSON text.
 */
public final class ConfluentFraming {

    private static final GenericData DATA = new GenericData();

    static {
        DATA.addLogicalTypeConversion(new Conversions.DecimalConversion());
        DATA.addLogicalTypeConversion(new Conversions.UUIDConversion());
        DATA.addLogicalTypeConversion(new TimeConversions.DateConversion());
        DATA.addLogicalTypeConversion(new TimeConversions.TimeMillisConversion());
        DATA.addLogicalTypeConversion(new TimeConversions.TimeMicrosConversion());
        DATA.addLogicalTypeConversion(new TimeConversions.TimestampMillisConversion());
        DATA.addLogicalTypeConversion(new TimeConversions.TimestampMicrosConversion());
    }

    private ConfluentFraming() {
    }

    public static byte[] frame(int id, Schema schema, Object datum) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0);
        out.writeBytes(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        try {
            new GenericDatumWriter<>(schema, DATA).write(datum, encoder);
            encoder.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** Writes a Protobuf message's fields. */
    public interface ProtobufBody {
        void write(com.google.protobuf.CodedOutputStream out) throws IOException;
    }

    /** A Protobuf message body, its fields written by {@code body}. */
    public static byte[] protobufMessage(ProtobufBody body) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            com.google.protobuf.CodedOutputStream out = com.google.protobuf.CodedOutputStream.newInstance(bytes);
            body.write(out);
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A Protobuf record: magic byte, id, the message indexes (zigzag varints: a count, then the path; {@code [0]} as
     * the single byte 0, as the serializers write it), the body.
     */
    public static byte[] protobuf(int id, int[] messageIndexes, byte[] body) {
        byte[] indexes = protobufMessage(out -> {
            if (messageIndexes.length == 1 && messageIndexes[0] == 0) {
                out.writeSInt32NoTag(0);
                return;
            }
            out.writeSInt32NoTag(messageIndexes.length);
            for (int i : messageIndexes) {
                out.writeSInt32NoTag(i);
            }
        });
        return ByteBuffer.allocate(5 + indexes.length + body.length).put((byte) 0).putInt(id).put(indexes).put(body)
                .array();
    }

    /** A JSON Schema record: magic byte, id, the JSON text. */
    public static byte[] jsonSchema(int id, String json) {
        byte[] body = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + body.length).put((byte) 0).putInt(id).put(body).array();
    }
}
