package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Bad input is rejected before any cluster is asked: one line on stderr naming the bad value and the accepted
 * forms, exit 2, nothing on stdout. The bootstrap server points at a closed port, so a command that tried Kafka
 * would fail differently (exit 1).
 */
class PlanCommandBadInputTest {

    private static final String NOWHERE = "127.0.0.1:1";

    private static CliRun plan(String... extra) {
        String[] base = {"plan", "--bootstrap-server", NOWHERE};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return CliRun.of(args);
    }

    private static void assertBadInput(CliRun run, String... fragments) {
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.out()).isEmpty();
        assertThat(run.errLines()).as(run.err()).hasSize(1);
        assertThat(run.err()).startsWith("kbackfill plan: ").doesNotContain("Exception").doesNotContain("\tat ");
        for (String f : fragments) {
            assertThat(run.err()).contains(f);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "2024-13-01 | 2024-02-01 | invalid --from '2024-13-01': not a valid date",
            "2024-01-01 | tomorrow | invalid --to 'tomorrow'",
            "1704067200 | latest | invalid --from '1704067200': ambiguous number",
            "100 | latest | invalid --from '100': ambiguous number: write offset:100",
            "{\"orders\":{\"0\":1 | latest | malformed JSON",
            "{\"orders\":{\"0\":-5}} | latest | offset -5 is negative",
    })
    void aMalformedBoundNamesItselfAndTheAcceptedForms(String from, String to, String message) {
        assertBadInput(plan("--topic", "orders", "--from", from, "--to", to), message, "accepted forms: earliest or -2");
    }

    /** Without --bootstrap-server, a bad bound is still the only line: the default cluster is named only when asked. */
    @Test
    void aBadBoundIsTheOnlyLineBeforeAnyClusterIsNamed() {
        for (String command : new String[] {"plan", "verify", "inspect"}) {
            CliRun run = switch (command) {
                case "inspect" -> CliRun.of("inspect", "2024-01-01");
                case "plan" -> CliRun.of("plan", "--topic", "orders", "--from", "tomorrow", "--to", "latest");
                default -> CliRun.of(command, "--topic", "orders", "--from", "tomorrow", "--to", "latest", "--sink",
                        "jdbc:sqlite:/nonexistent/x.db", "--table", "t");
            };
            assertThat(run.exitCode()).as(command + ": " + run.err()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(run.errLines()).as(command + ": " + run.err()).hasSize(1);
            assertThat(run.err()).as(command).doesNotContain("localhost:9092");
        }
        CliRun connect = CliRun.of("inspect", "connect:orders-sink", "--connect-url", "ftp://connect:8083");
        assertThat(connect.exitCode()).as(connect.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(connect.errLines()).as(connect.err()).containsExactly("kbackfill inspect: invalid --connect-url "
                + "'ftp://connect:8083': expected a Kafka Connect worker's REST address, http://HOST:PORT or "
                + "https://HOST:PORT");
    }

    @Test
    void fromAfterToIsBadInput() {
        assertBadInput(plan("--topic", "orders", "--from", "2024-01-02", "--to", "2024-01-01"),
                "--from '2024-01-02' (2024-01-02T00:00:00Z) is after --to '2024-01-01' (2024-01-01T00:00:00Z)");
        assertBadInput(plan("--topic", "orders", "--from", "offset:9", "--to", "offset:3"), "is after --to");
    }

    @Test
    void anUnknownZoneIsBadInput() {
        assertBadInput(plan("--topic", "orders", "--from", "2024-01-01", "--to", "2024-01-02", "--zone", "Mars/Base"),
                "invalid --zone 'Mars/Base': expected a region id");
    }

    @Test
    void anAmbiguousLocalTimeIsBadInput() {
        assertBadInput(plan("--topic", "orders", "--from", "2024-10-27T02:30", "--to", "latest", "--zone",
                "Europe/Paris"), "occurs twice in Europe/Paris");
    }

    @Test
    void aMalformedPartitionListIsBadInput() {
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "--partitions", "3-1"),
                "invalid --partitions '3-1': range 3-1 runs backwards; expected partition numbers and ranges");
    }

    @Test
    void anInvalidTopicNameIsBadInput() {
        assertBadInput(plan("--topic", "no spaces", "--from", "earliest", "--to", "latest"),
                "invalid --topic 'no spaces'");
    }

    @Test
    void missingOptionsAreBadInput() {
        assertBadInput(plan("--topic", "orders", "--to", "latest"), "missing --from: say where the backfill starts");
        assertBadInput(plan("--from", "earliest", "--to", "latest"), "missing --topic");
    }

    @Test
    void anUnknownFormatListsTheFormats() {
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "--format", "xml"),
                "--format", "xml", "table, json, spark");
    }

    @Test
    void aGroupIdIsRefusedWhereverItComesFrom(@TempDir Path dir) throws Exception {
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "-X", "group.id=live-app"),
                "group.id 'live-app' (from -X) is not allowed: kbackfill never joins or commits to a consumer group");
        Path config = dir.resolve("client.properties");
        Files.writeString(config, "security.protocol=PLAINTEXT\ngroup.id=live-app\n");
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "--command-config",
                config.toString()), "group.id 'live-app' (from --command-config " + config + ") is not allowed");
    }

    @Test
    void aMissingCommandConfigIsBadInput(@TempDir Path dir) {
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "--command-config",
                dir.resolve("nope.properties").toString()), "cannot read --command-config", "no such file");
    }

    @Test
    void anInvalidIsolationLevelIsBadInput() {
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "-X",
                "isolation.level=dirty"), "invalid isolation.level 'dirty': expected read_committed or read_uncommitted");
    }

    @Test
    void anOutFileInAMissingDirectoryIsBadInputAndNothingIsWritten(@TempDir Path dir) {
        Path out = dir.resolve("missing/plan.json");
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "--out", out.toString()),
                "invalid --out '" + out + "'");
        assertThat(dir.resolve("missing")).doesNotExist();
    }

    @Test
    void noCommandIsBadInput() {
        CliRun run = CliRun.of();
        assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).startsWith("kbackfill: missing command: expected one of run, plan, status, jobs, reset, compact, verify, repair, inspect, demo, completion, help");
    }

    @Test
    void anUnknownOptionIsBadInput() {
        assertBadInput(plan("--topic", "orders", "--from", "earliest", "--to", "latest", "--frmo", "x"),
                "Unknown option", "--frmo");
    }

    @Test
    void anUnreachableClusterIsARuntimeFailureNotBadInput() {
        CliRun run = plan("--topic", "orders", "--from", "earliest", "--to", "latest", "-X",
                "default.api.timeout.ms=2000", "-X", "request.timeout.ms=1000");
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.FAILURE);
        assertThat(run.errLines()).hasSize(1);
        assertThat(run.err()).startsWith("kbackfill plan: could not describe the cluster: no answer from the cluster at "
                + "127.0.0.1:1 within 2 s");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void helpListsTheBoundFormsAndExitCodes() {
        CliRun run = CliRun.of("plan", "--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("--from=BOUND").contains("offset:N").contains("--format=FORMAT");
        assertThat(CliRun.of("--help").out()).contains("Exit codes:").contains("2     bad input").contains("143   stopped on SIGTERM");
    }
}
