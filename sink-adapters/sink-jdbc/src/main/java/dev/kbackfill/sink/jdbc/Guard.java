package dev.kbackfill.sink.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The newer-wins guard in SQL: the stored row is replaced only when the incoming record is strictly newer by the one
 * version rule of {@link dev.kbackfill.core.version.Version}, written here clause for clause:
 * <pre>
 * stored.offset IS NULL                                       -- a row no backfill wrote
 * OR stored.logTime &lt; incoming.logTime                        -- the later log time,
 * OR (stored.logTime = incoming.logTime AND (stored.partition &lt; incoming.partition     -- then the partition,
 *    OR (stored.partition = incoming.partition AND (stored.offset &lt; incoming.offset    -- the offset,
 *       OR (stored.offset = incoming.offset AND stored.topic &lt; incoming.topic)))))     -- the topic
 * </pre>
 * where a stored row without log time (written before rows carried it) counts with its timestamp, and a stored row
 * without topic (or a table without the topic column) as the incoming topic's. The same version is not newer: a
 * replay of what the row holds leaves it alone. {@code GuardSqlTest} checks that this SQL and the Java rule agree on
 * every database.
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
record Guard(Optional<String> topic, String partition, String offset, String timestamp, String logTime,
             Optional<String> version, boolean versionText) {

    /** A guard without a version field. */
    Guard(Optional<String> topic, String partition, String offset, String timestamp, String logTime) {
        this(topic, partition, offset, timestamp, logTime, Optional.empty(), false);
    }

    /** A guard of a table without a topic column. */
    Guard(String partition, String offset, String timestamp, String logTime) {
        this(Optional.empty(), partition, offset, timestamp, logTime);
    }

    /** What a parameter of {@link #againstParameters} takes. */
    enum Parameter { TOPIC, PARTITION, OFFSET, LOG_TIME, VERSION }

    /**
     * The guard as SQL, comparing the stored row (columns qualified by {@code stored}, may be empty) with the
     * incoming one (qualified by {@code incoming}, e.g. {@code EXCLUDED.}, or wrapped as {@code VALUES(%s)}).
     */
    String sql(Dialect d, String stored, String incomingFormat) {
        return render(d, c -> stored + d.quote(c), c -> String.format(incomingFormat, d.quote(c)), null);
    }

    /** The same, each incoming column's expression given by {@code incoming}. */
    String sql(Dialect d, String stored, java.util.function.Function<String, String> incoming) {
        return render(d, c -> stored + d.quote(c), incoming, null);
    }

    /** The guard against bound parameters, in the order {@link #parameters()} lists them. */
    String againstParameters(Dialect d) {
        return render(d, d::quote, c -> "?", null);
    }

    /**
     * The same rule as a sort order, newest first, over rows that all carry their log time and topic (rows kbackfill
     * stages): a row sorts before another exactly when {@link #sql} would let it replace the other, so that
     * {@code DISTINCT ON (key) .. ORDER BY key, newestFirst} keeps each key's newest row ({@code NULLS LAST}: PostgreSQL).
     */
    String newestFirst(Dialect d) {
        List<String> order = new ArrayList<>();
        version.ifPresent(v -> order.add((versionText ? d.codePointText(d.quote(v)) : d.quote(v)) + " DESC NULLS LAST"));
        order.add("COALESCE(" + d.quote(logTime) + ", " + d.quote(timestamp) + ") DESC");
        order.add(d.quote(partition) + " DESC");
        order.add(d.quote(offset) + " DESC");
        topic.ifPresent(t -> order.add(d.exactText(d.quote(t)) + " DESC NULLS LAST"));
        return String.join(", ", order);
    }

    /** What each {@code ?} of {@link #againstParameters} takes, in order. */
    List<Parameter> parameters() {
        List<Parameter> order = new ArrayList<>();
        render(null, c -> c, c -> "?", order);
        return order;
    }

    private String render(Dialect d, java.util.function.Function<String, String> s,
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
        String sp = s.apply(partition);
        String slt = "COALESCE(" + s.apply(logTime) + ", " + s.apply(timestamp) + ")";
        StringBuilder sql = new StringBuilder("(").append(so).append(" IS NULL OR ");
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
        sql.append(")");
        return sql.toString();
    }
}
