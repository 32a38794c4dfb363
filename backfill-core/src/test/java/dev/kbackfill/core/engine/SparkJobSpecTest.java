package dev.kbackfill.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunLimits;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Test;

class SparkJobSpecTest {

    static Plan plan(int partitions) {
        List<PartitionRange> ranges = new java.util.ArrayList<>();
        for (int p = partitions - 1; p >= 0; p--) {
            ranges.add(new PartitionRange(p, 0, 10, 0, 10, Optional.empty(), List.of()));
        }
        return new Plan(BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-02").build(),
                Instant.parse("2024-01-03T00:00:00Z"), Optional.empty(), Optional.empty(), "cluster", "topic-id",
                TopicInfo.TimestampType.CREATE_TIME, ranges, List.of());
    }

    /** A job with every part set to something other than its default. */
    static JobDefinition job(Plan plan) {
        return new JobDefinition(Optional.of("orders-job"), plan.request(), Optional.of(plan),
                new JobDefinition.KafkaClient(Optional.of(Path.of("/etc/kafka/client.properties")),
                        Map.of("security.protocol", "SASL_SSL"), Map.of("bootstrap.servers", "b:9092")),
                new dev.kbackfill.core.sink.SinkTarget("jdbc:postgresql://db/app", "public.orders", Optional.of("backfill"),
                        ConflictMode.INSERT_ONLY, TombstoneMode.SOFT_DELETE, true, true,
                        Optional.of(Path.of("/etc/kafka/sink.properties")), Map.of("bootstrap.servers", "s:9092"),
                        Map.of("delta.appendOnly", "false")),
                new JobDefinition.Decoding(Format.JSON, Format.AVRO, "k", "v", List.of("id", "tenant"),
                        Optional.of(new JobDefinition.Registry("https://registry:8081", Optional.of("reader"),
                                Optional.of(Path.of("/run/token")), Optional.of(Path.of("/etc/ca.p12"))))),
                new JobDefinition.Poison(true, Optional.of("topic:orders.dlq")), true,
                new RunLimits(5, Duration.ofMinutes(3), 7, 11), OptionalInt.of(500), Duration.ofSeconds(42),
                "spark, 2 partitions per wave");
    }

    @Test
    void wavesSplitThePlansPartitionsInOrderAndTheSamePlanAlwaysTheSameWay() {
        assertThat(SparkJobSpec.waves(plan(5), 2)).containsExactly(List.of(0, 1), List.of(2, 3), List.of(4));
        assertThat(SparkJobSpec.waves(plan(5), 64)).containsExactly(List.of(0, 1, 2, 3, 4));
        assertThat(SparkJobSpec.waves(plan(5), 2)).isEqualTo(SparkJobSpec.waves(plan(5), 2));
    }

    @Test
    void aJobSurvivesItsJsonWholeWithEveryPartSet() {
        JobDefinition job = job(plan(3));
        assertThat(JobDefinition.fromJson(job.toJson())).isEqualTo(job);
        JobDefinition defaults = new JobDefinition(Optional.empty(), plan(1).request(), Optional.of(plan(1)),
                new JobDefinition.KafkaClient(Optional.empty(), Map.of(), Map.of()),
                new dev.kbackfill.core.sink.SinkTarget("delta:/t", "t", Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                        false, false, Optional.empty(), Map.of(), Map.of()),
                JobDefinition.Decoding.defaults(), JobDefinition.Poison.FAIL, false, RunLimits.NONE, OptionalInt.empty(),
                Duration.ofMinutes(5), "local");
        assertThat(JobDefinition.fromJson(defaults.toJson())).isEqualTo(defaults);
    }

    @Test
    void aSpecSurvivesItsJsonWholeAndAnotherDocumentIsBadInput() {
        SparkJobSpec spec = new SparkJobSpec(job(plan(3)), SparkJobSpec.waves(plan(3), 2), 4,
                Optional.of(new SparkJobSpec.Launched(2, "abc123")));
        assertThat(SparkJobSpec.fromJson(spec.toJson())).isEqualTo(spec);
        SparkJobSpec own = new SparkJobSpec(job(plan(3)), SparkJobSpec.waves(plan(3), 2), 4, Optional.empty());
        assertThat(SparkJobSpec.fromJson(own.toJson())).isEqualTo(own);
        assertThat(spec.toJson()).contains("\"kbackfill-spark-spec\" : 2");
        assertThatThrownBy(() -> SparkJobSpec.fromJson("{\"kbackfill-spark-spec\": 1, \"arguments\": []}"))
                .isInstanceOf(RequestException.class).hasMessageContaining("version 2");
        assertThatThrownBy(() -> SparkJobSpec.fromJson("{\"kbackfill-spark-spec\": 2, \"job\": {}}"))
                .isInstanceOf(RequestException.class).hasMessageContaining("invalid spec");
    }

    @Test
    void aSpecNeedsTheJobsNameAndFrozenPlan() {
        JobDefinition unnamed = new JobDefinition(Optional.empty(), plan(1).request(), Optional.of(plan(1)),
                job(plan(1)).kafka(), job(plan(1)).sink(), JobDefinition.Decoding.defaults(), JobDefinition.Poison.FAIL,
                false, RunLimits.NONE, OptionalInt.empty(), Duration.ZERO, "spark, 1 partitions per wave");
        assertThatThrownBy(() -> new SparkJobSpec(unnamed, List.of(), 1, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Secrets stay out of the value: the sink's password, the registry's and Kafka's files' contents. */
    @Test
    void theJsonHoldsNoSecretOnlyWhereSecretsAre() {
        String json = job(plan(1)).toJson();
        assertThat(json).doesNotContain("password").contains("/etc/kafka/client.properties").contains("/run/token");
    }

    @Test
    void eventsCarryProgressNotesAndHowTheRunEndedWhole() {
        RunSummary summary = new RunSummary("j", 3, List.of(new PartitionStats(0, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2),
                new PartitionStats(4, 1, 0, 0, 0, 1, 0, 0, 20, 20, 0)), 1234, 5, Duration.ofMillis(1500));
        assertThat(EngineEvents.parse(EngineEvents.done(summary))).contains(new EngineEvents.Done(summary));
        assertThat(EngineEvents.parse(EngineEvents.progress(1, 2, 3, 4))).contains(new EngineEvents.Progress(1, 2, 3, 4));
        assertThat(EngineEvents.parse(EngineEvents.note("a \"quoted\"\nnote"))).contains(new EngineEvents.Note("a \"quoted\"\nnote"));
        assertThat(EngineEvents.parse(EngineEvents.failed(EngineEvents.Kind.CONFLICT, "held", true, summary)))
                .contains(new EngineEvents.Failed(EngineEvents.Kind.CONFLICT, "held", true, Optional.of(summary)));
        assertThat(EngineEvents.parse(EngineEvents.failed(EngineEvents.Kind.FAILURE, "x", false, null)))
                .contains(new EngineEvents.Failed(EngineEvents.Kind.FAILURE, "x", false, Optional.empty()));
        assertThat(EngineEvents.parse("wave 1 of 2: read 1.0 s")).isEmpty();
        assertThat(EngineEvents.done(summary)).doesNotContain("\n");
    }
}
