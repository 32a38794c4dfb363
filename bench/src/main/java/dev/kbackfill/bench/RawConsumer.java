package dev.kbackfill.bench;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The reference for kbackfill's reader: the plainest Java read of a whole topic, as a user would write it.
 * {@code assign} every partition, seek to the beginning, poll until every position reaches the end offset taken
 * at the start, count records and bytes. No group, no commits, the client's defaults but for the isolation level
 * kbackfill reads at (read_committed). Prints {@code records=N bytes=B seconds=S}.
 * Usage: {@code RawConsumer BOOTSTRAP TOPIC}.
 */
public final class RawConsumer {

    private RawConsumer() {
    }

    public static void main(String[] args) {
        long started = System.nanoTime();
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        long records = 0;
        long bytes = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(args[1]).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            Set<TopicPartition> left = new HashSet<>(partitions);
            left.removeIf(tp -> end.get(tp) == 0);
            while (!left.isEmpty()) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    records++;
                    bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                }
                left.removeIf(tp -> consumer.position(tp) >= end.get(tp));
            }
        }
        System.out.printf("records=%d bytes=%d seconds=%.3f%n", records, bytes, (System.nanoTime() - started) / 1e9);
    }
}
