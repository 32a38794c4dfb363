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
                    + "servers (default: ${DEFAULT-VALUE}; the clients' default.api.timeout.ms).")
    String connectTimeout;

    @Option(names = "-X", paramLabel = "KEY=VALUE",
            description = "A Kafka client setting; repeatable. Overrides --command-config.")
    Map<String, String> overrides = new LinkedHashMap<>();

    /**
     * The client settings: the file, then {@code -X}, then {@code --bootstrap-server} unless set there. A
     * {@code group.id} is refused: reading never joins or commits to a group.
     */
    Map<String, Object> clientConfig() {
        Map<String, Object> config = new HashMap<>();
        if (commandConfig != null) {
            Properties file = new Properties();
            try (Reader r = Files.newBufferedReader(commandConfig)) {
                file.load(r);
            } catch (NoSuchFileException e) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "cannot read --command-config '" + commandConfig + "': no such file");
            } catch (IOException e) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "cannot read --command-config '" + commandConfig + "': " + e.getMessage());
            }
            file.forEach((k, v) -> config.put(k.toString(), v.toString()));
            refuseGroup(config, "--command-config " + commandConfig);
        }
        config.putAll(overrides);
        refuseGroup(overrides, "-X");
        config.putIfAbsent("bootstrap.servers", bootstrapServers);
        // A mistyped bootstrap server should fail in seconds, not after the clients' default minute.
        long timeout = Math.max(1000, Durations.parse(spec.commandLine(), "--connect-timeout", connectTimeout, null)
                .toMillis());
        config.putIfAbsent("default.api.timeout.ms", Long.toString(timeout));
        if (timeout < 30_000) {
            config.putIfAbsent("request.timeout.ms", Long.toString(timeout)); // not above the API timeout
        }
        return config;
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
