package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A cluster that does not answer fails the command within --connect-timeout, naming where it was looked for. */
class UnreachableClusterTest {

    @Test
    void anUnreachableClusterFailsWithinTheConnectTimeoutNamingTheBootstrapServers() {
        long started = System.nanoTime();
        CliRun plan = CliRun.of("plan", "--topic", "orders", "--from", "earliest", "--to", "latest",
                "--bootstrap-server", "127.0.0.1:1", "--connect-timeout", "2s");
        double seconds = (System.nanoTime() - started) / 1e9;
        assertThat(plan.exitCode()).isEqualTo(ExitCodes.FAILURE);
        assertThat(plan.err()).contains("no answer from the cluster at 127.0.0.1:1 within 2 s");
        assertThat(seconds).as("gave up after the connect timeout, not the clients' minute").isLessThan(20);
    }

    @Test
    void aConnectTimeoutThatIsNoDurationIsBadInput() {
        CliRun plan = CliRun.of("plan", "--topic", "orders", "--from", "earliest", "--to", "latest",
                "--connect-timeout", "soon");
        assertThat(plan.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(plan.err()).contains("invalid --connect-timeout 'soon'");
    }
}
