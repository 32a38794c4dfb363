package dev.kbackfill.sink.delta;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/**
 * A row in physical form ({@link DeltaTypes#read}: longs, ints, doubles, strings, booleans, decimals, bytes, nulls)
 * as bytes and back, for rows spilled to disk by verification.
 */
final class RowCodec {

    private RowCodec() {
    }

    static byte[] encode(Object[] row) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + row.length * 8);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(row.length);
            for (Object v : row) {
                if (v == null) {
                    out.writeByte(0);
                } else if (v instanceof Long l) {
                    out.writeByte(1);
                    out.writeLong(l);
                } else if (v instanceof Integer i) {
                    out.writeByte(2);
                    out.writeInt(i);
                } else if (v instanceof Double d) {
                    out.writeByte(3);
                    out.writeDouble(d);
                } else if (v instanceof String s) {
                    out.writeByte(4);
                    byte[] b = s.getBytes(StandardCharsets.UTF_8);
                    out.writeInt(b.length);
                    out.write(b);
                } else if (v instanceof Boolean b) {
                    out.writeByte(5);
                    out.writeBoolean(b);
                } else if (v instanceof BigDecimal d) {
                    out.writeByte(6);
                    byte[] b = d.unscaledValue().toByteArray();
                    out.writeInt(d.scale());
                    out.writeInt(b.length);
                    out.write(b);
                } else if (v instanceof byte[] b) {
                    out.writeByte(7);
                    out.writeInt(b.length);
                    out.write(b);
                } else {
                    throw new IllegalArgumentException("no physical Delta value of type " + v.getClass().getName());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static Object[] decode(byte[] encoded) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded))) {
            Object[] row = new Object[in.readInt()];
            for (int i = 0; i < row.length; i++) {
                byte tag = in.readByte();
                row[i] = switch (tag) {
                    case 0 -> null;
                    case 1 -> in.readLong();
                    case 2 -> in.readInt();
                    case 3 -> in.readDouble();
                    case 4 -> new String(in.readNBytes(in.readInt()), StandardCharsets.UTF_8);
                    case 5 -> in.readBoolean();
                    case 6 -> {
                        int scale = in.readInt();
                        yield new BigDecimal(new BigInteger(in.readNBytes(in.readInt())), scale);
                    }
                    case 7 -> in.readNBytes(in.readInt());
                    default -> throw new IllegalStateException("not an encoded row (tag " + tag + ")");
                };
            }
            return row;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
