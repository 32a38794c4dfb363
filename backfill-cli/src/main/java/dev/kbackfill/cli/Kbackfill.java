package dev.kbackfill.cli;

import java.io.PrintWriter;

import dev.kbackfill.core.run.RunFailure;
import dev.kbackfill.core.run.RunHandle;
import dev.kbackfill.core.run.StopRequest;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.resolver.ResolutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code kbackfill} command line. Only this layer prints and picks exit codes: domain code throws
 * {@link RequestException} (exit 2) or fails at runtime (exit 1), and every error is one line on stderr without a
 * stack trace ({@code KBACKFILL_DEBUG=1} adds it).
 */
@Command(name = "kbackfill", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Replay a chosen slice of a Kafka topic into a destination, exactly once, without touching "
                + "the live pipeline.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:runtime failure (the message says where it stopped)",
                "2:bad input (nothing was read or written)", "3:job conflict",
                "4:verify: the target disagrees with the range",
                "130:stopped on SIGINT at a batch boundary (a rerun resumes)",
                "143:stopped on SIGTERM at a batch boundary (a rerun resumes)"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill demo",
                "  kbackfill plan --topic orders --from 2024-01-01 --to 2024-01-02",
                "  kbackfill --topic orders --from 2024-01-01 --to 2024-01-02 \\",
                "      --sink jdbc:postgresql://db.internal/app",
                "  kbackfill status --job orders-hourly --sink jdbc:postgresql://db.internal/app",
                "%nSettings: every option also from $KBACKFILL_<OPTION> (KBACKFILL_SINK_USER) or the properties file "
                        + "$KBACKFILL_CONFIG; flags win. Secrets only from the environment or files.",
                "$KBACKFILL_CONFIG defaults to ~/.config/kbackfill/kbackfill.properties.",
                "See 'kbackfill COMMAND --help', README.md and docs/."})
