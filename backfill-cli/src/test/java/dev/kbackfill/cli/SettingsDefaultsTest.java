package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Defaults from KBACKFILL_* variables and a settings file: a flag wins, then the environment, then the file. */
class SettingsDefaultsTest {

    private static CommandLine.Model.CommandSpec parsedRun(Map<String, String> env, String... args) {
        CommandLine cli = Kbackfill.commandLine();
        cli.setDefaultValueProvider(new SettingsDefaults(env));
        return cli.parseArgs(args).subcommand().commandSpec();
    }

    @Test
    void aFlagWinsThenTheEnvironmentThenTheSettingsFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("kbackfill.properties");
        Files.writeString(file, "sink=jdbc:sqlite:/from/file.db\nbatch-size=77\ntable=from_file\ncreate-table=true\n");
        Map<String, String> env = Map.of("KBACKFILL_CONFIG", file.toString(), "KBACKFILL_SINK", "jdbc:sqlite:/from/env.db",
                "KBACKFILL_MAX_RECORDS", "1000");
        CommandLine.Model.CommandSpec run = parsedRun(env, "run", "--topic", "orders", "--from", "earliest", "--to",
                "latest", "--table", "from_flag");
        assertThat((String) run.findOption("--sink").getValue()).isEqualTo("jdbc:sqlite:/from/env.db");
        assertThat((String) run.findOption("--table").getValue()).isEqualTo("from_flag");
        assertThat((Integer) run.findOption("--batch-size").getValue()).isEqualTo(77);
        assertThat((Long) run.findOption("--max-records").getValue()).isEqualTo(1000L);
        assertThat((Boolean) run.findOption("--create-table").getValue()).isTrue();
        // an option nobody set keeps its own default
        assertThat((String) run.findOption("--on-conflict").getValue()).isEqualTo("newer-wins");
    }

    @Test
    void aSettingOfAnotherCommandIsAcceptedThoughOnlyTheNamedCommandIsBuilt(@TempDir Path dir) throws Exception {
        // plan builds only its own options; rows-per-file is compact's, in the same shared settings file
        Path file = dir.resolve("kbackfill.properties");
        Files.writeString(file, "rows-per-file=1000\n");
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = Kbackfill.execute(Map.of("KBACKFILL_CONFIG", file.toString()), new java.io.PrintWriter(out),
                new java.io.PrintWriter(err), "plan", "--help");
        assertThat(err.toString()).isEmpty();
        assertThat(code).isZero();
        // a key no command knows is refused, and the nearest key of any command is offered
        Files.writeString(file, "rows-per-fil=1000\n");
        code = Kbackfill.execute(Map.of("KBACKFILL_CONFIG", file.toString()), new java.io.PrintWriter(out),
                new java.io.PrintWriter(err), "plan", "--help");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("unknown setting 'rows-per-fil'").contains("did you mean 'rows-per-file'?");
    }

    /** A value the option cannot take, set in the file: exit 2 naming the file and its line, for every command. */
    @Test
    void aBadValueInTheSettingsFileIsNamedWithTheFileAndTheLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("kbackfill.properties");
        Files.writeString(file, "# cron defaults\nsink=jdbc:sqlite:/tmp/x.db\ncreate-table=yes\n");
        for (String command : new String[] {"run", "verify"}) {
            java.io.StringWriter err = new java.io.StringWriter();
            int code = Kbackfill.execute(Map.of("KBACKFILL_CONFIG", file.toString()), new java.io.PrintWriter(
                    new java.io.StringWriter()), new java.io.PrintWriter(err), command, "--topic", "orders", "--from",
                    "earliest", "--to", "latest");
            assertThat(code).as(command).isEqualTo(2);
            assertThat(err.toString()).as(command).contains("'yes' is not a boolean (set in " + file
                    + " line 3 ($KBACKFILL_CONFIG))").doesNotContain("\tat ");
        }
    }

    @Test
    void theVariableOfAnOptionIsItsNameInCapitals() {
        assertThat(SettingsDefaults.variable("--max-records-per-second")).isEqualTo("KBACKFILL_MAX_RECORDS_PER_SECOND");
        assertThat(SettingsDefaults.variable("--sink")).isEqualTo("KBACKFILL_SINK");
    }

    @Test
    void aNamedSettingsFileThatCannotBeReadIsRefused(@TempDir Path dir) {
        assertThatThrownBy(() -> new SettingsDefaults(Map.of("KBACKFILL_CONFIG", dir.resolve("missing").toString())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no such file");
    }
}
