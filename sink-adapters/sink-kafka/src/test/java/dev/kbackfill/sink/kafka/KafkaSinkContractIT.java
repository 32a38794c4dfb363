package dev.kbackfill.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The sink contract on a compacted topic of a real broker, read back by a plain read_committed consumer: the last
 * record of each key, a tombstone removing it. A topic has no soft deletes, takes any bytes, and fences a first run
 * rather than refusing a second, so those cases do not apply.
 */
@Tag("kafka")
class KafkaSinkContractIT extends SinkContract {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger TARGETS = new AtomicInteger();
    private static EmbeddedKafka kafka;

    private final String target = "contract-target-" + TARGETS.incrementAndGet();

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
        try {
            kafka.createTopic(TOPIC, 2, Map.of());
        } catch (RuntimeException alreadyThere) {
            // another class of this JVM made it
        }
    }

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        return new SinkSettings("kafka:" + target, target, Optional.empty(), Optional.empty(),
                conflict, tombstone, create, false, SinkSettings.MetadataColumns.DEFAULT, Map.of(),
                new SinkSettings.Source(TOPIC, kafka.clientConfig()));
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    /** Each run opens a transactional producer and indexes the topic: a second each. */
    @Override
    protected int liveWriterRounds() {
        return 1;
    }

    @Override
    protected boolean foreignRowsHoldTheirField() {
        return false;
    }

    /** Another producer of the target topic: records without kbackfill's headers. */
    @Override
    protected Optional<ForeignWriter> foreignWriter(boolean keepOurColumns) {
        if (keepOurColumns) {
            return Optional.empty(); // a record is written whole
        }
        Map<String, Object> config = new HashMap<>(kafka.clientConfig());
        org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> producer =
                new org.apache.kafka.clients.producer.KafkaProducer<>(config,
                        new org.apache.kafka.common.serialization.ByteArraySerializer(),
                        new org.apache.kafka.common.serialization.ByteArraySerializer());
        return Optional.of(new ForeignWriter() {
            @Override
            public void write(String key, Map<String, Object> values) {
                byte[] value = null;
                if (values != null) {
                    ObjectNode json = JSON.createObjectNode();
                    values.forEach((k, v) -> json.put(k, v == null ? null : v.toString()));
                    value = json.toString().getBytes(StandardCharsets.UTF_8);
                }
                try {
                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(target,
                            key.getBytes(StandardCharsets.UTF_8), value)).get();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public void close() {
                producer.close();
            }
        });
    }

    @Override
    protected boolean softDeletes() {
        return false;
    }

    @Override
    protected boolean refusesSecondRun() {
        return false;
    }

    @Override
    protected Optional<Map<String, Object>> unwritableValues() {
        return Optional.empty();
    }

    /** The Kafka sink copies records: the change carries its raw record, the value as JSON. */
    /**
     * A run is opened (its target indexed) before it takes the job's lock, and a run of the job still going then
     * commits a batch before the lock fences it: the first write reads that batch into the index, so an older record
     * of its key is kept out. Indexed at opening only, the older record replaced the newer one.
     */
    @org.junit.jupiter.api.Test
    void aBatchAnotherRunCommitsBetweenThisRunsOpeningAndItsLockIsSeenByTheVersionRule() throws Exception {
        java.time.Instant t0 = java.time.Instant.parse("2024-01-01T00:00:00Z");
        Sink next = null;
        try (Opened first = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            first.write(batch(1, Map.of(0, 1L), rowFrom(TOPIC, "k", "first", "1", 0, 0, t0)));
            next = newSink(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
            next.open();
            // the first run goes on: k from partition 1, newer than anything partition 0 holds before offset 9
            first.write(batch(2, Map.of(0, 1L, 1, 1L), rowFrom(TOPIC, "k", "newer", "2", 1, 0, t0.plusSeconds(10))));
        }
        try (Sink s = next; AutoCloseable lock = s.jobStore().lock(job)) {
            assertThat(s.jobStore().load(job)).as("the job, resumed as the protocol does under the lock").isPresent();
            WriteResult r = s.write(batch(3, Map.of(0, 6L, 1, 1L),
                    rowFrom(TOPIC, "k", "older", "3", 0, 5, t0.plusSeconds(5))));
            assertThat(r.upserted()).isZero();
            assertThat(r.keptOut()).isEqualTo(Map.of(0, 1L));
        }
        assertThat(rows()).containsExactly("k=newer/2@1:0");
    }

    /** A topic keys its records by their key bytes: a key's fields in another order are another key. */
    @Override
    protected boolean keysByFields() {
        return false;
    }

    @Override
    protected Change change(String topic, String key, Map<String, Object> values, int partition, long offset,
                            long timestamp) {
        byte[] value = null;
        if (values != null) {
            ObjectNode json = JSON.createObjectNode();
            values.forEach((k, v) -> {
                if (v instanceof BigDecimal d) {
                    json.put(k, d);
                } else {
                    json.put(k, v == null ? null : v.toString());
                }
            });
            value = json.toString().getBytes(StandardCharsets.UTF_8);
        }
        SourceRecord raw = new SourceRecord(topic, partition, offset, timestamp, key.getBytes(StandardCharsets.UTF_8),
                value, new RecordHeaders());
        return new Change(Map.of("kafka_key", key), values, partition, offset, timestamp, raw);
    }

    @Override
    protected List<String> rows() throws Exception {
        Map<String, Object> config = new HashMap<>(kafka.clientConfig());
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, String> last = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(target).stream()
                    .map(p -> new TopicPartition(target, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // the high watermark, not the read_committed end: a commit returns before its markers are written, so
            // the last stable offset may still lag; read until it has passed everything written
            Map<TopicPartition, Long> ends = highWatermarks(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read " + target + " to its end");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    String key = new String(r.key(), StandardCharsets.UTF_8);
                    if (r.value() == null) {
                        last.remove(key);
                        continue;
                    }
                    JsonNode v = JSON.readTree(r.value());
                    String amount = v.path("amount").isNull() || v.path("amount").isMissingNode() ? null
                            : v.path("amount").decimalValue().stripTrailingZeros().toPlainString();
                    String status = v.path("status").isNull() ? null : v.path("status").asText();
                    last.put(key, key + "=" + status + "/" + amount + "@" + header(r, TargetIndex.SOURCE_PARTITION)
                            + ":" + header(r, TargetIndex.SOURCE_OFFSET));
                }
            }
        }
        return new ArrayList<>(last.values());
    }

    /**
     * What a transaction that failed for no stated reason asks before calling it a job conflict (Kafka 4.4 can answer
     * a producer it is fencing with an unexpected error): did another run commit the job's record since this sink
     * last read or wrote it? Not for its own record, not while the run that fenced it has committed nothing, and yes
     * once that run began.
     */
    @org.junit.jupiter.api.Test
    void aTakeOverIsAnotherRunsCommittedRecordNeitherThisOnesNorAFenceAlone() throws Exception {
        try (Opened first = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            JobTopic mine = (JobTopic) first.sink.jobStore();
            assertThat(mine.takenOver(job, Duration.ZERO)).as("its own record").isFalse();
            try (Opened second = open(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true)) { // fences the first
                assertThat(second.sink.jobStore().load(job)).isPresent();
                assertThat(mine.takenOver(job, Duration.ofMillis(500))).as("fenced, nothing committed yet").isFalse();
                second.sink.jobStore().begin(dev.kbackfill.core.sink.JobState.begin(job, "fingerprint", 2, plan()));
                assertThat(mine.takenOver(job, Duration.ofSeconds(10))).isTrue();
            }
        }
    }

    private static Map<TopicPartition, Long> highWatermarks(List<TopicPartition> partitions) throws Exception {
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
        partitions.forEach(tp -> latest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()));
        Map<TopicPartition, Long> ends = new HashMap<>();
        try (org.apache.kafka.clients.admin.Admin admin = kafka.admin()) {
            admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                    org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)).all().get()
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
        }
        return ends;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? "?" : new String(h.value(), StandardCharsets.UTF_8);
    }
}
