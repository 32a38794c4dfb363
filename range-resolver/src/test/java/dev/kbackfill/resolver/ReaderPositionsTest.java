package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bounds read from where another reader stands: a Spark Structured Streaming checkpoint's files (written here as
 * Spark writes them: offsets/N, commits/N, sources/0/0, metadata) and a consumer group's committed offsets.
 */
class ReaderPositionsTest {

    private static final Instant NOW = Instant.parse("2024-01-03T00:00:00Z");
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    private final FakeOffsetSource topic = new FakeOffsetSource("orders", 3);
    private final RangeResolver resolver = new RangeResolver(topic, Clock.fixed(NOW, ZoneOffset.UTC));

    @TempDir
    Path dir;

    @BeforeEach
    void logs() {
        for (int p = 0; p < 3; p++) {
            for (int i = 0; i < 100; i++) {
                topic.logs.get(p).append(T0.plusSeconds(i));
            }
        }
    }

    private Plan plan(String from, String to) {
        return resolver.resolve(BackfillRequest.builder("orders").from(from).to(to).build());
    }

    /** offsets/N as Spark's OffsetSeqLog writes it (v1, the batch metadata, a line per source). */
    private void offsets(Path checkpoint, long batch, String... sources) throws IOException {
        Files.createDirectories(checkpoint.resolve("offsets"));
        StringBuilder text = new StringBuilder("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1704067200000,"
                + "\"conf\":{\"spark.sql.shuffle.partitions\":\"200\"}}");
        for (String s : sources) {
            text.append('\n').append(s);
        }
        Files.writeString(checkpoint.resolve("offsets").resolve(Long.toString(batch)), text);
    }

    private void commit(Path checkpoint, long batch) throws IOException {
        Files.createDirectories(checkpoint.resolve("commits"));
        Files.writeString(checkpoint.resolve("commits").resolve(Long.toString(batch)), "v1\n{\"nextBatchWatermarkMs\":0}");
    }

    private Path checkpoint() throws IOException {
        Path c = dir.resolve("query");
        Files.createDirectories(c.resolve("sources/0"));
        Files.writeString(c.resolve("metadata"), "{\"id\":\"6f0f3a54-query\"}");
        byte[] json = "v1\n{\"orders\":{\"0\":5,\"1\":0,\"2\":7}}".getBytes(StandardCharsets.UTF_8);
        byte[] initial = new byte[json.length + 1];
        System.arraycopy(json, 0, initial, 1, json.length); // a 0x00 byte first, as KafkaSourceInitialOffsetWriter
        Files.write(c.resolve("sources/0/0"), initial);
        offsets(c, 3, "{\"orders\":{\"0\":20,\"1\":30,\"2\":40}}");
        commit(c, 3);
        offsets(c, 4, "{\"orders\":{\"2\":45,\"1\":33,\"0\":25}}");
        commit(c, 4);
        offsets(c, 5, "{\"orders\":{\"0\":60,\"1\":61,\"2\":62}}"); // planned, not committed
        return c;
    }

    @Test
    void aCheckpointBoundIsTheEndOfItsLastCommittedBatchWithWhatTheCheckpointSaysBeside() throws Exception {
        Path c = checkpoint();
        Plan plan = plan("checkpoint:" + c, "latest");
        assertThat(plan.partitions()).extracting(PartitionRange::start).containsExactly(25L, 33L, 45L);
        assertThat(plan.partitions()).extracting(PartitionRange::end).containsExactly(100L, 100L, 100L);
        assertThat(plan.partitions().get(1).notes()).extracting(Note::message)
                .anyMatch(m -> m.contains("from bound at offset 33: where the checkpoint's query stopped"));
        assertThat(plan.notes()).extracting(Note::message)
                .anyMatch(m -> m.contains("the end of batch 4, the last that query 6f0f3a54-query"))
                .anyMatch(m -> m.contains("batch 5 was planned (offsets/5) but not committed"))
                .anyMatch(m -> m.contains("batches below 3 were purged"))
                .anyMatch(m -> m.contains("the query started at {0=5, 1=0, 2=7} (sources/N/0): checkpoint-start:" + c));
        assertThat(plan.request().fromText()).isEqualTo("checkpoint:" + c);
    }