public final class Kbackfill implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: expected one of "
                + String.join(", ", spec.subcommands().keySet()));
    }

    /** This command line's hold on the runs its commands start: what a signal stops. */
    final RunHandle runs;

    Kbackfill(RunHandle runs) {
        this.runs = runs;
    }

    public static void main(String[] args) {
        Timings.mainEntered = System.currentTimeMillis();
        nameScannedProviders();
        dev.kbackfill.resolver.OptionalLibraries.addWith(LakeLibraries::add);
        RunHandle runs = new RunHandle();
        onSignals(runs);
        int code = execute(System.getenv(), runs, new PrintWriter(System.out, true), new PrintWriter(System.err, true),
                args);
        System.exit(code);
    }

    /** The SLF4J binding the command line ships (slf4j-simple, configured by its simplelogger.properties). */
    static final String SLF4J_PROVIDER = "org.slf4j.simple.SimpleServiceProvider";
    /** The JDK's own selector provider on Linux, its default where no jar offers another (none of ours does). */
    static final String LINUX_SELECTOR_PROVIDER = "sun.nio.ch.EPollSelectorProvider";

    /**
     * Names the providers that SLF4J and the JDK's selectors otherwise look for in every jar's services files: the
     * first such scan opens every jar on the class path (50-70 ms of a cron run's start with all 180), on the thread
     * asking the cluster for the plan (the first Kafka client's logger and selector). Each is what the scan finds:
     * the one SLF4J binding shipped, and the JDK's default selector provider. A provider named with {@code -D} wins. SLF4J's line
     * saying which provider it loads is left out; its warnings and errors are not (a named provider missing falls back
     * to the scan, with an error line).
     */
    private static void nameScannedProviders() {
        if (System.getProperty("slf4j.provider") == null) {
            System.setProperty("slf4j.provider", SLF4J_PROVIDER);
            if (System.getProperty("slf4j.internal.verbosity") == null) {
                System.setProperty("slf4j.internal.verbosity", "WARN");
            }
        }
        String selectors = "java.nio.channels.spi.SelectorProvider";
        if (System.getProperty(selectors) == null) {
            try {
                Class.forName(LINUX_SELECTOR_PROVIDER, false, null);
                System.setProperty(selectors, LINUX_SELECTOR_PROVIDER);
            } catch (ClassNotFoundException e) {
                // another platform: the JDK looks for its provider as usual
            }
        }
    }

    /**
     * SIGINT and SIGTERM ask the run to stop at a safe point ({@link StopRequest}): the batch being read is written
     * with its progress, the summary says where each partition stands, and the exit code is 130 or 143. A second
     * signal exits at once (whatever is not committed is simply not there; a rerun resumes either way).
     */
    private static void onSignals(RunHandle runs) {
        for (String name : java.util.List.of("INT", "TERM")) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                    int code = 128 + signal.getNumber();
                    if (StopRequest.requested()) {
                        System.err.println("kbackfill: SIG" + name + " again: exiting now (a rerun resumes from the "
                                + "last committed batch)");
                        Runtime.getRuntime().halt(code);
                    }
                    System.err.println("kbackfill: SIG" + name + ": stopping at the next batch boundary (again to exit "
                            + "at once)");
                    // an engine's application is destroyed (its committed waves and sub-jobs stay)
                    if (!runs.stop("SIG" + name)) {
                        Runtime.getRuntime().halt(code); // nothing runs yet (planning, a listing): nothing to save
                    }
                });
            } catch (IllegalArgumentException e) {
                // a platform without that signal
            }
        }
    }

    /** picocli's switch for its search for Groovy closures ({@code CommandLine.DefaultFactory}). */
    private static final String NO_CLOSURES = "picocli.disable.closures";

    /**
     * Runs a command line and returns its exit code, without exiting: what tests call. A command line that starts
     * with an option other than help or version is a {@code run}: {@code kbackfill --topic orders --from ...}.
     */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        return execute(System.getenv(), new RunHandle(), out, err, args);
    }

    /** The same with {@code env} as the environment ({@code KBACKFILL_*} settings): what tests of settings call. */
    static int execute(java.util.Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
        return execute(env, new RunHandle(), out, err, args);
    }

    /** The same, the runs its commands start stopped through {@code runs}. */
    static int execute(java.util.Map<String, String> env, RunHandle runs, PrintWriter out, PrintWriter err,
                       String... args) {
        OptionWords.speak();
        // picocli's default factory looks for Groovy's Closure class once; the miss searches every jar on the class
        // path, opening each. Commands here are Java classes: skip the search. --version and help take 0.4 s instead
        // of 0.5; a plan or a run opens the jars anyway (SLF4J's, JMX's and the sinks' service lookups), once.
        if (System.getProperty(NO_CLOSURES) == null) {
            System.setProperty(NO_CLOSURES, "true");
        }
        if (args.length > 0 && args[0].startsWith("-") && !java.util.List.of("-h", "--help", "-V", "--version")
                .contains(args[0])) {
            String[] withRun = new String[args.length + 1];
            withRun[0] = "run";
            System.arraycopy(args, 0, withRun, 1, args.length);
            args = withRun;
        }
        SettingsDefaults defaults;
        try {
            defaults = new SettingsDefaults(env);
        } catch (IllegalArgumentException e) {
            err.println("kbackfill: " + e.getMessage());
            err.flush();
            return ExitCodes.BAD_INPUT;
        }
        CommandLine cli = commandLine(args.length > 0 ? args[0] : null, runs);
        try {
            try {
                defaults.check(cli);
            } catch (IllegalArgumentException unknownHere) {
                defaults.check(commandLine()); // a setting of another command is not unknown
            }
        } catch (IllegalArgumentException e) {
            err.println("kbackfill: " + e.getMessage());
            err.flush();
            return ExitCodes.BAD_INPUT;
        }
        cli.setDefaultValueProvider(defaults);
        cli.setOut(out);
        cli.setErr(err);
        int code = cli.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /**
     * The subcommands, in the order help lists them. Picocli builds a command's model from its annotations when it
     * is added (reflection over every option: a fifth of a short run's start), so a command line that names its
     * command builds only that one.
     */
    private static final java.util.List<String> COMMANDS = java.util.List.of("run", "plan", "status", "jobs", "reset",
            "compact", "verify", "repair", "inspect", "demo", "completion", "help");

    // a switch, not a map of constructor references: JDK 25.0.3 crashes making the AOT cache when a static map of
    // lambdas is reached from the training (archiveHeapWriter: "Metadata ... should have been archived")
    private static Object newCommand(String name) {
        return switch (name) {
            case "run" -> new RunCommand();
            case "plan" -> new PlanCommand();
            case "status" -> new StatusCommand();
            case "jobs" -> new JobsCommand();
            case "reset" -> new ResetCommand();
            case "compact" -> new CompactCommand();
            case "verify" -> new VerifyCommand();
            case "repair" -> new RepairCommand();
            case "inspect" -> new InspectCommand();
            case "demo" -> new DemoCommand();
            case "completion" -> new CompletionCommand();
            case "help" -> new CommandLine.HelpCommand();
            default -> throw new IllegalArgumentException("no command " + name);
        };
    }

    /** The whole command line, every subcommand built. */
    static CommandLine commandLine() {
        return commandLine(null, new RunHandle());
    }

    /**
     * The command line for {@code first}, the first argument: only that subcommand when it names one that needs no
     * other (not {@code help} or {@code completion}, which describe them all), else all of them.
     */
    static CommandLine commandLine(String first, RunHandle runs) {
        boolean one = first != null && COMMANDS.contains(first) && !first.equals("help") && !first.equals("completion");
        CommandLine cli = new CommandLine(new Kbackfill(runs), CommandLine.defaultFactory());
        for (String name : COMMANDS) {
            if (!one || name.equals(first)) {
                cli.addSubcommand(name, newCommand(name));
            }
        }
        cli.setParameterExceptionHandler(Kbackfill::badUsage);
        cli.setExecutionExceptionHandler(Kbackfill::failed);
        HelpSections.install(cli);
        return cli;
    }

    private static int badUsage(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String from = "";
        if (e.getArgSpec() instanceof CommandLine.Model.OptionSpec option
                && cmd.getDefaultValueProvider() instanceof SettingsDefaults defaults
                && java.util.Arrays.stream(args).noneMatch(a -> java.util.Arrays.stream(option.names())
                        .anyMatch(n -> a.equals(n) || a.startsWith(n + "=")))) {
            // the value was not on the command line: say where it was set
            from = defaults.sourceOf(option.longestName()).map(s -> " (set in " + s + ")").orElse("");
        }
        err.println(cmd.getCommandSpec().qualifiedName() + ": " + oneLine(e.getMessage()) + from + " (see '"
                + cmd.getCommandSpec().qualifiedName() + " --help')");
        debug(e, err);
        return ExitCodes.BAD_INPUT;
    }

    /** The exit code of a failure, as the command line reports it. */
    static int exitCodeOf(Exception e) {
        if (e instanceof CommandLine.ParameterException) {
            return ExitCodes.BAD_INPUT;
        }
        return switch (dev.kbackfill.core.engine.EngineEvents.kindOf(e)) {
            case BAD_INPUT -> ExitCodes.BAD_INPUT;
            case CONFLICT -> ExitCodes.JOB_CONFLICT;
            case FAILURE -> ExitCodes.FAILURE;
        };
    }

    private static int failed(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        int code = exitCodeOf(e);
        String signal = dev.kbackfill.core.run.StopRequest.reason();
        if (code == ExitCodes.FAILURE && signal != null) {
            code = signal.equals("SIGINT") ? 130 : 143; // stopped by the signal (a retry wait it ended, say)
        }
        if (e instanceof RequestException || e instanceof SinkConfigException || e instanceof JobConflictException
                || e instanceof ResolutionException || e instanceof CliFailure || e instanceof SinkException
                || e instanceof RunFailure) {
            err.println(name + ": " + withRealReset(oneLine(e.getMessage()), parsed));
        } else {
            err.println(name + ": unexpected " + e.getClass().getName() + ": " + oneLine(String.valueOf(e.getMessage()))
                    + " (set KBACKFILL_DEBUG=1 for the stack trace)");
        }
        debug(e, err);
        return code;
    }

    /**
     * A message's hint {@code 'kbackfill reset --job J --sink ... --yes'} with the options of this command line that
     * reset takes in place of the dots: the real command to run.
     */
    static String withRealReset(String message, CommandLine.ParseResult parsed) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("kbackfill reset --job (\\S+) --sink \\.\\.\\. --yes")
                .matcher(message);
        if (!m.find() || parsed == null) {
            return message;
        }
        CommandLine.ParseResult last = parsed;
        while (last.hasSubcommand()) {
            last = last.subcommand();
        }
        java.util.Set<String> resetTakes = new java.util.HashSet<>();
        commandLine().getSubcommands().get("reset").getCommandSpec().options()
                .forEach(o -> resetTakes.addAll(java.util.List.of(o.names())));
        StringBuilder command = new StringBuilder("kbackfill reset --job ").append(m.group(1));
        for (CommandLine.Model.OptionSpec o : last.matchedOptions()) {
            String option = o.longestName();
            if (!resetTakes.contains(option) || java.util.List.of("--job", "--yes", "--help", "--version")
                    .contains(option)) {
                continue;
            }
            if (o.arity().max() == 0) {
                command.append(' ').append(option);
                continue;
            }
            for (String value : o.originalStringValues()) {
                command.append(' ').append(option).append(' ').append(shellWord(value));
            }
        }
        return message.substring(0, m.start()) + command.append(" --yes") + message.substring(m.end());
    }

    /** {@code value} as one word of a POSIX shell command line. */
    static String shellWord(String value) {
        return value.matches("[A-Za-z0-9_@%+=:,./-]+") ? value : "'" + value.replace("'", "'\\''") + "'";
    }

    private static String oneLine(String message) {
        return message.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    private static void debug(Exception e, PrintWriter err) {
        if (System.getenv("KBACKFILL_DEBUG") != null) {
            e.printStackTrace(err);
        }
    }
}
