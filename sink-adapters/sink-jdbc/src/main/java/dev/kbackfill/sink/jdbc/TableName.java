package dev.kbackfill.sink.jdbc;

import java.util.Optional;
import java.util.regex.Pattern;

import dev.kbackfill.core.sink.SinkConfigException;

/**
 * {@code --table}: {@code name} or {@code schema.name}, used exactly as given (quoted), so the case must match the
 * database's.
 *
 * @param schema the schema, if named
 * @param name   the table
 */
record TableName(Optional<String> schema, String name) {

    private static final Pattern PART = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]{0,62}");

    static TableName parse(String text) {
        String[] parts = text.strip().split("\\.", -1);
        if (parts.length > 2 || !PART.matcher(parts[parts.length - 1]).matches()
                || (parts.length == 2 && !PART.matcher(parts[0]).matches())) {
            throw new SinkConfigException("invalid --table '" + text + "': expected NAME or SCHEMA.NAME of letters, "
                    + "digits and _ (starting with a letter or _)");
        }
        return parts.length == 2 ? new TableName(Optional.of(parts[0]), parts[1]) : new TableName(Optional.empty(), parts[0]);
    }

    String quoted(Dialect d) {
        return schema.map(s -> d.quote(s) + ".").orElse("") + d.quote(name);
    }

    /** Another table in the same schema, e.g. the job tables. */
    TableName sibling(String other) {
        return new TableName(schema, other);
    }

    @Override
    public String toString() {
        return schema.map(s -> s + ".").orElse("") + name;
    }
}
