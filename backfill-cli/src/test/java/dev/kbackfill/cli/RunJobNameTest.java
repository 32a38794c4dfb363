package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A job name is the key of a job's state in the sink: an empty one, or one with {@code /} (the Spark engine's sub-jobs
 * are {@code JOB/pN@RUN}), is refused in one line, exit 2, before anything is contacted or created.
 */
class RunJobNameTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "a/b", "orders/p0@k3j9x0q2m1ab-run1", "tab\there"})
    void aJobNameThatCouldNotBeAJobsKeyIsBadInputAndNothingIsCreated(String name) {
        Path db = dir.resolve("x.db");
        CliRun run = CliRun.of("run", "--bootstrap-server", "127.0.0.1:1", "--topic", "orders", "--from", "earliest",
                "--to", "latest", "--sink", "jdbc:sqlite:" + db, "--create-table", "--job", name);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.errLines()).as(run.err()).hasSize(1);
        assertThat(run.err()).startsWith("kbackfill run: invalid --job '").contains("without '/'")
                .doesNotContain("Exception");
        assertThat(Files.exists(db)).isFalse();
    }
}
