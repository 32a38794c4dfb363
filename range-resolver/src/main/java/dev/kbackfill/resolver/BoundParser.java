package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Parses the text of {@code --from}/{@code --to} into a {@link Bound}. Every rejection is a
 * {@link RequestException} whose one-line message names the option, the bad value and the accepted forms.
 *
 * <p>A bare number is never guessed at: {@code -2}/{@code -1} are Spark's earliest/latest, a 13-digit number is
 * epoch milliseconds, and an offset is written {@code offset:N} (or per partition in Spark JSON). Anything else
 * numeric, such as a 10-digit value that could be epoch seconds, is an error that says how to write it.
 */
public final class BoundParser {

    /** The accepted forms, as listed in every error message: see {@link #acceptedForms()}. */
    static final String ACCEPTED_FORMS = "earliest or -2, latest or -1, offset:N, "
            + "an ISO date (2024-01-01), an ISO date-time (2024-01-01T12:00:00Z, 2024-01-01T12:00+02:00, "
            + "or 2024-01-01T12:00 in " + ZONE + "), epoch millis (1704067200000), "
            + "a relative time (now, now-1d, -2h, -P1D), "
            + "a calendar day's start in " + ZONE + " (today, yesterday, today-7d), "
            + "Spark JSON ({\"TOPIC\":{\"0\":23,\"1\":-2}}), "
            + "where another reader stands (checkpoint:PATH, checkpoint-start:PATH of a Spark checkpoint, "
            + "group:NAME[,earliest|latest], connect:NAME[,earliest|latest]), "
            + "or for " + FROM + " continue:BOUND (where the job's previous run ended; BOUND the first time)";

    /** The accepted forms, as listed in every error message, in {@link Wording#current()} words. */
    public static String acceptedForms() {
        return Wording.current().render(ACCEPTED_FORMS);
    }

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();
    private static final Pattern DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
    private static final Pattern DATE_TIME_SPACE = Pattern.compile("(\\d{4}-\\d{2}-\\d{2}) (\\d{2}:.*)");
    private static final Pattern BRACKET_ZONE = Pattern.compile("(.*)\\[([^\\]]+)\\]");
    private static final Pattern INTEGER = Pattern.compile("[+-]?\\d+");
    private static final Pattern OFFSET = Pattern.compile("offset:(.*)");
    private static final Pattern RELATIVE_UNIT = Pattern.compile("(?:now)?\\s*-\\s*(\\d+)\\s*(ms|s|m|h|d|w)");
    private static final Pattern RELATIVE_ISO = Pattern.compile("(?:now)?\\s*(-\\s*P.*)", Pattern.CASE_INSENSITIVE);
    private static final Pattern CALENDAR_DAY = Pattern.compile("(today|yesterday)(?:\\s*-\\s*(\\d+)\\s*d)?");
    private static final int EPOCH_MILLIS_DIGITS = 13;
    private static final int EPOCH_SECONDS_DIGITS = 10;

    private BoundParser() {
    }

    /**
     * Parses one bound.
     *
     * @param option the option name used in messages, e.g. {@code --from}
     * @param text   the value as the user typed it
     * @param zone   the zone of dates and local date-times
     */
    public static Bound parse(String option, String text, ZoneId zone) {
        if (text == null || text.isBlank()) {
            throw bad(option, text == null ? "" : text, "empty value");
        }
        String t = text.strip();
        String lower = t.toLowerCase(java.util.Locale.ROOT);
        if (lower.equals("earliest") || t.equals("-2")) {
            return new Bound.Earliest();
        }
        if (lower.equals("latest") || t.equals("-1")) {
            return new Bound.Latest();
        }
        if (lower.equals("now")) {
            return new Bound.RelativeTime(Duration.ZERO);
        }
        Matcher day = CALENDAR_DAY.matcher(lower);
        if (day.matches()) {
            return calendarDay(option, t, day, zone);
        }
        if (lower.equals("continue") || lower.startsWith("continue:")) {
            if (!option.equals(FROM.toString()) && !option.equals(Wording.current().name(FROM))) {
                throw new RequestException("invalid " + option + " '" + t + "': continue is a " + FROM + " only (where the "
                        + "job's previous run ended)");
            }
            if (lower.equals("continue")) {
                throw new RequestException("invalid " + FROM + " '" + t + "': continue needs the first run's start, "
                        + "continue:BOUND, e.g. continue:2024-01-01 or continue:earliest");
            }
            Bound first = parse(option, t.substring("continue:".length()), zone);
            if (first instanceof Bound.Continue) {
                throw new RequestException("invalid " + FROM + " '" + t + "': expected continue:BOUND with BOUND one of "
                        + ACCEPTED_FORMS);
            }
            return new Bound.Continue(first);
        }
        for (Bound.External.Kind kind : new Bound.External.Kind[] {Bound.External.Kind.CHECKPOINT_START,
                Bound.External.Kind.CHECKPOINT, Bound.External.Kind.GROUP, Bound.External.Kind.CONNECT}) {
            if (lower.startsWith(kind.prefix + ":")) {
                return external(option, t, kind, zone);
            }
        }
        if (t.startsWith("{")) {
            return parseSparkJson(option, t);
        }
        Matcher offset = OFFSET.matcher(lower);
        if (offset.matches()) {
            return parseOffset(option, t, offset.group(1));
        }
        if (INTEGER.matcher(t).matches()) {
            return parseNumber(option, t);
        }
        Matcher unit = RELATIVE_UNIT.matcher(lower);
        if (unit.matches()) {
            return relative(option, t, unit.group(1), unit.group(2));
        }
        Matcher iso = RELATIVE_ISO.matcher(t);
        if (iso.matches()) {
            try {
                Duration d = Duration.parse(iso.group(1).replace(" ", "")).negated();
                if (d.isNegative() || d.isZero()) {
                    throw bad(option, t, "a relative time must lie in the past");
                }
                return new Bound.RelativeTime(d);
            } catch (DateTimeParseException e) {
                throw bad(option, t, "not an ISO-8601 duration");
            }
        }
        return new Bound.AtTime(parseTime(option, t, zone));
    }

