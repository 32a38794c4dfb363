package dev.kbackfill.sink.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The newer-wins guard in SQL: the stored row is replaced only when the incoming record supersedes it by the one
 * version rule of {@link dev.kbackfill.core.version.Version}, written here clause for clause:
 * <pre>
 * stored.offset IS NULL                                  -- a row no backfill wrote
 * OR (same log AND stored.offset &lt;= incoming.offset)    -- same topic and partition: the higher offset
 * OR (NOT same log AND (stored.ts &lt; incoming.ts         -- otherwise the later timestamp,
 *     OR (stored.ts = incoming.ts AND (stored.partition &lt; incoming.partition     -- then the partition,
 *        OR (stored.partition = incoming.partition AND (stored.offset &lt; incoming.offset   -- the offset,
 *           OR (stored.offset = incoming.offset AND stored.topic &lt; incoming.topic)))))))  -- the topic
 * </pre>
 * where "same log" is the same partition and the same topic, a stored row without topic (written before rows
 * carried it, or a table without the topic column) counting as the incoming topic's. {@code GuardSqlTest} checks
 * that this SQL and the Java rule agree on every database.
 *
 * @param topic     the topic column, if the table has one
 * @param partition the partition column
 * @param offset    the offset column
 * @param timestamp the timestamp column
 */
record Guard(Optional<String> topic, String partition, String offset, String timestamp) {

    /** A guard of a table without a topic column. */
    Guard(String partition, String offset, String timestamp) {
        this(Optional.empty(), partition, offset, timestamp);
    }

    /** What a parameter of {@link #againstParameters} takes. */
    enum Parameter { TOPIC, PARTITION, OFFSET, TIMESTAMP }

    /**
     * The guard as SQL, comparing the stored row (columns qualified by {@code stored}, may be empty) with the
     * incoming one (qualified by {@code incoming}, e.g. {@code EXCLUDED.}, or wrapped as {@code VALUES(%s)}).
     */
    String sql(Dialect d, String stored, String incomingFormat) {
        return render(d, c -> stored + d.quote(c), c -> String.format(incomingFormat, d.quote(c)), null);
    }

    /** The guard against bound parameters, in the order {@link #parameters()} lists them. */
    String againstParameters(Dialect d) {
        return render(d, d::quote, c -> "?", null);
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
                case TIMESTAMP -> timestamp;
            });
            return p == Parameter.TOPIC && d != null ? d.exactText(expression) : expression;
        };
        java.util.function.Function<String, String> storedTopic = c -> d == null ? s.apply(c) : d.exactText(s.apply(c));
        String so = s.apply(offset);
        String sp = s.apply(partition);
        String st = s.apply(timestamp);
        StringBuilder sql = new StringBuilder("(").append(so).append(" IS NULL OR (");
        // the same log
        sql.append(sp).append(" = ").append(in.apply(Parameter.PARTITION));
        if (topic.isPresent()) {
            sql.append(" AND COALESCE(").append(storedTopic.apply(topic.get())).append(", ").append(in.apply(Parameter.TOPIC))
                    .append(") = ").append(in.apply(Parameter.TOPIC));
        }
        sql.append(" AND ").append(so).append(" <= ").append(in.apply(Parameter.OFFSET)).append(") OR (");
        // another log: the later timestamp, then the fixed tie-break
        if (topic.isPresent()) {
            sql.append("(").append(sp).append(" <> ").append(in.apply(Parameter.PARTITION)).append(" OR COALESCE(")
                    .append(storedTopic.apply(topic.get())).append(", ").append(in.apply(Parameter.TOPIC)).append(") <> ")
                    .append(in.apply(Parameter.TOPIC)).append(")");
        } else {
            sql.append(sp).append(" <> ").append(in.apply(Parameter.PARTITION));
        }
        sql.append(" AND (").append(st).append(" < ").append(in.apply(Parameter.TIMESTAMP)).append(" OR (")
                .append(st).append(" = ").append(in.apply(Parameter.TIMESTAMP)).append(" AND (")
                .append(sp).append(" < ").append(in.apply(Parameter.PARTITION)).append(" OR (")
                .append(sp).append(" = ").append(in.apply(Parameter.PARTITION)).append(" AND (")
                .append(so).append(" < ").append(in.apply(Parameter.OFFSET));
        if (topic.isPresent()) {
            sql.append(" OR (").append(so).append(" = ").append(in.apply(Parameter.OFFSET)).append(" AND ")
                    .append(storedTopic.apply(topic.get())).append(" < ").append(in.apply(Parameter.TOPIC)).append(")");
        }
        sql.append(")))))))");
        return sql.toString();
    }
}
