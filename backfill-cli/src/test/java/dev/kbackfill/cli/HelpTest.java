package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The help people read: options in sections, examples and exit codes on every command, and every command line
 * shown to users, in help and in the README and docs, one the command line accepts.
 */
class HelpTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    private static Map<String, CommandLine> commands() {
        Map<String, CommandLine> all = new java.util.LinkedHashMap<>();
        CommandLine root = Kbackfill.commandLine();
        all.put("kbackfill", root);
        root.getSubcommands().forEach((name, cli) -> {
            if (!name.equals("help")) {
                all.put(name, cli);
            }
        });
        return all;
    }

    @Test
    void everyOptionOfEveryCommandIsInAHelpSection() {
        commands().forEach((name, cli) -> cli.getCommandSpec().options().forEach(o -> assertThat(
                HelpSections.sectionOf(o)).as(name + " " + o.longestName() + ": add it to HelpSections")
                .isNotEqualTo(HelpSections.UNSORTED)));
    }

    /** A command line that names its command builds only that one, and it is the same command as in the whole. */
    @Test
    void aCommandBuiltAloneIsTheCommandOfTheWholeCommandLine() {
        CommandLine whole = Kbackfill.commandLine();
        whole.getSubcommands().forEach((name, cli) -> {
            CommandLine alone = Kbackfill.commandLine(name, new dev.kbackfill.core.run.RunHandle());
            if (name.equals("help") || name.equals("completion")) {
                assertThat(alone.getSubcommands()).as(name).hasSameSizeAs(whole.getSubcommands());
                return;
            }
            assertThat(alone.getSubcommands()).as(name).containsOnlyKeys(name);
            assertThat(alone.getSubcommands().get(name).getUsageMessage()).as(name).isEqualTo(cli.getUsageMessage());
        });
        assertThat(Kbackfill.commandLine("--topic", new dev.kbackfill.core.run.RunHandle()).getSubcommands()).hasSameSizeAs(whole.getSubcommands());
    }

    /** verify creates and changes nothing: its help does not offer run's options that would. */
    @Test
    void verifyHelpLeavesOutTheOptionsThatCreateOrChange() {
        String help = Kbackfill.commandLine().getSubcommands().get("verify").getUsageMessage();
        assertThat(help).doesNotContain("--create-table").doesNotContain("--evolve-schema")
                .doesNotContain("--create-topic").contains("--sink").contains("--samples");
        assertThat(Kbackfill.commandLine().getSubcommands().get("run").getUsageMessage()).contains("--create-table")
                .contains("continue:FIRST");
    }

    @Test
    void runHelpShowsItsOptionsInSectionsInOrder() {
        String help = Kbackfill.commandLine().getSubcommands().get("run").getUsageMessage();
        List<String> headings = help.lines().filter(l -> l.matches("[A-Z][a-z ]+( [a-z]+)*:")).toList();
        assertThat(headings).containsSubsequence("Source:", "Range:", "Sink and job:", "Modes:", "Formats:",
                "Limits and retries:", "Engine:", "Output:", "Kafka client:", "Help:", "Exit codes:", "Examples:");
        assertThat(help).doesNotContain(HelpSections.UNSORTED);
        assertThat(help.indexOf("--from=BOUND")).isBetween(help.indexOf("Range:"), help.indexOf("Sink and job:"));
    }

    /**
     * Help wraps at spaces only as far as people can tell: picocli breaks lines where Java's line breaker may, after
     * '.', ':' and '-' too, which cut "12:00", "kbackfill.properties" and "e.g." in two. A token of the help's own
     * text (its descriptions, footers, option descriptions) that holds such a character must not be found split
     * over two lines.
     */
    @Test
    void noLineOfHelpSplitsAWordAtItsPunctuation() {
        java.util.regex.Pattern inner = java.util.regex.Pattern.compile("[^\\s]*[A-Za-z0-9][.:-][A-Za-z0-9][^\\s]*");
        List<String> split = new ArrayList<>();
        commands().forEach((name, cli) -> {
            CommandLine.Model.CommandSpec spec = cli.getCommandSpec();
            List<String> texts = new ArrayList<>(List.of(spec.usageMessage().description()));
            texts.addAll(List.of(spec.usageMessage().footer()));
            spec.options().forEach(o -> texts.addAll(List.of(o.description())));
            spec.subcommands().values().forEach(c -> texts.addAll(List.of(c.getCommandSpec().usageMessage().description())));
            java.util.Set<String> tokens = new java.util.HashSet<>();
            texts.forEach(t -> {
                java.util.regex.Matcher m = inner.matcher(t);
                while (m.find()) {
                    tokens.add(m.group());
                }
            });
            List<String> lines = cli.getUsageMessage().lines().toList();
            for (int i = 0; i + 1 < lines.size(); i++) {
                String a = lines.get(i);
                String b = lines.get(i + 1).strip();
                if (a.isBlank() || b.isEmpty() || !a.matches(".*\\S[.:-]$")) {
                    continue;
                }
                String head = a.substring(a.lastIndexOf(' ') + 1);
                String tail = b.split("\\s+")[0];
                if (tokens.stream().anyMatch(t -> t.contains(head + tail) || (head + tail).startsWith(t)
                        && t.length() > head.length())) {
                    split.add(name + ": '" + head + "' / '" + tail + "'");
                }
            }
        });
        assertThat(split).as("reword these so the line breaks at a space").isEmpty();
    }

    @Test
    void everyCommandShowsExamplesAndExitCodesWithinEightyColumns() {
        commands().forEach((name, cli) -> {
            String help = cli.getUsageMessage();
            assertThat(help).as(name).contains("\nExit codes:\n").contains("\nExamples:\n");
            assertThat(help.lines()).as(name).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));
        });
    }

    @Test
    void everyExampleInHelpIsACommandLineKbackfillAccepts() {
        commands().forEach((name, cli) -> {
            List<String> examples = commandLines(String.join("\n", cli.getCommandSpec().usageMessage().footer())
                    .replace("%n", "\n").lines().filter(l -> l.startsWith("  ")).toList(), "kbackfill ");
            assertThat(examples).as(name).isNotEmpty();
            examples.forEach(HelpTest::assertAccepted);
        });
    }

    @Test
    void everyCommandLineInTheReadmeAndDocsIsOneKbackfillAccepts() throws IOException {
        List<Path> files = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(files::add);
        }
        int checked = 0;
        for (Path file : files) {
            List<String> code = new ArrayList<>();
            boolean inCode = false;
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("```")) {
                    inCode = !inCode;
                } else if (inCode) {
                    code.add(line);
                }
            }
            for (String command : commandLines(code, "bin/kbackfill ")) {
                assertThat(command).as(file.getFileName().toString()).satisfies(HelpTest::assertAccepted);
                checked++;
            }
        }
        assertThat(checked).as("command lines found in README.md and docs/").isGreaterThan(20);
    }

    @Test
    void everyOptionTheReadmeNamesIsAnOptionOfKbackfill() throws IOException {
        java.util.Set<String> options = new java.util.HashSet<>();
        commands().values().forEach(cli -> cli.getCommandSpec().options().forEach(o -> options.addAll(
                List.of(o.names()))));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("`(--[a-z][a-z-]*)[ =`]")
                .matcher(Files.readString(ROOT.resolve("README.md")));
        List<String> named = new ArrayList<>();
        while (m.find()) {
            named.add(m.group(1));
        }
        assertThat(named).hasSizeGreaterThan(30);
        // spark-submit's own options, named where the README shows a spark-submit command
        assertThat(named.stream().filter(o -> !options.contains(o)).distinct().toList())
                .isSubsetOf("--files", "--class");
    }

    /**
     * An option with a fixed set of values names every one of them in its help, and where the README lists them
     * ({@code `--progress auto|bar|...`}) it lists exactly those: a value added to the code shows up in both.
     */
    @Test
    void everyValueListInHelpAndTheReadmeMatchesWhatTheOptionAccepts() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        Map<String, List<java.util.Set<String>>> accepted = new java.util.HashMap<>(); // by option, one set a command
        for (Map.Entry<String, CommandLine> command : commands().entrySet()) {
            for (CommandLine.Model.OptionSpec o : command.getValue().getCommandSpec().options()) {
                if (o.completionCandidates() == null || o.hidden()) {
                    continue;
                }
                java.util.Set<String> values = new java.util.TreeSet<>();
                o.completionCandidates().forEach(values::add);
                String help = String.join(" ", o.description());
                for (String v : values) {
                    assertThat(help).as(command.getKey() + " " + o.longestName() + " help names '" + v + "'")
                            .containsPattern("(?<![a-z-])" + java.util.regex.Pattern.quote(v) + "(?![a-z-])");
                }
                accepted.computeIfAbsent(o.longestName(), k -> new ArrayList<>()).add(values);
            }
        }
        assertThat(accepted).as("options with a fixed set of values").hasSizeGreaterThanOrEqualTo(8);
        int listed = 0;
        for (Map.Entry<String, List<java.util.Set<String>>> option : accepted.entrySet()) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("`" + option.getKey()
                    + " ([a-z-]+(?:\\\\\\|[a-z-]+)+)`").matcher(readme);
            while (m.find()) {
                java.util.Set<String> inReadme = new java.util.TreeSet<>(List.of(m.group(1).split("\\\\\\|")));
                assertThat(option.getValue()).as("README's " + option.getKey() + " " + inReadme).contains(inReadme);
                listed++;
            }
        }
        assertThat(listed).as("value lists in the README").isGreaterThan(3);
    }

    /**
     * The command lines in {@code lines} that invoke {@code prefix}: continuations joined, what precedes the
     * command (variables, a cron schedule, {@code source <(}) and comments removed.
     */
    static List<String> commandLines(List<String> lines, String prefix) {
        List<String> commands = new ArrayList<>();
        StringBuilder current = null;
        for (String raw : lines) {
            String line = raw.strip();
            if (current == null) {
                int at = line.indexOf(prefix);
                if (at < 0 || line.startsWith("#")) {
                    continue;
                }
                current = new StringBuilder();
                line = line.substring(at + prefix.length());
            }
            boolean continued = line.endsWith("\\");
            current.append(' ').append(continued ? line.substring(0, line.length() - 1) : line);
            if (!continued) {
                commands.add(current.toString().strip());
                current = null;
            }
        }
        return commands;
    }

    /** Splits like a shell: quotes group, comments, redirections and pipes end the command. */
    static List<String> words(String command) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                word = word == null ? new StringBuilder() : word;
            } else if (Character.isWhitespace(c)) {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
            } else if ((c == '#' && word == null) || c == '>' || c == '|' || c == ')' || c == '&' || c == ';') {
                break;
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }

    private static void assertAccepted(String command) {
        List<String> args = new ArrayList<>(words(command));
        if (!args.isEmpty() && args.get(0).startsWith("-") && !List.of("-h", "--help", "-V", "--version")
                .contains(args.get(0))) {
            args.add(0, "run");
        }
        try {
            CommandLine.ParseResult parsed = Kbackfill.commandLine().parseArgs(args.toArray(String[]::new));
            assertThat(parsed.hasSubcommand() || parsed.isUsageHelpRequested() || parsed.isVersionHelpRequested())
                    .as(command).isTrue();
        } catch (CommandLine.ParameterException e) {
            throw new AssertionError("kbackfill " + command + "\n  is refused: " + e.getMessage(), e);
        }
    }
}
