package dev.kbackfill.sink.iceberg;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.kbackfill.core.sink.SinkConfigException;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * The partition spec {@code --partition-by} gives a table {@code --create-table} creates, in Spark's DDL terms: a
 * column ({@code status}, identity), {@code identity(c)}, {@code year(c)}, {@code month(c)}, {@code day(c)},
 * {@code hour(c)} (or their plurals), {@code bucket(N, c)} and {@code truncate(N, c)} (or {@code truncate(c, N)}).
 */
final class IcebergPartitioning {

    private static final Pattern COLUMN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern TRANSFORM = Pattern.compile("([A-Za-z]+)\\(\\s*([^,()]+?)\\s*(?:,\\s*([^,()]+?)\\s*)?\\)");
    private static final String FORMS = "a column, identity(c), year(c), month(c), day(c), hour(c), bucket(N, c) or "
            + "truncate(N, c)";

    private IcebergPartitioning() {
    }

    /** Refuses a spec that is none of the accepted forms, before anything is read. */
    static void check(List<String> specs, String shown) {
        for (String spec : specs) {
            parse(spec, shown);
        }
    }

    /** The spec over {@code schema} (the new table's), columns named whatever their case. */
    static PartitionSpec spec(Schema schema, List<String> specs, String shown) {
        if (specs.isEmpty()) {
            return PartitionSpec.unpartitioned();
        }
        PartitionSpec.Builder b = PartitionSpec.builderFor(schema);
        for (String spec : specs) {
            Parsed p = parse(spec, shown);
            String column = column(schema, p.column(), spec, shown);
            try {
                switch (p.transform()) {
                    case "identity" -> b.identity(column);
                    case "year", "years" -> b.year(column);
                    case "month", "months" -> b.month(column);
                    case "day", "days" -> b.day(column);
                    case "hour", "hours" -> b.hour(column);
                    case "bucket" -> b.bucket(column, p.width());
                    case "truncate" -> b.truncate(column, p.width());
                    default -> throw new IllegalStateException(p.transform());
                }
            } catch (IllegalArgumentException | org.apache.iceberg.exceptions.ValidationException e) {
                throw new SinkConfigException("invalid --partition-by '" + spec + "' for the Iceberg table " + shown
                        + ": " + e.getMessage() + " (column " + column + " is "
                        + schema.findField(column).type() + ")");
            }
        }
        return b.build();
    }

    private record Parsed(String transform, String column, int width) {
    }

    private static Parsed parse(String spec, String shown) {
        String s = spec.strip();
        if (COLUMN.matcher(s).matches()) {
            return new Parsed("identity", s, 0);
        }
        Matcher m = TRANSFORM.matcher(s);
        if (m.matches()) {
            String transform = m.group(1).toLowerCase(Locale.ROOT);
            String a = m.group(2);
            String b = m.group(3);
            boolean widthFirst = b != null && a.matches("\\d+");
            String column = b == null ? a : widthFirst ? b : a;
            String width = b == null ? null : widthFirst ? a : b;
            boolean sized = transform.equals("bucket") || transform.equals("truncate");
            if (List.of("identity", "year", "years", "month", "months", "day", "days", "hour", "hours", "bucket",
                    "truncate").contains(transform) && sized == (width != null) && COLUMN.matcher(column).matches()
                    && (width == null || width.matches("\\d{1,9}") && Integer.parseInt(width) > 0)) {
                return new Parsed(transform, column, width == null ? 0 : Integer.parseInt(width));
            }
        }
        throw new SinkConfigException("invalid --partition-by '" + spec + "' for the Iceberg table " + shown
                + ": expected " + FORMS);
    }

    private static String column(Schema schema, String name, String spec, String shown) {
        for (Types.NestedField f : schema.columns()) {
            if (f.name().equalsIgnoreCase(name)) {
                return f.name();
            }
        }
        throw new SinkConfigException("invalid --partition-by '" + spec + "': the first batch for the Iceberg table "
                + shown + " has no column " + name + " (columns " + schema.columns().stream()
                .map(Types.NestedField::name).toList() + "); nothing was written");
    }
}
