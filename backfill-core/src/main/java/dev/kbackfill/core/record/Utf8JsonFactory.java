package dev.kbackfill.core.record;

import java.io.IOException;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.core.json.UTF8StreamJsonParser;
import com.fasterxml.jackson.core.util.BufferRecycler;

/**
 * Jackson's factory with one more way to open a parser: over bytes known to be UTF-8, without the encoding
 * detection {@link JsonFactory#createParser(byte[], int, int)} runs for every document (a fifth of the cost of
 * decoding a small record, measured with DecoderBenchmark). JSON in a Kafka record is UTF-8 (RFC 8259 requires it
 * between systems); a leading UTF-8 byte order mark is skipped, and a document that starts with a zero byte (UTF-16
 * or UTF-32) goes the detecting way.
 */
final class Utf8JsonFactory extends JsonFactory {

    private static final long serialVersionUID = 1L;

    Utf8JsonFactory() {
    }

    private Utf8JsonFactory(Utf8JsonFactory source) {
        super(source, null);
    }

    /** A copy that is still this kind of factory (Jackson refuses to copy a subclass that does not say how). */
    @Override
    public JsonFactory copy() {
        _checkInvalidCopy(Utf8JsonFactory.class);
        return new Utf8JsonFactory(this);
    }

    /**
     * A parser over {@code bytes[offset, offset + length)} that takes its buffers from {@code buffers}, one
     * recycler per decoding thread: the factory's own pool finds a thread's recycler through a thread-local lookup
     * per document, which costs as much as the parser's other setup together.
     */
    JsonParser utf8Parser(byte[] bytes, int offset, int length, BufferRecycler buffers) throws IOException {
        if (length >= 3 && bytes[offset] == (byte) 0xEF && bytes[offset + 1] == (byte) 0xBB
                && bytes[offset + 2] == (byte) 0xBF) {
            offset += 3;
            length -= 3;
        }
        if (length < 2 || bytes[offset] == 0 || bytes[offset + 1] == 0) {
            return createParser(bytes, offset, length);
        }
        _streamReadConstraints.validateDocumentLength(length);
        IOContext context = new IOContext(_streamReadConstraints, _streamWriteConstraints, _errorReportConfiguration,
                buffers, _createContentReference(bytes, offset, length), true);
        return new UTF8StreamJsonParser(context, _parserFeatures, null, _objectCodec,
                _byteSymbolCanonicalizer.makeChild(_factoryFeatures), bytes, offset, offset + length, false);
    }
}
