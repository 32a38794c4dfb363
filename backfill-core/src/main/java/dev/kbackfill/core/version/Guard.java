package dev.kbackfill.core.version;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The newer-wins guard in SQL: the stored row is replaced only when the incoming record is strictly newer by the one
 * version rule of {@link dev.kbackfill.core.version.Version}, written here clause for clause:
 * <pre>
 * stored.offset IS NOT NULL AND (                             -- a row a backfill wrote:
 *    stored.logTime &lt; incoming.logTime                        -- the later log time,
 *    OR (stored.logTime = incoming.logTime AND (stored.partition &lt; incoming.partition     -- then the partition,
 *       OR (stored.partition = incoming.partition AND (stored.offset &lt; incoming.offset    -- the offset,
 *          OR (stored.offset = incoming.offset AND stored.topic &lt; incoming.topic))))))   -- the topic
 * </pre>
 * where a stored row without log time (written before rows carried it) counts with its timestamp, and a stored row
 * without topic (or a table without the topic column) as the incoming topic's. The same version is not newer: a
 * replay of what the row holds leaves it alone. A stored row without kbackfill's version (its offset NULL: another
 * writer's) is met as {@link #foreign()} says ({@link dev.kbackfill.core.version.Version#replaces}): by its own
 * column of the version field where it holds one, else replaced or kept as the batch says. the JDBC sink's
 * {@code DialectSqlTest} and the Spark engine's {@code SparkGuardIT} check that this SQL and the Java rule agree on
 * every database and on Spark SQL.
 *
 * @param topic     the topic column, if the table has one
 * @param partition the partition column
 * @param offset    the offset column
 * @param timestamp the timestamp column
 * @param logTime   the log time column
 * @param version   the version field's column, where the job orders by one ({@code --version-field}): compared
 *                  first, a NULL (none) older than any value, two NULLs equal
 * @param versionText whether the version column holds text (compared by code point), else whole numbers
 */
