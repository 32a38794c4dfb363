package dev.kbackfill.core.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log after a range, against a real broker: the keys of the records from each partition's range end on, none
 * of the range's own; records produced later are seen after a catch-up; keys from value fields decode their value;
 * a record whose key does not decode is counted, not matched; an open transaction's records wait for its commit.
 */
@Tag("kafka")
class LogTailIT {

    @TempDir
    Path spill;

    private static void produce(EmbeddedKafka kafka, String topic, int partition, List<String[]> records) {
        Map<String, Object> config = new java.util.HashMap<>(kafka.clientConfig());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (String[] r : records) {
                p.send(new ProducerRecord<>(topic, partition, r[0], r[1]));
            }
            p.flush();
        }
    }

    private static Map<String, Object> key(String k) {
        return Map.of("kafka_key", k);
    }

    @Test
    void seesTheKeysAfterEachPartitionsRangeEndAndThoseProducedLater() {
        EmbeddedKafka kafka = SharedKafka.get();
        String topic = "log-tail-keys";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        produce(kafka, topic, 0, List.of(new String[] {"a", "{}"}, new String[] {"b", "{}"}, new String[] {"c", "{}"}));
        produce(kafka, topic, 1, List.of(new String[] {"x", "{}"}, new String[] {"y", "{}"}));
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        // the range ends at offset 1 of partition 0 and 2 of partition 1 (the end of its log)
        try (LogTail tail = new LogTail(kafka.clientConfig(), IsolationLevel.READ_COMMITTED, topic, Map.of(0, 1L, 1, 2L),
                decoder, 1 << 20, spill, Duration.ofSeconds(30))) {
            assertThat(tail.catchUp()).isEqualTo(2);
            tail.seal();
            assertThat(tail.laterThanRange(key("a"))).isFalse();
            assertThat(tail.laterThanRange(key("b"))).isTrue();
            assertThat(tail.laterThanRange(key("c"))).isTrue();
            assertThat(tail.laterThanRange(key("x"))).isFalse();
            assertThat(tail.positions()).containsEntry(0, 3L).containsEntry(1, 2L);
            // a live pipeline goes on writing: the next catch-up reads what came since, and only that
            produce(kafka, topic, 1, List.of(new String[] {"x", "{}"}, new String[] {"a", "{}"}));
            assertThat(tail.catchUp()).isEqualTo(2);
            assertThat(tail.laterThanRange(key("x"))).isTrue();
            assertThat(tail.laterThanRange(key("a"))).isTrue();
            assertThat(tail.catchUp()).isZero();
            assertThat(tail.records()).isEqualTo(4);
        }
    }

    @Test
    void keysFromValueFieldsAreReadFromTheValueAndUndecodableOnesAreCounted() {
        EmbeddedKafka kafka = SharedKafka.get();
        String topic = "log-tail-fields";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        produce(kafka, topic, 0, List.of(new String[] {"r", "{\"id\":1}"}, new String[] {"r", "{\"id\":2}"},
                new String[] {"r", "not json"}, new String[] {"r", "{\"other\":3}"}));
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of("id"));
        try (LogTail tail = new LogTail(kafka.clientConfig(), IsolationLevel.READ_COMMITTED, topic, Map.of(0, 1L),
                decoder, 1 << 20, spill, Duration.ofSeconds(30))) {
            assertThat(tail.catchUp()).isEqualTo(3);
            assertThat(tail.laterThanRange(Map.of("id", 2L))).isTrue();
            assertThat(tail.laterThanRange(Map.of("id", 1L))).isFalse();
            assertThat(tail.laterThanRange(Map.of("id", "2"))).as("text is never a number").isFalse();
            assertThat(tail.undecodable()).isEqualTo(2);
        }
    }
}
