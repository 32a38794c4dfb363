package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kbackfill.resolver.Wording;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command line names each setting of a request in the resolver's messages by the option that sets it. */
class OptionWordsTest {

    @Test
    void everyTermIsNamedByAnOptionOfRun() {
        CommandLine run = Kbackfill.commandLine().getSubcommands().get("run");
        Set<String> options = new HashSet<>();
        run.getCommandSpec().options().forEach(o -> options.addAll(List.of(o.names())));
        for (Wording.Term t : Wording.Term.values()) {
            assertThat(OptionWords.WORDING.name(t)).as(t.name()).isNotEqualTo(Wording.LIBRARY.name(t)).isIn(options);
        }
    }

    @Test
    void theResolversRefusalsReachTheUserInOptionNames() {
        CliRun bad = CliRun.of("plan", "--bootstrap-server", "127.0.0.1:1", "--topic", "orders",
                "--from", "yesterdayy", "--to", "latest");
        assertThat(bad.err()).startsWith("kbackfill plan: invalid --from 'yesterdayy'")
                .contains("in --zone").doesNotContain("from bound");
        CliRun empty = CliRun.of("plan", "--bootstrap-server", "127.0.0.1:1", "--topic", "orders",
                "--from", "earliest", "--to", "latest", "--partitions", "5-2");
        assertThat(empty.err()).startsWith("kbackfill plan: invalid --partitions '5-2'");
    }
}
