package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's job-as-a-library example, verbatim but for the bootstrap address and the file's directory. */
@Tag("kafka")
class JobLibraryExampleIT {

    @TempDir
    Path dir;

    @Test
    void theReadmeExampleRunsAndASecondCallHasNothingToDo() throws Exception {
        EmbeddedKafka cluster = SharedKafka.get();
        cluster.createTopic("lib-orders", 1, Map.of("retention.ms", "-1"));
        Orders.send(cluster, List.of(new org.apache.kafka.clients.producer.ProducerRecord<>("lib-orders", 0,
                java.time.Instant.parse("2024-01-01T10:00:00Z").toEpochMilli(), "k1".getBytes(),
                "{\"status\":\"paid\"}".getBytes())), Map.of());
        String url = "jdbc:sqlite:" + dir.resolve("orders.db");
        for (int call = 1; call <= 2; call++) {
            BackfillJob.Outcome outcome;
            // --- the README example, with the broker, topic and file replaced ---
            Map<String, Object> kafka = Map.of("bootstrap.servers", cluster.bootstrapServers());
            BackfillRequest request = BackfillRequest.builder("lib-orders").from("2024-01-01").to("2024-01-02").build();
            SinkSettings into = new SinkSettings(url, "orders", Optional.empty(), Optional.empty(),
                    ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT);
            try (Sink sink = SinkFactory.forSettings(into); KafkaOffsetSource source = KafkaOffsetSource.create(kafka)) {
                BackfillJob.Settings job = BackfillJob.Settings.builder(request, kafka).job("orders-2024-01-01").build();
                outcome = new BackfillJob(sink, job, BackfillJob.Events.NONE, RunListener.NONE)
                        .run(() -> BackfillJob.Cluster.of(source, request.topic()));
                if (outcome instanceof BackfillJob.Outcome.Completed done) {
                    System.out.println(done.summary().written() + " rows written, " + done.summary().keptOut() + " kept out");
                }   // a second call: Outcome.NothingToDo
            }
            // --- end of the README example ---
            if (call == 1) {
                assertThat(outcome).isInstanceOf(BackfillJob.Outcome.Completed.class);
                assertThat(((BackfillJob.Outcome.Completed) outcome).summary().written()).isEqualTo(1);
            } else {
                assertThat(outcome).isInstanceOf(BackfillJob.Outcome.NothingToDo.class);
            }
        }
        assertThat(Orders.table(url, "orders")).isEqualTo(Map.of("k1", "paid"));
    }
}
