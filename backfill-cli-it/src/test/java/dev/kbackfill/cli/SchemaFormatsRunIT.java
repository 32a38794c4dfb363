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
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.ConfluentFraming;
import dev.kbackfill.testservices.SharedPostgres;
import dev.kbackfill.testservices.SharedRegistry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Protobuf and JSON Schema in the Confluent wire format with a real schema registry (Apicurio's Confluent API): two
 * schema versions in one range, a reference, a poison record, into PostgreSQL, MariaDB, SQLite, Delta, Iceberg and a
 * topic. Protobuf bodies are written field by field with protobuf's own encoder, independently of the decoder's
 * schema parser.
 */
@Tag("formats")
class SchemaFormatsRunIT {

    static final String CUSTOMER_PROTO = """
            syntax = "proto3";
            package common;
            message Customer { string name = 1; repeated string tags = 2; }
            """;
    static final String ORDER_V1 = """
            syntax = "proto3";
            package shop;
            import "google/protobuf/timestamp.proto";
            import "confluent/type/decimal.proto";
            import "customer.proto";

            message Order {
              string id = 1;
              int64 qty = 2;
              google.protobuf.Timestamp placed_at = 3;
              Status status = 4;
              common.Customer customer = 6;
              confluent.type.Decimal amount = 7;
              enum Status { NEW = 0; PACKED = 1; SHIPPED = 2; }
            }
            """;
    static final String ORDER_V2 = ORDER_V1.replace("  common.Customer customer = 6;\n",
            "  string channel = 5;\n  common.Customer customer = 6;\n");

    static final String CUSTOMER_JSON = """
            {"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}""";
    static final String PAYMENT_V1 = """
            {"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{
              "id":{"type":"string","format":"uuid"},
              "amount":{"type":"number"},
              "qty":{"type":"integer","minimum":0},
              "paid_at":{"type":"string","format":"date-time"},
              "customer":{"$ref":"customer.json"}},
             "required":["id","qty"]}""";
    static final String PAYMENT_V2 = PAYMENT_V1.replace("\"qty\":{", "\"day\":{\"type\":\"string\",\"format\":\"date\"},\"qty\":{");

    private static EmbeddedKafka kafka;
    private static String registry;
    private static int orderV1;
    private static int orderV2;
    private static int paymentV1;
    private static int paymentV2;

    @TempDir
    Path dir;

    @BeforeAll
    static void services() {
        kafka = SharedKafka.get();
        registry = SharedRegistry.url();
        SharedRegistry.register("pb-customer", "PROTOBUF", CUSTOMER_PROTO, null);
        String pbRefs = "[{\"name\":\"customer.proto\",\"subject\":\"pb-customer\",\"version\":1}]";
        orderV1 = SharedRegistry.register("pb-orders-value", "PROTOBUF", ORDER_V1, pbRefs);
        orderV2 = SharedRegistry.register("pb-orders-value", "PROTOBUF", ORDER_V2, pbRefs);
        SharedRegistry.register("js-customer", "JSON", CUSTOMER_JSON, null);
        String jsRefs = "[{\"name\":\"customer.json\",\"subject\":\"js-customer\",\"version\":1}]";
        paymentV1 = SharedRegistry.register("js-payments-value", "JSON", PAYMENT_V1, jsRefs);
        paymentV2 = SharedRegistry.register("js-payments-value", "JSON", PAYMENT_V2, jsRefs);
    }

    private static byte[] message(ConfluentFraming.ProtobufBody body) {
        return ConfluentFraming.protobufMessage(body);
    }

    /** Confluent's Protobuf framing of the first message type. */
    private static byte[] protobuf(int id, byte[] body) {
        return ConfluentFraming.protobuf(id, new int[] {0}, body);
    }

    private static byte[] order(int id, String orderId, long qty, int status, String channel, String amount) {
        return order(id, orderId, qty, status, channel, amount, "Ann");
    }

    private static byte[] order(int id, String orderId, long qty, int status, String channel, String amount,
                                String customer) {
        return protobuf(id, message(out -> {
            out.writeString(1, orderId);
            out.writeInt64(2, qty);
            out.writeByteArray(3, message(t -> t.writeInt64(1, Instant.parse("2024-01-01T10:00:00Z").getEpochSecond()
                    + qty)));
            out.writeEnum(4, status);
            if (channel != null) {
                out.writeString(5, channel);
            }
            out.writeByteArray(6, message(c -> c.writeString(1, customer)));
            BigDecimal a = new BigDecimal(amount);
            out.writeByteArray(7, message(d -> {
                d.writeByteArray(1, a.unscaledValue().toByteArray());
                d.writeInt32(3, a.scale());
            }));
        }));
    }

    private static byte[] json(int id, String json) {
        return ConfluentFraming.jsonSchema(id, json);
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, byte[] value) {
        return new ProducerRecord<>(topic, 0, Instant.parse("2024-01-01T00:00:00Z").toEpochMilli(),
                key.getBytes(StandardCharsets.UTF_8), value);
    }

    private static CliRun run(String format, String... args) {
        List<String> all = new ArrayList<>(List.of("--value-format", format, "--schema-registry-url", registry,
                "--create-table"));
        all.addAll(List.of(args));
        return CliRun.run(kafka, all.toArray(String[]::new));
    }

    private static Map<String, String> columnTypes(Statement s, String table) throws Exception {
        Map<String, String> types = new TreeMap<>();
        try (ResultSet rs = s.executeQuery("SELECT column_name, data_type FROM information_schema.columns "
                + "WHERE table_name = '" + table + "'")) {
            while (rs.next()) {
                types.put(rs.getString(1), rs.getString(2));
            }
        }
        return types;
    }

    private static void sendOrders(String topic) throws Exception {
        kafka.createTopic(topic, 1, Map.of());
        byte[] poison = protobuf(orderV1, new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
        Orders.send(kafka, List.of(
                record(topic, "o1", order(orderV1, "o1", 2, 0, null, "10.50")),
                record(topic, "o2", order(orderV1, "o2", 1, 1, null, "0.01")),
                record(topic, "o3", poison),
                record(topic, "o1", order(orderV2, "o1", 3, 2, "web", "1234567.89"))), Map.of());
    }

    @Test
    void protobufVersionsAndAReferenceLandAsTypedColumnsAPoisonRecordIsCounted() throws Exception {
        sendOrders("pb-orders");
        String url = SharedPostgres.newDatabase("pb_pg");
        CliRun r = run("protobuf", "--topic", "pb-orders", "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "orders", "--on-error", "skip");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).contains("1 record(s) could not be decoded and were skipped (--on-error skip)");
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            assertThat(columnTypes(s, "orders")).containsEntry("id", "text").containsEntry("qty", "bigint")
                    .containsEntry("placed_at", "timestamp with time zone").containsEntry("status", "text")
                    .containsEntry("channel", "text").containsEntry("customer", "jsonb")
                    .containsEntry("amount", "numeric");
            try (ResultSet rs = s.executeQuery("SELECT kafka_key, qty, placed_at, status, channel, customer::text, "
                    + "amount::text FROM orders ORDER BY kafka_key")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("o1");
                assertThat(rs.getLong(2)).as("the v2 record, last in the range").isEqualTo(3);
                assertThat(rs.getObject(3, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2024-01-01T10:00:03Z"));
                assertThat(rs.getString(4)).isEqualTo("SHIPPED");
                assertThat(rs.getString(5)).isEqualTo("web");
                assertThat(rs.getString(6)).isEqualTo("{\"name\": \"Ann\", \"tags\": []}");
                assertThat(rs.getString(7)).isEqualTo("1234567.89");
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("o2");
                assertThat(rs.getString(4)).isEqualTo("PACKED");
                assertThat(rs.getString(5)).as("a v1 record has no channel").isNull();
                assertThat(rs.getString(7)).isEqualTo("0.01");
                assertThat(rs.next()).isFalse();
            }
        }

        Path letters = dir.resolve("dead.jsonl");
        CliRun sqlite = run("protobuf", "--topic", "pb-orders", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("orders.db"), "--table", "orders", "--dead-letter", letters.toString());
        assertThat(sqlite.exitCode()).as(sqlite.err()).isZero();
        assertThat(Files.readAllLines(letters)).singleElement().asString()
                .contains("\"topic\":\"pb-orders\",\"partition\":0,\"offset\":2")
                .contains("body does not match message shop.Order of schema id " + orderV1);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("orders.db"));
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT kafka_key, qty, status, channel, amount FROM orders ORDER BY kafka_key")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("o1");
            assertThat(rs.getLong(2)).isEqualTo(3);
            assertThat(rs.getString(3)).isEqualTo("SHIPPED");
            assertThat(rs.getString(4)).isEqualTo("web");
            assertThat(new BigDecimal(rs.getString(5))).isEqualByComparingTo("1234567.89");
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("o2");
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void protobufLandsInDeltaWithDeltaTypes() throws Exception {
        sendOrders("pb-delta");
        String path = dir.resolve("orders-delta").toString();
        CliRun r = run("protobuf", "--topic", "pb-delta", "--from", "earliest", "--to", "latest", "--sink",
                "delta:" + path, "--on-error", "skip");
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<Map<String, Object>> rows = new ArrayList<>(dev.kbackfill.sink.delta.DeltaTableRows.rows(path));
        rows.sort(java.util.Comparator.comparing(m -> (String) m.get("kafka_key")));
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0).get("qty")).isEqualTo(3L);
        assertThat(rows.get(0).get("placed_at")).isEqualTo(Instant.parse("2024-01-01T10:00:03Z").toEpochMilli() * 1000);
        assertThat(rows.get(0).get("channel")).isEqualTo("web");
        assertThat((BigDecimal) rows.get(0).get("amount")).isEqualByComparingTo("1234567.89");
        assertThat(rows.get(1).get("channel")).isNull();
        assertThat(rows.get(1).get("status")).isEqualTo("PACKED");
    }

    /**
     * The issue's acceptance case: a Protobuf topic from the registry, a field added halfway (v2's channel), and a
     * {@code --where} on a nested field, into every sink: the same rows everywhere, the rest counted as filtered.
     */
    @Test
    void aWhereOnANestedProtobufFieldLandsTheSameRowsInEverySink() throws Exception {
        String topic = "pb-where";
        kafka.createTopic(topic, 1, Map.of());
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(List.of(
                record(topic, "o1", order(orderV1, "o1", 1, 0, null, "1.00", "Ann")),
                record(topic, "o2", order(orderV1, "o2", 2, 0, null, "2.00", "Bob")),
                record(topic, "o4", order(orderV1, "o4", 4, 0, null, "4.00", "Ann")),
                record(topic, "o1", order(orderV2, "o1", 5, 1, "web", "5.00", "Ann")),
                record(topic, "o2", order(orderV2, "o2", 6, 1, "web", "6.00", "Bob")),
                record(topic, "o5", order(orderV2, "o5", 7, 2, "app", "7.00", "Ann"))));
        records.add(new ProducerRecord<>(topic, 0, (Long) Instant.parse("2024-01-01T00:00:00Z").toEpochMilli(),
                "o4".getBytes(StandardCharsets.UTF_8), (byte[]) null));
        Orders.send(kafka, records, Map.of());
        String where = "value == null || value.customer.name == 'Ann'";
        Map<String, Long> expected = Map.of("o1", 5L, "o5", 7L);

        String url = SharedPostgres.newDatabase("pb_where");
        CliRun pg = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "orders", "--where", where, "--job", "pb-where-pg");
        assertThat(pg.exitCode()).as(pg.err()).isZero();
        assertThat(pg.out()).containsPattern("total +7 +\\d+ +\\d+ +\\d+ +2 ");
        assertThat(jdbcRows(url, "orders", "kafka_key", "qty")).isEqualTo(expected);
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT channel FROM orders WHERE kafka_key = 'o5'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).as("the field v2 added").isEqualTo("app");
        }

        String maria = dev.kbackfill.testservices.SharedMariaDb.newDatabase("pb_where");
        CliRun m = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", maria,
                "--table", "orders", "--where", where);
        assertThat(m.exitCode()).as(m.err()).isZero();
        assertThat(jdbcRows(maria, "orders", "kafka_key", "qty")).isEqualTo(expected);

        String sqlite = "jdbc:sqlite:" + dir.resolve("where.db");
        CliRun mapped = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", sqlite,
                "--table", "orders", "--where", where, "--columns", "qty,channel", "--rename", "qty=quantity",
                "--rename", "kafka_key=order_id");
        assertThat(mapped.exitCode()).as(mapped.err()).isZero();
        assertThat(jdbcRows(sqlite, "orders", "order_id", "quantity")).isEqualTo(expected);
        try (Connection c = DriverManager.getConnection(sqlite); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM orders")) {
            List<String> columns = new ArrayList<>();
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                columns.add(rs.getMetaData().getColumnName(i));
            }
            assertThat(columns).contains("order_id", "quantity", "channel").doesNotContain("qty", "status", "customer",
                    "kafka_key");
        }

        // verify folds the range through the same filter and mapping: the mapped table agrees, a changed row does not
        List<String> verifyArgs = List.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--topic", topic,
                "--from", "earliest", "--to", "latest", "--sink", sqlite, "--table", "orders", "--value-format",
                "protobuf", "--schema-registry-url", registry, "--where", where, "--columns", "qty,channel", "--rename",
                "qty=quantity", "--rename", "kafka_key=order_id");
        CliRun agrees = CliRun.of(verifyArgs.toArray(String[]::new));
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        try (Connection c = DriverManager.getConnection(sqlite); Statement s = c.createStatement()) {
            s.execute("UPDATE orders SET quantity = 99 WHERE order_id = 'o5'");
        }
        CliRun differs = CliRun.of(verifyArgs.toArray(String[]::new));
        assertThat(differs.exitCode()).as(differs.out() + differs.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(differs.out()).contains("o5");

        String delta = dir.resolve("where-delta").toString();
        CliRun lake = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "delta:" + delta, "--where", where);
        assertThat(lake.exitCode()).as(lake.err()).isZero();
        Map<String, Long> deltaRows = new TreeMap<>();
        dev.kbackfill.sink.delta.DeltaTableRows.rows(delta).forEach(r -> deltaRows.put((String) r.get("kafka_key"),
                (Long) r.get("qty")));
        assertThat(deltaRows).isEqualTo(expected);

        String iceberg = dir.resolve("where-iceberg").toString();
        CliRun ice = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "iceberg:" + iceberg, "--where", where);
        assertThat(ice.exitCode()).as(ice.err()).isZero();
        Map<String, Long> icebergRows = new TreeMap<>();
        org.apache.iceberg.Table table = new org.apache.iceberg.hadoop.HadoopTables(
                new org.apache.hadoop.conf.Configuration()).load(iceberg);
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> rows =
                     org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
            rows.forEach(r -> icebergRows.put((String) r.getField("kafka_key"), (Long) r.getField("qty")));
        }
        assertThat(icebergRows).isEqualTo(expected);

        kafka.createTopic("pb-where-target", 1, Map.of("cleanup.policy", "compact"));
        CliRun copy = CliRun.run(kafka, "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "kafka:pb-where-target", "--key-format", "string", "--value-format", "protobuf",
                "--schema-registry-url", registry, "--where", where);
        assertThat(copy.exitCode()).as(copy.err()).isZero();
        Map<String, Boolean> live = new TreeMap<>();
        readToEnd("pb-where-target", r -> live.put(new String(r.key(), StandardCharsets.UTF_8), r.value() != null));
        assertThat(live).as("Bob's records are not copied; the delete is").isEqualTo(Map.of("o1", true, "o5", true,
                "o4", false));

        CliRun changed = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "orders", "--job", "pb-where-pg", "--where", "value == null || value.qty > 1");
        assertThat(changed.exitCode()).isEqualTo(ExitCodes.JOB_CONFLICT);
        assertThat(changed.err()).contains("where").contains("value.qty > 1");

        CliRun bad = run("protobuf", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("bad.db"), "--table", "orders", "--where", "value.customer.name = 'Ann'");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.errLines()).hasSize(1);
        assertThat(bad.err()).contains("invalid --where 'value.customer.name = 'Ann'': at column 21:");
        assertThat(dir.resolve("bad.db")).doesNotExist();
    }

    private static Map<String, Long> jdbcRows(String url, String table, String key, String column) throws Exception {
        Map<String, Long> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + key + ", " + column + " FROM " + table)) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getLong(2));
            }
        }
        return rows;
    }

    @Test
    void jsonSchemaRecordsAreTypedByTheirSchemaAndValidatedWhenAsked() throws Exception {
        kafka.createTopic("js-payments", 1, Map.of());
        String id1 = "6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11";
        String id2 = "0a5f6a43-9d2e-4c57-8b33-77aa1cfa2d02";
        Orders.send(kafka, List.of(
                record("js-payments", "p1", json(paymentV1, "{\"id\":\"" + id1 + "\",\"amount\":10,\"qty\":1,"
                        + "\"paid_at\":\"2024-01-01T10:00:00+02:00\",\"customer\":{\"name\":\"Ann\"}}")),
                record("js-payments", "p2", json(paymentV1, "{\"id\":\"" + id2 + "\",\"amount\":0.5,\"qty\":-4,"
                        + "\"paid_at\":\"2024-01-02T00:00:00Z\"}")),
                record("js-payments", "p1", json(paymentV2, "{\"id\":\"" + id1 + "\",\"amount\":12.25,\"qty\":2,"
                        + "\"day\":\"2024-01-03\",\"customer\":{\"name\":\"Ann\"}}"))), Map.of());

        String url = SharedPostgres.newDatabase("js_pg");
        CliRun r = run("json-schema", "--topic", "js-payments", "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "payments");
        assertThat(r.exitCode()).as(r.err()).isZero();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            assertThat(columnTypes(s, "payments")).containsEntry("id", "uuid").containsEntry("amount", "numeric")
                    .containsEntry("qty", "bigint").containsEntry("paid_at", "timestamp with time zone")
                    .containsEntry("day", "date").containsEntry("customer", "jsonb");
            try (ResultSet rs = s.executeQuery("SELECT kafka_key, amount::text, qty, day::text, paid_at FROM payments "
                    + "ORDER BY kafka_key")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(2)).isEqualTo("12.25");
                assertThat(rs.getLong(3)).isEqualTo(2);
                assertThat(rs.getString(4)).isEqualTo("2024-01-03");
                assertThat(rs.getObject(5)).as("a v2 record without paid_at").isNull();
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(3)).as("without --validate a record breaking 'minimum' lands").isEqualTo(-4);
                assertThat(rs.getObject(5, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2024-01-02T00:00:00Z"));
            }
        }

        CliRun failing = run("json-schema", "--topic", "js-payments", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("strict.db"), "--table", "payments", "--validate");
        assertThat(failing.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(failing.errLines().get(failing.errLines().size() - 1))
                .startsWith("kbackfill run: cannot decode js-payments/0@1: the value does not match schema id " + paymentV1)
                .contains("/qty must have a minimum value of 0").contains("stopped with partition 0 at offset 0");

        CliRun skipping = run("json-schema", "--topic", "js-payments", "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("skip.db"), "--table", "payments", "--validate", "--on-error", "skip");
        assertThat(skipping.exitCode()).as(skipping.err()).isZero();
        assertThat(skipping.err()).contains("1 record(s) could not be decoded and were skipped (--on-error skip)");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("skip.db"));
             Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT kafka_key FROM payments")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("p1");
            assertThat(rs.next()).isFalse();
        }
    }

    /**
     * JSON Schema into the sinks the PostgreSQL test above does not reach: two schema versions (v2 adds {@code day}),
     * the reference, and a record {@code --validate} refuses, skipped under {@code --on-error skip}; MariaDB, Delta
     * and Iceberg hold the same typed rows, and a topic sink copies exactly the records that decode and validate.
     */
    @Test
    void jsonSchemaLandsTheSameTypedRowsInMariaDbDeltaIcebergAndATopic() throws Exception {
        String topic = "js-every";
        kafka.createTopic(topic, 1, Map.of());
        Orders.send(kafka, List.of(
                record(topic, "p1", json(paymentV1, "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\",\"amount\":10,"
                        + "\"qty\":1,\"paid_at\":\"2024-01-01T10:00:00+02:00\",\"customer\":{\"name\":\"Ann\"}}")),
                record(topic, "p2", json(paymentV1, "{\"id\":\"0a5f6a43-9d2e-4c57-8b33-77aa1cfa2d02\",\"amount\":0.5,"
                        + "\"qty\":-4}")),
                record(topic, "p1", json(paymentV2, "{\"id\":\"6f1c2a4e-1b7e-4e53-9a55-0d6f8a3f2b11\",\"amount\":12.25,"
                        + "\"qty\":2,\"day\":\"2024-01-03\",\"customer\":{\"name\":\"Ann\"}}")),
                record(topic, "p3", json(paymentV2, "{\"id\":\"1b2c3d4e-0000-4000-8000-000000000003\",\"amount\":3,"
                        + "\"qty\":3,\"day\":\"2024-01-04\",\"customer\":{\"name\":\"Bob\"}}"))), Map.of());
        // key -> amount|qty|day (days since the epoch where a lake stores them)
        Map<String, String> expected = Map.of("p1", "12.25|2|2024-01-03", "p3", "3|3|2024-01-04");
        String[] request = {"--topic", topic, "--from", "earliest", "--to", "latest", "--validate", "--on-error", "skip"};

        String maria = dev.kbackfill.testservices.SharedMariaDb.newDatabase("js_every");
        CliRun m = run("json-schema", CliRun.concat(request, "--sink", maria, "--table", "payments"));
        assertThat(m.exitCode()).as(m.err()).isZero();
        assertThat(m.err()).contains("1 record(s) could not be decoded and were skipped (--on-error skip)");
        Map<String, String> mariaRows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(maria); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT kafka_key, amount, qty, day, customer FROM payments")) {
                while (rs.next()) {
                    mariaRows.put(rs.getString(1), rs.getBigDecimal(2).stripTrailingZeros().toPlainString() + "|"
                            + rs.getLong(3) + "|" + rs.getDate(4).toLocalDate());
                    assertThat(rs.getString(5)).contains("\"name\"");
                }
            }
            try (ResultSet rs = s.executeQuery("SELECT column_name, data_type FROM information_schema.columns WHERE "
                    + "table_schema = DATABASE() AND table_name = 'payments'")) {
                Map<String, String> types = new TreeMap<>();
                while (rs.next()) {
                    types.put(rs.getString(1), rs.getString(2).toLowerCase(java.util.Locale.ROOT));
                }
                assertThat(types).containsEntry("qty", "bigint").containsEntry("amount", "decimal")
                        .containsEntry("day", "date").containsEntry("id", "char");
            }
        }
        assertThat(mariaRows).isEqualTo(expected);

        String delta = dir.resolve("js-delta").toString();
        CliRun d = run("json-schema", CliRun.concat(request, "--sink", "delta:" + delta));
        assertThat(d.exitCode()).as(d.err()).isZero();
        Map<String, String> deltaRows = new TreeMap<>();
        dev.kbackfill.sink.delta.DeltaTableRows.rows(delta).forEach(r -> deltaRows.put((String) r.get("kafka_key"),
                ((BigDecimal) r.get("amount")).stripTrailingZeros().toPlainString() + "|" + r.get("qty") + "|"
                        + java.time.LocalDate.ofEpochDay(((Number) r.get("day")).longValue())));
        assertThat(deltaRows).isEqualTo(expected);

        String iceberg = dir.resolve("js-iceberg").toString();
        CliRun i = run("json-schema", CliRun.concat(request, "--sink", "iceberg:" + iceberg));
        assertThat(i.exitCode()).as(i.err()).isZero();
        Map<String, String> icebergRows = new TreeMap<>();
        org.apache.iceberg.Table table = new org.apache.iceberg.hadoop.HadoopTables(
                new org.apache.hadoop.conf.Configuration()).load(iceberg);
        assertThat(table.schema().findType("day")).isEqualTo(org.apache.iceberg.types.Types.DateType.get());
        assertThat(table.schema().findType("id")).isEqualTo(org.apache.iceberg.types.Types.StringType.get());
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> rows =
                     org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
            rows.forEach(r -> icebergRows.put((String) r.getField("kafka_key"),
                    ((BigDecimal) r.getField("amount")).stripTrailingZeros().toPlainString() + "|" + r.getField("qty")
                            + "|" + r.getField("day")));
        }
        assertThat(icebergRows).isEqualTo(expected);

        kafka.createTopic("js-every-copy", 1, Map.of("cleanup.policy", "compact"));
        CliRun copy = CliRun.run(kafka, CliRun.concat(request, "--sink", "kafka:js-every-copy", "--value-format", "json-schema",
                "--schema-registry-url", registry));
        assertThat(copy.exitCode()).as(copy.err()).isZero();
        List<String> copied = new ArrayList<>();
        readToEnd("js-every-copy", r -> copied.add(new String(r.key(), StandardCharsets.UTF_8)));
        assertThat(copied).as("the newest record of each valid key, the invalid one left out").containsExactlyInAnyOrder("p1", "p3");
    }

    /** Every record of partition 0 of a topic, read from its start to its end. */
    private static void readToEnd(String topic,
                                  java.util.function.Consumer<org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]>> each) {
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> c =
                     new org.apache.kafka.clients.consumer.KafkaConsumer<>(kafka.clientConfig(),
                             new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                             new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < deadline && c.position(tp) < c.endOffsets(List.of(tp)).get(tp)) {
                c.poll(java.time.Duration.ofMillis(200)).forEach(each);
            }
        }
    }

    @Test
    void badFormatOptionsAreOneLineAndExitTwo() {
        CliRun noUrl = CliRun.of("run", "--topic", "x", "--from", "earliest", "--to", "latest", "--value-format",
                "protobuf", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(noUrl.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noUrl.err()).contains("--value-format protobuf needs --schema-registry-url");
        CliRun validate = CliRun.of("run", "--topic", "x", "--from", "earliest", "--to", "latest", "--validate",
                "--bootstrap-server", kafka.bootstrapServers());
        assertThat(validate.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(validate.err()).contains("--validate checks JSON Schema records: it needs --key-format or "
                + "--value-format json-schema");
        CliRun unknown = CliRun.of("run", "--topic", "x", "--from", "earliest", "--to", "latest", "--value-format",
                "thrift", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unknown.err()).contains("invalid --value-format 'thrift': expected bytes, string, json, avro, "
                + "protobuf or json-schema");
    }
}
