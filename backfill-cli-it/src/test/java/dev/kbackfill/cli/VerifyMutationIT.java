package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.ShapeTopic;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kbackfill verify} never agrees with a wrong table: after a backfill of a random topic ({@link ShapeTopic},
 * with its mapping options), one cell at a time is changed by hand, in every column in turn (a value, a header or
 * renamed column, a metadata column: versions moved older) of a random row, then a row is deleted and a row
 * of a key the range deleted is added; verify must disagree (exit 4) with each change, and agree again once it is
 * undone. Last, rows changed and deleted at random are fixed by {@code kbackfill repair}, and verify agrees.
 */
@Tag("kafka")
class VerifyMutationIT {

    static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    abstract class OnDatabase {
        abstract String url(String name);

        @Test
        void verifyFindsEveryCellChangedEveryRowDeletedAndEveryRowAddedByHand() throws Exception {
            long seed = 91 + getClass().getSimpleName().hashCode() % 100;
            String topic = "mutation-" + getClass().getSimpleName().toLowerCase(Locale.ROOT);
            kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
            Orders.send(kafka, ShapeTopic.records(topic, seed, 30), Map.of());
            // and a key the range surely ends in a delete
            Orders.send(kafka, List.of(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, "gone".getBytes(),
                    "{\"s\":\"here\"}".getBytes()), new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0,
                    "gone".getBytes(), (byte[]) null)), Map.of());
            List<String> options = new ArrayList<>(List.of("--where", "value == null || !has(value.opt) || value.opt "
                    + "!= 'o1'", "--rename", "opt=option", "--header-columns", "src"));
            String url = url("mutation");
            List<String> run = new ArrayList<>(List.of("--topic", topic, "--from", "earliest", "--to", "latest",
                    "--sink", url, "--table", "t", "--create-table", "--on-error", "skip", "--batch-size", "7"));
            run.addAll(options);
            CliRun backfill = CliRun.run(kafka, run.toArray(String[]::new));
            assertThat(backfill.exitCode()).as(backfill.err()).isZero();
            List<String> verify = new ArrayList<>(List.of("verify", "--bootstrap-server", kafka.bootstrapServers(),
                    "--progress", "none", "--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                    "--table", "t"));
            verify.addAll(options);
            String[] verifyArgs = verify.toArray(String[]::new);
            assertThat(CliRun.of(verifyArgs).exitCode()).as("the backfill agrees").isZero();
            Random random = new Random(seed);
            try (Connection c = DriverManager.getConnection(url)) {
                List<Map.Entry<String, List<Object>>> rows = rows(c);
                List<String> columns = columns(c);
                for (int col = 0; col < columns.size(); col++) {
                    Map.Entry<String, List<Object>> row = rows.get(random.nextInt(rows.size()));
                    if (columns.get(col).equals("kafka_key")) {
                        continue;
                    }
                    Object before = row.getValue().get(col);
                    Object after = changed(columns.get(col), type(c, col), before);
                    set(c, row.getKey(), columns.get(col), col, after);
                    CliRun found = CliRun.of(verifyArgs);
                    assertThat(found.exitCode()).as("%s of %s: %s -> %s%n%s", columns.get(col), row.getKey(), before,
                            after, found.out()).isEqualTo(ExitCodes.DISAGREES);
                    assertThat(found.out()).contains("{kafka_key=" + row.getKey() + "}");
                    set(c, row.getKey(), columns.get(col), col, before);
                }
                assertThat(CliRun.of(verifyArgs).exitCode()).as("every change undone").isZero();
                // a time moved by a microsecond, finer than the milliseconds a run writes
                for (String time : List.of("kafka_timestamp", "kafka_log_time")) {
                    int col = columns.indexOf(time);
                    Map.Entry<String, List<Object>> row = rows.get(random.nextInt(rows.size()));
                    Object before = row.getValue().get(col);
                    set(c, row.getKey(), time, col, microsecondLater(before));
                    CliRun found = CliRun.of(verifyArgs);
                    assertThat(found.exitCode()).as("%s of %s a microsecond later%n%s", time, row.getKey(), found.out())
                            .isEqualTo(ExitCodes.DISAGREES);
                    assertThat(found.out()).contains("different {kafka_key=" + row.getKey() + "}").contains(time);
                    set(c, row.getKey(), time, col, before);
                }
                // a row's version raised to another key's record of the range, and a cell changed
                int offset = columns.indexOf("kafka_offset");
                int partition = columns.indexOf("kafka_partition");
                // the first row of a partition, raised to the version of the last row of the same partition
                List<Map.Entry<String, List<Object>>> ofPartition = rows.stream().filter(r ->
                        ((Number) r.getValue().get(partition)).intValue() == 0).sorted(java.util.Comparator.comparingLong(
                        r -> ((Number) r.getValue().get(offset)).longValue())).toList();
                Map.Entry<String, List<Object>> raised = ofPartition.get(0);
                Map.Entry<String, List<Object>> other = ofPartition.get(ofPartition.size() - 1);
                int cell = columns.indexOf("option") >= 0 ? columns.indexOf("option") : columns.indexOf("src");
                set(c, raised.getKey(), "kafka_partition", partition, other.getValue().get(partition));
                set(c, raised.getKey(), "kafka_offset", offset, other.getValue().get(offset));
                set(c, raised.getKey(), columns.get(cell), cell, changed(columns.get(cell), type(c, cell),
                        raised.getValue().get(cell)));
                CliRun claimed = CliRun.of(verifyArgs);
                assertThat(claimed.exitCode()).as("a raised version%n%s", claimed.out()).isEqualTo(ExitCodes.DISAGREES);
                assertThat(claimed.out()).contains("{kafka_key=" + raised.getKey() + "}");
                set(c, raised.getKey(), "kafka_partition", partition, raised.getValue().get(partition));
                set(c, raised.getKey(), "kafka_offset", offset, raised.getValue().get(offset));
                set(c, raised.getKey(), columns.get(cell), cell, raised.getValue().get(cell));
                assertThat(CliRun.of(verifyArgs).exitCode()).as("every change undone").isZero();
                Map.Entry<String, List<Object>> gone = rows.get(random.nextInt(rows.size()));
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM t WHERE kafka_key = ?")) {
                    ps.setString(1, gone.getKey());
                    ps.executeUpdate();
                }
                CliRun missing = CliRun.of(verifyArgs);
                assertThat(missing.exitCode()).isEqualTo(ExitCodes.DISAGREES);
                assertThat(missing.out()).contains("missing {kafka_key=" + gone.getKey() + "}");
                insert(c, columns, gone.getKey(), gone.getValue());
                assertThat(CliRun.of(verifyArgs).exitCode()).isZero();
                List<String> deleted = deletedKeys(c);
                assertThat(deleted).as("the topic ends some keys in a delete").isNotEmpty();
                insert(c, columns, deleted.get(0), gone.getValue());
                CliRun extra = CliRun.of(verifyArgs);
                assertThat(extra.exitCode()).isEqualTo(ExitCodes.DISAGREES);
                assertThat(extra.out()).contains("extra {kafka_key=" + deleted.get(0) + "}");
                // and by hand again, at random: a cell of each of three rows changed, one row deleted; then repaired
                List<Map.Entry<String, List<Object>>> now = rows(c);
                for (int i = 0; i < 3; i++) {
                    Map.Entry<String, List<Object>> row = now.get(random.nextInt(now.size()));
                    int col = random.nextInt(columns.size());
                    if (!columns.get(col).equals("kafka_key")) {
                        set(c, row.getKey(), columns.get(col), col, changed(columns.get(col), type(c, col),
                                row.getValue().get(col)));
                    }
                }
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM t WHERE kafka_key = ?")) {
                    ps.setString(1, now.get(random.nextInt(now.size())).getKey());
                    ps.executeUpdate();
                }
                List<String> repair = new ArrayList<>(verify);
                repair.set(0, "repair");
                CliRun repaired = CliRun.of(repair.toArray(String[]::new));
                assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
                assertThat(repaired.out()).contains("AGREES: the ");
                assertThat(CliRun.of(verifyArgs).exitCode()).as("repaired").isZero();
            }
        }
    }

    private static List<Map.Entry<String, List<Object>>> rows(Connection c) throws Exception {
        List<Map.Entry<String, List<Object>>> rows = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM t")) {
            while (rs.next()) {
                List<Object> values = new ArrayList<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    values.add(rs.getObject(i));
                }
                rows.add(Map.entry(rs.getString("kafka_key"), values));
            }
        }
        return rows;
    }

    private static List<String> columns(Connection c) throws Exception {
        List<String> names = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM t WHERE 1 = 0")) {
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                names.add(rs.getMetaData().getColumnName(i).toLowerCase(Locale.ROOT));
            }
        }
        return names;
    }

    private static int type(Connection c, int column) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM t WHERE 1 = 0")) {
            ResultSetMetaData md = rs.getMetaData();
            int t = md.getColumnType(column + 1);
            String name = md.getColumnTypeName(column + 1).toLowerCase(Locale.ROOT);
            return name.equals("boolean") || name.equals("bool") || name.equals("tinyint") && md.getPrecision(column + 1) == 1
                    ? Types.BOOLEAN : t;
        }
    }

    /**
     * Another value for a cell: text changed, a number less by one, a boolean flipped, a time a second earlier (a
     * version older: stale, never taken for a newer one), NULL given a value; the topic column sorts before its name.
     */
    private static Object changed(String column, int type, Object v) {
        if (column.equals("kafka_timestamp") || column.equals("kafka_log_time")) {
            if (v instanceof String s) {
                return "1999" + s.substring(4); // SQLite keeps times as fixed-width text
            }
            if (v instanceof java.time.OffsetDateTime t) {
                return t.minusSeconds(1);
            }
            if (v instanceof java.sql.Timestamp t) {
                return new java.sql.Timestamp(t.getTime() - 1000);
            }
            if (v instanceof java.time.LocalDateTime t) {
                return t.minusSeconds(1);
            }
        }
        if (type == Types.BOOLEAN || type == Types.BIT) {
            return !(v instanceof Boolean b ? b : v instanceof Number n && n.intValue() != 0);
        }
        if (v instanceof Number n) {
            return new BigDecimal(n.toString()).subtract(BigDecimal.ONE);
        }
        if (v == null) {
            return switch (type) {
                case Types.BIGINT, Types.INTEGER, Types.NUMERIC, Types.DECIMAL, Types.DOUBLE, Types.REAL -> BigDecimal.TEN;
                default -> type == Types.OTHER ? "{\"mutated\":true}" : "mutated";
            };
        }
        String s = v.toString();
        if (type == Types.OTHER) {
            return "{\"mutated\":true}"; // jsonb
        }
        return column.equals("kafka_topic") ? "A" + s : s + "x";
    }

    /** A stored time a microsecond later, in the form the column holds it. */
    private static Object microsecondLater(Object v) {
        if (v instanceof String s) { // SQLite: fixed-width text with six fraction digits
            java.time.Instant t = java.time.Instant.parse(s).plusNanos(1_000);
            return java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
                    .withZone(java.time.ZoneOffset.UTC).format(t);
        }
        if (v instanceof java.time.OffsetDateTime t) {
            return t.plusNanos(1_000);
        }
        if (v instanceof java.sql.Timestamp t) {
            java.sql.Timestamp later = new java.sql.Timestamp(t.getTime());
            later.setNanos(t.getNanos() + 1_000);
            return later;
        }
        if (v instanceof java.time.LocalDateTime t) {
            return t.plusNanos(1_000);
        }
        throw new IllegalStateException("a time of type " + (v == null ? null : v.getClass()));
    }

    private static void set(Connection c, String key, String column, int index, Object value) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("UPDATE t SET " + column + " = ? WHERE kafka_key = ?")) {
            bind(c, ps, 1, index, value);
            ps.setString(2, key);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    private static void bind(Connection c, PreparedStatement ps, int at, int column, Object value) throws Exception {
        int type = type(c, column);
        if (value == null) {
            ps.setNull(at, type == Types.BOOLEAN ? Types.BOOLEAN : Types.NULL);
        } else if (type == Types.OTHER) {
            ps.setObject(at, value.toString(), Types.OTHER);
        } else {
            ps.setObject(at, value);
        }
    }

    private static void insert(Connection c, List<String> columns, String key, List<Object> values) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (" + String.join(", ", columns) + ") VALUES ("
                + "?, ".repeat(columns.size() - 1) + "?)")) {
            for (int i = 0; i < columns.size(); i++) {
                bind(c, ps, i + 1, i, columns.get(i).equals("kafka_key") ? key : values.get(i));
            }
            ps.executeUpdate();
        }
    }

    /** Keys the range ends in a delete, as the tombstone ledger beside the table records them. */
    private static List<String> deletedKeys(Connection c) throws Exception {
        List<String> keys = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT kafka_key FROM t_kbackfill_deletes")) {
            while (rs.next()) {
                keys.add(rs.getString(1));
            }
        }
        return keys;
    }

    /**
     * SQLite keeps a value in whatever storage class it is given: the text 'true' in a BOOLEAN column (the sink writes
     * 1) and a blob X'' in a TEXT column (the sink writes '') are not what a run writes, whatever their text.
     */
    @Test
    void aSqliteValueInAStorageClassTheSinkNeverWritesIsDifferent() throws Exception {
        String topic = "mutation-storage-class";
        kafka.createTopic(topic, 1, Map.of("retention.ms", "-1"));
        Orders.send(kafka, List.of(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, "k".getBytes(),
                "{\"flag\":true,\"note\":\"\"}".getBytes())), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("storage.db");
        String[] range = {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url, "--table", "t"};
        assertThat(CliRun.run(kafka, CliRun.concat(range, "--create-table")).exitCode()).isZero();
        String[] verify = CliRun.concat(new String[] {"verify", "--bootstrap-server", kafka.bootstrapServers(),
                "--progress", "none"}, range);
        assertThat(CliRun.of(verify).exitCode()).isZero();
        for (String[] change : new String[][] {{"flag", "'true'", "1"}, {"note", "X''", "''"}}) {
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
                s.execute("UPDATE t SET " + change[0] + " = " + change[1]);
            }
            CliRun found = CliRun.of(verify);
            assertThat(found.exitCode()).as(found.out()).isEqualTo(ExitCodes.DISAGREES);
            assertThat(found.out()).contains("different {kafka_key=k}").contains("differs in " + change[0]);
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
                s.execute("UPDATE t SET " + change[0] + " = " + change[2]);
            }
            assertThat(CliRun.of(verify).exitCode()).as("put back").isZero();
        }
    }

    @Nested
    class Sqlite extends OnDatabase {
        @Override
        String url(String name) {
            return "jdbc:sqlite:" + dir.resolve(name + ".db");
        }
    }

    @Nested
    @Tag("postgresql")
    class Postgres extends OnDatabase {
        @Override
        String url(String name) {
            return SharedPostgres.newDatabase(name + "_pg");
        }
    }

    @Nested
    @Tag("mariadb")
    class MariaDb extends OnDatabase {
        @Override
        String url(String name) {
            return SharedMariaDb.newDatabase(name + "_maria");
        }
    }
}
