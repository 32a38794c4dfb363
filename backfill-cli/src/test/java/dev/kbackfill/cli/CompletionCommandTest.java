package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompletionCommandTest {

    @Test
    void theBashScriptCompletesCommandsOptionsAndModesAndBashLoadsIt(@TempDir Path dir) throws Exception {
        CliRun run = CliRun.of("completion", "bash");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("_complete_kbackfill").contains("--on-conflict").contains("newer-wins")
                .contains("soft-delete").contains("--engine").contains("status").contains("avro");
        Path script = dir.resolve("kbackfill-completion.bash");
        Files.writeString(script, run.out());
        Process bash = new ProcessBuilder("bash", "-c", "source " + script + " && complete -p kbackfill")
                .redirectErrorStream(true).start();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bash.waitFor()).as(out).isZero();
        assertThat(out).contains("_complete_kbackfill kbackfill");
    }

    @Test
    void anUnknownShellIsBadInput() {
        CliRun run = CliRun.of("completion", "fish");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).contains("fish").contains("bash, zsh");
    }
}
