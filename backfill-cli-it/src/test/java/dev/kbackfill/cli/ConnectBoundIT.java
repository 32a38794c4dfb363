package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * {@code connect:NAME} against a real Kafka Connect worker: a sink connector whose group is not {@code connect-NAME}
 * ({@code consumer.override.group.id}) is found through the worker's REST API ({@code --connect-url}, KIP-875's
 * {@code GET /connectors/NAME/offsets}), its progress bounds plan, inspect and run, and neither the connector nor its
 * group is changed.
 */
class ConnectBoundIT {

    private static final String TOPIC = "cli-connect";

    @Test
    void aConnectSinksProgressFromItsWorkerBoundsTheRecordsItHasNotTaken() throws Exception {
        EmbeddedKafka kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of());
        produce(kafka, 0, 20);
        try (ConnectWorker worker = new ConnectWorker(kafka.bootstrapServers(), Map.of("name", "orders-sink",
                "topics", TOPIC, "consumer.override.group.id", "orders-sink-custom"))) {
            String offsets = "/connectors/orders-sink/offsets";
            worker.await(offsets, body -> body.contains("\"kafka_partition\":0") && body.contains("\"kafka_partition\":1")
                    && body.split("\"kafka_offset\":10\\b", -1).length == 3);
            worker.put("/connectors/orders-sink/stop"); // KIP-875: stopped, its offsets kept
            worker.await("/connectors/orders-sink/status", body -> body.contains("\"STOPPED\""));
            produce(kafka, 20, 10); // five more a partition, not taken
            String url = worker.url();
            Map<TopicPartition, OffsetAndMetadata> before;
            try (var admin = kafka.admin()) {
                before = admin.listConsumerGroupOffsets("orders-sink-custom").partitionsToOffsetAndMetadata().get();
            }
            assertThat(before).hasSize(2);

            CliRun plan = plan(kafka, "--topic", TOPIC, "--from", "connect:orders-sink", "--connect-url", url, "--to",
                    "latest", "--format", "json");
            assertThat(plan.exitCode()).as(plan.err()).isZero();
            assertThat(ranges(plan.out())).containsExactly("0:10..15", "1:10..15");
            assertThat(plan.err()).contains("read from Kafka Connect at " + url);
            // the group the worker really uses says the same
            CliRun group = plan(kafka, "--topic", TOPIC, "--from", "group:orders-sink-custom", "--to", "latest",
                    "--format", "json");
            assertThat(group.exitCode()).as(group.err()).isZero();
            assertThat(ranges(group.out())).containsExactly("0:10..15", "1:10..15");
            // without the worker, connect:NAME reads group connect-NAME, which this connector does not use
            CliRun guessed = plan(kafka, "--topic", TOPIC, "--from", "connect:orders-sink", "--to", "latest");
            assertThat(guessed.exitCode()).as(guessed.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(guessed.err().strip().lines()).hasSize(1);
            assertThat(guessed.err()).contains("group connect-orders-sink has no committed offset on topic " + TOPIC)
                    .contains("ask its worker with --connect-url");

            CliRun inspect = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC,
                    "--at", "connect:orders-sink", "--connect-url", url);
            assertThat(inspect.exitCode()).as(inspect.err()).isZero();
            // the printed command runs as printed: the cluster and the worker as this one was given them
            assertThat(inspect.out()).contains("'kbackfill --topic " + TOPIC + " --from connect:orders-sink "
                    + "--bootstrap-server " + kafka.bootstrapServers() + " --connect-url " + url
                    + " --to latest' backfills the 10 records behind");

            CliRun named = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "connect:orders-sink",
                    "--connect-url", url); // the topic from the connector's offsets
            assertThat(named.exitCode()).as(named.err()).isZero();
            assertThat(named.out()).isEqualTo(inspect.out());

            Path db = Files.createTempDirectory("kbackfill-connect").resolve("missed.db");
            CliRun run = CliRun.of("run", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC, "--from",
                    "connect:orders-sink", "--connect-url", url, "--to", "latest", "--sink", "jdbc:sqlite:" + db,
                    "--table", "missed", "--create-table", "--progress", "none");
            assertThat(run.exitCode()).as(run.err()).isZero();
            List<String> keys = new ArrayList<>();
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
                 ResultSet rs = c.createStatement().executeQuery("SELECT kafka_key FROM missed")) {
                while (rs.next()) {
                    keys.add(rs.getString(1));
                }
            }
            List<String> expected = new ArrayList<>();
            for (int i = 20; i < 30; i++) {
                expected.add("k" + i);
            }
            assertThat(keys).containsExactlyInAnyOrderElementsOf(expected);

            // bad input is one line and exit 2; a worker that does not answer is a failure (exit 1)
            CliRun unknown = plan(kafka, "--topic", TOPIC, "--from", "connect:nobody", "--connect-url", url, "--to",
                    "latest");
            assertThat(unknown.exitCode()).as(unknown.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(unknown.err().strip().lines()).hasSize(1);
            assertThat(unknown.err()).contains("Kafka Connect at " + url + " says:").contains("nobody");
            CliRun scheme = plan(kafka, "--topic", TOPIC, "--from", "connect:orders-sink", "--connect-url",
                    "ftp://connect:8083", "--to", "latest");
            assertThat(scheme.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(scheme.err().strip()).isEqualTo("kbackfill plan: invalid --connect-url 'ftp://connect:8083': "
                    + "expected a Kafka Connect worker's REST address, http://HOST:PORT or https://HOST:PORT");
            CliRun away = plan(kafka, "--topic", TOPIC, "--from", "connect:orders-sink", "--connect-url",
                    "http://127.0.0.1:1", "--to", "latest");
            assertThat(away.exitCode()).as(away.err()).isEqualTo(ExitCodes.FAILURE);
            assertThat(away.err()).contains("Kafka Connect at http://127.0.0.1:1 did not answer");

            // nothing of the connector changed: its offsets, its group's
            worker.await(offsets, body -> body.split("\"kafka_offset\":10\\b", -1).length == 3);
            try (var admin = kafka.admin()) {
                assertThat(admin.listConsumerGroupOffsets("orders-sink-custom").partitionsToOffsetAndMetadata()
                        .get()).isEqualTo(before);
            }
        }
    }

    private static CliRun plan(EmbeddedKafka kafka, String... extra) {
        List<String> args = new ArrayList<>(List.of("plan", "--bootstrap-server", kafka.bootstrapServers()));
        args.addAll(List.of(extra));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static List<String> ranges(String planJson) throws Exception {
        List<String> ranges = new ArrayList<>();
        for (JsonNode r : new ObjectMapper().readTree(planJson).path("partitions")) {
            ranges.add(r.path("partition").asInt() + ":" + r.path("start").asLong() + ".." + r.path("end").asLong());
        }
        return ranges;
    }

    private static void produce(EmbeddedKafka kafka, int from, int count) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of("bootstrap.servers",
                kafka.bootstrapServers(), "acks", "all"), new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                p.send(new ProducerRecord<>(TOPIC, i % 2, "k" + i, "{\"n\":" + i + "}"));
            }
        }
    }
}
