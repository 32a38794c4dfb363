package dev.kbackfill.cli;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The demo's sample data: a day of orders as JSON, keyed by order id, each order updated every hour as its
 * status moves on, with event times (CreateTime) spread evenly over the day.
 */
final class DemoData {

    static final String TOPIC = "orders";
    static final int PARTITIONS = 3;
    static final Instant DAY = Instant.parse("2024-01-01T00:00:00Z");
    private static final String[] STATUSES = {"created", "paid", "packed", "shipped", "delivered"};
    /** Each order is updated this many times over the day, so a range holds several records per key. */
    private static final int UPDATES = 24;

    private DemoData() {
    }

    /** The value of the i-th of {@code count} records: its key, event time and JSON value. */
    record Order(String key, Instant time, String json) {
    }

    static Order order(int i, int count) {
        int orders = Math.max(1, count / UPDATES);
        int id = i % orders;
        int update = i / orders;
        String status = STATUSES[Math.min(update * STATUSES.length / UPDATES, STATUSES.length - 1)];
        Instant time = DAY.plusMillis(Duration.ofDays(1).toMillis() * i / count);
        String key = String.format(Locale.ROOT, "order-%05d", id);
        String json = String.format(Locale.ROOT,
                "{\"order_id\":\"%s\",\"customer\":\"customer-%03d\",\"amount\":%d.%02d,\"status\":\"%s\","
                        + "\"updated_at\":\"%s\",\"items\":[{\"sku\":\"sku-%d\",\"qty\":%d}]}",
                key, id % 250, 5 + id % 400, id % 100, status, time, id % 50, 1 + id % 4);
        return new Order(key, time, json);
    }

    /** Writes {@code count} orders to the topic and waits until every one is acknowledged. */
    static void produce(Map<String, Object> clientConfig, int count) {
        Map<String, Object> config = new java.util.HashMap<>(clientConfig);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            Future<RecordMetadata> last = null;
            for (int i = 0; i < count; i++) {
                Order o = order(i, count);
                last = producer.send(new ProducerRecord<>(TOPIC, null, o.time().toEpochMilli(), o.key(), o.json()));
            }
            producer.flush();
            if (last != null) {
                last.get();
            }
        } catch (ExecutionException e) {
            throw new CliFailure("writing the demo orders failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure("interrupted while writing the demo orders", e);
        }
    }
}
