package dev.kbackfill.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Spark engine's statements against a Delta table, pinned as plain SQL in {@code src/test/resources/sql/delta/}
 * so that a reviewer reads SQL, not Java: the MERGE under every conflict and tombstone mode, and the counts of what
 * a wave kept out. Set {@code -Dkbackfill.sql.write=true} to (re)write the files after a deliberate change, then read
 * the diff.
 */
class DeltaMergeSqlTest {

    private static final SinkSettings.MetadataColumns META = SinkSettings.MetadataColumns.DEFAULT;
    private static final List<String> COLUMNS = List.of("id", "status", "amount", "kafka_topic", "kafka_partition",
            "kafka_offset", "kafka_timestamp", "kafka_log_time", "kafka_deleted");

    private static DeltaMergeSql sql(ConflictMode conflict, TombstoneMode tombstones) {
        return new DeltaMergeSql("/lake/orders", COLUMNS, false, List.of("id"), META, conflict, tombstones);
    }

    private static String name(ConflictMode conflict, TombstoneMode tombstones) {
        return conflict.name().toLowerCase().replace('_', '-') + "-" + tombstones.name().toLowerCase().replace('_', '-');
    }

    static Stream<Arguments> statements() {
        List<Arguments> all = new ArrayList<>();
        for (ConflictMode conflict : ConflictMode.values()) {
            for (TombstoneMode tombstones : TombstoneMode.values()) {
                DeltaMergeSql s = sql(conflict, tombstones);
                String mode = name(conflict, tombstones);
                all.add(Arguments.of("merge-" + mode, s.merge("kbackfill_wave_3")));
                if (conflict != ConflictMode.OVERWRITE) {
                    all.add(Arguments.of("kept-out-" + mode, s.keptOut("kbackfill_wave_3", "kbackfill_table_3")));
                }
            }
        }
        all.add(Arguments.of("held-already", sql(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)
                .heldAlready("kbackfill_wave_3", "kbackfill_table_3")));
        // a table made by others: no topic column, a version column holding text
        all.add(Arguments.of("merge-newer-wins-text-version", new DeltaMergeSql("/lake/o`dd", List.of("id", "name",
                "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_log_time", "kafka_version"), true,
                List.of("id"), META, ConflictMode.NEWER_WINS, TombstoneMode.DELETE).merge("kbackfill_wave_0")));
        // beside a live writer: its rows (no offset) kept unless the log shows the change its key's newest; by their
        // own column of the version field first, a timestamp here
        all.add(Arguments.of("merge-newer-wins-keeping-foreign-rows", new DeltaMergeSql("/lake/orders", COLUMNS, false,
                List.of("id"), META, ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                dev.kbackfill.core.version.Version.ForeignRows.KEPT, java.util.Optional.empty()).merge("kbackfill_wave_1")));
        all.add(Arguments.of("merge-newer-wins-foreign-rows-by-field", new DeltaMergeSql("/lake/orders", List.of("id",
                "updated_at", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_log_time", "kafka_version"),
                false, List.of("id"), META, ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                dev.kbackfill.core.version.Version.ForeignRows.NEWEST_IN_LOG, java.util.Optional.of(java.util.Map.entry(
                        "updated_at", dev.kbackfill.core.version.Guard.FieldForm.TIMESTAMP))).merge("kbackfill_wave_1")));
        return all.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("statements")
    void statementMatchesItsPinnedSql(String statement, String sql) throws IOException {
        String resource = "sql/delta/" + statement + ".sql";
        String formatted = sql.replace(" USING", "\nUSING").replace(" WHEN", "\nWHEN").replace(" THEN", "\n  THEN")
                .replace(" FROM", "\nFROM").replace(" WHERE", "\nWHERE").replace(" GROUP BY", "\nGROUP BY")
                .replace(" LEFT JOIN", "\nLEFT JOIN").replace(" s JOIN", " s\nJOIN") + "\n";
        java.util.Optional<String> pinned = dev.kbackfill.testservices.PinnedText.of(getClass(), resource, formatted);
        assertThat(pinned).as("missing " + resource).isPresent();
        assertThat(formatted).isEqualTo(pinned.get());
    }

    @Test
    void anEmptyTableTakesEveryChangeButTombstonesUnlessTheyAreSoftDeletesOutsideInsertOnly() {
        assertThat(sql(ConflictMode.NEWER_WINS, TombstoneMode.DELETE).appended()).isEqualTo("NOT `__kbackfill_tombstone`");
        assertThat(sql(ConflictMode.OVERWRITE, TombstoneMode.IGNORE).appended()).isEqualTo("NOT `__kbackfill_tombstone`");
        assertThat(sql(ConflictMode.NEWER_WINS, TombstoneMode.SOFT_DELETE).appended()).isEqualTo("true");
        assertThat(sql(ConflictMode.INSERT_ONLY, TombstoneMode.SOFT_DELETE).appended())
                .isEqualTo("NOT `__kbackfill_tombstone`");
    }
}
