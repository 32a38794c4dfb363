package dev.kbackfill.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    private final Path path;
    private final Properties file = new Properties();
    /** The line of each key of the file, for messages. */
    private final Map<String, Integer> lines = new java.util.HashMap<>();

    /** @throws IllegalArgumentException when the settings file named by {@value #CONFIG_ENV} cannot be read */
    SettingsDefaults(Map<String, String> env) {
        this.env = env;
        String named = env.get(CONFIG_ENV);
        Path p = named != null ? Path.of(named)
                : Path.of(System.getProperty("user.home"), ".config", "kbackfill", "kbackfill.properties");
        this.path = named == null && !Files.isRegularFile(p) ? null : p;
        if (path != null) {
            load();
        }
    }

    /**
     * Checks every key of the settings file names an option of some command: a misspelt key would otherwise be
     * ignored, and the run would go with the default (a SQLite file where a database was meant).
     *
     * @throws IllegalArgumentException naming the file, the line and the key
     */
    void check(CommandLine cli) {
        java.util.Set<String> known = new java.util.TreeSet<>();
        collect(cli, known);
        for (String key : new java.util.TreeSet<>(file.stringPropertyNames())) {
            if (!known.contains(key)) {
                String near = nearest(key, known).map(k -> " (did you mean '" + k + "'?)").orElse("");
                throw new IllegalArgumentException("unknown setting '" + key + "' in " + where(key) + near
                        + "; a key is a long option without its dashes, e.g. sink=jdbc:postgresql://db/app");
            }
        }
    }

    /** The known key within two edits of {@code key}, if one is. */
    static java.util.Optional<String> nearest(String key, java.util.Collection<String> known) {
        return dev.kbackfill.resolver.EditDistance.nearest(key, known);
    }

    private static void collect(CommandLine cli, java.util.Set<String> known) {
        for (CommandLine.Model.OptionSpec o : cli.getCommandSpec().options()) {
            if (o.longestName().startsWith("--")) {
                known.add(o.longestName().substring(2));
            }
        }
        cli.getSubcommands().values().forEach(sub -> collect(sub, known));
    }

    /**
     * Where the default value of {@code option} (e.g. {@code --create-table}) comes from, for a message about a bad
     * value: the environment variable or the settings file and line; empty when it comes from neither.
     */
    java.util.Optional<String> sourceOf(String option) {
        if (!option.startsWith("--")) {
            return java.util.Optional.empty();
        }
        if (env.get(variable(option)) != null) {
            return java.util.Optional.of("$" + variable(option));
        }
        String key = option.substring(2);
        return file.getProperty(key) != null ? java.util.Optional.of(where(key)) : java.util.Optional.empty();
    }

    private String where(String key) {
        Integer line = lines.get(key);
        return path + (line == null ? "" : " line " + line) + " ($" + CONFIG_ENV + ")";
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

    private void load() {
        List<String> text;
        try {
            text = Files.readAllLines(path);
            try (Reader r = Files.newBufferedReader(path)) {
                file.load(r);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the settings file " + path + " ($" + CONFIG_ENV + "): "
                    + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage()));
        }
        boolean continued = false;
        for (int i = 0; i < text.size(); i++) {
            String line = text.get(i).stripLeading();
            boolean startsKey = !continued && !line.isEmpty() && line.charAt(0) != '#' && line.charAt(0) != '!';
            if (startsKey) {
                Properties one = new Properties();
                try {
                    one.load(new java.io.StringReader(line.replaceFirst("\\\\$", "")));
                } catch (IOException | IllegalArgumentException e) {
                    continue;
                }
                int at = i + 1;
                one.stringPropertyNames().forEach(k -> lines.putIfAbsent(k, at));
            }
            continued = !line.isEmpty() && (line.length() - line.replaceFirst("\\\\+$", "").length()) % 2 == 1;
        }
    }
}
