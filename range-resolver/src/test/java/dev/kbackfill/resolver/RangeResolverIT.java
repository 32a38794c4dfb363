package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The resolver against a real single-node KRaft broker (shared by every test class in this JVM). */
@Tag("kafka")
class RangeResolverIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    private static EmbeddedKafka kafka;
    private static Admin admin;
    private static KafkaOffsetSource source;
    private static RangeResolver resolver;

    @BeforeAll
    static void startBroker() {
        kafka = SharedKafka.get();
        admin = kafka.admin();
        source = KafkaOffsetSource.create(kafka.clientConfig());
        resolver = new RangeResolver(source);
    }

    @AfterAll
    static void closeClients() {
        source.close();
        admin.close();
    }

    private static Instant minute(int m) {
        return T0.plusSeconds(60L * m);
    }

    private static KafkaProducer<String, String> producer(Map<String, Object> extra) {
        Map<String, Object> config = kafka.clientConfig();
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.putAll(extra);
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    private static void produce(String topic, int partition, Instant... timestamps) throws Exception {
        try (KafkaProducer<String, String> p = producer(Map.of())) {
            for (Instant t : timestamps) {
                p.send(new ProducerRecord<>(topic, partition, t.toEpochMilli(), "k", "v@" + t)).get();
            }
        }
    }

    private static Plan plan(String topic, String from, String to) {
        return resolver.resolve(BackfillRequest.builder(topic).from(from).to(to).build());
    }

    private static long adminOffset(String topic, int partition, OffsetSpec spec, IsolationLevel level) throws Exception {
        TopicPartition tp = new TopicPartition(topic, partition);
        return admin.listOffsets(Map.of(tp, spec), new ListOffsetsOptions(level)).partitionResult(tp).get().offset();
    }

    @Test
    void offsetsMatchAdminListOffsetsForTimesAndSentinels() throws Exception {
        kafka.createTopic("rr-match", 3, Map.of());
        for (int p = 0; p < 3; p++) {
            produce("rr-match", p, minute(0), minute(10 + p), minute(20), minute(30 + p), minute(40));
        }
        Plan plan = plan("rr-match", "2024-01-01T00:15Z", "2024-01-01T00:31Z");
        for (PartitionRange r : plan.partitions()) {
            assertThat(r.start()).isEqualTo(adminOffset("rr-match", r.partition(),
                    OffsetSpec.forTimestamp(minute(15).toEpochMilli()), IsolationLevel.READ_COMMITTED));
            assertThat(r.end()).isEqualTo(adminOffset("rr-match", r.partition(),
                    OffsetSpec.forTimestamp(minute(31).toEpochMilli()), IsolationLevel.READ_COMMITTED));
        }
        assertThat(plan.partitions()).extracting(PartitionRange::start).containsExactly(2L, 2L, 2L);
        assertThat(plan.partitions()).extracting(PartitionRange::end).containsExactly(4L, 3L, 3L);
        assertThat(plan.partition(0).orElseThrow().startTime()).contains(minute(20));

        Plan all = plan("rr-match", "earliest", "latest");
        for (PartitionRange r : all.partitions()) {
            assertThat(r.start()).isEqualTo(adminOffset("rr-match", r.partition(), OffsetSpec.earliest(),
                    IsolationLevel.READ_COMMITTED));
            assertThat(r.end()).isEqualTo(adminOffset("rr-match", r.partition(), OffsetSpec.latest(),
                    IsolationLevel.READ_COMMITTED));
        }
        assertThat(all.clusterId()).isEqualTo(admin.describeCluster().clusterId().get());
        assertThat(all.topicId()).isEqualTo(admin.describeTopics(List.of("rr-match")).allTopicNames().get()
                .get("rr-match").topicId().toString());
    }

    @Test
    void aTimestampAfterTheLastRecordEndsAtTheEndOffsetWithANote() throws Exception {
        kafka.createTopic("rr-after-last", 1, Map.of());
        produce("rr-after-last", 0, minute(0), minute(1), minute(2));
        PartitionRange to = plan("rr-after-last", "earliest", "2024-06-01").partition(0).orElseThrow();
        assertThat(to.end()).isEqualTo(3);
        assertThat(to.notes()).extracting(Note::kind).containsExactly(Note.Kind.NO_RECORD_AT_OR_AFTER_TO);
        PartitionRange from = plan("rr-after-last", "2024-06-01", "latest").partition(0).orElseThrow();
        assertThat(from.start()).isEqualTo(3);
        assertThat(from.isEmpty()).isTrue();
        assertThat(from.notes()).extracting(Note::kind).containsExactly(Note.Kind.NO_RECORD_AT_OR_AFTER_FROM);
    }

    @Test
    void outOfOrderCreateTimeResolvesToTheFirstOffsetAtOrAfterTheTime() throws Exception {
        kafka.createTopic("rr-out-of-order", 1, Map.of());
        produce("rr-out-of-order", 0, minute(10), minute(30), minute(20), minute(40), minute(25));
        Plan plan = plan("rr-out-of-order", "2024-01-01T00:15Z", "2024-01-01T00:35Z");
        PartitionRange r = plan.partition(0).orElseThrow();
        assertThat(r.start()).isEqualTo(1); // 00:30 is the first record at or after 00:15
        assertThat(r.end()).isEqualTo(3);   // 00:40 is the first at or after 00:35; 00:25 at offset 4 lies outside
        assertThat(plan.notes()).extracting(Note::kind).containsExactly(Note.Kind.CREATE_TIME);
    }

    @Test
    void anEmptyPartitionIsAnEmptyRangeWithANote() throws Exception {
        kafka.createTopic("rr-empty", 2, Map.of());
        produce("rr-empty", 0, minute(0));
        Plan plan = plan("rr-empty", "2024-01-01", "2024-01-02");
        PartitionRange empty = plan.partition(1).orElseThrow();
        assertThat(empty.start()).isZero();
        assertThat(empty.end()).isZero();
        assertThat(empty.notes()).extracting(Note::kind).containsExactly(Note.Kind.EMPTY_PARTITION);
    }

    @Test
    void transactionsEndAtTheLastStableOffsetUnderReadCommitted() throws Exception {
        kafka.createTopic("rr-tx", 1, Map.of());
        try (KafkaProducer<String, String> tx = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rr-tx-1"))) {
            tx.initTransactions();
            for (boolean commit : new boolean[] {true, false, true}) {
                tx.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    tx.send(new ProducerRecord<>("rr-tx", 0, minute(i).toEpochMilli(), "k", "v"));
                }
                tx.flush(); // an abort drops unsent records: flush so the aborted ones occupy offsets
                if (commit) {
                    tx.commitTransaction();
                } else {
                    tx.abortTransaction();
                }
            }
        }
        // 3 committed (0-2) + marker (3) + 3 aborted (4-6) + marker (7) + 3 committed (8-10) + marker (11)
        assertThat(plan("rr-tx", "earliest", "latest").partition(0).orElseThrow().end()).isEqualTo(12);

        try (KafkaProducer<String, String> open = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rr-tx-2"))) {
            open.initTransactions();
            open.beginTransaction();
            open.send(new ProducerRecord<>("rr-tx", 0, minute(5).toEpochMilli(), "k", "open")).get();
            open.send(new ProducerRecord<>("rr-tx", 0, minute(6).toEpochMilli(), "k", "open")).get();

            PartitionRange committed = plan("rr-tx", "earliest", "latest").partition(0).orElseThrow();
            assertThat(committed.end()).isEqualTo(12);
            assertThat(committed.end()).isEqualTo(adminOffset("rr-tx", 0, OffsetSpec.latest(),
                    IsolationLevel.READ_COMMITTED));
            assertThat(committed.notes()).extracting(Note::kind).containsExactly(Note.Kind.OPEN_TRANSACTION);
            assertThat(committed.notes().get(0).message()).contains("high watermark 14");

            PartitionRange uncommitted = resolver.resolve(BackfillRequest.builder("rr-tx").from("earliest")
                    .to("latest").isolationLevel(IsolationLevel.READ_UNCOMMITTED).build()).partition(0).orElseThrow();
            assertThat(uncommitted.end()).isEqualTo(14);
            assertThat(uncommitted.notes()).isEmpty();

            // The commit markers carry today's time, so ListOffsets answers the first marker (offset 3) for any
            // time after the records' 2024 times; the range must not stop there. The records at or after 00:05:30
            // sit in the open transaction, which read_committed cannot see: the range runs to the LSO.
            PartitionRange byTime = plan("rr-tx", "earliest", "2024-01-01T00:05:30Z").partition(0).orElseThrow();
            assertThat(adminOffset("rr-tx", 0, OffsetSpec.forTimestamp(minute(5).toEpochMilli() + 30_000),
                    IsolationLevel.READ_COMMITTED)).isEqualTo(3);
            assertThat(byTime.end()).isEqualTo(12);
            assertThat(byTime.notes()).extracting(Note::kind).containsExactly(Note.Kind.TIME_LOOKUP_HIT_INVISIBLE,
                    Note.Kind.NO_RECORD_AT_OR_AFTER_TO, Note.Kind.OPEN_TRANSACTION);
            // Between the transactions' records: the first committed record at or after 00:01 is offset 1, and at
            // or after 00:02:30 there is none (the aborted ones do not count).
            PartitionRange inside = plan("rr-tx", "2024-01-01T00:01Z", "2024-01-01T00:02:30Z").partition(0).orElseThrow();
            assertThat(inside.start()).isEqualTo(1);
            assertThat(inside.end()).isEqualTo(12);
            open.abortTransaction();
        }
    }

    @Test
    void aStartBelowTheTruncatedLogStartIsDataLoss() throws Exception {
        kafka.createTopic("rr-truncated", 1, Map.of());
        produce("rr-truncated", 0, minute(0), minute(1), minute(2), minute(3), minute(4), minute(5));
        TopicPartition tp = new TopicPartition("rr-truncated", 0);
        admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).all().get(30, TimeUnit.SECONDS);

        assertThatThrownBy(() -> plan("rr-truncated", "offset:1", "latest"))
                .isInstanceOf(DataLossException.class)
                .hasMessageContaining("partition 0: from bound offset 1 is below the log start offset 4");
        Plan allowed = resolver.resolve(BackfillRequest.builder("rr-truncated").from("offset:1").to("latest")
                .allowDataLoss(true).build());
        assertThat(allowed.partition(0).orElseThrow().start()).isEqualTo(4);
        assertThat(allowed.partition(0).orElseThrow().notes()).extracting(Note::kind)
                .containsExactly(Note.Kind.START_LOST_TO_RETENTION);

        PartitionRange byTime = plan("rr-truncated", "2024-01-01", "latest").partition(0).orElseThrow();
        assertThat(byTime.start()).isEqualTo(4);
        assertThat(byTime.startTime()).contains(minute(4));
        assertThat(byTime.notes()).extracting(Note::kind).containsExactly(Note.Kind.RANGE_OLDER_THAN_RETAINED);
        assertThat(plan("rr-truncated", "earliest", "latest").partition(0).orElseThrow().start()).isEqualTo(4);
    }

    @Test
    void logAppendTimeTopicsResolveAgainstAppendTimesWithANote() throws Exception {
        kafka.createTopic("rr-append-time", 1, Map.of("message.timestamp.type", "LogAppendTime"));
        Instant before = Instant.now().minusSeconds(1);
        produce("rr-append-time", 0, minute(0), minute(1)); // producer times are replaced by the broker's
        Plan plan = plan("rr-append-time", before.toString(), "latest");
        PartitionRange r = plan.partition(0).orElseThrow();
        assertThat(r.start()).isZero();
        assertThat(r.end()).isEqualTo(2);
        assertThat(r.startTime().orElseThrow()).isAfter(before);
        assertThat(plan.timestampType()).isEqualTo(TopicInfo.TimestampType.LOG_APPEND_TIME);
        assertThat(plan.notes()).extracting(Note::kind).containsExactly(Note.Kind.LOG_APPEND_TIME);
        // by producer time there would be records here; by append time there are none
        assertThat(plan("rr-append-time", "2024-01-01", "2024-01-02").partition(0).orElseThrow().span()).isZero();
    }

    @Test
    void aRecreatedTopicHasANewTopicId() throws Exception {
        kafka.createTopic("rr-recreated", 1, Map.of());
        produce("rr-recreated", 0, minute(0), minute(1));
        Plan first = plan("rr-recreated", "earliest", "latest");
        kafka.deleteTopic("rr-recreated");
        kafka.createTopic("rr-recreated", 1, Map.of());
        Plan second = plan("rr-recreated", "earliest", "latest");
        assertThat(second.topicId()).isNotEqualTo(first.topicId());
        assertThat(first.partition(0).orElseThrow().end()).isEqualTo(2);
        assertThat(second.partition(0).orElseThrow().end()).isZero();
    }

    @Test
    void thePartitionFilterSelectsAndUnknownPartitionsAreInputErrors() throws Exception {
        kafka.createTopic("rr-filter", 4, Map.of());
        Plan plan = resolver.resolve(BackfillRequest.builder("rr-filter").from("earliest").to("latest")
                .partitions(PartitionFilter.parse("1,3")).build());
        assertThat(plan.partitions()).extracting(PartitionRange::partition).containsExactly(1, 3);
        assertThatThrownBy(() -> resolver.resolve(BackfillRequest.builder("rr-filter").from("earliest").to("latest")
                .partitions(new TreeSet<>(List.of(2, 9))).build()))
                .isInstanceOf(RequestException.class)
                .hasMessage("partition 9 does not exist in topic rr-filter (partitions 0-3)");
    }

    @Test
    void anUnknownTopicIsAnInputError() {
        assertThatThrownBy(() -> plan("rr-no-such-topic", "earliest", "latest"))
                .isInstanceOf(RequestException.class)
                .hasMessageStartingWith("topic 'rr-no-such-topic' does not exist on cluster ");
    }

    @Test
    void aCompactedTopicIsNotedWithItsTombstoneRetention() throws Exception {
        kafka.createTopic("rr-compacted", 1, Map.of("cleanup.policy", "compact", "delete.retention.ms", "3600000"));
        produce("rr-compacted", 0, minute(0));
        Plan plan = plan("rr-compacted", "2024-01-01", "latest");
        assertThat(plan.notes()).extracting(Note::kind).contains(Note.Kind.COMPACTED_TOPIC);
        assertThat(plan.notes().stream().filter(n -> n.kind() == Note.Kind.COMPACTED_TOPIC).findFirst()
                .orElseThrow().message()).contains("delete.retention.ms (PT1H)");
    }

    /**
     * The log time below a start, looked up on the broker (ListOffsets, checked by the group-less consumer, every
     * partition at its own time in one request), equals a scan of what a read_committed reader sees: timestamps
     * jumping back, committed and aborted transactions (markers stamped with the broker's clock, later than the
     * records' own times), several starts per partition.
     */
    @Test
    void theLogTimeBelowAStartIsTheHighestTimestampAReaderSeesBelowIt() throws Exception {
        String topic = "rr-log-times";
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        java.util.Random random = new java.util.Random(5);
        Map<Integer, java.util.List<long[]>> visible = new java.util.HashMap<>(); // per partition {offset, ts}
        try (KafkaProducer<String, String> tx = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rr-tx-log-times"))) {
            tx.initTransactions();
            for (int batch = 0; batch < 12; batch++) {
                tx.beginTransaction();
                java.util.List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> sent = new java.util.ArrayList<>();
                java.util.List<Long> stamps = new java.util.ArrayList<>();
                for (int i = 0; i < 15; i++) {
                    long ts = minute(batch * 10 + i).toEpochMilli() - (random.nextInt(3) == 0 ? random.nextInt(3_600_000) : 0);
                    stamps.add(ts);
                    sent.add(tx.send(new ProducerRecord<>(topic, random.nextInt(3), ts, "k", "v")));
                }
                tx.flush();
                boolean commit = batch % 4 != 3;
                if (commit) {
                    tx.commitTransaction();
                    for (int i = 0; i < sent.size(); i++) {
                        var m = sent.get(i).get();
                        visible.computeIfAbsent(m.partition(), q -> new java.util.ArrayList<>())
                                .add(new long[] {m.offset(), stamps.get(i)});
                    }
                } else {
                    tx.abortTransaction();
                }
            }
        }
        Map<Integer, Long> ends = source.endOffsets(topic, java.util.Set.of(0, 1, 2), IsolationLevel.READ_COMMITTED);
        for (int round = 0; round < 6; round++) {
            Map<Integer, Long> starts = new java.util.HashMap<>();
            for (int p = 0; p < 3; p++) {
                starts.put(p, (long) random.nextInt((int) (ends.get(p) + 1)));
            }
            Map<Integer, Long> expected = new java.util.HashMap<>();
            starts.forEach((p, st) -> visible.getOrDefault(p, java.util.List.of()).stream()
                    .filter(r -> r[0] < st).mapToLong(r -> r[1]).max().ifPresent(m -> expected.put(p, m)));
            LogTimes.Result found = LogTimes.lookUp(source, topic, starts, IsolationLevel.READ_COMMITTED);
            assertThat(found.bounded()).isEmpty();
            assertThat(found.times()).as("starts %s", starts).isEqualTo(expected);
        }
    }
}
