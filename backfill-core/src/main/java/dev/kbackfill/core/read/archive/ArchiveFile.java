package dev.kbackfill.core.read.archive;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.zip.GZIPInputStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.resolver.RequestException;
import org.apache.avro.file.DataFileStream;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * One file of an archive, named as its layout names files: the partition and the first offset it holds, and how its
 * records are written. {@link #records} reads them in order.
 *
 * @param path      the file, relative to the archive's root
 * @param partition the partition its name gives
 * @param start     the first offset its name gives
 * @param format    how its records are written
 * @param keys      the file holding their keys (Confluent's {@code store.kafka.keys}), or null
 * @param headers   the file holding their headers (Confluent's {@code store.kafka.headers}), or null
 * @param fields    the columns of Aiven's CSV, in the order {@code format.output.fields} gave them; else empty
 */
record ArchiveFile(String path, int partition, long start, Format format, String keys, String headers,
                   List<String> fields) {

    /** How a file's rows are encoded. */
    enum Encoding {
        JSON_LINES("json"), CSV("csv"), AVRO("avro"), PARQUET("parquet");

        final String word;

        Encoding(String word) {
            this.word = word;
        }
    }

    /** How a file's records are written: the layout's record shape and the file's encoding. */
    enum Format {
        /** Aiven's jsonl: one object per line with the fields the connector was told to write. */
        AIVEN_JSONL(true, Encoding.JSON_LINES),
        /** Aiven's CSV: one line per record, the fields in the configured order, key and value base64. */
        AIVEN_CSV(true, Encoding.CSV),
        /** Aiven's Avro: a container file of records with the configured fields (or of bare values). */
        AIVEN_AVRO(true, Encoding.AVRO),
        /** Aiven's Parquet: rows with the configured fields (or bare values). */
        AIVEN_PARQUET(true, Encoding.PARQUET),
        /** Confluent's JSON format: one value per line; offsets from the file's name. */
        CONFLUENT_JSON(false, Encoding.JSON_LINES),
        /** Confluent's Avro format: an Avro container file of values; offsets from the file's name. */
        CONFLUENT_AVRO(false, Encoding.AVRO),
        /** Confluent's Parquet format: rows of values (structs); offsets from the file's name. */
        CONFLUENT_PARQUET(false, Encoding.PARQUET);

        final boolean aiven;
        final Encoding encoding;

        Format(boolean aiven, Encoding encoding) {
            this.aiven = aiven;
            this.encoding = encoding;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The Avro record name Aiven's Avro and Parquet writers give a record of the configured fields. */
    private static final String AIVEN_ENVELOPE = "connector_records";

    ArchiveFile withCompanions(String keys, String headers) {
        return new ArchiveFile(path, partition, start, format, keys, headers, fields);
    }

    /** Its records in file order; a record that cannot be read is a {@link RequestException} naming the file. */
    CloseableIterator records(ArchiveStore store) throws IOException {
        ArchiveStore.Rows values = open(store, path, format.encoding, fields);
        ArchiveStore.Rows keyRows = null;
        ArchiveStore.Rows headerRows;
        try {
            keyRows = keys == null ? null : open(store, keys, encodingOf(keys), List.of());
            headerRows = headers == null ? null : open(store, headers, encodingOf(headers), List.of());
        } catch (IOException | RuntimeException e) {
            try (values; ArchiveStore.Rows k = keyRows) {
                throw e; // the files opened so far closed
            }
        }
        return companions(values, keyRows, headerRows);
    }

    private CloseableIterator companions(ArchiveStore.Rows values, ArchiveStore.Rows keyRows,
                                         ArchiveStore.Rows headerRows) {
        boolean envelopedKeys = keys != null && encodingOf(keys) == Encoding.PARQUET; // Parquet's {key} record
        return new CloseableIterator() {
            long index;

            @Override
            public boolean hasNext() {
                boolean more = values.hasNext();
                companion(keyRows, keys, "keys", more);
                companion(headerRows, headers, "headers", more);
                return more;
            }

            @Override
            public ArchivedRecord next() {
                Object value = values.next();
                long i = index++;
                if (format.aiven) {
                    return aiven(value, start + i);
                }
                byte[] key = null;
                if (keyRows != null) {
                    Object k = keyRows.next();
                    key = bytes(envelopedKeys ? field(k, "key") : k);
                }
                Headers hs = headerRows == null ? new RecordHeaders() : headers(headers, headerRows.next());
                return new ArchivedRecord(start + i, false, -1, key, bytes(value), hs);
            }

            @Override
            public void close() throws IOException {
                try (values; keyRows; headerRows) {
                    // closed in reverse order, each even when another fails
                }
            }
        };
    }

    private void companion(ArchiveStore.Rows rows, String file, String what, boolean more) {
        if (rows != null && rows.hasNext() != more) {
            throw bad(path, "holds " + (more ? "more" : "fewer") + " records than its " + what + " file " + file);
        }
    }

    /** Records read one by one from an open file. */
    interface CloseableIterator extends Iterator<ArchivedRecord>, java.io.Closeable {
    }

    /** How a file of Confluent's layout is encoded, by its extension (the part after {@code TOPIC+P+START.}). */
    static Encoding encodingOf(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        if (name.endsWith(".parquet")) {
            return Encoding.PARQUET;
        }
        if (name.endsWith(".avro")) {
            return Encoding.AVRO;
        }
        if (name.endsWith(".json") || name.endsWith(".json.gz")) {
            return Encoding.JSON_LINES;
        }
        return null;
    }

    private static ArchiveStore.Rows open(ArchiveStore store, String path, Encoding encoding, List<String> fields)
            throws IOException {
        if (encoding == Encoding.PARQUET) {
            return parquet(store, path);
        }
        InputStream in = decompressed(path, new BufferedInputStream(store.open(path), 1 << 16));
        return switch (encoding) {
            case AVRO -> avro(path, in);
            case CSV -> csv(path, in, fields);
            default -> jsonLines(path, in);
        };
    }

    /** {@code in} read through the stream compression its name's last extension gives (gzip, snappy, zstd). */
    static InputStream decompressed(String path, InputStream in) throws IOException {
        try {
            if (path.endsWith(".gz")) {
                return new BufferedInputStream(new GZIPInputStream(in), 1 << 16);
            }
            if (path.endsWith(".snappy")) {
                return new BufferedInputStream(new org.xerial.snappy.SnappyInputStream(in), 1 << 16);
            }
            if (path.endsWith(".zst")) {
                return new BufferedInputStream(new com.github.luben.zstd.ZstdInputStream(in), 1 << 16);
            }
        } catch (IOException e) {
            in.close();
            throw bad(path, "is not compressed as its extension says (" + e.getMessage() + ")");
        }
        return in;
    }

    private static ArchiveStore.Rows parquet(ArchiveStore store, String path) throws IOException {
        // Parquet is among the libraries a command may start without
        java.util.Optional<ArchiveStore.ParquetReader> reader = dev.kbackfill.resolver.OptionalLibraries.orAdded(
                () -> java.util.ServiceLoader.load(ArchiveStore.ParquetReader.class).findFirst());
        if (reader.isPresent()) {
            ArchiveStore.Rows rows;
            try {
                rows = reader.get().rows(store, path);
            } catch (IOException | RuntimeException e) {
                throw unreadable(path, "Parquet", e);
            }
            return guarded(path, "Parquet", rows, rows);
        }
        throw bad(path, "is Parquet, which this build cannot read: Parquet archives are read by the sink-lake "
                + "module (its Parquet reader), which is not on the class path");
    }

    private static ArchiveStore.Rows avro(String path, InputStream in) throws IOException {
        DataFileStream<Object> stream;
        try {
            stream = new DataFileStream<>(in, new GenericDatumReader<>());
        } catch (IOException e) {
            in.close();
            throw bad(path, "is not an Avro container file (" + e.getMessage() + ")");
        }
        return guarded(path, "Avro", stream, stream);
    }

    /** {@code rows}, a failure to read one refused as the file's ("cannot be read as {@code format}: ..."). */
    private static ArchiveStore.Rows guarded(String path, String format, Iterator<?> rows, java.io.Closeable file) {
        return new ArchiveStore.Rows() {
            @Override
            public boolean hasNext() {
                try {
                    return rows.hasNext();
                } catch (RuntimeException e) {
                    throw unreadable(path, format, e);
                }
            }

            @Override
            public Object next() {
                try {
                    return rows.next();
                } catch (RuntimeException e) {
                    throw unreadable(path, format, e);
                }
            }

            @Override
            public void close() throws IOException {
                file.close();
            }
        };
    }

    private static RequestException unreadable(String path, String format, Exception e) {
        if (e instanceof RequestException r) {
            return r;
        }
        Throwable cause = e instanceof java.io.UncheckedIOException u ? u.getCause() : e;
        return bad(path, "cannot be read as " + format + ": " + cause.getMessage());
    }

    /** Lines of text, blank ones skipped, each turned into a row by {@code parse} (given the line and its number). */
    private abstract static class Lines implements ArchiveStore.Rows {
        final String path;
        private final BufferedReader reader;
        private String line;
        long number;

        Lines(String path, InputStream in) {
            this.path = path;
            this.reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        }

        abstract Object parse(String text);

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
            return parse(text);
        }

        @Override
        public void close() throws IOException {
            reader.close();
        }
    }

    private static ArchiveStore.Rows jsonLines(String path, InputStream in) {
        return new Lines(path, in) {
            @Override
            Object parse(String text) {
                try {
                    return JSON.readTree(text);
                } catch (IOException e) {
                    throw bad(path, "line " + number + " is not JSON");
                }
            }
        };
    }

    /** Aiven's CSV: each line's fields by the configured names; key, value and headers' parts base64. */
    private static ArchiveStore.Rows csv(String path, InputStream in, List<String> fields) {
        return new Lines(path, in) {
            @Override
            Object parse(String text) {
                String[] cells = text.split(",", -1);
                if (cells.length != fields.size()) {
                    throw bad(path, "line " + number + " has " + cells.length + " field(s) where the archive's fields "
                            + "are " + String.join(",", fields) + " (" + fields.size() + ")");
                }
                Map<String, Object> row = new java.util.LinkedHashMap<>();
                for (int i = 0; i < cells.length; i++) {
                    row.put(fields.get(i), csvCell(path, number, fields.get(i), cells[i]));
                }
                return row;
            }
        };
    }

    private static Object csvCell(String path, long line, String field, String cell) {
        try {
            return switch (field) {
                case "offset", "timestamp" -> cell.isEmpty() ? null : Long.parseLong(cell);
                case "headers" -> csvHeaders(cell);
                default -> cell.isEmpty() ? null : Base64.getDecoder().decode(cell);
            };
        } catch (IllegalArgumentException e) {
            throw bad(path, "line " + line + " has a " + field + " that is not " + (field.equals("offset")
                    || field.equals("timestamp") ? "a number" : "base64") + ": " + cell);
        }
    }

    /** Aiven's CSV headers: {@code BASE64KEY:BASE64VALUE;} per header. */
    private static Headers csvHeaders(String cell) {
        Headers out = new RecordHeaders();
        for (String h : cell.split(";")) {
            if (h.isEmpty()) {
                continue;
            }
            int colon = h.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException(h);
            }
            out.add(new String(Base64.getDecoder().decode(h.substring(0, colon)), StandardCharsets.UTF_8),
                    Base64.getDecoder().decode(h.substring(colon + 1)));
        }
        return out;
    }

    /**
     * A record of Aiven's layout: a row of the configured fields ({@code key}, {@code value}, {@code offset},
     * {@code timestamp}, {@code headers}) as JSON, Avro, Parquet or CSV wrote it; its offset the {@code offset}
     * field's where the connector wrote it, else inferred. A row that is not Aiven's envelope (an Avro or Parquet
     * record of another name; a JSON line that is not an object of those fields only) is a bare value
     * ({@code format.output.envelope=false}), its offset inferred.
     */
    private ArchivedRecord aiven(Object row, long inferred) {
        if (row instanceof JsonNode n && !envelope(n)
                || row instanceof GenericRecord r && !r.getSchema().getName().equals(AIVEN_ENVELOPE)) {
            return new ArchivedRecord(inferred, false, -1, null, bytes(row), new RecordHeaders());
        }
        Object offset = field(row, "offset");
        boolean exact = present(offset);
        long at = inferred;
        if (exact) {
            if (offset instanceof JsonNode o ? !o.canConvertToLong() : !(offset instanceof Number)) {
                throw bad(path, "has a record whose offset is not a number: " + offset);
            }
            at = offset instanceof JsonNode o ? o.asLong() : ((Number) offset).longValue();
        }
        return new ArchivedRecord(at, exact, timestamp(field(row, "timestamp"), at), bytes(field(row, "key")),
                bytes(field(row, "value")), headers(path, field(row, "headers")));
    }

    /** Whether a JSON line is Aiven's envelope: an object of its fields only. */
    private static boolean envelope(JsonNode line) {
        if (!line.isObject() || line.isEmpty()) {
            return false;
        }
        for (java.util.Iterator<String> names = line.fieldNames(); names.hasNext(); ) {
            if (!dev.kbackfill.resolver.BackfillRequest.ARCHIVE_FIELD_NAMES.contains(names.next())) {
                return false;
            }
        }
        return true;
    }

    private long timestamp(Object ts, long at) {
        if (!present(ts)) {
            return -1;
        }
        if (ts instanceof Number n) {
            return n.longValue();
        }
        JsonNode t = (JsonNode) ts;
        try {
            return t.isNumber() ? t.asLong() : java.time.Instant.parse(t.asText()).toEpochMilli();
        } catch (java.time.format.DateTimeParseException e) {
            throw bad(path, "has a record at offset " + at + " whose timestamp is not an instant: " + ts);
        }
    }

    private static boolean present(Object v) {
        return v != null && !(v instanceof JsonNode n && n.isNull());
    }

    /** A row's field by name, or null where the row has no such field. */
    private static Object field(Object row, String name) {
        if (row instanceof JsonNode n) {
            return n.get(name);
        }
        if (row instanceof GenericRecord r) {
            return r.getSchema().getField(name) == null ? null : r.get(name);
        }
        if (row instanceof Map<?, ?> m) {
            return m.get(name);
        }
        return null;
    }

    /**
     * Headers as the layouts store them: a list of {@code {key, value}} (Aiven's jsonl, Confluent's files, those
     * enveloped in a {@code headers} field), a map of key to value (Aiven's Avro and Parquet), or CSV's, already read.
     */
    static Headers headers(String path, Object stored) {
        if (stored instanceof Headers h) {
            return h;
        }
        Headers out = new RecordHeaders();
        if (!present(stored)) {
            return out;
        }
        Object enveloped = stored instanceof Map<?, ?> ? null : field(stored, "headers");
        if (enveloped != null) {
            return headers(path, enveloped);
        }
        if (stored instanceof Map<?, ?> m) {
            m.forEach((k, v) -> out.add(String.valueOf(k), bytes(v)));
            return out;
        }
        Iterable<?> list = stored instanceof JsonNode n && n.isArray() ? n : stored instanceof List<?> l ? l : null;
        if (list == null) {
            throw bad(path, "has headers that are neither a list of {key, value} nor a map: " + stored);
        }
        for (Object h : list) {
            Object key = field(h, "key");
            if (!present(key)) {
                throw bad(path, "has a header without a key: " + h);
            }
            out.add(key instanceof JsonNode k ? k.asText() : key.toString(), bytes(field(h, "value")));
        }
        return out;
    }

    /**
     * What a topic's bytes were, as near as the archive tells: text as its UTF-8 bytes, other JSON (or an Avro
     * datum) as its JSON text, bytes as they are; null stays null.
     */
    static byte[] bytes(Object archived) {
        if (!present(archived)) {
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
        if (archived instanceof byte[] b) {
            return b;
        }
        return GenericData.get().toString(archived).getBytes(StandardCharsets.UTF_8);
    }

    static RequestException bad(String path, String what) {
        return new RequestException("archive file " + path + " " + what);
    }
}
