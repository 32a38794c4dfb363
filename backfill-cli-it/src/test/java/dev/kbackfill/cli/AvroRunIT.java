package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.ConfluentFraming;
import dev.kbackfill.testservices.SharedPostgres;
import dev.kbackfill.testservices.SharedRegistry;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Avro in the Confluent wire format, with a real schema registry (Apicurio), into PostgreSQL and SQLite. */
@Tag("avro")
class AvroRunIT {

    static final String V1 = """
            {"type":"record","name":"Payment","namespace":"shop","fields":[
              {"name":"id","type":{"type":"string","logicalType":"uuid"}},
              {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
              {"name":"paid_at","type":{"type":"long","logicalType":"timestamp-millis"}},
              {"name":"settled_at","type":["null",{"type":"long","logicalType":"timestamp-micros"}],"default":null},
              {"name":"day","type":{"type":"int","logicalType":"date"}},
              {"name":"cutoff","type":{"type":"int","logicalType":"time-millis"}},
              {"name":"note","type":["null","string"],"default":null},
              {"name":"ship_to","type":"shop.Address"},
              {"name":"lines","type":{"type":"array","items":"string"}}
            ]}""";
    static final String V2 = V1.replace("""
              {"name":"note","type":["null","string"],"default":null},""", """
              {"name":"channel","type":["null","string"],"default":null},""");
    static final String ADDRESS = """
            {"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"},
             {"name":"zip","type":["null","string"],"default":null}]}""";
    static final String REFS = "[{\"name\":\"shop.Address\",\"subject\":\"shop-address\",\"version\":1}]";

    private static EmbeddedKafka kafka;
    private static String registry;
    private static Schema v1;
    private static Schema v2;
    private static int v1Id;
    private static int v2Id;

    @TempDir
    Path dir;

    @BeforeAll
    static void services() {
        kafka = SharedKafka.get();
        registry = SharedRegistry.url();
        SharedRegistry.register("shop-address", ADDRESS, null);
        v1Id = SharedRegistry.register("avro-payments-value", V1, REFS);
        v2Id = SharedRegistry.register("avro-payments-value", V2, REFS);
        Schema.Parser parser = new Schema.Parser();
        parser.parse(ADDRESS);
        v1 = parser.parse(V1);
        Schema.Parser parser2 = new Schema.Parser();
        parser2.parse(ADDRESS);
        v2 = parser2.parse(V2);
    }

    private static GenericRecord payment(Schema schema, String id, String amount, int day, String extra) {
        GenericRecord address = new GenericData.Record(schema.getField("ship_to").schema());
        address.put("city", "Lyon");
        address.put("zip", null);
        GenericRecord p = new GenericData.Record(schema);
        p.put("id", UUID.fromString(id));
        p.put("amount", new BigDecimal(amount));
        p.put("paid_at", Instant.parse("2024-01-01T10:15:30.123Z").plusSeconds(day));
        p.put("settled_at", Instant.parse("2024-01-02T00:00:00.000001Z"));
        p.put("day", LocalDate.parse("2024-01-01").plusDays(day));
        p.put("cutoff", LocalTime.parse("17:30:00.250"));
        p.put(schema.getField("note") != null ? "note" : "channel", extra);
        p.put("ship_to", address);
        p.put("lines", List.of("a", "b"));
        return p;
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, byte[] value) {
        return new ProducerRecord<>(topic, 0, Instant.parse("2024-01-01T00:00:00Z").toEpochMilli(),
                key.getBytes(StandardCharsets.UTF_8), value);
    }

    private static CliRun run(String... args) {
        List<String> all = new ArrayList<>(List.of("--value-format", "avro", "--schema-registry-url", registry,
                "--create-table"));
        all.addAll(List.of(args));
        return CliRun.run(kafka, all.toArray(String[]::new));
    }

