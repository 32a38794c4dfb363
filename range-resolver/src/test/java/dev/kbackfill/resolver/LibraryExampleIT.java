package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The README's library example, verbatim but for the bootstrap address, run against the shared broker. */
@Tag("kafka")
class LibraryExampleIT {

    @Test
    void theReadmeExampleRuns() throws Exception {
        EmbeddedKafka cluster = SharedKafka.get();
        cluster.createTopic("orders", 2, Map.of());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(cluster.clientConfig(), new StringSerializer(),
                new StringSerializer())) {
            for (String t : new String[] {"2023-12-31T23:00:00Z", "2024-01-01T10:00:00Z", "2024-01-02T01:00:00Z"}) {
                p.send(new ProducerRecord<>("orders", 0, Instant.parse(t).toEpochMilli(), "k", t)).get();
            }
        }
        String bootstrap = cluster.bootstrapServers();

        // --- the README example, with "localhost:9092" replaced by the shared broker ---
        try (KafkaOffsetSource kafka = KafkaOffsetSource.create(Map.of("bootstrap.servers", bootstrap))) {
            Plan plan = new RangeResolver(kafka).resolve(
                    BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-02").build());
            for (PartitionRange r : plan.partitions()) {
                System.out.printf("partition %d: [%d, %d) %s%n", r.partition(), r.start(), r.end(), r.notes());
            }
            String stored = plan.toJson();                 // versioned; Plan.fromJson(stored) reads it back
            String spark = plan.sparkStartingOffsets();    // {"orders":{"0":23,"1":40}}
            // --- end of the README example ---

            assertThat(plan.partition(0).orElseThrow().start()).isEqualTo(1);
            assertThat(plan.partition(0).orElseThrow().end()).isEqualTo(2);
            assertThat(plan.partition(1).orElseThrow().isEmpty()).isTrue();
            assertThat(Plan.fromJson(stored)).isEqualTo(plan);
            assertThat(spark).isEqualTo("{\"orders\":{\"0\":1,\"1\":0}}");
        }
    }
}
