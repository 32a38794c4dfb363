package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --sink kafka:TOPIC}: exactly-once replay into a compacted topic of the same cluster. */
@Tag("kafka")
class KafkaSinkIT {

    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private static CliRun run(String... args) {
        return CliRun.run(kafka, args);
    }

    /** Every record of a topic under read_committed. */
    static List<ConsumerRecord<byte[], byte[]>> readCommitted(String topic) {
        Map<String, Object> c = dev.kbackfill.embedded.SharedKafka.get().clientConfig(); // the one broker of every suite
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> tps = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            // to the high watermarks: a commit returns before its markers are written, so the last stable offset
            // (what endOffsets gives a read_committed consumer) may lag for a moment and would end the read early
            Map<TopicPartition, Long> ends = new java.util.HashMap<>();
            Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new java.util.HashMap<>();
            tps.forEach(tp -> latest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()));
            try (Admin admin = dev.kbackfill.embedded.SharedKafka.get().admin()) {
                admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                        org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)).all().get()
                        .forEach((tp, info) -> ends.put(tp, info.offset()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    /** The latest value of each key, as a compacted topic's reader ends up with it (tombstones remove the key). */
    static Map<String, String> latest(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<String, String> latest = new TreeMap<>();
        records.stream().sorted((a, b) -> Long.compare(a.offset(), b.offset())).forEach(r -> {
            String k = new String(r.key(), StandardCharsets.UTF_8);
            if (r.value() == null) {
                latest.remove(k);
            } else {
                latest.put(k, new String(r.value(), StandardCharsets.UTF_8));
            }
        });
        return latest;
    }

    private static Map<String, String> expectedLatest(List<Orders.Produced> produced) {
        Map<String, Orders.Produced> last = new TreeMap<>();
        produced.forEach(p -> last.merge(p.key(), p, (a, b) -> b.offset() > a.offset() ? b : a));
        Map<String, String> e = new TreeMap<>();
        last.forEach((k, p) -> {
            if (p.value() != null) {
                e.put(k, p.value());
            }
        });
        return e;
    }

    @Test
    void theTargetHoldsExactlyTheLatestValuePerKeyWithSourceHeaders() throws Exception {
        kafka.createTopic("ks-source", 3, Map.of());
        List<Orders.Produced> produced = Orders.produce(kafka, "ks-source", 30, 4);
        CliRun r = run("--topic", "ks-source", "--from", "earliest", "--to", "latest", "--sink", "kafka:ks-target",
                "--create-topic", "--job", "ks");
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<ConsumerRecord<byte[], byte[]>> target = readCommitted("ks-target");
        assertThat(latest(target)).isEqualTo(expectedLatest(produced));
        ConsumerRecord<byte[], byte[]> one = target.get(0);
        assertThat(new String(one.headers().lastHeader("kbackfill.source.topic").value(), StandardCharsets.UTF_8))
                .isEqualTo("ks-source");
        try (Admin admin = kafka.admin()) {
            var config = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, "ks-target"))).all()
                    .get().values().iterator().next();
            assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
            assertThat(admin.describeTopics(List.of("ks-target")).allTopicNames().get().get("ks-target").partitions())
                    .hasSize(3);
            // progress in the backfill's own group, at the end of every partition
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("kbackfill-ks")
                    .partitionsToOffsetAndMetadata().get();
            assertThat(offsets).hasSize(3);
        }
        CliRun again = run("--topic", "ks-source", "--from", "earliest", "--to", "latest", "--sink", "kafka:ks-target",
                "--job", "ks");
        assertThat(again.exitCode()).isZero();
        assertThat(again.err()).contains("starting job ks (run 2, the previous run being complete)");
        assertThat(latest(readCommitted("ks-target"))).isEqualTo(expectedLatest(produced));
        CliRun status = CliRun.of("status", "--job", "ks", "--sink", "kafka:ks-target", "--bootstrap-server",
                kafka.bootstrapServers());
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).contains("job ks run 2: complete");

        // the cluster's job topic holds every target topic's jobs: jobs lists the named target's, --all the rest
        CliRun mine = CliRun.of("jobs", "--sink", "kafka:ks-target", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(mine.exitCode()).as(mine.err()).isZero();
        assertThat(mine.out()).containsPattern("(?m)^ks +2 +complete");
        CliRun other = CliRun.of("jobs", "--sink", "kafka:ks-elsewhere", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(other.exitCode()).as(other.err()).isZero();
        assertThat(other.out()).doesNotContainPattern("(?m)^ks ");
        CliRun all = CliRun.of("jobs", "--sink", "kafka:ks-elsewhere", "--bootstrap-server", kafka.bootstrapServers(),
                "--all");
        assertThat(all.out()).containsPattern("(?m)^ks +2 +complete");
    }

    @Test
    void newerWinsKeepsANewerValueAlreadyInTheTarget() throws Exception {
        kafka.createTopic("ks-newer-source", 1, Map.of());
        kafka.createTopic("ks-newer-target", 1, Map.of("cleanup.policy", "compact"));
        Orders.produce(kafka, "ks-newer-source", 5, 2);
        // the live pipeline already applied a newer record of k00001, long after the records being replayed: in the
        // source log after the range, and in the target, without kbackfill's headers
        for (String topic : List.of("ks-newer-source", "ks-newer-target")) {
            Orders.send(kafka, List.of(new ProducerRecord<>(topic, null, Orders.T0.plusSeconds(86_400).toEpochMilli(),
                    "k00001".getBytes(StandardCharsets.UTF_8), "live".getBytes(StandardCharsets.UTF_8))), Map.of());
        }
        CliRun r = run("--topic", "ks-newer-source", "--from", "earliest", "--to", "2024-01-01T12:00:00Z", "--sink",
                "kafka:ks-newer-target");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).contains("note: indexed the 1 keys of topic ks-newer-target")
                .doesNotContain("warning: indexed");
        Map<String, String> latest = latest(readCommitted("ks-newer-target"));
        assertThat(latest).containsEntry("k00001", "live").hasSize(5);
        assertThat(latest.get("k00002")).contains("\"status\":\"s1\"");
        // overwrite replaces it
        assertThat(run("--topic", "ks-newer-source", "--from", "earliest", "--to", "2024-01-01T12:00:00Z", "--sink",
                "kafka:ks-newer-target", "--on-conflict", "overwrite", "--job", "ow").exitCode()).isZero();
        assertThat(latest(readCommitted("ks-newer-target")).get("k00001")).contains("\"status\":\"s1\"");
    }

    @Test
    void newerWinsHoldsWhenTheTargetIndexMovesToDisk() throws Exception {
        kafka.createTopic("ks-disk-source", 2, Map.of());
        kafka.createTopic("ks-disk-target", 2, Map.of("cleanup.policy", "compact"));
        List<Orders.Produced> produced = Orders.produce(kafka, "ks-disk-source", 40, 2);
        // the live pipeline already applied newer records of three keys and a delete of a fourth, after the replayed
        // records: in the source log after the range, and in the target without kbackfill's headers
        long later = Orders.T0.plusSeconds(86_400).toEpochMilli();
        for (String topic : List.of("ks-disk-source", "ks-disk-target")) {
            Orders.send(kafka, List.of(
                    new ProducerRecord<>(topic, null, later, "k00001".getBytes(StandardCharsets.UTF_8),
                            "live".getBytes(StandardCharsets.UTF_8)),
                    new ProducerRecord<>(topic, null, later, "k00017".getBytes(StandardCharsets.UTF_8),
                            "live".getBytes(StandardCharsets.UTF_8)),
                    new ProducerRecord<>(topic, null, later, "k00033".getBytes(StandardCharsets.UTF_8),
                            "live".getBytes(StandardCharsets.UTF_8)),
                    new ProducerRecord<byte[], byte[]>(topic, null, later,
                            "k00020".getBytes(StandardCharsets.UTF_8), null)), Map.of());
        }
        System.setProperty("kbackfill.kafkaSink.indexMemoryKeys", "2");
        CliRun r;
        try {
            r = run("--topic", "ks-disk-source", "--from", "earliest", "--to", "2024-01-01T12:00:00Z", "--sink",
                    "kafka:ks-disk-target");
        } finally {
            System.clearProperty("kbackfill.kafkaSink.indexMemoryKeys");
        }
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).contains("note: indexed the 4 records of topic ks-disk-target").contains("on disk in ");
        Map<String, String> expected = expectedLatest(produced);
        expected.put("k00001", "live");
        expected.put("k00017", "live");
        expected.put("k00033", "live");
        expected.remove("k00020");
        assertThat(latest(readCommitted("ks-disk-target"))).isEqualTo(expected);
        try (var leftovers = java.nio.file.Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            assertThat(leftovers.map(p -> p.getFileName().toString())).as("the on-disk index is deleted")
                    .noneMatch(n -> n.startsWith("kbackfill-index-"));
        }
    }

    @Test
    void tombstonesPassThroughOrAreDropped() throws Exception {
        kafka.createTopic("ks-tomb-source", 1, Map.of());
        Orders.produce(kafka, "ks-tomb-source", 3, 1);
        Orders.send(kafka, List.of(new ProducerRecord<byte[], byte[]>("ks-tomb-source", null, Orders.T0.toEpochMilli(),
                "k00001".getBytes(StandardCharsets.UTF_8), (byte[]) null)), Map.of());
        assertThat(run("--topic", "ks-tomb-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-tomb-delete", "--create-topic").exitCode()).isZero();
        assertThat(latest(readCommitted("ks-tomb-delete"))).containsOnlyKeys("k00000", "k00002");
        assertThat(run("--topic", "ks-tomb-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-tomb-ignore", "--create-topic", "--on-tombstone", "ignore").exitCode()).isZero();
        assertThat(latest(readCommitted("ks-tomb-ignore"))).containsOnlyKeys("k00000", "k00001", "k00002");
    }

    @Test
    void targetChecksExplainThemselves() throws Exception {
        kafka.createTopic("ks-check-source", 2, Map.of());
        Orders.produce(kafka, "ks-check-source", 2, 1);
        CliRun missing = run("--topic", "ks-check-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-check-missing");
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(missing.err()).contains("topic ks-check-missing does not exist").contains("--create-topic");
        kafka.createTopic("ks-check-plain", 3, Map.of());
        CliRun plain = run("--topic", "ks-check-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-check-plain");
        assertThat(plain.exitCode()).as(plain.err()).isZero();
        assertThat(plain.err()).contains("warning: topic ks-check-plain has cleanup.policy=delete, not compact")
                .contains("warning: topic ks-check-plain has 3 partitions and the source 2");
        CliRun soft = run("--topic", "ks-check-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-check-plain", "--on-tombstone", "soft-delete");
        assertThat(soft.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        CliRun self = run("--topic", "ks-check-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-check-source");
        assertThat(self.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(self.err()).contains("it is the source topic");
    }

    @Test
    void aLiveGroupIsUntouched() throws Exception {
        kafka.createTopic("ks-live-source", 1, Map.of());
        Orders.produce(kafka, "ks-live-source", 4, 2);
        Map<String, Object> c = kafka.clientConfig();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "ks-live-app");
        try (KafkaConsumer<byte[], byte[]> live = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            live.commitSync(Map.of(new TopicPartition("ks-live-source", 0), new OffsetAndMetadata(3)));
        }
        try (Admin admin = kafka.admin()) {
            var before = admin.listConsumerGroupOffsets("ks-live-app").partitionsToOffsetAndMetadata().get();
            assertThat(run("--topic", "ks-live-source", "--from", "earliest", "--to", "latest", "--sink",
                    "kafka:ks-live-target", "--create-topic", "--job", "ks-live").exitCode()).isZero();
            assertThat(admin.listConsumerGroupOffsets("ks-live-app").partitionsToOffsetAndMetadata().get()).isEqualTo(before);
            Set<String> groups = admin.listGroups().all().get().stream().map(GroupListing::groupId)
                    .collect(Collectors.toSet());
            assertThat(groups).contains("kbackfill-ks-live", "ks-live-app");
        }
    }

    @Test
    void aRunKilledMidWayResumesExactlyOnceUnderReadCommitted() throws Exception {
        kafka.createTopic("ks-crash-source", 3, Map.of());
        List<Orders.Produced> produced = Orders.produce(kafka, "ks-crash-source", 3000, 30);
        String[] args = {LAUNCHER.toString(), "run", "--topic", "ks-crash-source", "--from", "earliest", "--to", "latest",
                "--sink", "kafka:ks-crash-target", "--create-topic", "--job", "ks-crash", "--batch-size", "500",
                "--progress", "none", "--bootstrap-server", kafka.bootstrapServers()};
        Process first = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(dir.resolve("first.log").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        long committed = 0;
        while (first.isAlive() && System.nanoTime() < deadline) {
            committed = groupProgress("kbackfill-ks-crash");
            if (committed > 90_000 / 5) {
                break;
            }
            Thread.sleep(20);
        }
        assertThat(first.isAlive()).as("killed while writing (progress %d)", committed).isTrue();
        first.destroyForcibly();
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();

        Process second = new ProcessBuilder(args).redirectErrorStream(true)
                .redirectOutput(dir.resolve("second.log").toFile()).start();
        assertThat(second.waitFor(180, TimeUnit.SECONDS)).isTrue();
        assertThat(second.exitValue()).as(Files.readString(dir.resolve("second.log"))).isZero();
        assertThat(Files.readString(dir.resolve("second.log"))).contains("resuming job ks-crash run 1");

        List<ConsumerRecord<byte[], byte[]>> target = readCommitted("ks-crash-target");
        assertThat(latest(target)).isEqualTo(expectedLatest(produced));
        // exactly once: no source record was written twice, whatever the kill left in an open transaction
        Set<String> seen = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : target) {
            String coordinates = new String(r.headers().lastHeader("kbackfill.source.partition").value(),
                    StandardCharsets.UTF_8) + "@" + new String(r.headers().lastHeader("kbackfill.source.offset").value(),
                    StandardCharsets.UTF_8);
            assertThat(seen.add(coordinates)).as("written once: " + coordinates).isTrue();
        }
    }

    @Test
    void aSecondRunOfTheJobFencesTheFirst() throws Exception {
        kafka.createTopic("ks-fence-source", 2, Map.of());
        List<Orders.Produced> produced = Orders.produce(kafka, "ks-fence-source", 2000, 30);
        String[] args = {LAUNCHER.toString(), "run", "--topic", "ks-fence-source", "--from", "earliest", "--to", "latest",
                "--sink", "kafka:ks-fence-target", "--create-topic", "--job", "ks-fence", "--batch-size", "300",
                "--progress", "none", "--bootstrap-server", kafka.bootstrapServers()};
        Process first = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(dir.resolve("fenced.log").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (groupProgress("kbackfill-ks-fence") < 5000 && first.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(first.isAlive()).as("the first run is still writing").isTrue();
        CliRun second = run("--topic", "ks-fence-source", "--from", "earliest", "--to", "latest", "--sink",
                "kafka:ks-fence-target", "--job", "ks-fence");
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(first.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String firstLog = Files.readString(dir.resolve("fenced.log"));
        assertThat(first.exitValue()).as(firstLog).isEqualTo(ExitCodes.JOB_CONFLICT);
        assertThat(firstLog).contains("was taken over by a newer run of it");
        assertThat(latest(readCommitted("ks-fence-target"))).isEqualTo(expectedLatest(produced));
    }

    private static long groupProgress(String group) {
        try (Admin admin = kafka.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(5, TimeUnit.SECONDS);
            return offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
        } catch (Exception e) {
            return 0;
        }
    }

}
