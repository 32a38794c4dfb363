package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --sink iceberg:...} from the command line: a path table and a JDBC-catalog table (SQLite) written, rerun,
 * listed, reset and read back with Iceberg's own reader; bad forms are exit 2 with one line and nothing written.
 */
@Tag("kafka")
@Tag("iceberg")
class IcebergRunIT {

    private static EmbeddedKafka kafka;
    private static final String TOPIC = "iceberg-orders";

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of("retention.ms", "-1"));
        Orders.produce(kafka, TOPIC, 20, 2);
    }

    private CliRun run(String... more) {
        List<String> args = new ArrayList<>(List.of("--topic", TOPIC, "--from", "earliest", "--to", "latest"));
        args.addAll(List.of(more));
        return CliRun.run(kafka, args.toArray(String[]::new));
    }

    private static Map<String, String> rows(Table table) throws Exception {
        table.refresh();
        Map<String, String> rows = new TreeMap<>();
        try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
            for (Record r : records) {
                rows.put((String) r.getField("order_id"), (String) r.getField("status"));
            }
        }
        return rows;
    }

    @Test
    void aPathTableIsCreatedWrittenOnceAndARerunKeepsEveryVersionOut() throws Exception {
        String path = dir.resolve("lake/orders").toString();
        CliRun first = run("--sink", "iceberg:" + path, "--create-table", "--key-fields", "order_id", "--batch-size", "7");
        assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
        assertThat(first.out()).contains("from 40 records").containsPattern("total\\s+40\\s+\\d+\\s+0\\s");
        Table table = new HadoopTables(new Configuration()).load(path);
        Map<String, String> written = rows(table);
        assertThat(written).hasSize(20).containsEntry("k00000", "s1").containsEntry("k00019", "s1");
        assertThat(table.schema().identifierFieldNames()).containsExactly("order_id");
        assertThat(table.properties()).containsEntry("write.merge.mode", "merge-on-read");
        assertThat(table.currentSnapshot().summary()).containsKey("kbackfill.job." + jobName(first));

        CliRun again = run("--sink", "iceberg:" + path, "--create-table", "--key-fields", "order_id", "--batch-size", "7");
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        // `latest` moves, so this is the job's second run: every version it reads is the one the table holds
        assertThat(again.err()).contains("run 2");
        assertThat(again.out()).containsPattern("total\\s+40\\s+0\\s+40\\s+0\\s"); // read, written, kept out, superseded
        assertThat(rows(table)).isEqualTo(written);

        CliRun jobs = CliRun.of("jobs", "--sink", "iceberg:" + path);
        assertThat(jobs.exitCode()).as(jobs.out() + jobs.err()).isZero();
        assertThat(jobs.out()).contains(jobName(first));
        CliRun reset = CliRun.of("reset", "--job", jobName(first), "--sink", "iceberg:" + path, "--yes");
        assertThat(reset.exitCode()).as(reset.out() + reset.err()).isZero();
        // after the reset the job starts over as run 1, and still nothing regresses
        CliRun third = run("--sink", "iceberg:" + path, "--create-table", "--key-fields", "order_id");
        assertThat(third.exitCode()).as(third.out() + third.err()).isZero();
        assertThat(third.out()).containsPattern("total\\s+40\\s+0\\s+20\\s+20");
        assertThat(rows(table)).isEqualTo(written);
    }

    /**
     * {@code --publish-after-verify} on a path table: the rebuild goes into an emptied branch, main keeps its snapshot
     * while it is written and verified (a reader polling main meanwhile sees the old rows or all the new ones, never
     * part), then main is fast-forwarded to it; a second rebuild publishes again.
     */
    @Test
    void aRebuildIsWrittenIntoABranchAndMainFastForwardedToItOnlyAfterVerifyAgrees() throws Exception {
        String path = dir.resolve("lake/rebuilt").toString();
        CliRun old = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "offset:5", "--sink",
                "iceberg:" + path, "--create-table", "--key-fields", "order_id", "--partitions", "0");
        assertThat(old.exitCode()).as(old.out() + old.err()).isZero();
        Table table = new HadoopTables(new Configuration()).load(path);
        Map<String, String> before = rows(table);
        long snapshotBefore = table.currentSnapshot().snapshotId();
        java.util.Set<Integer> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            Table mine = new HadoopTables(new Configuration()).load(path);
            while (!stop.get()) {
                try {
                    seen.add(rows(mine).size());
                } catch (Throwable e) {
                    errors.add(e);
                }
            }
        });
        reader.start();
        CliRun rebuild;
        try {
            rebuild = run("--sink", "iceberg:" + path, "--key-fields", "order_id", "--publish-after-verify");
        } finally {
            stop.set(true);
            reader.join();
        }
        assertThat(rebuild.exitCode()).as(rebuild.out() + rebuild.err()).isZero();
        assertThat(rebuild.err()).contains("branch kbackfill_shadow of main's snapshot " + snapshotBefore + ", emptied");
        assertThat(rebuild.out()).contains("verify: AGREES").contains("publish: fast-forwarded main of " + path);
        assertThat(errors).isEmpty();
        assertThat(seen).as("main as it was, or the whole rebuild").isSubsetOf(before.size(), 20);
        Map<String, String> after = rows(table);
        assertThat(after).hasSize(20).containsEntry("k00000", "s1").containsEntry("k00019", "s1");
        table.refresh();
        assertThat(table.refs()).doesNotContainKey("kbackfill_shadow");
        assertThat(table.snapshot(snapshotBefore)).as("main's history kept: rollback undoes the publish").isNotNull();
        CliRun again = run("--sink", "iceberg:" + path, "--key-fields", "order_id", "--publish-after-verify");
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(rows(table)).isEqualTo(after);
    }

    /**
     * A rebuild whose branch another job made stale while the rebuild was stopped half-way is not published: exit 4,
     * main exactly as it was (its snapshot and its rows), the branch kept.
     */
    @Test
    void aBranchThatDisagreesIsNotPublishedAndMainKeepsItsSnapshot() throws Exception {
        String path = dir.resolve("lake/kept").toString();
        CliRun old = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "offset:5", "--sink",
                "iceberg:" + path, "--create-table", "--key-fields", "order_id", "--partitions", "0");
        assertThat(old.exitCode()).as(old.out() + old.err()).isZero();
        Table table = new HadoopTables(new Configuration()).load(path);
        Map<String, String> before = rows(table);
        long snapshotBefore = table.currentSnapshot().snapshotId();
        CliRun half = run("--sink", "iceberg:" + path, "--key-fields", "order_id", "--publish-after-verify",
                "--max-records", "30", "--batch-size", "5", "--job", "rebuild");
        assertThat(half.exitCode()).as(half.out() + half.err()).isZero();
        assertThat(half.err()).contains("not verified, not published");
        // another job writes older versions of three keys into the branch
        CliRun stale = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "offset:3", "--partitions",
                "0", "--sink", "iceberg:" + path, "--table", TOPIC + "@kbackfill_shadow", "--key-fields", "order_id",
                "--on-conflict", "overwrite", "--job", "stale-writer");
        assertThat(stale.exitCode()).as(stale.out() + stale.err()).isZero();
        CliRun finish = run("--sink", "iceberg:" + path, "--key-fields", "order_id", "--publish-after-verify",
                "--job", "rebuild");
        assertThat(finish.exitCode()).as(finish.out() + finish.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(finish.out()).contains("verify: DISAGREES").contains("not published");
        table.refresh();
        assertThat(table.currentSnapshot().snapshotId()).as("main's snapshot").isEqualTo(snapshotBefore);
        assertThat(rows(table)).isEqualTo(before);
        assertThat(table.refs()).containsKey("kbackfill_shadow");
    }

    @Test
    void aJdbcCatalogTableOnSqliteTakesItsNamespaceAndNameFromTheUrl() throws Exception {
        String catalog = "jdbc:sqlite:" + dir.resolve("catalog.db");
        String warehouse = dir.resolve("warehouse").toString();
        CliRun r = run("--sink", "iceberg:" + catalog + "#sales.orders", "--sink-property", "warehouse=" + warehouse,
                "--create-table", "--key-fields", "order_id", "--job", "catalog-job");
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        JdbcCatalog jdbc = new JdbcCatalog();
        jdbc.setConf(new Configuration());
        jdbc.initialize("kbackfill", Map.of("uri", catalog, "warehouse", warehouse));
        try {
            Table table = jdbc.loadTable(TableIdentifier.of("sales", "orders"));
            assertThat(rows(table)).hasSize(20).containsEntry("k00007", "s1");
            assertThat(table.location()).startsWith(warehouse);
        } finally {
            jdbc.close();
        }
        CliRun status = CliRun.of("status", "--job", "catalog-job", "--sink", "iceberg:" + catalog + "#sales.orders",
                "--sink-property", "warehouse=" + warehouse);
        assertThat(status.exitCode()).as(status.out() + status.err()).isZero();
        assertThat(status.out()).contains("catalog-job");
    }

    @Test
    void badIcebergSinksAreOneLineExitTwoAndWriteNothing() {
        CliRun blank = run("--sink", "iceberg:", "--create-table");
        assertThat(blank.exitCode()).as(blank.out() + blank.err()).isEqualTo(2);
        assertThat(blank.errLines()).hasSize(1);
        assertThat(blank.err()).contains("invalid --sink 'iceberg:'").contains("iceberg:PATH")
                .contains("iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE");

        CliRun noWarehouse = run("--sink", "iceberg:jdbc:sqlite:" + dir.resolve("c.db") + "#a.b", "--create-table");
        assertThat(noWarehouse.exitCode()).as(noWarehouse.out() + noWarehouse.err()).isEqualTo(2);
        assertThat(noWarehouse.err()).contains("--sink-property warehouse=PATH");

        CliRun onS3 = run("--sink", "iceberg:s3a://bucket/lake/orders", "--create-table");
        assertThat(onS3.exitCode()).as(onS3.out() + onS3.err()).isEqualTo(2);
        assertThat(onS3.errLines()).hasSize(1);
        assertThat(onS3.err()).contains("put the table in a catalog");

        CliRun spark = run("--sink", "iceberg:" + dir.resolve("t"), "--create-table", "--engine", "spark");
        assertThat(spark.exitCode()).as(spark.out() + spark.err()).isEqualTo(2);
        assertThat(spark.err()).contains("--engine spark does not write Iceberg tables yet");

        CliRun verify = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC, "--from",
                "earliest", "--to", "latest", "--sink", "iceberg:" + dir.resolve("t"));
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isEqualTo(2);
        assertThat(verify.err()).contains("no Iceberg table").contains("nothing to verify");

        CliRun noTable = run("--sink", "iceberg:" + dir.resolve("absent"));
        assertThat(noTable.exitCode()).as(noTable.out() + noTable.err()).isEqualTo(2);
        assertThat(noTable.err()).contains("pass --create-table");
        assertThat(dir.resolve("absent")).doesNotExist();
        assertThat(dir.resolve("t")).doesNotExist();
    }

    /** The job name a run printed. */
    private static String jobName(CliRun r) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("job ([A-Za-z0-9_.-]+)").matcher(r.err() + r.out());
        assertThat(m.find()).as(r.out() + r.err()).isTrue();
        return m.group(1);
    }
}
