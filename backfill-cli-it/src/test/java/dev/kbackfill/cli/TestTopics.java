package dev.kbackfill.cli;

import java.time.Instant;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/** Writes records with chosen timestamps to a test topic. */
final class TestTopics {

    private TestTopics() {
    }

    static void produce(EmbeddedKafka kafka, String topic, int partition, Instant... timestamps) throws Exception {
        Map<String, Object> config = kafka.clientConfig();
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (Instant t : timestamps) {
                p.send(new ProducerRecord<>(topic, partition, t.toEpochMilli(), "key-" + partition, "v")).get();
            }
        }
    }
}
