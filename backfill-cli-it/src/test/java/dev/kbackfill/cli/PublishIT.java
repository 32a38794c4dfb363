package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.SharedMariaDb;
import dev.kbackfill.testservices.SharedPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --publish-after-verify}: a rebuild goes into a shadow of the table, is verified, and only then takes the
 * table's place in one atomic step; a shadow that disagrees leaves the table exactly as it was.
 */
@Tag("kafka")
class PublishIT {

    private static final int KEYS = 2_000;
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic("publish", 2, Map.of("retention.ms", "-1"));
        Orders.produce(kafka, "publish", KEYS, 2);
        kafka.createTopic("publish-one", 1, Map.of("retention.ms", "-1"));
        Orders.produce(kafka, "publish-one", 400, 2);
    }

    private static String[] rebuild(String topic, String url, String... more) {
        return CliRun.concat(new String[] {"--topic", topic, "--from", "earliest", "--to", "latest", "--sink", url,
                "--table", "t", "--publish-after-verify"}, more);
    }

    /** The table as another backfill left it: partition 0 only, with an index of its own. */
    private static void oldTable(String url, String... extraSql) throws Exception {
        CliRun old = CliRun.run(kafka, "--topic", "publish", "--from", "earliest", "--to", "latest", "--partitions",
                "0", "--sink", url, "--table", "t", "--create-table");
        assertThat(old.exitCode()).as(old.err()).isZero();
        sql(url, CliRun.concat(new String[] {"CREATE INDEX t_status ON t (status)"}, extraSql));
    }

    @Test
    @Tag("postgresql")
    void postgresPublishesAVerifiedRebuildAllAtOnceToAReaderPollingMeanwhileWithTheTablesIndexesAndGrants()
            throws Exception {
        String url = SharedPostgres.newDatabase("publish_pg");
        oldTable(url, "CREATE ROLE publish_reader", "GRANT SELECT ON t TO publish_reader");
        long before = count(url, "t");
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        List<String> errors = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try (Connection c = DriverManager.getConnection(url)) {
                c.setAutoCommit(true);
                while (!stop.get()) {
                    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM t")) {
                        rs.next();
                        seen.add(rs.getLong(1));
                    } catch (SQLException e) {
                        errors.add(e.getMessage());
                    }
                }
            } catch (SQLException e) {
                errors.add(e.getMessage());
            }
        });
        reader.start();
        CliRun run;
        try {
            run = CliRun.run(kafka, rebuild("publish", url));
        } finally {
            stop.set(true);
            reader.join();
        }
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.err()).contains("shadow t_kbackfill_shadow made like the table: columns, defaults, constraints, "
                + "indexes and comments").contains("1 grant(s) to other roles");
        assertThat(run.out()).contains("verify: AGREES").contains("publish: published t_kbackfill_shadow as t")
                .contains("publish: kept the table it replaced as t_kbackfill_previous");
        assertThat(errors).as("the reader never failed").isEmpty();
        assertThat(seen).as("the reader saw the old table or the new one, never part of either")
                .isSubsetOf(before, (long) KEYS).contains(before);
        assertThat(count(url, "t")).isEqualTo(KEYS);
        assertThat(count(url, "t_kbackfill_previous")).isEqualTo(before);
        assertThat(query(url, "SELECT count(*) FROM pg_indexes WHERE tablename = 't' AND indexdef LIKE '%(status)%'"))
                .as("the table's index came along").isEqualTo("1");
        assertThat(query(url, "SELECT count(*) FROM information_schema.role_table_grants WHERE table_name = 't' "
                + "AND grantee = 'publish_reader' AND privilege_type = 'SELECT'")).as("its grant too").isEqualTo("1");
        assertThat(query(url, "SELECT count(*) FROM pg_tables WHERE tablename = 't_kbackfill_shadow'")).isEqualTo("0");
        CliRun verify = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "none",
                "--topic", "publish", "--from", "earliest", "--to", "latest", "--sink", url, "--table", "t");
        assertThat(verify.exitCode()).as(verify.out()).isZero();
        // the job was forgotten with the publish: the same command rebuilds and publishes again
        CliRun again = CliRun.run(kafka, rebuild("publish", url));
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(count(url, "t_kbackfill_previous")).isEqualTo(KEYS);
    }

    @Test
    @Tag("mariadb")
    void mariadbPublishesAVerifiedRebuild() throws Exception {
        String url = SharedMariaDb.newDatabase("publish_maria");
        oldTable(url);
        long before = count(url, "t");
        CliRun run = CliRun.run(kafka, rebuild("publish", url));
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("publish: published t_kbackfill_shadow as t");
        assertThat(count(url, "t")).isEqualTo(KEYS);
        assertThat(count(url, "t_kbackfill_previous")).isEqualTo(before);
        assertThat(query(url, "SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() "
                + "AND table_name = 't' AND index_name = 't_status'")).isEqualTo("1");
    }

    @Test
    void sqlitePublishesAVerifiedRebuildAndANewTableTooAndTopicsAndLiveWritersAreRefused() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("publish.db");
        oldTable(url);
        long before = count(url, "t");
        CliRun run = CliRun.run(kafka, rebuild("publish", url));
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(count(url, "t")).isEqualTo(KEYS);
        assertThat(count(url, "t_kbackfill_previous")).isEqualTo(before);
        assertThat(query(url, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 't' "
                + "AND sql LIKE '%(status)%'")).isEqualTo("1");

        String fresh = "jdbc:sqlite:" + dir.resolve("fresh.db");
        CliRun created = CliRun.run(kafka, rebuild("publish", fresh, "--create-table"));
        assertThat(created.exitCode()).as(created.out() + created.err()).isZero();
        assertThat(count(fresh, "t")).isEqualTo(KEYS);

        for (String[] refused : List.of(new String[] {"--sink", "kafka:publish-target"},
                new String[] {"--sink", url, "--table", "t", "--live-writer", "yes"})) {
            CliRun no = CliRun.run(kafka, CliRun.concat(new String[] {"--topic", "publish", "--from", "earliest", "--to",
                    "latest", "--publish-after-verify"}, refused));
            assertThat(no.exitCode()).as(no.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(no.err().lines().toList()).as(no.err()).hasSize(1);
            assertThat(no.err()).contains("--publish-after-verify");
        }
    }

    /**
     * A shadow changed by hand while its rebuild was stopped half-way: the run that finishes it disagrees, exit 4,
     * the table exactly as it was, the shadow kept; repaired, the same command publishes it.
     */
    @Test
    void aShadowThatDisagreesIsNotPublishedAndTheTableStaysExactlyAsItWas() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("disagree.db");
        CliRun old = CliRun.run(kafka, "--topic", "publish-one", "--from", "earliest", "--to", "offset:400",
                "--sink", url, "--table", "t", "--create-table");
        assertThat(old.exitCode()).as(old.err()).isZero();
        Map<String, List<String>> table = rows(url, "t");
        // 400 keys, then their second update: the first 600 records give k00000-k00199 their last record
        CliRun half = CliRun.run(kafka, rebuild("publish-one", url, "--max-records", "600", "--batch-size", "100"));
        assertThat(half.exitCode()).as(half.out() + half.err()).isZero();
        assertThat(half.err()).contains("not verified, not published");
        sql(url, "UPDATE t_kbackfill_shadow SET status = 'by hand' WHERE kafka_key = 'k00007'");
        CliRun finish = CliRun.run(kafka, rebuild("publish-one", url));
        assertThat(finish.exitCode()).as(finish.out() + finish.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(finish.out()).contains("verify: DISAGREES").contains("different {kafka_key=k00007}")
                .contains("not published: the shadow t_kbackfill_shadow disagrees");
        assertThat(rows(url, "t")).as("the table byte for byte as it was").isEqualTo(table);
        assertThat(query(url, "SELECT count(*) FROM sqlite_master WHERE name = 't_kbackfill_previous'")).isEqualTo("0");
        assertThat(count(url, "t_kbackfill_shadow")).isEqualTo(400);

        CliRun repair = CliRun.of("repair", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "none",
                "--topic", "publish-one", "--from", "earliest", "--to", "latest", "--sink", url, "--table",
                "t_kbackfill_shadow");
        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        CliRun publish = CliRun.run(kafka, rebuild("publish-one", url));
        assertThat(publish.exitCode()).as(publish.out() + publish.err()).isZero();
        assertThat(publish.out()).contains("verify: AGREES").contains("publish: published t_kbackfill_shadow as t");
        assertThat(rows(url, "t_kbackfill_previous")).isEqualTo(table);
        assertThat(query(url, "SELECT status FROM t WHERE kafka_key = 'k00007'")).isEqualTo("s1");
    }

    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();

    /**
     * The rebuild command killed with SIGKILL at moments spread over its run, verification and publish, again and
     * again, then run to its end: the table ends exactly the range's final state, the table it replaced kept whole as
     * _previous, no shadow left; at every kill the table was the old one or the new one, never part of either.
     */
    @Test
    @Tag("postgresql")
    void aRebuildKilledAnywhereEndsPublishedWholeByTheSameCommand() throws Exception {
        String url = SharedPostgres.newDatabase("publish_kill");
        oldTable(url);
        Map<String, List<String>> old = rows(url, "t");
        List<String> command = new ArrayList<>(List.of(LAUNCHER.toString(), "run", "--bootstrap-server",
                kafka.bootstrapServers(), "--batch-size", "200"));
        command.addAll(List.of(rebuild("publish", url)));
        java.util.Random random = new java.util.Random(7);
        for (int kill = 0; kill < 4; kill++) {
            Process p = new ProcessBuilder(command).redirectOutput(dir.resolve("kill" + kill + ".out").toFile())
                    .redirectError(dir.resolve("kill" + kill + ".err").toFile()).start();
            Thread.sleep(1_500 + random.nextInt(4_000));
            p.destroyForcibly(); // SIGKILL: no rollback, no goodbye
            assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            long now = count(url, "t");
            assertThat(now).as("after kill %d: the old table or the new, whole", kill).isIn((long) old.size(),
                    (long) KEYS);
            if (now == KEYS) {
                assertThat(rows(url, "t_kbackfill_previous")).isEqualTo(old);
                break; // published before the kill: what follows is a new rebuild
            }
            assertThat(rows(url, "t")).as("unpublished: the table exactly as it was").isEqualTo(old);
        }
        CliRun finish = CliRun.run(kafka, rebuild("publish", url));
        assertThat(finish.exitCode()).as(finish.out() + finish.err()).isZero();
        assertThat(count(url, "t")).isEqualTo(KEYS);
        assertThat(query(url, "SELECT count(*) FROM pg_tables WHERE tablename = 't_kbackfill_shadow'")).isEqualTo("0");
        CliRun verify = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--progress", "none",
                "--topic", "publish", "--from", "earliest", "--to", "latest", "--sink", url, "--table", "t");
        assertThat(verify.exitCode()).as(verify.out()).isZero();
    }

    private static void sql(String url, String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        }
    }

    private static String query(String url, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static long count(String url, String table) throws Exception {
        return Long.parseLong(query(url, "SELECT count(*) FROM " + table));
    }

    private static Map<String, List<String>> rows(String url, String table) throws Exception {
        Map<String, List<String>> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM " + table)) {
            while (rs.next()) {
                List<String> values = new ArrayList<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    values.add(rs.getString(i));
                }
                rows.put(rs.getString("kafka_key"), values);
            }
        }
        return rows;
    }
}
