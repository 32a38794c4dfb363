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

    /**
     * The script keeps each option's values in a variable named by the option's label: two options of a command
     * under one label would complete with the last one's values (--on-conflict offered --progress's).
     */
    @Test
    void everyOptionOfACommandCompletesItsOwnValues() {
        String script = CliRun.of("completion", "bash").out();
        java.util.regex.Pattern line = java.util.regex.Pattern.compile("local (\\w+)_option_args=\\((.*)\\) # (--\\S+) values");
        java.util.Map<String, String> inFunction = new java.util.HashMap<>();
        int checked = 0;
        for (String l : script.lines().toList()) {
            if (l.startsWith("function ")) {
                inFunction.clear();
            }
            java.util.regex.Matcher m = line.matcher(l.strip());
            if (m.matches()) {
                String before = inFunction.put(m.group(1), m.group(2));
                assertThat(before == null || before.equals(m.group(2))).as("%s shares the label %s with another "
                        + "option of other values", m.group(3), m.group(1)).isTrue();
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(5);
        assertThat(script).contains("(\"newer-wins\" \"overwrite\" \"insert-only\") # --on-conflict values");
    }

    /** What bash offers at the end of {@code line} (the words so far, the last being completed). */
    private static String complete(Path script, String line) throws Exception {
        String program = "source " + script + "\nCOMP_LINE='" + line + "'\nCOMP_WORDS=(" + line
                + ")\nCOMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\nCOMP_POINT=${#COMP_LINE}\n"
                + (line.endsWith(" ") ? "COMP_WORDS+=('')\nCOMP_CWORD=$(( COMP_CWORD + 1 ))\n" : "")
                + "_complete_kbackfill\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
        Process bash = new ProcessBuilder("bash", "-c", program).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bash.waitFor()).as(out).isZero();
        return out;
    }

    /** {@code kbackfill --topic x --on-tombstone <TAB>}, the README's short form, completes as {@code run} does. */
    @Test
    void theShortFormOfRunCompletesItsOptionsValues(@TempDir Path dir) throws Exception {
        Path script = dir.resolve("kbackfill-completion.bash");
        Files.writeString(script, CliRun.of("completion", "bash").out());
        assertThat(complete(script, "kbackfill --topic x --on-tombstone ").lines().toList())
                .containsExactlyInAnyOrder("delete", "soft-delete", "ignore");
        assertThat(complete(script, "kbackfill run --topic x --on-tombstone ").lines().toList())
                .containsExactlyInAnyOrder("delete", "soft-delete", "ignore");
        assertThat(complete(script, "kbackfill ")).contains("run").contains("verify");
    }

    @Test
    void anUnknownShellIsBadInput() {
        CliRun run = CliRun.of("completion", "fish");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).contains("fish").contains("bash, zsh");
    }
}
