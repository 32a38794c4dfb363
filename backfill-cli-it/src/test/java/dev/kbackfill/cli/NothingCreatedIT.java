package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A run refused as bad input (exit 2), or one that fails before its first batch (the source cluster unreachable,
 * exit 1), leaves nothing behind, whatever the sink: no database file, no table, no Delta folder (nor the folders
 * above it), no target topic.
 */
@Tag("kafka")
class NothingCreatedIT {

    private static final String TOPIC = "nothing-created";
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(new ProducerRecord<>(TOPIC, 0, "k".getBytes(StandardCharsets.UTF_8),
                "{\"status\":\"s\"}".getBytes(StandardCharsets.UTF_8))), Map.of());
    }

    /** A sink kind: its options, given a fresh folder, and what it would create there. */
    interface Kind {
        List<String> options(Path dir, String name);

        /** What of the sink exists afterwards (empty: nothing). */
        List<String> leftBehind(Path dir, String name) throws Exception;
    }

    static Stream<Arguments> kinds() {
        Kind sqlite = new Kind() {
            public List<String> options(Path dir, String name) {
                return List.of("--sink", "jdbc:sqlite:" + dir.resolve(name + ".db"), "--create-table");
            }

            public List<String> leftBehind(Path dir, String name) {
                return Files.exists(dir.resolve(name + ".db")) ? List.of(name + ".db") : List.of();
            }
        };
        Kind delta = new Kind() {
            public List<String> options(Path dir, String name) {
                return List.of("--sink", "delta:" + dir.resolve("lake").resolve(name).resolve("orders"), "--create-table");
            }

            public List<String> leftBehind(Path dir, String name) throws Exception {
                try (Stream<Path> files = Files.list(dir)) {
                    return files.map(p -> p.getFileName().toString()).toList();
                }
            }
        };
        Map<String, String> urls = new java.util.concurrent.ConcurrentHashMap<>();
        Kind postgres = new Kind() {
            public List<String> options(Path dir, String name) {
                return List.of("--sink", urls.computeIfAbsent(name, n -> SharedPostgres.newDatabase("nc_" + n)),
                        "--create-table");
            }

            public List<String> leftBehind(Path dir, String name) throws Exception {
                List<String> tables = new ArrayList<>();
                try (Connection c = DriverManager.getConnection(urls.get(name));
                     ResultSet rs = c.getMetaData().getTables(null, "public", "%", new String[] {"TABLE"})) {
                    while (rs.next()) {
                        tables.add(rs.getString("TABLE_NAME"));
                    }
                }
                return tables;
            }
        };
        Kind topic = new Kind() {
            public List<String> options(Path dir, String name) {
                return List.of("--sink", "kafka:nc-" + name, "--create-topic", "--sink-bootstrap-server",
                        kafka.bootstrapServers());
            }

            public List<String> leftBehind(Path dir, String name) throws Exception {
                try (var admin = kafka.admin()) {
                    return admin.listTopics().names().get().contains("nc-" + name) ? List.of("nc-" + name) : List.of();
                }
            }
        };
        return Stream.of(Arguments.of("sqlite", sqlite), Arguments.of("delta", delta),
                Arguments.of("postgres", postgres), Arguments.of("topic", topic));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void badInputLeavesNothingBehind(String name, Kind kind, @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<String> args = new ArrayList<>(List.of("--topic", TOPIC, "--from", "offset:x", "--to", "latest"));
        args.addAll(kind.options(dir, "bad" + name));
        CliRun r = CliRun.run(kafka, args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(kind.leftBehind(dir, "bad" + name)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aFailureBeforeTheFirstBatchLeavesNothingBehind(String name, Kind kind, @org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--bootstrap-server", "127.0.0.1:1", "--connect-timeout",
                "1s", "--retry-for", "0", "--progress", "none", "--topic", TOPIC, "--from", "earliest", "--to", "latest"));
        args.addAll(kind.options(dir, "down" + name));
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(kind.leftBehind(dir, "down" + name)).isEmpty();
    }
}
