package dev.kbackfill.core.record;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bytes as a person reads them in a message or a sample: the text they are where they are UTF-8 without control
 * characters, else {@code 0x} and their hex; long ones cut, with their length said.
 */
public final class Readable {

    /** Characters of text, or bytes of hex, shown before the rest is cut. */
    static final int SHOWN = 200;

    private Readable() {
    }

    /** {@code value} for people: bytes (a {@code byte[]} or {@link ByteBuffer}) as {@link #bytes}, anything else as is. */
    public static Object value(Object value) {
        if (value instanceof byte[] b) {
            return bytes(b);
        }
        if (value instanceof ByteBuffer buffer) {
            byte[] b = new byte[buffer.remaining()];
            buffer.duplicate().get(b);
            return bytes(b);
        }
        return value;
    }

    /** The bytes as text where they are UTF-8 text, else as hex; null for null. */
    public static String bytes(byte[] b) {
        if (b == null) {
            return null;
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
            if (text.chars().noneMatch(c -> Character.isISOControl(c) && c != '\t' && c != '\n' && c != '\r')) {
                return text.length() <= SHOWN ? text
                        : text.substring(0, SHOWN) + "… (" + b.length + " bytes)";
            }
        } catch (CharacterCodingException e) {
            // not text: hex
        }
        int shown = Math.min(b.length, SHOWN / 2);
        String hex = "0x" + java.util.HexFormat.of().formatHex(b, 0, shown);
        return shown < b.length ? hex + "… (" + b.length + " bytes)" : hex;
    }
}
