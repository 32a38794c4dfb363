package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The checking consumer a plan prepares while the cluster answers its other questions
 * ({@link KafkaOffsetSource#prepareCheck}), on a broker of its own that creates topics on first use, as many
 * clusters do: preparing asks about the topic before anyone knows it exists.
 */
@Tag("kafka")
class PreparedCheckIT {

    private static EmbeddedKafka kafka;
    private static Admin admin;

    @BeforeAll
    static void startBroker() {
        kafka = EmbeddedKafka.start(Map.of("auto.create.topics.enable", "true"));
        admin = kafka.admin();
    }

    @AfterAll
    static void stopBroker() {
        admin.close();
        kafka.close();
    }

    private static java.util.Set<String> topics() throws Exception {
        return admin.listTopics().names().get();
    }

    @Test
    void planningAMisspelledTopicRefusesItAndNeverCreatesIt() throws Exception {
        try (KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig())) {
            assertThatThrownBy(() -> new RangeResolver(source)
                    .resolve(BackfillRequest.builder("pc-ordrs").from("2024-01-01").to("latest").build()))
                    .isInstanceOf(RequestException.class)
                    .hasMessageStartingWith("topic 'pc-ordrs' does not exist on cluster ");
        } // close waits for the prepared consumer's question
        // the control, asked after it: a plain consumer's question creates its topic on this broker
        try (KafkaConsumer<byte[], byte[]> plain = new KafkaConsumer<>(kafka.clientConfig(),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            plain.partitionsFor("pc-control", Duration.ofSeconds(10));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!topics().contains("pc-control") && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(topics()).contains("pc-control").doesNotContain("pc-ordrs");
    }

    @Test
    void aPreparedCheckAnswersAsACheckMadeOnDemand() throws Exception {
        String topic = "pc-orders";
        admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
        Instant t0 = Instant.parse("2024-01-01T00:00:00Z");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(kafka.clientConfig(), new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 30; i++) {
                p.send(new ProducerRecord<>(topic, i % 3, t0.plusSeconds(i).toEpochMilli(), "k" + i, "v" + i)).get();
            }
        }
        Map<Integer, Long> from = Map.of(0, 2L, 1, 0L, 2, 5L);
        Map<Integer, Long> end = Map.of(0, 10L, 1, 10L, 2, 10L);
        Instant time = t0.plusSeconds(12);
        Map<Integer, OffsetSource.TimestampedOffset> onDemand;
        try (KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig())) {
            onDemand = source.firstVisibleAtOrAfter(topic, from, end, time, IsolationLevel.READ_COMMITTED);
        }
        try (KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig())) {
            source.prepareCheck(topic, IsolationLevel.READ_COMMITTED);
            assertThat(source.firstVisibleAtOrAfter(topic, from, end, time, IsolationLevel.READ_COMMITTED))
                    .isEqualTo(onDemand);
        }
        // partition p holds the records i with i % 3 == p at offset i / 3, stamped t0 + i s: the first at or after
        // 12 s is record 12 (p0, offset 4), 13 (p1, offset 4), and on p2 from offset 5 record 17 (offset 5)
        assertThat(onDemand).isEqualTo(Map.of(
                0, new OffsetSource.TimestampedOffset(4, t0.plusSeconds(12)),
                1, new OffsetSource.TimestampedOffset(4, t0.plusSeconds(13)),
                2, new OffsetSource.TimestampedOffset(5, t0.plusSeconds(17))));
    }

    @Test
    void planningRegistersNoMetricsBeansForItsClientsUnlessTheSettingsNameAReporter() throws Exception {
        String topic = "pc-beans";
        admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        BackfillRequest request = BackfillRequest.builder(topic).from("earliest").to("latest").build();
        javax.management.MBeanServer beans = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        javax.management.ObjectName adminMetrics = new javax.management.ObjectName(
                "kafka.admin.client:type=admin-client-metrics,client-id=pc-beans-*");
        Map<String, Object> config = kafka.clientConfig();
        config.put("client.id", "pc-beans-quiet");
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            new RangeResolver(source).resolve(request);
            assertThat(beans.queryNames(adminMetrics, null)).isEmpty();
        }
        // a user who watches the clients over JMX names the reporter, and gets the beans
        config.put("client.id", "pc-beans-watched");
        config.put("metric.reporters", "org.apache.kafka.common.metrics.JmxReporter");
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            new RangeResolver(source).resolve(request);
            assertThat(beans.queryNames(adminMetrics, null)).extracting(n -> n.getKeyProperty("client-id"))
                    .containsExactly("pc-beans-watched");
        }
    }

    @Test
    void aConsumerThatCannotBeMadeFailsTheCheckThatNeedsItNotThePreparation() {
        Map<String, Object> config = kafka.clientConfig();
        config.put("group.id", "someone-elses-group");
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            source.prepareCheck("pc-orders", IsolationLevel.READ_COMMITTED);
            assertThatThrownBy(() -> source.firstVisibleAtOrAfter("pc-orders", Map.of(0, 0L), Map.of(0, 10L),
                    Instant.EPOCH, IsolationLevel.READ_COMMITTED))
                    .isInstanceOf(RequestException.class)
                    .hasMessageContaining("group.id 'someone-elses-group' is not allowed");
        }
    }
}
