package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.verify.Verdict;
import dev.kbackfill.core.verify.Verification;
import dev.kbackfill.core.verify.VerifyReport;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.Plan;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's verification-as-a-library example, verbatim but for the bootstrap address and the file. */
@Tag("kafka")
@Tag("verify")
class VerifyLibraryExampleIT {

    @TempDir
    Path dir;

    @Test
    void theReadmeExampleAgreesAfterTheJobAndNamesARowChangedByHand() throws Exception {
        EmbeddedKafka cluster = SharedKafka.get();
        cluster.createTopic("lib-verify", 1, Map.of("retention.ms", "-1"));
        Orders.send(cluster, List.of(new org.apache.kafka.clients.producer.ProducerRecord<>("lib-verify", 0,
                java.time.Instant.parse("2024-01-01T10:00:00Z").toEpochMilli(), "k1".getBytes(),
                "{\"status\":\"paid\"}".getBytes())), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("orders.db");
        SinkSettings into = new SinkSettings(url, "orders", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT);
        Map<String, Object> kafka = Map.of("bootstrap.servers", cluster.bootstrapServers());
        BackfillRequest request = BackfillRequest.builder("lib-verify").from("2024-01-01").to("2024-01-02").build();
        try (Sink sink = SinkFactory.forSettings(into); KafkaOffsetSource source = KafkaOffsetSource.create(kafka)) {
            BackfillJob.Settings job = BackfillJob.Settings.builder(request, kafka).job("orders-2024-01-01").build();
            new BackfillJob(sink, job, BackfillJob.Events.NONE, RunListener.NONE)
                    .run(() -> BackfillJob.Cluster.of(source, request.topic()));
        }
        for (int call = 1; call <= 2; call++) {
            VerifyReport report;
            // --- the README example, with the broker and file replaced ---
            RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
            Verification verification = new Verification(kafka, decoder, TombstoneMode.DELETE, ConflictMode.NEWER_WINS,
                    false, Verification.Options.DEFAULTS);
            try (Sink sink = SinkFactory.forSettings(into)) {
                sink.openForVerify();
                Plan plan = sink.jobStore().load("orders-2024-01-01").orElseThrow().plan();   // or any plan: a range, resolved
                report = verification.verify(plan, sink);
                System.out.println(report.agrees() + " " + report.counts());      // true {MATCHING=1, MISSING=0, ...}
                report.samples().forEach((verdict, keys) -> keys.forEach(k -> System.out.println(verdict + " "
                        + k.key() + " at partition " + k.partition() + " offset " + k.offset() + ": " + k.differing())));
            }
            // --- end of the README example ---
            if (call == 1) {
                assertThat(report.agrees()).isTrue();
                assertThat(report.count(Verdict.MATCHING)).isEqualTo(1);
                try (var c = java.sql.DriverManager.getConnection(url); var s = c.createStatement()) {
                    s.execute("UPDATE orders SET status = 'refunded'");
                }
            } else {
                assertThat(report.agrees()).isFalse();
                assertThat(report.count(Verdict.DIFFERENT)).isEqualTo(1);
                assertThat(report.samples().get(Verdict.DIFFERENT).get(0).differing()).containsExactly("status");
            }
        }
    }
}
