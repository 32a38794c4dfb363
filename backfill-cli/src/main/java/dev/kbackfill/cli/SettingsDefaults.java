package dev.kbackfill.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import picocli.CommandLine;

/**
 * Option defaults from the environment and a settings file, so that a cron line or a container needs only what
 * changes: for an option {@code --sink-user}, the environment variable {@code KBACKFILL_SINK_USER}, else the key
 * {@code sink-user} of the properties file named by {@code KBACKFILL_CONFIG} (default
 * {@code ~/.config/kbackfill/kbackfill.properties}, if it exists), else the option's own default. A flag on the
 * command line always wins. Secrets have no options: they come from the environment only
 * ({@code KBACKFILL_SINK_PASSWORD}, {@code KBACKFILL_SCHEMA_REGISTRY_PASSWORD}).
 */
final class SettingsDefaults implements CommandLine.IDefaultValueProvider {

    static final String CONFIG_ENV = "KBACKFILL_CONFIG";

    private final Map<String, String> env;
    private final Properties file;

    /** @throws IllegalArgumentException when the settings file named by {@value #CONFIG_ENV} cannot be read */
    SettingsDefaults(Map<String, String> env) {
        this.env = env;
        this.file = settingsFile(env);
    }

    /** The environment variable of an option: {@code --max-records} is {@code KBACKFILL_MAX_RECORDS}. */
    static String variable(String option) {
        return "KBACKFILL_" + option.replaceFirst("^-+", "").toUpperCase(Locale.ROOT).replace('-', '_');
    }

    @Override
    public String defaultValue(CommandLine.Model.ArgSpec arg) {
        if (!(arg instanceof CommandLine.Model.OptionSpec option) || option.usageHelp() || option.versionHelp()
                || !option.longestName().startsWith("--")) {
            return null;
        }
        String value = env.get(variable(option.longestName()));
        if (value != null) {
            return value;
        }
        return file.getProperty(option.longestName().substring(2));
    }

    private static Properties settingsFile(Map<String, String> env) {
        Properties file = new Properties();
        String named = env.get(CONFIG_ENV);
        Path path = named != null ? Path.of(named)
                : Path.of(System.getProperty("user.home"), ".config", "kbackfill", "kbackfill.properties");
        if (named == null && !Files.isRegularFile(path)) {
            return file;
        }
        try (Reader r = Files.newBufferedReader(path)) {
            file.load(r);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the settings file " + path + " ($" + CONFIG_ENV + "): "
                    + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage()));
        }
        return file;
    }
}
