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
 * Archives of a topic as Kafka Connect's S3 sinks write them, made by following the connectors' documented formats
 * (no connector runs here): Aiven's {@code [PREFIX]TOPIC-P-START[.gz]} jsonl with the key, value, offset and
 * timestamp fields ({@code format.output.fields}), and Confluent's default partitioner,
 * {@code topics/TOPIC/partition=P/TOPIC+P+START.json} (values through JsonConverter without schemas, one per line)
 * with {@code .keys.json} beside it ({@code store.kafka.keys}).
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
        records.forEach((p, list) -> {
            for (int i = 0, n = 0; i < list.size(); i += perFile, n++) {
                List<ConsumerRecord<byte[], byte[]>> chunk = list.subList(i, Math.min(list.size(), i + perFile));
                aivenFile(root, topic, chunk, n % 2 == 1, offsets);
            }
        });
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
        for (Map.Entry<Integer, List<ConsumerRecord<byte[], byte[]>>> e : records.entrySet()) {
            Path dir = Files.createDirectories(root.resolve("topics").resolve(topic).resolve("partition=" + e.getKey()));
            List<ConsumerRecord<byte[], byte[]>> list = e.getValue();
            for (int i = 0; i < list.size(); i += perFile) {
                List<ConsumerRecord<byte[], byte[]>> chunk = list.subList(i, Math.min(list.size(), i + perFile));
                String stem = topic + "+" + e.getKey() + "+" + String.format(Locale.ROOT, "%010d", chunk.get(0).offset());
                StringBuilder values = new StringBuilder();
                StringBuilder keys = new StringBuilder();
                for (ConsumerRecord<byte[], byte[]> r : chunk) {
                    values.append(JSON.readTree(r.value()).toString()).append('\n');
                    keys.append(JSON.writeValueAsString(new String(r.key(), StandardCharsets.UTF_8))).append('\n');
                }
                Files.writeString(dir.resolve(stem + ".json"), values);
                Files.writeString(dir.resolve(stem + ".keys.json"), keys);
            }
        }
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
}