    @Test
    void logicalTypesReferencesAndEvolutionLandAsTypedColumnsInPostgresql() throws Exception {
        kafka.createTopic("avro-payments", 1, Map.of());
        String id1 = "6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11";
        String id2 = "0a5f6a43-9d2e-4c57-8b33-77aa1cfa2d02";
        Orders.send(kafka, List.of(
                record("avro-payments", "p1", ConfluentFraming.frame(v1Id, v1, payment(v1, id1, "1234567890.05", 0, "first"))),
                record("avro-payments", "p2", ConfluentFraming.frame(v1Id, v1, payment(v1, id2, "0.10", 1, null))),
                record("avro-payments", "p1", ConfluentFraming.frame(v2Id, v2, payment(v2, id1, "99.99", 2, "web")))),
                Map.of());
        String url = SharedPostgres.newDatabase("avro_pg");
        CliRun r = run("--topic", "avro-payments", "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "payments");
        assertThat(r.exitCode()).as(r.err()).isZero();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            Map<String, String> types = new java.util.TreeMap<>();
            try (ResultSet rs = s.executeQuery("SELECT column_name, data_type FROM information_schema.columns "
                    + "WHERE table_name = 'payments'")) {
                while (rs.next()) {
                    types.put(rs.getString(1), rs.getString(2));
                }
            }
            assertThat(types).containsEntry("id", "uuid").containsEntry("amount", "numeric")
                    .containsEntry("paid_at", "timestamp with time zone").containsEntry("day", "date")
                    .containsEntry("cutoff", "time without time zone").containsEntry("ship_to", "jsonb")
                    .containsEntry("note", "text").containsEntry("channel", "text");
            try (ResultSet rs = s.executeQuery("SELECT kafka_key, id::text, amount::text, paid_at, settled_at, day::text, "
                    + "cutoff::text, note, channel, ship_to::text, lines::text FROM payments ORDER BY kafka_key")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("p1");
                assertThat(rs.getString(2)).isEqualTo(id1);
                assertThat(rs.getString(3)).isEqualTo("99.99");
                assertThat(rs.getObject(4, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2024-01-01T10:15:32.123Z"));
                assertThat(rs.getObject(5, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2024-01-02T00:00:00.000001Z"));
                assertThat(rs.getString(6)).isEqualTo("2024-01-03");
                assertThat(rs.getString(7)).isEqualTo("17:30:00.25");
                assertThat(rs.getString(8)).as("a field removed in v2 is null").isNull();
                assertThat(rs.getString(9)).isEqualTo("web");
                assertThat(rs.getString(10)).isEqualTo("{\"zip\": null, \"city\": \"Lyon\"}");
                assertThat(rs.getString(11)).isEqualTo("[\"a\", \"b\"]");
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(3)).isEqualTo("0.10");
                assertThat(rs.getString(8)).isNull();
                assertThat(rs.getString(9)).isNull();
            }
        }
    }

    @Test
    void logicalTypesLandInDeltaAsDeltaTypes() throws Exception {
        kafka.createTopic("avro-delta", 1, Map.of());
        String id1 = "6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11";
        Orders.send(kafka, List.of(
                record("avro-delta", "p1", ConfluentFraming.frame(v1Id, v1, payment(v1, id1, "1234567890.05", 0, "first"))),
                record("avro-delta", "p1", ConfluentFraming.frame(v1Id, v1, payment(v1, id1, "99.99", 2, "second")))),
                Map.of());
        String path = dir.resolve("payments-delta").toString();
        CliRun r = run("--topic", "avro-delta", "--from", "earliest", "--to", "latest", "--sink", "delta:" + path,
                "--job", "avro-delta");
        assertThat(r.exitCode()).as(r.err()).isZero();
        CliRun status = CliRun.of("status", "--job", "avro-delta", "--sink", "delta:" + path);
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).contains("job avro-delta run 1: complete, 100.0% (0 of 2 offsets left)");
        List<Map<String, Object>> rows = dev.kbackfill.sink.delta.DeltaTableRows.rows(path);
        assertThat(rows).hasSize(1);
        Map<String, Object> row = rows.get(0);
        assertThat(row.get("id")).isEqualTo(id1);
        assertThat((BigDecimal) row.get("amount")).isEqualByComparingTo("99.99");
        assertThat(row.get("paid_at")).isEqualTo(Instant.parse("2024-01-01T10:15:32.123Z").toEpochMilli() * 1000);
        assertThat(row.get("settled_at")).as("micros survive").isEqualTo(Instant.parse("2024-01-02T00:00:00.000001Z")
                .getEpochSecond() * 1_000_000 + 1);
        assertThat(row.get("day")).isEqualTo((int) LocalDate.parse("2024-01-03").toEpochDay());
        assertThat(row.get("cutoff")).isEqualTo("17:30:00.250");
        assertThat(row.get("note")).isEqualTo("second");
        assertThat(row.get("ship_to")).isEqualTo("{\"city\":\"Lyon\",\"zip\":null}");
        assertThat(row.get("lines")).isEqualTo("[\"a\",\"b\"]");
    }

    @Test
    void poisonRecordsFailByDefaultAndCanBeSkippedOrDeadLettered() throws Exception {
        kafka.createTopic("avro-poison", 1, Map.of());
        String id = "6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11";
        byte[] good = ConfluentFraming.frame(v1Id, v1, payment(v1, id, "1.00", 0, null));
        byte[] badMagic = good.clone();
        badMagic[0] = 1;
        byte[] unknownId = good.clone();
        unknownId[1] = 0x7f;
        byte[] truncated = java.util.Arrays.copyOf(good, 9);
        Orders.send(kafka, List.of(record("avro-poison", "a", good), record("avro-poison", "b", badMagic),
                record("avro-poison", "c", unknownId), record("avro-poison", "d", truncated),
                record("avro-poison", "e", good)), Map.of());

        CliRun failing = run("--topic", "avro-poison", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("fail.db"), "--job", "fail");
        assertThat(failing.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(failing.errLines().get(failing.errLines().size() - 1))
                .startsWith("kbackfill run: cannot decode avro-poison/0@1: the value starts with byte 0x01")
                .contains("stopped with partition 0 at offset 0");

        CliRun skipping = run("--topic", "avro-poison", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("skip.db"), "--job", "skip", "--on-error", "skip");
        assertThat(skipping.exitCode()).as(skipping.err()).isZero();
        assertThat(skipping.out()).containsPattern("total +5 +2 +0 +0 +0 +3 +0");
        assertThat(skipping.err()).contains("3 record(s) could not be decoded and were skipped (--on-error skip)");

        Path letters = dir.resolve("dead.jsonl");
        CliRun toFile = run("--topic", "avro-poison", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("file.db"), "--job", "file", "--dead-letter", letters.toString());
        assertThat(toFile.exitCode()).as(toFile.err()).isZero();
        List<String> lines = Files.readAllLines(letters);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).contains("\"topic\":\"avro-poison\",\"partition\":0,\"offset\":1")
                .contains("\"key\":\"Yg==\"").contains("not the magic byte 0");
        assertThat(lines.get(1)).contains("\"offset\":2").contains("names schema id");
        assertThat(lines.get(2)).contains("\"offset\":3").contains("truncated");

        kafka.createTopic("avro-poison-dlq", 1, Map.of());
        CliRun toTopic = run("--topic", "avro-poison", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("topic.db"), "--job", "topic", "--dead-letter", "topic:avro-poison-dlq");
        assertThat(toTopic.exitCode()).as(toTopic.err()).isZero();
        List<ConsumerRecord<byte[], byte[]>> dlq = readAll("avro-poison-dlq", 3);
        assertThat(dlq).extracting(r -> new String(r.headers().lastHeader("kbackfill.source.offset").value(),
                StandardCharsets.UTF_8)).containsExactly("1", "2", "3");
        assertThat(dlq.get(0).value()).isEqualTo(badMagic);
        assertThat(new String(dlq.get(0).headers().lastHeader("kbackfill.error").value(), StandardCharsets.UTF_8))
                .contains("magic byte");
    }

    @Test
    void anUnreachableRegistryStopsTheRunWithAClearError() throws Exception {
        kafka.createTopic("avro-down", 1, Map.of());
        Orders.send(kafka, List.of(record("avro-down", "a", ConfluentFraming.frame(v1Id, v1,
                payment(v1, "6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11", "1.00", 0, null)))), Map.of());
        List<String> args = new ArrayList<>(List.of("run", "--bootstrap-server", kafka.bootstrapServers(), "--progress",
                "none", "--value-format", "avro", "--schema-registry-url", "http://127.0.0.1:1", "--topic", "avro-down",
                "--from", "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + dir.resolve("down.db"),
                "--on-error", "skip", "--create-table", "--retry-for", "1s"));
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.err()).contains("retrying in 1 s (attempt 2, --retry-for 1s)")
                .contains("the schema registry at http://127.0.0.1:1 cannot be reached for schema id "
                + v1Id).contains("stopped with partition 0 at offset 0");
        CliRun noUrl = CliRun.of("run", "--topic", "avro-down", "--from", "earliest", "--to", "latest",
                "--value-format", "avro", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(noUrl.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noUrl.err()).contains("--value-format avro needs --schema-registry-url");

        // the registry's host without its API path: not a record without a schema, even with --on-error skip
        String root = registry.replace("/apis/ccompat/v7", "");
        CliRun wrongBase = CliRun.of("run", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "none",
                "--value-format", "avro", "--schema-registry-url", root, "--topic", "avro-down", "--from", "earliest",
                "--to", "latest", "--sink", "jdbc:sqlite:" + dir.resolve("base.db"), "--on-error", "skip",
                "--create-table", "--job", "base");
        assertThat(wrongBase.exitCode()).as(wrongBase.out() + wrongBase.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(wrongBase.errLines().get(wrongBase.errLines().size() - 1))
                .contains("invalid --schema-registry-url '" + root + "'")
                .contains("is this the registry's API base URL?").doesNotContain("skipped");
        assertThat(CliRun.of("jobs", "--sink", "jdbc:sqlite:" + dir.resolve("base.db")).out()).doesNotContain("base");
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int expected) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(kafka.clientConfig(), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
