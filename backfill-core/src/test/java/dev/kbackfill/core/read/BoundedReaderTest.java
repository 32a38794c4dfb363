package dev.kbackfill.core.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The reader's failure paths against Kafka's MockConsumer: fast, and each names where it stopped. */
class BoundedReaderTest {

    private static final TopicPartition P0 = new TopicPartition("orders", 0);

    private static MockConsumer<byte[], byte[]> consumer(long logStart, long logEnd) {
        MockConsumer<byte[], byte[]> c = new MockConsumer<>(AutoOffsetResetStrategy.NONE.name());
        c.updateBeginningOffsets(Map.of(P0, logStart));
        c.updateEndOffsets(Map.of(P0, logEnd));
        return c;
    }

    private static ConsumerRecord<byte[], byte[]> record(long offset) {
        return new ConsumerRecord<>("orders", 0, offset, new byte[] {1}, new byte[] {2});
    }

    @Test
    void theReadersClientIdNamesTheJobUnlessTheUserSetOne() {
        assertThat(BoundedReader.withJobClientId(Map.of("bootstrap.servers", "b:9092"), "orders-3f9a"))
                .containsEntry("client.id", "kbackfill-orders-3f9a").containsEntry("bootstrap.servers", "b:9092");
        assertThat(BoundedReader.withJobClientId(Map.of("client.id", "mine"), "orders-3f9a"))
                .containsEntry("client.id", "mine");
    }

    /** A backfill's metrics are its own report: its reader's client keeps no JMX beans nor telemetry unless asked. */
    @Test
    void theReaderKeepsNoMetricsBeansNorTelemetryUnlessTheSettingsNameThem() {
        assertThat(BoundedReader.consumerConfig(Map.of("bootstrap.servers", "b:9092"),
                org.apache.kafka.common.IsolationLevel.READ_COMMITTED))
                .containsEntry("metric.reporters", "").containsEntry("enable.metrics.push", false);
        assertThat(BoundedReader.consumerConfig(Map.of("metric.reporters", "org.apache.kafka.common.metrics.JmxReporter"),
                org.apache.kafka.common.IsolationLevel.READ_COMMITTED))
                .containsEntry("metric.reporters", "org.apache.kafka.common.metrics.JmxReporter");
    }

    @Test
    void readsExactlyTheRangeAndStopsOnThePosition() throws Exception {
        MockConsumer<byte[], byte[]> c = consumer(0, 10);
        c.schedulePollTask(() -> {
            for (long o = 2; o < 8; o++) {
                c.addRecord(record(o));
            }
        });
        List<Long> offsets = new ArrayList<>();
        Map<Integer, Long> positions = new HashMap<>();
        new BoundedReader("orders", c, List.of(new BoundedReader.Range(0, 2, 5)), false, Duration.ofSeconds(5))
                .read((records, pos, lost) -> {
                    records.forEach(r -> offsets.add(r.offset()));
                    positions.putAll(pos);
                });
        assertThat(offsets).containsExactly(2L, 3L, 4L);
        assertThat(positions).containsEntry(0, 5L);
    }

    @Test
    void anOffsetPastTheLogEndFailsAtOnceEvenWhereLossIsAllowedInsteadOfSpinning() {
        MockConsumer<byte[], byte[]> c = consumer(0, 10);
        for (int i = 0; i < 3; i++) {
            c.schedulePollTask(() -> c.setPollException(new OffsetOutOfRangeException("out", Map.of(P0, 50L))));
        }
        BoundedReader reader = new BoundedReader("orders", c, List.of(new BoundedReader.Range(0, 50, 60)), true,
                Duration.ofMinutes(2));
        long started = System.nanoTime();
        assertThatThrownBy(() -> reader.read((records, pos, lost) -> { }))
                .isInstanceOf(ReadException.class)
                .hasMessage("offsets of orders to read lie past the end of the log: partition 0 at offset 50, log end 10; "
                        + "the log was truncated, or the plan belongs to another log (a recreated topic); make a new plan");
        assertThat(System.nanoTime() - started).isLessThan(Duration.ofSeconds(10).toNanos());
    }

    @Test
    void deletedOffsetsFailNamingThemUnlessLossIsAllowedThenTheyAreCounted() throws Exception {
        MockConsumer<byte[], byte[]> failing = consumer(4, 10);
        failing.schedulePollTask(() -> failing.setPollException(new OffsetOutOfRangeException("out", Map.of(P0, 1L))));
        assertThatThrownBy(() -> new BoundedReader("orders", failing, List.of(new BoundedReader.Range(0, 1, 6)), false,
                Duration.ofSeconds(5)).read((records, pos, lost) -> { }))
                .isInstanceOf(ReadException.class)
                .hasMessageContaining("partition 0 at offset 1 (log start now 4)")
                .hasMessageContaining("rerun with allowDataLoss(true)");

        MockConsumer<byte[], byte[]> allowing = consumer(4, 10);
        allowing.schedulePollTask(() -> allowing.setPollException(new OffsetOutOfRangeException("out", Map.of(P0, 1L))));
        allowing.schedulePollTask(() -> {
            allowing.addRecord(record(4));
            allowing.addRecord(record(5));
        });
        Map<Integer, Long> lost = new HashMap<>();
        List<Long> offsets = new ArrayList<>();
        new BoundedReader("orders", allowing, List.of(new BoundedReader.Range(0, 1, 6)), true, Duration.ofSeconds(5))
                .read((records, pos, l) -> {
                    records.forEach(r -> offsets.add(r.offset()));
                    l.forEach((p, n) -> lost.merge(p, n, Long::sum));
                });
        assertThat(lost).containsEntry(0, 3L);
        assertThat(offsets).containsExactly(4L, 5L);
    }

    @Test
    void aPartitionThatNeverMovesFailsAfterTheStallTimeoutNamingWhereItStands() {
        MockConsumer<byte[], byte[]> c = consumer(0, 10);
        BoundedReader reader = new BoundedReader("orders", c, List.of(new BoundedReader.Range(0, 3, 8)), false,
                Duration.ofMillis(300));
        assertThatThrownBy(() -> reader.read((records, pos, lost) -> { }))
                .isInstanceOf(ReadException.class)
                .hasMessage("no progress reading orders for 0 s: partition 0 at offset 3 (end 8)");
    }
}