    /** {@code today}, {@code yesterday}, {@code today-7d}: the start of that day in {@code zone}. */
    private static Bound calendarDay(String option, String t, Matcher day, ZoneId zone) {
        long days = day.group(1).equals("yesterday") ? 1 : 0;
        if (day.group(2) != null) {
            if (day.group(2).length() > 6) {
                throw bad(option, t, "too many days back");
            }
            days += Long.parseLong(day.group(2));
        }
        return new Bound.CalendarDay((int) days, zone);
    }

    private static Bound external(String option, String t, Bound.External.Kind kind, ZoneId zone) {
        String rest = t.substring(kind.prefix.length() + 1);
        Optional<Bound> fallback = Optional.empty();
        if (kind == Bound.External.Kind.GROUP || kind == Bound.External.Kind.CONNECT) {
            int comma = rest.lastIndexOf(',');
            if (comma >= 0) {
                Bound f = parse(option, rest.substring(comma + 1), zone);
                if (!(f instanceof Bound.Earliest || f instanceof Bound.Latest || f instanceof Bound.AtOffset)) {
                    throw new RequestException("invalid " + option + " '" + t + "': the bound of partitions without a "
                            + "committed offset is earliest, latest or offset:N, e.g. " + kind.prefix + ":"
                            + rest.substring(0, comma) + ",earliest");
                }
                fallback = Optional.of(f);
                rest = rest.substring(0, comma);
            }
        }
        if (rest.isBlank()) {
            throw new RequestException("invalid " + option + " '" + t + "': expected " + kind.prefix + ":"
                    + (kind.prefix.startsWith("checkpoint") ? "PATH (a Spark Structured Streaming checkpoint "
                    + "directory)" : "NAME"));
        }
        return new Bound.External(kind, rest.strip(), fallback);
    }

    /** Parses a zone id such as {@code UTC}, {@code Europe/Paris} or {@code +02:00}. */
    public static ZoneId parseZone(String text) {
        try {
            return ZoneId.of(text.strip());
        } catch (DateTimeException e) {
            throw new RequestException("invalid " + ZONE + " '" + text + "': expected a region id (Europe/Paris, "
                    + "America/New_York), UTC, or an offset (+02:00)");
        }
    }

    private static Bound parseOffset(String option, String text, String digits) {
        if (!digits.matches("\\d+")) {
            throw bad(option, text, "offset:N needs a whole number N >= 0");
        }
        try {
            return new Bound.AtOffset(Long.parseLong(digits));
        } catch (NumberFormatException e) {
            throw bad(option, text, "offset too large");
        }
    }

