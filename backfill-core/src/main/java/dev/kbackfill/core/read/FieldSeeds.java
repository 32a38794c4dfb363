package dev.kbackfill.core.read;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.record.FieldClock;
import dev.kbackfill.core.version.VersionField;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@link FieldClock.Seeds} read from the log: the records of the {@link VersionField#TOMBSTONE_REACH} offsets before
 * an offset, decoded, the last that carries the field. A group-less consumer ({@code assign} and {@code seek}), at the
 * run's isolation level; records that cannot be decoded carry no field. Asked at most once per partition per run,
 * and only for a partition whose tombstone comes before any record with the field in the run.
 */
public final class FieldSeeds implements FieldClock.Seeds, AutoCloseable {

    private final Map<String, Object> config;
    private final String topic;
    private final RecordDecoder decoder;
    private KafkaConsumer<byte[], byte[]> consumer;

    public FieldSeeds(Map<String, Object> clientConfig, IsolationLevel isolation, String topic, RecordDecoder decoder) {
        Map<String, Object> c = new java.util.HashMap<>(BoundedReader.consumerConfig(clientConfig, isolation));
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"); // reach below the log start: from the log start
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "kbackfill-version-field");
        this.config = c;
        this.topic = topic;
        this.decoder = decoder;
    }

    @Override
    public Optional<Map.Entry<Long, Comparable<?>>> before(int partition, long offset) {
        long from = Math.max(0, offset - VersionField.TOMBSTONE_REACH);
        if (from >= offset) {
            return Optional.empty();
        }
        if (consumer == null) {
            consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        TopicPartition tp = new TopicPartition(topic, partition);
        consumer.assign(List.of(tp));
        consumer.seek(tp, from);
        Map.Entry<Long, Comparable<?>> found = null;
        int empty = 0;
        while (consumer.position(tp) < offset && empty < 3) {
            ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(500));
            if (polled.isEmpty()) {
                empty++;
                continue;
            }
            empty = 0;
            for (ConsumerRecord<byte[], byte[]> r : polled.records(tp)) {
                if (r.offset() >= offset || r.value() == null) {
                    continue;
                }
                try {
                    Change c = decoder.decode(new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(),
                            r.key(), r.value(), r.headers()));
                    if (c.versionField() != null) {
                        found = Map.entry(r.offset(), c.versionField());
                    }
                } catch (DecodeException e) {
                    // a poison record carries no field
                }
            }
        }
        return Optional.ofNullable(found);
    }

    @Override
    public void close() {
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(5));
        }
    }
}
