package dev.kbackfill.core.read.archive;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.zip.GZIPInputStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.resolver.RequestException;
import org.apache.avro.file.DataFileStream;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;

/**
 * One file of an archive, named as its layout names files: the partition and the first offset it holds, and how its
 * records are written. {@link #records} reads them in order.
 *
 * @param path      the file, relative to the archive's root
 * @param partition the partition its name gives
 * @param start     the first offset its name gives
 * @param format    how its records are written
 * @param keys      the file holding their keys (Confluent's {@code store.kafka.keys}), or null
 */
record ArchiveFile(String path, int partition, long start, Format format, String keys) {

    /** How a file's records are written. */
    enum Format {
        /** Aiven's jsonl: one object per line with the fields the connector was told to write. */
        AIVEN_JSONL,
        /** Confluent's JSON format: one value per line; offsets from the file's name. */
        CONFLUENT_JSON,
        /** Confluent's Avro format: an Avro container file of values; offsets from the file's name. */
        CONFLUENT_AVRO
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Its records in file order; a record that cannot be read is a {@link RequestException} naming the file. */
    CloseableIterator records(ArchiveStore store) throws IOException {
        Values values = open(store, path, format);
        Values keyValues = keys == null ? null : open(store, keys, format);
        return new CloseableIterator() {
            long index;

            @Override
            public boolean hasNext() {
                boolean more = values.hasNext();
                if (keyValues != null && keyValues.hasNext() != more) {
                    throw bad(path, "holds " + (more ? "more" : "fewer") + " records than its keys file " + keys);
                }
                return more;
            }

            @Override
            public ArchivedRecord next() {
                Object value = values.next();
                byte[] key = keyValues == null ? null : bytes(keyValues.next());
                long i = index++;
                if (format == Format.AIVEN_JSONL) {
                    return aiven(path, (JsonNode) value, start + i);
                }
                return new ArchivedRecord(start + i, false, -1, key, bytes(value));
            }

            @Override
            public void close() throws IOException {
                values.close();
                if (keyValues != null) {
                    keyValues.close();
                }
            }
        };
    }

    /** Records read one by one from an open file. */
    interface CloseableIterator extends Iterator<ArchivedRecord>, java.io.Closeable {
    }

    /** The values of one file, in order: JSON nodes or Avro datums. */
    private interface Values extends Iterator<Object>, java.io.Closeable {
    }

    private static Values open(ArchiveStore store, String path, Format format) throws IOException {
        InputStream in = new BufferedInputStream(store.open(path), 1 << 16);
        if (path.endsWith(".gz")) {
            in = new BufferedInputStream(new GZIPInputStream(in), 1 << 16);
        }
        if (format == Format.CONFLUENT_AVRO) {
            return avro(path, in);
        }
        return jsonLines(path, in, format == Format.AIVEN_JSONL);
    }

    private static Values avro(String path, InputStream in) throws IOException {
        DataFileStream<Object> stream;
        try {
            stream = new DataFileStream<>(in, new GenericDatumReader<>());
        } catch (IOException e) {
            in.close();
            throw bad(path, "is not an Avro container file (" + e.getMessage() + ")");
        }
        return new Values() {
            @Override
            public boolean hasNext() {
                try {
                    return stream.hasNext();
                } catch (RuntimeException e) {
                    throw bad(path, "cannot be read as Avro: " + e.getMessage());
                }
            }

            @Override
            public Object next() {
                try {
                    return stream.next();
                } catch (RuntimeException e) {
                    throw bad(path, "cannot be read as Avro: " + e.getMessage());
                }
            }

            @Override
            public void close() throws IOException {
                stream.close();
            }
        };
    }

    private static Values jsonLines(String path, InputStream in, boolean objects) {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        return new Values() {
            String line;
            long number;

            @Override
            public boolean hasNext() {
                if (line == null) {
                    try {
                        do {
                            line = reader.readLine();
                            number++;
                        } while (line != null && line.isBlank());
                    } catch (IOException e) {
                        throw bad(path, "cannot be read at line " + number + ": " + e.getMessage());
                    }
                }
                return line != null;
            }

            @Override
            public Object next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                String text = line;
                line = null;
                JsonNode node;
                try {
                    node = JSON.readTree(text);
                } catch (IOException e) {
                    throw bad(path, "line " + number + " is not JSON");
                }
                if (objects && !node.isObject()) {
                    throw bad(path, "line " + number + " is not a JSON object with the fields Aiven's jsonl writes "
                            + "(key, value, offset, timestamp, headers)");
                }
                return node;
            }

            @Override
            public void close() throws IOException {
                reader.close();
            }
        };
    }

    /** An Aiven jsonl record: its offset the {@code offset} field's where the connector wrote it, else inferred. */
    private static ArchivedRecord aiven(String path, JsonNode line, long inferred) {
        JsonNode offset = line.get("offset");
        long at = inferred;
        if (offset != null) {
            if (!offset.canConvertToLong()) {
                throw bad(path, "has a record whose offset is not a number: " + offset);
            }
            at = offset.asLong();
        }
        long timestamp = -1;
        JsonNode ts = line.get("timestamp");
        if (ts != null && !ts.isNull()) {
            try {
                timestamp = ts.isNumber() ? ts.asLong() : java.time.Instant.parse(ts.asText()).toEpochMilli();
            } catch (java.time.format.DateTimeParseException e) {
                throw bad(path, "has a record at offset " + at + " whose timestamp is not an instant: " + ts);
            }
        }
        return new ArchivedRecord(at, offset != null, timestamp, bytes(line.get("key")), bytes(line.get("value")));
    }

    /**
     * What a topic's bytes were, as near as the archive tells: text as its UTF-8 bytes, other JSON (or an Avro
     * datum) as its JSON text, bytes as they are; null stays null.
     */
    static byte[] bytes(Object archived) {
        if (archived == null || (archived instanceof JsonNode n && n.isNull())) {
            return null;
        }
        if (archived instanceof JsonNode n) {
            return (n.isTextual() ? n.asText() : n.toString()).getBytes(StandardCharsets.UTF_8);
        }
        if (archived instanceof CharSequence s) {
            return s.toString().getBytes(StandardCharsets.UTF_8);
        }
        if (archived instanceof java.nio.ByteBuffer b) {
            byte[] out = new byte[b.remaining()];
            b.duplicate().get(out);
            return out;
        }
        return GenericData.get().toString(archived).getBytes(StandardCharsets.UTF_8);
    }

    static RequestException bad(String path, String what) {
        return new RequestException("archive file " + path + " " + what);
    }
}
