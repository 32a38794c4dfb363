package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.sink.ConflictMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every dialect's statements, pinned as plain SQL in {@code src/test/resources/sql/DIALECT/STATEMENT.sql} so that a
 * reviewer reads SQL, not Java. Set {@code -Dkbackfill.sql.write=true} to (re)write the files after a deliberate
 * change, then read the diff.
 */
class DialectSqlTest {

    private static final List<String> KEYS = List.of("id");
    private static final List<String> COLUMNS = List.of("id", "status", "amount", "kafka_topic", "kafka_partition",
            "kafka_offset", "kafka_timestamp", "kafka_log_time");
    private static final Guard GUARD = new Guard(java.util.Optional.of("kafka_topic"), "kafka_partition",
            "kafka_offset", "kafka_timestamp", "kafka_log_time");

    /** A row of another writer left as it is. */
    private static final Guard KEEPING = GUARD.meeting(new Guard.Foreign(
            dev.kbackfill.core.version.Version.ForeignRows.KEPT, java.util.Optional.empty()));
    /** Rows ordered by a version field first; a row of another writer by its own column of the field. */
    private static final Guard BY_FIELD = new Guard(java.util.Optional.of("kafka_topic"), "kafka_partition",
            "kafka_offset", "kafka_timestamp", "kafka_log_time", java.util.Optional.of("kafka_version"), false)
            .meeting(new Guard.Foreign(dev.kbackfill.core.version.Version.ForeignRows.NEWEST_IN_LOG,
                    java.util.Optional.of(new Guard.FieldColumn("updated_at", Guard.FieldForm.NUMBER))));
    private static final List<String> FIELD_COLUMNS = List.of("id", "status", "updated_at", "kafka_topic",
            "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_log_time", "kafka_version");

    static Stream<Arguments> statements() {
        Map<String, Dialect> dialects = Map.of(
                "postgresql", new PostgresDialect(),
                "mariadb", new MariaDbDialect(),
                "sqlite", new SqliteDialect(),
                "merge", new MergeDialect(c -> c.startsWith("kafka_") ? "BIGINT" : "VARCHAR"));
        return dialects.entrySet().stream().flatMap(e -> {
            Dialect d = e.getValue();
            String table = d.quote("orders");
            int rows = d.rowsPerStatement(COLUMNS.size()) > 1 ? 2 : 1;
            return Stream.of(
                    Arguments.of(e.getKey(), "upsert-newer-wins", d.upsert(table, KEYS, COLUMNS, GUARD, ConflictMode.NEWER_WINS, rows)),
                    Arguments.of(e.getKey(), "upsert-overwrite", d.upsert(table, KEYS, COLUMNS, GUARD, ConflictMode.OVERWRITE, rows)),
                    Arguments.of(e.getKey(), "upsert-insert-only", d.upsert(table, KEYS, COLUMNS, GUARD, ConflictMode.INSERT_ONLY, rows)),
                    Arguments.of(e.getKey(), "delete-newer-wins", d.delete(table, KEYS, GUARD, ConflictMode.NEWER_WINS)),
                    Arguments.of(e.getKey(), "delete-overwrite", d.delete(table, KEYS, GUARD, ConflictMode.OVERWRITE)),
                    Arguments.of(e.getKey(), "upsert-newer-wins-keeping-foreign-rows",
                            d.upsert(table, KEYS, COLUMNS, KEEPING, ConflictMode.NEWER_WINS, rows)),
                    Arguments.of(e.getKey(), "delete-newer-wins-keeping-foreign-rows",
                            d.delete(table, KEYS, KEEPING, ConflictMode.NEWER_WINS)),
                    Arguments.of(e.getKey(), "upsert-newer-wins-foreign-rows-by-field",
                            d.upsert(table, KEYS, FIELD_COLUMNS, BY_FIELD, ConflictMode.NEWER_WINS, rows)));
        });
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("statements")
    void statementMatchesItsPinnedSql(String dialect, String statement, String sql) throws IOException {
        String resource = "sql/" + dialect + "/" + statement + ".sql";
        String formatted = sql.replace(" ON CONFLICT", "\nON CONFLICT").replace(" DO UPDATE SET", "\nDO UPDATE SET")
                .replace(" WHERE", "\nWHERE").replace(" ON DUPLICATE KEY UPDATE", "\nON DUPLICATE KEY UPDATE")
                .replace(" USING", "\nUSING").replace(" WHEN", "\nWHEN").replace(" VALUES (", "\nVALUES (") + "\n";
        java.util.Optional<String> pinned = dev.kbackfill.testservices.PinnedText.of(getClass(), resource, formatted);
        assertThat(pinned).as("missing " + resource).isPresent();
        assertThat(formatted).isEqualTo(pinned.get());
    }
}
