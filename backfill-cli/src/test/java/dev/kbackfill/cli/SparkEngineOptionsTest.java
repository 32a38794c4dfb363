package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The Spark engine's options, checked by the command line before anything runs. */
class SparkEngineOptionsTest {

    @Test
    void sparkSettingsWithoutTheSparkEngineAreBadInput() {
        CliRun run = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--master", "local[2]");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).contains("--master needs --engine spark");
        CliRun waves = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--engine", "spark",
                "--spark-wave-partitions", "0");
        assertThat(waves.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(waves.err()).contains("invalid --spark-wave-partitions '0'").contains("see 'kbackfill run --help'");
        CliRun mode = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--engine", "spark",
                "--deploy-mode", "remote");
        assertThat(mode.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(mode.err()).contains("invalid --deploy-mode 'remote': expected client or cluster");
        CliRun engine = CliRun.of("run", "--topic", "t", "--from", "earliest", "--to", "latest", "--engine", "flink");
        assertThat(engine.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(engine.err()).contains("flink");
    }
}
