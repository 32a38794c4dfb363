package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.version.Version;
import org.junit.jupiter.api.Test;

class LiveRowsTest {

    private static final List<String> NAMES = List.of("kafka_key", "status", "kafka_partition", "kafka_offset",
            "kafka_timestamp", "kafka_log_time");

    private static LiveRows.Column column(String name) {
        return new LiveRows.Column() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Object physical(Object value) {
                return value;
            }

            @Override
            public Object readable(Object stored) {
                return stored;
            }
        };
    }

    private static TargetRow judge(long timestampMicros, long logTimeMicros) {
        MetadataOrdinals ord = MetadataOrdinals.of(NAMES::indexOf, SinkSettings.MetadataColumns.DEFAULT);
        Object[] row = {"a", "paid", 0L, 4L, timestampMicros, logTimeMicros};
        Version stored = ord.version(row);
        SinkSettings settings = new SinkSettings("delta:/t", "t", java.util.Optional.empty(), java.util.Optional.empty(),
                dev.kbackfill.core.sink.ConflictMode.NEWER_WINS, dev.kbackfill.core.sink.TombstoneMode.DELETE, false,
                false, SinkSettings.MetadataColumns.DEFAULT);
        return LiveRows.judge(NAMES.stream().map(LiveRowsTest::column).toList(), ord, new int[] {0}, settings,
                Map.of("status", "paid"), row, stored, new Version("orders", 0, 4, 1_000, 1_000));
    }

    @Test
    void aTimeAMicrosecondFromTheMillisecondsARunWritesIsDifferent() {
        assertThat(judge(1_000_000, 1_000_000).differing()).isEmpty();
        assertThat(judge(1_000_001, 1_000_000).differing()).containsExactly("kafka_timestamp");
        assertThat(judge(1_000_000, 1_000_500).differing()).containsExactly("kafka_log_time");
    }
}
