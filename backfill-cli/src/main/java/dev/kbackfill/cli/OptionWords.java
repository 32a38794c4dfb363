package dev.kbackfill.cli;

import static dev.kbackfill.resolver.Wording.Term.ALLOW_DATA_LOSS;
import static dev.kbackfill.resolver.Wording.Term.BOOTSTRAP_SERVERS;
import static dev.kbackfill.resolver.Wording.Term.CONNECT_URL;
import static dev.kbackfill.resolver.Wording.Term.FROM;
import static dev.kbackfill.resolver.Wording.Term.PARTITIONS;
import static dev.kbackfill.resolver.Wording.Term.READER_SETTING;
import static dev.kbackfill.resolver.Wording.Term.TO;
import static dev.kbackfill.resolver.Wording.Term.TOPIC;
import static dev.kbackfill.resolver.Wording.Term.ZONE;

import dev.kbackfill.resolver.Wording;
import java.util.Map;

/**
 * The resolver's messages and notes in the command line's words: each setting of a request named by the option that
 * sets it ({@code invalid --from 'x'} where a library caller reads {@code invalid from bound 'x'}).
 */
final class OptionWords {

    static final Wording WORDING = Wording.of(Map.ofEntries(
            Map.entry(TOPIC, "--topic"),
            Map.entry(FROM, "--from"),
            Map.entry(TO, "--to"),
            Map.entry(ZONE, "--zone"),
            Map.entry(PARTITIONS, "--partitions"),
            Map.entry(ALLOW_DATA_LOSS, "--allow-data-loss"),
            Map.entry(READER_SETTING, "--checkpoint-property"),
            Map.entry(CONNECT_URL, "--connect-url"),
            Map.entry(BOOTSTRAP_SERVERS, "--bootstrap-server"),
            Map.entry(Wording.Term.ARCHIVE, "--archive"),
            Map.entry(Wording.Term.ALLOW_INFERRED_OFFSETS, "--allow-inferred-offsets"),
            Map.entry(Wording.Term.ARCHIVE_FIELDS, "--archive-fields")));

    private OptionWords() {
    }

    /** From now on, this process's messages and notes name options. */
    static void speak() {
        Wording.use(WORDING);
    }
}
