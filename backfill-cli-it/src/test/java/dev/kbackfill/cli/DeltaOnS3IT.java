package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.sink.delta.DeltaTableRows;
import dev.kbackfill.testservices.SharedS3;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --sink delta:s3a://...} from the command line against a real S3 API (S3Proxy): the endpoint through
 * {@code --sink-property}, the credentials through a {@code --sink-command-config} file, never on the command line
 * or in the stored job; run, rerun, status, compact; a run of a job whose lease is held elsewhere is exit 3.
 */
@Tag("kafka")
@Tag("delta")
@Tag("s3")
class DeltaOnS3IT {

    private static EmbeddedKafka kafka;
    private static final String TOPIC = "s3-orders";

    @TempDir
    Path dir;

    private String table;
    private Path credentials;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of("retention.ms", "-1"));
        Orders.produce(kafka, TOPIC, 20, 2);
    }

    @BeforeEach
    void bucket() throws Exception {
        table = "s3a://" + SharedS3.standard().newBucket() + "/lake/orders";
        credentials = dir.resolve("s3.properties");
        Files.writeString(credentials, "fs.s3a.access.key=" + SharedS3.ACCESS_KEY + "\nfs.s3a.secret.key="
                + SharedS3.SECRET_KEY + "\n");
    }

    /** The sink options: the endpoint as properties, the credentials from the file. */
    private List<String> sink() {
        List<String> args = new ArrayList<>(List.of("--sink", "delta:" + table, "--sink-command-config",
                credentials.toString()));
        SharedS3.standard().s3aEndpointSettings().forEach((k, v) -> args.addAll(List.of("--sink-property", k + "=" + v)));
        return args;
    }

    private CliRun run(String... more) {
        List<String> args = new ArrayList<>(List.of("--topic", TOPIC, "--from", "earliest", "--to", "latest",
                "--create-table", "--job", "s3job"));
        args.addAll(sink());
        args.addAll(List.of(more));
        return CliRun.run(kafka, args.toArray(String[]::new));
    }

    private Map<String, String> rows() throws Exception {
        Map<String, String> rows = new TreeMap<>();
        DeltaTableRows.rows(table, SharedS3.standard().s3aSettings())
                .forEach(r -> rows.put((String) r.get("kafka_key"), (String) r.get("status")));
        return rows;
    }

    @Test
    void aRunWritesTheTableInS3AndARerunKeepsEveryVersionOutThenStatusAndCompactReachItToo() throws Exception {
        CliRun first = run("--batch-size", "10"); // several commits, several files for compact to merge
        assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
        assertThat(first.out()).contains("from 40 records").containsPattern("total\\s+40\\s+\\d+\\s+0\\s");
        Map<String, String> written = rows();
        assertThat(written).hasSize(20).containsEntry("k00000", "s1").containsEntry("k00019", "s1");
        CliRun again = run();
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(again.out()).containsPattern("total\\s+40\\s+0\\s+20\\s+20"); // read, written, kept out, superseded
        List<String> status = new ArrayList<>(List.of("status", "--job", "s3job"));
        status.addAll(sink());
        CliRun s = CliRun.of(status.toArray(String[]::new));
        assertThat(s.exitCode()).as(s.out() + s.err()).isZero();
        assertThat(s.out()).contains("s3job");
        List<String> compact = new ArrayList<>(List.of("compact"));
        compact.addAll(sink());
        CliRun c = CliRun.of(compact.toArray(String[]::new));
        assertThat(c.exitCode()).as(c.out() + c.err()).isZero();
        assertThat(c.out()).contains("key-sorted");
        assertThat(rows()).isEqualTo(written);
        // verify reads the job's plan and the table back from S3, with the same storage options
        List<String> verify = new ArrayList<>(List.of("verify", "--job", "s3job", "--bootstrap-server",
                kafka.bootstrapServers()));
        verify.addAll(sink());
        CliRun v = CliRun.of(verify.toArray(String[]::new));
        assertThat(v.exitCode()).as(v.out() + v.err()).isZero();
        assertThat(v.out()).startsWith("AGREES: 20 keys");
    }

    @Test
    void aRunOfAJobWhoseLeaseIsHeldElsewhereIsExitThreeNamingTheHolderAndWritesNothing() throws Exception {
        FileSystem fs = new org.apache.hadoop.fs.Path(table).getFileSystem(conf());
        try (FSDataOutputStream out = fs.create(new org.apache.hadoop.fs.Path(table + "/_kbackfill/locks/s3job.lease"))) {
            out.write(("{\"job\":\"s3job\",\"holder\":\"batch-7 pid 4242\",\"since\":0,\"expires\":"
                    + (System.currentTimeMillis() + 60_000) + "}").getBytes(StandardCharsets.UTF_8));
        }
        CliRun r = run();
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(3);
        assertThat(r.err()).contains("job 's3job' is already running").contains("batch-7 pid 4242");
        assertThat(fs.exists(new org.apache.hadoop.fs.Path(table + "/_delta_log"))).isFalse();
    }

    @Test
    void aCredentialOnTheCommandLineIsRefusedItWouldBeStoredWithTheJob() {
        CliRun r = run("--sink-property", "fs.s3a.secret.key=" + SharedS3.SECRET_KEY);
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains("invalid --sink-property 'fs.s3a.secret.key'").contains("--sink-command-config")
                .doesNotContain(SharedS3.SECRET_KEY);
        CliRun jdbc = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink",
                "jdbc:sqlite:" + dir.resolve("x.db"), "--create-table", "--sink-property", "a=b");
        assertThat(jdbc.exitCode()).as(jdbc.out() + jdbc.err()).isEqualTo(2);
        assertThat(jdbc.err()).contains("invalid --sink-property 'a': it is for --sink delta:... and iceberg:... only, not jdbc:sqlite:");
        assertThat(dir.resolve("x.db")).doesNotExist();
    }

    private static org.apache.hadoop.conf.Configuration conf() {
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        SharedS3.standard().s3aSettings().forEach(conf::set);
        return conf;
    }
}
