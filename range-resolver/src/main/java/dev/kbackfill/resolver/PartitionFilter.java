package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses {@code --partitions 0,2-5} into a set of partition numbers. */
public final class PartitionFilter {

    private static final Pattern ITEM = Pattern.compile("(\\d+)(?:-(\\d+))?");

    private PartitionFilter() {
    }

    public static SortedSet<Integer> parse(String text) {
        if (text == null || text.isBlank()) {
            throw bad(text, "empty value");
        }
        TreeSet<Integer> result = new TreeSet<>();
        for (String item : text.split(",", -1)) {
            Matcher m = ITEM.matcher(item.strip());
            if (!m.matches()) {
                throw bad(text, "'" + item.strip() + "' is not a partition or a range");
            }
            int first;
            int last;
            try {
                first = Integer.parseInt(m.group(1));
                last = m.group(2) == null ? first : Integer.parseInt(m.group(2));
            } catch (NumberFormatException e) {
                throw bad(text, "partition number too large");
            }
            if (last < first) {
                throw bad(text, "range " + item.strip() + " runs backwards");
            }
            for (int p = first; p <= last; p++) {
                result.add(p);
            }
        }
        return Collections.unmodifiableSortedSet(result);
    }

    /** Formats a set back into the compact form, e.g. {@code 0,2-5}. */
    public static String format(SortedSet<Integer> partitions) {
        StringBuilder sb = new StringBuilder();
        Integer runStart = null;
        Integer prev = null;
        for (int p : partitions) {
            if (prev != null && p == prev + 1) {
                prev = p;
                continue;
            }
            appendRun(sb, runStart, prev);
            runStart = p;
            prev = p;
        }
        appendRun(sb, runStart, prev);
        return sb.toString();
    }

    private static void appendRun(StringBuilder sb, Integer start, Integer end) {
        if (start == null) {
            return;
        }
        if (sb.length() > 0) {
            sb.append(',');
        }
        sb.append(start);
        if (!start.equals(end)) {
            sb.append('-').append(end);
        }
    }

    private static RequestException bad(String text, String why) {
        return new RequestException("invalid " + PARTITIONS + " '" + text + "': " + why
                + "; expected partition numbers and ranges, e.g. 0,2-5");
    }
}
