package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.kbackfill.resolver.Note;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;

/** Renders a {@link Plan} as a table for people: one row per partition, notes by label. */
final class PlanTable {

    private static final String[] HEADERS = {"PARTITION", "START", "END", "SPAN", "LOG START", "LOG END",
            "START TIME", "NOTES"};

    private PlanTable() {
    }

    static void print(Plan plan, PrintWriter out) {
        out.printf("topic %s (id %s) on cluster %s, resolved %s, %s%n", plan.topic(), plan.topicId(),
                plan.clusterId(), plan.resolvedAt(), plan.request().isolationLevel().toString());
        out.printf("range [from, to): from %s%s, to %s%s%n", plan.request().fromText(),
                plan.fromTime().map(t -> " = " + t).orElse(""), plan.request().toText(),
                plan.toTime().map(t -> " = " + t).orElse(""));
        List<String[]> rows = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            rows.add(new String[] {
                    Integer.toString(r.partition()), Long.toString(r.start()), Long.toString(r.end()),
                    Long.toString(r.span()), Long.toString(r.logStart()), Long.toString(r.logEnd()),
                    r.startTime().map(Object::toString).orElse("-"),
                    r.notes().stream().map(n -> n.kind().label()).distinct().collect(Collectors.joining(","))});
        }
        rows.add(new String[] {"total", "", "", Long.toString(plan.totalSpan()), "", "", "",
                plan.notes().stream().map(n -> n.kind().label()).distinct().collect(Collectors.joining(","))});
        int[] widths = new int[HEADERS.length];
        for (int i = 0; i < HEADERS.length; i++) {
            widths[i] = HEADERS[i].length();
            for (String[] row : rows) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        printRow(out, HEADERS, widths);
        rows.forEach(row -> printRow(out, row, widths));
    }

    /**
     * What running the plan costs, before it runs: records in range (offsets: an upper bound where compaction or
     * transaction markers leave gaps), bytes (each partition's log size on disk per offset, times its span), and at
     * {@code rate} records a second how long.
     *
     * @param sizes per partition the log's bytes, as the cluster tells (may be empty)
     */
    static String estimate(Plan plan, Map<Integer, Long> sizes, Long rate) {
        long records = plan.totalSpan();
        long bytes = 0;
        boolean allSizes = true;
        // the cluster reports the bytes of local segments only: a range reaching into tiered storage has no estimate
        boolean remote = plan.partitions().stream().anyMatch(r -> !r.isEmpty() && r.notes().stream()
                .anyMatch(n -> n.kind() == dev.kbackfill.resolver.Note.Kind.REMOTE_STORAGE));
        for (PartitionRange r : plan.partitions()) {
            long retained = r.logEnd() - r.logStart();
            Long size = sizes.get(r.partition());
            if (size == null) {
                allSizes = retained == 0 || r.span() == 0 ? allSizes : false;
                continue;
            }
            if (retained > 0) {
                bytes += Math.round((double) size / retained * r.span());
            }
        }
        StringBuilder sb = new StringBuilder(String.format(java.util.Locale.ROOT,
                "estimate: at most %,d records", records));
        if (remote) {
            sb.append(", bytes not estimated (part of the range is in tiered storage, whose size the cluster does not "
                    + "report per partition)");
        } else if (allSizes && !sizes.isEmpty()) {
            sb.append(String.format(java.util.Locale.ROOT, ", about %s (log size per offset x span)", humanBytes(bytes)));
        }
        if (rate != null) {
            long seconds = (records + rate - 1) / rate;
            sb.append(String.format(java.util.Locale.ROOT, ", about %s at %,d records/s", humanDuration(seconds), rate));
        }
        return sb.toString();
    }

    private static String humanBytes(long bytes) {
        String[] units = {"B", "KB", "MB", "GB", "TB"};
        double v = bytes;
        int u = 0;
        while (v >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
    }

    private static String humanDuration(long seconds) {
        if (seconds < 120) {
            return seconds + " s";
        }
        if (seconds < 7200) {
            return (seconds + 59) / 60 + " min";
        }
        return String.format(java.util.Locale.ROOT, "%.1f h", seconds / 3600.0);
    }

    /** Every note as one line, for stderr: {@code note: partition 2: ...}. */
    static void printNotes(Plan plan, PrintWriter err) {
        for (Note n : plan.notes()) {
            err.println("note: " + n.message());
        }
        for (PartitionRange r : plan.partitions()) {
            for (Note n : r.notes()) {
                err.println("note: partition " + r.partition() + ": " + n.message());
            }
        }
    }

    private static void printRow(PrintWriter out, String[] cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            boolean numeric = i >= 1 && i <= 5;
            String cell = cells[i];
            String pad = " ".repeat(widths[i] - cell.length());
            line.append(numeric ? pad + cell : cell + (i == cells.length - 1 ? "" : pad));
            if (i < cells.length - 1) {
                line.append("  ");
            }
        }
        out.println(line.toString().stripTrailing());
    }
}
