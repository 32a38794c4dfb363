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
 * Frames Avro the way Confluent's serializers do: magic byte 0, the schema id as a big-endian int, the Avro binary
 * body. Logical-type values (BigDecimal, Instant, LocalDate, LocalTime, UUID) are written through Avro's
 * conversions, as the serializers do with {@code avro.use.logical.type.converters}.
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
}