    @Test
    void checkpointStartIsWhereTheQueryBeganSoTheGapBetweenTwoQueriesIsOnePlan() throws Exception {
        Path old = checkpoint();
        Path fresh = dir.resolve("fresh");
        Files.createDirectories(fresh.resolve("sources/0"));
        Files.write(fresh.resolve("sources/0/0"), ("\u0000v1\n{\"orders\":{\"0\":70,\"1\":71,\"2\":72}}")
                .getBytes(StandardCharsets.UTF_8));
        // what the old query never processed and the new one skipped
        Plan gap = plan("checkpoint:" + old, "checkpoint-start:" + fresh);
        assertThat(gap.partitions()).extracting(r -> r.start() + ".." + r.end())
                .containsExactly("25..70", "33..71", "45..72");
        assertThat(gap.partitions().get(0).notes()).extracting(Note::message)
                .anyMatch(m -> m.contains("to bound at offset 70: where the checkpoint's query started"));
        assertThat(plan("checkpoint-start:" + old, "latest").partitions()).extracting(PartitionRange::start)
                .containsExactly(5L, 0L, 7L);
        // a new query that started before the old one stopped: the overlap was processed twice, nothing is missing
        Files.write(fresh.resolve("sources/0/0"), ("\u0000v1\n{\"orders\":{\"0\":20,\"1\":71,\"2\":72}}")
                .getBytes(StandardCharsets.UTF_8));
        Plan overlap = plan("checkpoint:" + old, "checkpoint-start:" + fresh);
        assertThat(overlap.partitions().get(0).start()).isEqualTo(overlap.partitions().get(0).end());
        assertThat(overlap.partitions().get(0).notes()).extracting(Note::kind).contains(Note.Kind.FROM_AFTER_TO);
    }

    /** Offsets no Kafka log has, as a hand-edited or damaged checkpoint holds them: one line naming file and value. */
    @Test
    void aCheckpointOffsetOrPartitionNoKafkaTopicCanHaveIsBadInputNamingTheFileAndTheValue() throws Exception {
        java.util.Map<String, String> bad = new java.util.LinkedHashMap<>();
        bad.put("{\"orders\":{\"0\":-5}}", "partition 0 has offset -5, which no Kafka log has");
        bad.put("{\"orders\":{\"4294967296\":3}}", "partition '4294967296' is not a partition number");
        bad.put("{\"orders\":{\"0\":2.7}}", "partition 0 has offset 2.7, which no Kafka log has");
        bad.put("{\"orders\":{\"0\":99999999999999999999}}", "partition 0 has offset 99999999999999999999, which no "
                + "Kafka log has");
        bad.put("{\"orders\":{\"0\":\"12\"}}", "partition 0 has offset \"12\", which no Kafka log has");
        int n = 0;
        for (java.util.Map.Entry<String, String> e : bad.entrySet()) {
            Path c = dir.resolve("bad" + n++);
            offsets(c, 0, e.getKey());
            commit(c, 0);
            assertThatThrownBy(() -> plan("checkpoint:" + c, "latest")).as(e.getKey())
                    .isExactlyInstanceOf(RequestException.class)
                    .hasMessageStartingWith("invalid checkpoint '" + c + "': checkpoint file offsets/0, topic orders: ")
                    .hasMessageContaining(e.getValue()).hasMessageNotContaining("\n");
        }
    }