public record Guard(Optional<String> topic, String partition, String offset, String timestamp, String logTime,
             Optional<String> version, boolean versionText, Foreign foreign) {

    /**
     * What a guard asks of the SQL it is rendered in: how identifiers are quoted and text compared. A JDBC database's
     * dialect is one; Spark SQL is another.
     */
    public interface Syntax {
        /** The identifier, quoted. */
        String quote(String identifier);

        /** An expression of text that compares byte for byte (a collation that neither folds nor pads). */
        String exactText(String expression);

        /** An expression of text that compares by code point, as Java's version rule compares text. */
        String codePointText(String expression);

        /** An expression of microseconds since the epoch from a timestamp expression, where the SQL has one. */
        java.util.Optional<String> epochMicros(String expression);
    }

    /**
     * How the guard meets a stored row without kbackfill's version.
     *
     * @param rows  what such a row is to an incoming record whose version field does not decide
     * @param field the row's own column of the version field, and how its values compare with the field's; empty
     *              where the table has none the guard can compare
     */
    public record Foreign(Version.ForeignRows rows, Optional<FieldColumn> field) {
        /** Replaced, as the guard did before rows of other writers were told apart. */
        public static final Foreign REPLACED = new Foreign(Version.ForeignRows.REPLACED,
                Optional.empty());
    }

    /**
     * A value column that holds the version field in rows of another writer too.
     *
     * @param column the column
     * @param form   how its values compare with the field's ({@code kafka_version}'s) values
     */
    public record FieldColumn(String column, FieldForm form) {
    }

    /** How a column's values become the version field's: as they are, as text, or from epoch milliseconds or a timestamp to microseconds. */
    public enum FieldForm { NUMBER, TEXT, EPOCH_MILLIS, TIMESTAMP }

    /** A guard that replaces rows of other writers. */
    public Guard(Optional<String> topic, String partition, String offset, String timestamp, String logTime,
          Optional<String> version, boolean versionText) {
        this(topic, partition, offset, timestamp, logTime, version, versionText, Foreign.REPLACED);
    }

    /** The same guard, meeting rows of other writers as {@code f} says. */
    public Guard meeting(Foreign f) {
        return new Guard(topic, partition, offset, timestamp, logTime, version, versionText, f);
    }

    /** A guard without a version field. */
    public Guard(Optional<String> topic, String partition, String offset, String timestamp, String logTime) {
        this(topic, partition, offset, timestamp, logTime, Optional.empty(), false);
    }

    /** A guard of a table without a topic column. */
    public Guard(String partition, String offset, String timestamp, String logTime) {
        this(Optional.empty(), partition, offset, timestamp, logTime);
    }

    /** What a parameter of {@link #againstParameters} takes. */
    public enum Parameter { TOPIC, PARTITION, OFFSET, LOG_TIME, VERSION }

    /**
     * The guard as SQL, comparing the stored row (columns qualified by {@code stored}, may be empty) with the
     * incoming one (qualified by {@code incoming}, e.g. {@code EXCLUDED.}, or wrapped as {@code VALUES(%s)}).
     */
    public String sql(Guard.Syntax d, String stored, String incomingFormat) {
        return render(d, c -> stored + d.quote(c), c -> String.format(incomingFormat, d.quote(c)), null);
    }

    /** The same, each incoming column's expression given by {@code incoming}. */
    public String sql(Guard.Syntax d, String stored, java.util.function.Function<String, String> incoming) {
        return render(d, c -> stored + d.quote(c), incoming, null);
    }

    /** The guard against bound parameters, in the order {@link #parameters()} lists them. */
    public String againstParameters(Guard.Syntax d) {
        return render(d, d::quote, c -> "?", null);
    }

    /**
     * The same rule as a sort order, newest first, over rows that all carry their log time and topic (rows kbackfill
     * stages): a row sorts before another exactly when {@link #sql} would let it replace the other, so that
     * {@code DISTINCT ON (key) .. ORDER BY key, newestFirst} keeps each key's newest row ({@code NULLS LAST}: PostgreSQL).
     */
    public String newestFirst(Guard.Syntax d) {
        List<String> order = new ArrayList<>();
        version.ifPresent(v -> order.add((versionText ? d.codePointText(d.quote(v)) : d.quote(v)) + " DESC NULLS LAST"));
        order.add("COALESCE(" + d.quote(logTime) + ", " + d.quote(timestamp) + ") DESC");
        order.add(d.quote(partition) + " DESC");
        order.add(d.quote(offset) + " DESC");
        topic.ifPresent(t -> order.add(d.exactText(d.quote(t)) + " DESC NULLS LAST"));
        return String.join(", ", order);
    }

    /** What each {@code ?} of {@link #againstParameters} takes, in order. */
    public List<Parameter> parameters() {
        List<Parameter> order = new ArrayList<>();
        render(null, c -> c, c -> "?", order);
        return order;
    }

    private String render(Guard.Syntax d, java.util.function.Function<String, String> s,
                          java.util.function.Function<String, String> i, List<Parameter> order) {
        java.util.function.Function<Parameter, String> in = p -> {
            if (order != null) {
                order.add(p);
            }
            String expression = i.apply(switch (p) {
                case TOPIC -> topic.orElseThrow();
                case PARTITION -> partition;
                case OFFSET -> offset;
                case LOG_TIME -> logTime;
                case VERSION -> version.orElseThrow();
            });
            return p == Parameter.TOPIC && d != null ? d.exactText(expression) : expression;
        };
        String so = s.apply(offset);
        java.util.Optional<FieldColumn> byField = version.isPresent() ? foreign.field() : java.util.Optional.empty();
        StringBuilder sql = new StringBuilder("(");
        if (byField.isPresent()) {
            // a row of another writer by its own column of the version field, else as the batch says
            FieldColumn f = byField.get();
            String raw = s.apply(f.column());
            sql.append("(").append(so).append(" IS NULL AND (").append(fieldForm(d, f, raw)).append(" < ")
                    .append(versionText && d != null ? d.codePointText(in.apply(Parameter.VERSION)) : in.apply(Parameter.VERSION))
                    .append(" OR (").append(raw).append(" IS NULL AND ").append(foreign.rows().replaced() ? "1 = 1" : "1 = 0")
                    .append("))) OR (").append(so).append(" IS NOT NULL AND (");
        } else if (foreign.rows().replaced()) {
            // (the rule's clauses are ORed: no parentheses needed, and the statements read as they always did)
            sql.append(so).append(" IS NULL OR ");
        } else {
            sql.append(so).append(" IS NOT NULL AND (");
        }
        rule(d, s, in, sql);
        if (byField.isPresent()) {
            sql.append("))");
        } else if (!foreign.rows().replaced()) {
            sql.append(")");
        }
        sql.append(")");
        return sql.toString();
    }

    /** A stored column of the version field as the field's values compare (see {@link FieldForm}). */
    private static String fieldForm(Guard.Syntax d, FieldColumn f, String raw) {
        return switch (f.form()) {
            case NUMBER -> raw;
            case TEXT -> d == null ? raw : d.codePointText(raw);
            case EPOCH_MILLIS -> "(" + raw + " * 1000)";
            case TIMESTAMP -> d == null ? raw : d.epochMicros(raw).orElseThrow();
        };
    }

    /** The rule between two rows a backfill wrote, appended to {@code sql}. */
    private void rule(Guard.Syntax d, java.util.function.Function<String, String> s,
                      java.util.function.Function<Parameter, String> in, StringBuilder sql) {
        String so = s.apply(offset);
        String sp = s.apply(partition);
        String slt = "COALESCE(" + s.apply(logTime) + ", " + s.apply(timestamp) + ")";
        if (version.isPresent()) {
            // the version field first: none is older than any value, two nones are equal
            java.util.function.Function<String, String> text = e -> versionText && d != null ? d.codePointText(e) : e;
            String sv = s.apply(version.get());
            sql.append("(").append(sv).append(" IS NULL AND ").append(in.apply(Parameter.VERSION)).append(" IS NOT NULL) OR ")
                    .append(text.apply(sv)).append(" < ").append(text.apply(in.apply(Parameter.VERSION))).append(" OR ((")
                    .append(text.apply(sv)).append(" = ").append(text.apply(in.apply(Parameter.VERSION))).append(" OR (")
                    .append(sv).append(" IS NULL AND ").append(in.apply(Parameter.VERSION)).append(" IS NULL)) AND (");
        }
        sql.append(slt).append(" < ").append(in.apply(Parameter.LOG_TIME)).append(" OR (")
                .append(slt).append(" = ").append(in.apply(Parameter.LOG_TIME)).append(" AND (")
                .append(sp).append(" < ").append(in.apply(Parameter.PARTITION)).append(" OR (")
                .append(sp).append(" = ").append(in.apply(Parameter.PARTITION)).append(" AND (")
                .append(so).append(" < ").append(in.apply(Parameter.OFFSET));
        if (topic.isPresent()) {
            // parameters in the order they stand in the text
            sql.append(" OR (").append(so).append(" = ").append(in.apply(Parameter.OFFSET)).append(" AND ");
            String storedTopic = "COALESCE(" + s.apply(topic.get()) + ", " + in.apply(Parameter.TOPIC) + ")";
            sql.append(d == null ? storedTopic : d.exactText(storedTopic)).append(" < ")
                    .append(in.apply(Parameter.TOPIC)).append(")");
        }
        sql.append("))))");
        if (version.isPresent()) {
            sql.append("))");
        }
    }
}
