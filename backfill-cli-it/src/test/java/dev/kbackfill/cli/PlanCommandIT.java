package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.Plan;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kbackfill plan} in this JVM against the shared real broker. */
@Tag("kafka")
class PlanCommandIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void topics() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic("cli-orders", 3, Map.of());
        for (int p = 0; p < 3; p++) {
            TestTopics.produce(kafka, "cli-orders", p, T0, T0.plusSeconds(3600), T0.plusSeconds(7200 + p),
                    T0.plusSeconds(86_400));
        }
    }

    private static CliRun plan(String... extra) {
        String[] base = {"plan", "--bootstrap-server", kafka.bootstrapServers()};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return CliRun.of(args);
    }

    @Test
    void theTableEndsWithWhatRunningThePlanCosts() {
        CliRun run = plan("--topic", "cli-orders", "--from", "earliest", "--to", "latest", "--rate", "4");
        assertThat(run.exitCode()).as(run.err()).isZero();
        String estimate = run.out().lines().filter(l -> l.startsWith("estimate:")).findFirst().orElseThrow();
        // 12 records, sized from the logs' bytes per offset, 3 s at 4 a second
        assertThat(estimate).matches("estimate: at most 12 records, about [0-9.]+ (B|KB) \\(log size per offset x span\\), "
                + "about 3 s at 4 records/s");
        CliRun bad = plan("--topic", "cli-orders", "--from", "earliest", "--to", "latest", "--rate", "0");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.err()).contains("invalid --rate '0'");
    }

    @Test
    void theTableShowsEveryPartitionWithItsRangeAndNotesGoToStderr() {
        CliRun run = plan("--topic", "cli-orders", "--from", "2024-01-01T01:00Z", "--to", "2024-01-01T02:00Z");
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("topic cli-orders (id ").contains("read_committed")
                .contains("from 2024-01-01T01:00Z = 2024-01-01T01:00:00Z");
        assertThat(run.out().lines().filter(l -> l.matches("[0-2] +1 +2 +1 +0 +4 +2024-01-01T01:00:00Z.*")))
                .hasSize(3);
        assertThat(run.out()).contains("total").contains("create-time");
        assertThat(run.err()).startsWith("note: topic cli-orders uses CreateTime");
    }

    @Test
    void jsonIsThePlanDocumentAndRoundTrips() throws Exception {
        CliRun run = plan("--topic", "cli-orders", "--from", "earliest", "--to", "2024-01-01T02:00Z", "--format", "json");
        assertThat(run.exitCode()).as(run.err()).isZero();
        Plan plan = Plan.fromJson(run.out());
        assertThat(plan.partitions()).hasSize(3).allSatisfy(r -> {
            assertThat(r.start()).isZero();
            assertThat(r.end()).isEqualTo(2);
        });
        try (Admin admin = kafka.admin()) {
            assertThat(plan.topicId()).isEqualTo(admin.describeTopics(java.util.List.of("cli-orders")).allTopicNames()
                    .get().get("cli-orders").topicId().toString());
        }
    }

    @Test
    void sparkFormatGivesStartingAndEndingOffsets() throws Exception {
        CliRun run = plan("--topic", "cli-orders", "--from", "2024-01-01T01:00Z", "--to", "latest", "--format", "spark");
        assertThat(run.exitCode()).as(run.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(run.out());
        assertThat(json.get("startingOffsets").toString()).isEqualTo("{\"cli-orders\":{\"0\":1,\"1\":1,\"2\":1}}");
        assertThat(json.get("endingOffsets").toString()).isEqualTo("{\"cli-orders\":{\"0\":4,\"1\":4,\"2\":4}}");
    }

    @Test
    void outWritesThePlanDocumentBesideTheTable(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("plan.json");
        CliRun run = plan("--topic", "cli-orders", "--from", "earliest", "--to", "latest", "--partitions", "0,2",
                "--out", file.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("PARTITION");
        assertThat(run.err()).contains("plan written to " + file);
        Plan plan = Plan.fromJson(Files.readString(file));
        assertThat(plan.partitions()).extracting(r -> r.partition()).containsExactly(0, 2);
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(file); // no temporary file left behind
        }
    }

    @Test
    void anUnknownTopicIsBadInput() {
        CliRun run = plan("--topic", "cli-no-such-topic", "--from", "earliest", "--to", "latest");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.errLines()).hasSize(1);
        assertThat(run.err()).startsWith("kbackfill plan: topic 'cli-no-such-topic' does not exist on cluster ");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aMisspeltTopicIsAnsweredWithTheClustersNearestTopic() {
        CliRun run = plan("--topic", "cli-ordres", "--from", "earliest", "--to", "latest");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.errLines()).hasSize(1);
        assertThat(run.err()).startsWith("kbackfill plan: topic 'cli-ordres' does not exist on cluster ")
                .endsWith("; did you mean 'cli-orders'?\n");
        CliRun far = plan("--topic", "cli-no-such-topic", "--from", "earliest", "--to", "latest");
        assertThat(far.err()).as("no topic near it: no suggestion").doesNotContain("did you mean");
    }

    @Test
    void anUnknownPartitionIsBadInput() {
        CliRun run = plan("--topic", "cli-orders", "--from", "earliest", "--to", "latest", "--partitions", "1,5-6");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).isEqualTo("kbackfill plan: partition 5 does not exist in topic cli-orders "
                + "(partitions 0-2)" + System.lineSeparator());
    }

    @Test
    void sparkJsonForAnotherTopicIsBadInput() {
        CliRun run = plan("--topic", "cli-orders", "--from", "{\"other\":{\"0\":0}}", "--to", "latest");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).contains("--from names topic 'other' but --topic is 'cli-orders'");
    }

    @Test
    void aStartLostToRetentionIsBadInputUnlessAllowed() throws Exception {
        kafka.createTopic("cli-truncated", 1, Map.of());
        TestTopics.produce(kafka, "cli-truncated", 0, T0, T0, T0, T0);
        try (Admin admin = kafka.admin()) {
            admin.deleteRecords(Map.of(new TopicPartition("cli-truncated", 0), RecordsToDelete.beforeOffset(2)))
                    .all().get();
        }
        CliRun lost = plan("--topic", "cli-truncated", "--from", "offset:0", "--to", "latest");
        assertThat(lost.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(lost.err()).contains("partition 0: --from offset 0 is below the log start offset 2")
                .contains("--allow-data-loss");
        CliRun allowed = plan("--topic", "cli-truncated", "--from", "offset:0", "--to", "latest",
                "--allow-data-loss", "--format", "json");
        assertThat(allowed.exitCode()).isZero();
        assertThat(Plan.fromJson(allowed.out()).partition(0).orElseThrow().start()).isEqualTo(2);
        assertThat(allowed.err()).contains("note: partition 0: --from offset 0 is below the log start offset 2");
    }

    /**
     * A consumer group's committed offsets as a bound, read without joining the group: plan and inspect say what
     * it has not read, its offsets and members stay as they were, and a partition it never committed needs a bound.
     */
    @Test
    void aGroupsCommittedOffsetsAreABoundAndTheGroupIsLeftAsItWas() throws Exception {
        String group = "cli-orders-etl";
        Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> committed =
                Map.of(new org.apache.kafka.common.TopicPartition("cli-orders", 0),
                        new org.apache.kafka.clients.consumer.OffsetAndMetadata(1),
                        new org.apache.kafka.common.TopicPartition("cli-orders", 1),
                        new org.apache.kafka.clients.consumer.OffsetAndMetadata(3));
        try (var admin = kafka.admin()) {
            admin.alterConsumerGroupOffsets(group, committed).all().get();
        }
        CliRun missing = plan("--topic", "cli-orders", "--from", "group:" + group, "--to", "latest");
        assertThat(missing.exitCode()).as(missing.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(missing.err()).contains("partitions 2 of topic cli-orders have no group " + group)
                .contains("group:" + group + ",earliest");
        CliRun run = plan("--topic", "cli-orders", "--from", "group:" + group + ",latest", "--to", "latest",
                "--format", "json");
        assertThat(run.exitCode()).as(run.err()).isZero();
        java.util.List<String> ranges = new java.util.ArrayList<>();
        new ObjectMapper().readTree(run.out()).path("partitions").forEach(r -> ranges.add(r.path("partition").asInt()
                + ":" + r.path("start").asLong() + ".." + r.path("end").asLong()));
        assertThat(ranges).containsExactly("0:1..4", "1:3..4", "2:4..4");
        assertThat(run.err()).contains("without joining it").contains("at offset 3: group " + group
                + "'s committed offset");
        CliRun inspect = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "--topic", "cli-orders",
                "--at", "group:" + group + ",latest");
        assertThat(inspect.exitCode()).as(inspect.err()).isZero();
        assertThat(inspect.out()).containsPattern("(?m)^ +0 +1 +0 +4 +3 +0$").containsPattern("(?m)^ +total +4 +0$")
                .contains("backfills the 4 records behind");
        CliRun bad = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "--topic", "cli-orders",
                "--at", "2024-01-01");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.err()).contains("expected a reader");
        try (var admin = kafka.admin()) {
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get())
                    .isEqualTo(committed);
            assertThat(admin.describeConsumerGroups(java.util.List.of(group)).all().get().get(group).members()).isEmpty();
        }
    }

    /** Two readers, one after the other: the gap neither read and the overlap both read, with the run that fills it. */
    @Test
    void inspectThenShowsTheGapAndTheOverlapBetweenTwoReaders() throws Exception {
        try (var admin = kafka.admin()) {
            admin.alterConsumerGroupOffsets("cli-old", Map.of(
                    new TopicPartition("cli-orders", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(1),
                    new TopicPartition("cli-orders", 1), new org.apache.kafka.clients.consumer.OffsetAndMetadata(3),
                    new TopicPartition("cli-orders", 2), new org.apache.kafka.clients.consumer.OffsetAndMetadata(4)))
                    .all().get();
            admin.alterConsumerGroupOffsets("cli-new", Map.of(
                    new TopicPartition("cli-orders", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(3),
                    new TopicPartition("cli-orders", 1), new org.apache.kafka.clients.consumer.OffsetAndMetadata(1),
                    new TopicPartition("cli-orders", 2), new org.apache.kafka.clients.consumer.OffsetAndMetadata(4)))
                    .all().get();
        }
        CliRun r = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "--topic", "cli-orders", "--at",
                "group:cli-old", "--then", "group:cli-new");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("(?m)^ +0 +1 +3 +2 +0 +0$").containsPattern("(?m)^ +1 +3 +1 +0 +2 +0$")
                .containsPattern("(?m)^ +total +2 +2 +0$")
                .contains("'kbackfill run --topic cli-orders --from group:cli-old --to group:cli-new --bootstrap-server "
                        + kafka.bootstrapServers() + " --sink URL' writes the 2 records neither read")
                .contains("2 records were read by both");
        assertThat(r.err()).contains("note: --at: ");
        // the same as arguments, the topic taken from the group's offsets: it has them on cli-orders only
        CliRun positional = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "group:cli-old",
                "group:cli-new");
        assertThat(positional.exitCode()).as(positional.err()).isZero();
        assertThat(positional.out()).isEqualTo(r.out());
        // notes in the words the user typed: the readers were arguments
        assertThat(positional.err()).contains("note: READER: ").contains("note: second READER: ")
                .doesNotContain("--at").doesNotContain("--then");
        try (var admin = kafka.admin()) {
            kafka.createTopic("cli-orders-two", 1, Map.of());
            admin.alterConsumerGroupOffsets("cli-two", Map.of(
                    new TopicPartition("cli-orders", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(0),
                    new TopicPartition("cli-orders-two", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(0)))
                    .all().get();
        }
        CliRun two = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "group:cli-two");
        assertThat(two.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(two.err().strip()).isEqualTo("kbackfill inspect: 'group:cli-two' has positions on topics cli-orders, "
                + "cli-orders-two: name one with --topic TOPIC");
        CliRun both = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "group:cli-old", "--at",
                "group:cli-new");
        assertThat(both.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(both.err()).contains("not both");
        CliRun plan = plan("--topic", "cli-orders", "--from", "group:cli-old", "--to", "group:cli-new", "--format",
                "json");
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        long total = 0;
        for (JsonNode p : new ObjectMapper().readTree(plan.out()).path("partitions")) {
            total += p.path("end").asLong() - p.path("start").asLong();
        }
        assertThat(total).isEqualTo(2);
    }

    /** A bare path to a Spark checkpoint's directory is that checkpoint, as checkpoint:PATH is. */
    @Test
    void aBarePathToACheckpointIsThatCheckpoint(@TempDir Path dir) throws Exception {
        Path c = dir.resolve("query");
        Files.createDirectories(c.resolve("offsets"));
        Files.createDirectories(c.resolve("commits"));
        Files.writeString(c.resolve("metadata"), "{\"id\":\"6f0f3a54-query\"}");
        Files.writeString(c.resolve("offsets/0"), "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1704067200000,"
                + "\"conf\":{}}\n{\"cli-orders\":{\"0\":1,\"1\":2,\"2\":3}}");
        Files.writeString(c.resolve("commits/0"), "v1\n{\"nextBatchWatermarkMs\":0}");
        CliRun bare = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), c.toString());
        assertThat(bare.exitCode()).as(bare.out() + bare.err()).isZero();
        CliRun prefixed = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "checkpoint:" + c);
        assertThat(bare.out()).isEqualTo(prefixed.out());
        CliRun notOne = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), dir.toString());
        assertThat(notOne.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(notOne.err()).contains("invalid READER '" + dir + "'");
    }
}
