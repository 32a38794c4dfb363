package dev.kbackfill.core.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RangeResolver;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Verification folds a range to the same final state whatever its memory budget: seeded random records (repeated
 * keys, deletes, producer timestamps going backwards) over three partitions of a real topic, random sub-ranges of
 * them, a target that holds the model's final state with seeded corruptions of every kind, verified with budgets
 * from one key (every key spilled to disk) to all of them in memory: every key judged once, the classes exactly the
 * corruptions made. The model is computed apart from the run loop: per key, the newest record by the version rule.
 * The target is an in-memory lookup (the seam under test is the fold and the judgement, not a database).
 */
@Tag("kafka")
class VerificationPropertyIT {

    private static EmbeddedKafka kafka;

    @TempDir
    Path spill;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** A produced record with its coordinates and its log time. */
    record Rec(String key, String value, int partition, long offset, long timestamp, long logTime) {
        Version version(String topic) {
            return new Version(topic, partition, offset, timestamp, logTime);
        }
    }

    @Test
    void everyBudgetJudgesEveryKeyOnceIntoTheClassesOfTheCorruptions() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            check(seed);
        }
    }

    private void check(long seed) throws Exception {
        Random random = new Random(seed);
        String topic = "verify-property-" + seed;
        kafka.createTopic(topic, 3, Map.of("retention.ms", "-1"));
        int keys = 20 + random.nextInt(60);
        List<Rec> produced = produce(topic, random, keys, 300 + random.nextInt(500));
        Plan full;
        try (KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig())) {
            full = new RangeResolver(source).resolve(BackfillRequest.builder(topic).from("earliest").to("latest").build());
        }
        // a random sub-range of every partition
        List<PartitionRange> ranges = new ArrayList<>();
        for (PartitionRange r : full.partitions()) {
            long start = r.start() + (r.span() == 0 ? 0 : random.nextInt((int) (r.span() / 3) + 1));
            long end = r.end() - (r.end() - start == 0 ? 0 : random.nextInt((int) ((r.end() - start) / 3) + 1));
            ranges.add(new PartitionRange(r.partition(), start, end, r.logStart(), r.logEnd(), java.util.Optional.empty(),
                    List.of()));
        }
        Plan plan = new Plan(full.request(), full.resolvedAt(), full.fromTime(), full.toTime(), full.clusterId(),
                full.topicId(), full.timestampType(), ranges, List.of());
        Map<String, Rec> last = new HashMap<>();
        for (Rec r : produced) {
            PartitionRange range = plan.partition(r.partition()).orElseThrow();
            if (r.offset() >= range.start() && r.offset() < range.end()) {
                last.merge(r.key(), r, (a, b) -> Version.compare(b.version(topic), a.version(topic)) > 0 ? b : a);
            }
        }
        // the target: the model's final state, corrupted key by key
        Map<String, TargetRow> target = new HashMap<>();
        Map<Verdict, Long> corrupted = new EnumMap<>(Verdict.class);
        long readBack = 0; // rows whose newer version names a record of their key: looked up again against it
        for (Rec r : last.values()) {
            Version v = r.version(topic);
            Version older = new Version(topic, r.partition(), r.offset() - 1, r.timestamp(), r.logTime());
            Version newer = new Version(topic, r.partition(), r.offset() + 1_000, r.timestamp(), r.logTime());
            int dice = random.nextInt(10);
            Verdict made;
            if (r.value() == null) {
                made = dice == 0 ? Verdict.EXTRA : Verdict.MATCHING;
                if (made == Verdict.EXTRA) {
                    target.put(r.key(), TargetRow.live(older, Map.of("n", 1L), List.of()));
                } else if (dice < 5) {
                    target.put(r.key(), TargetRow.deleted(v)); // a ledger entry, or nothing at all
                }
            } else {
                // a later record of the key in the log, after the range: what a later run would have written
                Rec later = produced.stream().filter(x -> x.key().equals(r.key()) && x.value() != null
                        && x.offset() >= plan.partition(x.partition()).orElseThrow().end()
                        && Version.compare(x.version(topic), v) > 0).findFirst().orElse(null);
                long n = Long.parseLong(r.value().replaceAll("\\D", ""));
                switch (dice) {
                    case 0 -> made = Verdict.MISSING;
                    case 1 -> {
                        made = Verdict.STALE;
                        target.put(r.key(), TargetRow.live(older, Map.of("n", n), List.of()));
                    }
                    case 2 -> {
                        made = Verdict.DIFFERENT;
                        target.put(r.key(), TargetRow.live(v, Map.of("n", n + 1), List.of()));
                    }
                    case 3, 4 -> {
                        if (later == null) {
                            // a version raised by hand past the log's end: no record bears it out
                            made = Verdict.DIFFERENT;
                            target.put(r.key(), TargetRow.live(newer, Map.of("n", n + 1), List.of()));
                        } else {
                            // the later record's version: held exactly (newer), or with a cell changed (different)
                            long ln = Long.parseLong(later.value().replaceAll("\\D", ""));
                            made = dice == 3 ? Verdict.NEWER : Verdict.DIFFERENT;
                            target.put(r.key(), TargetRow.live(later.version(topic),
                                    Map.of("n", dice == 3 ? ln : ln + 1), List.of()));
                            readBack++;
                        }
                    }
                    default -> {
                        made = Verdict.MATCHING;
                        target.put(r.key(), TargetRow.live(v, Map.of("n", n), List.of()));
                    }
                }
            }
            corrupted.merge(made, 1L, Long::sum);
        }
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        // budgets of keys, from one to all of them, and of bytes (about ten keys' worth)
        long[][] budgets = {{1, Long.MAX_VALUE}, {2, Long.MAX_VALUE}, {7, Long.MAX_VALUE}, {50, Long.MAX_VALUE},
                {1_000_000, Long.MAX_VALUE}, {Long.MAX_VALUE, 6_500}};
        for (long[] b : budgets) {
            long budget = b[0] == Long.MAX_VALUE ? 10 : b[0];
          for (boolean streamed : new boolean[] {false, true}) {
            Verification verification = new Verification(kafka.clientConfig(), decoder, TombstoneMode.DELETE,
                    ConflictMode.NEWER_WINS, false, new Verification.Options(3, b[0], b[1], spill));
            InMemoryTarget lookup = new InMemoryTarget(target, streamed);
            VerifyReport report = verification.verify(plan, lookup);
            assertThat(report.keys()).as("seed %d budget %d", seed, budget).isEqualTo(last.size());
            assertThat(lookup.asked).as("every key asked once, a newer row again against its record")
                    .isEqualTo(last.size() + readBack);
            for (Verdict v : Verdict.values()) {
                assertThat(report.count(v)).as("seed %d budget %d %s", seed, budget, v)
                        .isEqualTo(corrupted.getOrDefault(v, 0L));
            }
            assertThat(report.spilled()).isEqualTo(budget < last.size());
            assertThat(report.read()).isEqualTo(plan.totalSpan());
            report.samples().forEach((v, list) -> assertThat(list).hasSizeLessThanOrEqualTo(3));
            // read in one pass where the keys went to disk: only the rows the Bloom filter lets through move
            assertThat(lookup.streams).isEqualTo(streamed && budget < last.size() ? 1 : 0);
          }
        }
    }

    /**
     * The target's rows by key, with the fields whose value differs from the expected change's; where it streams,
     * a bucket is judged only from the rows streamed into it (a row put in another bucket is not found).
     */
    private static final class InMemoryTarget implements TargetLookup {
        final Map<String, TargetRow> rows;
        final boolean streamed;
        long asked;
        int streams;

        InMemoryTarget(Map<String, TargetRow> rows, boolean streamed) {
            this.rows = rows;
            this.streamed = streamed;
        }

        @Override
        public java.util.Optional<Scan> scan(List<String> keyFields) {
            if (!streamed) {
                return java.util.Optional.empty();
            }
            assertThat(keyFields).containsExactly("kafka_key");
            return java.util.Optional.of(new Scan() {
                @Override
                public String joinKey(Change c) {
                    return (String) c.key().get("kafka_key");
                }

                @Override
                public void rows(java.util.function.Predicate<String> wanted,
                                 java.util.function.BiConsumer<String, byte[]> out) {
                    streams++;
                    rows.keySet().stream().filter(wanted).forEach(k -> out.accept(k, k.getBytes(StandardCharsets.UTF_8)));
                }

                @Override
                public Map<KeyIdentity, TargetRow> judge(List<Change> expected, Map<String, List<byte[]>> streamedRows,
                                                         String topic,
                                                         java.util.function.Function<Change, Map<String, Object>> values) {
                    List<Change> present = expected.stream().filter(c -> streamedRows.containsKey(joinKey(c))).toList();
                    asked += expected.size() - present.size();
                    return lookup(present, topic, values);
                }
            });
        }

        @Override
        public Map<KeyIdentity, TargetRow> lookup(List<Change> expected, String topic,
                                                  java.util.function.Function<Change, Map<String, Object>> values) {
            Map<KeyIdentity, TargetRow> found = new HashMap<>();
            for (Change c : expected) {
                asked++;
                TargetRow row = rows.get((String) c.key().get("kafka_key"));
                if (row != null) {
                    found.put(KeyIdentity.of(c.key()), row.live() ? TargetRow.live(row.version(),
                            Verification.version(c, topic), row.values(), Values.differing(values.apply(c), row.values()))
                            : row);
                }
            }
            return found;
        }

        @Override
        public long rowsRead() {
            return rows.size();
        }

        @Override
        public int keysPerLookup() {
            return 13;
        }
    }

    /** Records over {@code keys} keys, a tenth of them deletes, timestamps stepping back one time in four. */
    private static List<Rec> produce(String topic, Random random, int keys, int count) throws Exception {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        long[] clock = {1_700_000_000_000L, 1_700_000_000_000L, 1_700_000_000_000L};
        for (int i = 0; i < count; i++) {
            int p = random.nextInt(3);
            clock[p] += random.nextInt(4) == 0 ? -random.nextInt(5_000) : random.nextInt(3_000);
            String key = "k" + random.nextInt(keys);
            String value = random.nextInt(10) == 0 ? null : "{\"n\":" + i + "}";
            records.add(new ProducerRecord<>(topic, p, clock[p], key.getBytes(StandardCharsets.UTF_8),
                    value == null ? null : value.getBytes(StandardCharsets.UTF_8)));
        }
        List<Rec> produced = new ArrayList<>();
        Map<Integer, Long> logTime = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(kafka.clientConfig(), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
            records.forEach(r -> sent.add(producer.send(r)));
            producer.flush();
            for (int i = 0; i < records.size(); i++) {
                RecordMetadata m = sent.get(i).get();
                ProducerRecord<byte[], byte[]> r = records.get(i);
                long lt = Math.max(logTime.getOrDefault(m.partition(), Long.MIN_VALUE), r.timestamp());
                logTime.put(m.partition(), lt);
                produced.add(new Rec(new String(r.key(), StandardCharsets.UTF_8),
                        r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8), m.partition(),
                        m.offset(), r.timestamp(), lt));
            }
        }
        return produced;
    }
}
