package dev.kbackfill.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.common.IsolationLevel;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Kafka client settings shared by every command that talks to a cluster. */
final class KafkaOptions {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--bootstrap-server", paramLabel = "HOST:PORT", defaultValue = "localhost:9092",
            description = "Kafka bootstrap servers (default: ${DEFAULT-VALUE}).")
    String bootstrapServers;

    @Option(names = "--command-config", paramLabel = "FILE",
            description = "A properties file of Kafka client settings (security, timeouts, ...).")
    Path commandConfig;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "30s",
            description = "How long to wait for an answer from the cluster before failing, naming the bootstrap "
                    + "servers (default: ${DEFAULT-VALUE}; the clients'%ndefault.api.timeout.ms).")
    String connectTimeout;

    @Option(names = "-X", paramLabel = "KEY=VALUE",
            description = "A Kafka client setting; repeatable. Overrides --command-config.")
    Map<String, String> overrides = new LinkedHashMap<>();

    /**
     * The client settings: the file, then {@code -X}, then {@code --bootstrap-server} and the timeouts unless set
     * there. A {@code group.id} is refused: reading never joins or commits to a group.
     */
    Map<String, Object> clientConfig() {
        try {
            return client().config();
        } catch (dev.kbackfill.resolver.RequestException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /**
     * The same, without naming the built-in bootstrap server: for a command that contacts no cluster with them
     * ({@code status} of a database's job).
     */
    Map<String, Object> clientConfigQuietly() {
        boolean said = saidDefault;
        saidDefault = true;
        try {
            return clientConfig();
        } finally {
            saidDefault = said;
        }
    }

    /** The client settings as a job keeps them: the file by its path (its secrets stay in it), the rest as given. */
    dev.kbackfill.core.run.JobDefinition.KafkaClient client() {
        CommandLine cli = spec.commandLine();
        CommandLine.Model.OptionSpec option = spec.findOption("--bootstrap-server");
        boolean given = cli.getParseResult() != null && cli.getParseResult().hasMatchedOption("--bootstrap-server");
        String fromSettings = given || option == null || cli.getDefaultValueProvider() == null ? null
                : defaultOf(cli, option);
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
            throw new CommandLine.ParameterException(cli, "invalid --bootstrap-server '" + (bootstrapServers == null
                    ? "" : bootstrapServers) + "'" + (given ? "" : " (from $" + SettingsDefaults.variable(
                    "--bootstrap-server") + " or the settings file)") + ": expected HOST:PORT[,HOST:PORT...]");
        }
        if (!given && fromSettings == null && !saidDefault && !overrides.containsKey("bootstrap.servers")) {
            saidDefault = true;
            cli.getErr().println("no --bootstrap-server: using " + bootstrapServers);
            cli.getErr().flush();
        }
        Map<String, String> defaults = new HashMap<>();
        defaults.put("bootstrap.servers", bootstrapServers);
        // A mistyped bootstrap server should fail in seconds, not after the clients' default minute.
        long timeout = Math.max(1000, Durations.parse(spec.commandLine(), "--connect-timeout", connectTimeout, null)
                .toMillis());
        defaults.put("default.api.timeout.ms", Long.toString(timeout));
        if (timeout < 30_000) {
            defaults.put("request.timeout.ms", Long.toString(timeout)); // not above the API timeout
        }
        return new dev.kbackfill.core.run.JobDefinition.KafkaClient(
                java.util.Optional.ofNullable(commandConfig).map(Path::toAbsolutePath), overrides, defaults);
    }

    /** Whether the note on the built-in bootstrap server was printed (once per command). */
    private boolean saidDefault;

    private static String defaultOf(CommandLine cli, CommandLine.Model.OptionSpec option) {
        try {
            return cli.getDefaultValueProvider().defaultValue(option);
        } catch (Exception e) {
            return null;
        }
    }

    /** {@code isolation.level} from the settings: read_committed unless set otherwise. */
    IsolationLevel isolationLevel(Map<String, Object> config) {
        Object value = config.getOrDefault("isolation.level", "read_committed");
        try {
            return IsolationLevel.valueOf(value.toString().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid isolation.level '" + value
                    + "': expected read_committed or read_uncommitted");
        }
    }

    private void refuseGroup(Map<?, ?> config, String where) {
        if (config.containsKey("group.id")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "group.id '" + config.get("group.id")
                    + "' (from " + where + ") is not allowed: kbackfill never joins or commits to a consumer group;"
                    + " remove it");
        }
    }
}
