package dev.kbackfill.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.embedded.EmbeddedKafka;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Archives of a topic as Kafka Connect's S3 sinks write them, made by following the connectors' documented formats and
 * their writers' code (no connector runs here): Aiven's {@code [PREFIX]TOPIC-P-START} in jsonl, Avro, Parquet (through
 * parquet-mr's Avro writer) and CSV with the key, value, offset, timestamp and headers fields
 * ({@code format.output.fields}), and Confluent's default partitioner, {@code topics/TOPIC/partition=P/TOPIC+P+START}
 * in JSON (values through JsonConverter without schemas, one per line), Avro and Parquet, with keys and headers files
 * beside ({@code store.kafka.keys}, {@code store.kafka.headers}).
 */
final class ConnectorArchives {

    private static final ObjectMapper JSON = new ObjectMapper();

    private ConnectorArchives() {
    }

    /** Every record of {@code topic}, per partition, in offset order. */
    static Map<Integer, List<ConsumerRecord<byte[], byte[]>>> read(EmbeddedKafka kafka, String topic, int partitions) {
        Map<String, Object> config = new HashMap<>(kafka.clientConfig());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records = new HashMap<>();
            tps.forEach(tp -> records.put(tp.partition(), new ArrayList<>()));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (tps.stream().anyMatch(tp -> c.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> records.get(r.partition()).add(r));
            }
            return records;
        }
    }

    /** Aiven's layout: files of {@code perFile} records, every other one gzipped; {@code offsets} false leaves the field out. */
    static void aiven(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records, int perFile,
                      boolean offsets) throws IOException {
        Files.createDirectories(root);
        chunks(records, perFile, (chunk, n) -> aivenFile(root, topic, chunk, n % 2 == 1, offsets));
    }

    /** One Aiven file of {@code chunk}, named for its first record's offset. */
    static Path aivenFile(Path root, String topic, List<ConsumerRecord<byte[], byte[]>> chunk, boolean gzip,
                          boolean offsets) {
        Path file = root.resolve(topic + "-" + chunk.get(0).partition() + "-" + chunk.get(0).offset()
                + (gzip ? ".gz" : ""));
        try (OutputStream out = gzip ? new GZIPOutputStream(Files.newOutputStream(file)) : Files.newOutputStream(file)) {
            for (ConsumerRecord<byte[], byte[]> r : chunk) {
                ObjectNode line = JSON.createObjectNode();
                line.put("key", new String(r.key(), StandardCharsets.UTF_8));
                line.set("value", r.value() == null ? null : JSON.readTree(r.value()));
                if (offsets) {
                    line.put("offset", r.offset());
                }
                line.put("timestamp", Instant.ofEpochMilli(r.timestamp()).toString());
                if (r.headers().toArray().length > 0) { // format.output.fields with headers
                    var headers = line.putArray("headers");
                    r.headers().forEach(h -> headers.addObject().put("key", h.key())
                            .put("value", new String(h.value(), StandardCharsets.UTF_8)));
                }
                out.write(JSON.writeValueAsBytes(line));
                out.write('\n');
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return file;
    }

    /** Confluent's layout: {@code topics/TOPIC/partition=P/TOPIC+P+START.json} and its keys file. */
    static void confluent(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records,
                          int perFile) throws IOException {
        chunks(records, perFile, (chunk, n) -> {
            StringBuilder values = new StringBuilder();
            StringBuilder keys = new StringBuilder();
            StringBuilder headers = new StringBuilder();
            for (ConsumerRecord<byte[], byte[]> r : chunk) {
                values.append(JSON.readTree(r.value()).toString()).append('\n');
                keys.append(JSON.writeValueAsString(new String(r.key(), StandardCharsets.UTF_8))).append('\n');
                ObjectNode enveloped = JSON.createObjectNode(); // store.kafka.headers: enveloped, values as text
                var hs = enveloped.putArray("headers");
                r.headers().forEach(h -> hs.addObject().put("key", h.key())
                        .put("value", new String(h.value(), StandardCharsets.UTF_8)));
                headers.append(enveloped).append('\n');
            }
            Files.writeString(confluentFile(root, topic, chunk.get(0), ".json"), values);
            Files.writeString(confluentFile(root, topic, chunk.get(0), ".keys.json"), keys);
            Files.writeString(confluentFile(root, topic, chunk.get(0), ".headers.json"), headers);
        });
    }

    /** {@code topics/TOPIC/partition=P/TOPIC+P+START} and {@code ext}: the file of the chunk {@code first} starts. */
    private static Path confluentFile(Path root, String topic, ConsumerRecord<byte[], byte[]> first, String ext)
            throws IOException {
        Path dir = Files.createDirectories(root.resolve("topics").resolve(topic)
                .resolve("partition=" + first.partition()));
        return dir.resolve(topic + "+" + first.partition() + "+" + String.format(Locale.ROOT, "%010d", first.offset())
                + ext);
    }

    /** A copy of the folder {@code from} at {@code to}. */
    static Path copy(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
        return to;
    }

    /** The orders' values as the connectors' Avro converter gives them a schema (Parquet and Avro formats). */
    static final org.apache.avro.Schema ORDER = org.apache.avro.SchemaBuilder.record("Order").fields()
            .requiredString("order_id").requiredString("status").requiredInt("n").requiredDouble("amount").endRecord();

    /** Aiven's envelope of {@code format.output.fields=key,value,offset,timestamp,headers} (Avro and Parquet). */
    static final org.apache.avro.Schema AIVEN = org.apache.avro.SchemaBuilder.record("connector_records")
            .namespace("io.aiven.avro.output.schema").fields()
            .name("key").type().stringType().noDefault()
            .name("value").type(ORDER).noDefault()
            .name("offset").type().longType().noDefault()
            .name("timestamp").type().longType().noDefault()
            .name("headers").type().map().values().stringType().noDefault().endRecord();

    private static final org.apache.avro.Schema KEY = org.apache.avro.SchemaBuilder.record("RecordKey").fields()
            .requiredString("key").endRecord();
    private static final org.apache.avro.Schema HEADER = org.apache.avro.SchemaBuilder.record("Header").fields()
            .requiredString("key").optionalString("value").endRecord();
    private static final org.apache.avro.Schema HEADERS = org.apache.avro.SchemaBuilder.record("RecordHeaders")
            .fields().name("headers").type().array().items(HEADER).noDefault().endRecord();

    private static org.apache.avro.generic.GenericRecord order(ConsumerRecord<byte[], byte[]> r) {
        try {
            var json = JSON.readTree(r.value());
            var order = new org.apache.avro.generic.GenericData.Record(ORDER);
            order.put("order_id", json.get("order_id").asText());
            order.put("status", json.get("status").asText());
            order.put("n", json.get("n").asInt());
            order.put("amount", json.get("amount").asDouble());
            return order;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Map<String, String> headerMap(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        r.headers().forEach(h -> headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8)));
        return headers;
    }

    private static org.apache.avro.generic.GenericRecord aivenRow(ConsumerRecord<byte[], byte[]> r) {
        var row = new org.apache.avro.generic.GenericData.Record(AIVEN);
        row.put("key", new String(r.key(), StandardCharsets.UTF_8));
        row.put("value", order(r));
        row.put("offset", r.offset());
        row.put("timestamp", r.timestamp());
        row.put("headers", headerMap(r));
        return row;
    }

    /** Splits each partition's records into files of {@code perFile}, handing each with its index to {@code file}. */
    private static void chunks(Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records, int perFile,
                               ChunkWriter file) throws IOException {
        for (List<ConsumerRecord<byte[], byte[]>> list : records.values()) {
            for (int i = 0, n = 0; i < list.size(); i += perFile, n++) {
                file.write(list.subList(i, Math.min(list.size(), i + perFile)), n);
            }
        }
    }

    private interface ChunkWriter {
        void write(List<ConsumerRecord<byte[], byte[]>> chunk, int index) throws IOException;
    }

    private static String aivenName(String topic, ConsumerRecord<byte[], byte[]> first) {
        return topic + "-" + first.partition() + "-" + String.format(Locale.ROOT, "%020d", first.offset());
    }

    private static OutputStream compressed(Path file, String compression) throws IOException {
        OutputStream out = Files.newOutputStream(file);
        return switch (compression) {
            case ".gz" -> new GZIPOutputStream(out);
            case ".zst" -> new com.github.luben.zstd.ZstdOutputStream(out);
            default -> out;
        };
    }

    /** Aiven's Avro format: {@code TOPIC-P-START.avro[.zst]}, every other file compressed ({@code file.compression.type}). */
    static void aivenAvro(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records,
                          int perFile) throws IOException {
        Files.createDirectories(root);
        chunks(records, perFile, (chunk, n) -> {
            Path file = root.resolve(aivenName(topic, chunk.get(0)) + ".avro" + (n % 2 == 1 ? ".zst" : ""));
            try (OutputStream out = compressed(file, n % 2 == 1 ? ".zst" : "");
                 var w = new org.apache.avro.file.DataFileWriter<org.apache.avro.generic.GenericRecord>(
                         new org.apache.avro.generic.GenericDatumWriter<>(AIVEN))) {
                w.create(AIVEN, out);
                for (ConsumerRecord<byte[], byte[]> r : chunk) {
                    w.append(aivenRow(r));
                }
            }
        });
    }

    /** Aiven's Parquet format: {@code TOPIC-P-START}, and {@code .gz} on every other name as its template adds it. */
    static void aivenParquet(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records,
                             int perFile) throws IOException {
        Files.createDirectories(root);
        chunks(records, perFile, (chunk, n) -> parquet(root.resolve(aivenName(topic, chunk.get(0))
                + (n % 2 == 1 ? ".gz" : "")), AIVEN, chunk.stream().map(ConnectorArchives::aivenRow).toList()));
    }

    /**
     * Aiven's CSV format with {@code format.output.fields=key,value,offset,timestamp,headers}: key and value base64
     * (the value's default encoding), headers {@code BASE64KEY:BASE64VALUE;}; every other file gzipped.
     */
    static void aivenCsv(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records,
                         int perFile) throws IOException {
        Files.createDirectories(root);
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder();
        chunks(records, perFile, (chunk, n) -> {
            String compression = n % 2 == 1 ? ".gz" : "";
            try (OutputStream out = compressed(root.resolve(aivenName(topic, chunk.get(0)) + compression), compression)) {
                for (ConsumerRecord<byte[], byte[]> r : chunk) {
                    StringBuilder headers = new StringBuilder();
                    r.headers().forEach(h -> headers.append(b64.encodeToString(h.key().getBytes(StandardCharsets.UTF_8)))
                            .append(':').append(b64.encodeToString(h.value())).append(';'));
                    String line = b64.encodeToString(r.key()) + "," + b64.encodeToString(r.value()) + "," + r.offset()
                            + "," + r.timestamp() + "," + headers + "\n";
                    out.write(line.getBytes(StandardCharsets.UTF_8));
                }
            }
        });
    }

    /**
     * Confluent's Parquet format: {@code topics/TOPIC/partition=P/TOPIC+P+START.snappy.parquet}, keys and headers in
     * {@code .keys.snappy.parquet} and {@code .headers.snappy.parquet}, enveloped as its writer envelops them.
     */
    static void confluentParquet(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records,
                                 int perFile) throws IOException {
        chunks(records, perFile, (chunk, n) -> {
            ConsumerRecord<byte[], byte[]> first = chunk.get(0);
            parquet(confluentFile(root, topic, first, ".snappy.parquet"), ORDER,
                    chunk.stream().map(ConnectorArchives::order).toList());
            parquet(confluentFile(root, topic, first, ".keys.snappy.parquet"), KEY, chunk.stream().map(r -> {
                var key = new org.apache.avro.generic.GenericData.Record(KEY);
                key.put("key", new String(r.key(), StandardCharsets.UTF_8));
                return (org.apache.avro.generic.GenericRecord) key;
            }).toList());
            parquet(confluentFile(root, topic, first, ".headers.snappy.parquet"), HEADERS, chunk.stream().map(r -> {
                List<org.apache.avro.generic.GenericRecord> list = new ArrayList<>();
                headerMap(r).forEach((k, v) -> {
                    var h = new org.apache.avro.generic.GenericData.Record(HEADER);
                    h.put("key", k);
                    h.put("value", v);
                    list.add(h);
                });
                var hs = new org.apache.avro.generic.GenericData.Record(HEADERS);
                hs.put("headers", list);
                return (org.apache.avro.generic.GenericRecord) hs;
            }).toList());
        });
    }

    /**
     * Confluent's Avro format: {@code TOPIC+P+START.avro} container files of values, keys ({@code .keys.avro}, the
     * key's own schema) and headers ({@code .headers.avro}, an array of {key, value}: not enveloped in Avro).
     */
    static void confluentAvro(Path root, String topic, Map<Integer, List<ConsumerRecord<byte[], byte[]>>> records,
                              int perFile) throws IOException {
        org.apache.avro.Schema string = org.apache.avro.Schema.create(org.apache.avro.Schema.Type.STRING);
        org.apache.avro.Schema headerList = org.apache.avro.Schema.createArray(HEADER);
        chunks(records, perFile, (chunk, n) -> {
            ConsumerRecord<byte[], byte[]> first = chunk.get(0);
            avro(confluentFile(root, topic, first, ".avro"), ORDER, chunk.stream().map(r -> (Object) order(r)).toList());
            avro(confluentFile(root, topic, first, ".keys.avro"), string,
                    chunk.stream().map(r -> (Object) new String(r.key(), StandardCharsets.UTF_8)).toList());
            avro(confluentFile(root, topic, first, ".headers.avro"), headerList, chunk.stream().map(r -> {
                List<Object> list = new ArrayList<>();
                headerMap(r).forEach((k, v) -> {
                    var h = new org.apache.avro.generic.GenericData.Record(HEADER);
                    h.put("key", k);
                    h.put("value", v);
                    list.add(h);
                });
                return (Object) list;
            }).toList());
        });
    }

    private static void avro(Path file, org.apache.avro.Schema schema, List<Object> data) throws IOException {
        try (var w = new org.apache.avro.file.DataFileWriter<Object>(
                new org.apache.avro.generic.GenericDatumWriter<>(schema))) {
            w.create(schema, file.toFile());
            for (Object d : data) {
                w.append(d);
            }
        }
    }

    private static void parquet(Path file, org.apache.avro.Schema schema,
                                List<org.apache.avro.generic.GenericRecord> rows) throws IOException {
        try (var w = org.apache.parquet.avro.AvroParquetWriter.<org.apache.avro.generic.GenericRecord>builder(
                        new org.apache.parquet.io.LocalOutputFile(file)).withSchema(schema)
                .withCompressionCodec(org.apache.parquet.hadoop.metadata.CompressionCodecName.SNAPPY).build()) {
            for (var r : rows) {
                w.write(r);
            }
        }
    }
}
