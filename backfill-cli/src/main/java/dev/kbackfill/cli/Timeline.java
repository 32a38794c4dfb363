package dev.kbackfill.cli;

import dev.kbackfill.resolver.Note;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A picture of offsets against a topic's log, one row per partition, for {@code plan --chart} and
 * {@code inspect --chart}: the records retention deleted (drawn in a fixed-width break at the left, the offsets
 * below the log start), the retained log, and over them the backfill's range, what retention took of it, and between
 * two readers the gap neither read and the overlap both did, with each reader's position marked. Each row is scaled
 * to its own partition and labelled with its offsets. SVG, or the same SVG in an HTML page for a {@code .html} file.
 */
final class Timeline {

    /** What a stretch of offsets is, with its colour and legend. */
    enum Kind {
        RANGE("#2b6cb0", "the range to backfill"),
        BEHIND("#2b6cb0", "not yet read by the reader (a backfill's range)"),
        LOST("#c53030", "asked for but deleted by retention"),
        ARCHIVED("#2f855a", "deleted by retention, read from the archive"),
        GAP("#dd6b20", "the gap: read by neither reader"),
        OVERLAP("#805ad5", "the overlap: read by both readers");

        final String colour;
        final String legend;

        Kind(String colour, String legend) {
            this.colour = colour;
            this.legend = legend;
        }
    }

    /** Offsets {@code [from, to)} of one kind. */
    record Span(long from, long to, Kind kind) {
    }

    /** A reader's position. */
    record Mark(long at, String label) {
    }

    /** A partition's row: its log, what lies over it, and a line of figures beside it. */
    record Row(int partition, long logStart, long logEnd, List<Span> spans, List<Mark> marks, String figures) {
    }

    static final String LOG_COLOUR = "#cbd5e0";
    static final String DELETED_COLOUR = "#edf2f7";
    static final int WIDTH = 1000;
    static final int BAR_X = 110;
    static final int BAR_W = 620;
    static final int BREAK_W = 60;
    static final int ROW_H = 50;
    static final int BAR_H = 16;
    static final int TOP = 96;

    private final String title;
    private final String subtitle;
    private final List<Row> rows;

    Timeline(String title, String subtitle, List<Row> rows) {
        this.title = title;
        this.subtitle = subtitle;
        this.rows = List.copyOf(rows);
    }