    /**
     * A checkpoint taken before its topic was deleted and recreated stands beyond the new topic's end: bad input that
     * says so, never a plan clamped to the end that reads nothing; a group likewise.
     */
    @Test
    void aReaderStandingBeyondTheLogsEndIsOfAnotherTopicAndRefused() throws Exception {
        Path c = dir.resolve("recreated");
        offsets(c, 0, "{\"orders\":{\"0\":108,\"1\":50,\"2\":100}}");
        commit(c, 0);
        assertThatThrownBy(() -> plan("checkpoint:" + c, "latest")).isInstanceOf(RequestException.class)
                .hasMessage("invalid from bound 'checkpoint:" + c + "': the checkpoint's query stands beyond the end of "
                        + "topic orders (partition 0 at offset 108, its end 100): the topic was deleted and recreated, "
                        + "or truncated, since it read there, so these positions are not this topic's (the query "
                        + "itself would stop here with a data-loss error); give bounds of the topic as it is now, e.g. "
                        + "from bound earliest");
        assertThatThrownBy(() -> plan("earliest", "checkpoint:" + c)).isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid to bound 'checkpoint:" + c + "'");
        topic.groups.put("old-readers", java.util.Map.of(0, 40L, 1, 101L, 2, 7L));
        assertThatThrownBy(() -> plan("group:old-readers", "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("group old-readers stands beyond the end of topic orders (partition 1 at "
                        + "offset 101, its end 100)");
        // at the end exactly: nothing behind, a plan of nothing
        Path atEnd = dir.resolve("at-end");
        offsets(atEnd, 0, "{\"orders\":{\"0\":100,\"1\":100,\"2\":100}}");
        commit(atEnd, 0);
        assertThat(plan("checkpoint:" + atEnd, "latest").partitions()).allMatch(r -> r.start() == r.end());
    }

    @Test
    void aCheckpointOfAnotherTopicOrWithoutACommittedBatchIsNamedNotGuessed() throws Exception {
        Path c = dir.resolve("other");
        offsets(c, 0, "-", "{\"payments\":{\"0\":3}}");
        assertThatThrownBy(() -> plan("checkpoint:" + c, "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("no committed batch");
        commit(c, 0);
        assertThatThrownBy(() -> plan("checkpoint:" + c, "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("holds no offsets of topic orders").hasMessageContaining("payments");
        Path files = dir.resolve("files"); // a query over a file source: its offsets are a log offset, not Kafka's
        offsets(files, 0, "{\"logOffset\":0}");
        commit(files, 0);
        assertThatThrownBy(() -> plan("checkpoint:" + files, "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("holds no offsets of topic orders");
        assertThatThrownBy(() -> plan("checkpoint-start:" + files, "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("no sources/ directory");
        assertThatThrownBy(() -> plan("checkpoint:" + dir.resolve("nope"), "latest"))
                .isInstanceOf(RequestException.class).hasMessageContaining("no such directory");
        assertThatThrownBy(() -> BackfillRequest.builder("orders").from("checkpoint:").to("latest").build())
                .isInstanceOf(RequestException.class).hasMessageContaining("expected checkpoint:PATH");
    }

    @Test
    void aQueryReadingTwoTopicsAndAPartitionAddedSinceAreSaid() throws Exception {
        Path c = dir.resolve("two");
        offsets(c, 7, "{\"orders\":{\"0\":10,\"1\":11},\"payments\":{\"0\":1}}");
        commit(c, 7);
        Plan plan = plan("checkpoint:" + c, "latest");
        assertThat(plan.partitions()).extracting(PartitionRange::start).containsExactly(10L, 11L, 0L);
        assertThat(plan.partitions().get(2).notes()).extracting(Note::message)
                .anyMatch(m -> m.contains("the checkpoint has no offset for this partition"));
        assertThat(plan.notes()).extracting(Note::message).anyMatch(m -> m.contains("the query also reads payments"));
    }

    @Test
    void aGroupBoundIsItsCommittedOffsetsAndAPartitionWithoutOneNeedsItsOwnBound() {
        topic.groups.put("orders-etl", Map.of(0, 40L, 1, 50L));
        assertThatThrownBy(() -> plan("group:orders-etl", "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("partitions 2 of topic orders have no group orders-etl's committed offset")
                .hasMessageContaining("group:orders-etl,earliest");
        Plan plan = plan("group:orders-etl,earliest", "latest");
        assertThat(plan.partitions()).extracting(PartitionRange::start).containsExactly(40L, 50L, 0L);
        assertThat(plan.partitions().get(2).notes()).extracting(Note::message)
                .anyMatch(m -> m.contains("so the fallback earliest"));
        assertThat(plan.notes()).extracting(Note::message).anyMatch(m -> m.contains("without joining it"));
        // what the group has not read yet is up to latest; what it read, from earliest to where it stands
        assertThat(plan("earliest", "group:orders-etl,latest").partitions()).extracting(PartitionRange::end)
                .containsExactly(40L, 50L, 100L);
        assertThatThrownBy(() -> plan("group:nobody", "latest")).isInstanceOf(RequestException.class)
                .hasMessageContaining("group nobody has no committed offset on topic orders");
    }

    @Test
    void aConnectBoundIsItsSinksGroup() {
        topic.groups.put("connect-orders-jdbc", Map.of(0, 1L, 1, 2L, 2, 3L));
        Plan plan = plan("connect:orders-jdbc", "latest");
        assertThat(plan.partitions()).extracting(PartitionRange::start).containsExactly(1L, 2L, 3L);
        assertThat(plan.notes()).extracting(Note::message)
                .anyMatch(m -> m.contains("Kafka Connect sink orders-jdbc commits in group connect-orders-jdbc"));
        assertThatThrownBy(() -> BackfillRequest.builder("orders").from("connect:x,2024-01-01").to("latest").build())
                .isInstanceOf(RequestException.class).hasMessageContaining("earliest, latest or offset:N");
        assertThat(List.of(plan.request().from())).first().isInstanceOf(Bound.External.class);
    }

    @Test
    void aCheckpointIsReadThroughItsFilesWhereverTheyAreAndTheTopicsItReadAreKnown() throws Exception {
        Path c = checkpoint();
        // a file: URI reads the same directory
        Plan uri = plan("checkpoint:" + c.toUri(), "latest");
        assertThat(uri.partitions()).extracting(PartitionRange::start).containsExactly(25L, 33L, 45L);
        // the same files behind another storage (an object store's, here a map): the same bound
        Map<String, byte[]> objects = new java.util.TreeMap<>();
        try (var files = Files.walk(c)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                objects.put(c.relativize(f).toString().replace('\\', '/'), Files.readAllBytes(f));
            }
        }
        CheckpointFiles store = new CheckpointFiles() {
            @Override
            public String location() {
                return "mem://query";
            }

            @Override
            public boolean exists() {
                return true;
            }

            @Override
            public List<String> list(String d) {
                return objects.keySet().stream().filter(k -> k.startsWith(d + "/"))
                        .map(k -> k.substring(d.length() + 1).split("/")[0]).distinct().sorted().toList();
            }

            @Override
            public java.util.Optional<byte[]> read(String f) {
                return java.util.Optional.ofNullable(objects.get(f));
            }
        };
        SparkCheckpoint stored = new SparkCheckpoint(store);
        assertThat(stored.stopped("orders").offsets()).isEqualTo(new SparkCheckpoint(c).stopped("orders").offsets());
        assertThat(stored.started("orders").offsets()).containsExactly(Map.entry(0, 5L), Map.entry(1, 0L),
                Map.entry(2, 7L));
        assertThat(stored.topics()).containsExactly("orders");
        // a scheme no storage on the classpath serves is bad input, named
        assertThatThrownBy(() -> plan("checkpoint:nosuch://bucket/chk", "latest"))
                .isInstanceOf(RequestException.class)
                .hasMessage("invalid checkpoint location 'nosuch://bucket/chk': no filesystem for the scheme "
                        + "'nosuch:' here; expected a local path, file:, or s3a://, s3:// and hdfs:// with kbackfill's "
                        + "lake sinks on the classpath");
    }

    @Test
    void readerSettingsTravelWithThePlanAndNeverHoldCredentials() {
        BackfillRequest request = BackfillRequest.builder("orders").from("connect:orders-jdbc").to("latest")
                .readers(Map.of("connect.url", "http://connect:8083", "fs.s3a.endpoint", "http://s3:9000")).build();
        topic.groups.put("connect-orders-jdbc", Map.of(0, 1L, 1, 2L, 2, 3L));
        Plan plan = new RangeResolver(topic, Clock.fixed(NOW, ZoneOffset.UTC)).resolve(
                BackfillRequest.builder("orders").from("earliest").to("latest").readers(request.readers()).build());
        assertThat(Plan.fromJson(plan.toJson()).request().readers()).isEqualTo(request.readers());
        assertThatThrownBy(() -> BackfillRequest.builder("orders").from("earliest").to("latest")
                .readers(Map.of("fs.s3a.secret.key", "x")).build()).isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid reader setting 'fs.s3a.secret.key': it looks like a credential");
        assertThatThrownBy(() -> BackfillRequest.builder("orders").from("earliest").to("latest")
                .readers(Map.of("connect.url", "http://admin:pw@connect:8083")).build())
                .isInstanceOf(RequestException.class).hasMessageNotContaining("pw")
                .hasMessageContaining("credentials in the URL");
    }
}
