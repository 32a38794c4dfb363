package dev.kbackfill.spark;

import java.util.Optional;

import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.version.Guard;

/**
 * The newer-wins guard ({@link Guard}: the one version rule, clause for clause, as the JDBC sink renders it too) in
 * Spark SQL, for the Spark engine's MERGE. Identifiers are quoted with backticks; strings compare byte for byte there.
 */
public final class GuardSql {

    private GuardSql() {
    }

    /**
     * The condition under which the incoming row replaces the stored one.
     *
     * @param meta        the metadata columns (both sides use the same names)
     * @param topicColumn whether the stored table has the topic column
     * @param stored      the stored side's qualifier, e.g. {@code t.}
     * @param incoming    the incoming side's qualifier, e.g. {@code s.}
     */
    public static String sparkSql(SinkSettings.MetadataColumns meta, boolean topicColumn, String stored, String incoming) {
        return sparkSql(meta, topicColumn, false, false, stored, incoming);
    }

    /**
     * The condition, with the version field's column first where the table has one ({@code --version-field}).
     *
     * @param versionColumn whether the stored table has the version column
     * @param versionText   whether it holds text (Spark compares strings by their UTF-8 bytes: by code point)
     */
    public static String sparkSql(SinkSettings.MetadataColumns meta, boolean topicColumn, boolean versionColumn,
                                  boolean versionText, String stored, String incoming) {
        Guard guard = new Guard(topicColumn ? Optional.of(meta.topic()) : Optional.empty(), meta.partition(),
                meta.offset(), meta.timestamp(), meta.logTime(),
                versionColumn ? Optional.of(meta.version()) : Optional.empty(), versionText);
        return guard.sql(SPARK, stored, incoming + "%s");
    }

    /**
     * The condition, meeting a stored row without kbackfill's version (its offset NULL: another writer's) as
     * {@code rows} says, by its own column of the version field first where {@code ownColumn} names one.
     */
    public static String sparkSql(SinkSettings.MetadataColumns meta, boolean topicColumn, boolean versionColumn,
                                  boolean versionText, dev.kbackfill.core.version.Version.ForeignRows rows,
                                  Optional<String> ownColumn, Guard.FieldForm form, String stored, String incoming) {
        Guard guard = new Guard(topicColumn ? Optional.of(meta.topic()) : Optional.empty(), meta.partition(),
                meta.offset(), meta.timestamp(), meta.logTime(),
                versionColumn ? Optional.of(meta.version()) : Optional.empty(), versionText)
                .meeting(new Guard.Foreign(rows, ownColumn.map(c -> new Guard.FieldColumn(c, form))));
        return guard.sql(SPARK, stored, incoming + "%s");
    }

    /** Spark SQL as a guard writes it: backticks; strings compare by their UTF-8 bytes, which is code point order. */
    private static final Guard.Syntax SPARK = new Guard.Syntax() {
        @Override
        public String quote(String identifier) {
            return "`" + identifier.replace("`", "``") + "`";
        }

        @Override
        public String exactText(String expression) {
            return expression;
        }

        @Override
        public String codePointText(String expression) {
            return expression;
        }

        @Override
        public Optional<String> epochMicros(String expression) {
            return Optional.of("unix_micros(" + expression + ")");
        }
    };
}
