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
 * Each key's newest record in the log from a run's start, against a real broker: a record of the range is superseded
 * exactly where a later record of its key follows it (later in the range, or after it); records produced later are
 * seen after a catch-up; keys from value fields decode their value; a record whose key does not decode is counted,
 * not matched.
 */
@Tag("kafka")
class NewestInLogIT {

    @TempDir
    Path spill;

    /** Records {key, value} at the given timestamps (CreateTime). */
    private static void produce(EmbeddedKafka kafka, String topic, int partition, long timestamp, List<String[]> records) {
        Map<String, Object> config = new java.util.HashMap<>(kafka.clientConfig());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (String[] r : records) {
                p.send(new ProducerRecord<>(topic, partition, timestamp, r[0], r[1]));
            }
            p.flush();
        }
    }

    private static void produce(EmbeddedKafka kafka, String topic, int partition, List<String[]> records) {
        produce(kafka, topic, partition, System.currentTimeMillis(), records);
    }

    /** The change of key {@code k} at {@code offset} of {@code partition}, with the log time the log's clock gives it. */
    private static dev.kbackfill.core.record.Change at(String k, int partition, long offset, long logTime) {
        return new dev.kbackfill.core.record.Change(Map.of("kafka_key", k), Map.of(), partition, offset, 0, logTime);
    }

    @Test
    void aRecordIsSupersededExactlyWhereALaterRecordOfItsKeyFollowsIt() {
        EmbeddedKafka kafka = SharedKafka.get();
        String topic = "newest-in-log-keys";
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        long t = 1_700_000_000_000L;
        // partition 0: a@0 b@1 a@2 at t; partition 1: x@0 at t, b@1 at t+5 (a later time: newer by the rule)
        produce(kafka, topic, 0, t, List.of(new String[] {"a", "{}"}, new String[] {"b", "{}"}, new String[] {"a", "{}"}));
        produce(kafka, topic, 1, t, List.<String[]>of(new String[] {"x", "{}"}));
        produce(kafka, topic, 1, t + 5, List.<String[]>of(new String[] {"b", "{}"}));
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        // the run starts at offset 0 of partition 0 and 1 of partition 1, whose clock stands at t below it
        try (NewestInLog log = new NewestInLog(kafka.clientConfig(), IsolationLevel.READ_COMMITTED, topic,
                Map.of(0, 0L, 1, 1L), Map.of(1, t), decoder, 1 << 20, spill, Duration.ofSeconds(30))) {
            assertThat(log.catchUp()).isEqualTo(4);
            log.seal();
            assertThat(log.superseded(at("a", 0, 0, t))).as("a@2 follows in the range").isTrue();
            assertThat(log.superseded(at("a", 0, 2, t))).as("its last record").isFalse();
            assertThat(log.superseded(at("b", 0, 1, t))).as("b in partition 1 at a later time").isTrue();
            assertThat(log.superseded(at("b", 1, 1, t + 5))).isFalse();
            assertThat(log.superseded(at("x", 1, 0, t))).as("below where the run reads: x is not seen").isFalse();
            assertThat(log.positions()).containsEntry(0, 3L).containsEntry(1, 2L);
            // a live pipeline goes on writing: the next catch-up reads what came since, and only that
            produce(kafka, topic, 1, t + 6, List.<String[]>of(new String[] {"a", "{}"}));
            assertThat(log.catchUp()).isEqualTo(1);
            assertThat(log.superseded(at("a", 0, 2, t))).isTrue();
            assertThat(log.catchUp()).isZero();
            assertThat(log.records()).isEqualTo(5);
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
        try (NewestInLog log = new NewestInLog(kafka.clientConfig(), IsolationLevel.READ_COMMITTED, topic, Map.of(0, 1L),
                Map.of(), decoder, 1 << 20, spill, Duration.ofSeconds(30))) {
            assertThat(log.catchUp()).isEqualTo(3);
            // {"id":2} at offset 1 is the only record with a key; an earlier one of id 2 is superseded by it
            dev.kbackfill.core.record.Change earlier = new dev.kbackfill.core.record.Change(Map.of("id", 2L), Map.of(),
                    0, 0, 0, 0);
            assertThat(log.superseded(earlier)).isTrue();
            assertThat(log.superseded(new dev.kbackfill.core.record.Change(Map.of("id", 1L), Map.of(), 0, 0, 0, 0)))
                    .isFalse();
            assertThat(log.superseded(new dev.kbackfill.core.record.Change(Map.of("id", "2"), Map.of(), 0, 0, 0, 0)))
                    .as("text is never a number").isFalse();
            assertThat(log.undecodable()).isEqualTo(2);
        }
    }
}