    /** A plan's ranges against each partition's log, retention's share where a note says it took some. */
    static Timeline of(Plan plan) {
        List<Row> rows = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            List<Span> spans = new ArrayList<>();
            boolean lost = r.notes().stream().map(Note::kind).anyMatch(k -> k == Note.Kind.START_LOST_TO_RETENTION
                    || k == Note.Kind.END_LOST_TO_RETENTION || k == Note.Kind.RANGE_OLDER_THAN_RETAINED);
            if (lost && r.logStart() > 0) {
                spans.add(new Span(0, r.logStart(), Kind.LOST));
            }
            long archived = r.notes().stream().anyMatch(n -> n.kind() == Note.Kind.ARCHIVED)
                    ? Math.min(r.end(), r.logStart()) : r.start();
            if (archived > r.start()) {
                spans.add(new Span(r.start(), archived, Kind.ARCHIVED));
            }
            if (r.end() > Math.max(r.start(), archived)) {
                spans.add(new Span(Math.max(r.start(), archived), r.end(), Kind.RANGE));
            }
            String notes = r.notes().stream().map(n -> n.kind().label()).distinct()
                    .reduce((a, b) -> a + ", " + b).map(s -> "; " + s).orElse("");
            rows.add(new Row(r.partition(), r.logStart(), r.logEnd(), spans, List.of(),
                    String.format(Locale.ROOT, "[%,d, %,d): %,d offsets%s", r.start(), r.end(), r.span(), notes)));
        }
        return new Timeline("plan of " + plan.topic() + ": " + String.format(Locale.ROOT, "%,d", plan.totalSpan())
                + " offsets", "--from " + plan.request().fromText() + " --to " + plan.request().toText()
                + ", resolved " + plan.resolvedAt(), rows);
    }

    /** Writes the picture to {@code file}: an HTML page for a name ending in {@code .html}, else SVG. */
    void write(Path file) throws IOException {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        AtomicFile.replace(file, name.endsWith(".html") || name.endsWith(".htm") ? html() : svg());
    }

    /** Writes the picture to {@code --chart}'s file; a failure is the command's ({@link CliFailure}). */
    void draw(Path file) {
        try {
            write(file);
        } catch (IOException e) {
            throw new CliFailure("cannot write the chart to " + file + ": " + e, e);
        }
    }

    /** The picture as an HTML page. */
    String html() {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title)
                + "</title></head>\n<body style=\"margin:0\">\n" + svg() + "</body></html>\n";
    }

    /** The picture as SVG. */
    String svg() {
        int height = TOP + rows.size() * ROW_H + 20;
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
                .append(height).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
                .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        s.append("<title>").append(escape(title)).append("</title>\n");
        s.append("<defs><pattern id=\"deleted\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                + "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"" + DELETED_COLOUR + "\"/>"
                + "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#a0aec0\" stroke-width=\"2\"/></pattern></defs>\n");
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
        s.append(text(10, 22, escape(title), "font-size=\"16\" font-weight=\"bold\""));
        s.append(text(10, 42, escape(subtitle), "fill=\"#4a5568\""));
        legend(s);
        for (int i = 0; i < rows.size(); i++) {
            row(s, rows.get(i), TOP + i * ROW_H);
        }
        s.append("</svg>\n");
        return s.toString();
    }

    private void legend(StringBuilder s) {
        Set<Kind> kinds = EnumSet.noneOf(Kind.class);
        rows.forEach(r -> r.spans().forEach(x -> kinds.add(x.kind())));
        int x = 10;
        int y = 62;
        x = swatch(s, x, y, "fill=\"url(#deleted)\"", "deleted (below the log start)");
        x = swatch(s, x, y, "fill=\"" + LOG_COLOUR + "\"", "the log");
        for (Kind k : kinds) {
            x = swatch(s, x, y, "fill=\"" + k.colour + "\"", k.legend);
        }
    }

    private static int swatch(StringBuilder s, int x, int y, String fill, String label) {
        s.append("<rect x=\"").append(x).append("\" y=\"").append(y).append("\" width=\"14\" height=\"10\" ")
                .append(fill).append(" stroke=\"#718096\" stroke-width=\"0.5\"/>\n");
        s.append(text(x + 18, y + 9, escape(label), "font-size=\"11\""));
        return x + 26 + (int) (label.length() * 6.2);
    }

    private void row(StringBuilder s, Row r, int y) {
        int barY = y + 14;
        Scale scale = new Scale(r);
        s.append("<g class=\"partition\" data-partition=\"").append(r.partition()).append("\">\n");
        s.append(text(10, barY + 12, "partition " + r.partition(), ""));
        if (scale.hasBreak) {
            s.append(rect(BAR_X, barY, BREAK_W, BAR_H, "fill=\"url(#deleted)\"", "deleted",
                    "offsets 0 to " + (r.logStart() - 1) + " deleted"));
        }
        s.append(rect(scale.x0, barY, BAR_X + BAR_W - scale.x0, BAR_H, "fill=\"" + LOG_COLOUR + "\"", "log",
                "the log: [" + r.logStart() + ", " + r.logEnd() + ")"));
        for (Span span : r.spans()) {
            double from = scale.x(span.from());
            double to = scale.end(span.to());
            double w = Math.max(2, to - from);
            s.append(rect(from, barY + 3, w, BAR_H - 6, "fill=\"" + span.kind().colour + "\"",
                    span.kind().name().toLowerCase(Locale.ROOT),
                    span.kind().legend + ": [" + span.from() + ", " + span.to() + ")"));
        }
        for (Mark m : r.marks()) {
            double x = scale.x(m.at());
            s.append("<line class=\"mark\" x1=\"").append(fmt(x)).append("\" y1=\"").append(barY - 4)
                    .append("\" x2=\"").append(fmt(x)).append("\" y2=\"").append(barY + BAR_H + 4)
                    .append("\" stroke=\"#1a202c\" stroke-width=\"2\"/>\n");
            s.append(text(x + 3, barY - 4, escape(m.label()) + " " + String.format(Locale.ROOT, "%,d", m.at()),
                    "font-size=\"10\""));
        }
        if (scale.hasBreak) {
            s.append(text(BAR_X, barY + BAR_H + 12, "0", "font-size=\"10\" fill=\"#4a5568\""));
        }
        s.append(text(scale.x0, barY + BAR_H + 12, String.format(Locale.ROOT, "%,d", r.logStart()),
                "font-size=\"10\" fill=\"#4a5568\""));
        s.append(text(BAR_X + BAR_W, barY + BAR_H + 12, String.format(Locale.ROOT, "%,d", r.logEnd()),
                "font-size=\"10\" fill=\"#4a5568\" text-anchor=\"end\""));
        s.append(text(BAR_X + BAR_W + 12, barY + 12, escape(r.figures()), "font-size=\"11\""));
        s.append("</g>\n");
    }

    /** Where an offset of a row lies: below the log start in the break, the retained log over the rest. */
    static final class Scale {
        final boolean hasBreak;
        final double x0;
        private final Row row;

        Scale(Row row) {
            this.row = row;
            long lowest = Math.min(row.logStart(), row.spans().stream().mapToLong(Span::from).min().orElse(Long.MAX_VALUE));
            lowest = Math.min(lowest, row.marks().stream().mapToLong(Mark::at).min().orElse(Long.MAX_VALUE));
            this.hasBreak = row.logStart() > 0 && lowest >= 0;
            this.x0 = hasBreak ? BAR_X + BREAK_W + 4 : BAR_X;
        }

        /** Where a stretch ending before {@code end} ends: in the break when it ends at the log start or below. */
        double end(long end) {
            return hasBreak && end <= row.logStart() ? inBreak(end) : x(end);
        }

        double x(long offset) {
            if (hasBreak && offset < row.logStart()) {
                return inBreak(offset);
            }
            long size = row.logEnd() - row.logStart();
            double w = BAR_X + BAR_W - x0;
            if (size <= 0) {
                return offset > row.logStart() ? x0 + w : x0;
            }
            double f = (double) (Math.min(offset, row.logEnd()) - row.logStart()) / size;
            return x0 + w * Math.max(0, f);
        }

        /** An offset at or below the log start, in the break's fixed width. */
        private double inBreak(long offset) {
            return BAR_X + BREAK_W * (double) Math.max(0, offset) / row.logStart();
        }
    }

    private static String rect(double x, double y, double w, double h, String fill, String cls, String tip) {
        return "<rect class=\"" + cls + "\" x=\"" + fmt(x) + "\" y=\"" + fmt(y) + "\" width=\"" + fmt(w)
                + "\" height=\"" + fmt(h) + "\" " + fill + "><title>" + escape(tip) + "</title></rect>\n";
    }

    private static String text(double x, double y, String escaped, String attributes) {
        return "<text x=\"" + fmt(x) + "\" y=\"" + fmt(y) + "\" " + attributes + ">" + escaped + "</text>\n";
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