    private static Bound parseNumber(String option, String text) {
        String digits = text.startsWith("+") ? text.substring(1) : text;
        if (digits.startsWith("-")) {
            throw bad(option, text, "the only negative numbers accepted are -2 (earliest) and -1 (latest)");
        }
        if (digits.length() == EPOCH_MILLIS_DIGITS) {
            return new Bound.AtTime(Instant.ofEpochMilli(Long.parseLong(digits)));
        }
        if (digits.length() == EPOCH_SECONDS_DIGITS) {
            throw bad(option, text, "ambiguous number: it looks like epoch seconds; write epoch millis ("
                    + digits + "000) or offset:" + digits + " for an offset");
        }
        throw bad(option, text, "ambiguous number: write offset:" + digits
                + " for that offset on every partition, or a 13-digit epoch-millis timestamp");
    }

    private static Bound relative(String option, String text, String amount, String unit) {
        long n;
        try {
            n = Long.parseLong(amount);
        } catch (NumberFormatException e) {
            throw bad(option, text, "amount too large");
        }
        Duration d = switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            case "w" -> Duration.ofDays(7 * n);
            default -> throw bad(option, text, "unknown unit " + unit);
        };
        return new Bound.RelativeTime(d);
    }

    private static Instant parseTime(String option, String text, ZoneId zone) {
        String t = text;
        Matcher space = DATE_TIME_SPACE.matcher(t);
        if (space.matches()) {
            t = space.group(1) + "T" + space.group(2);
        }
        if (DATE.matcher(t).matches()) {
            try {
                return LocalDate.parse(t).atStartOfDay(zone).toInstant();
            } catch (DateTimeParseException e) {
                throw bad(option, text, "not a valid date");
            }
        }
        try {
            return ZonedDateTime.parse(t, DateTimeFormatter.ISO_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            // no zone or offset in the text: a local date-time, read in --zone below
        }
        Matcher bracketZone = BRACKET_ZONE.matcher(t);
        if (bracketZone.matches()) {
            t = bracketZone.group(1);
            try {
                zone = ZoneId.of(bracketZone.group(2));
            } catch (DateTimeException e) {
                throw bad(option, text, "unknown zone '" + bracketZone.group(2) + "'");
            }
        }
        LocalDateTime local;
        try {
            local = LocalDateTime.parse(t);
        } catch (DateTimeParseException e) {
            throw bad(option, text, null);
        }
        List<ZoneOffset> offsets = zone.getRules().getValidOffsets(local);
        if (offsets.isEmpty()) {
            throw bad(option, text, "this local time does not exist in " + zone
                    + " (clocks skip it); add an offset, e.g. " + t + "Z");
        }
        if (offsets.size() > 1) {
            throw bad(option, text, "this local time occurs twice in " + zone + " (clocks go back); add an offset: "
                    + t + offsets.get(0) + " or " + t + offsets.get(1));
        }
        return local.toInstant(offsets.get(0));
    }

    private static Bound parseSparkJson(String option, String text) {
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw bad(option, text, "malformed JSON at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr());
        }
        if (root == null || !root.isObject() || root.size() != 1) {
            throw bad(option, text, "Spark JSON must name exactly one topic: {\"TOPIC\":{\"PARTITION\":OFFSET,...}}");
        }
        Map.Entry<String, JsonNode> topicEntry = root.fields().next();
        JsonNode partitions = topicEntry.getValue();
        if (!partitions.isObject() || partitions.isEmpty()) {
            throw bad(option, text, "topic " + topicEntry.getKey()
                    + " must map to an object of partition offsets, e.g. {\"0\":23,\"1\":-2}");
        }
        TreeMap<Integer, Bound> positions = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = partitions.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int partition;
            try {
                partition = Integer.parseInt(e.getKey());
            } catch (NumberFormatException ex) {
                throw bad(option, text, "partition '" + e.getKey() + "' is not a partition number");
            }
            if (partition < 0) {
                throw bad(option, text, "partition " + partition + " is negative");
            }
            JsonNode v = e.getValue();
            if (!v.isIntegralNumber() || !v.canConvertToLong()) {
                throw bad(option, text, "partition " + partition + ": '" + v + "' is not an offset");
            }
            long offset = v.longValue();
            Bound b;
            if (offset == -2) {
                b = new Bound.Earliest();
            } else if (offset == -1) {
                b = new Bound.Latest();
            } else if (offset >= 0) {
                b = new Bound.AtOffset(offset);
            } else {
                throw bad(option, text, "partition " + partition + ": offset " + offset
                        + " is negative; use -2 for earliest or -1 for latest");
            }
            positions.put(partition, b);
        }
        return new Bound.PerPartition(topicEntry.getKey(), positions);
    }

    private static RequestException bad(String option, String text, String why) {
        return new RequestException("invalid " + option + " '" + text + "'" + (why == null ? "" : ": " + why)
                + "; accepted forms: " + ACCEPTED_FORMS);
    }
}
