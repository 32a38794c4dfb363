package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kbackfill run} end to end: the real broker, real databases, the CLI in this JVM. */
@Tag("kafka")
class RunCommandIT {

    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    private String sqlite(String name) {
        return "jdbc:sqlite:" + dir.resolve(name + ".db");
    }

    /** A run that creates its table where missing. */
    private static CliRun run(String... args) {
        return List.of(args).contains("--create-table") ? runAsIs(args) : runAsIs(CliRun.concat(args, "--create-table"));
    }

    private static CliRun runAsIs(String... args) {
        return CliRun.run(kafka, args);
    }

    private static Plan storedPlan(String url, String job) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
             PreparedStatement ps = c.prepareStatement("SELECT plan FROM kbackfill_jobs WHERE job = ?")) {
            ps.setString(1, job);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("job " + job + " stored").isTrue();
                return Plan.fromJson(rs.getString(1));
            }
        }
    }

    @Test
    void aTimeRangeLeavesExactlyTheLastValueOfEachKeyInIt() throws Exception {
        kafka.createTopic("run-exact", 3, Map.of());
        List<Orders.Produced> produced = Orders.produce(kafka, "run-exact", 50, 6);
        String url = sqlite("exact");
        CliRun r = run("--topic", "run-exact", "--from", "2024-01-01T00:01:10Z", "--to", "2024-01-01T00:04:05Z",
                "--sink", url, "--table", "orders", "--create-table", "--job", "exact");
        assertThat(r.exitCode()).as(r.err()).isZero();
        Plan plan = storedPlan(url, "exact");
        Map<String, String> expected = Orders.expected(produced, plan);
        assertThat(expected).hasSizeGreaterThan(40);
        assertThat(Orders.table(url, "orders")).isEqualTo(expected);
        assertThat(r.out()).contains("job exact run 1: wrote " + expected.size() + " changes from " + plan.totalSpan()
                + " records");
        assertThat(r.err()).contains("starting job exact (run 1)");
    }

    /**
     * The progress display follows the reader, not only the commits: a run whose one batch commits at its end still
     * shows how far it has read while it reads, and every line's records are those of the offsets it says were read.
     */
    @Test
    void progressShowsWhatIsReadBeforeTheBatchCommitsAndItsCountsAgree() throws Exception {
        kafka.createTopic("run-progress", 1, Map.of());
        Orders.produce(kafka, "run-progress", 600, 5);
        CliRun r = CliRun.of("run", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "json", "--topic",
                "run-progress", "--from", "earliest", "--to", "latest", "--sink", sqlite("progress"), "--table", "t",
                "--create-table", "--batch-size", "100000");
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<com.fasterxml.jackson.databind.JsonNode> lines = new ArrayList<>();
        for (String line : r.err().lines().toList()) {
            com.fasterxml.jackson.databind.JsonNode node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
            if (node.has("readPercent")) {
                lines.add(node);
            }
        }
        assertThat(lines).as(r.err()).anySatisfy(l -> {
            assertThat(l.get("done").asLong()).isZero();
            assertThat(l.get("read").asLong()).isPositive();
        });
        assertThat(lines).allSatisfy(l -> {
            assertThat(l.get("records").asLong()).isEqualTo(l.get("read").asLong());
            assertThat(l.get("done").asLong()).isLessThanOrEqualTo(l.get("read").asLong());
        });
        assertThat(lines.get(lines.size() - 1).get("done").asLong()).isEqualTo(3000);
    }

    /**
     * status says that a run is under way, and how far it has read and committed, while it runs; once it ended, only
     * what the sink holds.
     */
    @Test
    void statusSaysARunIsUnderWayAndHowFarItHasRead() throws Exception {
        kafka.createTopic("run-under-way", 1, Map.of());
        Orders.produce(kafka, "run-under-way", 300, 5);
        String url = sqlite("under-way");
        java.util.concurrent.CompletableFuture<CliRun> running = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> run("--topic", "run-under-way", "--from", "earliest", "--to", "latest", "--sink", url, "--table",
                        "t", "--job", "slow", "--batch-size", "100", "--max-records-per-second", "300"));
        String seen = "";
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!seen.contains("offsets of this run") && !running.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(200);
            CliRun status = CliRun.of("status", "--job", "slow", "--sink", url);
            seen = status.out();
        }
        assertThat(seen).contains("job slow run 1: in progress")
                .containsPattern("run 1 under way: process " + ProcessHandle.current().pid() + " on \\S+ since \\S+, "
                        + "read [0-9.]+% \\([0-9]+ of 1500 offsets of this run, [0-9]+ records\\), committed [0-9.]+%");
        CliRun json = CliRun.of("status", "--job", "slow", "--sink", url, "--format", "json");
        CliRun done = running.get();
        assertThat(done.exitCode()).as(done.err()).isZero();
        assertThat(json.out()).satisfiesAnyOf(o -> assertThat(o).contains("\"underWay\":{\"run\":1,"),
                o -> assertThat(o).contains("\"complete\":true"));
        CliRun after = CliRun.of("status", "--job", "slow", "--sink", url);
        assertThat(after.out()).contains("job slow run 1: complete").doesNotContain("under way");
    }

    /**
     * A database that refuses connections for a while mid-run (PostgreSQL's "database ... is not currently accepting
     * connections", as during maintenance or a restore) is waited out under --retry-for, not the end of the run.
     */
    @Test
    @Tag("postgresql")
    void aDatabaseNotAcceptingConnectionsForAWhileIsRetried() throws Exception {
        kafka.createTopic("run-not-accepting", 1, Map.of());
        Orders.produce(kafka, "run-not-accepting", 20, 5);
        String url = SharedPostgres.newDatabase("not_accepting");
        java.util.concurrent.atomic.AtomicReference<CliRun> result = new java.util.concurrent.atomic.AtomicReference<>();
        Thread run = new Thread(() -> result.set(run("--topic", "run-not-accepting", "--from", "earliest", "--to",
                "latest", "--sink", url, "--table", "t", "--batch-size", "5", "--max-records-per-second", "20",
                "--retry-for", "2m")));
        run.start();
        String admin = url.replace("/not_accepting?", "/postgres?");
        try (Connection c = DriverManager.getConnection(admin); Statement s = c.createStatement()) {
            Thread.sleep(1_500); // a batch or two in
            s.execute("ALTER DATABASE not_accepting ALLOW_CONNECTIONS false");
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'not_accepting'");
            Thread.sleep(3_000);
            s.execute("ALTER DATABASE not_accepting ALLOW_CONNECTIONS true");
        }
        run.join(120_000);
        CliRun done = result.get();
        assertThat(done.exitCode()).as(done.err()).isZero();
        assertThat(done.err()).contains("retrying").contains("not currently accepting connections");
        assertThat(Orders.count(url, "SELECT count(*) FROM t")).isEqualTo(20);
    }

    @Test
    void aRerunOfAFinishedFixedRangeDoesNothing() throws Exception {
        kafka.createTopic("run-rerun", 2, Map.of());
        Orders.produce(kafka, "run-rerun", 20, 3);
        String url = sqlite("rerun");
        String[] args = {"--topic", "run-rerun", "--from", "earliest", "--to", "offset:25", "--sink", url,
                "--create-table"};
        CliRun first = run(args);
        assertThat(first.exitCode()).as(first.err()).isZero();
        Map<String, String> after = Orders.table(url, "run_rerun");
        String jobs = dump(url, "SELECT job, run_number, updated_at FROM kbackfill_jobs");
        CliRun second = run(args);
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(second.out()).matches("(?s)job run-rerun-[0-9a-f]{8}: run 1 already complete for --topic run-rerun "
                + "--from earliest --to offset:25 into .*; nothing to do\\R");
        assertThat(Orders.table(url, "run_rerun")).isEqualTo(after);
        assertThat(dump(url, "SELECT job, run_number, updated_at FROM kbackfill_jobs")).isEqualTo(jobs);
    }

    @Test
    void aMovingRequestStartsItsNextRunOnceTheLastIsComplete() throws Exception {
        kafka.createTopic("run-moving", 1, Map.of());
        List<Orders.Produced> produced = new ArrayList<>(Orders.produce(kafka, "run-moving", 5, 1));
        String url = sqlite("moving");
        String[] args = {"--topic", "run-moving", "--from", "earliest", "--to", "latest", "--sink", url, "--job", "cron"};
        assertThat(run(args).exitCode()).isZero();
        produced.addAll(Orders.send(kafka, List.of(new ProducerRecord<>("run-moving", null, Orders.T0.toEpochMilli(),
                "k00000".getBytes(StandardCharsets.UTF_8), Orders.json("k00000", 7).getBytes(StandardCharsets.UTF_8))),
                Map.of()));
        CliRun next = run(args);
        assertThat(next.exitCode()).as(next.err()).isZero();
        assertThat(next.err()).contains("starting job cron (run 2, the previous run being complete)");
        assertThat(Orders.table(url, "run_moving")).containsEntry("k00000", "s7").hasSize(5);
    }

    @Test
    void aTopicWithAbortedAndOpenTransactionsEndsWithCommittedRowsOnly() throws Exception {
        kafka.createTopic("run-tx", 1, Map.of());
        List<ProducerRecord<byte[], byte[]>> committed = new ArrayList<>();
        try (var tx = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(txConfig("run-tx-1"),
                new org.apache.kafka.common.serialization.ByteArraySerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            tx.initTransactions();
            int n = 0;
            for (boolean commit : new boolean[] {true, false, true, false}) {
                tx.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    String key = "k" + (n % 7);
                    var record = new ProducerRecord<>("run-tx", 0, Orders.T0.toEpochMilli(),
                            key.getBytes(StandardCharsets.UTF_8), Orders.json(key, n).getBytes(StandardCharsets.UTF_8));
                    tx.send(record);
                    if (commit) {
                        committed.add(record);
                    }
                    n++;
                }
                tx.flush();
                if (commit) {
                    tx.commitTransaction();
                } else {
                    tx.abortTransaction();
                }
            }
        }
        try (var open = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(txConfig("run-tx-2"),
                new org.apache.kafka.common.serialization.ByteArraySerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            open.initTransactions();
            open.beginTransaction();
            open.send(new ProducerRecord<>("run-tx", 0, Orders.T0.toEpochMilli(), "k0".getBytes(StandardCharsets.UTF_8),
                    Orders.json("k0", 999).getBytes(StandardCharsets.UTF_8))).get();
            String url = sqlite("tx");
            long started = System.nanoTime();
            CliRun r = run("--topic", "run-tx", "--from", "earliest", "--to", "latest", "--sink", url, "--job", "tx");
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(60));
            Map<String, String> expected = new java.util.TreeMap<>();
            for (var rec : committed) {
                String json = new String(rec.value(), StandardCharsets.UTF_8);
                expected.put(new String(rec.key(), StandardCharsets.UTF_8), json.replaceAll(".*\"status\":\"([^\"]+)\".*", "$1"));
            }
            assertThat(Orders.table(url, "run_tx")).isEqualTo(expected);
            assertThat(r.err()).contains("open transaction");
            open.abortTransaction();
        }
    }

    private static Map<String, Object> txConfig(String id) {
        Map<String, Object> c = kafka.clientConfig();
        c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        return c;
    }

    @Test
    void aCompactedTopicWithOffsetGapsTerminates() throws Exception {
        kafka.createTopic("run-compacted", 1, Map.of("cleanup.policy", "compact", "segment.ms", "100",
                "min.cleanable.dirty.ratio", "0.001", "min.compaction.lag.ms", "0", "delete.retention.ms", "100",
                "segment.bytes", "1048576"));
        List<Orders.Produced> produced = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            produced.addAll(Orders.produce(kafka, "run-compacted", 10, 50));
            Thread.sleep(300);
        }
        long end = produced.get(produced.size() - 1).offset() + 1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (countRecords("run-compacted", end) >= end) {
            assertThat(System.nanoTime()).as("the log cleaner compacted run-compacted within 90 s").isLessThan(deadline);
            Orders.produce(kafka, "run-compacted", 1, 1); // roll the segment so the cleaner can take the old ones
            Thread.sleep(500);
        }
        String url = sqlite("compacted");
        CliRun r = run("--topic", "run-compacted", "--from", "earliest", "--to", "offset:" + end, "--sink", url,
                "--job", "compacted");
        assertThat(r.exitCode()).as(r.err()).isZero();
        Map<String, String> expected = new java.util.TreeMap<>();
        produced.forEach(p -> expected.put(p.key(), p.value().replaceAll(".*\"status\":\"([^\"]+)\".*", "$1")));
        assertThat(Orders.table(url, "run_compacted")).isEqualTo(expected);
        assertThat(r.err()).contains("is compacted");
    }

    /** Records a plain consumer sees below {@code end}: fewer than {@code end} once compaction left gaps. */
    private static long countRecords(String topic, long end) {
        Map<String, Object> c = kafka.clientConfig();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long n = 0;
            while (consumer.position(tp) < end) {
                for (var r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.offset() < end) {
                        n++;
                    }
                }
            }
            return n;
        }
    }

    @Test
    void aLiveConsumerGroupIsUntouchedAndNoGroupAppears() throws Exception {
        kafka.createTopic("run-live", 2, Map.of());
        Orders.produce(kafka, "run-live", 10, 3);
        Map<String, Object> c = kafka.clientConfig();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "live-app");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, String> live = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            live.commitSync(Map.of(new TopicPartition("run-live", 0), new OffsetAndMetadata(7),
                    new TopicPartition("run-live", 1), new OffsetAndMetadata(3)));
        }
        try (Admin admin = kafka.admin()) {
            Map<TopicPartition, OffsetAndMetadata> before = admin.listConsumerGroupOffsets("live-app")
                    .partitionsToOffsetAndMetadata().get();
            Set<String> groupsBefore = admin.listGroups().all().get().stream().map(GroupListing::groupId)
                    .collect(Collectors.toSet());
            CliRun r = run("--topic", "run-live", "--from", "earliest", "--to", "latest", "--sink", sqlite("live"));
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(admin.listConsumerGroupOffsets("live-app").partitionsToOffsetAndMetadata().get()).isEqualTo(before);
            assertThat(admin.listGroups().all().get().stream().map(GroupListing::groupId).collect(Collectors.toSet()))
                    .isEqualTo(groupsBefore);
        }
    }

    @Test
    void newerWinsKeepsRowsFromLaterOffsetsWhenAnOlderRangeIsReplayed() throws Exception {
        kafka.createTopic("run-newer", 1, Map.of());
        Orders.produce(kafka, "run-newer", 10, 5);
        String url = sqlite("newer");
        assertThat(run("--topic", "run-newer", "--from", "earliest", "--to", "latest", "--sink", url).exitCode()).isZero();
        Map<String, String> latest = Orders.table(url, "run_newer");
        assertThat(latest.values()).containsOnly("s4");
        CliRun older = run("--topic", "run-newer", "--from", "earliest", "--to", "offset:20", "--sink", url);
        assertThat(older.exitCode()).as(older.err()).isZero();
        assertThat(Orders.table(url, "run_newer")).isEqualTo(latest);
        CliRun overwrite = run("--topic", "run-newer", "--from", "earliest", "--to", "offset:20", "--sink", url,
                "--on-conflict", "overwrite", "--job", "overwrite");
        assertThat(overwrite.exitCode()).isZero();
        assertThat(Orders.table(url, "run_newer").values()).containsOnly("s1");
    }

    @Test
    void tombstonesDeleteOrAreIgnoredAndCounted() throws Exception {
        kafka.createTopic("run-tombstones", 1, Map.of());
        Orders.produce(kafka, "run-tombstones", 3, 1);
        Orders.send(kafka, List.of(new ProducerRecord<byte[], byte[]>("run-tombstones", null, Orders.T0.toEpochMilli(),
                "k00001".getBytes(StandardCharsets.UTF_8), (byte[]) null)), Map.of());
        String deleting = sqlite("tomb-delete");
        assertThat(run("--topic", "run-tombstones", "--from", "earliest", "--to", "latest", "--sink", deleting)
                .exitCode()).isZero();
        assertThat(Orders.table(deleting, "run_tombstones")).containsOnlyKeys("k00000", "k00002");
        String ignoring = sqlite("tomb-ignore");
        CliRun r = run("--topic", "run-tombstones", "--from", "earliest", "--to", "latest", "--sink", ignoring,
                "--on-tombstone", "ignore");
        assertThat(r.exitCode()).isZero();
        assertThat(Orders.table(ignoring, "run_tombstones")).containsOnlyKeys("k00000", "k00001", "k00002");
        assertThat(r.out()).containsPattern("total +4 +3 +0 +0 +1 +0");
    }

    @Test
    void postgresqlGetsTheExactRowsToo() throws Exception {
        kafka.createTopic("run-pg", 3, Map.of());
        List<Orders.Produced> produced = Orders.produce(kafka, "run-pg", 40, 4);
        String url = SharedPostgres.newDatabase("run_pg");
        CliRun r = run("--topic", "run-pg", "--from", "2024-01-01T00:00:30Z", "--to", "latest", "--sink", url,
                "--table", "orders", "--create-table", "--job", "pg");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(Orders.table(url, "orders")).isEqualTo(Orders.expected(produced, storedPlan(url, "pg")));
    }

    @Test
    void theDemoFillsAClusterOfTheUsersOnceAndBackfillsIntoTheirDatabase() throws Exception {
        String url = SharedPostgres.newDatabase("run_demo");
        String[] demo = {"demo", "--records", "600", "--bootstrap-server", kafka.bootstrapServers(), "--sink", url};
        CliRun first = CliRun.of(demo);
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.err()).contains("creating topic orders with 3 partitions at " + kafka.bootstrapServers())
                .contains("wrote 600 orders").doesNotContain("embedded");
        assertThat(first.out()).containsPattern("table demo_orders now holds \\d+ rows");
        Map<String, String> rows = Orders.table(url, "demo_orders");
        assertThat(rows).isNotEmpty();

        CliRun again = CliRun.of(demo);
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.err()).contains("topic orders exists at " + kafka.bootstrapServers()
                + ": using its records as they are").contains("(forgot job demo-orders of an earlier demo)")
                .doesNotContain("wrote 600 orders");
        assertThat(Orders.table(url, "demo_orders")).isEqualTo(rows);
    }

    @Test
    void mariadbGetsTheExactRowsToo() throws Exception {
        kafka.createTopic("run-maria", 3, Map.of());
        List<Orders.Produced> produced = Orders.produce(kafka, "run-maria", 40, 4);
        String url = SharedMariaDb.newDatabase("run_maria");
        CliRun r = run("--topic", "run-maria", "--from", "earliest", "--to", "2024-01-01T00:02:00Z", "--sink", url,
                "--table", "orders", "--create-table", "--job", "maria");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(Orders.table(url, "orders")).isEqualTo(Orders.expected(produced, storedPlan(url, "maria")));
    }

    @Test
    void theSameJobNameWithAnotherRequestIsAConflict() throws Exception {
        kafka.createTopic("run-conflict", 1, Map.of());
        Orders.produce(kafka, "run-conflict", 3, 1);
        String url = sqlite("conflict");
        assertThat(run("--topic", "run-conflict", "--from", "earliest", "--to", "latest", "--sink", url, "--job", "j")
                .exitCode()).isZero();
        CliRun other = run("--topic", "run-conflict", "--from", "offset:1", "--to", "latest", "--sink", url, "--job", "j");
        assertThat(other.exitCode()).isEqualTo(ExitCodes.JOB_CONFLICT);
        assertThat(other.err()).startsWith("kbackfill run: job 'j' was created with request --topic run-conflict --from earliest "
                + "--to latest, not --topic run-conflict --from offset:1 --to latest; choose another name with --job, or "
                + "clear it with 'kbackfill reset --job j --bootstrap-server " + kafka.bootstrapServers() + " --sink "
                + url + " --yes'");
    }

    @Test
    void aSecondConcurrentRunOfAJobFailsFast() throws Exception {
        kafka.createTopic("run-concurrent", 1, Map.of());
        Orders.produce(kafka, "run-concurrent", 3, 1);
        String url = SharedPostgres.newDatabase("run_concurrent");
        try (Sink holder = SinkFactory.forSettings(new SinkSettings(url, "run_concurrent", Optional.empty(),
                Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false,
                SinkSettings.MetadataColumns.DEFAULT))) {
            holder.open();
            try (AutoCloseable lock = holder.jobStore().lock("busy")) {
                CliRun r = run("--topic", "run-concurrent", "--from", "earliest", "--to", "latest", "--sink", url,
                        "--job", "busy");
                assertThat(r.exitCode()).isEqualTo(ExitCodes.JOB_CONFLICT);
                assertThat(r.err()).contains("job 'busy' is already running");
            }
        }
        assertThat(run("--topic", "run-concurrent", "--from", "earliest", "--to", "latest", "--sink", url,
                "--job", "busy").exitCode()).isZero();
    }

    @Test
    void aRunStopsAtItsRecordLimitAtABatchBoundaryAndTheNextRunContinues() throws Exception {
        kafka.createTopic("run-limits", 2, Map.of());
        Orders.produce(kafka, "run-limits", 200, 3); // 600 records
        String url = sqlite("limits");
        String[] command = {"--topic", "run-limits", "--from", "earliest", "--to", "latest", "--sink", url, "--job", "l",
                "--batch-size", "50"};
        CliRun first = run(CliRun.concat(command, "--max-records", "250"));
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.err()).contains("stopped at this run's limit (--max-records 250)")
                .contains("the next run of job l continues where this one stopped");
        long readFirst = Long.parseLong(first.out().lines().filter(l -> l.startsWith("total")).findFirst().orElseThrow()
                .trim().split("\\s+")[1]);
        assertThat(readFirst).isBetween(250L, 599L);
        CliRun status = CliRun.of("status", "--job", "l", "--sink", url);
        assertThat(status.out()).contains("in progress");
        CliRun rest = run(command);
        assertThat(rest.exitCode()).as(rest.err()).isZero();
        assertThat(rest.err()).doesNotContain("limit");
        assertThat(rest.err()).contains("resuming job l");
        assertThat(rest.out()).doesNotContain("nothing to do");
        assertThat(Orders.table(url, "run_limits")).hasSize(200);
        assertThat(CliRun.of("status", "--job", "l", "--sink", url).out()).contains("complete");
    }

    @Test
    void aReportDescribesEachRunWhateverItsOutcome() throws Exception {
        kafka.createTopic("run-report", 2, Map.of());
        Orders.produce(kafka, "run-report", 10, 2);
        String url = sqlite("report");
        Path file = dir.resolve("report.json");
        String[] command = {"--topic", "run-report", "--from", "earliest", "--to", "2099-01-01", "--sink", url,
                "--job", "r", "--report", file.toString()};
        assertThat(run(command).exitCode()).isZero();
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        var done = json.readTree(java.nio.file.Files.readString(file));
        assertThat(done.path("job").asText()).isEqualTo("r");
        assertThat(done.path("outcome").asText()).isEqualTo("completed");
        assertThat(done.path("exitCode").asInt()).isZero();
        assertThat(done.path("totals").path("read").asLong()).isEqualTo(20);
        assertThat(done.path("totals").path("written").asLong()).isEqualTo(10);
        assertThat(done.path("partitions")).hasSize(2);
        assertThat(done.path("plan").path("offsets").asLong()).isEqualTo(20);
        assertThat(run(command).exitCode()).isZero();
        assertThat(json.readTree(java.nio.file.Files.readString(file)).path("outcome").asText()).isEqualTo("nothing-to-do");
        // the same job name for another table: exit 3, reported as such
        CliRun conflict = run(CliRun.concat(command, "--table", "other"));
        assertThat(conflict.exitCode()).isEqualTo(ExitCodes.JOB_CONFLICT);
        var failed = json.readTree(java.nio.file.Files.readString(file));
        assertThat(failed.path("outcome").asText()).isEqualTo("failed");
        assertThat(failed.path("exitCode").asInt()).isEqualTo(3);
        assertThat(failed.path("error").asText()).contains("job 'r' was created with");
    }

    /** The value of the one sample of {@code metric} whose labels include every one of {@code labels}. */
    private static double sample(List<String> lines, String metric, String... labels) {
        List<Double> values = lines.stream().filter(l -> l.startsWith(metric + "{"))
                .filter(l -> java.util.Arrays.stream(labels).allMatch(l::contains))
                .map(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).toList();
        assertThat(values).as(metric + " " + List.of(labels) + " in\n" + String.join("\n", lines)).hasSize(1);
        return values.get(0);
    }

    @Test
    void metricsOfEachRunGoToAPrometheusTextFileAndOverOtlp() throws Exception {
        kafka.createTopic("run-metrics", 2, Map.of());
        Orders.produce(kafka, "run-metrics", 10, 2);
        String url = sqlite("metrics");
        Path prom = dir.resolve("kbackfill.prom");
        List<byte[]> pushed = java.util.Collections.synchronizedList(new ArrayList<>());
        com.sun.net.httpserver.HttpServer collector = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/v1/metrics", exchange -> {
            pushed.add(exchange.getRequestBody().readAllBytes());
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        collector.start();
        try {
            String[] command = {"--topic", "run-metrics", "--from", "earliest", "--to", "2099-01-01", "--sink", url,
                    "--job", "m", "--metrics-file", prom.toString(), "--metrics-otlp",
                    "http://127.0.0.1:" + collector.getAddress().getPort() + "/v1/metrics"};
            CliRun done = run(command);
            assertThat(done.exitCode()).as(done.err()).isZero();
            assertThat(done.err()).doesNotContain("warning");
            List<String> lines = java.nio.file.Files.readAllLines(prom);
            assertThat(sample(lines, "kbackfill_run_exit_code", "job=\"m\"", "outcome=\"completed\"")).isZero();
            double read = sample(lines, "kbackfill_run_records", "partition=\"0\"", "count=\"read\"")
                    + sample(lines, "kbackfill_run_records", "partition=\"1\"", "count=\"read\"");
            double written = sample(lines, "kbackfill_run_records", "partition=\"0\"", "count=\"written\"")
                    + sample(lines, "kbackfill_run_records", "partition=\"1\"", "count=\"written\"");
            assertThat(read).isEqualTo(20);
            assertThat(written).isEqualTo(10);
            assertThat(sample(lines, "kbackfill_offsets_left", "partition=\"1\"", "topic=\"run-metrics\"")).isZero();
            assertThat(sample(lines, "kbackfill_plan_offsets", "job=\"m\"")).isEqualTo(20);
            double success = sample(lines, RunMetrics.LAST_SUCCESS, "job=\"m\"");
            assertThat(success).isCloseTo(System.currentTimeMillis() / 1000.0, org.assertj.core.data.Offset.offset(60.0));
            assertThat(lines).anyMatch(l -> l.startsWith("# HELP kbackfill_run_duration_seconds "));

            // the same run's metrics, pushed over OTLP/HTTP (protobuf) to a collector
            assertThat(pushed).hasSize(1);
            var request = io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest.parseFrom(pushed.get(0));
            List<io.opentelemetry.proto.metrics.v1.Metric> metrics = request.getResourceMetricsList().stream()
                    .flatMap(r -> r.getScopeMetricsList().stream()).flatMap(sm -> sm.getMetricsList().stream()).toList();
            double otlpWritten = metrics.stream().filter(m -> m.getName().equals("kbackfill.run.records"))
                    .flatMap(m -> m.getGauge().getDataPointsList().stream())
                    .filter(dp -> dp.getAttributesList().stream().anyMatch(a -> a.getKey().equals("count")
                            && a.getValue().getStringValue().equals("written")))
                    .mapToDouble(dp -> dp.getAsDouble()).sum();
            assertThat(otlpWritten).isEqualTo(10);

            // a failed run: its own exit code, the time of the last success carried over
            CliRun conflict = run(CliRun.concat(command, "--table", "other"));
            assertThat(conflict.exitCode()).isEqualTo(ExitCodes.JOB_CONFLICT);
            List<String> after = java.nio.file.Files.readAllLines(prom);
            assertThat(sample(after, "kbackfill_run_exit_code", "job=\"m\"", "outcome=\"failed\"")).isEqualTo(3);
            assertThat(sample(after, RunMetrics.LAST_SUCCESS, "job=\"m\"")).isEqualTo(success);
        } finally {
            collector.stop(0);
        }
        // a collector that does not answer is a warning; the run's outcome is its own
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        CliRun unheard = run("--topic", "run-metrics", "--from", "earliest", "--to", "2099-01-01", "--sink", url,
                "--job", "m", "--metrics-otlp", "http://127.0.0.1:" + closed + "/v1/metrics");
        assertThat(unheard.exitCode()).isZero();
        assertThat(unheard.err()).contains("warning: cannot push the metrics to http://127.0.0.1:" + closed);
    }

    @Test
    void continueStartsEachRunWhereThePreviousEndedSoCronLeavesNoGap() throws Exception {
        kafka.createTopic("run-continue", 2, Map.of());
        Orders.produce(kafka, "run-continue", 10, 1); // 10 records
        String url = sqlite("continue");
        String[] command = {"--topic", "run-continue", "--from", "continue:earliest", "--to", "latest", "--sink", url,
                "--job", "c"};
        CliRun first = run(command);
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(total(first, 1)).isEqualTo(10);
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        var before = json.readTree(CliRun.of("status", "--job", "c", "--sink", url, "--format", "json").out());
        Orders.produce(kafka, "run-continue", 10, 2); // 20 more, whenever the next run comes
        CliRun second = run(command);
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(second.err()).contains("run 2");
        assertThat(total(second, 1)).as("read exactly what came since").isEqualTo(20);
        var after = json.readTree(CliRun.of("status", "--job", "c", "--sink", url, "--format", "json").out());
        for (int i = 0; i < 2; i++) {
            assertThat(after.path("partitions").get(i).path("start").asLong())
                    .isEqualTo(before.path("partitions").get(i).path("end").asLong());
        }
        CliRun third = run(command);
        assertThat(third.exitCode()).as(third.err()).isZero();
        assertThat(total(third, 1)).isZero();
        CliRun bare = run("--topic", "run-continue", "--from", "continue", "--to", "latest", "--sink", url);
        assertThat(bare.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bare.err()).contains("continue needs the first run's start, continue:BOUND");
        CliRun onTo = run("--topic", "run-continue", "--from", "earliest", "--to", "continue:latest", "--sink", url);
        assertThat(onTo.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(onTo.err()).contains("continue is a --from only");
    }

    /** A column of the summary's total line: 1 = read. */
    private static long total(CliRun run, int column) {
        return Long.parseLong(run.out().lines().filter(l -> l.startsWith("total")).findFirst().orElseThrow()
                .trim().split("\\s+")[column]);
    }

    @Test
    void aRateLimitHoldsTheReaderToItsRate() throws Exception {
        kafka.createTopic("run-rate", 1, Map.of());
        Orders.produce(kafka, "run-rate", 300, 1);
        String url = sqlite("rate");
        long started = System.nanoTime();
        CliRun limited = run("--topic", "run-rate", "--from", "earliest", "--to", "latest", "--sink", url,
                "--max-records-per-second", "100");
        double seconds = (System.nanoTime() - started) / 1e9;
        assertThat(limited.exitCode()).as(limited.err()).isZero();
        // a second's burst, then 100 records a second: 300 records cannot take less than two seconds
        assertThat(seconds).isGreaterThanOrEqualTo(2.0);
        assertThat(Orders.table(url, "run_rate")).hasSize(300);
        CliRun bad = run("--topic", "run-rate", "--from", "earliest", "--to", "latest", "--sink", url,
                "--max-bytes-per-second", "fast");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.err()).contains("invalid --max-bytes-per-second 'fast'");
    }

    @Test
    void statusShowsProgressAndResetForgetsTheJob() throws Exception {
        kafka.createTopic("run-status", 2, Map.of());
        Orders.produce(kafka, "run-status", 4, 2);
        String url = sqlite("status");
        assertThat(run("--topic", "run-status", "--from", "earliest", "--to", "latest", "--sink", url, "--job", "s")
                .exitCode()).isZero();
        CliRun status = CliRun.of("status", "--job", "s", "--sink", url);
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).contains("job s run 1: complete, 100.0% (0 of 8 offsets left)")
                .contains("request --topic run-status --from earliest --to latest")
                .contains("bound to destination table run_status, engine local, key-fields (the record key), key-format string, "
                        + "on-conflict newer-wins, on-tombstone delete, strict-time false, value-format json");
        CliRun jobs = CliRun.of("jobs", "--sink", url);
        assertThat(jobs.exitCode()).as(jobs.err()).isZero();
        // each job with the target it writes: the table, in the database of --sink
        assertThat(jobs.out()).containsPattern("(?m)^s +1 +complete +0 +run-status +table run_status$");
        assertThat(jobs.err()).as("a database's jobs are read without contacting a cluster")
                .doesNotContain("no --bootstrap-server");
        assertThat(CliRun.of("jobs", "--sink", url, "--format", "json").out())
                .contains("{\"job\":\"s\",\"run\":1,\"complete\":true,\"offsetsLeft\":0,\"topic\":\"run-status\",\"engine\":\"local\",\"target\":\"table run_status\"}");
        CliRun json = CliRun.of("status", "--job", "s", "--sink", url, "--format", "json");
        assertThat(json.exitCode()).as(json.err()).isZero();
        var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.out());
        assertThat(doc.path("job").asText()).isEqualTo("s");
        assertThat(doc.path("complete").asBoolean()).isTrue();
        assertThat(doc.path("offsetsLeft").asLong()).isZero();
        assertThat(doc.path("spec").path("engine").asText()).isEqualTo("local");
        assertThat(doc.path("partitions")).hasSize(2);
        assertThat(doc.path("partitions").get(0).path("next").asLong()).isEqualTo(4);
        CliRun refused = CliRun.of("reset", "--job", "s", "--sink", url);
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(refused.err()).contains("needs --yes");
        CliRun reset = CliRun.of("reset", "--job", "s", "--sink", url, "--yes");
        assertThat(reset.exitCode()).as(reset.err()).isZero();
        assertThat(CliRun.of("status", "--job", "s", "--sink", url).exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(Orders.table(url, "run_status")).hasSize(4);
    }

    @Test
    void sinkProblemsAreClearErrorsAndWriteNothing() throws Exception {
        kafka.createTopic("run-errors", 1, Map.of());
        Orders.produce(kafka, "run-errors", 3, 1);
        String[] range = {"--topic", "run-errors", "--from", "earliest", "--to", "latest"};

        CliRun badUrl = run(CliRun.concat(range, "--sink", "mongodb://db/x"));
        assertThat(badUrl.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(badUrl.err()).startsWith("kbackfill run: invalid --sink 'mongodb://db/x': expected ")
                .contains("jdbc:postgresql://HOST[:PORT]/DB").contains("delta:PATH").contains("kafka:TOPIC");

        CliRun notDelta = run(CliRun.concat(range, "--sink", "jdbc:sqlite:" + dir.resolve("not-delta.db"),
                "--delta-table-property", "delta.enableDeletionVectors=false"));
        assertThat(notDelta.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(notDelta.err()).isEqualTo("kbackfill run: invalid --table-property 'delta.enableDeletionVectors': "
                + "it is for --sink delta:... and iceberg:... only, not jdbc:sqlite:\n");
        assertThat(dir.resolve("not-delta.db")).doesNotExist();

        CliRun noDriver = run(CliRun.concat(range, "--sink", "jdbc:nosuchdb://db/x"));
        assertThat(noDriver.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noDriver.err()).contains("no JDBC driver for it");

        // an unreachable database on first contact: exit 1 at once naming it (--retry-for retries a run under way)
        CliRun unreachable = run(CliRun.concat(range, "--sink", "jdbc:postgresql://127.0.0.1:1/x?user=u&password=secret",
                "--retry-for", "5m"));
        assertThat(unreachable.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(unreachable.err()).doesNotContain("retrying");
        assertThat(unreachable.errLines().get(unreachable.errLines().size() - 1))
                .startsWith("kbackfill run: cannot connect to jdbc:postgresql://127.0.0.1:1/x")
                .contains("on first contact: not retried");
        assertThat(unreachable.err()).doesNotContain("secret");

        String pg = SharedPostgres.newDatabase("run_errors");
        CliRun missing = runAsIs(CliRun.concat(range, "--sink", pg, "--table", "nope"));
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(missing.err()).contains("table nope does not exist").contains("--create-table");

        try (Connection c = DriverManager.getConnection(pg); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE typed (kafka_key text PRIMARY KEY, status integer, n bigint, amount numeric, "
                    + "order_id text, kafka_partition int, kafka_offset bigint, kafka_timestamp timestamptz, "
                    + "kafka_log_time timestamptz)");
        }
        CliRun mismatch = runAsIs(CliRun.concat(range, "--sink", pg, "--table", "typed"));
        assertThat(mismatch.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(mismatch.errLines().get(mismatch.errLines().size() - 1))
                .startsWith("kbackfill run: partition 0 offset 0: table typed cannot hold it")
                .contains("value 's0' does not fit column status (int4)")
                .contains("--on-error skip or --dead-letter keep such records aside")
                .contains("stopped with partition 0 at offset 0");
        assertThat(Orders.count(pg, "SELECT count(*) FROM typed")).isZero();
        assertThat(Orders.count(pg, "SELECT sum(next_offset) FROM kbackfill_progress")).isZero();
    }

    private static String dump(String url, String sql) throws Exception {
        StringBuilder sb = new StringBuilder();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    sb.append(rs.getString(i)).append('|');
                }
                sb.append('\n');
            }
        }
        return sb.toString();
    }
}
