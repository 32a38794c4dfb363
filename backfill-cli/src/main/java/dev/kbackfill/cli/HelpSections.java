package dev.kbackfill.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Help with options in sections (source, range, sink and job, modes, formats, limits, engine, output, Kafka client)
 * instead of one alphabetical list of forty, for every command. An option's section is named here by its long
 * name; {@code HelpTest} fails when an option has none, so a new option is placed when it is added.
 */
final class HelpSections {

    /** The sections in the order help shows them, each with its options in the order shown. */
    static final Map<String, List<String>> SECTIONS = sections();

    private static Map<String, List<String>> sections() {
        Map<String, List<String>> s = new LinkedHashMap<>();
        s.put("Source", List.of("--topic", "--partitions", "--archive", "--allow-inferred-offsets", "--archive-fields",
                "--plan", "--at", "--then"));
        s.put("Range", List.of("--from", "--to", "--zone", "--strict-time", "--allow-data-loss", "--connect-url",
                "--checkpoint-property"));
        s.put("Sink and job", List.of("--sink", "--table", "--sink-user", "--create-table", "--evolve-schema", "--partition-by",
                "--delta-table-property", "--create-topic",
                "--sink-bootstrap-server", "--sink-command-config", "--sink-property", "--keys-distinct-in-collation", "--job", "--all", "--yes"));
        s.put("Modes", List.of("--on-conflict", "--version-field", "--live-writer", "--on-tombstone", "--on-error", "--dead-letter",
                "--ignore-unknown-fields"));
        s.put("Formats", List.of("--key-format", "--value-format", "--validate", "--key-column", "--value-column", "--key-fields",
                "--schema-registry-url", "--schema-registry-user", "--schema-registry-token-file",
                "--schema-registry-truststore"));
        s.put("Filters and columns", List.of("--where", "--columns", "--rename", "--header-columns"));
        s.put("Limits and retries", List.of("--batch-size", "--max-records", "--max-duration",
                "--max-records-per-second", "--max-bytes-per-second", "--retry-for"));
        s.put("Engine", List.of("--engine", "--master", "--deploy-mode", "--conf", "--spark-wave-partitions",
                "--spark-max-connections", "--spark-spec-out"));
        s.put("Verification", List.of("--verify", "--publish-after-verify", "--samples", "--dry-run"));
        s.put("Compaction", List.of("--key-columns", "--rows-per-file", "--forget-deletes-before"));
        s.put("Demo", List.of("--records"));
        s.put("Output", List.of("--progress", "--format", "--out", "--chart", "--rate", "--report", "--metrics-file",
                "--metrics-otlp", "--lineage", "--lineage-namespace", "--timings"));
        s.put("Kafka client", List.of("--bootstrap-server", "--command-config", "--connect-timeout", "-X"));
        s.put("Help", List.of("--help", "--version"));
        return s;
    }

    /** Where options of no section would go: {@code HelpTest} keeps it empty. */
    static final String UNSORTED = "Other options";

    private HelpSections() {
    }

    /** Renders the option lists of {@code cli} and all its subcommands in sections. */
    /**
     * Options a command shares through a mixin but that do nothing there, left out of its help: verify reads the
     * target, it creates and changes nothing (they are still accepted, so that a run's command line can be verified
     * as it is).
     */
    static final Map<String, List<String>> NOT_SHOWN = Map.of("verify", List.of("--create-table", "--evolve-schema",
            "--create-topic", "--table-property", "--partition-by"));

    static void install(CommandLine cli) {
        cli.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST, HelpSections::render);
        cli.getSubcommands().values().forEach(HelpSections::install);
    }

    static String sectionOf(OptionSpec option) {
        for (Map.Entry<String, List<String>> e : SECTIONS.entrySet()) {
            if (e.getValue().contains(option.longestName())) {
                return e.getKey();
            }
        }
        return UNSORTED;
    }

    private static String render(CommandLine.Help help) {
        Map<String, List<OptionSpec>> bySection = new LinkedHashMap<>();
        SECTIONS.keySet().forEach(k -> bySection.put(k, new ArrayList<>()));
        bySection.put(UNSORTED, new ArrayList<>());
        for (OptionSpec o : help.commandSpec().options()) {
            if (!o.hidden() && java.util.Arrays.stream(o.names())
                    .noneMatch(NOT_SHOWN.getOrDefault(help.commandSpec().name(), List.of())::contains)) {
                bySection.get(sectionOf(o)).add(o);
            }
        }
        StringBuilder text = new StringBuilder();
        bySection.forEach((section, options) -> {
            if (options.isEmpty()) {
                return;
            }
            List<String> order = SECTIONS.getOrDefault(section, List.of());
            text.append(String.format("%n%s:%n", section));
            text.append(help.optionListExcludingGroups(options, help.createDefaultLayout(),
                    java.util.Comparator.comparingInt((OptionSpec o) -> order.indexOf(o.longestName()))
                            .thenComparing(OptionSpec::longestName),
                    help.createDefaultParamLabelRenderer()));
        });
        return text.toString();
    }
}
