package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;

/**
 * The newer-wins guard ({@link Guard}: the one version rule, clause for clause) for SQL engines outside JDBC: Spark
 * SQL's MERGE of the Spark engine. Identifiers are quoted with backticks; strings compare byte for byte there.
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
     * How a value column holds the version field in rows of another writer, for {@link #sparkSql(SinkSettings.MetadataColumns,
     * boolean, boolean, boolean, dev.kbackfill.core.version.Version.ForeignRows, java.util.Optional, OwnField, String, String)}:
     * whole numbers or text as the field's values are, epoch milliseconds, or a timestamp.
     */
    public enum OwnField { NUMBER, TEXT, EPOCH_MILLIS, TIMESTAMP }

    /**
     * The condition, meeting a stored row without kbackfill's version (its offset NULL: another writer's) as
     * {@code rows} says, by its own column of the version field first where {@code ownColumn} names one.
     */
    public static String sparkSql(SinkSettings.MetadataColumns meta, boolean topicColumn, boolean versionColumn,
                                  boolean versionText, dev.kbackfill.core.version.Version.ForeignRows rows,
                                  Optional<String> ownColumn, OwnField form, String stored, String incoming) {
        Guard guard = new Guard(topicColumn ? Optional.of(meta.topic()) : Optional.empty(), meta.partition(),
                meta.offset(), meta.timestamp(), meta.logTime(),
                versionColumn ? Optional.of(meta.version()) : Optional.empty(), versionText)
                .meeting(new Guard.Foreign(rows, ownColumn.map(c -> new Guard.FieldColumn(c,
                        Guard.FieldForm.valueOf(form.name())))));
        return guard.sql(SPARK, stored, incoming + "%s");
    }

    /** Only quoting matters to a guard. */
    private static final Dialect SPARK = new Dialect() {
        @Override
        public String name() {
            return "spark";
        }

        @Override
        public String quote(String identifier) {
            return "`" + identifier.replace("`", "``") + "`";
        }

        @Override
        public java.util.Optional<String> epochMicros(String expression) {
            return java.util.Optional.of("unix_micros(" + expression + ")");
        }

        @Override
        public String columnType(ColumnType type, boolean key) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String textType() {
            throw new UnsupportedOperationException();
        }

        @Override
        public String upsert(String table, List<String> keys, List<String> columns, Guard guard, ConflictMode mode,
                             int rows) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean tryLock(Connection connection, String job) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void unlock(Connection connection, String job) {
            throw new UnsupportedOperationException();
        }
    };
}
