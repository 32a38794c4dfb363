package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Test;

class SparkJobSpecTest {

    private static Plan plan(int partitions) {
        List<PartitionRange> ranges = new java.util.ArrayList<>();
        for (int p = partitions - 1; p >= 0; p--) {
            ranges.add(new PartitionRange(p, 0, 10, 0, 10, Optional.empty(), List.of()));
        }
        return new Plan(BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-02").build(),
                Instant.parse("2024-01-03T00:00:00Z"), Optional.empty(), Optional.empty(), "cluster", "topic-id",
                TopicInfo.TimestampType.CREATE_TIME, ranges, List.of());
    }

    @Test
    void wavesSplitThePlansPartitionsInOrderAndTheSamePlanAlwaysTheSameWay() {
        assertThat(SparkJobSpec.waves(plan(5), 2)).containsExactly(List.of(0, 1), List.of(2, 3), List.of(4));
        assertThat(SparkJobSpec.waves(plan(5), 64)).containsExactly(List.of(0, 1, 2, 3, 4));
        assertThat(SparkJobSpec.waves(plan(5), 2)).isEqualTo(SparkJobSpec.waves(plan(5), 2));
    }

    @Test
    void aSpecSurvivesItsJsonWholeAndAnotherDocumentIsBadInput() {
        SparkJobSpec spec = new SparkJobSpec("orders-job", "spark, 2 partitions per wave", plan(3),
                List.of("run", "--topic", "orders", "--sink", "delta:/tmp/t"), SparkJobSpec.waves(plan(3), 2), 4);
        SparkJobSpec back = SparkJobSpec.fromJson(spec.toJson());
        assertThat(back).isEqualTo(spec);
        assertThat(spec.toJson()).contains("\"kbackfill-spark-spec\" : 1");
        assertThatThrownBy(() -> SparkJobSpec.fromJson("{\"kbackfill-spark-spec\": 2}"))
                .isInstanceOf(RequestException.class).hasMessageContaining("version 1");
    }

    @Test
    void theLaunchsOwnOptionsAreLeftOutOfTheDriversCommandLine() {
        assertThat(EngineOptions.withoutLaunchOptions(List.of("run", "--topic", "t", "--engine", "spark", "--master=local[2]",
                "--conf", "a=b", "--plan", "p.json", "--spark-wave-partitions", "8", "--batch-size", "10")))
                .containsExactly("run", "--topic", "t", "--batch-size", "10");
    }

    @Test
    void sparkSettingsWithoutTheSparkEngineAreBadInput() {
        CliRun run = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--master", "local[2]");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).contains("--master needs --engine spark");
        CliRun waves = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--engine", "spark",
                "--spark-wave-partitions", "0");
        assertThat(waves.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(waves.err()).contains("invalid --spark-wave-partitions '0'");
        CliRun engine = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--engine", "flink");
        assertThat(engine.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(engine.err()).contains("flink");
    }
}
