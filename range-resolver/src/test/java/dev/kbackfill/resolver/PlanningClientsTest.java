package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.apache.kafka.common.IsolationLevel;
import org.junit.jupiter.api.Test;

/** The settings of the planning clients (the Admin client and the checking consumer), as made from the user's. */
class PlanningClientsTest {

    private static final Map<String, Object> PLAIN = Map.of("bootstrap.servers", "b:9092");

    @Test
    void planningClientsKeepNoMetricsBeansNorTelemetryUnlessTheSettingsNameThem() {
        assertThat(KafkaOffsetSource.adminConfig(PLAIN)).containsEntry("metric.reporters", "")
                .containsEntry("enable.metrics.push", false).containsEntry("bootstrap.servers", "b:9092");
        try (KafkaOffsetSource source = KafkaOffsetSource.using(null, PLAIN)) {
            assertThat(source.checkingConsumerConfig(IsolationLevel.READ_COMMITTED)).containsEntry("metric.reporters", "")
                    .containsEntry("enable.metrics.push", false);
        }
        Map<String, Object> asked = Map.of("bootstrap.servers", "b:9092", "enable.metrics.push", true);
        assertThat(KafkaOffsetSource.adminConfig(asked)).containsEntry("enable.metrics.push", true);
        try (KafkaOffsetSource source = KafkaOffsetSource.using(null, asked)) {
            assertThat(source.checkingConsumerConfig(IsolationLevel.READ_COMMITTED))
                    .containsEntry("enable.metrics.push", true);
        }
    }
}
