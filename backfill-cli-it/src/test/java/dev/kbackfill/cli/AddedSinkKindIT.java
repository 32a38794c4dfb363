package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testsink.RowsFiles;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sink kind added by a module of its own: {@code rowsfile:}, defined only in this test module's sources and
 * registered by its {@code META-INF/services} file, runs {@code run}, {@code status}, {@code jobs} and
 * {@code verify} through the command line as the shipped kinds do, with no change to core or the command line.
 */
@Tag("kafka")
class AddedSinkKindIT {

    private static final String TOPIC = "added-sink-orders";
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of("retention.ms", "-1"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        long t0 = Instant.parse("2024-01-01T00:00:00Z").toEpochMilli();
        for (int i = 0; i < 40; i++) {
            String key = "k" + (i % 10);
            byte[] value = i >= 36 && i % 10 == 7 ? null // k7's last record: a delete
                    : ("{\"status\":\"s" + i + "\",\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
            records.add(new ProducerRecord<>(TOPIC, (i % 10) % 2, t0 + i * 1000L, key.getBytes(StandardCharsets.UTF_8),
                    value));
        }
        Orders.send(kafka, records, Map.of());
    }

    @Test
    void aKindFromAnotherModuleRunsResumesReportsAndIsVerified() {
        Path file = dir.resolve("orders.rows");
        String sink = "rowsfile:" + file;
        String[] range = {"--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink", sink};

        CliRun first = CliRun.run(kafka, CliRun.concat(range, "--create-table", "--job", "added"));
        assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
        assertThat(first.out()).contains("wrote 10 changes from 40 records");
        Map<String, Map<String, Object>> rows = RowsFiles.liveRows(file);
        assertThat(rows).hasSize(9).doesNotContainKey("{kafka_key=k7}");
        assertThat(rows.get("{kafka_key=k3}")).containsEntry("status", "s33");

        CliRun again = CliRun.run(kafka, CliRun.concat(range, "--job", "added"));
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        // --to latest moves: a second run reads the range again, and the version rule keeps every change out
        assertThat(again.out()).contains("wrote 0 changes from 40 records").contains("10 change(s) kept out");

        CliRun status = CliRun.of("status", "--job", "added", "--sink", sink);
        assertThat(status.exitCode()).as(status.out() + status.err()).isZero();
        assertThat(status.out()).contains("complete");
        CliRun jobs = CliRun.of("jobs", "--sink", sink);
        assertThat(jobs.exitCode()).as(jobs.out() + jobs.err()).isZero();
        assertThat(jobs.out()).contains("added");

        CliRun agrees = CliRun.of(CliRun.concat(new String[] {"verify", "--bootstrap-server",
                kafka.bootstrapServers()}, range));
        assertThat(agrees.exitCode()).as(agrees.out() + agrees.err()).isZero();
        assertThat(agrees.out()).startsWith("AGREES: 10 keys");

        RowsFiles.setField(file, "{kafka_key=k3}", "status", "by-hand");
        CliRun differs = CliRun.of("verify", "--bootstrap-server", kafka.bootstrapServers(), "--job", "added",
                "--sink", sink);
        assertThat(differs.exitCode()).as(differs.out() + differs.err()).isEqualTo(ExitCodes.DISAGREES);
        assertThat(differs.out()).startsWith("DISAGREES: 10 keys").containsPattern("different +1\n")
                .contains("different {kafka_key=k3}").contains("target {status=by-hand}");
    }

    @Test
    void theAddedKindIsAmongTheFormsAndOptionsOfOtherKindsAreRefused() {
        CliRun unknown = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink",
                "nosuch:/x");
        assertThat(unknown.exitCode()).as(unknown.out() + unknown.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unknown.err()).contains("rowsfile:PATH").contains("kafka:TOPIC");

        Path file = dir.resolve("refused.rows");
        CliRun lake = CliRun.run(kafka, "--topic", TOPIC, "--from", "earliest", "--to", "latest", "--sink",
                "rowsfile:" + file, "--create-table", "--sink-property", "fs.x=1");
        assertThat(lake.exitCode()).as(lake.out() + lake.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(lake.err()).contains("it is for --sink delta:... and iceberg:... only, not rowsfile:");
        CliRun compact = CliRun.of("compact", "--sink", "rowsfile:" + file);
        assertThat(compact.exitCode()).as(compact.out() + compact.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(compact.err()).contains("compact rewrites the files of lake tables (delta:..., iceberg:...)");
        assertThat(file).doesNotExist();
    }
}
