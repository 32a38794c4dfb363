package dev.kbackfill.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine;

/** Durations as options take them: {@code 30s}, {@code 5m}, {@code 1h}, {@code 500ms}, ISO-8601 {@code PT10M}, {@code 0}. */
final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,9})(ms|s|m|h)?");

    private Durations() {
    }

    /** @throws CommandLine.ParameterException naming {@code option}, the bad value and the accepted forms */
    static Duration parse(CommandLine cli, String option, String text, String zeroMeans) {
        Matcher m = SHORT.matcher(text.strip());
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? (n == 0 ? "s" : "") : m.group(2);
            switch (unit) {
                case "ms": return Duration.ofMillis(n);
                case "s": return Duration.ofSeconds(n);
                case "m": return Duration.ofMinutes(n);
                case "h": return Duration.ofHours(n);
                default: break;
            }
        }
        try {
            Duration d = Duration.parse(text.strip().toUpperCase(Locale.ROOT));
            if (!d.isNegative()) {
                return d;
            }
        } catch (java.time.format.DateTimeParseException e) {
            // the message below names the accepted forms
        }
        throw new CommandLine.ParameterException(cli, "invalid " + option + " '" + text
                + "': expected a duration such as 30s, 5m, 1h, PT10M" + (zeroMeans == null ? "" : ", or 0 " + zeroMeans));
    }
}
