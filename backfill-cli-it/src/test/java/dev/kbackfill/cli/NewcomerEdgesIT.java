package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Inputs a new user tries, as they try them: each answered with exit 2 and one line naming the value, nothing
 * created, or accepted and done; never a library's message, never data kept nowhere with exit 0.
 */
@Tag("kafka")
class NewcomerEdgesIT {

    private static EmbeddedKafka kafka;
    private static final String TOPIC = "newcomer-orders";

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            records.add(new ProducerRecord<>(TOPIC, i % 2, Instant.parse("2024-01-01T00:00:00Z").toEpochMilli() + i,
                    ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("{\"status\":\"s" + i + "\"}").getBytes(StandardCharsets.UTF_8)));
        }
        Orders.send(kafka, records, Map.of());
    }

    private static CliRun run(String... args) {
        List<String> all = new ArrayList<>(List.of("--topic", TOPIC, "--from", "earliest", "--to", "latest"));
        all.addAll(List.of(args));
        return CliRun.run(kafka, all.toArray(String[]::new));
    }

    @Test
    void anInMemorySqliteDatabaseIsRefusedItWouldKeepNothing() {
        for (String sink : List.of("jdbc:sqlite:", "jdbc:sqlite::memory:", "jdbc:sqlite:file::memory:?cache=shared")) {
            CliRun r = run("--sink", sink, "--create-table", "--job", "mem");
            assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
            assertThat(r.err()).contains("in-memory SQLite database keeps nothing").contains("jdbc:sqlite:FILE");
            assertThat(r.errLines()).hasSize(1);
        }
    }

    @Test
    void aSqliteFileInAMissingFolderOrADirectoryIsRefusedAndNothingIsCreated() {
        Path missing = dir.resolve("no-such-dir");
        CliRun r = run("--sink", "jdbc:sqlite:" + missing.resolve("x.db"), "--create-table");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).contains("folder " + missing + " does not exist");
        assertThat(missing).doesNotExist();
        CliRun directory = run("--sink", "jdbc:sqlite:" + dir, "--create-table");
        assertThat(directory.exitCode()).as(directory.out() + directory.err()).isEqualTo(2);
        assertThat(directory.err()).contains(dir + " is a directory, not a database file");
        CliRun jobs = CliRun.of("jobs", "--sink", "jdbc:sqlite:" + dir.resolve("never.db"));
        assertThat(jobs.exitCode()).as(jobs.out() + jobs.err()).isEqualTo(2);
        assertThat(jobs.err()).contains("no such database");
        assertThat(dir.resolve("never.db")).doesNotExist();
    }

    /**
     * A folder the run may not write in names the cause. The tests run as root, which no permission stops: an
     * immutable folder ({@code chattr +i}) refuses root too; where chattr cannot, the test is skipped.
     */
    @Test
    void aFolderThatCannotBeWrittenNamesPermissionDenied() throws Exception {
        Path locked = Files.createDirectory(dir.resolve("immutable"));
        boolean immutable;
        try {
            immutable = new ProcessBuilder("chattr", "+i", locked.toString()).redirectErrorStream(true).start()
                    .waitFor() == 0;
        } catch (java.io.IOException e) {
            immutable = false; // no chattr
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(immutable, "chattr +i is not available here");
        try {
            CliRun r = run("--sink", "jdbc:sqlite:" + locked.resolve("x.db"), "--create-table");
            assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
            assertThat(r.err()).contains("permission denied on " + locked);
        } finally {
            new ProcessBuilder("chattr", "-i", locked.toString()).start().waitFor();
        }
    }

    @Test
    void ratesAndDurationsBeyondAnyMachineAreAcceptedAsNoLimitAndNoDeadLetterFileIsLeftEmpty() {
        String url = "jdbc:sqlite:" + dir.resolve("limits.db");
        Path letters = dir.resolve("letters.jsonl");
        CliRun r = run("--sink", url, "--create-table", "--max-bytes-per-second", "2G", "--max-records-per-second",
                "2000000000", "--max-duration", "999999999h", "--dead-letter", letters.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("wrote 20 changes from 20 records");
        assertThat(letters).as("no dead letter, no dead-letter file").doesNotExist();
    }

    /**
     * A nightly job by calendar day: the same command every night is the same job (--to today), and a continue: job
     * whose --to is a date that moves on is the same job too, never told to reset.
     */
    @Test
    void aNightlyContinueJobIsOneJobWhetherItsLaterBoundIsTodayOrAMovingDate() {
        String url = "jdbc:sqlite:" + dir.resolve("nightly.db");
        String[] night = {"--topic", TOPIC, "--from", "continue:2024-01-01", "--to", "today", "--sink", url,
                "--job", "nightly"};
        CliRun first = CliRun.run(kafka, CliRun.concat(night, "--create-table"));
        assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
        assertThat(first.out()).contains("wrote 20 changes from 20 records");
        CliRun again = CliRun.run(kafka, night);
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(again.err()).contains("run 2");
        assertThat(again.out()).doesNotContain("wrote 20 changes");
        String tomorrow = java.time.LocalDate.now(java.time.ZoneOffset.UTC).plusDays(1).toString();
        String[] dated = {"--topic", TOPIC, "--from", "continue:2024-01-01", "--to", tomorrow, "--sink", url,
                "--job", "nightly"};
        CliRun moved = CliRun.run(kafka, dated);
        assertThat(moved.exitCode()).as(moved.out() + moved.err()).isZero();
        assertThat(moved.err()).contains("run 3").doesNotContain("reset");
    }

    @Test
    void compactSaysWhatItDoesForEachKindOfSink() {
        String db = "jdbc:sqlite:" + dir.resolve("compact.db");
        CliRun jdbc = CliRun.of("compact", "--sink", db);
        assertThat(jdbc.exitCode()).as(jdbc.out() + jdbc.err()).isEqualTo(2);
        assertThat(jdbc.errLines()).hasSize(1);
        assertThat(jdbc.err()).contains("a database table has no files to compact")
                .contains("prunes the table's tombstone ledger: pass --forget-deletes-before TIME --table TABLE");
        CliRun noTable = CliRun.of("compact", "--sink", db, "--forget-deletes-before", "2024-01-01");
        assertThat(noTable.exitCode()).as(noTable.out() + noTable.err()).isEqualTo(2);
        assertThat(noTable.err()).contains("needs --table: the ledger is the table's own");
        CliRun topic = CliRun.of("compact", "--sink", "kafka:orders");
        assertThat(topic.exitCode()).as(topic.out() + topic.err()).isEqualTo(2);
        assertThat(topic.err()).contains("a topic is compacted by its brokers (cleanup.policy=compact)");
        CliRun topicLedger = CliRun.of("compact", "--sink", "kafka:orders", "--forget-deletes-before", "2024-01-01");
        assertThat(topicLedger.exitCode()).as(topicLedger.out() + topicLedger.err()).isEqualTo(2);
        assertThat(topicLedger.err()).contains("prunes a tombstone ledger, which kafka: sinks do not keep");
        assertThat(dir.resolve("compact.db")).doesNotExist();
    }

    @Test
    void optionsOfATopicSinkAreRefusedWithADatabaseSinkNotIgnored() {
        String url = "jdbc:sqlite:" + dir.resolve("options.db");
        for (String[] extra : List.of(new String[] {"--sink-bootstrap-server", "127.0.0.1:1"},
                new String[] {"--create-topic"}, new String[] {"--sink-command-config", dir.resolve("x").toString()})) {
            List<String> args = new ArrayList<>(List.of("--sink", url));
            args.addAll(List.of(extra));
            CliRun r = run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
            assertThat(r.err()).contains(extra[0] + " is for --sink ").contains("kafka:TOPIC")
                    .contains("only, not jdbc:sqlite:");
        }
        assertThat(dir.resolve("options.db")).doesNotExist();
    }

    @Test
    void aRefusedRunNamesItsJobInTheReportAndTheMetrics() throws Exception {
        Path report = dir.resolve("r.json");
        Path metrics = dir.resolve("m.prom");
        CliRun r = CliRun.run(kafka, "--topic", TOPIC, "--from", "offset:x", "--to", "latest", "--job", "cont",
                "--sink", "jdbc:sqlite:" + dir.resolve("report.db"), "--report", report.toString(), "--metrics-file",
                metrics.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(Files.readString(report)).contains("\"job\" : \"cont\"").contains("\"exitCode\" : 2");
        assertThat(Files.readString(metrics)).contains("job=\"cont\"");
    }

    /**
     * An unreachable cluster on the first contact says so, naming it, within the connect timeout, and is not retried
     * for minutes (--retry-for retries failures once a run has reached both sides); the sink's cluster is held to the
     * same connect timeout (it waited the clients' default minute).
     */
    @Test
    void anUnreachableClusterIsNamedWithinTheConnectTimeoutAndNotRetriedOnFirstContact() {
        long started = System.nanoTime();
        CliRun r = CliRun.of("run", "--bootstrap-server", "127.0.0.1:1", "--connect-timeout", "1s", "--retry-for", "5m",
                "--progress", "none", "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("down.db"), "--create-table");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(r.err()).doesNotContain("retrying")
                .contains("no answer from the cluster at 127.0.0.1:1 within 1 s").contains("on first contact: not retried");
        CliRun sink = run("--sink", "kafka:newcomer-out", "--create-topic", "--sink-bootstrap-server", "127.0.0.1:1",
                "--connect-timeout", "1s");
        assertThat(sink.exitCode()).as(sink.out() + sink.err()).isEqualTo(1);
        assertThat(sink.errLines()).hasSize(1);
        assertThat(sink.err()).contains("127.0.0.1:1").contains("within 1 s");
        // not a timed test: a bound far above the settings, far below --retry-for
        assertThat((System.nanoTime() - started) / 1e9).isLessThan(45);
    }

    /** A host that does not resolve, an empty bootstrap setting, a sink URL's typo: exit 2 at once, naming the value. */
    @Test
    void anUnknownHostAnEmptyBootstrapServerOrAMistypedSinkIsBadInputNamedAtOnce() {
        long started = System.nanoTime();
        CliRun host = CliRun.of("run", "--bootstrap-server", "nosuchhost.invalid:9092", "--progress", "none", "--topic",
                TOPIC, "--from", "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + dir.resolve("x.db"),
                "--create-table");
        assertThat(host.exitCode()).as(host.out() + host.err()).isEqualTo(2);
        assertThat(host.errLines()).hasSize(1);
        assertThat(host.err()).contains("invalid --bootstrap-server 'nosuchhost.invalid:9092'")
                .doesNotContain("KafkaAdminClient");
        CliRun empty = CliRun.withEnv(Map.of("KBACKFILL_BOOTSTRAP_SERVER", ""), "run", "--progress", "none", "--topic",
                TOPIC, "--from", "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + dir.resolve("y.db"),
                "--create-table");
        assertThat(empty.exitCode()).as(empty.out() + empty.err()).isEqualTo(2);
        assertThat(empty.err()).contains("invalid --bootstrap-server ''").contains("KBACKFILL_BOOTSTRAP_SERVER");
        for (String[] bad : new String[][] {
                {"iceberg:jdbc:postgres://127.0.0.1:1/x#a.b", "no JDBC driver for the catalog URL"},
                {"iceberg:hadop:" + dir.resolve("w") + "#a.b", "no filesystem for the scheme 'hadop:'"},
                {"delta:s3x://bucket/t", "no filesystem for the scheme 's3x:'"}}) {
            CliRun r = run("--sink", bad[0], "--create-table", "--sink-property", "warehouse=" + dir.resolve("wh"));
            assertThat(r.exitCode()).as(bad[0] + ": " + r.out() + r.err()).isEqualTo(2);
            assertThat(r.errLines()).as(bad[0]).hasSize(1);
            assertThat(r.err()).contains(bad[1]);
        }
        assertThat(dir.resolve("wh")).doesNotExist();
        assertThat((System.nanoTime() - started) / 1e9).isLessThan(45);
    }

    /**
     * A cluster that does not answer at all (it takes the connection and never says a word, as a hung broker or a
     * port behind a silent middlebox) fails within --connect-timeout and a little: the admin client's own wait on
     * the connection is not waited out.
     */
    @Test
    void aClusterThatNeverAnswersFailsWithinTheConnectTimeout() throws Exception {
        CliRun r;
        double seconds;
        // the kernel completes connections to a listening socket that never accepts: they stay silent
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50,
                java.net.InetAddress.getLoopbackAddress())) {
            long started = System.nanoTime();
            r = CliRun.of("plan", "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--bootstrap-server",
                    "127.0.0.1:" + silent.getLocalPort(), "--connect-timeout", "2s");
            seconds = (System.nanoTime() - started) / 1e9;
        }
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(r.err()).contains("could not describe the cluster");
        assertThat(seconds).as("2 s asked").isLessThan(2 + 3);
    }

    /** Without --bootstrap-server (nor its variable, nor the settings file), the default is said on stderr. */
    @Test
    void theDefaultBootstrapServerIsSaid() {
        CliRun r = CliRun.of("plan", "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--connect-timeout", "1s");
        assertThat(r.err()).contains("no --bootstrap-server: using localhost:9092");
        // status and jobs of a database's jobs contact no cluster: nothing to say of one
        String url = "jdbc:sqlite:" + dir.resolve("quiet.db");
        assertThat(run("--sink", url, "--create-table", "--job", "quiet").exitCode()).isZero();
        for (String[] args : new String[][] {{"status", "--job", "quiet", "--sink", url}, {"jobs", "--sink", url}}) {
            CliRun quiet = CliRun.of(args);
            assertThat(quiet.exitCode()).as(quiet.out() + quiet.err()).isZero();
            assertThat(quiet.err()).as(args[0]).doesNotContain("no --bootstrap-server");
        }
        CliRun topic = CliRun.of("jobs", "--sink", "kafka:nowhere", "--connect-timeout", "1s");
        assertThat(topic.err()).as("a topic sink's jobs are in the cluster: it is named")
                .contains("no --bootstrap-server: using localhost:9092");
    }

    @Test
    void compactAndResetSayWhatTheyAccept() throws Exception {
        CliRun compact = CliRun.of("compact", "--sink", "delta:" + dir.resolve("lake"), "--forget-deletes-before",
                "garbage");
        assertThat(compact.exitCode()).isEqualTo(2);
        assertThat(compact.err()).contains("expected a time").doesNotContain("offset:N");
        String url = "jdbc:sqlite:" + dir.resolve("reset.db");
        assertThat(run("--sink", url, "--create-table", "--job", "there").exitCode()).isZero();
        CliRun reset = CliRun.of("reset", "--job", "nope", "--sink", url, "--yes");
        assertThat(reset.exitCode()).isEqualTo(2);
        assertThat(reset.err()).contains("no job named 'nope'");
        assertThat(CliRun.of("reset", "--help").out()).contains("no such job").doesNotContain("nothing to forget");
    }

    /**
     * A typo in the key fields fails at the first record and stores no job, so the corrected command just runs; a
     * real conflict prints the reset command with this command line's own sink options, which then works as printed.
     */
    @Test
    void aFailedFirstBatchStoresNoJobAndAConflictPrintsTheRealResetCommand() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("typo.db");
        CliRun typo = run("--sink", url, "--table", "orders", "--create-table", "--job", "typo", "--key-fields", "statuss");
        assertThat(typo.exitCode()).as(typo.out() + typo.err()).isEqualTo(1);
        assertThat(typo.err()).contains("statuss");
        CliRun jobs = CliRun.of("jobs", "--sink", url, "--table", "orders");
        assertThat(jobs.out()).as(jobs.out() + jobs.err()).doesNotContain("typo");
        CliRun fixed = run("--sink", url, "--table", "orders", "--create-table", "--job", "typo", "--key-fields", "status");
        assertThat(fixed.exitCode()).as(fixed.out() + fixed.err()).isZero();

        CliRun other = run("--sink", url, "--table", "orders", "--job", "typo");
        assertThat(other.exitCode()).as(other.out() + other.err()).isEqualTo(3);
        assertThat(other.err()).contains("'kbackfill reset --job typo --bootstrap-server " + kafka.bootstrapServers()
                + " --sink " + url + " --table orders --yes'").doesNotContain("...");
        String printed = other.err().substring(other.err().indexOf("'kbackfill reset") + 1);
        String[] command = printed.substring("kbackfill ".length(), printed.indexOf('\'')).split(" ");
        CliRun reset = CliRun.of(command);
        assertThat(reset.exitCode()).as(reset.out() + reset.err()).isZero();
        CliRun again = run("--sink", url, "--table", "orders", "--job", "typo", "--key-fields", "status");
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
    }

    /** A misspelt key of the settings file, or a bad value there, names the file and the line. */
    @Test
    void aSettingsFileKeyOrValueThatIsWrongNamesTheFileAndLine() throws Exception {
        Path settings = dir.resolve("kbackfill.properties");
        Files.writeString(settings, "# cron settings\nsinkk=jdbc:sqlite:" + dir.resolve("s.db") + "\n");
        CliRun unknown = CliRun.withEnv(Map.of("KBACKFILL_CONFIG", settings.toString()), "run", "--bootstrap-server",
                kafka.bootstrapServers(), "--topic", TOPIC, "--from", "earliest", "--to", "latest");
        assertThat(unknown.exitCode()).as(unknown.out() + unknown.err()).isEqualTo(2);
        assertThat(unknown.errLines()).hasSize(1);
        assertThat(unknown.err()).contains("unknown setting 'sinkk'").contains(settings + " line 2")
                .contains("did you mean 'sink'");
        assertThat(dir.resolve("kbackfill.db")).doesNotExist();

        Files.writeString(settings, "sink=jdbc:sqlite:" + dir.resolve("s.db") + "\n\ncreate-table=maybe\n");
        CliRun bad = CliRun.withEnv(Map.of("KBACKFILL_CONFIG", settings.toString()), "run", "--bootstrap-server",
                kafka.bootstrapServers(), "--topic", TOPIC, "--from", "earliest", "--to", "latest");
        assertThat(bad.exitCode()).as(bad.out() + bad.err()).isEqualTo(2);
        assertThat(bad.errLines()).hasSize(1);
        assertThat(bad.err()).contains("maybe").contains(settings + " line 3");
        assertThat(dir.resolve("s.db")).doesNotExist();
    }

    /** A first batch that fails creates nothing: no Delta or Iceberg table, no target topic, no job. */
    @Test
    void aRunWhoseFirstBatchFailsLeavesNothingBehind() throws Exception {
        String delta = dir.resolve("lake/orders").toString();
        String iceberg = dir.resolve("ice/orders").toString();
        for (String sink : List.of("delta:" + delta, "iceberg:" + iceberg, "kafka:newcomer-never")) {
            CliRun r = run("--sink", sink, sink.startsWith("kafka:") ? "--create-topic" : "--create-table",
                    "--key-fields", "statuss", "--job", "never");
            assertThat(r.exitCode()).as(sink + ": " + r.out() + r.err()).isEqualTo(1);
            assertThat(r.err()).as(sink).contains("key field 'statuss' is missing");
        }
        assertThat(dir.resolve("lake")).satisfiesAnyOf(p -> assertThat(p).doesNotExist(),
                p -> assertThat(p.resolve("orders/_delta_log")).doesNotExist());
        assertThat(dir.resolve("ice")).satisfiesAnyOf(p -> assertThat(p).doesNotExist(),
                p -> assertThat(p.resolve("orders/metadata")).doesNotExist());
        try (var admin = kafka.admin()) {
            assertThat(admin.listTopics().names().get()).doesNotContain("newcomer-never");
        }
        CliRun jobs = CliRun.of("jobs", "--sink", "kafka:newcomer-never", "--bootstrap-server", kafka.bootstrapServers());
        assertThat(jobs.out()).doesNotContainPattern("(?m)^never ");
    }

    /** verify of a table without the key's column is refused before the range is read. */
    @Test
    void verifyOfATableWithoutTheKeyColumnIsRefusedBeforeReading() throws Exception {
        Path db = dir.resolve("verify.db");
        try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + db); var st = c.createStatement()) {
            st.execute("CREATE TABLE other (id TEXT PRIMARY KEY, status TEXT)");
        }
        CliRun r = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC, "--from",
                "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + db, "--table", "other");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).contains("no column 'kafka_key' for the key").contains("nothing was read");
    }
}
