package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The files a run writes beside its sink (its report, its metrics, its lineage events) are checked as plan's and
 * inspect's are, by the one check: a directory, or a path in a missing directory, is refused in one line, exit 2,
 * before anything is contacted or created.
 */
class RunOutputFilesTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"--report", "--metrics-file", "--lineage"})
    void anOutputFileInAMissingDirectoryOrADirectoryIsBadInputAndNothingIsCreated(String option) {
        for (Path file : new Path[] {dir.resolve("missing/out.json"), dir}) {
            Path db = dir.resolve("x.db");
            CliRun run = CliRun.of("run", "--bootstrap-server", "127.0.0.1:1", "--topic", "orders", "--from",
                    "earliest", "--to", "latest", "--sink", "jdbc:sqlite:" + db, "--create-table", option,
                    file.toString());
            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(run.errLines()).as(run.err()).hasSize(1);
            assertThat(run.err()).startsWith("kbackfill run: invalid " + option + " '" + file + "': ")
                    .contains("expected a file path in a writable directory").doesNotContain("Exception");
            assertThat(Files.exists(db)).isFalse();
            assertThat(dir.resolve("missing")).doesNotExist();
        }
    }
}
