package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kbackfill.embedded.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker with tiered storage (KIP-405) on Kafka's own file-system remote store ({@code LocalTieredStorage}): the
 * topic's segments are uploaded and deleted from local disk (the last one rolled by local retention too), so the
 * range lies in remote storage only. The plan says how much of each range the broker reads from the remote store; a run reads it all,
 * exactly, and verify agrees.
 */
@Tag("kafka")
class TieredStorageIT {

    private static final String TOPIC = "tiered";
    private static final int BATCHES = 4;
    private static final int PER_BATCH = 50;
    private static EmbeddedKafka kafka;
    private static Path remote;
    private static long localStart;

    @TempDir
    Path dir;

    @BeforeAll
    static void brokerWithRemoteStorage() throws Exception {
        remote = Files.createTempDirectory("kbackfill-remote-");
        Map<String, String> broker = new HashMap<>();
        broker.put("remote.log.storage.system.enable", "true");
        broker.put("remote.log.storage.manager.class.name",
                "org.apache.kafka.server.log.remote.storage.LocalTieredStorage");
        broker.put("remote.log.storage.manager.impl.prefix", "rsm.config.");
        broker.put("rsm.config.dir", remote.toString());
        broker.put("remote.log.metadata.manager.listener.name", "PLAINTEXT");
        broker.put("remote.log.metadata.manager.impl.prefix", "rlmm.config.");
        broker.put("rlmm.config.remote.log.metadata.topic.replication.factor", "1");
        broker.put("rlmm.config.remote.log.metadata.topic.num.partitions", "1");
        broker.put("remote.log.manager.task.interval.ms", "300");
        broker.put("log.retention.check.interval.ms", "300");
        kafka = EmbeddedKafka.start(broker);
        // a segment per batch (rolled by time), uploaded once rolled, then gone from local disk at once
        kafka.createTopic(TOPIC, 1, Map.of("remote.storage.enable", "true", "retention.ms", "-1",
                "local.retention.ms", "1", "segment.ms", "500"));
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(kafka.clientConfig(), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int b = 0; b < BATCHES; b++) {
                for (int i = 0; i < PER_BATCH; i++) {
                    int n = b * PER_BATCH + i;
                    String key = String.format(Locale.ROOT, "k%05d", n);
                    p.send(new ProducerRecord<>(TOPIC, 0, null, key.getBytes(StandardCharsets.UTF_8),
                            Orders.json(key, b).getBytes(StandardCharsets.UTF_8)));
                }
                p.flush();
                Thread.sleep(700);
            }
        }
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        try (Admin admin = kafka.admin()) {
            while (true) {
                long earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset();
                localStart = admin.listOffsets(Map.of(tp, OffsetSpec.earliestLocal())).partitionResult(tp).get()
                        .offset();
                // every segment uploaded and deleted locally, the last one rolled by local retention
                if (earliest == 0 && localStart == BATCHES * PER_BATCH) {
                    break;
                }
                assertThat(System.nanoTime()).as("segments uploaded and gone from local disk (earliest %d, earliest "
                        + "local %d)", earliest, localStart).isLessThan(deadline);
                Thread.sleep(300);
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void aRangeFromTheBeginningIsPlannedWithItsRemotePartAndReadWholeFromTheRemoteStore() throws Exception {
        assertThat(Files.walk(remote).filter(f -> f.toString().endsWith(".log")).count())
                .as("segments in the remote store").isPositive();
        CliRun plan = CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC, "--from",
                "earliest", "--to", "latest");
        assertThat(plan.exitCode()).as(plan.out() + plan.err()).isZero();
        assertThat(plan.out() + plan.err()).contains("offsets 0 to " + localStart + " (" + localStart + " of the range's "
                + BATCHES * PER_BATCH + ") are in tiered storage, below offset " + localStart)
                .contains("bytes not estimated (part of the range is in tiered storage");

        String url = "jdbc:sqlite:" + dir.resolve("tiered.db");
        CliRun run = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--create-table", "--verify");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("verify: AGREES");
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*), min(kafka_offset), max(kafka_offset) FROM t")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(BATCHES * PER_BATCH);
            assertThat(rs.getLong(2)).isZero();
            assertThat(rs.getLong(3)).isEqualTo(BATCHES * PER_BATCH - 1);
        }
    }
}
