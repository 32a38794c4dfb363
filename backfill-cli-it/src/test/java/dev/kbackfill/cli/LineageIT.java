package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * --lineage sends OpenLineage run events (spec 2-0-2) to a real HTTP endpoint the test starts, or appends them to a
 * file: START then COMPLETE (or FAIL), each with the spec's required fields, the topic as input and the target as
 * output named by OpenLineage's conventions, the offset ranges, the rows written and --verify's result.
 */
class LineageIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aRunIntoPostgresSendsStartAndCompleteToTheLineageEndpoint() throws Exception {
        EmbeddedKafka kafka = SharedKafka.get();
        kafka.createTopic("lineage-orders", 2, Map.of());
        Orders.produce(kafka, "lineage-orders", 30, 3);
        String url = SharedPostgres.newDatabase("lineage");
        List<String> bodies = Collections.synchronizedList(new ArrayList<>());
        List<String> paths = Collections.synchronizedList(new ArrayList<>());
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            paths.add(exchange.getRequestURI().getPath() + " " + exchange.getRequestHeaders().getFirst("Content-Type"));
            bodies.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            exchange.sendResponseHeaders(201, -1);
            exchange.close();
        });
        server.start();
        try {
            CliRun r = CliRun.run(kafka, "--topic", "lineage-orders", "--from", "earliest", "--to", "latest", "--sink",
                    url, "--table", "orders", "--create-table", "--job", "lineage-job", "--verify", "--lineage",
                    "http://127.0.0.1:" + server.getAddress().getPort());
            assertThat(r.exitCode()).as(r.err()).isZero();
        } finally {
            server.stop(0);
        }
        assertThat(paths).containsOnly("/api/v1/lineage application/json");
        assertThat(bodies).hasSize(2);
        JsonNode start = JSON.readTree(bodies.get(0));
        JsonNode complete = JSON.readTree(bodies.get(1));
        requireRunEvent(start, "START");
        requireRunEvent(complete, "COMPLETE");
        assertThat(complete.path("run").path("runId")).isEqualTo(start.path("run").path("runId"));

        String database = url.substring(url.lastIndexOf('/') + 1).split("\\?")[0];
        JsonNode output = complete.path("outputs").get(0);
        assertThat(output.path("namespace").asText()).matches("postgres://(localhost|127\\.0\\.0\\.1):\\d+");
        assertThat(output.path("name").asText()).isEqualTo(database + ".public.orders");
        JsonNode input = complete.path("inputs").get(0);
        assertThat(input.path("namespace").asText()).isEqualTo("kafka://" + kafka.bootstrapServers().split(",")[0]);
        assertThat(input.path("name").asText()).isEqualTo("lineage-orders");
        assertThat(output.path("outputFacets").path("outputStatistics").path("rowCount").asLong()).isEqualTo(30);
        JsonNode assertion = output.path("facets").path("dataQualityAssertions").path("assertions").get(0);
        assertThat(assertion.path("success").asBoolean()).isTrue();
        JsonNode ranges = complete.path("run").path("facets").path("kbackfill_offsetRanges");
        assertThat(ranges.path("topic").asText()).isEqualTo("lineage-orders");
        long offsets = 0;
        for (JsonNode p : ranges.path("partitions")) {
            offsets += p.path("end").asLong() - p.path("start").asLong();
        }
        assertThat(offsets).isEqualTo(90);
        assertThat(start.path("outputs").get(0).has("outputFacets")).as("rows are counted when the run ends").isFalse();
    }

    @Test
    void aFailedRunSendsFailWithItsErrorToAFile() throws Exception {
        EmbeddedKafka kafka = SharedKafka.get();
        kafka.createTopic("lineage-poison", 1, Map.of());
        Orders.send(kafka, List.of(new org.apache.kafka.clients.producer.ProducerRecord<>("lineage-poison", null,
                Orders.T0.toEpochMilli(), "k1".getBytes(StandardCharsets.UTF_8),
                "not json".getBytes(StandardCharsets.UTF_8))), Map.of());
        Path events = dir.resolve("lineage.jsonl");
        CliRun r = CliRun.run(kafka, "--topic", "lineage-poison", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("poison.db"), "--table", "t", "--create-table", "--lineage",
                events.toString());
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.FAILURE);
        List<String> lines = Files.readAllLines(events);
        assertThat(lines).hasSize(2);
        requireRunEvent(JSON.readTree(lines.get(0)), "START");
        JsonNode fail = JSON.readTree(lines.get(1));
        requireRunEvent(fail, "FAIL");
        JsonNode error = fail.path("run").path("facets").path("errorMessage");
        assertThat(error.path("message").asText()).contains("lineage-poison/0@0");
        assertThat(error.path("programmingLanguage").asText()).isEqualTo("JAVA");
        assertThat(fail.path("outputs").get(0).path("namespace").asText())
                .isEqualTo("sqlite://" + dir.resolve("poison.db").toAbsolutePath());
    }

    /** What OpenLineage 2-0-2 requires of a RunEvent, and of every facet ({@code _producer}, {@code _schemaURL}). */
    private static void requireRunEvent(JsonNode e, String type) {
        assertThat(e.path("eventType").asText()).isEqualTo(type);
        assertThat(e.path("schemaURL").asText()).isEqualTo("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent");
        assertThat(java.time.Instant.parse(e.path("eventTime").asText())).isNotNull();
        assertThat(java.net.URI.create(e.path("producer").asText()).getScheme()).isNotBlank();
        assertThat(UUID.fromString(e.path("run").path("runId").asText())).isNotNull();
        assertThat(e.path("job").path("namespace").asText()).isEqualTo("kbackfill");
        assertThat(e.path("job").path("name").asText()).isNotBlank();
        for (String side : List.of("inputs", "outputs")) {
            assertThat(e.path(side).isArray() && e.path(side).size() == 1).as(side).isTrue();
            assertThat(e.path(side).get(0).path("namespace").asText()).isNotBlank();
            assertThat(e.path(side).get(0).path("name").asText()).isNotBlank();
        }
        List<JsonNode> facets = new ArrayList<>();
        e.path("run").path("facets").forEach(facets::add);
        e.path("job").path("facets").forEach(facets::add);
        e.path("outputs").get(0).path("facets").forEach(facets::add);
        e.path("outputs").get(0).path("outputFacets").forEach(facets::add);
        assertThat(facets).isNotEmpty().allSatisfy(f -> {
            assertThat(java.net.URI.create(f.path("_producer").asText()).getScheme()).isNotBlank();
            assertThat(java.net.URI.create(f.path("_schemaURL").asText()).getScheme()).isNotBlank();
        });
    }
}
