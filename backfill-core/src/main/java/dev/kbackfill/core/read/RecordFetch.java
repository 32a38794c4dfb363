package dev.kbackfill.core.read;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.SourceRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads single records back by their offsets, with a group-less consumer ({@code assign} and {@code seek}) at the
 * run's isolation level: for the rare record a run needs again after its batch was reduced (the earlier record of a
 * key whose last one the sink refused). Made on first use, closed with the run.
 */
public final class RecordFetch implements AutoCloseable {

    private final Map<String, Object> config;
    private final String topic;
    private KafkaConsumer<byte[], byte[]> consumer;

    public RecordFetch(Map<String, Object> clientConfig, IsolationLevel isolation, String topic) {
        Map<String, Object> c = new java.util.HashMap<>(BoundedReader.consumerConfig(clientConfig, isolation));
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "kbackfill-refetch");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        this.config = c;
        this.topic = topic;
    }

    /**
     * The record at {@code offset} of {@code partition}, with {@code logTime} as its log time (a run stamped it when
     * it first read it), or empty where the log holds none there any more.
     */
    public synchronized Optional<SourceRecord> fetch(int partition, long offset, long logTime) {
        if (consumer == null) {
            consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        TopicPartition tp = new TopicPartition(topic, partition);
        consumer.assign(List.of(tp));
        consumer.seek(tp, offset);
        int empty = 0;
        while (consumer.position(tp) <= offset && empty < 10) {
            List<ConsumerRecord<byte[], byte[]>> polled = consumer.poll(Duration.ofMillis(500)).records(tp);
            if (polled.isEmpty()) {
                empty++;
                continue;
            }
            for (ConsumerRecord<byte[], byte[]> r : polled) {
                if (r.offset() == offset) {
                    return Optional.of(new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), logTime,
                            r.key(), r.value(), r.headers()));
                }
                if (r.offset() > offset) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** Where a record asked for by its offset stands. */
    public enum Where {
        /** Read: {@link Found#record()} holds it. */
        FOUND,
        /** Below the partition's log start: deleted by retention (or deleteRecords). */
        BELOW_LOG_START,
        /** At or beyond the partition's end: no record was ever there, or the log was truncated. */
        BEYOND_END,
        /** Within the log, and no record there: compacted away, or a transaction marker. */
        NONE
    }

    /** A record asked for by its offset, or why there is none. */
    public record Found(Where where, SourceRecord record) {
    }

    /** As {@link #fetch}, saying why there is no record where there is none. */
    public synchronized Found find(int partition, long offset, long logTime) {
        if (consumer == null) {
            consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        TopicPartition tp = new TopicPartition(topic, partition);
        Long start = consumer.beginningOffsets(List.of(tp)).get(tp);
        Long end = consumer.endOffsets(List.of(tp)).get(tp);
        if (start == null || end == null || offset >= end) {
            return new Found(Where.BEYOND_END, null);
        }
        if (offset < start) {
            return new Found(Where.BELOW_LOG_START, null);
        }
        return fetch(partition, offset, logTime).map(r -> new Found(Where.FOUND, r))
                .orElseGet(() -> new Found(Where.NONE, null));
    }

    @Override
    public synchronized void close() {
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(5));
            consumer = null;
        }
    }
}
